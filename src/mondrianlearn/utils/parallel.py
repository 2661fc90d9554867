"""Running per-tree work in threads (the compiled kernels release the GIL)."""

import copyreg
import importlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

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


FAST_THREADS_MIN_WORK = 512
"""Least (rows x trees) of a fast-path call (``utils.fast_path``) that splits its
trees between threads when ``n_jobs`` allows: below it, handing half the trees to
another thread costs more than it saves (a call of one row stays in one thread)."""

_POOL = []  # (executor, pid, threads) for the fast path's extra threads, made on first use
_POOL_LOCK = threading.Lock()


def fast_path_threads(n_jobs, n_rows, n_trees):
    """Threads for a fast-path call of ``n_rows`` rows over ``n_trees`` trees: 1
    unless ``n_jobs`` allows more and the call holds enough work."""
    if n_jobs == 1 or n_rows * n_trees < FAST_THREADS_MIN_WORK or n_trees < 2:
        return 1
    return max(1, min(effective_n_jobs(n_jobs), os.cpu_count() or 1, n_trees))


def run_split(function, n_items, n_threads):
    """``sum(function(a, b, k) for each part k = (a, b) of range(n_items))``, the
    parts contiguous and run at once, part 0 in the calling thread and the others
    in a shared thread pool (for compiled kernels that release the GIL)."""
    n_threads = max(1, min(n_threads, n_items))
    if n_threads == 1:
        return function(0, n_items, 0)
    bounds = [n_items * k // n_threads for k in range(n_threads + 1)]
    parts = list(zip(bounds[:-1], bounds[1:]))
    with _POOL_LOCK:
        # A forked child inherits the pool without its threads: it makes its own.
        if not _POOL or _POOL[1] != os.getpid() or _POOL[2] < n_threads - 1:
            if _POOL and _POOL[1] == os.getpid():
                _POOL[0].shutdown(wait=False)
            _POOL[:] = [ThreadPoolExecutor(max_workers=n_threads - 1,
                                           thread_name_prefix="mondrianlearn"),
                        os.getpid(), n_threads - 1]
        pool = _POOL[0]
    others = [pool.submit(function, a, b, k) for k, (a, b) in enumerate(parts) if k]
    try:
        total = function(*parts[0], 0)
    finally:
        wait(others)  # no part may still run once this returns or raises
    return total + sum(future.result() for future in others)


def run_each(function, items, n_threads):
    """``function(item)`` for each of ``items``, in ``n_threads`` contiguous parts run
    at once (``run_split``): the fast path finishing the trees that its compiled call
    left to Python."""

    def part(a, b, k):
        for item in items[a:b]:
            function(item)
        return 0

    run_split(part, len(items), n_threads)


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
