"""Storage of a Mondrian tree: growable struct-of-arrays.

A tree is a :class:`TreeArrays` named tuple of parallel arrays indexed by node id
(node 0 is the first root; the root can change when a split is inserted above it,
so it is kept in ``meta[META_ROOT]``). Children are ``-1`` at a leaf. Boxes are the
bounding boxes of the training points that reached each node (the Mondrian process
restricted to the data). Capacity grows in Python, between calls to the compiled
kernels, as :mod:`.storage` decides; kernels never allocate node storage.

Models keep their own per-node arrays (class counts, moments, aggregation weights)
beside the tree in a :class:`TreeState`, which grows them together.
"""

import itertools
import math
import weakref
from typing import NamedTuple

import numpy as np

from . import reserved
from ._jit import borrowed, kernel
from .layout import depth_first_order, renumbered_ids
from .reserved import RESERVE_FACTOR, NodeReservation
from .storage import GROWTH_FACTOR, START_CAPACITY, grown_capacity

UNBOUNDED = 1 << 62
"""No limit: the value of ``max_depth`` and ``max_nodes`` when they are ``None`` (an
int64 that no depth or node count reaches, and that compiled code takes as a
constant)."""

LEAF = -1
"""Child id of a leaf."""

MIXED = -1
"""``label`` of a node whose points carry more than one label key."""

ID_DTYPE = np.int32
"""Type of the node ids (``parent``, ``left``, ``right``), sample ids (the leaves'
list heads ``leaf_head`` and the trees' links ``TreeState.sample_next``) and
features stored per node: 2**31 of each is more than memory holds (sample ids:
:data:`MAX_SAMPLES`). Label keys stay int64 (a regressor's keys are 64-bit codes of
targets), and so do point counts (a stream under a node budget counts without end)."""

MAX_SAMPLES = int(np.iinfo(ID_DTYPE).max)
"""Most points a :class:`SampleStore` holds: the largest sample id (``leaf_head``,
``TreeState.sample_next``) plus one: 16 GiB of stored values per feature."""

BOX_DTYPE = np.float32
"""Type of the stored boxes (rounded outward, see ``engine.boxes``)."""

META_N_NODES = 0
META_ROOT = 1
META_MAX_LEAF_POINTS = 2
META_N_BOXES = 3
META_SIZE = 4

POINT_BOX = -1
"""``box_row`` of a leaf whose points are all one point (in a tree that keeps its
points): its box is that point's, rounded outward, read from the sample store
(``points[leaf_head[node]]``) instead of a row of the box arrays."""


class TreeArrays(NamedTuple):
    """Parallel node arrays of one Mondrian tree (see module docstring).

    Attributes
    ----------
    parent, left, right : int32 arrays (:data:`ID_DTYPE`)
        Tree structure; ``-1`` for no parent / no child.
    feature : int32 array
        Split dimension of internal nodes.
    threshold : float64 array
        Split location: points with ``x[feature] <= threshold`` go left.
    time : float64 array
        Split time ``tau`` of internal nodes; at a leaf, the lifetime (``inf`` by
        default), i.e. the block was not cut before the end of the process.
    lower, upper : float32 arrays of shape (capacity, n_features)
        Boxes, by box row (``box_row``): the bounding box of the training points of
        a node, rounded outward to float32 (see ``engine.boxes``). Rows are handed
        out in order (``meta[META_N_BOXES]`` so far); the rows past them are never
        written.
    n_points : int64 array
        Number of training points that reached the node (unweighted).
    label : int64 array
        Common label key of the node's points, or ``MIXED``.
    paused : bool array
        Paused leaves (MF paper, section 5) are not cut until a point arrives that
        makes them splittable again; they are then re-sampled from their points.
    leaf_head : int32 array
        First sample id of a leaf's linked list of points (``-1`` when empty); the
        list continues in the tree's ``sample_next`` array.
    meta : int64 array of shape (META_SIZE,)
        ``[n_nodes, root, largest number of points in a paused leaf, box rows
        handed out]``.
    box_row : int32 array
        The row of each node's box in ``lower`` and ``upper``, or
        :data:`POINT_BOX` for a leaf whose box is its one point's (trees that keep
        their points: a third of the nodes of a Mondrian forest are such leaves, and
        their boxes would be most of its memory after the points themselves). A
        node takes at most one row in its life, so rows never outnumber nodes. In a
        tree that keeps no points (AMF, the kernel's partitions) a node's row is its
        id (``engine.boxes``).
    """

    parent: np.ndarray
    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    time: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    n_points: np.ndarray
    label: np.ndarray
    paused: np.ndarray
    leaf_head: np.ndarray
    meta: np.ndarray
    box_row: np.ndarray = None  # None only in trees pickled before it (TreeState)


