"""Merging forests trained separately into one forest.

The trees of a Mondrian forest are independent samples, so a forest of ``T1 + T2``
trees is the union of a forest of ``T1`` trees and one of ``T2`` trees. Merging
concatenates the trees and their shared sample stores (each tree's sample ids are
shifted to where its forest's points land in the merged store), and expresses the
node statistics in a common frame: the union of the classes for classifiers, the
first forest's target offset and scale for regressors. The merged forest predicts
the average of the inputs weighted by their numbers of trees, and keeps learning
with ``partial_fit``.

:func:`merge_forests` is the one entry point for every forest of the library: it
asks the forests' class whether it merges (its ``_mergeable`` flag, see
:mod:`mondrianlearn.utils.protocols`) and lets the class merge them (``_merge_fitted``:
this module for Mondrian forests, :mod:`mondrianlearn.amf._merge` for aggregated
Mondrian forests). Other classes, such as boosting (whose trees depend on one
another) or single trees, are refused.
"""

import copy

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..engine.tree import MAX_SAMPLES, SampleStore
from .classifier import MondrianForestClassifier

# Parameters that may differ between the forests: the number of trees adds up, the
# trees carry their own random streams, and threads do not change results.
_FREE_PARAMETERS = ("n_estimators", "random_state", "n_jobs")

MERGEABLE_FORESTS = ("MondrianForestClassifier", "MondrianForestRegressor", "AMFClassifier",
                     "AMFRegressor")
"""Names of the forest classes that :func:`merge_forests` merges, for messages and
documentation. What decides is the class's own capability flag ``_mergeable``
(:mod:`mondrianlearn.utils.protocols`), which ``tests/test_protocols.py`` checks
against this list. Online bagging is the ``bootstrap`` option of each of them, so
bagged forests merge too."""


def is_mergeable(kind):
    """Whether fitted models of the class ``kind`` can be merged (and sharded).

    Parameters
    ----------
    kind : type
        Any class.

    Returns
    -------
    mergeable : bool
        True for the library's classes that declare ``_mergeable``.
    """
    from ..utils.estimator import TreeModelMixin

    return isinstance(kind, type) and issubclass(kind, TreeModelMixin) and kind._mergeable


def merge_forests(forests, same_stream=False):
    """Merge forests trained separately into one forest.

    Parameters
    ----------
    forests : sequence of fitted forests
        Forests of one class of :data:`MERGEABLE_FORESTS` (Mondrian forests or
        aggregated Mondrian forests, classifiers or regressors), with the same
        parameters (apart from ``n_estimators``, ``random_state`` and ``n_jobs``)
        and the same features. They are not modified.
    same_stream : bool, default=False
        Whether the forests learned the same rows in the same order (as the shards
        of :class:`mondrianlearn.dask.DaskShardedForest` in ``mode="trees"``). The
        merged forest then keeps what describes the stream once: the first forest's
        ``n_samples_seen_``, its sample store (Mondrian forests; the trees' sample
        ids need no moving) and its running target moments (AMF regressors),
        instead of adding them up. Checked: the forests must have seen as many
        rows, and Mondrian forests must have stored the same points.
        Drift-adaptive forests (``drift`` set) merge slot by slot, each tree with
        its detectors, background tree and challenge schedule; without
        ``same_stream``, their row counters move to the merged stream
        (:mod:`mondrianlearn.drift._merge`).

    Returns
    -------
    forest : estimator of the forests' class
        A new forest holding copies of all the trees, in the order given, with
        ``n_estimators`` the total number of trees and the other parameters of the
        first forest. Classifiers get the union of the classes (the class counts of
        each forest are moved to the columns of the union, as ``partial_fit`` does
        when a new label appears); regressors keep their node statistics in the
        target frame of the first forest (Mondrian forests: its offset and scale;
        AMF: its offset, with the targets' running moments pooled over the
        forests, see :mod:`mondrianlearn.amf._merge`). ``n_samples_seen_`` is the
        sum over the forests (see ``same_stream``).

    Raises
    ------
    TypeError
        For a class not in :data:`MERGEABLE_FORESTS` or forests of several classes.

    Notes
    -----
    The merged forest's predictions are the average of the inputs' predictions
    weighted by their numbers of trees (Mondrian forests: trees that have seen a
    point), up to rounding, when the classifiers share the same classes (with other
    classes, a Mondrian forest's smoothing and an AMF's default Dirichlet prior
    follow the number of classes). Without ``same_stream`` every forest keeps its
    own copy of the points that pausing needs.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from mondrianlearn import MondrianForestClassifier, merge_forests
    >>> X, y = load_iris(return_X_y=True)
    >>> a = MondrianForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> b = MondrianForestClassifier(n_estimators=2, random_state=1).fit(X, y)
    >>> merged = merge_forests([a, b])
    >>> merged.n_estimators
    5
    >>> bool(abs(merged.predict_proba(X) - (3 * a.predict_proba(X)
    ...                                     + 2 * b.predict_proba(X)) / 5).max() < 1e-12)
    True
    """
    forests = list(forests)
    _check_mergeable(forests)
    if getattr(forests[0], "drift", None) is not None:  # (a parameter: all alike)
        from ..drift._merge import check_drift_merge

        check_drift_merge(forests, bool(same_stream))
    units = forests[0].__dict__.get("_units")
    if units is not None:  # trees merged at the first forest's origin
        forests = [f._at_origin(units[2]) for f in forests]
    return type(forests[0])._merge_fitted(forests, bool(same_stream))


