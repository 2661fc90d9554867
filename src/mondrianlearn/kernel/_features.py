"""Mondrian partitions as random features: sampling, extension, leaf columns.

The partitions are Mondrian trees of the shared engine, sampled in batch with
:func:`~mondrianlearn.engine.growth.sample_blocks` (no pausing, finite lifetime) and
extended online with :func:`~mondrianlearn.engine.extension.extend_to_leaf`. Each
leaf is one feature (column); a tree keeps the column of each of its leaves in the
node statistic ``"column"`` (stored as ``column + 1``, so that ``0`` means "no
column yet": new nodes are zero-filled when a tree grows).

For the lifetime sweep (the kernel paper, section 4) the same trees are read in the
order of their split times: :func:`node_point_ranges` lays the points out so that the
points of every node are one contiguous slice.
"""

import numpy as np

from ..engine._jit import kernel
from ..engine.extension import extend_to_leaf
from ..engine.growth import sample_blocks, start_root
from ..engine.paths import apply_tree
from ..engine.storage import batch_nodes, learn_rows, sample_with_growth
from ..engine.tree import (
    ID_DTYPE,
    LEAF,
    META_MAX_LEAF_POINTS,
    META_N_BOXES,
    META_N_NODES,
    META_ROOT,
    TreeState,
)
from ..utils.fast_path import FAST_MAX_ROWS, fast_call
from ..utils.parallel import map_trees

_NO_SAMPLES = np.empty(0, dtype=ID_DTYPE)


@kernel(allocates=True)
def extend_partition(tree, X, start, lifetime, rng, leaves):
    """Extend a tree online with the rows ``X[start:]`` (conditional Mondrian).

    Returns the first row not processed (the capacity ran out: grow and call again
    from there). ``leaves[i]`` receives the leaf that holds row ``i``.
    """
    return extend_rows(tree, X, start, lifetime, rng, leaves, np.empty(X.shape[1]),
                       np.empty(tree.parent.shape[0], dtype=np.int64),
                       np.empty(0, dtype=ID_DTYPE))  # (a global array would be read-only)


@kernel
def extend_rows(tree, X, start, lifetime, rng, leaves, excess, path, no_samples):
    """The loop of ``extend_partition`` on given work arrays: ``excess`` (one per
    feature), ``path`` (at least the node capacity) and ``no_samples`` (empty)."""
    capacity = tree.parent.shape[0]
    for i in range(start, X.shape[0]):
        if tree.meta[META_N_NODES] + 2 > capacity:
            return i
        leaf = extend_to_leaf(  # a partition keeps no points: box rows are node ids
            tree, None, X[i], 0, -1, no_samples, lifetime, False, True, rng, excess,
            path)[0]
        leaves[i] = leaf
    return X.shape[0]


@kernel(allocates=True)
def pruned_ids(tree, lifetime, old_to_new, depth_first):
    """Node ids of the partition of ``tree`` at a smaller ``lifetime``: the nodes
    below a split at a time ``>= lifetime`` are dropped (``old_to_new[node] = -1``),
    the others numbered from 0 (root first) in depth-first order, or in their
    former order (then no node's id grows: see :func:`write_pruned`). Returns the
    number of nodes kept."""
    n = tree.meta[META_N_NODES]
    old_to_new[:n] = -1
    stack = np.empty(n + 1, dtype=np.int64)
    stack[0] = tree.meta[META_ROOT]
    size = 1
    count = 0
    while size > 0:
        size -= 1
        node = stack[size]
        old_to_new[node] = count
        count += 1
        if tree.left[node] != LEAF and tree.time[node] < lifetime:
            stack[size] = tree.right[node]
            stack[size + 1] = tree.left[node]
            size += 2
    if not depth_first:
        count = 0
        for node in range(n):
            if old_to_new[node] >= 0:
                old_to_new[node] = count
                count += 1
    return count


