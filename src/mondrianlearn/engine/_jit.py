"""Compilation settings shared by every compiled kernel.

All kernels are compiled with ``cache=True`` (the machine code is stored next to
the sources, so a new process does not recompile) and ``nogil=True`` (trees are
trained and queried from several threads at once). ``fastmath`` is left off on
purpose: Mondrian split times and boxes use infinity, which the no-inf/no-NaN
fast-math flags would break.

Most kernels are compiled without numba's reference-counting runtime: they work in
arrays that they are given (``kernel``). The few that allocate arrays have it; the
loops in them run over ``borrowed`` arrays, whose uses the compiled code does not
reference-count (see ``borrowed``).

Compile time (a first run with an empty cache compiles every kernel it reaches):

- numba compiles a kernel once per signature. A kernel called from another kernel
  with a constant argument (``1``, ``True``) would be compiled again for that
  constant's literal type; calls between kernels use the plain types instead.
- a kernel called from another kernel is compiled without the wrapper that converts
  Python arguments (for a tree, 13 arrays), which only Python calls need; called
  from Python, it is an ordinary numba dispatcher (see ``KernelDispatcher``). A
  kernel that both Python and other kernels call in the same run would then be
  compiled twice: ``shared_kernel`` compiles it once, with the wrapper.
- numba links the code of every kernel a kernel calls into it, then optimises and
  generates machine code for the whole. A kernel compiled for other kernels is
  only ever used that way, so its own code gets numba's per-function optimisation
  only, and no machine code (``_LinkedLibrary``): each piece of code is optimised
  as a whole and made into machine code once per kernel that Python calls, instead
  of once more for every kernel between them. Such code has nothing to store in
  numba's disk cache; the kernels that Python calls are cached with it inside.
- without the reference-counting runtime (``kernel``), the code that updates the
  reference counts of every array a kernel binds (13 for a tree) is not generated.
- no kernel has the C-callable wrapper of numba's first-class functions.
- kernels fill, copy and add arrays in scalar loops: an array expression (``out +=
  part``, ``row[:] = 0.0``) compiles numba's broadcasting code for its types, and a
  copy between arrays its shape-mismatch error message.
"""

import functools

from llvmlite import ir
from numba import _dynfunc, njit, typeof, types
from numba._dispatcher import compute_fingerprint
from numba.core import cgutils, config
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler import CompilerBase, DefaultPassBuilder, _LowerResult
from numba.core.compiler_machinery import register_pass
from numba.core.registry import CPUDispatcher
from numba.core.typed_passes import NativeLowering
from numba.core.typing.typeof import Purpose
from numba.extending import intrinsic
from numba.np.arrayobj import np_cfarray

from ._cache import install as _install_cache_locators

_install_cache_locators()  # cached code is stale when any module it includes changes

_OPTIONS = {"nopython": True, "nogil": True, "no_cfunc_wrapper": True}

_INLINED = set()
"""The Python functions of the kernels declared ``kernel(inline=True)``."""


class _LinkedLibrary(JITCodeLibrary):
    """The code of a kernel that only other kernels call (see the module docstring).

    Finalising it only links in the code it calls: the kernels that link it
    optimise it and generate its machine code, with their own.
    """

    def finalize(self):
        for library in dict.fromkeys(self._linking_libraries):
            self._reload_init.update(library._reload_init)
            self._final_module.link_in(library._get_module_for_linking(), preserve=True)
        self._finalized = True


@register_pass(mutates_CFG=True, analysis_only=False)
class _LinkedLowering(NativeLowering):
    """numba's lowering, for a kernel compiled for other kernels: its code goes into
    a ``_LinkedLibrary``, and no machine code is made for it."""

    _name = "mondrianlearn_linked_lowering"

    def run_pass(self, state):
        no_compile = state.flags.no_compile
        state.flags.no_compile = True  # lower only: no machine code, no environment
        try:
            super().run_pass(state)
        finally:
            state.flags.no_compile = no_compile
        library = state.library
        library.__class__ = _LinkedLibrary
        lowered = state["cr"]
        fndesc = lowered.fndesc
        if state.func_id.func in _INLINED:
            library._final_module.get_function(fndesc.mangled_name).add_function_attribute(
                "alwaysinline")
        # The object that numba files the kernel's code under, for its callers; it
        # has no machine code behind it and is never called.
        handle = _dynfunc.make_function(fndesc.lookup_module(),
                                        fndesc.qualname.split(".")[-1], "", 0,
                                        lowered.env, (library,))
        state.targetctx.insert_user_function(handle, fndesc, [library])
        state.reload_init.extend(library._reload_init)
        state["cr"] = _LowerResult(fndesc, lowered.call_helper, cfunc=handle,
                                   env=lowered.env)
        return True