def empty_tree(n_features, capacity=16):
    """A tree with no node and room for ``capacity`` nodes."""
    capacity = max(int(capacity), 2)
    return TreeArrays(
        parent=np.full(capacity, -1, dtype=ID_DTYPE),
        left=np.full(capacity, LEAF, dtype=ID_DTYPE),
        right=np.full(capacity, LEAF, dtype=ID_DTYPE),
        feature=np.full(capacity, -1, dtype=ID_DTYPE),
        threshold=np.zeros(capacity, dtype=np.float64),
        time=np.zeros(capacity, dtype=np.float64),
        lower=np.zeros((capacity, n_features), dtype=BOX_DTYPE),
        upper=np.zeros((capacity, n_features), dtype=BOX_DTYPE),
        n_points=np.zeros(capacity, dtype=np.int64),
        label=np.full(capacity, MIXED, dtype=np.int64),
        paused=np.zeros(capacity, dtype=np.bool_),
        leaf_head=np.full(capacity, -1, dtype=ID_DTYPE),
        meta=np.zeros(META_SIZE, dtype=np.int64),
        box_row=np.full(capacity, POINT_BOX, dtype=ID_DTYPE),
    )


@kernel
def borrowed_tree(tree):
    """The tree's arrays as borrowed views (see ``engine._jit.borrowed``)."""
    return TreeArrays(
        parent=borrowed(tree.parent), left=borrowed(tree.left),
        right=borrowed(tree.right), feature=borrowed(tree.feature),
        threshold=borrowed(tree.threshold), time=borrowed(tree.time),
        lower=borrowed(tree.lower), upper=borrowed(tree.upper),
        n_points=borrowed(tree.n_points), label=borrowed(tree.label),
        paused=borrowed(tree.paused), leaf_head=borrowed(tree.leaf_head),
        meta=borrowed(tree.meta), box_row=borrowed(tree.box_row),
    )


_LINKS = ("parent", "left", "right")
_ID_FIELDS = _LINKS + ("feature", "leaf_head")
NODE_FIELDS = tuple(f for f in TreeArrays._fields if f != "meta")
"""The fields of :class:`TreeArrays` with a row per node (or per box row)."""
BOX_FIELDS = ("lower", "upper")
"""The fields indexed by box row (``box_row``), not by node."""


def _resize_rows(array, capacity, fill, order=None):
    """A copy with ``capacity`` rows (``fill`` past the old ones); with ``order``,
    row ``i`` of the copy is row ``order[i]`` of ``array``.

    NumPy, not compiled code: a tree grows a few times per thousand rows (see
    :mod:`.storage`), so the copy's speed hardly counts, while compiling it added to
    a new user's first call (``benchmarks/bench_cold_start.py``).
    """
    out = _new_rows(array, capacity)
    n = _copy_rows(array, out, order, min(capacity, array.shape[0]))
    if fill != 0:
        out[n:] = fill
    return out