def merge_mondrian_forests(forests, same_stream=False):
    """Merge Mondrian forests that :func:`merge_forests` has checked (see there)."""
    from ..drift._merge import background_trees, drift_states, merge_states

    states = drift_states(forests)
    offsets = [0 if state is None else state.store_offset for state in states]
    first = forests[0]
    if same_stream:
        _check_same_rows(forests, offsets)
    merged = copy.copy(first)  # leaves out the fast path's scratch state
    for name, value in vars(merged).items():
        if isinstance(value, np.ndarray):
            setattr(merged, name, value.copy())
    # A drift-adaptive forest's background trees are expressed in the merged frame
    # and store along with its foreground trees (they follow them in each list).
    trees = [[copy.deepcopy(tree) for tree in forest.trees_] for forest in forests]
    if states[0] is not None:
        for forest_trees, background in zip(trees, background_trees(states)):
            forest_trees.extend(background)

    if isinstance(first, MondrianForestClassifier):
        classes = np.unique(np.concatenate([f.classes_ for f in forests]))
        columns = [np.searchsorted(classes, f.classes_) for f in forests]
        merged.classes_ = classes
        merged._classes_declared = all(f._classes_declared for f in forests)
        n_stats = len(classes)
        for forest_trees, to_new in zip(trees, columns):
            for tree in forest_trees:
                _remap_class_columns(tree, to_new, n_stats)
        store_stats = [_remapped_columns(f._store.stats[: f._store.n], c, n_stats)
                       for f, c in zip(forests, columns)]
        store_keys = [c[f._store.keys[: f._store.n]] for f, c in zip(forests, columns)]
    else:
        n_stats = 3
        frames = [_moment_transform(f, first) for f in forests]
        for forest_trees, (a, b) in zip(trees, frames):
            for tree in forest_trees:
                stats = tree.node_stats["stats"]
                stats[:] = _transform_moments(stats, a, b)
        store_stats = [_transform_moments(f._store.stats[: f._store.n], a, b)
                       for f, (a, b) in zip(forests, frames)]
        store_keys = [f._store.keys[: f._store.n] for f in forests]

    if same_stream:
        # One copy of the stream's points: the store that kept the most of them (a
        # drift-adaptive forest drops points no tree needs any more); the trees of a
        # forest that dropped more move their ids up by the difference.
        donor = int(np.argmin(offsets))
        merged._store = _concatenate_stores(forests[donor:donor + 1], store_keys[donor:donor + 1],
                                            store_stats[donor:donor + 1], n_stats)
        for forest_trees, forest, offset in zip(trees, forests, offsets):
            if offset > offsets[donor]:
                for tree in forest_trees:
                    _relocate_samples(tree, offset - offsets[donor], forest._store.n,
                                      merged._store.n)
    else:
        merged._store = _concatenate_stores(forests, store_keys, store_stats, n_stats)
        offsets = np.concatenate([[0], np.cumsum([f._store.n for f in forests])])
        for forest_trees, forest, offset in zip(trees, forests, offsets[:-1]):
            for tree in forest_trees:
                _relocate_samples(tree, int(offset), forest._store.n, merged._store.n)
        merged.n_samples_seen_ = int(sum(f.n_samples_seen_ for f in forests))
        ranges = [f._feature_range for f in forests]
        merged._feature_range = np.vstack([np.min([r[0] for r in ranges], axis=0),
                                           np.max([r[1] for r in ranges], axis=0)])

    sizes = [len(forest.trees_) for forest in forests]
    merged.trees_ = [tree for forest_trees, n in zip(trees, sizes) for tree in forest_trees[:n]]
    merged.n_estimators = len(merged.trees_)
    if states[0] is not None:
        streams = None if same_stream else [
            (f.n_samples_seen_, f._store.n, _moment_transform(f, first)
             if not isinstance(first, MondrianForestClassifier) else (1.0, 0.0))
            for f in forests]
        merged._drift_state = merge_states(
            states, [forest_trees[n:] for forest_trees, n in zip(trees, sizes)], streams,
            merged.__dict__.get("classes_"))
    merged._record_structure()  # the merged forest goes on learning with all its trees
    merged._remember_fast_state()
    return merged


