"""Running per-tree work in threads (the compiled kernels release the GIL)."""

from joblib import Parallel, delayed, effective_n_jobs


def map_trees(function, items, n_jobs):
    """``[function(item) for item in items]``, in threads when ``n_jobs`` allows.

    Results come back in the order of ``items``, so anything reduced from them is
    identical whatever ``n_jobs`` is. Inside ``joblib.parallel_backend("dask")`` the
    items are sent to the Dask workers: ``function`` must return what it changes.
    """
    items = list(items)
    if len(items) <= 1 or effective_n_jobs(n_jobs) == 1:
        return [function(item) for item in items]
    return Parallel(n_jobs=n_jobs, prefer="threads")(delayed(function)(item) for item in items)
