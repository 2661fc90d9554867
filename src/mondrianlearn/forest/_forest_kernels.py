"""Mondrian forests over all trees in one compiled call, for the per-call fast path.

As ``amf._forest_kernels``: each kernel loops over a
:class:`~mondrianlearn.engine.tree_table.TreeTable` and runs the full path's per-tree
loop (``_additive._extend_points``, ``_smoothing._proba_rows``/``_moments_rows``) on
the estimator's work arrays, so results are bit-identical. A tree that needs storage
or a paused leaf re-sampled is left to Python (``BaseMondrianForest._learn``), which
grows it and finishes it with ``learn_forest_rows`` again, on a table of that tree
alone: online learning has one kernel. The table's one per-node array is ``stats``.
"""

import numpy as np

from ..engine._jit import kernel
from ..engine.storage import FREE_NODES
from ..engine.tree import META_N_NODES
from ..engine.tree_table import (
    COLUMN_SAMPLE_MULT,
    COLUMN_SAMPLE_NEXT,
    COLUMN_STATS,
    SIZE_NODES,
    SIZE_SAMPLE_MULT,
    SIZE_SAMPLE_NEXT,
    accept_rows,
    finite_rows,
    float_matrix_at,
    float_vector_at,
    id_vector_at,
    rng_at,
    tree_at,
)
from ..utils.feature_scale import rows_in_units, to_units
from ._additive import _extend_points, regrow_and_count
from ._smoothing import _moments_rows, _proba_rows

_NO_VARIANCES = np.empty(0)
"""``variances`` of ``_moments_rows`` when only the means are wanted."""


@kernel
def store_rows(X, keys, weights, targets, store_X, store_keys, store_stats, n_stored,
               feature_range, max_target):
    """Check the rows and append them to the sample store at row ``n_stored``.

    The statistics of a row are one-hot (weight at its key) when ``targets`` is
    empty (classification), else ``(w, w z, w z^2)`` with ``z`` its scaled target.
    Returns False, with nothing changed, when the rows are refused (non-finite,
    range overflow, a scaled target beyond ``max_target``) or do not fit the store.
    """
    m = X.shape[0]
    if n_stored + m > store_X.shape[0] or store_X.shape[1] != X.shape[1]:
        return False
    regression = targets.shape[0] > 0
    if regression:
        for i in range(m):
            if not np.isfinite(targets[i]) or abs(targets[i]) > max_target:
                return False
    elif store_stats.shape[1] < 1:
        return False
    if not accept_rows(X, feature_range):
        return False
    for i in range(m):
        row = n_stored + i
        for j in range(X.shape[1]):
            store_X[row, j] = X[i, j]
        store_keys[row] = keys[i]
        for k in range(store_stats.shape[1]):
            store_stats[row, k] = 0.0
        w = weights[i]
        if regression:
            z = targets[i]
            store_stats[row, 0] = w
            store_stats[row, 1] = w * z
            store_stats[row, 2] = w * z * z
        else:
            store_stats[row, keys[i]] = w
    return True


@kernel
def _needs_python(tree, sizes, t, n_stored, max_nodes, path):
    """Whether the full path would grow this tree (nodes or sample links) before
    extending it, or the shared work space is too small for it."""
    capacity = sizes[t, SIZE_NODES]
    n_nodes = tree.meta[META_N_NODES]
    if n_nodes == 0 or path.shape[0] < capacity:
        return True
    links, mult = sizes[t, SIZE_SAMPLE_NEXT], sizes[t, SIZE_SAMPLE_MULT]
    if (links > 0 and links < n_stored) or (mult > 0 and mult < n_stored):
        return True
    return n_nodes + FREE_NODES > capacity and capacity < max_nodes  # engine.storage.must_grow


