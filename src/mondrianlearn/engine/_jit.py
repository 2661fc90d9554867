"""Compilation settings shared by every compiled kernel.

All kernels are compiled with ``cache=True`` (the machine code is stored next to
the sources, so a new process does not recompile) and ``nogil=True`` (trees are
trained and queried from several threads at once). ``fastmath`` is left off on
purpose: Mondrian split times and boxes use infinity, which the no-inf/no-NaN
fast-math flags would break.
"""

from numba import njit

kernel = njit(cache=True, nogil=True)
"""Decorator for a compiled kernel."""

inline_kernel = njit(cache=True, nogil=True, inline="always")
"""Decorator for a function that takes a whole tree and is called once per node or
per point (small helpers, and the extension itself): inlined at compile time, because
a call that passes the tree's arrays pays a reference-count round trip for each of
them. Helpers called per node that need only a few arrays take those arrays instead
(``engine.boxes``); inlining is not always faster, so each use was measured."""
