"""Growth of node storage: how much room a tree reserves, and the loop that grows it.

Compiled kernels never allocate node storage: they stop when the next node might
not fit and return how far they got. Between their calls, Python grows the tree
(``TreeState.reserve``) and calls again. Every model drives its kernels with
:func:`learn_rows` (rows learned one by one) or :func:`sample_with_growth` (a
batch sampled block by block), so the policy is decided here, in one place:

- a tree grows when it might not take its next row (:func:`must_grow`), to
  :func:`nodes_to_reserve` nodes for the rows left;
- a growth step multiplies the capacity by :data:`GROWTH_FACTOR` at least, and a
  small tree's by up to :data:`SMALL_TREE_FACTOR` (:data:`MIN_GROWTH_BYTES`);
- a node budget (``max_nodes``) caps every step.

Capacity is not observable: spare room changes no computation. Only models that
renumber their nodes when they grow (``engine.layout``) see node ids change with
it, and renumbering changes no prediction.
"""

GROWTH_FACTOR = 1.5
"""Smallest ratio of the new capacity to the old one in a growth step.

Geometric growth makes the copies cost O(1) per node over a tree's life. 3/2
rather than 2 bounds the spare room of a grown tree by a third of its arrays and
the peak of a copy (old and new arrays at once) by 2.5 times the nodes rather than
3, which is what matters for forests of big trees."""

NODES_PER_ROW = 2
"""Most nodes that one row can add to a tree: a new split and the row's leaf."""

START_CAPACITY = 16
"""Capacity of a new tree, and the least that batch sampling reserves."""

FREE_NODES = 3
"""Free nodes that a kernel is guaranteed when it is called: it can take a row (a
split and a leaf, or a root) before it checks the capacity again."""

ROOM_AHEAD = 64
"""Nodes reserved past a call's own bounds, so that small trees and calls of a few
rows do not grow one node at a time."""

MIN_GROWTH_BYTES = 1 << 20
"""Room, in bytes of node arrays, that a growth step adds to a small tree.

A growth step has a fixed cost (a Python call, new arrays, the compiled kernels'
tables of array addresses brought up to date) beside the copy, which is
proportional to the tree. While a tree is small the fixed cost dominates, and a
stream learned one row at a time would pay it every few dozen rows. So a step adds
this much room, or :data:`SMALL_TREE_FACTOR` times the capacity if that is less
(so that a tree of a few rows stays small): the spare room this adds is at most
1 MiB per tree, most of it zeros that take memory only once written (see
``engine.tree``). Large trees grow by :data:`GROWTH_FACTOR`.

1 MiB rather than 256 KiB: trees of a few thousand nodes with many classes (letter:
about 400 bytes per node) grew every 650 nodes, a copy of the whole tree each time.
Measured with ``benchmarks/bench_per_row.py`` on one machine, the same day: AMF in
mini-batches of 100 on letter 30.0x-30.8x river's rate with 256 KiB, 41.7x with
1 MiB (the Mondrian forest 25.6x-28.7x, 34.8x); one row at a time 2-10% faster on
Elec2, the same within the noise on Phishing. The cost is the spare room, up to 1 MiB
per small tree instead of 256 KiB; a tree of more than 2 MiB of node arrays grows by
:data:`GROWTH_FACTOR` as before."""

SMALL_TREE_FACTOR = 8
"""Largest growth ratio of a step (a small tree's, see :data:`MIN_GROWTH_BYTES`).

Eight rather than four: a growth step of a tree of a few hundred nodes costs
100-150 µs (a Python call, new arrays and the page faults of writing them, the
tables of addresses), and a stream learned one row at a time grew each tree every
few hundred rows while it was small. On Elec2 after 300 rows, 10 trees, the next
2,000 rows one per call took 18 growth steps of the Mondrian forest's trees (2.8
ms of 21.8) with four, 10 with eight; in alternating ad-hoc runs, the Mondrian
forest learned 96,482-101,048 rows/s against 89,015-92,139, AMF 104,114-106,555
against 99,462-100,895. The spare room stays below :data:`MIN_GROWTH_BYTES` per
tree, and a pickled tree has none."""


