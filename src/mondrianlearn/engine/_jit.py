"""Compilation settings shared by every compiled kernel.

All kernels are compiled with ``cache=True`` (the machine code is stored next to
the sources, so a new process does not recompile) and ``nogil=True`` (trees are
trained and queried from several threads at once). ``fastmath`` is left off on
purpose: Mondrian split times and boxes use infinity, which the no-inf/no-NaN
fast-math flags would break.

The loops over rows and nodes run over ``borrowed`` arrays, whose uses the
compiled code does not reference-count (see ``borrowed``).
"""

from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ._cache import install as _install_cache_locators

_install_cache_locators()  # cached code is stale when any module it includes changes

kernel = njit(cache=True, nogil=True)
"""Decorator for a compiled kernel."""

inline_kernel = njit(cache=True, nogil=True, inline="always")
"""Decorator for a function that takes a whole tree and is called once per node or
per point (small helpers, and the extension itself): inlined at compile time, because
a call that passes the tree's arrays pays a reference-count round trip for each of
them. Helpers called per node that need only a few arrays take those arrays instead
(``engine.boxes``); inlining is not always faster, so each use was measured."""


@intrinsic
def borrowed(typingctx, array):
    """The same array, but not reference-counted by the compiled code that uses it.

    Compiled code counts references to an array atomically each time it binds it to
    a name: passing it to a helper, inlining one, taking a row. In the per-row and
    per-node loops those atomic operations were a large part of the time. A
    borrowed view (a null memory-info pointer) makes them no-ops.

    Only borrow the *arguments* of the kernel that runs the loop, at its top: its
    caller holds them until it returns. An array allocated in the same kernel may be
    freed after its last use by name, which can come before the uses of the view;
    allocate such arrays in a caller and pass them in. A borrowed view must never be
    returned or stored.
    """
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        view = context.make_array(array)(context, builder, value=args[0])
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        return view._getvalue()

    return array(array), codegen


@intrinsic
def address_to_pointer(typingctx, address):
    """The memory address ``address`` (an integer) as a ``void*``, for ``numba.carray``.

    Used only by ``engine.tree_table``, whose tables hold the addresses of arrays that
    the owning estimator keeps alive (see there).
    """
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(address), codegen
