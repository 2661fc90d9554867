"""Running per-tree work in threads (the compiled kernels release the GIL)."""

import copyreg
import importlib

from joblib import Parallel, delayed, effective_n_jobs


def runs_sequentially(n_items, n_jobs):
    """Whether ``map_trees`` over ``n_items`` items runs in the calling thread."""
    return n_items <= 1 or effective_n_jobs(n_jobs) == 1


def map_trees(function, items, n_jobs):
    """``[function(item) for item in items]``, in threads when ``n_jobs`` allows.

    Results come back in the order of ``items``, so anything reduced from them is
    identical whatever ``n_jobs`` is. Inside ``joblib.parallel_backend("dask")`` the
    items are sent to the Dask workers: ``function`` must return what it changes.
    """
    items = list(items)
    if runs_sequentially(len(items), n_jobs):
        return [function(item) for item in items]
    return Parallel(n_jobs=n_jobs, prefer="threads")(delayed(function)(item) for item in items)


def _load_kernel(module, name):
    return getattr(importlib.import_module(module), name)


def _reduce_kernel(dispatcher):
    """Pickle our compiled kernels by reference (module and name).

    Per-tree closures sent to other processes (joblib's Dask backend) refer to
    kernels; numba pickles a kernel by value, and the receiving process compiles
    it again from scratch, without the disk cache (seconds per kernel and worker).
    By reference, the worker imports the module and loads the cached machine code.
    """
    function = dispatcher.py_func
    module, name = function.__module__, function.__qualname__
    if module.startswith("mondrianlearn.") and "<locals>" not in name:
        try:
            if _load_kernel(module, name) is dispatcher:
                return _load_kernel, (module, name)
        except (ImportError, AttributeError):
            pass
    return dispatcher.__reduce__()


def _register_kernel_pickling():
    from numba.core.registry import CPUDispatcher

    from ..engine._jit import KernelDispatcher

    for dispatcher_class in (CPUDispatcher, KernelDispatcher):  # copyreg matches types exactly
        copyreg.pickle(dispatcher_class, _reduce_kernel)


_register_kernel_pickling()