@kernel
def write_pruned(tree, lifetime, old_to_new, count, out):
    """Write into ``out`` the partition of ``tree`` at ``lifetime`` with the node
    ids of :func:`pruned_ids` (``count`` nodes); a node split at a time ``>=
    lifetime`` becomes a leaf of ``time = lifetime``.

    ``out`` may be ``tree`` itself with ids in their former order: nodes are
    written in increasing order and none moves up, so none is overwritten before
    it is read.
    """
    n = tree.meta[META_N_NODES]
    n_features = tree.lower.shape[1]
    for node in range(n):
        new = old_to_new[node]
        if new < 0:
            continue
        p = tree.parent[node]
        row = tree.box_row[node]  # a partition keeps no points: every node has a row
        for d in range(n_features):
            out.lower[new, d] = tree.lower[row, d]
            out.upper[new, d] = tree.upper[row, d]
        out.parent[new] = -1 if p < 0 else old_to_new[p]
        out.box_row[new] = new
        out.n_points[new] = tree.n_points[node]
        out.label[new] = tree.label[node]
        out.paused[new] = False
        out.leaf_head[new] = -1
        if tree.left[node] != LEAF and tree.time[node] < lifetime:
            out.left[new] = old_to_new[tree.left[node]]
            out.right[new] = old_to_new[tree.right[node]]
            out.feature[new] = tree.feature[node]
            out.threshold[new] = tree.threshold[node]
            out.time[new] = tree.time[node]
        else:
            out.left[new] = LEAF
            out.right[new] = LEAF
            out.feature[new] = -1
            out.threshold[new] = 0.0
            out.time[new] = lifetime
    out.meta[META_ROOT] = old_to_new[tree.meta[META_ROOT]] if count > 0 else 0
    out.meta[META_N_NODES] = count
    out.meta[META_MAX_LEAF_POINTS] = 0
    out.meta[META_N_BOXES] = count


@kernel(allocates=True)
def leaf_ranks(left, right, root, rank, first, last):
    """Depth-first rank of every leaf; ``[first, last]`` leaf ranks under each node."""
    n = left.shape[0]
    stack = np.empty(2 * n + 2, dtype=np.int64)
    stack[0] = root
    size = 1
    count = 0
    order = np.empty(n, dtype=np.int64)
    visited = 0
    while size > 0:
        size -= 1
        node = stack[size]
        order[visited] = node
        visited += 1
        if left[node] == LEAF:
            rank[node] = count
            first[node] = count
            last[node] = count
            count += 1
        else:
            stack[size] = right[node]
            stack[size + 1] = left[node]
            size += 2
    # Children are visited after their parent: fill ranges bottom-up.
    for k in range(visited - 1, -1, -1):
        node = order[k]
        if left[node] != LEAF:
            first[node] = first[left[node]]
            last[node] = last[right[node]]
    return count


def node_point_ranges(tree, leaf_of_point):
    """Order the points so that each node's points are contiguous.

    Returns ``(order, start, end)``: the points of node ``j`` are
    ``order[start[j]:end[j]]``.
    """
    n_nodes = tree.meta[META_N_NODES]
    left = tree.left[:n_nodes]
    right = tree.right[:n_nodes]
    rank = np.full(n_nodes, -1, dtype=np.int64)
    first = np.zeros(n_nodes, dtype=np.int64)
    last = np.zeros(n_nodes, dtype=np.int64)
    n_leaves = leaf_ranks(left, right, int(tree.meta[META_ROOT]), rank, first, last)
    point_rank = rank[leaf_of_point]
    order = np.argsort(point_rank, kind="stable")
    bounds = np.zeros(n_leaves + 1, dtype=np.int64)
    np.cumsum(np.bincount(point_rank, minlength=n_leaves), out=bounds[1:])
    return order, bounds[first], bounds[last + 1]


