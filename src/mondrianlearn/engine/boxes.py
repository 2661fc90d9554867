"""Where a point lies against a tree: its leaf, and the boxes that hold it.

A node's box is the bounding box of the points below it, so boxes shrink down every
root-to-leaf path: if a box holds ``x``, so do the boxes of all its ancestors. The
extension and the branch-off probabilities only do work below the deepest box that
holds ``x`` (``deepest_holding``), which is usually within a few levels of the
leaf; above it a point cannot be cut off and widens nothing.
"""

from ._jit import kernel
from .tree import LEAF, META_ROOT


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
def box_excess(lower, upper, node, x, out):
    """Per-feature distance of ``x`` outside the box of ``node``; returns the sum.

    ``lower``, ``upper``: the tree's box arrays. Helpers called per node take only
    the arrays they read: passing the whole tree costs a reference-count round trip
    for each of its arrays, more than the work itself.
    """
    total = 0.0
    for d in range(x.shape[0]):
        lo = lower[node, d] - x[d]
        hi = x[d] - upper[node, d]
        e = 0.0
        if lo > 0.0:
            e = lo
        elif hi > 0.0:
            e = hi
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


@kernel
def deepest_holding(lower, upper, x, path, m):
    """Index in ``path[:m]`` of the deepest node whose box contains ``x``.

    Returns -1 when not even the first node's box does. Scans up from the end of
    the path, since the answer is usually a few levels above the leaf.
    """
    j = m - 1
    while j >= 0:
        node = path[j]
        inside = True
        for d in range(x.shape[0]):
            if x[d] < lower[node, d] or x[d] > upper[node, d]:
                inside = False
                break
        if inside:
            return j
        j -= 1
    return -1
