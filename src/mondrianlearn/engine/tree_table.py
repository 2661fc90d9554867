"""A forest's trees as one table of array addresses, for one compiled call over all.

A forest keeps each tree in its own arrays (:class:`~.tree.TreeState`), and a
compiled kernel cannot take a Python list of them. Passing every tree's arrays
separately costs a Python call per tree, which dominates when a call holds one
row. A :class:`TreeTable` holds, per tree, the address of each array (the node
arrays of :class:`~.tree.TreeArrays`, the random stream, the sample links and the
model's named per-node arrays) and its number of rows; the kernels rebuild
non-owning views from them (``tree_at``, ``vector_at``, ...), which are not
reference-counted (like ``engine._jit.borrowed``).

Safety: the table keeps a reference to every array it points to, so an address
always stays valid; and it is refreshed from the trees' ``stamp`` (which changes
whenever a tree replaces an array) before each use, so it never points to arrays
the tree no longer uses. The table is scratch state of an estimator: it is never
pickled or copied (``TreeTable.__reduce__`` gives an empty table).
"""

import numpy as np

from ._jit import array_at, inline_kernel, kernel
from .tree import BOX_DTYPE, ID_DTYPE, LAST_STAMP, META_N_NODES, META_ROOT, META_SIZE, TreeArrays

N_TREE_FIELDS = len(TreeArrays._fields)
"""Columns 0 to 13: the node arrays, in the order of ``TreeArrays``."""
COLUMN_RNG = N_TREE_FIELDS
COLUMN_SAMPLE_NEXT = N_TREE_FIELDS + 1
COLUMN_SAMPLE_MULT = N_TREE_FIELDS + 2
COLUMN_STATS = N_TREE_FIELDS + 3
"""First column of the model's per-node arrays, in the order given to the table."""

NO_RANGE = np.empty((2, 0))
"""``feature_range`` for learning kernels given rows they need not check (the full
path's, or none)."""

SIZE_NODES = 0
SIZE_SAMPLE_NEXT = 1
SIZE_SAMPLE_MULT = 2


class TreeTable:
    """Addresses of the arrays of a list of trees (see the module docstring).

    Parameters
    ----------
    stats_names : sequence of str
        Names of the per-node model arrays (``TreeState.node_stats``), in the order
        of their columns from ``COLUMN_STATS`` on.
    """

    def __init__(self, stats_names):
        self.stats_names = tuple(stats_names)
        self.addresses = np.zeros((0, COLUMN_STATS + len(self.stats_names)), dtype=np.int64)
        self.sizes = np.zeros((0, 3), dtype=np.int64)
        self.widths = np.zeros(0, dtype=np.int64)
        self.largest = 0
        """The largest capacity (nodes) of the trees, for callers that size work
        arrays by it."""
        self._stamps = []
        self._widths = []
        self._keep = []
        self._last_stamp = -1
        self._trees = None

    def refresh(self, trees):
        """Bring the table up to date with ``trees``; return False when the trees
        cannot share one table (their arrays differ in width or layout).

        ``trees`` is the estimator's list of trees: a list that changes is replaced,
        never edited in place (as every estimator here does).
        """
        if LAST_STAMP[0] == self._last_stamp and trees is self._trees:
            return True  # no tree anywhere has replaced an array since the last refresh
        self._last_stamp = LAST_STAMP[0]
        self._trees = trees
        n = len(trees)
        if n != len(self._stamps):
            self.addresses = np.zeros((n, self.addresses.shape[1]), dtype=np.int64)
            self.sizes = np.zeros((n, 3), dtype=np.int64)
            self._keep = [None] * n
            self._stamps = [None] * n
            self._widths = [None] * n
        for t, tree in enumerate(trees):
            if tree.stamp != self._stamps[t]:
                if not self._fill(t, tree):
                    return self._forget()
                self._stamps[t] = tree.stamp
        if n and self._widths.count(self._widths[0]) != n:
            return self._forget()
        self.widths = np.array(self._widths[0], dtype=np.int64) if n else self.widths
        self.largest = int(self.sizes[:, SIZE_NODES].max()) if n else 0
        return True

    def _forget(self):
        self._stamps = []
        self._trees = None
        return False

    def _fill(self, t, tree):
        arrays = list(tree.arrays) + [tree.rng_state, tree.sample_next, tree.sample_mult]
        arrays += [tree.node_stats[name] for name in self.stats_names]
        for a in arrays:
            flags = a.flags
            if not (flags.c_contiguous and flags.writeable):
                return False
        # in Python: a compiled helper would be compiled once per dtype and
        # dimension (seven times on a first use), for a table filled rarely
        self.addresses[t] = [a.ctypes.data for a in arrays]
        self.sizes[t] = (tree.capacity, tree.sample_next.shape[0], tree.sample_mult.shape[0])
        self._keep[t] = arrays
        self._widths[t] = _column_widths(tree, self.stats_names)
        return True

    def __reduce__(self):
        return TreeTable, (self.stats_names,)


