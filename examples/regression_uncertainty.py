"""Mondrian forest regression with a predictive standard deviation.

``MondrianForestRegressor.predict(X, return_std=True)`` returns a mean and a standard
deviation; the deviation grows away from the training data, where the prediction falls
back on the training targets' mean and spread. Here: a noisy sine on [-3, 3], a test
set on the same interval, and a few points far outside it.

With many points in one dimension and the default ``min_samples_split=2`` the trees
grow leaves of one or two points, whose spread says little about the noise: the band
is too narrow near the data. Leaves of at least about 20 points
(``min_samples_split=20``) measure the noise: the band then holds about 93% of the
test targets (95% for a normal predictive distribution), and the mean is better too.
"""

import numpy as np

from mondrianlearn import MondrianForestRegressor

rng = np.random.RandomState(0)
X = rng.uniform(-3, 3, size=(400, 1))
y = np.sin(X[:, 0]) + 0.2 * rng.normal(size=400)
X_test = rng.uniform(-3, 3, size=(400, 1))
y_test = np.sin(X_test[:, 0]) + 0.2 * rng.normal(size=400)

for min_samples_split in (2, 20):
    forest = MondrianForestRegressor(n_estimators=50, min_samples_split=min_samples_split,
                                     random_state=0).fit(X, y)
    mean, std = forest.predict(X_test, return_std=True)
    inside = np.abs(y_test - mean) <= 2 * std
    print(f"min_samples_split={min_samples_split:2d}: test MSE "
          f"{np.mean((y_test - mean) ** 2):.4f} (noise variance 0.04), share of test "
          f"targets within mean +- 2 std {inside.mean():.3f}")

far = np.array([[0.0], [3.5], [6.0], [30.0]])
far_mean, far_std = forest.predict(far, return_std=True)
for x, m, s in zip(far[:, 0], far_mean, far_std):
    print(f"x = {x:5.1f}: mean {m:+.3f}, std {s:.3f}")
print(f"training targets: mean {y.mean():+.3f}, std {y.std():.3f}")

# Learning online gives a forest of the same distribution as the batch fit:
online = MondrianForestRegressor(n_estimators=50, min_samples_split=20, random_state=0)
for start in range(0, 400, 50):
    online.partial_fit(X[start:start + 50], y[start:start + 50])
online_mean = online.predict(X_test)
print(f"online in batches of 50: test MSE {np.mean((y_test - online_mean) ** 2):.4f}")

try:  # the picture, when matplotlib is installed
    import matplotlib

    matplotlib.use("Agg")
    from mondrianlearn.plotting import plot_predictive_band
except ImportError:
    pass
else:
    grid = np.linspace(-6, 6, 300)[:, None]
    ax = plot_predictive_band(forest, X, y, grid, y_true=np.sin(grid[:, 0]))
    print(f"drawn: {len(ax.lines)} lines and the band (ax.figure.savefig to keep it)")
