"""Rolling-weight boosting over all trees in one compiled call (the fast path).

As ``forest._forest_kernels``: the kernels loop over the trees of a
:class:`~mondrianlearn.engine.tree_table.TreeTable` (per-node array ``stats``) and
run the full path's per-tree loops (``_kernels.boost_rows``,
``forest._smoothing._proba_rows``) on the estimator's work arrays, so results are
bit-identical. Boosting visits the trees in order (each tree's example weights come
from the previous trees), so a tree that needs storage is left to Python with all
the trees after it: Python goes on from there with the full path's loop.
"""

import numpy as np

from ..engine._jit import kernel
from ..engine.tree import META_MAX_LEAF_POINTS, META_N_NODES, UNBOUNDED
from ..engine.tree_table import (
    COLUMN_SAMPLE_MULT,
    COLUMN_SAMPLE_NEXT,
    COLUMN_STATS,
    SIZE_NODES,
    SIZE_SAMPLE_MULT,
    SIZE_SAMPLE_NEXT,
    finite_rows,
    float_matrix_at,
    float_vector_at,
    id_vector_at,
    rng_at,
    tree_at,
)
from ..forest._forest_kernels import store_rows
from ..forest._smoothing import _proba_rows
from ._kernels import boost_rows


@kernel
def _needs_python(sizes, t, n_nodes, max_leaf_points, n_stored, nodes, path):
    """Whether the full path would grow this tree (sample links, or nodes:
    ``engine.storage.learn_rows`` with ``boosting._regrowth_room``) before boosting
    it, or the work arrays are too small for it."""
    capacity = sizes[t, SIZE_NODES]
    if path.shape[0] < capacity or nodes.shape[0] < capacity + 1:
        return True
    links, mult = sizes[t, SIZE_SAMPLE_NEXT], sizes[t, SIZE_SAMPLE_MULT]
    if (links > 0 and links < n_stored) or (mult > 0 and mult < n_stored):
        return True
    return n_nodes + 2 * max_leaf_points + 6 > capacity  # forest._additive.room_for_one_point


@kernel
def boost_forest(addresses, sizes, X, keys, weights, feature_range, no_targets, store_X,
                 store_keys, store_stats, n_stored, weight_seen, ids, lam, seen_weight,
                 errors, gamma, lifetime, pause_pure, min_samples_split, nodes, reals,
                 classes, excess, path, proba, stop):
    """Store the rows (``forest._forest_kernels.store_rows``) and boost every tree with
    them, in tree order (``MondrianBoostingClassifier._learn``).

    Returns -1 if the rows are refused (non-finite, range overflow, or the store is
    full; nothing changed). Otherwise the rows are stored as ``ids``, with example
    weights ``lam`` and seen weights ``seen_weight``, and the return value is the
    first tree left to Python (the number of trees when none): Python boosts it from
    row ``stop[0]`` on, then the trees after it.
    """
    if not store_rows(X, keys, weights, no_targets, store_X, store_keys, store_stats,
                      n_stored, feature_range, 0.0):
        return -1
    n_rows = X.shape[0]
    total = 0.0
    for i in range(n_rows):
        ids[i] = n_stored + i
        lam[i] = 1.0
        total += weights[i]  # np.cumsum's order
        seen_weight[i] = weight_seen + total
    n_total = n_stored + n_rows
    n_features = X.shape[1]
    n_classes = store_stats.shape[1]
    for t in range(addresses.shape[0]):
        tree = tree_at(addresses, sizes, t, n_features)
        stop[0] = 0
        if _needs_python(sizes, t, tree.meta[META_N_NODES], tree.meta[META_MAX_LEAF_POINTS],
                         n_total, nodes, path):
            return t
        capacity = sizes[t, SIZE_NODES]
        position = boost_rows(
            tree, store_X, store_keys, store_stats,
            float_matrix_at(addresses, t, COLUMN_STATS, capacity, n_classes),
            id_vector_at(addresses, t, COLUMN_SAMPLE_NEXT, sizes[t, SIZE_SAMPLE_NEXT]),
            float_vector_at(addresses, t, COLUMN_SAMPLE_MULT, sizes[t, SIZE_SAMPLE_MULT]),
            ids[:n_rows], 0, lam[:n_rows], weights, seen_weight[:n_rows], errors[t], gamma,
            lifetime, pause_pure, min_samples_split, rng_at(addresses, t), nodes, reals,
            classes, excess, path, proba)
        if position < n_rows:
            stop[0] = position
            return t
    return addresses.shape[0]


@kernel
def _first_argmax(row):
    """``np.argmax``: the first largest entry (the first NaN if there is one)."""
    best = 0
    for k in range(1, row.shape[0]):
        if np.isnan(row[best]):
            break
        if row[k] > row[best] or np.isnan(row[k]):
            best = k
    return best


@kernel
def vote_forest(addresses, sizes, X, points, n_classes, gamma, weights, hard, out, part,
                nodes, reals, classes, excess):
    """Add the weighted vote of every tree that has seen a point and has a positive
    weight to ``out``, in tree order: ``weights[t]`` at the tree's most probable class
    (``hard``), or times its probabilities. Returns 1, or 0 if ``X`` is not finite,
    or -1 if a tree does not fit the work arrays (nothing added in both cases)."""
    if not finite_rows(X):
        return 0
    for t in range(addresses.shape[0]):
        if sizes[t, SIZE_NODES] + 1 > nodes.shape[0]:
            return -1
    n_rows = X.shape[0]
    n_features = X.shape[1]
    rows = part[:n_rows]
    for t in range(addresses.shape[0]):
        w = weights[t]
        tree = tree_at(addresses, sizes, t, n_features)
        if tree.meta[META_N_NODES] == 0 or w <= 0:
            continue
        for i in range(n_rows):  # a scalar loop compiles faster
            for k in range(rows.shape[1]):
                rows[i, k] = 0.0
        _proba_rows(tree, points,
                    float_matrix_at(addresses, t, COLUMN_STATS, sizes[t, SIZE_NODES],
                                    n_classes),
                    X, gamma, UNBOUNDED, 1.0, rows, nodes, reals, classes, excess)
        for i in range(n_rows):
            if hard:
                k = _first_argmax(rows[i])
                out[i, k] += w * 1.0
            else:
                for k in range(n_classes):
                    out[i, k] += w * rows[i, k]
    return 1