@kernel
def extend_forest(addresses, sizes, store_X, store_keys, store_stats, ids, starts, regrow,
                  n_stats, bootstrap, lifetime, pause_pure, min_samples_split, max_nodes,
                  one_hot, excess, path, pending, stops, leaves):
    """Extend every tree ``t`` with the stored points ``ids[starts[t]:]``, after
    re-sampling its paused leaf ``regrow[t]`` (-1: none).

    Returns the number of trees left to Python: for those, ``stops[t]`` is the first
    point not processed and ``leaves[t]`` a paused leaf to re-sample first (or -1).
    """
    n_features = store_X.shape[1]
    n_stored = ids[ids.shape[0] - 1] + 1
    left_over = 0
    for t in range(addresses.shape[0]):
        tree = tree_at(addresses, sizes, t, n_features)
        leaves[t] = regrow[t]
        if _needs_python(tree, sizes, t, n_stored, max_nodes, path):
            stops[t] = starts[t]
            left_over += 1
            continue
        capacity = sizes[t, SIZE_NODES]
        stats = float_matrix_at(addresses, t, COLUMN_STATS, capacity, n_stats)
        sample_next = id_vector_at(addresses, t, COLUMN_SAMPLE_NEXT,
                                   sizes[t, SIZE_SAMPLE_NEXT])
        sample_mult = float_vector_at(addresses, t, COLUMN_SAMPLE_MULT,
                                      sizes[t, SIZE_SAMPLE_MULT])
        rng = rng_at(addresses, t)
        if regrow[t] >= 0:
            regrow_and_count(tree, store_X, store_keys, store_stats, stats, sample_next,
                             sample_mult, regrow[t], lifetime, pause_pure,
                             min_samples_split, rng)
        position = _extend_points(
            tree, store_X, store_keys, store_stats, stats, sample_next, sample_mult, ids,
            starts[t], bootstrap, lifetime, True, pause_pure, min_samples_split, rng,
            pending, max_nodes, one_hot, excess, path)
        stops[t] = position
        leaves[t] = pending[0]
        if position < ids.shape[0] or pending[0] >= 0:
            left_over += 1
    return left_over


@kernel
def learn_forest_rows(addresses, sizes, X, units, follow, scaled, keys, weights, targets,
                      store_X, store_keys, store_stats, n_stored, feature_range, max_target,
                      extend, ids, starts, regrow, n_stats, bootstrap, lifetime, pause_pure,
                      min_samples_split, max_nodes, one_hot, excess, path, pending, stops,
                      leaves):
    """Every online step of a Mondrian forest, in one compiled call.

    The rows ``X`` (in the caller's units, read in ``units``: see
    ``utils.feature_scale.rows_in_units``), if any, are stored as the points
    ``n_stored, ...`` (``store_rows``; their ids written to ``ids``); then, if
    ``extend``, every tree is extended with the points ``ids`` (``extend_forest``:
    from ``starts[t]``, after re-sampling ``regrow[t]``). The fast path calls it
    with new rows for all trees; the full path with no row, for one tree, to
    extend it with points already stored (``_extend_tree_online``): one kernel
    learns online, so that a new user's first use compiles the extension once.

    Returns -1 if the rows are refused (nothing changed but ``scaled``), -2 if they
    would change a unit with ``follow`` (the same), else the number of trees left
    to Python (0 without ``extend``).
    """
    if X.shape[0]:
        code = rows_in_units(X, units, follow, feature_range, scaled)
        if code:
            return -code
        if units.shape[1]:
            X = scaled
        if not store_rows(X, keys, weights, targets, store_X, store_keys, store_stats,
                          n_stored, feature_range, max_target):
            return -1
        for i in range(ids.shape[0]):
            ids[i] = n_stored + i
    if not extend:
        return 0
    return extend_forest(addresses, sizes, store_X, store_keys, store_stats, ids, starts,
                         regrow, n_stats, bootstrap, lifetime, pause_pure, min_samples_split,
                         max_nodes, one_hot, excess, path, pending, stops, leaves)


@kernel
def _largest_tree(sizes):
    largest = 0
    for t in range(sizes.shape[0]):
        largest = max(largest, sizes[t, SIZE_NODES])
    return largest