def one_tree_table(tree, stats_names):
    """A :class:`TreeTable` of ``tree`` alone, for an all-trees kernel run on one tree
    (the per-tree paths: one kernel serves both).

    Make one per kernel call and drop it after: trees learn and predict in threads,
    and a table keeps the arrays it points to alive, while a growing tree frees each
    old array once it is copied (``engine.tree.resize_fields``).
    """
    table = TreeTable(stats_names)
    if not table.refresh([tree]):  # models own writable arrays (utils.persistence)
        raise RuntimeError("a tree's arrays cannot be tabled (internal error)")
    return table


def _column_widths(tree, stats_names):
    """Features, then the second dimension of each per-node array (1 if none)."""
    widths = [tree.arrays.lower.shape[1]]
    for name in stats_names:
        array = tree.node_stats[name]
        widths.append(array.shape[1] if array.ndim == 2 else 1)
    return tuple(widths)


# --------------------------------------------------------------- views in kernels
@inline_kernel
def int_vector_at(addresses, t, column, n):
    return array_at(addresses[t, column], n, np.int64)


@inline_kernel
def id_vector_at(addresses, t, column, n):
    """A view of node or sample ids (:data:`~.tree.ID_DTYPE`)."""
    return array_at(addresses[t, column], n, ID_DTYPE)


@inline_kernel
def float_vector_at(addresses, t, column, n):
    return array_at(addresses[t, column], n, np.float64)


@inline_kernel
def float_matrix_at(addresses, t, column, n, m):
    return array_at(addresses[t, column], (n, m), np.float64)


@inline_kernel
def walk_at(addresses, sizes, t):
    """``(left, right, feature, threshold, root, n_nodes)`` of tree ``t``: what a walk
    down it reads, without the views of the rest of the tree (``tree_at``), for the
    kernels that only walk it."""
    n = sizes[t, SIZE_NODES]
    a = addresses[t]
    meta = array_at(a[12], META_SIZE, np.int64)
    return (array_at(a[1], n, ID_DTYPE), array_at(a[2], n, ID_DTYPE),
            array_at(a[3], n, ID_DTYPE), array_at(a[4], n, np.float64), meta[META_ROOT],
            meta[META_N_NODES])


@inline_kernel
def rng_at(addresses, t):
    return array_at(addresses[t, COLUMN_RNG], 4, np.uint64)


@kernel(inline=True)
def tree_at(addresses, sizes, t, n_features):
    """The node arrays of tree ``t`` as non-owning views."""
    n = sizes[t, SIZE_NODES]
    a = addresses[t]
    return TreeArrays(
        parent=array_at(a[0], n, ID_DTYPE),
        left=array_at(a[1], n, ID_DTYPE),
        right=array_at(a[2], n, ID_DTYPE),
        feature=array_at(a[3], n, ID_DTYPE),
        threshold=array_at(a[4], n, np.float64),
        time=array_at(a[5], n, np.float64),
        lower=array_at(a[6], (n, n_features), BOX_DTYPE),
        upper=array_at(a[7], (n, n_features), BOX_DTYPE),
        n_points=array_at(a[8], n, np.int64),
        label=array_at(a[9], n, np.int64),
        paused=array_at(a[10], n, np.bool_),
        leaf_head=array_at(a[11], n, ID_DTYPE),
        meta=array_at(a[12], META_SIZE, np.int64),
        box_row=array_at(a[13], n, ID_DTYPE),
    )


@kernel
def accept_rows(X, feature_range):
    """Whether ``X`` is finite and its range, with ``feature_range`` (rows: low,
    high), has a finite total width; if so, widen ``feature_range`` to it.

    The compiled form of the checks of ``utils.validation`` (finite values,
    ``check_extent``) for the per-call fast path: nothing is changed on refusal.
    """
    n_features = X.shape[1]
    total = 0.0
    for j in range(n_features):
        low, high = feature_range[0, j], feature_range[1, j]
        for i in range(X.shape[0]):
            v = X[i, j]
            if not np.isfinite(v):
                return False
            low = min(low, v)
            high = max(high, v)
        total += high - low
    if not np.isfinite(total):
        return False
    for j in range(n_features):
        for i in range(X.shape[0]):
            feature_range[0, j] = min(feature_range[0, j], X[i, j])
            feature_range[1, j] = max(feature_range[1, j], X[i, j])
    return True


@kernel
def finite_rows(X):
    """Whether every value of ``X`` is finite."""
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            if not np.isfinite(X[i, j]):
                return False
    return True