def _check_same_rows(forests, offsets):
    """Check that the forests learned the same rows: the same number, and the same
    points stored where their stores overlap (``offsets``: the stream row of each
    store's first point; drift-adaptive forests drop the oldest points)."""
    first = forests[0]
    for i, forest in enumerate(forests[1:], start=1):
        same = forest.n_samples_seen_ == first.n_samples_seen_
        store, reference = forest._store, first._store
        if same:
            start = max(offsets[0], offsets[i])
            n = min(offsets[0] + reference.n, offsets[i] + store.n) - start
            a, b = start - offsets[i], start - offsets[0]
            same = (offsets[0] + reference.n == offsets[i] + store.n and n >= 0
                    and np.array_equal(store.X[a:a + n], reference.X[b:b + n])
                    and np.array_equal(store.stats[a:a + n], reference.stats[b:b + n]))
        if not same:
            raise ValueError(
                f"same_stream=True but forest {i} did not learn the same rows as forest 0.")


def _check_mergeable(forests):
    """Check that the forests can be merged."""
    if not forests:
        raise ValueError("merge_forests needs at least one forest, got none.")
    first = forests[0]
    kind = type(first)
    if not is_mergeable(kind):
        raise TypeError(
            f"merge_forests merges forests of independent trees ({', '.join(MERGEABLE_FORESTS)}); "
            f"got {kind.__name__}.")
    for forest in forests:
        if type(forest) is not kind:
            raise TypeError(
                f"Cannot merge a {type(forest).__name__} into a {kind.__name__}: all "
                "forests must be of the same class.")
        check_is_fitted(forest, "trees_")
    params = {k: v for k, v in first.get_params().items() if k not in _FREE_PARAMETERS}
    for i, forest in enumerate(forests[1:], start=1):
        other = {k: v for k, v in forest.get_params().items() if k not in _FREE_PARAMETERS}
        different = sorted(k for k in params if not _same_value(params[k], other[k]))
        if different:
            raise ValueError(
                f"Forest {i} differs from forest 0 in {different}: merged forests must "
                f"share their parameters (except {list(_FREE_PARAMETERS)}).")
        if forest.n_features_in_ != first.n_features_in_:
            raise ValueError(
                f"Forest {i} has {forest.n_features_in_} features, forest 0 has "
                f"{first.n_features_in_}.")
        if not np.array_equal(first.feature_scale_, forest.feature_scale_):
            raise ValueError(
                f"Forest {i} learned in other feature units (feature_scale_) than forest 0; "
                "forests with feature_scale='range' share units only if their rows spanned "
                "similar ranges: give feature_scale fixed scales (or None) to merge them.")
        names = getattr(first, "feature_names_in_", None)
        other_names = getattr(forest, "feature_names_in_", None)
        if (names is None) != (other_names is None) or (
                names is not None and not np.array_equal(names, other_names)):
            raise ValueError(f"Forest {i} was fitted with other feature names than forest 0.")


