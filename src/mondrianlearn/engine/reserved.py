"""Node arrays in reserved memory: large trees that grow without copying their nodes.

A tree's node arrays grow between compiled calls (:mod:`.storage` decides when and by
how much). Growing by copying into new arrays costs, beside the copy itself, a page
fault for every page of fresh memory the copy writes (2.5-3 µs per 4 KiB page on this
project's machine, ad-hoc timings), and for as long as the copy lasts the tree is held
twice: on ``benchmarks/bench_stream_memory.py``'s stream, a Mondrian forest of five
trees of two million nodes each peaked at 3,205 MB growing in reservations, and at
3,528 MB in the same benchmark's run with reservations switched off (``LAZY`` false).

Where the system gives memory to a mapping only when a page is first written (Linux
and macOS), the node arrays of a large tree (:data:`RESERVE_FROM_BYTES`) are instead
placed in one anonymous memory mapping with room for several times their rows
(:meth:`NodeReservation.zeros`), each at the start of a region of its own: the rest of
the mapping is address space only, and a later growth step is a longer view of the
same regions (:meth:`NodeReservation.grown`), with no copy and no fault; the new rows
are the mapping's untouched zero pages. Only when the reservation is full are the
nodes copied into a larger one. A growth that renumbers the nodes
(``TreeState.reserve``) writes every node anew anyway, into new arrays. The memory
taken is the same as with zeroed arrays (pages written).

Elsewhere (Windows, whose mappings count against the commit limit whole), or when a
mapping is refused (an address-space limit, ``ulimit -v``), the arrays are ordinary
NumPy zeros and grow by copying, as small trees always do. Either way a grown array
is C-contiguous and its rows past the kept ones are zero: nothing else depends on
where the memory came from. A pickled or copied tree is compact NumPy arrays
(``TreeState``).
"""

import math
import mmap
import sys
import weakref

import numpy as np

RESERVE_FACTOR = 8
"""Rows reserved, as a multiple of the capacity that made the reservation: a tree
copies its nodes once per eight-fold growth instead of once per growth step."""

RESERVE_FROM_BYTES = 16 << 20
"""Smallest tree, in bytes of its node arrays at the capacity it grows to, placed in
a reservation. Smaller trees are NumPy arrays, as before: their copies are short, and
the allocator gives them memory that earlier arrays freed, already backed, where a
reservation's pages are new (with every tree in a reservation, a 10-tree forest
learning letter in mini-batches of 100 was 10-12% slower in a process that had freed
earlier forests, in alternating ad-hoc runs). Beyond it, NumPy's arrays get new mappings from
the allocator too (glibc maps allocations of more than 32 MiB anew every time), so
that each copy faults in every page it writes."""

_LINUX = sys.platform.startswith("linux")
LAZY = _LINUX or sys.platform == "darwin"
"""Whether the system gives anonymous mappings memory only as their pages are first
written (reservations are used only there)."""

_MAP_NORESERVE = 0x4000
"""Linux's ``MAP_NORESERVE`` (not exported by Python's ``mmap`` before 3.13): under
the default overcommit policy, a reservation does not count as committed memory
until written."""

_FLAGS = getattr(mmap, "MAP_PRIVATE", 0) | (_MAP_NORESERVE if _LINUX else 0)


def uninitialized_rows(shape, dtype):
    """An array whose contents are whatever the memory held: for node fields past a
    tree's ``n_nodes``, which every kernel that takes a node writes before anything
    reads them (``engine.growth.new_node``, ``start_root``, and the box and time
    that each sampler or extension gives its new nodes); code that looks at node
    fields from Python looks at the first ``n_nodes`` rows only.

    Zeroing them cost a Mondrian forest learning one row per call about 6% of its
    time (Elec2, 10 trees, the learning loop of ``benchmarks/bench_per_row.py`` in
    ad-hoc alternating runs: 93,629 against 99,738 rows per second at best; the
    benchmark's own report cannot tell 6% from its noise): a small tree
    grows up to eight-fold at a time (``engine.storage``), and the memory that the
    allocator hands back is mostly reused, so it must be written to be zero. Tests
    fill these rows with garbage (``tests/test_engine_spare_rows.py``) and check
    that nothing changes."""
    return np.empty(shape, dtype=dtype)