def _new_rows(array, capacity, zero=True):
    """Zeros shaped like ``array`` with ``capacity`` rows. Zeros, not ``np.full``:
    a large zeroed allocation gets its memory pages from the system only when they
    are first written, so the spare rows of a grown tree take no memory. Without
    ``zero``, rows for node fields that are written before they are read
    (``reserved.uninitialized_rows``)."""
    shape = (capacity,) + array.shape[1:]
    if zero:
        return np.zeros(shape, dtype=array.dtype)
    return reserved.uninitialized_rows(shape, array.dtype)


def _copy_rows(array, out, order, n, new_id=None):
    """Copy the first ``n`` rows of ``array`` into ``out`` (with ``order``, row ``i``
    of ``out`` is row ``order[i]``, for the ``len(order)`` rows of ``order``); with
    ``new_id``, the values are node ids, mapped through it (``-1`` stays). Returns
    the number of rows written; the rows past them are not touched."""
    if order is None:
        out[:n] = array[:n]
    else:
        n = order.shape[0]
        np.take(array, order, axis=0, out=out[:n], mode="clip")  # ids are valid
    if new_id is not None:
        head = out[:n]
        linked = head >= 0
        head[linked] = new_id[head[linked]]
    return n


def resize_fields(fields, capacity, order=None, zero=False):
    """Give the node arrays in the dict ``fields`` (``TreeArrays._asdict()``)
    ``capacity`` rows, in place; ``order`` as in :func:`resize_tree`.

    Spare rows are zeroed only with ``zero``: the kernel that takes a node sets
    every field of it (``reserved.uninitialized_rows``). One array is replaced at a
    time, so that a caller who holds no other reference to the old arrays needs room
    for one array more, not for a second tree.
    """
    meta = fields["meta"].copy()
    n_nodes = int(meta[META_N_NODES])
    n_boxes = int(meta[META_N_BOXES])
    new_id = box_order = new_rows = None
    if order is not None:
        new_id = renumbered_ids(order, max(n_nodes, 1))
        meta[META_ROOT] = new_id[meta[META_ROOT]]
        box_order, new_rows = _box_order(fields["box_row"], order)
    for name in NODE_FIELDS:
        out = _new_rows(fields[name], capacity, zero)
        if name in BOX_FIELDS:
            _copy_rows(fields[name], out, box_order, n_boxes)
        elif name == "box_row" and order is not None:
            out[: new_rows.shape[0]] = new_rows
        else:
            _copy_rows(fields[name], out, order, n_nodes, new_id if name in _LINKS else None)
        fields[name] = out
    fields["meta"] = meta
    return fields


def _box_order(box_row, order):
    """For nodes renumbered by ``order``: the old box rows in the new order of their
    nodes (boxes follow their nodes, for the locality of depth-first paths), and
    the nodes' new rows."""
    rows = box_row[order]
    has = rows >= 0
    new_rows = np.full(order.shape[0], POINT_BOX, dtype=ID_DTYPE)
    new_rows[has] = np.arange(int(np.count_nonzero(has)), dtype=ID_DTYPE)
    return rows[has].astype(np.int64), new_rows


def resize_tree(tree, capacity, order=None):
    """A copy of ``tree`` with room for ``capacity`` nodes (at least ``n_nodes``).

    With ``order`` (from :func:`~.layout.depth_first_order`), node ``order[i]``
    becomes node ``i`` and the links between nodes follow. Spare rows are zero (the
    copy is kept or pickled).
    """
    n_nodes = int(tree.meta[META_N_NODES])
    capacity = max(int(capacity), n_nodes, 2)
    return TreeArrays(**resize_fields(tree._asdict(), capacity, order, zero=True))


TRIM_SLACK = 0.125
"""Spare room, as a share of a tree's nodes, that ``TreeState.trim`` leaves in place.

A tree sampled in batch reserves a node per point and a little more
(``engine.storage.batch_nodes``) and ends with 0.7-1.4 nodes per point: copying it
whole to give back the last few per cent cost more than the room is worth (node-array
resize and trim: 5-13% of a Mondrian forest's profiled ``fit`` in
``benchmarks/bench_mf_speed.py`` with this slack, 14-34% when that benchmark last ran
without it). Rows never used are zeros, which take memory only once written. Pickles
save no spare room at all."""

