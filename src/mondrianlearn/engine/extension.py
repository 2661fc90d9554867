"""Online extension of a Mondrian tree with new points (MF paper, Algorithms 3-4).

A new point walks down from the root. At each node the point may be cut off from
the node's box by a new split inserted above it (at a time drawn before the node's
own split time); otherwise the node's box is widened and the point goes on to the
child on its side. At a leaf it is absorbed; a paused leaf that can no longer stay
paused is re-sampled from its points (``regrow_leaf``). The result has the same
distribution as a tree sampled in batch on all the points (projectivity).

AMF's ``split_pure=False`` departs from that law: a leaf whose points share the new
point's label absorbs it, and its box grows without a cut. Such a leaf keeps no
points, so when a point of another label later falls inside its box, no extension
can separate them; the leaf is then cut inside its box by a Mondrian cut of that
box (``_cut_inside_pure_leaf``), else a stream that starts with a run of one label
would leave the tree one leaf for good.
"""

import numpy as np

from ._jit import inline_kernel, kernel
from .boxes import (
    deepest_holding,
    node_bound,
    node_box_excess,
    node_box_extent,
    own_box_row,
    prefetch_path,
    record_path,
    round_down,
    round_up,
    set_leaf_point_box,
    take_box_row,
    widen_box,
)
from .growth import (
    close_pending_blocks,
    link_sample,
    new_node,
    parent_time,
    pauses_whatever_extent,
    sample_blocks,
)
from .random import choose_proportional, exponential, uniform_between
from .tree import LEAF, META_MAX_LEAF_POINTS, META_ROOT, MIXED


@kernel
def _insert_split_above(tree, points, node, x, key, sample, sample_next, split_time,
                        excess, eta, lifetime, use_pausing, rng):
    """Insert a new parent of ``node`` that cuts ``x`` off; return the new leaf.

    The cut falls between ``x`` and the stored box of ``node``, which holds the true
    box of its points (rounded outward): it always separates ``x`` from them.
    """
    d = choose_proportional(rng, excess, eta)
    high = node_bound(tree.lower, tree.upper, tree.box_row, tree.leaf_head, points,
                      node, d, True)
    if x[d] > high:
        threshold = uniform_between(rng, high, x[d])
    else:
        low = node_bound(tree.lower, tree.upper, tree.box_row, tree.leaf_head, points,
                         node, d, False)
        threshold = uniform_between(rng, x[d], low)
    return _link_cut(tree, points, node, x, key, sample, sample_next, split_time, d,
                     threshold, lifetime, use_pausing)


@kernel
def _cut_inside_pure_leaf(tree, points, leaf, x, key, sample, sample_next, split_time,
                          sides, extent, lifetime, rng):
    """Cut the pure ``leaf`` inside its box, which holds ``x`` of another label; return
    the new leaf of ``x``.

    The cut is a Mondrian cut of the leaf's box (a dimension with probability
    proportional to its side, a uniform location). It is inserted above ``leaf`` as
    an extension's cut is: the new parent takes the leaf's box and, in the caller,
    its statistics; ``x`` gets a new leaf on its side, ``leaf`` the part of its box on
    the other side. The leaf kept no points, so which of them lay on ``x``'s side is
    unknown: also returns ``share``, the part of the box's side along the cut's
    dimension that lies on ``x``'s side, by which the caller shares the leaf's
    statistics between the two parts (as if its points were spread evenly along it).
    """
    row = own_box_row(tree, points, leaf)
    for k in range(x.shape[0]):
        sides[k] = tree.upper[row, k] - tree.lower[row, k]
    d = choose_proportional(rng, sides, extent)
    lo = float(tree.lower[row, d])
    hi = float(tree.upper[row, d])
    threshold = uniform_between(rng, lo, hi)
    new_leaf = _link_cut(tree, points, leaf, x, key, sample, sample_next, split_time, d,
                         threshold, lifetime, False)
    if x[d] <= threshold:
        tree.lower[row, d] = max(lo, round_down(threshold))
        share = (threshold - lo) / (hi - lo)
    else:
        tree.upper[row, d] = min(hi, round_up(threshold))
        share = (hi - threshold) / (hi - lo)
    return new_leaf, min(max(share, 0.0), 1.0)


