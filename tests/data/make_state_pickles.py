"""Write one small fitted model of each estimator, pickled, to
``tests/data/state_format_<N>/`` for the current ``STATE_FORMAT`` N.

Run it (``python tests/data/make_state_pickles.py``) when ``STATE_FORMAT`` is bumped,
and only then: ``tests/test_state_pickles.py`` loads every saved format and compares
the layout of what it loads with that of a model fitted now, so that a change of the
fitted state's layout without a bump of the format fails.
"""

import pickle
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def estimators():
    """``{name: (estimator, task)}``: small models of every estimator with state."""
    from mondrianlearn import (
        AMFClassifier,
        AMFRegressor,
        MondrianBoostingClassifier,
        MondrianForestClassifier,
        MondrianForestRegressor,
        MondrianKernel,
        MondrianKernelClassifier,
        MondrianKernelRegressor,
        MondrianTreeClassifier,
        MondrianTreeRegressor,
    )

    return {
        "MondrianForestClassifier": (MondrianForestClassifier(n_estimators=3, random_state=0), "c"),
        "MondrianForestClassifier_bootstrap_max_nodes": (
            MondrianForestClassifier(n_estimators=3, bootstrap=True, max_nodes=30,
                                     random_state=0), "c"),
        "MondrianForestRegressor": (MondrianForestRegressor(n_estimators=3, random_state=0), "r"),
        "MondrianTreeClassifier": (MondrianTreeClassifier(random_state=0), "c"),
        "MondrianTreeRegressor": (MondrianTreeRegressor(random_state=0), "r"),
        "AMFClassifier": (AMFClassifier(n_estimators=3, random_state=0), "c"),
        "AMFRegressor": (AMFRegressor(n_estimators=3, random_state=0), "r"),
        "MondrianBoostingClassifier": (MondrianBoostingClassifier(n_estimators=3,
                                                                  random_state=0), "c"),
        "MondrianKernel": (MondrianKernel(n_trees=4, lifetime=0.5, random_state=0), "t"),
        "MondrianKernelRegressor": (MondrianKernelRegressor(n_trees=4, lifetime=0.5,
                                                            random_state=0), "r"),
        "MondrianKernelClassifier": (MondrianKernelClassifier(n_trees=4, lifetime=0.5,
                                                              random_state=0), "c"),
    }


def data(task, n=120, seed=0):
    """Rows in units far from 1 (feature units matter) and labels or targets."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 3)) * [1.0, 100.0, 0.01]
    if task == "c":
        return X, (X[:, 0] + X[:, 1] / 100 > 1).astype(int)
    return X, X @ [1.0, -0.01, 50.0]


def fitted(name):
    """The estimator ``name`` fitted on two batches (``partial_fit`` where it exists)."""
    model, task = estimators()[name]
    X, y = data(task)
    if hasattr(model, "partial_fit"):
        model.partial_fit(X[:60], y[:60])
        model.partial_fit(X[60:], y[60:])
    else:
        model.fit(X, y)
    return model


def main():
    sys.path.insert(0, str(HERE.parents[1] / "src"))
    from mondrianlearn.utils.persistence import STATE_FORMAT

    folder = HERE / f"state_format_{STATE_FORMAT}"
    folder.mkdir(exist_ok=True)
    for name in estimators():
        with open(folder / f"{name}.pkl", "wb") as f:
            pickle.dump(fitted(name), f, protocol=4)
        print(folder / f"{name}.pkl")


if __name__ == "__main__":
    main()
