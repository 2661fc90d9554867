"""Node arrays in reserved memory (engine.reserved): trees grow without copying their
nodes, and nothing else can tell where the memory came from."""

import copy
import gc
import mmap
import pickle

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from mondrianlearn import AMFClassifier, MondrianForestClassifier, MondrianForestRegressor
from mondrianlearn.engine import reserved
from mondrianlearn.engine import tree as tree_module
from mondrianlearn.engine.tree import TreeState

pytestmark = pytest.mark.skipif(not reserved.LAZY, reason="reservations are used on Linux "
                                "and macOS only (elsewhere trees grow by copying)")


@pytest.fixture(autouse=True)
def _small_trees_reserved(monkeypatch):
    """Reservations from the smallest trees on, so that small tests exercise them."""
    monkeypatch.setattr(reserved, "RESERVE_FROM_BYTES", 1)


def _tree(n_features=3, n_classes=2):
    return TreeState(n_features, np.arange(4, dtype=np.uint64),
                     {"stats": np.zeros((16, n_classes))})


def _arrays(tree):
    fields = [getattr(tree.arrays, f) for f in tree_module.NODE_FIELDS]
    return fields + list(tree.node_stats.values())


def _fill(tree, n):
    """Write recognisable values into the first ``n`` nodes (and box rows) of every
    array."""
    tree.arrays.meta[tree_module.META_N_NODES] = n
    tree.arrays.meta[tree_module.META_N_BOXES] = n
    for k, array in enumerate(_arrays(tree)):
        array[:n] = (np.arange(n) % 7 + k).reshape((n,) + (1,) * (array.ndim - 1))


def _stream(n=1500, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 4))
    return X, (X[:, 0] + X[:, 1] > 1).astype(int) + (X[:, 2] > 0.7)


def test_a_tree_grows_in_its_reservation_without_copying():
    tree = _tree()
    tree.reserve(1000)
    _fill(tree, 900)
    before = [a.copy() for a in _arrays(tree)]
    old = _arrays(tree)
    tree.reserve(tree.capacity + 1)
    assert tree.capacity > 1000
    for a, b, kept in zip(old, _arrays(tree), before):
        assert np.shares_memory(a, b)  # the same memory: no copy
        assert b.flags.c_contiguous and b.flags.writeable
        assert_array_equal(b[:900], kept[:900])
        assert not b[1000:].any()  # rows never used are zero


def test_a_full_reservation_moves_the_nodes_into_a_larger_one():
    tree = _tree()
    tree.reserve(1000)
    _fill(tree, 900)
    before = [a[:900].copy() for a in _arrays(tree)]
    rows = tree_module._RESERVATIONS[tree]._rows
    old = _arrays(tree)
    tree.reserve(rows + 1)
    assert tree.capacity > rows
    for a, b, kept in zip(old, _arrays(tree), before):
        assert not np.shares_memory(a, b)
        assert_array_equal(b[:900], kept)
        assert not b[900:].any()


def test_renumbering_growth_copies_into_new_arrays():
    """A growth that renumbers the nodes (AMF) writes every node anew: into new arrays,
    not through its reservation, and leaves the reservation."""
    X, y = _stream(800)
    model = AMFClassifier(n_estimators=1, random_state=0).partial_fit(X[:700], y[:700])
    for i in range(700, 800):  # new nodes at the end: out of depth-first order
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    tree = copy.deepcopy(model.trees_[0])
    assert tree._depth_first_order() is not None
    tree.reserve(tree.capacity + 1)  # into a reservation
    assert tree in tree_module._RESERVATIONS
    twin = copy.deepcopy(tree)
    old = _arrays(tree)
    tree.reserve(tree.capacity + 1, renumber=True)
    assert tree not in tree_module._RESERVATIONS
    assert not any(np.shares_memory(a, b) for a, b in zip(old, _arrays(tree)))
    twin.renumber()
    assert twin.capacity < tree.capacity
    for a, b in zip(_arrays(tree), _arrays(twin)):
        assert_array_equal(a[:tree.n_nodes], b[:tree.n_nodes])