_RESERVATIONS = weakref.WeakKeyDictionary()
"""The :class:`~.reserved.NodeReservation` of each :class:`TreeState` whose node
arrays grow in reserved memory: where the memory came from is not part of the
tree's state (not pickled, not copied)."""

_STAMPS = itertools.count(1)
"""Source of ``TreeState.stamp`` values (see there)."""

LAST_STAMP = [0]
"""The latest stamp given to a tree (or to a sample store's points): unchanged means
no tree changed its arrays."""


def new_stamp():
    """A new stamp, recorded as the latest (:data:`LAST_STAMP`)."""
    stamp = next(_STAMPS)
    LAST_STAMP[0] = stamp
    return stamp


class NodeStats(dict):
    """The per-node model arrays of a :class:`TreeState`, by name.

    A plain dict, except that replacing an array gives its tree a new ``stamp``.
    """

    def __init__(self, owner, arrays=()):
        super().__init__(arrays)
        self._owner = owner

    def __setitem__(self, name, array):
        super().__setitem__(name, array)
        self._owner._new_stamp()

    def __reduce__(self):  # pickled (and deep-copied) as a plain dict
        return dict, (dict(self),)


class TreeState:
    """One tree with everything that learning needs beside the node arrays.

    Parameters
    ----------
    n_features : int
    rng_state : ndarray of shape (4,), uint64
        The tree's own random stream.
    node_stats : dict of str to ndarray
        Model arrays with one row per node (e.g. class counts); they are grown and
        trimmed with the tree.
    keep_samples : bool
        Whether leaves keep the ids of their points (needed to re-sample paused
        leaves). The ids point into the forest's shared :class:`SampleStore`.
    count_multiplicity : bool
        Whether the tree counts each point a number of times of its own (online
        bagging, boosting), kept in ``sample_mult`` (empty otherwise: once each).

    Attributes
    ----------
    stamp : int
        Changes whenever an array of the tree is replaced (growth, renumbering, new
        features or classes, loading); never the same for two trees of a process.
        Tables of array addresses (``engine.tree_table``) are rebuilt from it.
    """

    def __init__(self, n_features, rng_state, node_stats=None, keep_samples=True,
                 capacity=START_CAPACITY, count_multiplicity=False):
        self.arrays = empty_tree(n_features, capacity)
        self.rng_state = np.asarray(rng_state, dtype=np.uint64).copy()
        self.node_stats = NodeStats(self)
        for name, array in (node_stats or {}).items():
            self.node_stats[name] = _resize_rows(array, self.capacity, 0)
        self.sample_next = np.full(16 if keep_samples else 0, -1, dtype=ID_DTYPE)
        self.keep_samples = keep_samples
        self.sample_mult = np.zeros(16 if count_multiplicity else 0)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name != "stamp":
            self._new_stamp()

    def _new_stamp(self):
        object.__setattr__(self, "stamp", new_stamp())

    @property
    def capacity(self):
        return self.arrays.parent.shape[0]

    @property
    def n_nodes(self):
        return int(self.arrays.meta[META_N_NODES])

    @property
    def n_boxes(self):
        """Box rows in use (``TreeArrays.box_row``)."""
        return int(self.arrays.meta[META_N_BOXES])

    @property
    def row_nbytes(self):
        """Bytes of one node in the node arrays and the model's per-node arrays."""
        arrays = [getattr(self.arrays, f) for f in NODE_FIELDS] + list(self.node_stats.values())
        return sum(a.itemsize * math.prod(a.shape[1:]) for a in arrays)

    def reserve(self, needed, limit=None, renumber=False, factor=GROWTH_FACTOR,
                exact=False):
        """Make room for ``needed`` nodes, never past ``limit``.

        A growth step multiplies the capacity by ``factor`` at least (see
        :mod:`.storage`, which decides how much to reserve); with ``exact``, it makes
        room for ``needed`` nodes and no more (a caller that knows what it needs,
        ``storage.BatchSizes``). With ``renumber``, the copy also puts the nodes in
        depth-first order (see :mod:`.layout`): only for callers that hold no node
        ids across the call.
        """
        if limit is not None:
            needed = min(needed, int(limit))
        if needed <= self.capacity:
            return
        capacity = (needed if exact else
                    grown_capacity(self.capacity, needed, limit, factor, self.row_nbytes))
        order = self._depth_first_order() if renumber else None
        if order is not None:
            # A renumbering growth writes every node anew anyway: into new arrays, one
            # at a time (in its reservation it would gather each array into a copy,
            # then copy that back: AMF took 72.3 s against 68.5 s on the stream of
            # benchmarks/bench_stream_memory.py).
            self._copy_nodes(capacity, order)
            return
        rows = RESERVE_FACTOR * capacity
        self._grow_nodes(capacity, rows if limit is None else min(rows, int(limit)))

    def renumber(self):
        """Put the nodes in depth-first order (see :mod:`.layout`), keeping the
        capacity: only for callers that hold no node ids across the call."""
        order = self._depth_first_order()
        if order is not None:
            self._copy_nodes(self.capacity, order)

    def _copy_nodes(self, capacity, order):
        """New node arrays of ``capacity`` rows, renumbered by ``order`` (or None):
        ``trim``, and renumbering."""
        _RESERVATIONS.pop(self, None)
        fields = self.arrays._asdict()
        self.arrays = None  # so that each old array is freed once it is copied
        self.arrays = TreeArrays(**resize_fields(fields, capacity, order))
        for name, array in self.node_stats.items():
            self.node_stats[name] = _resize_rows(array, capacity, 0, order)

    def _grow_nodes(self, capacity, reserve_rows):
        """Give every node array ``capacity`` rows in memory reserved for
        ``reserve_rows`` rows (:mod:`.reserved`): arrays that sit in their reservation
        with room grow in it, without a copy; else they all move into a new one (or,
        small or where there is none, into new zeros)."""
        n = self.n_nodes
        fields = self.arrays._asdict()
        meta = fields.pop("meta")
        arrays = list(fields.values()) + list(self.node_stats.values())
        reservation = _RESERVATIONS.get(self)
        out = None if reservation is None else reservation.grown(arrays, capacity)
        in_place = out is not None
        if not in_place:
            reservation, out = NodeReservation.zeros(
                [(a.shape[1:], a.dtype) for a in arrays], capacity, reserve_rows,
                dirty=len(fields))  # the node fields; the model's arrays stay zero
            if reservation is None:
                _RESERVATIONS.pop(self, None)
            else:
                _RESERVATIONS[self] = reservation
        # Each old array is freed once copied (a caller holding no other reference
        # to them needs room for one array more, not for a second tree).
        self.arrays = None
        names = list(fields)
        n_boxes = int(meta[META_N_BOXES])
        for k, name in enumerate(names + list(self.node_stats)):
            if k < len(names):
                fields[name] = out[k]
                rows = n_boxes if name in BOX_FIELDS else n
            else:
                self.node_stats[name] = out[k]
                rows = min(capacity, len(arrays[k]))
            if not in_place:
                _copy_rows(arrays[k], out[k], None, rows)
            arrays[k] = None
        self.arrays = TreeArrays(**fields, meta=meta)

    def _depth_first_order(self):
        """The nodes in depth-first order, or None when that would change nothing
        (or, for a tree whose nodes do not all hang from the root, lose nodes)."""
        n = self.n_nodes
        if n < 3:
            return None
        order = depth_first_order(self.arrays.left, self.arrays.right,
                                  self.arrays.meta[META_ROOT], n)
        if order.shape[0] != n or np.array_equal(order, np.arange(n)):
            return None
        return order

    def own_arrays(self):
        """Make every array of the tree writable and C-contiguous, copying those that
        are not (a tree loaded from read-only memory maps learns in its own copy)."""
        arrays = list(self.arrays) + list(self.node_stats.values())
        arrays += [self.rng_state, self.sample_next, self.sample_mult]
        if all(a.flags.writeable and a.flags.c_contiguous for a in arrays):
            return
        self.arrays = TreeArrays(*(np.array(a, order="C") for a in self.arrays))
        for name, array in list(self.node_stats.items()):
            self.node_stats[name] = np.array(array, order="C")
        self.rng_state = np.array(self.rng_state, order="C")
        self.sample_next = np.array(self.sample_next, order="C")
        self.sample_mult = np.array(self.sample_mult, order="C")

    def ensure_sample_capacity(self, n_samples):
        """Grow the sample linked list (``ID_DTYPE``, as the leaves' list heads) so that
        sample ids below ``n_samples`` fit."""
        if self.sample_mult.shape[0] and n_samples > self.sample_mult.shape[0]:
            capacity = max(int(n_samples), 2 * self.sample_mult.shape[0])
            self.sample_mult = _resize_rows(self.sample_mult, capacity, 0.0)
        if not self.keep_samples or n_samples <= self.sample_next.shape[0]:
            return
        capacity = max(int(n_samples), 2 * self.sample_next.shape[0])
        self.sample_next = _resize_rows(self.sample_next, capacity, -1)

    def add_features(self, values):
        """Append features: every node's box gets ``[v, v]`` in each new feature.

        This is the tree of the same points had they all carried value ``v`` (how a
        feature first seen late enters a model, as in river's AMF).
        """
        values = np.asarray(values, dtype=np.float64)
        shape = (self.capacity, values.shape[0])
        self.arrays = self.arrays._replace(
            lower=np.hstack([self.arrays.lower, np.broadcast_to(rounded_down(values), shape)]),
            upper=np.hstack([self.arrays.upper, np.broadcast_to(rounded_up(values), shape)]))

    def trim(self, renumber=False):
        """Release unused capacity (called at the end of ``fit``) when it is more than
        :data:`TRIM_SLACK` of the nodes; ``renumber`` as in :meth:`reserve`."""
        n = max(self.n_nodes, 2)
        order = self._depth_first_order() if renumber else None
        if self.capacity > n + int(n * TRIM_SLACK) or order is not None:
            self._copy_nodes(n, order)

    def __getstate__(self):
        # Spare capacity is not saved: a loaded tree grows again when it learns.
        state = self.__dict__.copy()
        n = max(self.n_nodes, 2)
        if self.capacity > n:
            state["arrays"] = resize_tree(self.arrays, n)
            state["node_stats"] = {k: v[:n].copy() for k, v in self.node_stats.items()}
        state["node_stats"] = dict(state["node_stats"])
        state.pop("stamp", None)
        return state

    def __setstate__(self, state):
        state = dict(state)
        node_stats = state.pop("node_stats", {})
        arrays = state.get("arrays")
        if arrays is not None and arrays.box_row is None:  # saved before box rows
            meta = np.zeros(META_SIZE, dtype=np.int64)
            meta[: arrays.meta.shape[0]] = arrays.meta
            meta[META_N_BOXES] = meta[META_N_NODES]  # every node its own row
            arrays = state["arrays"] = arrays._replace(
                meta=meta, box_row=np.arange(arrays.parent.shape[0], dtype=ID_DTYPE))
        if arrays is not None and arrays.lower.dtype != BOX_DTYPE:  # saved before format 6
            state["arrays"] = arrays._replace(
                lower=rounded_down(arrays.lower), upper=rounded_up(arrays.upper),
                **{f: getattr(arrays, f).astype(ID_DTYPE) for f in _ID_FIELDS})
        links = state.get("sample_next")
        if links is not None and links.dtype != ID_DTYPE:  # saved with int64 links
            state["sample_next"] = links.astype(ID_DTYPE)
        self.__dict__.update(state)
        object.__setattr__(self, "node_stats", NodeStats(self, node_stats))
        self._new_stamp()

    def node_arrays_in_use(self):
        """``(arrays, bytes)``: the tree's node arrays (its fields and the model's
        per-node statistics) and the bytes of their rows in use, the rows past them
        being room that the tree grows into, not written until then."""
        n = self.n_nodes
        arrays = list(self.arrays) + list(self.node_stats.values())
        used = sum(a.nbytes for a in used_rows(self.arrays).values())
        return arrays, used + sum(a[:n].nbytes for a in self.node_stats.values())

    @property
    def nbytes(self):
        """Bytes held by this tree (nodes, model statistics, sample links)."""
        total = sum(a.nbytes for a in self.arrays) + self.sample_next.nbytes
        total += self.sample_mult.nbytes
        return total + sum(a.nbytes for a in self.node_stats.values())


