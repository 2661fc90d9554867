"""The Mondrian kernel's lifetime sweep.

A Mondrian kernel regressor with ``lifetime="auto"`` (the default) samples its
partitions once and scores every lifetime at which a cut appears, in one pass: the
whole path comes for the price of the largest model. The criterion is the log marginal
likelihood of the Bayesian ridge model (``alpha``: the noise variance of the
standardised targets), or ``selection="validation"``, the error on held-out rows. The
chosen lifetime is ``lifetime_``; the path is ``lifetime_path_``.
"""

import time

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from mondrianlearn import MondrianKernelRegressor

X, y = load_diabetes(return_X_y=True)  # bundled with scikit-learn: 442 rows, 10 features
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)


def test_mse(model):
    return np.mean((model.predict(X_test) - y_test) ** 2)


# alpha=0.5: about half the variance of these targets is noise.
model = MondrianKernelRegressor(n_trees=50, alpha=0.5, random_state=0).fit(X_train, y_train)
path = model.lifetime_path_
best = int(np.argmax(path["log_marginal_likelihood"]))  # the lifetime_ chosen
print(f"{len(path['lifetimes'])} lifetimes scored in {path['time'][-1]:.2f} s; chosen "
      f"{model.lifetime_:.3g} ({path['n_features'][best]} features, log marginal "
      f"likelihood {path['log_marginal_likelihood'][best]:.1f})")
for i in np.unique(np.linspace(0, len(path["lifetimes"]) - 1, 6).astype(int)):
    print(f"  lifetime {path['lifetimes'][i]:8.3g}: {path['n_features'][i]:4d} features, "
          f"train MSE {path['train_error'][i]:7.1f}, log marginal likelihood "
          f"{path['log_marginal_likelihood'][i]:8.1f}")

by_validation = MondrianKernelRegressor(n_trees=50, alpha=0.5, selection="validation",
                                        random_state=0).fit(X_train, y_train)
print(f"test MSE: marginal likelihood {test_mse(model):.1f} (lifetime "
      f"{model.lifetime_:.3g}), validation {test_mse(by_validation):.1f} (lifetime "
      f"{by_validation.lifetime_:.3g}), predicting the mean "
      f"{np.mean((y_train.mean() - y_test) ** 2):.1f}")

# What the sweep saves: one fit per lifetime of a grid.
start = time.perf_counter()
grid = np.geomspace(path["lifetimes"][1], path["lifetimes"][-1], 10)
fixed = [MondrianKernelRegressor(n_trees=50, alpha=0.5, lifetime=t, random_state=0)
         .fit(X_train, y_train) for t in grid]
print(f"10 fits at fixed lifetimes: {time.perf_counter() - start:.2f} s; the best of them "
      f"on the test rows (an oracle) {min(test_mse(m) for m in fixed):.1f}")