@pytest.mark.parametrize("Est", [AMFClassifier, MondrianForestClassifier])
def test_models_do_not_depend_on_where_their_memory_came_from(Est, monkeypatch):
    """Learning one row at a time (trees grow often) gives the same trees, node for
    node, whether they grow in reservations or by copies."""
    X, y = _stream(1500)

    def learn():
        model = Est(n_estimators=3, random_state=1).partial_fit(X[:100], y[:100])
        for i in range(100, len(X)):
            model.partial_fit(X[i:i + 1], y[i:i + 1])
        return model

    grown = learn()
    monkeypatch.setattr(reserved, "LAZY", False)
    copied = learn()
    if Est is MondrianForestClassifier:  # AMF renumbers as it grows: new arrays
        assert any(tree in tree_module._RESERVATIONS for tree in grown.trees_)
    assert not any(tree in tree_module._RESERVATIONS for tree in copied.trees_)
    for a, b in zip(grown.trees_, copied.trees_):
        assert a.capacity == b.capacity
        rows_a, rows_b = tree_module.used_rows(a.arrays), tree_module.used_rows(b.arrays)
        for name in rows_a:  # the rows past those in use are spare
            assert_array_equal(rows_a[name], rows_b[name], err_msg=name)
        for name in a.node_stats:
            assert_array_equal(a.node_stats[name][:a.n_nodes], b.node_stats[name][:b.n_nodes])
    assert_array_equal(grown.predict_proba(X), copied.predict_proba(X))


def test_pickles_and_copies_are_compact_and_independent():
    X, y = _stream(600)
    model = MondrianForestRegressor(n_estimators=2, random_state=0)
    for start in range(0, 600, 50):
        model.partial_fit(X[start:start + 50], X[start:start + 50, 0])
    tree = model.trees_[0]
    assert tree in tree_module._RESERVATIONS
    predicted = model.predict(X)
    for twin in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
        other = twin.trees_[0]
        assert other not in tree_module._RESERVATIONS
        assert other.capacity <= max(tree.n_nodes, 2)  # no spare room saved
        for a, b in zip(_arrays(tree), _arrays(other)):
            assert not np.shares_memory(a, b)
        assert_array_equal(twin.predict(X), predicted)
        twin.partial_fit(X[:50], X[:50, 0] + 5.0)  # learns in memory of its own
        assert not np.array_equal(twin.predict(X), predicted)
        assert_array_equal(model.predict(X), predicted)


def test_the_memory_is_released_with_the_tree():
    tree = _tree()
    tree.reserve(5000)
    record = tree_module._RESERVATIONS[tree]
    assert record._whole() is not None
    del tree
    gc.collect()
    assert record._whole() is None  # the mapping went with its last array


def test_trimmed_trees_leave_their_reservation():
    tree = _tree()
    tree.reserve(5000)
    _fill(tree, 100)
    tree.trim()
    assert tree not in tree_module._RESERVATIONS
    assert tree.capacity < 5000
    assert all(a.base is None for a in _arrays(tree))


def test_a_refused_mapping_falls_back_to_copies(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("no address space")

    monkeypatch.setattr(mmap, "mmap", refuse)
    tree = _tree()
    tree.reserve(5000)
    _fill(tree, 100)
    tree.reserve(tree.capacity + 1)
    assert tree not in tree_module._RESERVATIONS
    assert all(a.base is None for a in _arrays(tree))
    assert tree.arrays.parent[99] == 99 % 7


def test_arrays_replaced_outside_growth_are_copied_at_the_next_growth():
    """A tree whose arrays were replaced (new features, new classes) is not grown in
    the old reservation, which no longer holds its arrays."""
    tree = _tree()
    tree.reserve(1000)
    _fill(tree, 50)
    tree.add_features(np.array([0.5]))
    lower = tree.arrays.lower
    tree.reserve(tree.capacity + 1)
    assert not np.shares_memory(lower, tree.arrays.lower)
    assert_array_equal(tree.arrays.lower[:50], lower[:50])
    assert tree.arrays.lower.shape[1] == 4


def test_only_large_trees_are_reserved(monkeypatch):
    """Small trees grow by copies into NumPy arrays (memory the allocator may reuse);
    a tree whose arrays reach ``RESERVE_FROM_BYTES`` moves into a reservation."""
    monkeypatch.setattr(reserved, "RESERVE_FROM_BYTES", 16 << 20)
    tree = _tree()
    tree.reserve(1000)
    assert tree not in tree_module._RESERVATIONS
    rows = (16 << 20) // tree.row_nbytes + 1
    tree.reserve(rows)
    assert tree in tree_module._RESERVATIONS
    assert tree_module._RESERVATIONS[tree]._rows >= 8 * rows