def rounded_down(values):
    """``values`` rounded down to :data:`BOX_DTYPE` (a new array)."""
    values = np.asarray(values, dtype=np.float64)
    out = values.astype(BOX_DTYPE)
    above = out > values
    out[above] = np.nextafter(out[above], BOX_DTYPE(-np.inf))
    return out


def rounded_up(values):
    """``values`` rounded up to :data:`BOX_DTYPE` (a new array)."""
    values = np.asarray(values, dtype=np.float64)
    out = values.astype(BOX_DTYPE)
    below = out < values
    out[below] = np.nextafter(out[below], BOX_DTYPE(np.inf))
    return out


def used_rows(arrays):
    """The fields of a tree's ``arrays`` cut to the rows in use, by name (views): the
    nodes' rows, the box rows handed out for the boxes (:data:`BOX_FIELDS`), ``meta``
    whole. The rows past them hold nothing (they may never have been written)."""
    n, b = int(arrays.meta[META_N_NODES]), int(arrays.meta[META_N_BOXES])
    return {f: a if f == "meta" else a[:b] if f in BOX_FIELDS else a[:n]
            for f, a in arrays._asdict().items()}


def node_boxes(arrays, points, n=None):
    """The boxes of the first ``n`` nodes (all by default) of a tree's ``arrays``, by
    node: new arrays ``(lower, upper)`` of shape ``(n, n_features)``, with the boxes
    of the leaves of one point taken from their points (``points``, the sample
    store's ``X``; see :data:`POINT_BOX`)."""
    n = int(arrays.meta[META_N_NODES]) if n is None else int(n)
    rows = arrays.box_row[:n]
    own = rows >= 0
    lower = np.empty((n, arrays.lower.shape[1]), dtype=BOX_DTYPE)
    upper = np.empty_like(lower)
    lower[own] = arrays.lower[rows[own]]
    upper[own] = arrays.upper[rows[own]]
    if not own.all():
        at = points[arrays.leaf_head[:n][~own]]
        lower[~own] = rounded_down(at)
        upper[~own] = rounded_up(at)
    return lower, upper


