"""Training kernels for trees whose node statistics are additive.

Mondrian forests keep, in every node, a sum over the node's points of a per-point
vector: a weighted one-hot class vector (classification) or the weighted moments
``(w, w y, w y^2)`` (regression). Both are learned by the same loops: ``sample_tree``
(batch) and ``_extend_points`` (online, point by point with ``add_point``; called
for all trees at once by ``forest._forest_kernels.learn_forest_rows``). The
per-point vectors live in the forest's sample store, so re-sampling a paused leaf can
recompute its statistics.

A tree may count a point several times (online bagging, boosting): its multiplicity
is kept in the tree's ``sample_mult`` (an empty array means one for every point). A
point of multiplicity zero is not seen by the tree at all, so it does not change the
partition; a positive multiplicity only scales the statistics.
"""

import numpy as np

from ..engine._jit import borrowed, inline_kernel, kernel
from ..engine.extension import absorb_to_leaf, extend_to_leaf, leaf_must_unpause, regrow_leaf
from ..engine.growth import sample_blocks
from ..engine.random import poisson
from ..engine.tree import LEAF, META_MAX_LEAF_POINTS, META_N_NODES, borrowed_tree


@inline_kernel
def _multiplicity(sample_mult, s):
    return 1.0 if sample_mult.shape[0] == 0 else sample_mult[s]


@kernel
def accumulate_new_nodes(tree, stats, point_stats, sample_next, sample_mult, first):
    """Statistics of the nodes with id >= ``first`` (all created by sampling).

    Leaves sum the vectors of their points; internal nodes sum their children,
    which always have larger ids than their parent among freshly sampled nodes.
    """
    # Scalar loops: array expressions would allocate a temporary per node.
    n_stats = stats.shape[1]
    for node in range(tree.meta[META_N_NODES] - 1, first - 1, -1):
        if tree.left[node] == LEAF:
            for k in range(n_stats):
                stats[node, k] = 0.0
            s = tree.leaf_head[node]
            while s >= 0:
                m = _multiplicity(sample_mult, s)
                for k in range(n_stats):
                    stats[node, k] += m * point_stats[s, k]
                s = sample_next[s]
        else:
            a = tree.left[node]
            b = tree.right[node]
            for k in range(n_stats):
                stats[node, k] = stats[a, k] + stats[b, k]


@kernel(allocates=True)
def draw_multiplicities(sample_ids, sample_mult, rng):
    """Online bagging: a Poisson(1) multiplicity for each point, kept in ``sample_mult``.

    Returns the points of positive multiplicity (the ones the tree sees), in order.
    """
    kept = np.empty(sample_ids.shape[0], dtype=np.int64)
    n = 0
    for i in range(sample_ids.shape[0]):
        k = poisson(rng, 1.0)
        sample_mult[sample_ids[i]] = k
        if k > 0:
            kept[n] = sample_ids[i]
            n += 1
    return kept[:n]


@kernel
def sample_tree(tree, X, keys, point_stats, stats, sample_next, sample_mult, indices,
                stack, stack_size, lifetime, use_pausing, pause_pure,
                min_samples_split, rng):
    """Batch-sample a tree on the points ``indices`` (resumable, see ``sample_blocks``).

    When every block is sampled, the statistics of all nodes are computed.
    """
    tree = borrowed_tree(tree)  # see engine._jit.borrowed
    X, keys, stats = borrowed(X), borrowed(keys), borrowed(stats)
    point_stats = borrowed(point_stats)
    sample_next, sample_mult = borrowed(sample_next), borrowed(sample_mult)
    indices, stack, rng = borrowed(indices), borrowed(stack), borrowed(rng)
    stack_size = sample_blocks(tree, X, keys, sample_next, indices, stack,
                               stack_size, lifetime, use_pausing, pause_pure,
                               min_samples_split, rng)
    if stack_size == 0:
        accumulate_new_nodes(tree, stats, point_stats, sample_next, sample_mult, 0)
    return stack_size


@kernel
def room_for_one_point(tree):
    """Whether the node arrays surely take one more point, a leaf re-sampled included.

    Conservative (it assumes the largest paused leaf may be re-sampled); loops that
    can hand a pending re-sampling back to Python use ``room_to_regrow`` instead.
    """
    needed = tree.meta[META_N_NODES] + 2 * tree.meta[META_MAX_LEAF_POINTS] + 6
    return needed <= tree.parent.shape[0]


@kernel
def room_to_regrow(tree, leaf):
    """Whether re-sampling ``leaf`` (at most two new nodes per point) fits."""
    return tree.meta[META_N_NODES] + 2 * tree.n_points[leaf] + 2 <= tree.parent.shape[0]


@kernel
def regrow_and_count(tree, X, keys, point_stats, stats, sample_next, sample_mult, leaf,
                     lifetime, pause_pure, min_samples_split, rng):
    """Un-pause and re-sample ``leaf``, then compute the statistics of the new nodes."""
    first = tree.meta[META_N_NODES]
    regrow_leaf(tree, X, keys, sample_next, leaf, lifetime, pause_pure,
                min_samples_split, rng)
    accumulate_new_nodes(tree, stats, point_stats, sample_next, sample_mult, first)


@inline_kernel
def _add_row(stats, point_stats, s, key, multiplicity, node, one_hot):
    """Add ``multiplicity`` times the statistics of sample ``s`` to ``node`` (only
    the column ``key`` when they are ``one_hot``; scalar loops, no temporary)."""
    if one_hot:
        stats[node, key] += multiplicity * point_stats[s, key]
    else:
        for k in range(stats.shape[1]):
            stats[node, k] += multiplicity * point_stats[s, k]


