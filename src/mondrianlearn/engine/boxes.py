"""Where a point lies against a tree: its leaf, and the boxes that hold it.

A node's box is the bounding box of the points below it, so boxes shrink down every
root-to-leaf path: if a box holds ``x``, so do the boxes of all its ancestors. The
extension and the branch-off probabilities only do work below the deepest box that
holds ``x`` (``deepest_holding``), which is usually within a few levels of the
leaf; above it a point cannot be cut off and widens nothing.

Boxes are stored in float32 (:data:`BOX_DTYPE`), rounded outward: the lower bound
down and the upper bound up to the nearest float32 (:func:`round_down`,
:func:`round_up`). A stored box therefore always contains the true bounding box,
so every containment test that holds for the true box holds for the stored one.
Rounding is monotone, so it commutes with the minimum and maximum that build and
widen boxes: a box widened point by point (online) and a box computed at once from
the same points (batch) are the same stored box. Split locations and the extents
that drive the split times in batch sampling are taken from the true float64
bounds of the points, never from a rounded box (a cut between a rounded bound and
the nearest point would separate nothing). float32 precision is relative to the
magnitude of a value: the estimators give the engine every feature relative to an
origin, a row of their data (``utils.feature_scale``), so that it is relative to
the data's range instead.
"""

import numpy as np

from ._jit import inline_kernel, kernel
from .tree import BOX_DTYPE, LEAF, META_ROOT

WALK_NODE = np.dtype([("threshold", np.float64), ("feature", np.int64),
                      ("left", np.int64), ("right", np.int64)])
"""One node of a :func:`walk_table`: what a walk from the root reads, in 32 bytes."""


_BELOW = np.float32(-np.inf)
_ABOVE = np.float32(np.inf)


@inline_kernel
def round_down(v):
    """The largest float32 (:data:`BOX_DTYPE`) that is at most ``v``."""
    f = BOX_DTYPE(v)
    if f > v:
        f = np.nextafter(f, _BELOW)
    return f


@inline_kernel
def round_up(v):
    """The smallest float32 (:data:`BOX_DTYPE`) that is at least ``v``."""
    f = BOX_DTYPE(v)
    if f < v:
        f = np.nextafter(f, _ABOVE)
    return f


@inline_kernel
def set_point_box(lower, upper, node, x):
    """Make the box of ``node`` the (rounded) box of the single point ``x``."""
    for d in range(x.shape[0]):
        lower[node, d] = round_down(x[d])
        upper[node, d] = round_up(x[d])


@inline_kernel
def widen_box(lower, upper, node, x):
    """Widen the box of ``node`` to hold ``x`` (rounded outward, see the module
    docstring). Takes the box arrays only, see ``box_excess``."""
    for d in range(x.shape[0]):
        if x[d] < lower[node, d]:
            lower[node, d] = round_down(x[d])
        elif x[d] > upper[node, d]:
            upper[node, d] = round_up(x[d])


@kernel
def find_leaf(tree, x):
    """The leaf whose cell contains ``x`` (following thresholds only)."""
    node = tree.meta[META_ROOT]
    while tree.left[node] != LEAF:
        if x[tree.feature[node]] <= tree.threshold[node]:
            node = tree.left[node]
        else:
            node = tree.right[node]
    return node


@kernel
def box_extent(lower, upper, node):
    """Sum of the sides of the box of ``node`` (its linear dimension, the rate at
    which the Mondrian process cuts it)."""
    extent = 0.0
    for d in range(lower.shape[1]):
        extent += upper[node, d] - lower[node, d]
    return extent


@kernel
def box_excess(lower, upper, node, x, out):
    """Per-feature distance of ``x`` outside the box of ``node``; returns the sum.

    ``lower``, ``upper``: the tree's box arrays. Helpers called per node take only
    the arrays they read: passing the whole tree costs a reference-count round trip
    for each of its arrays, more than the work itself.
    """
    total = 0.0
    for d in range(x.shape[0]):
        # At most one of the two is positive (lower <= upper). Written without
        # branches: which side x falls is unpredictable, and a mispredicted branch
        # discards the loads of the next boxes that the processor has started.
        e = max(lower[node, d] - x[d], 0.0) + max(x[d] - upper[node, d], 0.0)
        out[d] = e
        total += e
    return total


@kernel
def record_path(left, right, feature, threshold, root, x, path, limit):
    """Write ``x``'s root-to-leaf path (following thresholds) into ``path``.

    Takes the tree's child, feature and threshold arrays and the root id (see
    ``box_excess``). Returns the length; the walk stops after ``limit`` nodes (at
    most ``len(path)``). Later passes over the path read this array instead of
    repeating the threshold comparisons, whose branches the processor cannot
    predict.
    """
    node = root
    m = 0
    while m < limit:
        path[m] = node
        m += 1
        child = left[node]
        if child == LEAF:
            break
        if x[feature[node]] <= threshold[node]:
            node = child
        else:
            node = right[node]
    return m


@kernel(allocates=True)
def walk_table(left, right, feature, threshold, n_nodes):
    """The fields of the first ``n_nodes`` nodes that a walk reads, packed one node
    per record (:data:`WALK_NODE`).

    A walk in the tree's own arrays loads a cache line from each of four arrays per
    level; in the table it loads one, and with the nodes in depth-first order (see
    ``engine.layout``) a left child shares its parent's line half the time. Worth
    building for a batch of rows that together visit a good part of the tree.
    """
    table = np.empty(n_nodes, dtype=WALK_NODE)
    for node in range(n_nodes):
        table[node].threshold = threshold[node]
        table[node].feature = feature[node]
        table[node].left = left[node]
        table[node].right = right[node]
    return table


@kernel
def record_path_packed(table, root, x, path, limit):
    """:func:`record_path` over a :func:`walk_table` (the same path)."""
    node = root
    m = 0
    while m < limit:
        path[m] = node
        m += 1
        record = table[node]
        child = record.left
        if child == LEAF:
            break
        if x[record.feature] <= record.threshold:
            node = child
        else:
            node = record.right
    return m


@kernel
def deepest_holding(lower, upper, x, path, m):
    """Index in ``path[:m]`` of the deepest node whose box contains ``x``.

    Returns -1 when not even the first node's box does. Scans up from the end of
    the path, since the answer is usually a few levels above the leaf.
    """
    j = m - 1
    while j >= 0:
        if box_holds(lower, upper, path[j], x):
            return j
        j -= 1
    return -1


@kernel
def box_holds(lower, upper, node, x):
    """Whether the box of ``node`` contains ``x`` (stops at the first feature
    outside)."""
    for d in range(x.shape[0]):
        if x[d] < lower[node, d] or x[d] > upper[node, d]:
            return False
    return True
