"""Batch sampling of a Mondrian tree on data (MF paper, Algorithms 1-2).

``sample_blocks`` grows the blocks waiting on an explicit stack. It is used for a
tree's first batch and to re-sample a paused leaf from its points when it must be
un-paused; both give the Mondrian process restricted to the data. A tree started
from one point is planted by ``plant_root``.

A block's box is not computed before its cut: the cut is drawn by thinning from
bounds on the box (``_split_by_thinning``), which costs a pass over the block's
points along the few features it draws instead of one along every feature, and the
boxes are made bottom-up once the blocks are done (leaves from their points,
internal nodes as the unions of their children's, ``finish_boxes``). The work of a
tree then grows with ``n D`` (every point in one leaf's box) rather than ``n D``
per level. A Mondrian forest's ``fit`` with one thread, 20 trees, against its cost
with every block's box computed first (ad-hoc timings, ``benchmarks/
bench_mf_speed.py`` has the measured table): letter 0.27 to 0.23 s, satimage 0.077 to
0.061 s, dna 0.068 to 0.044 s, usps 0.90 to 0.70 s (256 features: the boxes of its
thousands of nodes are most of the work that is left).
"""

import numpy as np

from ._jit import inline_kernel, kernel
from .boxes import round_down, round_up, set_point_box
from .random import choose_proportional, exponential, uniform, uniform_between
from .tree import LEAF, META_MAX_LEAF_POINTS, META_N_NODES, META_ROOT, MIXED


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
    return node


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
    sample_next : int64 array
        The tree's sample linked list (length 0 when leaves keep no points).

    Returns
    -------
    int
        The root (node 0).
    """
    root = new_node(tree, -1)
    tree.meta[META_ROOT] = root
    set_point_box(tree.lower, tree.upper, root, x)
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
    if extent <= 0.0:
        return True
    if pause_pure and tree.label[node] != MIXED:
        return True
    return tree.n_points[node] < min_samples_split


@kernel
def _set_box(tree, X, keys, indices, start, end, node, lower, upper):
    """Bounding box, point count and common label of ``indices[start:end]``.

    The running bounds live in the work buffers ``lower`` and ``upper`` (in cache)
    rather than in the node arrays, and are written once at the end, rounded
    outward; the buffers keep the true bounds, and the extent returned is theirs.
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
            v = X[s, d]
            if v < lower[d]:
                lower[d] = v
            elif v > upper[d]:
                upper[d] = v
        if keys[s] != label:
            label = MIXED
    extent = 0.0
    for d in range(n_features):
        tree.lower[node, d] = round_down(lower[d])
        tree.upper[node, d] = round_up(upper[d])
        extent += upper[d] - lower[d]
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


@kernel
def _block_label(keys, indices, start, end):
    """The common label key of ``indices[start:end]``, or ``MIXED``."""
    label = keys[indices[start]]
    for i in range(start + 1, end):
        if keys[indices[i]] != label:
            return MIXED
    return label


@kernel
def _all_equal(X, indices, start, end):
    """Whether the points ``indices[start:end]`` are all the same row (a block of zero
    extent; most blocks tell otherwise at their second point)."""
    first = indices[start]
    for i in range(start + 1, end):
        s = indices[i]
        for d in range(X.shape[1]):
            if X[s, d] != X[first, d]:
                return False
    return True


@kernel
def _side(X, indices, start, end, d):
    """``(low, high)``: the true bounds of ``indices[start:end]`` along feature ``d``."""
    low = high = X[indices[start], d]
    for i in range(start + 1, end):
        v = X[indices[i], d]
        if v < low:
            low = v
        elif v > high:
            high = v
    return low, high


@kernel
def _all_sides(X, indices, start, end, low, high):
    """The true bounds of ``indices[start:end]`` along every feature, in one pass over
    the rows."""
    first = indices[start]
    for d in range(X.shape[1]):
        low[d] = X[first, d]
        high[d] = X[first, d]
    for i in range(start + 1, end):
        s = indices[i]
        for d in range(X.shape[1]):
            v = X[s, d]
            if v < low[d]:
                low[d] = v
            elif v > high[d]:
                high[d] = v


