"""AMF over all trees in one compiled call.

Each kernel loops over the trees of a :class:`~mondrianlearn.engine.tree_table.TreeTable`
and runs, per tree, the same per-tree loop as the full path (``_kernels``,
``_path_sums``), on the same work arrays, so results are bit-identical. Work arrays
are the estimator's own, allocated once and grown in Python; a tree that needs more
room than they (or its node arrays) have is left to Python, which finishes it with
the full path's per-tree loop (see ``BaseAMF._learn_fast``).

Learning has one kernel per task: the full path learns each tree through the same
kernel, on a table of that one tree, with rows it has already checked
(``checked``) and a start row per tree (``BaseAMF._tree_learner``). A new user's
first calls compile it once instead of a per-tree kernel beside it
(``benchmarks/bench_cold_start.py``).

Table columns of the per-node arrays (``COLUMN_STATS`` on): classification
``counts, total, log_weight, log_weight_tree``; regression ``total, mean, sq_dev,
log_weight, log_weight_tree``.
"""

import numpy as np

from ..engine._jit import kernel
from ..engine.boxes import record_path, walk_table
from ..engine.storage import FREE_NODES
from ..engine.tree import META_N_NODES, META_ROOT
from ..engine.tree_table import (
    COLUMN_STATS,
    SIZE_NODES,
    accept_rows,
    finite_rows,
    float_matrix_at,
    float_vector_at,
    rng_at,
    tree_at,
    walk_at,
)
from ..utils.feature_scale import rows_in_units, to_units
from ._kernels import _learn_classifier_rows, _learn_regressor_rows, target_moments
from ._path_sums import _proba_rows, _value_rows, _whole_tree, leaf_cell_classes, leaf_cell_value

STATS_CLASSIFIER = ("counts", "total", "log_weight", "log_weight_tree")
STATS_REGRESSOR = ("total", "mean", "sq_dev", "log_weight", "log_weight_tree")


@kernel(inline=True)
def _start_tree(addresses, sizes, t, n_features, max_nodes, path, n_before, stops, starts):
    """Tree ``t`` and whether its loop may run here: not if the full path would grow
    it first, or if the shared work space is too small for it (``stops[t] =
    starts[t]``: left to Python). Records its node count in ``n_before[t]``."""
    tree = tree_at(addresses, sizes, t, n_features)
    capacity = sizes[t, SIZE_NODES]
    n_before[t] = tree.meta[META_N_NODES]
    if (n_before[t] + FREE_NODES > capacity and capacity < max_nodes) or path.shape[0] < capacity:
        stops[t] = starts[t]
        return tree, False
    return tree, True


@kernel(inline=True)
def _left_to_python(tree, position, n_rows, n_before):
    """1 if Python must take the tree over after its loop: rows are left, or the
    call made at least half of the tree (renumbered, as the full path does)."""
    n_nodes = tree.meta[META_N_NODES]
    return 1 if position < n_rows or 2 * (n_nodes - n_before) >= n_nodes else 0


@kernel
def _accepted_rows(X, units, follow, feature_range, scaled):
    """0 if the rows to learn are accepted (``rows_in_units``, then ``accept_rows``,
    which widens ``feature_range``), else -1, or -2 if they were refused because
    they change a unit (``NEW_UNITS``); the rows in units are ``scaled``, or ``X``
    itself when ``units`` has no column."""
    code = rows_in_units(X, units, follow, feature_range, scaled)
    if code:
        return -code
    if units.shape[1]:
        return 0 if accept_rows(scaled, feature_range) else -1
    return 0 if accept_rows(X, feature_range) else -1


@kernel
def learn_classifier_forest(addresses, sizes, X, units, follow, scaled, keys, weights,
                            feature_range, step, dirichlet, split_pure, bootstrap, max_nodes,
                            count_first, n_classes, excess, path, no_samples, n_before,
                            stops, starts, checked):
    """Learn the rows ``starts[t]:`` in every tree ``t`` (``_kernels.
    _learn_classifier_rows`` per tree: see there for the algorithm).

    ``X`` is in the caller's units: the rows learned are ``scaled``, filled here,
    when ``units`` has columns (see ``_accepted_rows``). Returns -1 if the rows are
    refused (non-finite, range overflow), -2 if they would change a unit with
    ``follow`` (nothing changed in both cases), else the number of trees that
    Python must take over: for those,
    ``stops[t]`` is the first row not learned and ``n_before[t]`` the tree's node
    count before the call. With ``checked``, the caller has checked the rows (the
    full path, with ``units`` of no column): they are not checked again.
    """
    code = 0 if checked else _accepted_rows(X, units, follow, feature_range, scaled)
    if code:
        return code
    if units.shape[1]:
        X = scaled
    n_features = X.shape[1]
    left_over = 0
    for t in range(addresses.shape[0]):
        tree, here = _start_tree(addresses, sizes, t, n_features, max_nodes, path, n_before,
                                 stops, starts)
        if not here:
            left_over += 1
            continue
        capacity = sizes[t, SIZE_NODES]
        position = _learn_classifier_rows(
            tree, X, keys, weights, starts[t],
            float_matrix_at(addresses, t, COLUMN_STATS, capacity, n_classes),
            float_vector_at(addresses, t, COLUMN_STATS + 1, capacity),
            float_vector_at(addresses, t, COLUMN_STATS + 2, capacity),
            float_vector_at(addresses, t, COLUMN_STATS + 3, capacity),
            step, dirichlet, split_pure, rng_at(addresses, t), bootstrap, max_nodes,
            count_first, excess, path, no_samples)
        stops[t] = position
        left_over += _left_to_python(tree, position, X.shape[0], n_before[t])
    return left_over