class _LinkedCompiler(CompilerBase):
    """numba's nopython pipeline with ``_LinkedLowering`` for its lowering."""

    def define_pipelines(self):
        pipeline = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pipeline.passes[:] = [(_LinkedLowering if p is NativeLowering else p, d)
                              for p, d in pipeline.passes]
        pipeline.finalize()
        return [pipeline]


class KernelDispatcher(CPUDispatcher):
    """The dispatcher of a kernel (see the module docstring).

    Called from Python, it compiles and runs the kernel as numba's dispatcher does.
    When another kernel calls it, the call is typed and linked with the plain
    (non-literal) argument types, through a second dispatcher that compiles the
    kernel for other kernels only: without its Python wrapper and without machine
    code of its own (``shared``: through this one, wrapper and machine code
    included). Only this one is cached on disk.
    """

    shared = False

    def _nested(self):
        nested = self.__dict__.get("_nested_dispatcher")
        if nested is None:
            options = dict(self.targetoptions, no_cpython_wrapper=True)
            nested = CPUDispatcher(self.py_func, locals=self.locals, targetoptions=options,
                                   pipeline_class=_LinkedCompiler)
            self._nested_dispatcher = nested
        return nested

    def get_call_template(self, args, kws):
        args = tuple(types.unliteral(a) for a in args)
        kws = {k: types.unliteral(v) for k, v in kws.items()}
        if self.shared:
            return super().get_call_template(args, kws)
        return self._nested().get_call_template(args, kws)

    def get_overload(self, sig):
        if self.shared:
            return super().get_overload(sig)
        return self._nested().get_overload(sig)


def kernel(function=None, *, allocates=False, inline=False):
    """Decorator for a compiled kernel.

    A kernel works in the arrays it is given: it allocates none and returns none
    but borrowed views (``borrowed``, ``tree_table``), so it is compiled without
    numba's reference-counting runtime, whose reference counts are the larger part
    of the code generated for array arguments; numba refuses to compile an
    allocation in such a kernel. ``allocates=True`` is for a kernel that makes
    arrays (allocates them, or returns views that it makes): it is compiled with the
    runtime, and so is whatever is inlined into it. A kernel that receives arrays
    from a call that made them (``_path_sums._work_space``) allocates too: without the
    runtime it could not free them.

    ``inline=True`` marks the kernel's code for LLVM to inline into the kernels that
    call it (numba's own ``inline="always"`` types and lowers it again in each
    caller instead, which costs seconds of compile time). For the per-tree loops
    that a kernel over all trees calls once per tree and row: a call passes each
    array argument as its seven to nine fields (a tree alone is 13 arrays), which
    cost a one-row ``partial_fit`` of 10 AMF trees on Elec2 about 1 µs of 8 (ad-hoc
    timings); single ``bench_cold_start.py`` runs with and without the inlining
    showed no difference in compile time.
    """
    if function is None:
        return functools.partial(kernel, allocates=allocates, inline=inline)
    if config.DISABLE_JIT:
        return function
    if inline:
        _INLINED.add(function)
    dispatcher = KernelDispatcher(function, targetoptions=dict(_OPTIONS, _nrt=allocates))
    dispatcher.enable_caching()
    return dispatcher


def shared_kernel(function=None, *, allocates=False):
    """Decorator for a kernel that Python code and other kernels both call on the
    common path: compiled once, with its Python wrapper, for both (``allocates``:
    see ``kernel``)."""
    if function is None:
        return functools.partial(shared_kernel, allocates=allocates)
    dispatcher = kernel(function, allocates=allocates)
    if isinstance(dispatcher, KernelDispatcher):
        dispatcher.shared = True
    return dispatcher


_ENTRIES = {}
"""``compiled_entry``'s memo: ``(dispatcher, fingerprints of the arguments)`` to the
compiled function."""


