"""Batch sampling (engine.growth.sample_blocks): every node gets the box of its points,
whichever way the sampling went (cut, paused, stopped by the lifetime or by a node
budget, resumed after the tree grew, a paused leaf re-sampled), and a sampling that
stops for room goes on to the same tree."""

import numpy as np
from numpy.testing import assert_array_equal

from mondrianlearn import MondrianForestClassifier, MondrianForestRegressor
from mondrianlearn.engine.growth import close_pending_blocks, sample_blocks
from mondrianlearn.engine.tree import LEAF, META_N_NODES, META_ROOT, MIXED, empty_tree, node_boxes
from mondrianlearn.kernel.transformer import MondrianKernel


def _wide(n=300, seed=0):
    """12 features: uniform, a constant one, binary ones, a narrow one, duplicates."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 12))
    X[:, 3] = 0.25
    X[:, 4:7] = rng.randint(2, size=(n, 3))
    X[:, 7] *= 1e-3
    X[n // 2:n // 2 + 20] = X[:20]
    y = (X[:, 0] + X[:, 4] > 1).astype(int) + (X[:, 1] > 0.8)
    return X, y


def _rounded_box(points):
    low = points.min(axis=0)
    high = points.max(axis=0)
    lo32 = low.astype(np.float32)
    hi32 = high.astype(np.float32)
    lo32 = np.where(lo32 > low, np.nextafter(lo32, np.float32(-np.inf)), lo32)
    hi32 = np.where(hi32 < high, np.nextafter(hi32, np.float32(np.inf)), hi32)
    return lo32, hi32


def _check_tree(tree, X, keys=None):
    """Every node's box, point count and label are those of the points below it; the
    points of a node are ``X[points[node]]``."""
    a = tree.arrays
    n = tree.n_nodes
    box_lower, box_upper = node_boxes(a, X)  # by node
    points = {}

    def collect(node):
        if a.left[node] == LEAF:
            ids = []
            s = a.leaf_head[node]
            while s >= 0:
                ids.append(s)
                s = tree.sample_next[s]
            points[node] = np.array(ids, dtype=np.int64)
        else:
            collect(a.left[node])
            collect(a.right[node])
            points[node] = np.concatenate([points[a.left[node]], points[a.right[node]]])

    collect(int(a.meta[META_ROOT]))
    assert len(points) == n
    for node, ids in points.items():
        assert len(ids) == a.n_points[node], node
        low, high = _rounded_box(X[ids])
        assert_array_equal(box_lower[node], low)
        assert_array_equal(box_upper[node], high)
        if keys is not None:
            labels = np.unique(keys[ids])
            assert a.label[node] == (labels[0] if len(labels) == 1 else MIXED)
        if a.left[node] != LEAF:  # the cut separates the points of the two children
            d, thr = a.feature[node], a.threshold[node]
            assert np.all(X[points[a.left[node]], d] <= thr)
            assert np.all(X[points[a.right[node]], d] > thr)


def test_batch_sampled_nodes_have_the_boxes_of_their_points():
    X, y = _wide()
    model = MondrianForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    store = model._store
    keys = store.keys[:store.n]
    for tree in model.trees_:
        _check_tree(tree, store.X[:store.n], keys)


def _start_sampling(X, capacity):
    """``(tree, sample_next, indices, stack, rng)`` for sampling a tree of ``capacity``
    nodes on every row of ``X`` with ``sample_blocks`` (the root block on the stack)."""
    tree = empty_tree(X.shape[1], capacity)
    tree.meta[META_N_NODES] = 1
    tree.meta[META_ROOT] = 0
    stack = np.empty((len(X) + 1, 3), dtype=np.int64)
    stack[0] = (0, 0, len(X))
    return (tree, np.full(len(X), -1, dtype=np.int64), np.arange(len(X), dtype=np.int64),
            stack, np.arange(1, 5, dtype=np.uint64))


def test_blocks_closed_by_a_node_budget_have_the_boxes_of_their_points():
    """A sampling that a node budget stops leaves pending blocks, made paused leaves
    by ``close_pending_blocks``; every node has the box of its points."""
    X, y = _wide(200)
    keys = y.astype(np.int64)
    tree, sample_next, indices, stack, rng = _start_sampling(X, 31)
    pending = sample_blocks(tree, X, keys, sample_next, indices, stack, 1, np.inf, True,
                            True, 2, rng)
    assert pending > 0  # the budget stopped it
    close_pending_blocks(tree, X, keys, sample_next, indices, stack, pending, np.inf)

    class State:  # what _check_tree reads of a TreeState
        arrays, n_nodes = tree, int(tree.meta[META_N_NODES])

    State.sample_next = sample_next
    _check_tree(State, X, keys)


def test_online_learning_with_re_sampled_leaves_keeps_exact_boxes():
    """One row at a time, paused leaves are re-sampled (``regrow_leaf``) from their
    points; every node keeps the box of its points."""
    X, y = _wide(240)
    model = MondrianForestRegressor(n_estimators=3, random_state=1, min_samples_split=6)
    for i in range(len(X)):
        model.partial_fit(X[i:i + 1], X[i:i + 1, 0] + y[i])
    store = model._store
    for tree in model.trees_:
        _check_tree(tree, store.X[:store.n])


def test_a_sampling_resumed_after_growth_gives_the_same_tree():
    """``sample_blocks`` stops when the capacity runs out and goes on where it left
    off once the tree has grown: the same tree, bit for bit, as in one call."""
    X, y = _wide(200)
    keys = y.astype(np.int64)
    trees = []
    for capacity in (2 * len(X) + 8, 9):
        tree, sample_next, indices, stack, rng = _start_sampling(X, capacity)
        size = 1
        while True:
            size = sample_blocks(tree, X, keys, sample_next, indices, stack, size, np.inf,
                                 True, True, 2, rng)
            if size == 0:
                break
            grown = empty_tree(X.shape[1], 2 * tree.parent.shape[0])
            for name, field in tree._asdict().items():
                target = getattr(grown, name)
                if name == "meta":
                    target[:] = field
                else:
                    target[:field.shape[0]] = field
            tree = grown
        trees.append((tree, sample_next))
    (a, next_a), (b, next_b) = trees
    n = int(a.meta[META_N_NODES])
    assert n == int(b.meta[META_N_NODES])
    for name, field in a._asdict().items():
        if name != "meta":
            assert_array_equal(field[:n], getattr(b, name)[:n], err_msg=name)
    assert_array_equal(next_a, next_b)


def test_kernel_partitions_have_the_boxes_of_their_points():
    """The Mondrian kernel's partitions (finite lifetime, no pausing) stop early; their
    leaves keep no point lists, so the boxes are checked against the rows' leaves."""
    X, _ = _wide(150)
    kernel = MondrianKernel(n_trees=3, lifetime=3.0, random_state=0).fit(X)
    X_units = kernel._in_units(np.ascontiguousarray(X))  # the trees' coordinates
    for tree in kernel.trees_:
        a = tree.arrays
        lower, upper = node_boxes(a, None)  # a partition keeps no points
        leaves = np.array([_leaf_of(a, x) for x in X_units])
        for leaf in np.unique(leaves):
            low, high = _rounded_box(X_units[leaves == leaf])
            assert_array_equal(lower[leaf], low)
            assert_array_equal(upper[leaf], high)
        for node in range(tree.n_nodes):
            if a.left[node] != LEAF:
                left, right = a.left[node], a.right[node]
                assert_array_equal(lower[node], np.minimum(lower[left], lower[right]))
                assert_array_equal(upper[node], np.maximum(upper[left], upper[right]))


def _leaf_of(a, x):
    node = int(a.meta[META_ROOT])
    while a.left[node] != LEAF:
        node = a.left[node] if x[a.feature[node]] <= a.threshold[node] else a.right[node]
    return node