@inline_kernel
def _add_along_path(tree, stats, point_stats, s, key, multiplicity, leaf, one_hot):
    """Add the statistics of sample ``s`` to ``leaf`` and every node above it."""
    node = leaf
    while node >= 0:
        _add_row(stats, point_stats, s, key, multiplicity, node, one_hot)
        node = tree.parent[node]


@inline_kernel
def _add_along_walk(stats, point_stats, s, key, multiplicity, leaf, new_parent, sibling,
                    path, one_hot):
    """``_add_along_path`` over the path that ``extend_to_leaf`` recorded in ``path``
    (root first): it ends at ``leaf``, or at ``sibling`` when a split was inserted
    above it, whose place the new parent and leaf then take. Reading the recorded
    ids instead of following ``parent`` links up from the leaf spares a chain of
    dependent loads, one per level."""
    end = sibling if new_parent >= 0 else leaf
    j = 0
    while path[j] != end:
        _add_row(stats, point_stats, s, key, multiplicity, path[j], one_hot)
        j += 1
    if new_parent >= 0:
        _add_row(stats, point_stats, s, key, multiplicity, new_parent, one_hot)
    _add_row(stats, point_stats, s, key, multiplicity, leaf, one_hot)


@kernel(inline=True)
def add_point(tree, X, keys, point_stats, stats, sample_next, sample_mult, s,
              multiplicity, lifetime, use_pausing, pause_pure, min_samples_split, rng,
              excess, path, one_hot):
    """Extend the tree with sample ``s`` counted ``multiplicity`` times.

    ``one_hot``: the statistics row of every point is zero but in column ``keys[s]``
    (class counts), so only that column is updated along the path.

    Needs room for two more nodes. Returns the leaf of the point and whether that
    leaf, paused, must now be re-sampled (``regrow_and_count``, left to the caller
    so that it can first make room).
    """
    leaf, new_parent, sibling, _ = extend_to_leaf(
        tree, X, X[s], keys[s], s, sample_next, lifetime, use_pausing, True, rng, excess,
        path)
    if new_parent >= 0:
        # Scalar loops: a row copy compiles numba's shape-mismatch error (seconds).
        for k in range(stats.shape[1]):
            stats[new_parent, k] = stats[sibling, k]
            stats[leaf, k] = 0.0
    _add_along_walk(stats, point_stats, s, keys[s], multiplicity, leaf, new_parent, sibling,
                    path, one_hot)
    must_regrow = use_pausing and leaf_must_unpause(tree, X, leaf, pause_pure,
                                                    min_samples_split)
    return leaf, must_regrow


@kernel(inline=True)
def _extend_points(tree, X, keys, point_stats, stats, sample_next, sample_mult,
                   sample_ids, start, bootstrap, lifetime, use_pausing, pause_pure,
                   min_samples_split, rng, pending, max_nodes, one_hot, excess, path):
    """Extend a tree online with the points ``sample_ids[start:]``, in order
    (``excess``, ``path``: work space; the arrays are borrowed, see
    ``engine._jit.borrowed``).

    With ``bootstrap``, each point gets a Poisson(1) multiplicity drawn from the
    tree's stream (Oza and Russell's online bagging); points drawn zero times are
    skipped.

    Returns the position of the first point not processed. It is less than
    ``len(sample_ids)`` when the node arrays are full, or when a paused leaf must be
    re-sampled and does not fit: its id is then in ``pending[0]`` (otherwise -1),
    and the caller grows the tree if needed, re-samples that leaf
    (``regrow_and_count``) and goes on: ``forest._forest_kernels.extend_forest``.

    A tree with ``max_nodes`` nodes or close to it no longer grows: each point then
    widens the boxes and updates the statistics along its path to a leaf.
    """
    tree = borrowed_tree(tree)
    X, keys, stats = borrowed(X), borrowed(keys), borrowed(stats)
    point_stats = borrowed(point_stats)
    sample_next, sample_mult = borrowed(sample_next), borrowed(sample_mult)
    sample_ids, rng, pending = borrowed(sample_ids), borrowed(rng), borrowed(pending)
    excess, path = borrowed(excess), borrowed(path)
    pending[0] = -1
    for i in range(start, sample_ids.shape[0]):
        full = tree.meta[META_N_NODES] + 2 > max_nodes
        if not full and tree.meta[META_N_NODES] + 2 > tree.parent.shape[0]:
            return i
        s = sample_ids[i]
        multiplicity = _multiplicity(sample_mult, s)
        if bootstrap:
            k = poisson(rng, 1.0)
            sample_mult[s] = k
            if k == 0:
                continue
            multiplicity = np.float64(k)
        if full:
            leaf = absorb_to_leaf(tree, X, X[s], keys[s], path)
            _add_along_path(tree, stats, point_stats, s, keys[s], multiplicity, leaf, one_hot)
            continue
        leaf, must_regrow = add_point(tree, X, keys, point_stats, stats, sample_next,
                                      sample_mult, s, multiplicity, lifetime, use_pausing,
                                      pause_pure, min_samples_split, rng, excess, path,
                                      one_hot)
        if must_regrow:
            if not room_to_regrow(tree, leaf) and tree.parent.shape[0] < max_nodes:
                pending[0] = leaf
                return i + 1
            regrow_and_count(tree, X, keys, point_stats, stats, sample_next, sample_mult,
                             leaf, lifetime, pause_pure, min_samples_split, rng)
    return sample_ids.shape[0]