@kernel
def predict_proba_forest(addresses, sizes, X, units, scaled, points, n_classes, gamma,
                         max_depth, scale, out, nodes, reals, classes, excess, checked):
    """Add the probabilities of every tree that has seen a point to ``out``, each
    tree's part (weighted by ``scale``, or by one over the number of such trees when
    ``scale`` is 0) summed first; the rows are ``X`` in ``units`` (put into
    ``scaled``; none when ``units`` has no column). Returns 1, or 0 if the rows are
    not finite, or -1 if a tree does not fit the work arrays. With ``checked``, the
    caller has checked the rows (the full path: its rows in units may hold an
    infinity, far outside every box, which it predicts). ``points``: the sample
    store's points, whose boxes are those of the leaves of one point.

    The only prediction kernel of ``MondrianForestClassifier``: its full path runs
    it on a table of one tree at a time, with ``scale`` one over its trained trees
    (``_predict_proba_trees``), and adds the parts in tree order, as here.

    Compiled without the reference-counting runtime, with which every call would
    make and free a record for each array it takes from Python (``engine._jit.kernel``;
    about 0.3 µs of a one-row call, in an ad-hoc timing): the loop over the trees,
    which allocates, runs in ``_proba_trees``."""
    if units.shape[1]:
        to_units(X, units, scaled)
        X = scaled
    if not checked and not finite_rows(X):
        return 0
    if _largest_tree(sizes) + 1 > nodes.shape[0]:
        return -1
    n_features = X.shape[1]
    trained = 0
    for t in range(addresses.shape[0]):
        if tree_at(addresses, sizes, t, n_features).meta[META_N_NODES] > 0:
            trained += 1
    # Scalar loops here and below: array expressions compile numba's broadcasting
    # machinery, a noticeable part of a first prediction's compile time.
    if trained == 0:
        for i in range(out.shape[0]):
            for k in range(out.shape[1]):
                out[i, k] = 1.0 / n_classes
        return 1
    if scale == 0.0:
        scale = 1.0 / trained
    _proba_trees(addresses, sizes, X, points, n_classes, gamma, max_depth, scale, out, nodes,
                 reals, classes, excess)
    return 1


@kernel(allocates=True)
def _proba_trees(addresses, sizes, X, points, n_classes, gamma, max_depth, scale, out, nodes,
                 reals, classes, excess):
    """The loop of ``predict_proba_forest`` over the trees (checked rows in units)."""
    n_features = X.shape[1]
    part = np.empty(out.shape)
    for t in range(addresses.shape[0]):
        tree = tree_at(addresses, sizes, t, n_features)
        if tree.meta[META_N_NODES] == 0:
            continue
        for i in range(part.shape[0]):
            for k in range(part.shape[1]):
                part[i, k] = 0.0
        _proba_rows(tree, points,
                    float_matrix_at(addresses, t, COLUMN_STATS, sizes[t, SIZE_NODES],
                                    n_classes),
                    X, gamma, max_depth, scale, part, nodes, reals, classes, excess)
        for i in range(out.shape[0]):
            for k in range(out.shape[1]):
                out[i, k] += part[i, k]


@kernel(allocates=True)
def predict_mean_forest(addresses, sizes, X, units, scaled, points, max_depth, mean, per_tree,
                        nodes, reals, excess):
    """Sum over the trees that have seen a point of their predictive means
    (``predict_moments_tree`` per tree, without the second moment; the rows read in
    ``units`` as in ``predict_proba_forest``); returns the number of such trees, or
    -1 if the rows are not finite, or -2 if a tree does not fit the work arrays.
    Each tree's means also go to its row of ``per_tree`` unless that has no rows
    (drift adaptation combines them; the rows of empty trees are left as they are).
    (``predict(return_std=True)`` takes the full path.)"""
    if units.shape[1]:
        to_units(X, units, scaled)
        X = scaled
    if not finite_rows(X):
        return -1
    if _largest_tree(sizes) + 1 > nodes.shape[0]:
        return -2
    n_features = X.shape[1]
    trained = 0
    m = np.empty(X.shape[0])
    for t in range(addresses.shape[0]):
        tree = tree_at(addresses, sizes, t, n_features)
        if tree.meta[META_N_NODES] == 0:
            continue
        trained += 1
        _moments_rows(tree, points,
                      float_matrix_at(addresses, t, COLUMN_STATS, sizes[t, SIZE_NODES], 3),
                      _NO_VARIANCES, X, max_depth, m, m, m,
                      (nodes, reals[0], reals[1], reals[2], excess))
        for i in range(mean.shape[0]):
            mean[i] += m[i]
        if per_tree.shape[0]:
            for i in range(mean.shape[0]):
                per_tree[t, i] = m[i]
    return trained
