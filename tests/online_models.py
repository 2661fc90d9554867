"""Data and outputs shared by the tests that run every online model alike (tests only)."""

import numpy as np

from mondrianlearn import MondrianKernel


def data(cls, n, seed=0):
    """``n`` rows of three uniform features and targets fitting ``cls``: class labels
    for a classifier, numbers for a regressor, None for the kernel transformer."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 3))
    if cls is MondrianKernel:
        return X, None
    if "Classifier" in cls.__name__:
        return X, (X[:, 0] > 0.5).astype(int)
    return X, X[:, 0] + X[:, 2]


def outputs(model, X):
    """What a model gives for ``X``: features, probabilities or forecasts."""
    if isinstance(model, MondrianKernel):
        return model.transform(X).toarray()
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X)
    return model.predict(X)
