"""Input checks done once, at the boundary, before any compiled kernel runs."""

import numpy as np
from sklearn.utils.validation import _check_sample_weight, validate_data


def check_X_y_batch(estimator, X, y, sample_weight, *, reset, y_numeric=False):
    """Validate a training batch; return float64 ``X``, ``y`` and weights.

    ``X`` must be 2-D, finite and numeric; weights must be finite and non-negative.
    Nothing on the estimator changes unless ``reset`` (feature count and names are
    then recorded, as scikit-learn does).
    """
    X, y = validate_data(estimator, X, y, reset=reset, dtype=np.float64,
                         ensure_min_samples=1, y_numeric=y_numeric)
    # A later mini-batch of zero weights is allowed (it teaches nothing: a no-op).
    sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                         ensure_non_negative=True,
                                         allow_all_zero_weights=not reset)
    return np.ascontiguousarray(X), y, sample_weight


def check_X_predict(estimator, X):
    """Validate rows to predict on; return a C-contiguous float64 array."""
    X = validate_data(estimator, X, reset=False, dtype=np.float64)
    return np.ascontiguousarray(X)


def check_scalar_positive(name, value):
    if not value > 0:
        raise ValueError(f"{name} must be > 0, got {value!r}.")