@kernel
def _split_by_thinning(tree, X, indices, start, end, node, lifetime, rng, bound, known,
                       low, high, exact):
    """The first cut of the block ``indices[start:end]`` (``node``), drawn by thinning:
    ``(split_time, feature)``, or ``(split_time, -1)`` when the block is not cut (its
    extent is zero, or the split time is not before ``lifetime``).

    A block's cuts come at rate ``e_d``, its points' extent along each feature ``d``.
    The node's rows hold bounds on its box (the box of the block it was cut from,
    narrowed along the cut), whose sides ``B_d >= e_d`` are known without a pass
    over the points: candidate cuts are drawn at rate ``sum B_d`` (the time, then the
    feature in proportion to ``B_d``), and a candidate along ``d`` is kept with
    probability ``e_d / B_d``, the one pass it takes over the points being the
    feature's own. That is thinning of a Poisson process: the first kept candidate
    has the time and feature of the block's first cut, the same law as drawing them
    from the extents (Lewis and Shedler, 1979). Every feature passed over is known
    exactly from then on (``known``, its true bounds in ``low`` and ``high``; ``B_d``
    becomes ``e_d``): a block in which few features vary, or whose bounds are close,
    costs a few passes over its points instead of one per feature. With ``exact``,
    ``low`` and ``high`` already hold the true bounds of every feature.
    """
    n_features = X.shape[1]
    unknown_sum = 0.0
    n_unknown = 0
    known_sum = 0.0
    passes = 0
    max_passes = max(1, n_features // 8)
    for d in range(n_features):
        known[d] = exact
        if exact:
            bound[d] = high[d] - low[d]
            known_sum += bound[d]
            continue
        side = float(tree.upper[node, d]) - float(tree.lower[node, d])
        bound[d] = side
        if side > 0.0:
            unknown_sum += side
            n_unknown += 1
    t = parent_time(tree, node)
    while True:
        rate = known_sum + unknown_sum
        if not rate > 0.0:
            return np.inf, -1
        t += exponential(rng, rate)
        if not t < lifetime:
            return t, -1
        d = choose_proportional(rng, bound, rate)
        if known[d]:
            return t, d
        drawn = bound[d]
        if passes < max_passes:
            passes += 1
            lo, hi = _side(X, indices, start, end, d)
            low[d] = lo
            high[d] = hi
            known[d] = True
            n_unknown -= 1
            unknown_sum = unknown_sum - drawn if n_unknown > 0 else 0.0
            bound[d] = hi - lo
            known_sum += bound[d]
        else:
            # Many features passed over one at a time (a pass reads one value of each
            # point's row): all of them in one pass over the rows.
            _all_sides(X, indices, start, end, low, high)
            known_sum = 0.0
            for k in range(n_features):
                known[k] = True
                bound[k] = high[k] - low[k]
                known_sum += bound[k]
            unknown_sum = 0.0
            n_unknown = 0
        if uniform(rng) * drawn < bound[d]:  # kept with probability e_d / B_d
            return t, d


@kernel
def _bound_child(tree, parent, child, known, low, high, d, lo, hi):
    """Write bounds on the box of ``child``, a block cut from ``parent`` that lies in
    ``[lo, hi]`` along the cut's feature ``d``: the parent's true bounds where they
    are ``known``, its own bounds elsewhere (rounded outward, as boxes are)."""
    for k in range(known.shape[0]):
        if k == d:
            tree.lower[child, k] = round_down(lo)
            tree.upper[child, k] = round_up(hi)
        elif known[k]:
            tree.lower[child, k] = round_down(low[k])
            tree.upper[child, k] = round_up(high[k])
        else:
            tree.lower[child, k] = tree.lower[parent, k]
            tree.upper[child, k] = tree.upper[parent, k]


@kernel
def finish_boxes(tree, first):
    """Give every internal node with id ``>= first`` the union of its children's boxes
    (the box of its points: rounding outward commutes with the minimum and
    maximum), children first: freshly sampled children have larger ids than their
    parent. Leaves have their boxes already."""
    n_features = tree.lower.shape[1]
    for node in range(tree.meta[META_N_NODES] - 1, first - 1, -1):
        a = tree.left[node]
        if a == LEAF:
            continue
        b = tree.right[node]
        for k in range(n_features):
            tree.lower[node, k] = min(tree.lower[a, k], tree.lower[b, k])
            tree.upper[node, k] = max(tree.upper[a, k], tree.upper[b, k])


@kernel(allocates=True)
def sample_blocks(tree, X, keys, sample_next, indices, stack, stack_size, first, lifetime,
                  use_pausing, pause_pure, min_samples_split, rng):
    """Sample the Mondrian blocks waiting on ``stack`` (SampleMondrianBlock).

    A block's first cut is drawn by thinning (``_split_by_thinning``), from bounds on
    its box rather than the box itself, so that a block costs a few passes over its
    points instead of one per feature; a block that is not cut becomes a leaf with
    the box of its points, and once every block is done the internal nodes get the
    unions of their children's boxes (``finish_boxes``). The law of the tree is the
    Mondrian process restricted to the data, as when every block's box is computed
    first.

    Parameters
    ----------
    tree : TreeArrays
    X : float64 array (n_store, n_features)
        The sample store; ``indices`` select the points of each pending block.
    keys : int64 array (n_store,)
        Label keys, for pausing pure blocks.
    sample_next : int64 array
        The tree's sample linked list (length 0 when leaves keep no points).
    indices : int64 array
        Sample ids; a pending block owns the slice ``indices[start:end]``, which is
        reordered in place when the block is cut.
    stack : int64 array (n, 3)
        Pending blocks as ``(node, start, end)``; the node already exists. A node
        whose ``n_points`` is 0 starts with the box of its points (computed here);
        otherwise its rows hold bounds on its box (a paused leaf re-sampled: its box).
    stack_size : int
        Number of pending blocks.
    first : int
        The first node id made by this sampling (its blocks' nodes from there on,
        and the blocks first put on ``stack``, are finished by ``finish_boxes``).
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
        the tree and call again with the same stack and ``first``).
    """
    capacity = tree.parent.shape[0]
    n_features = X.shape[1]
    lower = np.empty(n_features)
    upper = np.empty(n_features)
    bound = np.empty(n_features)
    known = np.empty(n_features, dtype=np.bool_)
    while stack_size > 0:
        if tree.meta[META_N_NODES] + 2 > capacity:
            return stack_size
        stack_size -= 1
        node = stack[stack_size, 0]
        start = stack[stack_size, 1]
        end = stack[stack_size, 2]
        exact = tree.n_points[node] == 0  # no bounds yet: the box of its points
        if exact:
            _set_box(tree, X, keys, indices, start, end, node, lower, upper)
        n_points = end - start
        label = _block_label(keys, indices, start, end)
        tree.n_points[node] = n_points
        tree.label[node] = label
        if use_pausing and ((pause_pure and label != MIXED) or n_points < min_samples_split):
            if not exact:
                _set_box(tree, X, keys, indices, start, end, node, lower, upper)
            _make_leaf(tree, sample_next, indices, start, end, node, lifetime, True)
            continue
        if _all_equal(X, indices, start, end):
            # Zero extent, found without a draw: repeated rows consume the random
            # stream as one row does (weights equal repeated rows).
            split_time, d = np.inf, -1
        else:
            split_time, d = _split_by_thinning(tree, X, indices, start, end, node, lifetime,
                                               rng, bound, known, lower, upper, exact)
        if d < 0:
            _set_box(tree, X, keys, indices, start, end, node, lower, upper)
            # a block of zero extent is paused (when blocks are); one whose split
            # time is not before the lifetime is a leaf of the process
            _make_leaf(tree, sample_next, indices, start, end, node, lifetime,
                       use_pausing and split_time == np.inf)
            continue
        # The true bounds of the points, not the rounded box: a cut between a rounded
        # bound and the points would separate none of them.
        lo = lower[d]
        hi = upper[d]
        threshold = uniform_between(rng, lo, hi)  # both sides non-empty
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
        _bound_child(tree, node, left, known, lower, upper, d, lo, threshold)
        _bound_child(tree, node, right, known, lower, upper, d, threshold, hi)
        tree.n_points[left] = i - start  # not 0: its rows hold bounds
        tree.n_points[right] = end - i
        stack[stack_size, 0] = right
        stack[stack_size, 1] = i
        stack[stack_size, 2] = end
        stack[stack_size + 1, 0] = left
        stack[stack_size + 1, 1] = start
        stack[stack_size + 1, 2] = i
        stack_size += 2
    finish_boxes(tree, first)
    return stack_size


@kernel(allocates=True)
def close_pending_blocks(tree, X, keys, sample_next, indices, stack, stack_size, first,
                         lifetime):
    """Make every block still waiting on ``stack`` a paused leaf of its points, and
    finish the boxes of the sampling that started at node ``first``
    (``sample_blocks``).

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
        _set_box(tree, X, keys, indices, start, end, node, lower, upper)
        _make_leaf(tree, sample_next, indices, start, end, node, lifetime, True)
    finish_boxes(tree, first)
