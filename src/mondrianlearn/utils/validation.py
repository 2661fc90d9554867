"""Input checks done once, at the boundary, before any compiled kernel runs."""

import inspect

import numpy as np
from sklearn.utils.validation import _check_sample_weight, validate_data

_ZERO_WEIGHTS_OPTION = "allow_all_zero_weights" in inspect.signature(
    _check_sample_weight).parameters
"""Whether scikit-learn's weight check takes ``allow_all_zero_weights`` (1.8 on)."""


def _checked_weights(sample_weight, X, allow_all_zero):
    """Sample weights checked as scikit-learn checks them (shape, finite,
    non-negative), as a float64 array; all zero is an error unless
    ``allow_all_zero``, whatever the scikit-learn version."""
    extra = {"allow_all_zero_weights": True} if _ZERO_WEIGHTS_OPTION else {}
    weights = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                   ensure_non_negative=True, **extra)
    if not allow_all_zero and weights.shape[0] and not np.any(weights):
        raise ValueError("Sample weights must contain at least one non-zero number.")
    return weights


def given_targets(y, sample_weight):
    """Targets and weights as the caller gave them, as float64 vectors of one length,
    or None when scikit-learn's checks will refuse them anyway (not numeric, shapes
    that differ). For checks that must run before those checks record anything, so
    that a refused first call leaves no trace."""
    try:
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        weights = (np.ones(y.shape[0]) if sample_weight is None
                   else np.asarray(sample_weight, dtype=np.float64).reshape(-1))
    except (TypeError, ValueError):
        return None
    return (y, weights) if weights.shape == y.shape else None


def check_X_y_batch(estimator, X, y, sample_weight, *, reset, y_numeric=False, check_y=None):
    """Validate a training batch; return float64 ``X``, ``y`` and weights.

    ``X`` must be 2-D, finite and numeric, and its range must not overflow (see
    ``check_extent``); weights must be finite and non-negative; ``check_y(y,
    sample_weight)``, when given, checks the labels. On success with ``reset``, the
    feature count and names are recorded (as scikit-learn does); on failure the
    estimator is left exactly as it was.
    """
    if not reset:
        estimator._check_structure()  # parameters fixed since the model started
    recorded = ("n_features_in_", "feature_names_in_", "_feature_range")
    saved = {k: estimator.__dict__[k] for k in recorded if k in estimator.__dict__}
    try:
        X, y = validate_data(estimator, X, y, reset=reset, dtype=np.float64,
                             ensure_min_samples=1, y_numeric=y_numeric)
        if y_numeric and not np.all(np.isfinite(np.asarray(y, dtype=np.float64))):
            raise ValueError("Input y contains NaN or infinity.")
        # A later mini-batch of zero weights is allowed (it teaches no row).
        sample_weight = _checked_weights(sample_weight, X, allow_all_zero=not reset)
        if check_y is not None:
            check_y(y, sample_weight)
        check_extent(estimator, X[sample_weight > 0], reset=reset)  # rows it will learn
    except Exception:
        for k in recorded:  # put back what was there, in place; drop what was added
            if k in saved:
                estimator.__dict__[k] = saved[k]
            else:
                estimator.__dict__.pop(k, None)
        raise
    if reset:
        estimator._record_structure()
    return np.ascontiguousarray(X), y, sample_weight


def check_X_predict(estimator, X):
    """Validate rows to predict on; return a C-contiguous float64 array."""
    X = validate_data(estimator, X, reset=False, dtype=np.float64)
    return np.ascontiguousarray(X)


