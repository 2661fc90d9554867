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

Boxes are stored by box row (``TreeArrays.box_row``, below). In a tree that keeps its
points, a leaf whose points are all one point (a third of a Mondrian forest's nodes)
has no row: its box is its point's, read from the sample store and rounded on the
fly, so that the boxes, most of a node's bytes, are stored for the other nodes only.
"""

import numpy as np

from ._jit import bits_float32, float32_bits, inline_kernel, kernel, prefetch
from .tree import BOX_DTYPE, LEAF, META_N_BOXES, META_ROOT, POINT_BOX

WALK_NODE = np.dtype([("threshold", np.float64), ("feature", np.int64),
                      ("left", np.int64), ("right", np.int64)])
"""One node of a :func:`walk_table`: what a walk from the root reads, in 32 bytes."""


@inline_kernel
def round_down(v):
    """The largest float32 (:data:`BOX_DTYPE`) that is at most ``v`` (not NaN)."""
    f = BOX_DTYPE(v)
    if f > v:
        f = float32_below(f)
    return f


@inline_kernel
def round_up(v):
    """The smallest float32 (:data:`BOX_DTYPE`) that is at least ``v`` (not NaN)."""
    f = BOX_DTYPE(v)
    if f < v:
        f = float32_above(f)
    return f


# ``np.nextafter`` on float32 is a call into the C library's ``nextafterf``, with the
# vector registers saved around it: 3% of a Mondrian forest's learning in
# mini-batches (letter, ``perf``), whose new boxes round two bounds per feature. On
# the bit pattern of a float32 (sign and magnitude), the neighbour away from zero is
# the pattern plus one and the one towards zero the pattern minus one, infinities
# and subnormals included.
@kernel
def float32_below(f):
    """``np.nextafter(f, -inf)`` for a float32 ``f`` that is not NaN or -inf."""
    if f == 0.0:
        return bits_float32(-2147483647)  # 0x80000001: -(smallest subnormal)
    bits = float32_bits(f)
    return bits_float32(bits - 1 if f > 0.0 else bits + 1)


@kernel
def float32_above(f):
    """``np.nextafter(f, inf)`` for a float32 ``f`` that is not NaN or +inf."""
    if f == 0.0:
        return bits_float32(1)  # the smallest subnormal
    bits = float32_bits(f)
    return bits_float32(bits + 1 if f > 0.0 else bits - 1)


@inline_kernel
def set_point_box(lower, upper, row, x):
    """Make box ``row`` the (rounded) box of the single point ``x``."""
    for d in range(x.shape[0]):
        lower[row, d] = round_down(x[d])
        upper[row, d] = round_up(x[d])


# ------------------------------------------------------------------ box rows
# In a tree that keeps its points (``keeps_points``: its ``sample_next`` links them),
# a node's box is row ``box_row[node]`` of the box arrays, rows handed out in turn,
# or, for a leaf whose points are all one point (``tree.POINT_BOX``), that point's
# box: ``points[leaf_head[node]]`` rounded outward, the same bounds bit for bit as a
# row would hold (``points``: the sample store's ``X``). In a tree that keeps no
# points every node has a box, and its row is its id: kernels that read such trees
# pass ``points=None`` and read no ``box_row`` (numba compiles them without the
# branches of leaves of one point: their compile time is what it was without them).

@kernel(inline=True)
def take_box_row(tree, node, keeps_points):
    """Give ``node`` its box row (the next free one, or its id in a tree that keeps no
    points); return it."""
    if keeps_points:
        row = tree.meta[META_N_BOXES]
        tree.meta[META_N_BOXES] = row + 1
    else:
        row = node
        if node >= tree.meta[META_N_BOXES]:
            tree.meta[META_N_BOXES] = node + 1
    tree.box_row[node] = row
    return row


@kernel(inline=True)
def set_leaf_point_box(tree, node, x, keeps_points, linked):
    """Make the box of the new leaf ``node`` that of its one point ``x``: no row when
    the leaf links ``x`` in the store (``linked``), else a row."""
    if linked:
        tree.box_row[node] = POINT_BOX
    else:
        set_point_box(tree.lower, tree.upper, take_box_row(tree, node, keeps_points), x)


@kernel(inline=True)
def own_box_row(tree, points, node):
    """The box row of ``node``, giving a leaf of one point a row holding its box first
    (before its box widens)."""
    if points is None:
        return node
    row = tree.box_row[node]
    if row < 0:
        row = take_box_row(tree, node, True)
        set_point_box(tree.lower, tree.upper, row, points[tree.leaf_head[node]])
    return row


@kernel(inline=True)
def node_bound(lower, upper, box_row, leaf_head, points, node, d, high):
    """The lower (or, with ``high``, upper) bound of the box of ``node`` along ``d``,
    as float64."""
    if points is None:
        return np.float64(upper[node, d] if high else lower[node, d])
    row = box_row[node]
    if row >= 0:
        return np.float64(upper[row, d] if high else lower[row, d])
    v = points[leaf_head[node], d]
    return np.float64(round_up(v) if high else round_down(v))


@kernel(inline=True)
def node_box_extent(lower, upper, box_row, leaf_head, points, node):
    """``box_extent`` of the box of ``node``."""
    if points is None:
        return box_extent(lower, upper, node)
    row = np.int64(box_row[node])  # one specialisation of box_extent (node ids are int64)
    if row >= 0:
        return box_extent(lower, upper, row)
    s = leaf_head[node]
    extent = 0.0
    for d in range(points.shape[1]):
        v = points[s, d]
        extent += round_up(v) - round_down(v)
    return extent


@kernel(inline=True)
def node_box_excess(lower, upper, box_row, leaf_head, points, node, x, out):
    """``box_excess`` of the box of ``node``."""
    if points is None:
        return box_excess(lower, upper, node, x, out)
    row = np.int64(box_row[node])  # as in node_box_extent
    if row >= 0:
        return box_excess(lower, upper, row, x, out)
    s = leaf_head[node]
    total = 0.0
    for d in range(x.shape[0]):
        # one bound of the point's box can be outside x: one rounding, not two
        v = points[s, d]
        e = 0.0
        if x[d] < v:
            e = max(round_down(v) - x[d], 0.0)
        elif x[d] > v:
            e = max(x[d] - round_up(v), 0.0)
        out[d] = e
        total += e
    return total


@kernel(inline=True)
def node_box_holds(lower, upper, box_row, leaf_head, points, node, x):
    """``box_holds`` of the box of ``node``."""
    if points is None:
        return box_holds(lower, upper, node, x)
    row = np.int64(box_row[node])  # as in node_box_extent
    if row >= 0:
        return box_holds(lower, upper, row, x)
    s = leaf_head[node]
    for d in range(x.shape[0]):
        v = points[s, d]
        if x[d] < v:
            if x[d] < round_down(v):
                return False
        elif x[d] > v and x[d] > round_up(v):
            return False
    return True


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
def box_extent(lower, upper, row):
    """Sum of the sides of box ``row`` (its linear dimension, the rate at which the
    Mondrian process cuts it)."""
    extent = 0.0
    for d in range(lower.shape[1]):
        extent += upper[row, d] - lower[row, d]
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


@kernel(inline=True)
def prefetch_path(tree, points, path, m):
    """Prefetch what an extension reads and writes at the nodes ``path[:m]`` besides
    the walk's own fields: their boxes (by box row; ``points``: as in
    ``node_bound``), point counts, labels and times.

    The extension reads them level after level; in a large tree each is a cache miss,
    and requested together the misses overlap. A prefetch changes no value and
    cannot fault.
    """
    for j in range(m):
        node = path[j]
        prefetch(tree.n_points, node)
        prefetch(tree.label, node)
        prefetch(tree.time, node)
        row = node
        if points is not None:
            row = tree.box_row[node]
            if row < 0:
                continue  # a leaf of one point: its box is its point's
        prefetch(tree.lower, row)
        prefetch(tree.upper, row)


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
def deepest_holding(lower, upper, box_row, leaf_head, points, x, path, m):
    """Index in ``path[:m]`` of the deepest node whose box contains ``x`` (boxes by
    row, see ``node_box_holds``).

    Returns -1 when not even the first node's box does. Scans up from the end of
    the path, since the answer is usually a few levels above the leaf.
    """
    j = m - 1
    while j >= 0:
        if node_box_holds(lower, upper, box_row, leaf_head, points, path[j], x):
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