# ------------------------------------------------------- cells and coarser features
@kernel
def assign_cells(tree, cell, first_node, n_cells):
    """Give a cell (``cell[node] = id + 1``) to every leaf from ``first_node`` on
    that has none, in node order; return the new number of cells."""
    for node in range(first_node, tree.meta[META_N_NODES]):
        if tree.left[node] == LEAF and cell[node] == 0:
            n_cells += 1
            cell[node] = n_cells
    return n_cells


@kernel(allocates=True)
def assign_feature_columns(tree, column, lifetime, n_columns):
    """The features of the partition at ``lifetime`` (coarser than the tree's own):
    ``column[node] = feature + 1`` for every node whose block is not cut before
    ``lifetime`` (its time is at least ``lifetime``; leaves included), 0 above.

    A node that already has a column keeps it, and so does every node of the
    same feature (nodes inserted online inherit the column of the older nodes
    below them); a feature with no older node gets the next column (in depth-first
    order). With ``column`` all zero, every feature is new. Returns the new number
    of columns.
    """
    n = tree.meta[META_N_NODES]
    order = np.empty(n, dtype=np.int64)
    stack = np.empty(n + 1, dtype=np.int64)
    stack[0] = tree.meta[META_ROOT]
    size = 1
    count = 0
    while size > 0:
        size -= 1
        node = stack[size]
        order[count] = node
        count += 1
        if tree.left[node] != LEAF:
            stack[size] = tree.right[node]
            stack[size + 1] = tree.left[node]
            size += 2
    inherited = np.zeros(n, dtype=np.int64)
    for k in range(count - 1, -1, -1):
        node = order[k]
        if column[node] > 0:
            inherited[node] = column[node]
        elif tree.left[node] != LEAF:
            inherited[node] = max(inherited[tree.left[node]], inherited[tree.right[node]])
    for k in range(count):  # parents before children
        node = order[k]
        if tree.left[node] != LEAF and tree.time[node] < lifetime:
            column[node] = 0
            continue
        parent = tree.parent[node]
        if parent >= 0 and column[parent] > 0:
            column[node] = column[parent]
        else:
            c = inherited[node]
            if c == 0:
                n_columns += 1
                c = n_columns
            column[node] = c
    return n_columns


@kernel
def kept_nodes(parent, old_to_new, n_nodes, out):
    """``out[node]``: the node of a pruned partition (``pruned_ids``'s ``old_to_new``)
    that holds ``node``'s block: its own copy or that of its nearest kept ancestor
    (a leaf of the copy)."""
    for node in range(n_nodes):
        v = node
        while old_to_new[v] < 0:
            v = parent[v]
        out[node] = old_to_new[v]


def cut_times(trees, sort=True):
    """Split times of every internal node of the trees, sorted (or not)."""
    times = [t.arrays.time[: t.n_nodes][t.arrays.left[: t.n_nodes] != LEAF] for t in trees]
    times = np.concatenate(times) if times else np.zeros(0)
    return np.sort(times) if sort else times


def capped_lifetime(trees, lifetime, max_cells):
    """The largest lifetime up to ``lifetime`` at which the partitions have at most
    ``max_cells`` cells in all (at least one per tree): the time of the first cut
    that would exceed it."""
    times = cut_times(trees, sort=False)
    times = times[times < lifetime]
    keep = max(max_cells - len(trees), 0)
    if keep >= times.shape[0]:
        return float(lifetime)
    return float(np.partition(times, keep)[keep])  # the cut of rank keep, unsorted


# --------------------------------------------------------------------- Python side
def new_partition(n_features, rng_state, stats=("column",)):
    """An empty tree with integer per-node statistics ``stats`` (by default the
    ``column`` of each leaf) and no point lists."""
    return TreeState(n_features, rng_state,
                     {name: np.zeros(16, dtype=np.int64) for name in stats},
                     keep_samples=False)