def check_extent(estimator, X, *, reset):
    """Refuse rows whose range, with everything seen before, overflows float64.

    Mondrian split times are exponential clocks with rate the linear dimension of a
    box (the sum of its side lengths); with values near the float64 limits that sum
    overflows to infinity and the process degenerates. The running range of the
    features is kept in ``estimator._feature_range`` and updated only when the batch
    is accepted, so a refused batch leaves the model unchanged.

    A model whose features are in units (``utils.feature_scale``) keeps the range in
    those units; ``X`` is in the units of the caller: the check is made there, and
    the model records the range when it learns the rows.
    """
    if X.shape[0] == 0:
        return
    low, high = X.min(axis=0), X.max(axis=0)
    units = None if reset else estimator.__dict__.get("_units")
    known = None if reset else estimator.__dict__.get("_feature_range")
    if known is not None and known.shape[1] == X.shape[1]:
        if units is not None:
            known = known * units[0] + units[2]
        low, high = np.minimum(low, known[0]), np.maximum(high, known[1])
    with np.errstate(over="ignore", invalid="ignore"):
        extent = np.sum(high - low)
    if not np.isfinite(extent):
        raise ValueError(
            "The features span a range whose total width overflows float64 (values "
            "near +-1.8e308); rescale them, e.g. with sklearn.preprocessing.MinMaxScaler.")
    if units is None:
        estimator._feature_range = np.vstack([low, high])


def check_no_missing_target(y):
    """Refuse targets or labels ``y`` (a NumPy array) that hold a missing value: NaN
    or infinity in numbers, ``None`` or NaN among objects (a classifier's labels).

    For callers that learn rows without scikit-learn's check of ``y`` (the river
    adapters' checked rows); it runs before anything changes.
    """
    kind = y.dtype.kind
    if kind == "f":
        if not np.isfinite(y).all():
            raise ValueError("Input y contains NaN or infinity.")
    elif kind == "O":
        if any(v is None or v != v for v in y.ravel().tolist()):
            raise ValueError("Input y contains a missing label (None or NaN).")


def label_kind(labels, name="y"):
    """``"string"`` if every label is a string, ``"number"`` if none is.

    Labels of one classifier must be all strings or all numbers, as in
    scikit-learn (``sklearn.utils.multiclass.unique_labels``): NumPy would otherwise
    turn numbers into strings when the two meet (``1`` becoming ``"1"``). Raises a
    ``ValueError`` when ``labels`` mix the two kinds.

    Parameters
    ----------
    labels : array-like
        Labels as given by the caller (a list, a tuple, a NumPy array, a pandas
        Series), before any conversion.
    name : str, default="y"
        What ``labels`` are, for the message.

    Returns
    -------
    kind : {"string", "number"}
    """
    dtype = getattr(labels, "dtype", None)
    kind = getattr(dtype, "kind", None)
    if kind in ("U", "S"):
        return "string"
    if kind is not None and kind != "O":
        return "number"
    values = np.asarray(labels, dtype=object).ravel().tolist()
    strings = sum(isinstance(v, (str, bytes)) for v in values)
    if 0 < strings < len(values):
        examples = ([repr(v) for v in values if isinstance(v, (str, bytes))][:1]
                    + [repr(v) for v in values if not isinstance(v, (str, bytes))][:1])
        raise ValueError(
            f"Mix of label input types (string and number): {name} holds both, e.g. "
            f"{' and '.join(examples)}. Labels of a classifier must be all strings or "
            "all numbers.")
    return "string" if strings else "number"


def check_same_label_kind(y, classes, source, name="y"):
    """Refuse labels ``y`` of another kind (string or number) than ``classes``.

    ``source`` says where ``classes`` come from and ``name`` what ``y`` is, for the
    message.
    """
    expected, got = label_kind(classes), label_kind(y, name)
    if got != expected:
        shown = np.asarray(classes).tolist()
        raise ValueError(
            f"Mix of label input types (string and number): {name} holds {got}s but "
            f"{source} are {expected}s ({shown!r}). Labels of a classifier must be "
            "all strings or all numbers; convert them before training.")