@kernel
def learn_regressor_forest(addresses, sizes, X, units, follow, scaled, keys, y, weights,
                           prior, spread, feature_range, moments, step, split_pure, bootstrap,
                           max_nodes, count_first, excess, path, no_samples, n_before, stops,
                           starts, checked):
    """``learn_classifier_forest`` for regression (``_kernels._learn_regressor_rows``
    per tree; ``y`` relative to the model's offset, ``keys`` the bit patterns of the
    targets). Once the rows are accepted, ``target_moments`` updates ``moments`` (the
    running moments of the targets) and fills ``prior`` and ``spread``, which the
    trees left to Python then learn with too. With ``checked``, the caller has
    checked the rows and filled ``prior`` and ``spread``: ``moments`` is not
    updated."""
    if not checked:
        if not finite_rows(y.reshape((y.shape[0], 1))):
            return -1
        code = _accepted_rows(X, units, follow, feature_range, scaled)
        if code:
            return code
    if units.shape[1]:
        X = scaled
    if not checked:
        target_moments(y, weights, moments, prior, spread)
    n_features = X.shape[1]
    left_over = 0
    for t in range(addresses.shape[0]):
        tree, here = _start_tree(addresses, sizes, t, n_features, max_nodes, path, n_before,
                                 stops, starts)
        if not here:
            left_over += 1
            continue
        capacity = sizes[t, SIZE_NODES]
        position = _learn_regressor_rows(
            tree, X, keys, y, weights, prior, spread, starts[t],
            float_vector_at(addresses, t, COLUMN_STATS, capacity),
            float_vector_at(addresses, t, COLUMN_STATS + 1, capacity),
            float_vector_at(addresses, t, COLUMN_STATS + 2, capacity),
            float_vector_at(addresses, t, COLUMN_STATS + 3, capacity),
            float_vector_at(addresses, t, COLUMN_STATS + 4, capacity),
            step, split_pure, rng_at(addresses, t), bootstrap, max_nodes, count_first,
            excess, path, no_samples)
        stops[t] = position
        left_over += _left_to_python(tree, position, X.shape[0], n_before[t])
    return left_over


# ----------------------------------------------------------------- prediction
def prediction_work(n_nodes, n_features, n_classes):
    """Work arrays of the prediction kernels for trees of up to ``n_nodes`` nodes:
    ``(floats, ints, done, excess, weights, prefix, row, prefix_1d)``, the arrays
    of ``_path_sums._work_space`` packed into few arguments (see ``_work``).

    Plain NumPy: it only allocates, which compiled code does no faster, and compiling
    it lengthened a first prediction. The fast path keeps the arrays until the trees
    outgrow them; the full path makes them per tree and batch of rows, beside work
    that grows with the batch.
    """
    return (np.empty((5, n_nodes)), np.empty((2, n_nodes), dtype=np.int64),
            np.zeros(n_nodes, dtype=np.bool_), np.empty(n_features),
            np.empty((n_nodes, 3)), np.empty((n_nodes, max(n_classes, 1))),
            np.empty(max(n_classes, 1)), np.empty(n_nodes))


@kernel(allocates=True)
def _work(floats, ints, done, excess, weights):
    """The work tuple of ``_path_sums._proba_rows``/``_value_rows`` (sums along the
    rows' paths, never the whole tree) from the packed arrays."""
    table = walk_table(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64),
                       np.empty(0, dtype=np.int64), np.empty(0), 0)
    return (False, table, floats[0], floats[1], floats[2], floats[3], done, ints[0],
            excess, floats[4], ints[1], weights)


