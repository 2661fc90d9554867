"""Random sequences of calls, as a stream meets them, on every online model.

Each sequence mixes ``partial_fit`` of 1 to 300 rows (features on changing scales,
constant features, duplicated rows, runs of one label, classes that arrive late,
sample weights), ``set_params`` of parameters a later call may follow, pickling,
and prediction. Every prediction must be a valid one (probabilities in [0, 1]
summing to one, finite forecasts). A parameter that fixes the model's structure is
not changed here (``tests/test_structure_params.py``), nor is drift adaptation turned
off once a model has learned with it (refused). CI also runs this file with numba's
bounds checking (``.ci/run``): a kernel that reads or writes past an array fails
there instead of corrupting memory. Such sequences found that a raised node budget
and ``bootstrap`` turned on wrote past the trees' arrays and that a lowered lifetime
gave probabilities of 1e67 (now refused: ``tests/test_structure_params.py``), and
that a kernel classifier loaded from a pickle failed halfway through cutting its
partitions back (``tests/test_kernel.py``).
"""

import pickle

import numpy as np
import pytest

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianBoostingClassifier,
    MondrianForestClassifier,
    MondrianForestRegressor,
    MondrianKernelClassifier,
    MondrianKernelRegressor,
)

MODELS = {
    "mf": (MondrianForestClassifier, {"n_estimators": 3},
           {"max_nodes": [None, 30, 200], "drift": [None, "adwin"], "n_jobs": [1, 2],
            "min_samples_split": [2, 5], "discount": [None, 1.0]}),
    "mf-bagged": (MondrianForestClassifier, {"n_estimators": 3, "bootstrap": True},
                  {"max_nodes": [None, 40], "n_jobs": [1, 2], "drift": [None, "adwin"]}),
    "mf-regressor": (MondrianForestRegressor, {"n_estimators": 3},
                     {"max_nodes": [None, 30], "drift": [None, "adwin"], "n_jobs": [1, 2]}),
    "amf": (AMFClassifier, {"n_estimators": 3},
            {"step": [1.0, 3.0], "max_nodes": [None, 30, 200], "drift": [None, "adwin"],
             "use_aggregation": [True, False], "split_pure": [False, True],
             "bootstrap": [False, True], "n_jobs": [1, 2], "dirichlet": [None, 0.1]}),
    "amf-regressor": (AMFRegressor, {"n_estimators": 3},
                      {"step": [1.0, 3.0], "max_nodes": [None, 30], "drift": [None, "adwin"],
                       "bootstrap": [False, True]}),
    "boosting": (MondrianBoostingClassifier, {"n_estimators": 3},
                 {"voting": ["soft", "hard"]}),
    "kernel-classifier": (MondrianKernelClassifier, {"n_trees": 5},
                          {"alpha": [1e-4, 1e-2], "max_features": [20000, 40]}),
    "kernel-regressor": (MondrianKernelRegressor, {"n_trees": 5},
                         {"alpha": [1e-4, 1e-1], "max_features": [20000, 40]}),
}
N_FEATURES = 4


def _batch(rng, n, n_classes, classifier):
    X = rng.uniform(size=(n, N_FEATURES)) * rng.choice([1.0, 1.0, 3.0, 100.0])
    if rng.rand() < 0.2:
        X[:, rng.randint(N_FEATURES)] = 0.5  # a constant feature
    if rng.rand() < 0.2 and n > 1:
        X[n // 2:] = X[0]  # duplicated rows
    if not classifier:
        return X, X[:, 0] * 10 + rng.normal(size=n)
    y = (X[:, 0] * 7).astype(int) % n_classes
    if rng.rand() < 0.3:
        y = np.full(n, rng.randint(n_classes))  # a run of one label
    return X, y


def released(model):
    """Whether a Mondrian forest has released its stored points (every tree full)."""
    return isinstance(model, (MondrianForestClassifier, MondrianForestRegressor)) and \
        hasattr(model, "trees_") and not model._can_resample()


def _check(model, X, classifier):
    if classifier and getattr(model, "loss", "log_loss") == "log_loss":
        proba = model.predict_proba(X)
        assert np.all((proba >= -1e-12) & (proba <= 1 + 1e-12)), proba
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-9)
        assert set(model.predict(X)) <= set(model.classes_)
    else:
        assert np.all(np.isfinite(model.predict(X)))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", list(MODELS))
def test_random_call_sequences(name, seed):
    cls, params, free = MODELS[name]
    classifier = "Classifier" in cls.__name__
    rng = np.random.RandomState(seed)
    model = cls(random_state=seed, **params)
    n_classes, done = 2, []
    for _ in range(30):
        action = rng.rand()
        if action < 0.55 or not done:
            n = int(rng.choice([1, 1, 2, 5, 50, 300]))
            if classifier and rng.rand() < 0.1:
                n_classes = min(n_classes + 1, 5)
            X, y = _batch(rng, n, n_classes, classifier)
            weights = rng.uniform(0.1, 3.0, size=n) if rng.rand() < 0.4 else None
            model.partial_fit(X, y, sample_weight=weights)
            done.append(("partial_fit", n))
        elif action < 0.7:
            key = list(free)[rng.randint(len(free))]
            value = free[key][rng.randint(len(free[key]))]
            if key == "max_nodes" and released(model):
                value = model.max_nodes  # the budget may not rise (test_structure_params)
            if key == "drift" and "trees_" in model.__dict__ and model.drift is not None:
                value = model.drift  # drift adaptation, once learned with, stays
            model.set_params(**{key: value})
            done.append((key, value))
        elif action < 0.8:
            model = pickle.loads(pickle.dumps(model))
        else:
            X, _ = _batch(rng, int(rng.choice([1, 3, 100])), n_classes, classifier)
            _check(model, X, classifier)
    X, _ = _batch(rng, 200, n_classes, classifier)
    _check(model, X, classifier)