def own_point_boxes(arrays, points):
    """Give every leaf of one point of a tree (``arrays``) a box row holding its box,
    before the tree stops keeping its points (``points``: the sample store's ``X``).
    Returns how many took a row."""
    n = int(arrays.meta[META_N_NODES])
    leaves = np.flatnonzero(arrays.box_row[:n] < 0)
    if leaves.shape[0]:
        first = int(arrays.meta[META_N_BOXES])
        rows = np.arange(first, first + leaves.shape[0])
        at = points[arrays.leaf_head[leaves]]
        arrays.lower[rows] = rounded_down(at)
        arrays.upper[rows] = rounded_up(at)
        arrays.box_row[leaves] = rows
        arrays.meta[META_N_BOXES] = first + leaves.shape[0]
    return leaves.shape[0]


class _StampedArray:
    """An array attribute of :class:`SampleStore` whose replacement gives a new stamp.

    A compiled call prepared with the store's arrays (``utils.fast_path``), which
    leaves of one point also read their boxes from (``engine.boxes``), is then made
    again: every array of the store is replaced through this.
    """

    def __init__(self, doc):
        self.__doc__ = doc

    def __set_name__(self, owner, name):
        self.slot = "_" + name

    def __get__(self, store, owner=None):
        return self if store is None else store.__dict__[self.slot]

    def __set__(self, store, array):
        store.__dict__[self.slot] = array
        new_stamp()