def _zeros(specs, rows, dirty=0):
    return [uninitialized_rows((rows,) + tail, dtype) if k < dirty
            else np.zeros((rows,) + tail, dtype=dtype)
            for k, (tail, dtype) in enumerate(specs)]


_ALIGN = 64
"""Alignment, in bytes, of each array in a reservation (a cache line)."""


class NodeReservation:
    """The memory reserved for the node arrays of one tree, one region per array in
    a single mapping, which the arrays grow into.

    Holds no reference to the memory (weak references only): the tree's arrays keep
    the mapping alive, and once the tree drops them (trimmed, replaced, freed), so is
    the memory. Made by :meth:`zeros`.
    """

    __slots__ = ("_views", "_whole", "_regions", "_rows")

    @classmethod
    def zeros(cls, specs, rows, reserve_rows, dirty=0):
        """``(reservation, arrays)``: zero arrays of ``rows`` rows, one per ``(row
        shape, dtype)`` of ``specs``, each at the start of its region of a mapping
        with room for ``reserve_rows`` rows of every one; ``(None, arrays)`` of NumPy
        arrays when the arrays are small (:data:`RESERVE_FROM_BYTES`), the system does
        not lend memory lazily (:data:`LAZY`) or it refuses the mapping. NumPy arrays
        are zeros but for the first ``dirty`` of ``specs``, which callers fill before
        reading (:func:`uninitialized_rows`); a mapping is zero throughout."""
        specs = [(tuple(tail), np.dtype(dtype)) for tail, dtype in specs]
        row = sum(dtype.itemsize * math.prod(tail) for tail, dtype in specs)
        if not LAZY or row == 0 or rows * row < RESERVE_FROM_BYTES:
            return None, _zeros(specs, rows, dirty)
        reserve_rows = max(int(reserve_rows), int(rows))
        regions, start = [], 0
        for tail, dtype in specs:
            size = -(-reserve_rows * dtype.itemsize * math.prod(tail) // _ALIGN) * _ALIGN
            regions.append((start, size, dtype))
            start += size
        try:
            mapping = mmap.mmap(-1, max(start, 1), flags=_FLAGS)
        except (OSError, ValueError, OverflowError):  # no address space: copy as before
            return None, _zeros(specs, rows, dirty)
        whole = np.frombuffer(mapping, dtype=np.uint8)  # the base of every array below
        reservation = cls()
        reservation._rows = reserve_rows
        reservation._regions = regions
        reservation._whole = weakref.ref(whole)
        arrays = reservation._views_of(whole, [tail for tail, _ in specs], rows)
        reservation._views = [weakref.ref(a) for a in arrays]
        return reservation, arrays

    def _views_of(self, whole, tails, rows):
        return [whole[start:start + size].view(dtype)[: rows * math.prod(tail)]
                .reshape((rows,) + tail)
                for (start, size, dtype), tail in zip(self._regions, tails)]

    def grown(self, arrays, rows):
        """``arrays``, the last arrays this reservation gave (in the same order), with
        ``rows`` rows in the same memory (their rows kept, the new ones zero, never
        written), or None when one of them is another array or there is no room."""
        if rows > self._rows or len(arrays) != len(self._views):
            return None
        for view, array in zip(self._views, arrays):
            if view() is not array:
                return None
        whole = self._whole()
        if whole is None:
            return None
        out = self._views_of(whole, [a.shape[1:] for a in arrays], rows)
        self._views = [weakref.ref(a) for a in out]
        return out