@kernel
def _link_cut(tree, points, node, x, key, sample, sample_next, split_time, d, threshold,
              lifetime, use_pausing):
    """Insert above ``node`` a new parent cut at ``threshold`` along ``d`` at
    ``split_time``, with a new leaf for ``x`` on its side; return that leaf."""
    old_parent = tree.parent[node]
    split = new_node(tree, old_parent)
    leaf = new_node(tree, split)
    if old_parent < 0:
        tree.meta[META_ROOT] = split
    elif tree.left[old_parent] == node:
        tree.left[old_parent] = split
    else:
        tree.right[old_parent] = split
    tree.parent[node] = split
    tree.time[split] = split_time
    tree.feature[split] = d
    tree.threshold[split] = threshold
    if x[d] <= threshold:
        tree.left[split] = leaf
        tree.right[split] = node
    else:
        tree.left[split] = node
        tree.right[split] = leaf
    keeps = sample_next.shape[0] > 0
    row = take_box_row(tree, split, keeps)
    if points is None:  # no points kept: the node's row is its id
        _union_with(tree, row, node, x)
    elif tree.box_row[node] >= 0:
        _union_with(tree, row, tree.box_row[node], x)
    else:  # a leaf of one point: its box is the point's (rounding commutes with min, max)
        s = tree.leaf_head[node]
        for k in range(x.shape[0]):
            tree.lower[row, k] = round_down(min(points[s, k], x[k]))
            tree.upper[row, k] = round_up(max(points[s, k], x[k]))
    set_leaf_point_box(tree, leaf, x, keeps, keeps and sample >= 0)
    tree.n_points[split] = tree.n_points[node] + 1
    tree.label[split] = key if tree.label[node] == key else MIXED
    # The new leaf holds one point: a block of zero extent, never cut.
    tree.n_points[leaf] = 1
    tree.label[leaf] = key
    tree.time[leaf] = lifetime
    tree.paused[leaf] = use_pausing
    link_sample(tree, sample_next, leaf, sample)
    return leaf


@inline_kernel
def _union_with(tree, row, below, x):
    """Box ``row``: box ``below`` widened to hold ``x``."""
    for k in range(x.shape[0]):
        tree.lower[row, k] = min(tree.lower[below, k], round_down(x[k]))
        tree.upper[row, k] = max(tree.upper[below, k], round_up(x[k]))


@inline_kernel
def extend_to_leaf(tree, points, x, key, sample, sample_next, lifetime, use_pausing,
                   split_pure, rng, excess, path):
    """Extend the tree with one point and return where it lands.

    Parameters
    ----------
    tree : TreeArrays
        Must have at least one node and room for two more.
    points : float64 array (n_store, n_features)
        The sample store's points (the boxes of leaves of one point are theirs). For
        a tree that keeps no points, None: its box rows are its node ids, read
        without ``box_row`` (``engine.boxes``).
    x : float64 array (n_features,)
    key : int
        Label key of the point (class index; 0 when labels play no role).
    sample : int
        Id of the point in the sample store, linked into its leaf (``-1``: none).
    sample_next : int32 array (``ID_DTYPE``)
        The tree's sample linked list (length 0 when leaves keep no points).
    lifetime : float
    use_pausing : bool
        Paused leaves absorb points and are never cut from above (MF); new leaves
        are paused.
    split_pure : bool
        When false, a leaf whose points all have the point's label absorbs it
        instead of being cut (AMF's option), and such a leaf that the point of
        another label falls inside is cut inside its box (see ``share``).
    rng : uint64 array (4,)
    excess : float64 array (n_features,)
        Work space.
    path : int64 array
        Work space for the point's path, at least as long as the tree is deep (the
        node capacity always suffices).

    Returns
    -------
    leaf : int
        The leaf that now holds the point.
    new_parent : int
        The node inserted above ``sibling`` by a new split, or -1.
    sibling : int
        The node that was cut off from the point (-1 when no split was inserted).
    share : float
        0, unless the split cut a leaf inside its box (``split_pure=False``): the
        leaf kept no points, so the caller gives the new leaf this share of its
        statistics, the share of the leaf's box on the point's side of the cut
        (its points taken as spread evenly along the cut's dimension).
    """
    m = record_path(tree.left, tree.right, tree.feature, tree.threshold,
                    tree.meta[META_ROOT], x, path, path.shape[0])
    prefetch_path(tree, points, path, m)
    # Nodes down to path[holding] have x in their box: no cut, no widening.
    holding = deepest_holding(tree.lower, tree.upper, tree.box_row, tree.leaf_head, points,
                              x, path, m)
    for j in range(m):
        node = path[j]
        is_leaf = tree.left[node] == LEAF
        eta = 0.0
        if j > holding:
            eta = node_box_excess(tree.lower, tree.upper, tree.box_row, tree.leaf_head,
                                  points, node, x, excess)
        can_cut = eta > 0.0
        if is_leaf:
            if use_pausing and tree.paused[node]:
                can_cut = False
            elif (not split_pure) and tree.label[node] == key:
                can_cut = False
        if can_cut:
            t_parent = parent_time(tree, node)
            split_time = t_parent + exponential(rng, eta)
            if split_time < tree.time[node]:
                leaf = _insert_split_above(tree, points, node, x, key, sample, sample_next,
                                           split_time, excess, eta, lifetime,
                                           use_pausing, rng)
                return leaf, tree.parent[node], node, 0.0
        elif is_leaf and eta == 0.0 and not (split_pure or use_pausing) \
                and tree.label[node] != key and tree.label[node] != MIXED:
            # A leaf that absorbed points of one label (split_pure=False) and now
            # holds x of another inside its box: no extension can separate them, so
            # it is cut inside its box (else it would stay one leaf for good).
            extent = node_box_extent(tree.lower, tree.upper, tree.box_row, tree.leaf_head,
                                     points, node)
            split_time = parent_time(tree, node) + exponential(rng, extent)
            if split_time < tree.time[node]:
                leaf, share = _cut_inside_pure_leaf(tree, points, node, x, key, sample,
                                                    sample_next, split_time, excess,
                                                    extent, lifetime, rng)
                return leaf, tree.parent[node], node, share
        # Count x in node, widening the box if x lies outside.
        if eta > 0.0:
            widen_box(tree.lower, tree.upper, own_box_row(tree, points, node), x)
        tree.n_points[node] += 1
        label = tree.label[node]
        if label != key and label != MIXED:
            tree.label[node] = MIXED
        if is_leaf:
            link_sample(tree, sample_next, node, sample)
            if tree.paused[node] and tree.n_points[node] > tree.meta[META_MAX_LEAF_POINTS]:
                tree.meta[META_MAX_LEAF_POINTS] = tree.n_points[node]
            return node, -1, -1, 0.0
    raise ValueError("extend_to_leaf: the path work space is shorter than the tree")