def check_class_labels(estimator, y, classes, first):
    """Label checks of a classifier's training batch (before any state changes).

    Every label of ``y`` counts, even on rows of weight zero (as in scikit-learn,
    whose ``classes_`` holds every label of ``y``): such a row teaches nothing but
    its label is a class. On a first call, returns the sorted classes (``classes``
    when given, else those of ``y``) and whether they were declared; afterwards,
    checks that ``classes`` (if given) did not change and that no label lies outside
    declared classes, and returns ``(None, None)``. Labels must be of the kind
    (string or number) of the classes.
    """
    from sklearn.utils.multiclass import check_classification_targets

    check_classification_targets(y)
    if first:
        declared = classes is not None
        if declared:
            check_same_label_kind(y, classes, "the declared `classes`")
        known = np.unique(np.asarray(classes)) if declared else np.unique(y)
        _check_declared(known, y, declared)
        return known, declared
    check_same_label_kind(y, estimator.classes_, "the classes learned so far (`classes_`)")
    if classes is not None:
        check_same_label_kind(classes, estimator.classes_,
                              "the classes learned so far (`classes_`)", "`classes`")
        if not np.array_equal(np.unique(classes), estimator.classes_):
            raise ValueError(
                f"`classes={np.unique(classes)!r}` differs from the classes of the first "
                f"call to partial_fit, {estimator.classes_!r}.")
    _check_declared(estimator.classes_, y, estimator._classes_declared)
    return None, None


def _check_declared(classes, y, declared):
    """With declared classes, any other label is an error (weighted zero or not)."""
    if not declared:
        return
    new = np.setdiff1d(np.unique(y), classes)
    if new.size:
        raise ValueError(
            f"Labels {new.tolist()!r} are not in `classes` given to the first call to "
            f"partial_fit ({np.asarray(classes).tolist()!r}).")


def is_empty_batch(X):
    """Whether ``X`` is a 2-D array-like with no row."""
    shape = getattr(X, "shape", None)
    return shape is not None and len(shape) == 2 and shape[0] == 0


def check_empty_batch(estimator, X):
    """An empty mini-batch is a no-op for a fitted model, but its width must match."""
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is "
            f"expecting {estimator.n_features_in_} features as input.")


def check_classifier_fit(estimator, X, y, sample_weight):
    """Every check of a classifier's ``fit``, before any state changes.

    Returns ``(X, y, sample_weight)`` and sets ``classes_`` to the sorted labels of
    ``y`` (every label, also those of rows of weight zero, as scikit-learn does)
    and ``_classes_declared`` to False.
    """
    from sklearn.utils.multiclass import check_classification_targets

    label_kind(y)

    def check_y(y, sample_weight):
        check_classification_targets(y)

    X, y, sample_weight = check_X_y_batch(estimator, X, y, sample_weight, reset=True,
                                          check_y=check_y)
    estimator.classes_ = np.unique(y)
    estimator._classes_declared = False
    return X, y, sample_weight


def check_classifier_batch(estimator, X, y, sample_weight, classes):
    """Every check of a classifier's ``partial_fit``, before any state changes.

    Returns ``None`` for an empty mini-batch of a fitted model (a no-op), otherwise
    ``(X, y, sample_weight, first)``; on a first call the checked ``classes_`` (the
    declared ones, or those of ``y``) and ``_classes_declared`` are then set. Later
    labels of ``y``, weighted zero or not, join ``classes_`` when the caller learns
    the batch (``ForestClassifierMixin._learn_labels``).
    """
    first = not estimator.__sklearn_is_fitted__()
    if not first and is_empty_batch(X):
        check_empty_batch(estimator, X)
        return None
    label_kind(y)
    if classes is not None:
        label_kind(classes, "`classes`")
    labels = {}

    def check_y(y, sample_weight):
        labels["classes"], labels["declared"] = check_class_labels(
            estimator, y, classes, first)

    X, y, sample_weight = check_X_y_batch(estimator, X, y, sample_weight, reset=first,
                                          check_y=check_y)
    if first:
        estimator.classes_ = labels["classes"]
        estimator._classes_declared = labels["declared"]
    return X, y, sample_weight, first


def check_regressor_batch(estimator, X, y, sample_weight):
    """Every check of a regressor's ``partial_fit``, before any state changes.

    Returns ``None`` for an empty mini-batch of a fitted model (a no-op), otherwise
    ``(X, y, sample_weight, first)``.
    """
    first = not estimator.__sklearn_is_fitted__()
    if not first and is_empty_batch(X):
        check_empty_batch(estimator, X)
        return None
    X, y, sample_weight = check_X_y_batch(estimator, X, y, sample_weight, reset=first,
                                          y_numeric=True)
    return X, y, sample_weight, first