@kernel(allocates=True)
def _tree_work(tree, whole, floats, ints, done, excess, weights):
    """The work tuple of ``_path_sums._proba_rows`` for ``tree``: ``_work``, with the
    walk table of the tree's nodes when every node's sums are computed up front
    (``whole``, see ``_path_sums._whole_tree``). The classifier's batches use it for
    both, so that a first prediction compiles one of the two (``_work``: 0.26 s of
    ``AMFClassifier``'s first ``predict_proba``, numba's compile events)."""
    n_table = tree.meta[META_N_NODES] if whole else 0
    table = walk_table(tree.left, tree.right, tree.feature, tree.threshold, n_table)
    return (whole, table, floats[0], floats[1], floats[2], floats[3], done, ints[0],
            excess, floats[4], ints[1], weights)


@kernel
def _reset_done(tree, X, path, done, n_nodes):
    """Clear the marks of ``done`` for the next tree or call: all of them when that
    costs less than walking the rows' paths again (``_clear_done``; a walk reads a
    scattered node per level, clearing a mark is a byte). A single row left none
    (``_path_sums._descend``)."""
    if X.shape[0] < 2:
        return
    if X.shape[0] * 256 >= n_nodes:
        for node in range(n_nodes):
            done[node] = False
    else:
        _clear_done(tree, X, path, done)


@kernel
def _clear_done(tree, X, path, done):
    """Reset the marks that the rows' path sums left in ``done`` (it is reused); a
    single row left none (``_path_sums._descend``)."""
    if X.shape[0] < 2:
        return
    root = tree.meta[META_ROOT]
    n_nodes = tree.meta[META_N_NODES]
    for r in range(X.shape[0]):
        m = record_path(tree.left, tree.right, tree.feature, tree.threshold, root, X[r],
                        path, n_nodes)
        for j in range(m):
            done[path[j]] = False


@kernel
def _fits(addresses, sizes, done):
    """Whether every tree fits the work arrays."""
    for t in range(addresses.shape[0]):
        if sizes[t, SIZE_NODES] > done.shape[0]:
            return False
    return True


@kernel
def _leaf_cell_forest(addresses, sizes, x, n_classes, dirichlet, scale, out, row):
    """``predict_proba_forest`` for one row predicted by its leaf cells
    (``_path_sums.leaf_cell_classes`` per tree, the one-row case of ``_proba_rows``,
    called with the arrays it reads only: one row's walks cost less than setting
    up the batch path's per-tree call)."""
    for t in range(addresses.shape[0]):
        left, right, feature, threshold, root, n_nodes = walk_at(addresses, sizes, t)
        if n_nodes == 0:  # no row seen yet (online bagging): the prior
            for k in range(out.shape[0]):
                out[k] += scale / n_classes
            continue
        capacity = sizes[t, SIZE_NODES]
        leaf_cell_classes(left, right, feature, threshold, root, n_nodes, x,
                          float_matrix_at(addresses, t, COLUMN_STATS, capacity, n_classes),
                          float_vector_at(addresses, t, COLUMN_STATS + 1, capacity),
                          float_vector_at(addresses, t, COLUMN_STATS + 2, capacity),
                          float_vector_at(addresses, t, COLUMN_STATS + 3, capacity),
                          dirichlet, row)
        for k in range(n_classes):
            out[k] += scale * row[k]


@kernel
def predict_proba_forest(addresses, sizes, X, units, scaled, n_classes, dirichlet,
                         aggregate, extend, scale, out, floats, ints, done, excess, weights,
                         prefix, row, prefix_1d, checked):
    """Add every tree's probabilities times ``scale`` to ``out``, in tree order
    (``_path_sums._proba_rows`` per tree: one addition per entry and tree); the rows
    are ``X`` in ``units`` (put into ``scaled``; none when ``units`` has no column,
    see ``utils.feature_scale.rows_in_units``). Returns 1, or 0 if the rows are not
    finite, or -1 if a tree does not fit the work arrays (nothing added in both
    cases). With ``checked``, the caller has checked the rows (the full path: its
    rows in units may hold an infinity, far outside every box, which it predicts).

    The only prediction kernel of ``AMFClassifier``: the full path runs it on a
    table of one tree (``AMFClassifier._predict_proba_trees``). A batch that reaches
    a large part of a tree (``_path_sums._whole_tree``) computes the sums of every
    node up front, as one pass over the tree; either way a row's prediction does not
    depend on its batch (see ``_path_sums``).

    Compiled without the reference-counting runtime, with which every call would
    make and free a record for each array it takes from Python (``engine._jit.kernel``;
    0.4 µs of a one-row call's 14 arrays, in an ad-hoc timing): a batch's per-tree
    work, which allocates, runs in ``_proba_batch``."""
    if units.shape[1]:
        to_units(X, units, scaled)
        X = scaled
    if not checked and not finite_rows(X):
        return 0
    if not _fits(addresses, sizes, done) or row.shape[0] < n_classes:
        return -1  # work arrays made for fewer nodes or classes
    if X.shape[0] == 1 and aggregate and not extend:
        _leaf_cell_forest(addresses, sizes, X[0], n_classes, dirichlet, scale, out[0], row)
    else:
        _proba_batch(addresses, sizes, X, n_classes, dirichlet, aggregate, extend, scale,
                     out, floats, ints, done, excess, weights, prefix, row)
    return 1