def grown_capacity(capacity, needed, limit=None, factor=GROWTH_FACTOR, row_bytes=None):
    """The capacity of a growth step from ``capacity`` that fits ``needed`` nodes.

    Parameters
    ----------
    capacity : int
        Current capacity (smaller than ``needed``).
    needed : int
        Nodes that must fit.
    limit : int, optional
        Node budget: the result never exceeds it.
    factor : float
        Least growth ratio (:data:`GROWTH_FACTOR` unless the caller has a reason).
    row_bytes : int, optional
        Bytes of one node in all the tree's node arrays: the step then adds
        :data:`MIN_GROWTH_BYTES` of room at least, up to :data:`SMALL_TREE_FACTOR`
        times the capacity.

    Returns
    -------
    int
    """
    least = 0
    if row_bytes:
        least = capacity + min((SMALL_TREE_FACTOR - 1) * capacity,
                               MIN_GROWTH_BYTES // int(row_bytes))
    capacity = max(int(needed), int(capacity * factor), least)
    return capacity if limit is None else min(capacity, int(limit))


def must_grow(n_nodes, capacity, extra=0):
    """Whether a tree grows before a kernel is called on it.

    A tree grows when fewer than :data:`FREE_NODES` nodes (and ``extra``, what the
    kernel needs beyond one row) are free, not earlier: a tree is full, not a third
    empty, when it grows. The compiled fast paths (which leave the trees that must
    grow to Python) test the same condition, so that both paths grow, and
    renumber, a tree at the same points.

    Parameters
    ----------
    n_nodes, capacity : int
    extra : int

    Returns
    -------
    bool
    """
    return n_nodes + FREE_NODES + extra > capacity


def nodes_to_reserve(n_nodes, n_rows):
    """Nodes to have room for before learning ``n_rows`` more rows in a tree.

    A row adds at most :data:`NODES_PER_ROW` nodes. A long call reserves for its
    first rows only (half the tree plus :data:`ROOM_AHEAD`) and grows again as it
    goes: most rows add no node to a grown tree, and the geometric growth keeps the
    number of copies small. Two more nodes are always free when a kernel starts.

    Parameters
    ----------
    n_nodes : int
        Nodes of the tree now.
    n_rows : int
        Rows left to learn.

    Returns
    -------
    int
    """
    return n_nodes + 2 + min(NODES_PER_ROW * n_rows, n_nodes // 2 + ROOM_AHEAD)


def batch_nodes(n_points, grows_with_points=True):
    """Nodes to reserve before sampling a tree on ``n_points`` points at once.

    Parameters
    ----------
    n_points : int
    grows_with_points : bool
        Trees sampled to the end (pausing, infinite lifetime) have about one node
        per point (0.7-1.4 on the MF paper's datasets): ``n_points`` nodes and
        :data:`ROOM_AHEAD` more. A partition of finite lifetime (the Mondrian
        kernel's) may stop growing with the points: :data:`ROOM_AHEAD` then.

    Returns
    -------
    int
        Never more than a binary tree over the points can have (``2 * n_points``),
        nor less than :data:`START_CAPACITY`.
    """
    ahead = n_points + ROOM_AHEAD if grows_with_points else ROOM_AHEAD
    return max(START_CAPACITY, min(2 * n_points, ahead))


BATCH_MARGIN = 1.05
"""Room that a tree sampled in batch reserves past its expected number of nodes
(:class:`BatchSizes`), as a share of it."""


class BatchSizes:
    """What the trees sampled in batch so far in one ``fit`` measured: the room that the
    next tree of the fit reserves, and by how much a tree that runs out of room grows.

    Without it, every tree reserves :func:`batch_nodes` (a node per point) and grows by
    :data:`GROWTH_FACTOR` when that is short; ``fit`` then copies every tree with more
    than :data:`~.tree.TRIM_SLACK` of spare room into arrays of its size. The Mondrian
    forest's trees have 0.7-1.5 nodes per point depending on the data, and trees of one
    forest on the same points differ by a few per cent to a third: counted ad hoc on
    ``fit`` of 100 trees (MF, defaults), satimage's trees (0.69-0.77 nodes per point)
    were all copied once at the end (119 MiB), and usps's and dna's grew or were trimmed
    163 and 241 times (970 and 323 MiB copied). A tree of the fit reserves the mean
    nodes per point of the trees before it, with :data:`BATCH_MARGIN`; one that runs out
    of room grows by what its blocks still pending need at that rate
    (:meth:`still_needed`), instead of a fixed ratio: 1, 60 and 38 MiB copied (letter:
    11 MiB against 5). Capacity changes no result. Safe to share between the threads of
    a fit (an append to a list is atomic); where trees are trained in other processes
    (joblib's Dask backend), each starts from :func:`batch_nodes`.

    Only ``fit`` uses it (``utils.estimator``): it trims its trees at its end, where a
    ``partial_fit`` that samples trees keeps their room for the rows that follow.
    """

    def __init__(self):
        self._nodes_per_point = []

    def first(self, n_points):
        """Nodes to reserve before sampling a tree on ``n_points`` points."""
        seen = list(self._nodes_per_point)
        if not seen:
            return batch_nodes(n_points)
        expected = int(BATCH_MARGIN * n_points * sum(seen) / len(seen)) + ROOM_AHEAD
        return max(START_CAPACITY, min(2 * n_points, expected))

    def record(self, n_nodes, n_points):
        """Remember the size of a tree sampled on ``n_points`` points."""
        if n_points > 0:
            self._nodes_per_point.append(n_nodes / n_points)

    @property
    def measured(self):
        """Whether a tree of the fit has been measured (the first one grows by
        :data:`GROWTH_FACTOR`, as without an estimate: a guess that falls short
        copies the tree again at every step)."""
        return bool(self._nodes_per_point)

    def still_needed(self, pending_points):
        """Nodes that a tree whose blocks not sampled yet hold ``pending_points``
        points is expected to need more (once :attr:`measured`): at the mean rate of
        the trees before it, with :data:`BATCH_MARGIN`, and never more than those
        blocks can make (two nodes per point). Not at the tree's own rate so far:
        depth-first, the blocks still pending hang from nodes already made, and that
        rate over the points done overestimates the rest (by half and more)."""
        seen = list(self._nodes_per_point)
        rate = sum(seen) / len(seen)
        expected = int(BATCH_MARGIN * pending_points * rate) + ROOM_AHEAD
        return max(2, min(2 * pending_points, expected))


def resampled_nodes(n_points, row_bytes, grows_with_points=True):
    """Nodes to reserve before sampling a tree afresh on ``n_points`` points in the
    middle of online learning (a Mondrian forest re-sampled on new feature units).

    Rows are learned online right after, so the tree gets the room of a growth step
    (:func:`grown_capacity`) beyond :func:`batch_nodes`: otherwise every tree of the
    forest would fill its room within a few rows and be copied into a larger one at
    once. The spare rows are zeros, which take memory only once written.

    Parameters
    ----------
    n_points : int
    row_bytes : int
        Bytes of one node in all the tree's node arrays (``TreeState.row_nbytes``).
    grows_with_points : bool
        As in :func:`batch_nodes`.

    Returns
    -------
    int
    """
    first = batch_nodes(n_points, grows_with_points)
    return grown_capacity(first, first + 1, row_bytes=row_bytes)


GROW_TOGETHER = 0.25
"""Share of its capacity under which a tree's free room counts as nearly full
(:func:`grow_together`)."""


def grow_together(trees, limit=None):
    """Grow now, by one growth step, every tree of ``trees`` that is nearly full
    (free room under :data:`GROW_TOGETHER` of its capacity).

    For a forest learning rows one call at a time, when one of its trees has just
    grown. Its trees see the same rows and grow at about the same pace, each a few
    dozen rows after the other; every growth sends a compiled call back to Python,
    which then finishes the tree, refreshes the table of the trees' arrays and makes
    the next call's plan again (about 0.1-0.2 ms for a forest of 10 small trees, in
    ad-hoc timings, against 5 µs for a call of one row). Grown together, they pay
    that once. Capacity changes no result. Not for models that renumber their nodes
    when they grow (AMF): a tree grown early would be renumbered at another row by the
    fast path than by the full path, whose trees are the same bit for bit.

    Parameters
    ----------
    trees : list of TreeState
    limit : int, optional
        Node budget (``max_nodes``): no tree grows past it.
    """
    for tree in trees:
        capacity = tree.capacity
        if limit is not None and capacity >= limit:
            continue
        if capacity - tree.n_nodes < GROW_TOGETHER * capacity:
            tree.reserve(capacity + 1, limit=limit)


def learn_rows(tree, run_kernel, position, n_rows, limit=None, renumber=False, room=None,
               pending=None):
    """Learn rows ``position:n_rows`` in ``tree``, growing its storage between calls.

    Parameters
    ----------
    tree : TreeState
    run_kernel : callable
        ``run_kernel(tree, start)`` learns from row ``start`` on and returns the
        first row it did not learn (it stops when the next row might not fit).
    position : int
        First row to learn.
    n_rows : int
        Rows in all.
    limit : int, optional
        Node budget (``max_nodes``): storage never grows past it, and the kernel
        must then learn rows without adding nodes.
    renumber : bool
        Renumber the nodes depth-first when the tree grows (see
        ``TreeState.reserve``); only for kernels that hold no node id across calls.
    room : callable, optional
        ``room(tree)``: free nodes that every call needs beyond :data:`FREE_NODES`
        (e.g. to re-sample the largest paused leaf, for kernels that cannot hand a
        re-sampling back).
    pending : callable, optional
        ``pending(tree)``: free nodes that the work the last call left unfinished
        needs (e.g. 2 per point of a paused leaf to re-sample, and 2), or 0. While
        it is not 0, the kernel is called again, even with no row left.

    Returns
    -------
    int
        ``n_rows``.
    """
    while True:
        extra = 0 if pending is None else pending(tree)
        if position >= n_rows and not extra:
            return position
        if room is not None:
            extra += room(tree)
        n_nodes = tree.n_nodes
        if must_grow(n_nodes, tree.capacity, extra):
            tree.reserve(nodes_to_reserve(n_nodes, n_rows - position) + extra,
                         limit=limit, renumber=renumber)
        position = run_kernel(tree, position)


def sample_with_growth(tree, run_sampler, first, limit=None, factor=GROWTH_FACTOR,
                       still_needed=None):
    """Sample a tree in batch, growing its storage between calls of the sampler.

    Parameters
    ----------
    tree : TreeState
    run_sampler : callable
        ``run_sampler(tree)`` samples the blocks still pending and returns how many
        are left (0 when done; it stops when the next block might not fit).
    first : int
        Nodes to reserve before the first call (see :func:`batch_nodes`).
    limit : int, optional
        Node budget: once the storage reaches it, the sampling stops.
    factor : float
        Least growth ratio of a step (see ``TreeState.reserve``).
    still_needed : callable, optional
        ``still_needed(tree)``: the nodes the pending blocks are expected to need
        (:meth:`BatchSizes.still_needed`); a growth step then makes that much room
        and no more, whatever ``factor``.

    Returns
    -------
    int
        Blocks left pending: 0, unless the budget stopped the sampling (the caller
        then pauses them, ``engine.growth.close_pending_blocks``).
    """
    tree.reserve(first, limit=limit)
    left = run_sampler(tree)
    while left and (limit is None or tree.capacity < limit):
        if still_needed is None:
            tree.reserve(tree.capacity + 2, limit=limit, factor=factor)  # a cut: two nodes
        else:
            tree.reserve(tree.n_nodes + still_needed(tree), limit=limit, exact=True)
        left = run_sampler(tree)
    return left