def sample_partition(tree, X, lifetime):
    """Sample ``tree`` (empty) in batch on the rows of ``X`` with ``lifetime``."""
    n = X.shape[0]
    arrays = tree.arrays
    start_root(arrays)
    indices = np.arange(n, dtype=np.int64)
    keys = np.zeros(n, dtype=np.int64)
    stack = np.empty((n + 1, 3), dtype=np.int64)
    stack[0] = (0, 0, n)
    size = [1]

    def run_sampler(tree):
        size[0] = sample_blocks(tree.arrays, X, keys, _NO_SAMPLES, indices, stack, size[0],
                                lifetime, False, False, 2, tree.rng_state)
        return size[0]

    # A partition of finite lifetime starts small, as it may stop growing with the
    # points; when it does not, doubling halves the copies of its way up to them
    # (``fit`` trims the spare room).
    sample_with_growth(tree, run_sampler, batch_nodes(n, grows_with_points=False), factor=2)


def extend_partition_rows(tree, X, lifetime, position=0, leaves=None):
    """Extend ``tree`` with the rows of ``X`` in order; return the leaf of each row.

    ``position``: the first row to learn (the leaves of earlier rows are then in
    ``leaves``, which receives the others).
    """
    if leaves is None:
        leaves = np.empty(X.shape[0], dtype=np.int64)

    def run_kernel(tree, position):
        return extend_partition(tree.arrays, X, position, lifetime, tree.rng_state, leaves)

    learn_rows(tree, run_kernel, position, X.shape[0])
    return leaves


def leaves_of(tree, X):
    """Leaf node id of every row (by thresholds, so any row falls in one leaf)."""
    out = np.empty(X.shape[0], dtype=np.int64)
    apply_tree(tree.arrays, X, out)
    return out


def assign_columns(trees, n_columns):
    """Give a column to every leaf that has none yet, tree by tree, in node order.

    Returns the new number of columns; existing columns never change.
    """
    for tree in trees:
        n = tree.n_nodes
        column = tree.node_stats["column"]
        is_new = (tree.arrays.left[:n] == LEAF) & (column[:n] == 0)
        new = np.flatnonzero(is_new)
        column[new] = n_columns + 1 + np.arange(new.shape[0])
        n_columns += new.shape[0]
    return n_columns


def feature_matrix(trees, X, n_columns, n_jobs=None):
    """The sparse feature map: one ``1/sqrt(M)`` per tree and row, CSR."""
    n_trees = len(trees)
    n = X.shape[0]

    def columns(tree):
        return tree.node_stats["column"][leaves_of(tree, X)] - 1

    cols = np.empty((n, n_trees), dtype=np.int64)
    for t, c in enumerate(map_trees(columns, trees, n_jobs)):
        cols[:, t] = c
    cols.sort(axis=1)
    return csr_rows(cols, n_columns)


def csr_rows(cols, n_columns):
    """The feature map as CSR from the sorted columns of each row, (n_rows, n_trees)."""
    import scipy.sparse as sp

    n, n_trees = cols.shape
    nnz = n * n_trees
    # scipy stores 32-bit indices whenever they fit; giving it those spares it the
    # check and the conversion (the matrix is the same)
    index = np.int32 if max(nnz, n, n_columns) < np.iinfo(np.int32).max else np.int64
    data = np.full(nnz, 1.0 / np.sqrt(n_trees))
    indptr = np.arange(0, nnz + 1, n_trees, dtype=index)
    out = sp.csr_matrix((data, cols.ravel().astype(index, copy=False), indptr),
                        shape=(n, n_columns))
    out.has_sorted_indices = True
    return out


def pruned_copy(tree, lifetime):
    """A new tree state: the partition of ``tree`` at ``lifetime``, with the same
    per-node statistics, all reset to zero.

    The copy goes on with the tree's random stream. Returns ``(state, old_to_new)``.
    """
    from ..engine.tree import empty_tree

    n = tree.n_nodes
    out = new_partition(tree.arrays.lower.shape[1], tree.rng_state, tuple(tree.node_stats))
    out.arrays = empty_tree(tree.arrays.lower.shape[1], max(n, 2))
    for name in tree.node_stats:
        out.node_stats[name] = np.zeros(max(n, 2), dtype=np.int64)
    old_to_new = np.empty(max(n, 1), dtype=np.int64)
    count = pruned_ids(tree.arrays, float(lifetime), old_to_new, True)
    write_pruned(tree.arrays, float(lifetime), old_to_new, count, out.arrays)
    out.trim()
    return out, old_to_new[:n]