class SampleStore:
    """Points seen so far, shared by all trees of a forest (never copied per tree).

    Paused leaves refer to their points by id into this store; each row also keeps
    the point's label key (for pausing pure blocks) and its additive contribution to
    the node statistics of the model (e.g. a weighted one-hot class vector).
    """

    def __init__(self, n_features, n_stats):
        self.X = np.empty((16, n_features), dtype=np.float64)
        self.keys = np.empty(16, dtype=np.int64)
        self.stats = np.zeros((16, n_stats), dtype=np.float64)
        self.n = 0

    X = _StampedArray("The stored points (rows past ``n`` are room).")
    keys = _StampedArray("The label keys of the stored points.")
    stats = _StampedArray("The stored points' additive contributions to the node statistics.")

    def __setstate__(self, state):
        for name in ("X", "keys", "stats"):  # saved before they were properties
            if name in state:
                state["_" + name] = state.pop(name)
        self.__dict__.update(state)

    def reserve(self, needed):
        """Make room for ``needed`` points (doubling the capacity at least).

        Raises
        ------
        MemoryError
            For more points than sample ids can number (:data:`MAX_SAMPLES`), before
            anything changes.
        """
        if needed > MAX_SAMPLES:
            raise MemoryError(
                f"A Mondrian forest keeps its training points, at most {MAX_SAMPLES:,}; "
                f"this one would hold {needed:,}. Set max_nodes (trees of bounded size "
                "stop keeping points once full) or learn fewer rows.")
        if needed > self.X.shape[0]:
            capacity = max(needed, 2 * self.X.shape[0])
            self.X = _resize_rows(self.X, capacity, 0.0)
            self.keys = _resize_rows(self.keys, capacity, 0)
            self.stats = _resize_rows(self.stats, capacity, 0.0)

    def append(self, X, keys, stats):
        """Add rows; return their ids as an int64 array."""
        m = X.shape[0]
        needed = self.n + m
        self.reserve(needed)
        if stats.shape[1] > self.stats.shape[1]:
            self.widen(stats.shape[1])
        ids = np.arange(self.n, needed, dtype=np.int64)
        self.X[self.n:needed] = X
        self.keys[self.n:needed] = keys
        self.stats[self.n:needed, : stats.shape[1]] = stats
        self.n = needed
        return ids

    def add_features(self, values):
        """Append feature columns holding ``values`` for every stored point."""
        values = np.asarray(values, dtype=np.float64)
        self.X = np.hstack([self.X, np.broadcast_to(values, (self.X.shape[0], values.shape[0]))])

    def widen(self, n_stats):
        """Add zero columns to the statistics (a new class appeared)."""
        if n_stats > self.stats.shape[1]:
            out = np.zeros((self.stats.shape[0], n_stats))
            out[:, : self.stats.shape[1]] = self.stats
            self.stats = out

    def clear(self):
        """Forget every point (when no tree will ever need them again)."""
        self.X = self.X[:1].copy()
        self.keys = self.keys[:1].copy()
        self.stats = self.stats[:1].copy()
        self.n = 0

    def trim(self):
        self.X = self.X[: max(self.n, 1)].copy()
        self.keys = self.keys[: max(self.n, 1)].copy()
        self.stats = self.stats[: max(self.n, 1)].copy()

    @property
    def nbytes(self):
        return self.X.nbytes + self.keys.nbytes + self.stats.nbytes