def _same_value(a, b):
    try:
        return bool(a == b) or (a != a and b != b)  # nan parameters compare equal
    except (TypeError, ValueError):
        return a is b


def _remapped_columns(array, to_new, n_columns):
    out = np.zeros((array.shape[0], n_columns), dtype=array.dtype)
    out[:, to_new] = array[:, : len(to_new)]
    return out


def _remap_class_columns(tree, to_new, n_classes):
    """Move a tree's class counts and node label keys to the union of the classes."""
    tree.node_stats["stats"] = _remapped_columns(tree.node_stats["stats"], to_new, n_classes)
    label = tree.arrays.label
    known = label >= 0
    label[known] = to_new[label[known]]


def _moment_transform(forest, reference):
    """``(a, b)`` with ``z_reference = a z + b`` for targets stored by ``forest``.

    A forest stores ``z = (y - offset) / scale``.
    """
    if forest is reference:
        return 1.0, 0.0
    a = forest._y_scale / reference._y_scale
    b = (forest._y_offset - reference._y_offset) / reference._y_scale
    return a, b


def _transform_moments(stats, a, b):
    """Moments ``(w, w z, w z^2)`` of ``a z + b`` from those of ``z`` (rows)."""
    if a == 1.0 and b == 0.0:
        return stats.copy()
    w, wz, wzz = stats[:, 0], stats[:, 1], stats[:, 2]
    return np.column_stack([w, a * wz + b * w, a * a * wzz + 2.0 * a * b * wz + b * b * w])


def _concatenate_stores(forests, keys, stats, n_stats):
    n_points = sum(f._store.n for f in forests)
    if n_points > MAX_SAMPLES:  # the merged trees' sample ids would not fit
        raise MemoryError(f"The merged forest would keep {n_points:,} training points, "
                          f"more than a forest holds ({MAX_SAMPLES:,}).")
    store = SampleStore(forests[0].n_features_in_, n_stats)
    X = np.concatenate([f._store.X[: f._store.n] for f in forests])
    if X.shape[0] > 0:
        store.X = X
        store.keys = np.concatenate(keys).astype(np.int64)
        store.stats = np.concatenate(stats)
        store.n = X.shape[0]
    return store


def _relocate_samples(tree, offset, n_own, n_samples):
    """Move a tree's ``n_own`` sample ids up by ``offset``, in a store of ``n_samples``.

    Ids live in the leaves' list heads and in the per-sample arrays (the links
    ``sample_next`` and, with online bagging, the multiplicities ``sample_mult``),
    which are indexed by sample id and so are laid out again.
    """
    if tree.keep_samples and tree.sample_next.shape[0] > 0:
        old = tree.sample_next
        links = np.full(max(n_samples, 16), -1, dtype=old.dtype)
        n = min(old.shape[0], n_own)
        links[offset: offset + n] = np.where(old[:n] >= 0, old[:n] + offset, -1)
        tree.sample_next = links
        head = tree.arrays.leaf_head
        head[head >= 0] += offset
    if tree.sample_mult.shape[0] > 0:
        old = tree.sample_mult
        mult = np.zeros(max(n_samples, 16), dtype=old.dtype)
        n = min(old.shape[0], n_own)
        mult[offset: offset + n] = old[:n]
        tree.sample_mult = mult