def compiled_entry(dispatcher, args):
    """The compiled function that ``dispatcher(*args)`` runs, to be called directly
    with arguments of the same types as ``args``; ``dispatcher`` itself when it has
    none for them (or the kernels are not compiled).

    A dispatcher works out the numba type of each argument on every call to choose
    its compiled function: about 0.3 µs of a call of 20 arguments, a tenth of a
    one-row AMF prediction (ad-hoc timings). The compiled function converts the
    arguments to the types it was compiled for without checking them, so a caller
    may call it only with arguments of the types of ``args`` (the same dtype,
    dimensions, layout, alignment and writability of arrays): the prepared one-row
    calls of ``utils.fast_path`` do, which check the row against the first call's
    (the labels and weights that also change between calls are arrays of one type
    that the fast path's checks make).
    Types are worked out from numba's fingerprints of the arguments (what its
    dispatcher keys its own memo on), so preparing a call costs about a microsecond.
    """
    overloads = getattr(dispatcher, "overloads", None)
    if overloads is None:  # NUMBA_DISABLE_JIT: a plain function
        return dispatcher
    try:
        key = (dispatcher, tuple(map(compute_fingerprint, args)))
    except (TypeError, ValueError, NotImplementedError):  # no fingerprint
        return dispatcher
    entry = _ENTRIES.get(key)
    if entry is None:
        signature = tuple(typeof(a, Purpose.argument) for a in args)
        overload = overloads.get(signature)
        if overload is None:
            return dispatcher
        entry = _ENTRIES[key] = overload.entry_point
    return entry

inline_kernel = njit(cache=True, nogil=True, inline="always", no_cfunc_wrapper=True)
"""Decorator for a function inlined into its callers by numba at compile time.

For small functions that return views (borrowed views of their arguments, views of
a tree table's arrays): numba refuses to return from a kernel without the
reference-counting runtime an array that is not one of its arguments. And for
some helpers that take a whole tree and are called once per node or per point
(the extension itself, ``engine.growth``, ``forest._additive``), where inlining was
measured faster. numba types and lowers an inlined function again in every
caller, which costs compile time: AMF's per-row helpers (``amf._kernels``,
``amf._path_sums``) are plain kernels, which LLVM still inlines where it pays
(their inlining cost AMF's first use about 3 s, for no measurable speed)."""


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
def array_at(typingctx, address, shape, dtype):
    """A C-ordered array of ``dtype`` and ``shape`` (an integer or a tuple of
    integers) over the memory at ``address`` (an integer), owned by no one: what
    ``numba.carray`` makes of a pointer, without compiling numba's generic
    ``carray`` for every shape and dtype.

    Used only by ``engine.tree_table``, whose tables hold the addresses of arrays that
    the owning estimator keeps alive (see there).
    """
    if not isinstance(address, types.Integer) or not isinstance(dtype, types.NumberClass):
        return None
    if isinstance(shape, types.Integer):
        ndim = 1
    elif isinstance(shape, types.BaseTuple) and all(isinstance(s, types.Integer)
                                                    for s in shape.types):
        ndim = len(shape.types)
    else:
        return None
    array_type = types.Array(dtype.dtype, ndim, "C")

    def codegen(context, builder, signature, args):
        pointer = builder.inttoptr(args[0], cgutils.voidptr_t)
        return np_cfarray(context, builder, array_type(types.voidptr, shape),
                          [pointer, args[1]])

    return array_type(address, shape, dtype), codegen


@intrinsic
def float32_bits(typingctx, value):
    """The bit pattern of a float32 as an int32 (a bit cast, no conversion)."""
    if value != types.float32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))

    return types.int32(value), codegen


@intrinsic
def bits_float32(typingctx, bits):
    """The float32 whose bit pattern is the low 32 bits of the integer ``bits``
    (``float32_bits`` undone; numba computes with int32 as int64)."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        low = args[0]
        if bits.bitwidth > 32:
            low = builder.trunc(low, ir.IntType(32))
        elif bits.bitwidth < 32:
            low = builder.sext(low, ir.IntType(32))
        return builder.bitcast(low, ir.FloatType())

    return types.float32(bits), codegen


@intrinsic
def prefetch(typingctx, array, index):
    """Ask the processor to bring row ``index`` of ``array`` into its caches (no
    bounds check, no effect on results): for node rows that a loop will read soon,
    so that their cache misses overlap instead of coming one after the other."""
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        view = context.make_array(array)(context, builder, args[0])
        indices = [args[1]] + [context.get_constant(types.intp, 0)] * (array.ndim - 1)
        pointer = cgutils.get_item_pointer(context, builder, array, view, indices,
                                           wraparound=False, boundscheck=False)
        byte_pointer = ir.PointerType(ir.IntType(8))
        i32 = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]),
            "llvm.prefetch.p0")
        # read, keep in all cache levels, data cache
        builder.call(function, [builder.bitcast(pointer, byte_pointer), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.none(array, index), codegen
