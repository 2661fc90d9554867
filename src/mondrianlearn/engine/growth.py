"""Batch sampling of a Mondrian tree on data (MF paper, Algorithms 1-2).

``sample_blocks`` grows the blocks waiting on an explicit stack. It is used for a
tree's first batch and to re-sample a paused leaf from its points when it must be
un-paused; both give the Mondrian process restricted to the data. A tree started
from one point is planted by ``plant_root``.
"""

import numpy as np

from ._jit import inline_kernel, kernel
from .boxes import round_down, round_up, set_leaf_point_box, take_box_row
from .random import choose_proportional, exponential, uniform_between
from .tree import (
    LEAF,
    META_MAX_LEAF_POINTS,
    META_N_BOXES,
    META_N_NODES,
    META_ROOT,
    MIXED,
    POINT_BOX,
)


@inline_kernel
def parent_time(tree, node):
    """Split time of the parent of ``node`` (0 for the root)."""
    p = tree.parent[node]
    return 0.0 if p < 0 else tree.time[p]


@inline_kernel
def new_node(tree, parent):
    """Take the next free node id; the caller has checked the capacity."""
    node = tree.meta[META_N_NODES]
    tree.meta[META_N_NODES] = node + 1
    tree.parent[node] = parent
    tree.left[node] = LEAF
    tree.right[node] = LEAF
    tree.feature[node] = -1
    tree.threshold[node] = 0.0
    tree.n_points[node] = 0
    tree.label[node] = MIXED
    tree.paused[node] = False
    tree.leaf_head[node] = -1
    tree.box_row[node] = POINT_BOX  # no box yet: the caller gives it one
    return node


def start_root(tree):
    """Make node 0 of ``tree`` (a :class:`~.tree.TreeArrays`, reset to no node) the root
    of a tree about to be sampled in batch, its fields set as :func:`new_node` sets
    them (the sampler writes its box, its counts and the rest). Python, not compiled:
    called once per tree, before its batch."""
    tree.meta[META_N_NODES] = 1
    tree.meta[META_ROOT] = 0
    tree.meta[META_MAX_LEAF_POINTS] = 0
    tree.meta[META_N_BOXES] = 0
    tree.parent[0] = -1
    tree.left[0] = LEAF
    tree.right[0] = LEAF
    tree.feature[0] = -1
    tree.threshold[0] = 0.0
    tree.time[0] = 0.0
    tree.n_points[0] = 0
    tree.label[0] = MIXED
    tree.paused[0] = False
    tree.leaf_head[0] = -1
    tree.box_row[0] = POINT_BOX


@inline_kernel
def link_sample(tree, sample_next, node, sample):
    """Push ``sample`` onto the point list of leaf ``node``."""
    if sample_next.shape[0] > 0 and sample >= 0:
        sample_next[sample] = tree.leaf_head[node]
        tree.leaf_head[node] = sample


@kernel
def plant_root(tree, x, key, lifetime, paused, sample, sample_next):
    """Make the first point of an empty tree its root: a leaf whose box is ``x``.

    This is what ``sample_blocks`` makes of one point: a block of zero extent is
    never cut (its split time is infinite, drawn without using the random stream),
    so it is a leaf with ``lifetime``, paused when the model pauses blocks.

    Parameters
    ----------
    tree : TreeArrays
        Without any node, and with room for one.
    x : float64 array (n_features,)
    key : int
        Label key of the point.
    lifetime : float
    paused : bool
        Whether the model pauses blocks (the leaf is then paused).
    sample : int
        Id of the point in the sample store, linked into the leaf (``-1``: none).
    sample_next : int32 array (``ID_DTYPE``)
        The tree's sample linked list (length 0 when leaves keep no points).

    Returns
    -------
    int
        The root (node 0).
    """
    root = new_node(tree, -1)
    tree.meta[META_ROOT] = root
    keeps = sample_next.shape[0] > 0
    set_leaf_point_box(tree, root, x, keeps, keeps and sample >= 0)
    tree.n_points[root] = 1
    tree.label[root] = key
    tree.time[root] = lifetime
    tree.paused[root] = paused
    link_sample(tree, sample_next, root, sample)
    if paused and tree.meta[META_MAX_LEAF_POINTS] < 1:
        tree.meta[META_MAX_LEAF_POINTS] = 1
    return root


@kernel
def should_pause(tree, node, extent, pause_pure, min_samples_split):
    """Pausing rule of the MF paper: zero extent, one label, or too few points."""
    return extent <= 0.0 or pauses_whatever_extent(tree, node, pause_pure,
                                                   min_samples_split)


@kernel
def pauses_whatever_extent(tree, node, pause_pure, min_samples_split):
    """The parts of the pausing rule (``should_pause``) that do not depend on the
    extent: one label (with ``pause_pure``), or too few points."""
    if pause_pure and tree.label[node] != MIXED:
        return True
    return tree.n_points[node] < min_samples_split


@kernel
def _set_box(tree, X, keys, indices, start, end, node, lower, upper, keeps_points):
    """Bounding box, point count and common label of ``indices[start:end]``.

    The running bounds live in the work buffers ``lower`` and ``upper`` (in cache)
    rather than in the node arrays, and are written once at the end, rounded
    outward; the buffers keep the true bounds, and the extent returned is theirs.
    A block of one point (or of copies of one point) in a tree that keeps its
    points (``keeps_points``) becomes a leaf that links them: it takes no box row
    (``tree.POINT_BOX``).
    """
    n_features = X.shape[1]
    first = indices[start]
    for d in range(n_features):
        lower[d] = X[first, d]
        upper[d] = X[first, d]
    label = keys[first]
    for i in range(start + 1, end):
        s = indices[i]
        for d in range(n_features):
            # Selects, not branches: LLVM makes the loop over the features SIMD
            # min/max (100-tree fits of letter about 12% faster, ad-hoc timings).
            v = X[s, d]
            lo = lower[d]
            hi = upper[d]
            lower[d] = v if v < lo else lo
            upper[d] = v if v > hi else hi
        if keys[s] != label:
            label = MIXED
    extent = 0.0
    for d in range(n_features):
        extent += upper[d] - lower[d]
    row = tree.box_row[node]
    if row < 0 and not (keeps_points and extent == 0.0):
        row = take_box_row(tree, node, keeps_points)
    if row >= 0:
        for d in range(n_features):
            tree.lower[row, d] = round_down(lower[d])
            tree.upper[row, d] = round_up(upper[d])
    tree.n_points[node] = end - start
    tree.label[node] = label
    return extent