def prune_in_place(tree, lifetime, carry=()):
    """Cut ``tree`` back to the partition at ``lifetime`` in its own arrays (the
    online models' cut back: no new tree, and no growth after it).

    The same partition as :func:`pruned_copy`'s, its nodes numbered in their former
    order instead of depth-first. The per-node statistics named in ``carry`` move
    with their nodes, the others are reset to zero. Returns ``(old_to_new,
    holder)`` for the former nodes: the new id of each (``-1`` if dropped) and the
    node that now holds its block (``kept_nodes``).
    """
    n = tree.n_nodes
    old_to_new = np.empty(max(n, 1), dtype=np.int64)[:n]
    holder = np.empty(n, dtype=np.int64)
    count = pruned_ids(tree.arrays, float(lifetime), old_to_new, False)
    kept_nodes(tree.arrays.parent, old_to_new, n, holder)
    kept = np.flatnonzero(old_to_new >= 0)
    for name, stat in tree.node_stats.items():
        if name in carry:
            stat[:count] = stat[kept]
            stat[count:n] = 0
        else:
            stat[:n] = 0
    write_pruned(tree.arrays, float(lifetime), old_to_new, count, tree.arrays)
    return old_to_new, holder


# ------------------------------------------------------------------ fast path
class FastPartitionsMixin:
    """The per-call fast path's pieces shared by the kernel estimators (see
    ``utils.fast_path`` and ``_forest_kernels``): work arrays, the trees a compiled
    call leaves to Python, and the rows' feature columns for prediction."""

    _fast_stats = ("column",)  # per-node array of the fast path's tree table

    def _fast_learn_work(self, n_features):
        """Work arrays of ``_forest_kernels.extend_partitions`` and what follows it:
        ``(excess, path, no_samples, leaves, n_before, stops, columns)``."""
        work = self._fast_scratch.work.get("learn")
        n_trees = len(self.trees_)
        if work is None or work[0].shape[0] != n_features or work[4].shape[0] != n_trees:
            capacity = 2 * max(t.capacity for t in self.trees_)
            work = self._fast_scratch.work["learn"] = (
                np.empty(n_features), np.empty(capacity, dtype=np.int64), _NO_SAMPLES,
                np.empty((n_trees, FAST_MAX_ROWS), dtype=np.int64),
                np.empty(n_trees, dtype=np.int64), np.empty(n_trees, dtype=np.int64),
                np.empty((FAST_MAX_ROWS, n_trees), dtype=np.int64))
        return work

    def _fast_finish_trees(self, X, work, lifetime):
        """Extend the trees that a compiled call left (``stops[t]`` below the number
        of rows) as the full path does; return the rows' leaves in every tree,
        (n_trees, n_rows)."""
        n = X.shape[0]
        leaves, stops = work[3], work[5]
        for t, tree in enumerate(self.trees_):
            if stops[t] < n:
                extend_partition_rows(tree, X, lifetime, int(stops[t]), leaves[t, :n])
        if work[1].shape[0] < max(t.capacity for t in self.trees_):
            del self._fast_scratch.work["learn"]  # outgrown: the next call makes larger
        return leaves[:, :n]

    @fast_call
    def _fast_leaf_columns(self, X):
        """Sorted feature columns of the rows (a new array, (n_rows, n_trees)), or
        None for the full path (no table, or ``X`` not finite)."""
        from ._forest_kernels import leaf_columns

        table = self._fast_table()
        if table is None:
            return None
        out = np.empty((X.shape[0], len(self.trees_)), dtype=np.int64)
        return out if leaf_columns(table.addresses, table.sizes, X, out) else None