@kernel(allocates=True)
def _proba_batch(addresses, sizes, X, n_classes, dirichlet, aggregate, extend, scale, out,
                 floats, ints, done, excess, weights, prefix, row):
    """The loop of ``predict_proba_forest`` over the trees, for checked rows in units."""
    n_features = X.shape[1]
    for t in range(addresses.shape[0]):
        tree = tree_at(addresses, sizes, t, n_features)
        capacity = sizes[t, SIZE_NODES]
        n_nodes = tree.meta[META_N_NODES]
        if n_nodes == 0:  # no row seen yet (online bagging): the prior
            for i in range(out.shape[0]):  # a scalar loop compiles faster
                for k in range(out.shape[1]):
                    out[i, k] += scale / n_classes
            continue
        whole = aggregate and _whole_tree(X.shape[0], n_nodes)
        tree_work = _tree_work(tree, whole, floats, ints, done, excess, weights)
        _proba_rows(tree, X, float_matrix_at(addresses, t, COLUMN_STATS, capacity, n_classes),
                    float_vector_at(addresses, t, COLUMN_STATS + 1, capacity),
                    float_vector_at(addresses, t, COLUMN_STATS + 2, capacity),
                    float_vector_at(addresses, t, COLUMN_STATS + 3, capacity),
                    dirichlet, aggregate, extend, scale, out, tree_work, prefix, row)
        if aggregate and not whole:
            _reset_done(tree, X, ints[0], done, n_nodes)


@kernel
def predict_value_forest(addresses, sizes, X, units, scaled, moments, aggregate, extend,
                         scale, out, floats, ints, done, excess, weights, prefix_2d, row,
                         prefix, checked):
    """``predict_proba_forest`` for regression (``predict_value_tree`` per tree, the
    prior the running mean ``moments[1]``). The work arrays are those of
    ``prediction_work``; this one uses the one-dimensional ``prefix``, not
    ``prefix_2d`` and ``row``. (A batch's per-tree work runs in ``_value_batch``, as in
    ``predict_proba_forest``.)"""
    if units.shape[1]:
        to_units(X, units, scaled)
        X = scaled
    if not checked and not finite_rows(X):
        return 0
    if not _fits(addresses, sizes, done):
        return -1
    prior = moments[1]
    if X.shape[0] == 1 and aggregate and not extend:
        _leaf_value_forest(addresses, sizes, X[0], prior, scale, out)
        return 1
    _value_batch(addresses, sizes, X, prior, aggregate, extend, scale, out, floats, ints,
                 done, excess, weights, prefix)
    return 1


@kernel
def _leaf_value_forest(addresses, sizes, x, prior, scale, out):
    """``_leaf_cell_forest`` for a scalar forecast (``leaf_cell_value`` per tree, the
    prior for a tree that has seen no row), added to ``out[0]``."""
    for t in range(addresses.shape[0]):
        left, right, feature, threshold, root, n_nodes = walk_at(addresses, sizes, t)
        if n_nodes == 0:
            out[0] += scale * prior
            continue
        capacity = sizes[t, SIZE_NODES]
        out[0] += scale * leaf_cell_value(
            left, right, feature, threshold, root, n_nodes, x,
            float_vector_at(addresses, t, COLUMN_STATS + 1, capacity),
            float_vector_at(addresses, t, COLUMN_STATS + 3, capacity),
            float_vector_at(addresses, t, COLUMN_STATS + 4, capacity))


@kernel(allocates=True)
def _value_batch(addresses, sizes, X, prior, aggregate, extend, scale, out, floats, ints,
                 done, excess, weights, prefix):
    """The loop of ``predict_value_forest`` over the trees, for checked rows in units."""
    work = _work(floats, ints, done, excess, weights)
    n_features = X.shape[1]
    no_depths = np.empty(0)
    for t in range(addresses.shape[0]):
        tree = tree_at(addresses, sizes, t, n_features)
        capacity = sizes[t, SIZE_NODES]
        if tree.meta[META_N_NODES] == 0:  # no row seen yet (online bagging): the prior
            for i in range(out.shape[0]):  # a scalar loop compiles faster
                out[i] += scale * prior
            continue
        _value_rows(tree, X, float_vector_at(addresses, t, COLUMN_STATS + 1, capacity),
                    prior, float_vector_at(addresses, t, COLUMN_STATS + 3, capacity),
                    float_vector_at(addresses, t, COLUMN_STATS + 4, capacity),
                    aggregate, extend, no_depths, scale, out, work, prefix)
        if aggregate:
            _reset_done(tree, X, ints[0], done, tree.meta[META_N_NODES])