@kernel
def _make_leaf(tree, sample_next, indices, start, end, node, lifetime, paused):
    tree.left[node] = LEAF
    tree.right[node] = LEAF
    tree.time[node] = lifetime
    tree.paused[node] = paused
    tree.leaf_head[node] = -1
    for i in range(start, end):
        link_sample(tree, sample_next, node, indices[i])
    if paused and end - start > tree.meta[META_MAX_LEAF_POINTS]:
        tree.meta[META_MAX_LEAF_POINTS] = end - start


@kernel(allocates=True)
def sample_blocks(tree, X, keys, sample_next, indices, stack, stack_size, lifetime,
                  use_pausing, pause_pure, min_samples_split, rng):
    """Sample the Mondrian blocks waiting on ``stack`` (SampleMondrianBlock).

    Parameters
    ----------
    tree : TreeArrays
    X : float64 array (n_store, n_features)
        The sample store; ``indices`` select the points of each pending block.
    keys : int64 array (n_store,)
        Label keys, for pausing pure blocks.
    sample_next : int32 array (``ID_DTYPE``)
        The tree's sample linked list (length 0 when leaves keep no points).
    indices : int64 array
        Sample ids; a pending block owns the slice ``indices[start:end]``, which is
        reordered in place when the block is cut.
    stack : int64 array (n, 3)
        Pending blocks as ``(node, start, end)``; the node already exists.
    stack_size : int
        Number of pending blocks.
    lifetime : float
        Lifetime ``lambda`` of the process (``inf`` allowed).
    use_pausing, pause_pure : bool
        Pause blocks (zero extent, fewer than ``min_samples_split`` points, and one
        label when ``pause_pure``), as in the MF paper. Without pausing, a block is
        cut until its extent is zero or the lifetime is spent.
    min_samples_split : int
    rng : uint64 array (4,)

    Returns
    -------
    stack_size : int
        Blocks still pending: non-zero only when the node capacity ran out (grow
        the tree and call again with the same stack).
    """
    capacity = tree.parent.shape[0]
    n_features = X.shape[1]
    keeps_points = sample_next.shape[0] > 0
    ranges = np.empty(n_features)
    lower = np.empty(n_features)
    upper = np.empty(n_features)
    while stack_size > 0:
        if tree.meta[META_N_NODES] + 2 > capacity:
            return stack_size
        stack_size -= 1
        node = stack[stack_size, 0]
        start = stack[stack_size, 1]
        end = stack[stack_size, 2]
        extent = _set_box(tree, X, keys, indices, start, end, node, lower, upper,
                          keeps_points)
        if use_pausing and should_pause(tree, node, extent, pause_pure, min_samples_split):
            _make_leaf(tree, sample_next, indices, start, end, node, lifetime, True)
            continue
        split_time = parent_time(tree, node) + exponential(rng, extent)
        if not split_time < lifetime:
            _make_leaf(tree, sample_next, indices, start, end, node, lifetime, False)
            continue
        # The true bounds of the points (in the buffers), not the rounded box: a cut
        # between a rounded bound and the points would separate none of them.
        for d in range(n_features):
            ranges[d] = upper[d] - lower[d]
        d = choose_proportional(rng, ranges, extent)
        threshold = uniform_between(rng, lower[d], upper[d])  # both sides non-empty
        # Partition indices[start:end]: x_d <= threshold first.
        i = start
        j = end - 1
        while i <= j:
            if X[indices[i], d] <= threshold:
                i += 1
            else:
                tmp = indices[i]
                indices[i] = indices[j]
                indices[j] = tmp
                j -= 1
        tree.time[node] = split_time
        tree.feature[node] = d
        tree.threshold[node] = threshold
        tree.paused[node] = False
        tree.leaf_head[node] = -1
        left = new_node(tree, node)
        right = new_node(tree, node)
        tree.left[node] = left
        tree.right[node] = right
        stack[stack_size, 0] = right
        stack[stack_size, 1] = i
        stack[stack_size, 2] = end
        stack[stack_size + 1, 0] = left
        stack[stack_size + 1, 1] = start
        stack[stack_size + 1, 2] = i
        stack_size += 2
    return stack_size


@kernel(allocates=True)
def close_pending_blocks(tree, X, keys, sample_next, indices, stack, stack_size,
                         lifetime):
    """Make every block still waiting on ``stack`` a paused leaf of its points.

    Used when a node budget stops the sampling: the Mondrian process is paused in
    those blocks (they are not cut), which keeps the tree valid and within budget.
    """
    lower = np.empty(X.shape[1])
    upper = np.empty(X.shape[1])
    while stack_size > 0:
        stack_size -= 1
        node = stack[stack_size, 0]
        start = stack[stack_size, 1]
        end = stack[stack_size, 2]
        _set_box(tree, X, keys, indices, start, end, node, lower, upper,
                 sample_next.shape[0] > 0)
        _make_leaf(tree, sample_next, indices, start, end, node, lifetime, True)