@inline_kernel
def leaf_must_unpause(tree, points, leaf, pause_pure, min_samples_split):
    """True when a paused leaf no longer satisfies the pausing rule (``points``: as in
    ``extend_to_leaf``)."""
    if not tree.paused[leaf] or pauses_whatever_extent(tree, leaf, pause_pure,
                                                       min_samples_split):
        return False  # (the extent, which takes a pass over the box, is not needed)
    return node_box_extent(tree.lower, tree.upper, tree.box_row, tree.leaf_head, points,
                           leaf) > 0.0


@kernel(allocates=True)
def regrow_leaf(tree, X, keys, sample_next, leaf, lifetime, pause_pure,
                min_samples_split, rng):
    """Un-pause ``leaf`` and re-sample its block from its points.

    New nodes get consecutive ids from the current node count on, children after
    parents. With room for ``2 * n_points[leaf]`` more nodes the block is fully
    re-sampled; with less (a node budget), the blocks that do not fit stay paused.
    """
    m = tree.n_points[leaf]
    indices = np.empty(m, dtype=np.int64)
    s = tree.leaf_head[leaf]
    count = 0
    while s >= 0 and count < m:
        indices[count] = s
        count += 1
        s = sample_next[s]
    stack = np.empty((count + 1, 3), dtype=np.int64)
    stack[0, 0] = leaf
    stack[0, 1] = 0
    stack[0, 2] = count
    tree.paused[leaf] = False
    tree.leaf_head[leaf] = -1
    pending = sample_blocks(tree, X, keys, sample_next, indices[:count], stack, 1,
                            lifetime, True, pause_pure, min_samples_split, rng)
    close_pending_blocks(tree, X, keys, sample_next, indices[:count], stack, pending,
                         lifetime)


@kernel
def absorb_to_leaf(tree, points, x, key, path):
    """Take a point into a tree that may not grow: widen boxes down to its leaf.

    Used once a tree has reached its node budget (memory-bounded mode): the point
    follows the thresholds, every node on its path widens its box and counts it,
    and no split is created or re-sampled. ``path``: work space as in
    ``extend_to_leaf``. Returns the leaf.
    """
    m = record_path(tree.left, tree.right, tree.feature, tree.threshold,
                    tree.meta[META_ROOT], x, path, path.shape[0])
    prefetch_path(tree, points, path, m)
    # x is in the boxes down to path[holding]
    holding = deepest_holding(tree.lower, tree.upper, tree.box_row, tree.leaf_head, points,
                              x, path, m)
    for j in range(m):
        node = path[j]
        if j > holding:
            widen_box(tree.lower, tree.upper, own_box_row(tree, points, node), x)
        tree.n_points[node] += 1
        if tree.label[node] != key:
            tree.label[node] = MIXED
    return path[m - 1]
