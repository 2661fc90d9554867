"""Parallel training: threads on one machine, a Dask cluster.

1. Threads: ``n_jobs=2`` against ``n_jobs=1`` for ``fit`` and ``partial_fit`` of
   MondrianForestClassifier (and AMFClassifier) on letter (target: at least 1.7x on
   2 cores), with scikit-learn's ExtraTreesClassifier(max_features=1) for reference
   (river has no multi-core training). The machine may be shared, so every timing
   is the best of several interleaved runs, and a calibration row gives the
   speed-up that two threads of a pure compiled loop get at the same moment.
2. Why: the share of single-thread time spent inside the compiled kernels (which
   release the GIL) and the speed-up that Amdahl's law allows with the rest held
   under the GIL, measured with per-thread CPU clocks (insensitive to the load).
2c. The C allocator: the same streams in fresh processes, with glibc's default
   malloc and with ``MALLOC_ARENA_MAX=1`` and high mmap and trim thresholds
   (:data:`TUNED_MALLOC`), counting page faults and system time. Trees grow in the
   worker threads, and glibc gives each thread its own arena: memory a growth frees
   is handed back to the system and the next growth's copy faults in fresh pages.
3. Dask: a ``LocalCluster`` of two single-threaded worker processes against local
   threads (``n_jobs=2``) for the same forest: ``fit``/``predict_proba`` under
   ``joblib.parallel_backend("dask")``, and a ``DaskShardedForest`` of two shards
   learning the same mini-batches (with a check that predictions agree).

Usage: ``python benchmarks/bench_parallel.py [--quick] [--repeats N]
[--allocator-only]``.
"""

import json
import logging
import os
import resource
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
from _common import (
    Report,
    fmt_ratio,
    fmt_seconds,
    load_scaled,
    make_parser,
    markdown_table,
    progress,
    verdict,
    warm_up,
)

TARGET = 1.7

TUNED_MALLOC = {"MALLOC_ARENA_MAX": "1", "MALLOC_MMAP_THRESHOLD_": str(1 << 30),
                "MALLOC_TRIM_THRESHOLD_": str(1 << 32)}
"""glibc settings of section 2c: one arena for every thread, and freed memory kept
for reuse instead of being returned to the system (set before Python starts)."""


# ------------------------------------------------------------------ helpers
def stream(model, X, y, n_batches):
    for rows in np.array_split(np.arange(X.shape[0]), n_batches):
        model.partial_fit(X[rows], y[rows])
    return model


def best_of_interleaved(functions, repeats):
    """Best wall time of each function, running them in turn ``repeats`` times.

    Interleaving spreads the changes of the machine's load over all of them.
    """
    best = {name: np.inf for name in functions}
    results = {}
    for _ in range(repeats):
        for name, function in functions.items():
            start = time.perf_counter()
            results[name] = function()
            best[name] = min(best[name], time.perf_counter() - start)
    return best, results


def calibration(repeats):
    """Speed-up of two threads running a pure compiled loop (the machine right now)."""
    from concurrent.futures import ThreadPoolExecutor

    from mondrianlearn.engine._jit import kernel

    @kernel
    def spin(n):
        total = 0.0
        for i in range(n):
            total += (i % 7) * 0.5
        return total

    n = 60_000_000
    spin(10)

    def serial():
        return spin(n) + spin(n)

    def threads():
        with ThreadPoolExecutor(2) as pool:
            return sum(pool.map(spin, [n, n]))

    best, _ = best_of_interleaved({"serial": serial, "threads": threads}, repeats)
    return best["serial"] / best["threads"]


# ------------------------------------------------------------- 1. threads
def thread_rows(name, make, X, y, X_test, n_batches, repeats):
    """Rows (operation, t1, t2, speed-up, identical) for one estimator factory."""
    functions = {}
    for n_jobs in (1, 2):
        functions["fit", n_jobs] = lambda n_jobs=n_jobs: make(n_jobs).fit(X, y)
        functions["partial_fit", n_jobs] = (
            lambda n_jobs=n_jobs: stream(make(n_jobs), X, y, n_batches))
    best, models = best_of_interleaved(functions, repeats)
    rows = []
    for operation in ("fit", "partial_fit"):
        same = np.array_equal(models[operation, 1].predict_proba(X_test),
                              models[operation, 2].predict_proba(X_test))
        speedup = best[operation, 1] / best[operation, 2]
        rows.append([name, operation, fmt_seconds(best[operation, 1]),
                     fmt_seconds(best[operation, 2]), fmt_ratio(speedup),
                     verdict(speedup >= TARGET), "yes" if same else "NO"])
    # Prediction is parallel over trees as well (not part of the target).
    model = models["fit", 1]
    pred = {}
    for n_jobs in (1, 2):
        pred[n_jobs] = lambda n_jobs=n_jobs: model.set_params(n_jobs=n_jobs).predict_proba(X_test)
    best, _ = best_of_interleaved(pred, repeats)
    rows.append([name, "predict_proba", fmt_seconds(best[1]), fmt_seconds(best[2]),
                 fmt_ratio(best[1] / best[2]), "-", "yes"])
    return rows


def sklearn_rows(X, y, n_trees, repeats):
    from sklearn.ensemble import ExtraTreesClassifier

    functions = {n: (lambda n=n: ExtraTreesClassifier(n_trees, max_features=1, n_jobs=n,
                                                      random_state=0).fit(X, y))
                 for n in (1, 2)}
    best, _ = best_of_interleaved(functions, repeats)
    return [["scikit-learn ExtraTrees(max_features=1)", "fit", fmt_seconds(best[1]),
             fmt_seconds(best[2]), fmt_ratio(best[1] / best[2]), "-", "-"]]


# --------------------------------------------------------------- 2. why
class KernelClock:
    """Thread CPU time spent inside wrapped compiled kernels (GIL released there)."""

    def __init__(self, module, names):
        self.module, self.names = module, names
        self.seconds = 0.0
        self.lock = threading.Lock()

    def __enter__(self):
        self.saved = {name: getattr(self.module, name) for name in self.names}
        for name, function in self.saved.items():
            setattr(self.module, name, self._wrap(function))
        return self

    def _wrap(self, function):
        def timed(*args):
            start = time.thread_time()
            try:
                return function(*args)
            finally:
                with self.lock:
                    self.seconds += time.thread_time() - start
        return timed

    def __exit__(self, *exc):
        for name, function in self.saved.items():
            setattr(self.module, name, function)


class PerTreeClock(KernelClock):
    """Thread CPU time spent in the per-tree functions given to ``map_trees``."""

    def __init__(self, module):
        super().__init__(module, ["map_trees"])

    def _wrap(self, map_trees):
        def timed_map(function, items, n_jobs):
            return map_trees(KernelClock._wrap(self, function), items, n_jobs)
        return timed_map


def cpu_shares(tree_module, kernel_modules, work):
    """Shares of single-thread CPU time in the kernels and in the per-tree work.

    ``kernel_modules`` maps modules to the names of the kernels they hold (or
    import) to time; ``tree_module`` is the module whose ``map_trees`` runs the
    per-tree work. Returns ``(kernel share, per-tree share, bound)``, the bound
    being Amdahl's on 2 threads with everything outside the kernels taken as serial
    (under the GIL).
    """
    clocks = [KernelClock(module, names) for module, names in kernel_modules.items()]
    per_tree = PerTreeClock(tree_module)
    for clock in clocks + [per_tree]:
        clock.__enter__()
    try:
        start = time.thread_time()
        work()
        total = time.thread_time() - start
    finally:
        for clock in clocks + [per_tree]:
            clock.__exit__()
    share = min(sum(c.seconds for c in clocks) / total, 1.0)
    return share, min(per_tree.seconds / total, 1.0), 1.0 / ((1.0 - share) + share / 2.0)


class ThreadCPU(KernelClock):
    """Per ``map_trees`` call, the CPU time of the busiest thread running its tasks."""

    def __init__(self, module):
        super().__init__(module, ["map_trees"])
        self.busiest = 0.0  # summed over the calls (joblib starts new threads per call)
        self.total = 0.0

    def _wrap(self, map_trees):
        def timed_map(function, items, n_jobs):
            by_thread = {}

            def timed(item):
                start = time.thread_time()
                try:
                    return function(item)
                finally:
                    with self.lock:
                        key = threading.get_ident()
                        by_thread[key] = by_thread.get(key, 0.0) + time.thread_time() - start

            caller = threading.get_ident()
            result = map_trees(timed, items, n_jobs)
            workers = [v for k, v in by_thread.items() if k != caller]
            self.busiest += max(workers, default=0.0)
            self.total += sum(workers)
            return result
        return timed_map


def cpu_time_speedup(tree_module, make, work, repeats):
    """Speed-up that two free cores would give, from CPU clocks (load-insensitive).

    ``cpu(n_jobs=1) / (cpu of the calling thread + cpu of the busiest worker
    thread)`` with ``n_jobs=2``: counts the serial part, the imbalance between the
    threads and what sharing caches and memory bandwidth costs (stalls are CPU
    time), not waiting for the GIL (small here: see the kernel share). Also returns
    the CPU inflation ``total cpu(n_jobs=2) / cpu(n_jobs=1)``. Median of ``repeats``.
    """
    estimates, inflations = [], []
    for _ in range(repeats):
        start = time.thread_time()
        work(make(1))
        one = time.thread_time() - start
        with ThreadCPU(tree_module) as clock:
            start = time.thread_time()
            work(make(2))
            caller = time.thread_time() - start
        estimates.append(one / (caller + clock.busiest))
        inflations.append((caller + clock.total) / one)
    return float(np.median(estimates)), float(np.median(inflations))


# --------------------------------------------------------------- 3. Dask
def dask_rows(X, y, X_test, n_trees, n_batches):
    import joblib
    from distributed import Client, LocalCluster

    from mondrianlearn import MondrianForestClassifier
    from mondrianlearn.dask import DaskShardedForest

    def make(n_jobs=2):
        return MondrianForestClassifier(n_trees, random_state=0, n_jobs=n_jobs)

    times = {}

    def clock(key, function):
        start = time.perf_counter()
        result = function()
        times[key] = time.perf_counter() - start
        return result

    progress("Dask: local threads")
    local = clock(("threads", "fit"), lambda: make().fit(X, y))
    reference = clock(("threads", "predict"), lambda: local.predict_proba(X_test))  # noqa: F821
    local_stream = clock(("threads", "stream"), lambda: stream(make(), X, y, n_batches))
    reference_stream = clock(("threads", "predict_stream"),
                             lambda: local_stream.predict_proba(X_test))  # noqa: F821
    del local, local_stream

    progress("Dask: starting a LocalCluster of two worker processes")
    start = time.perf_counter()
    # Shipping trees in task graphs is what is measured: no warning for each one.
    warnings.filterwarnings("ignore", message="Sending large graph")
    cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    client = Client(cluster)
    startup = time.perf_counter() - start
    start = time.perf_counter()
    client.run(warm_up)  # loads the compiled kernels in the workers
    warm = time.perf_counter() - start
    try:
        progress("Dask: joblib backend")
        with joblib.parallel_backend("dask"):
            remote = clock(("joblib", "fit"), lambda: make().fit(X, y))
            proba = clock(("joblib", "predict"),
                          lambda: remote.predict_proba(X_test))  # noqa: F821 (called before del)
        diff_joblib = np.abs(proba - reference).max()
        del remote
        progress("Dask: sharded forest")
        sharded = DaskShardedForest(make(n_jobs=1), n_shards=2, client=client)
        clock(("sharded", "fit"), lambda: sharded.fit(X, y))
        clock(("sharded", "predict"), lambda: sharded.predict_proba(X_test))
        sharded.close()
        sharded = DaskShardedForest(make(n_jobs=1), n_shards=2, client=client)
        clock(("sharded", "stream"), lambda: stream(sharded, X, y, n_batches))
        proba = clock(("sharded", "predict_stream"), lambda: sharded.predict_proba(X_test))
        # Sharded trees are seeded per shard: same distribution, other trees.
        agreement = np.mean(np.argmax(proba, 1) == np.argmax(reference_stream, 1))
        clock(("sharded", "gather"), sharded.gather)
        sharded.close()
    finally:
        client.close()
        cluster.close()

    def cell(mode, key):
        if (mode, key) not in times:
            return "-"
        seconds = times[mode, key]
        if mode == "threads":
            return fmt_seconds(seconds)
        return f"{fmt_seconds(seconds)} ({fmt_ratio(seconds / times['threads', key])})"

    rows = [[label, cell(mode, "fit"), cell(mode, "predict"), cell(mode, "stream"),
             cell(mode, "predict_stream"), note]
            for mode, label, note in (
                ("threads", "local threads (n_jobs=2)", "reference"),
                ("joblib", "joblib.parallel_backend('dask')",
                 f"max abs diff to threads {diff_joblib:.1e}"),
                ("sharded", "DaskShardedForest (2 shards)",
                 f"gather {fmt_seconds(times['sharded', 'gather'])}; predicted class "
                 f"agrees with threads on {100 * agreement:.1f}% (other seeds)"))]
    return rows, startup, warm


# ------------------------------------------------------------- allocator
def allocator_child(name, n_jobs, n_trees, n_rows, n_batches):
    """Run in a fresh process: one stream of ``n_batches`` mini-batches through a
    ``name`` forest (after one untimed stream that loads the kernels); prints wall
    time, user and system CPU time and minor page faults of the timed stream."""
    from mondrianlearn import AMFClassifier, MondrianForestClassifier

    Est = AMFClassifier if name == "AMF" else MondrianForestClassifier
    X, y, _, _ = load_scaled("letter")
    if n_rows:
        X, y = X[:n_rows], y[:n_rows]
    stream(Est(n_trees, n_jobs=1, random_state=0), X, y, n_batches)
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    stream(Est(n_trees, n_jobs=n_jobs, random_state=0), X, y, n_batches)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"wall": wall, "user": after.ru_utime - before.ru_utime,
                      "sys": after.ru_stime - before.ru_stime,
                      "faults": after.ru_minflt - before.ru_minflt}))


def allocator_rows(forests, n_rows, n_batches, repeats):
    """Section 2c: each ``(name, n_trees)`` forest's stream with ``n_jobs`` 1 and 2,
    glibc's default malloc and :data:`TUNED_MALLOC`, each run a fresh process (best
    wall time of ``repeats`` interleaved runs, with that run's CPU times and faults)."""
    runs = {}
    configs = [(name, n_trees, malloc, n_jobs) for name, n_trees in forests
               for malloc in ("default", "tuned") for n_jobs in (1, 2)]
    for _ in range(repeats):
        for name, n_trees, malloc, n_jobs in configs:
            env = dict(os.environ)
            for key in TUNED_MALLOC:
                env.pop(key, None)
            if malloc == "tuned":
                env.update(TUNED_MALLOC)
            out = subprocess.run(
                [sys.executable, __file__, "--allocator-child", name, str(n_jobs),
                 str(n_trees), str(n_rows or 0), str(n_batches)],
                capture_output=True, text=True, env=env, check=True)
            result = json.loads(out.stdout.strip().splitlines()[-1])
            key = (name, n_trees, malloc, n_jobs)
            if key not in runs or result["wall"] < runs[key]["wall"]:
                runs[key] = result
    rows = []
    for name, n_trees in forests:
        for malloc in ("default", "tuned"):
            one, two = runs[name, n_trees, malloc, 1], runs[name, n_trees, malloc, 2]
            label = "glibc default" if malloc == "default" else "one arena, memory kept"
            for n_jobs, r in ((1, one), (2, two)):
                rows.append([f"{name}({n_trees})", label, str(n_jobs), fmt_seconds(r["wall"]),
                             fmt_seconds(r["user"]), fmt_seconds(r["sys"]),
                             f"{r['faults']:,}",
                             fmt_ratio(one["wall"] / two["wall"]) if n_jobs == 2 else "-"])
    return rows


def allocator_section(report, forests, n_rows, n_batches, repeats):
    progress("the C allocator")
    report.section(
        f"2c. Page faults and the C allocator: partial_fit in {n_batches} mini-batches, "
        "each run a fresh process",
        markdown_table(["forest", "malloc", "n_jobs", "wall", "user CPU", "system CPU",
                        "page faults", "speed-up"],
                       allocator_rows(forests, n_rows, n_batches, repeats)),
        f"Best wall time of {repeats} interleaved runs, with that run's CPU times and "
        "minor page faults (getrusage of the process, the untimed first stream "
        "excluded). 'one arena, memory kept': " + ", ".join(
            f"{k}={v}" for k, v in TUNED_MALLOC.items()) + ", set in the environment "
        "before Python starts. The trees, and so the results, are the same.")


# ------------------------------------------------------------------ main
def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--allocator-child":
        name, n_jobs, n_trees, n_rows, n_batches = sys.argv[2:7]
        allocator_child(name, int(n_jobs), int(n_trees), int(n_rows), int(n_batches))
        return
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=None,
                        help="interleaved runs per timing, best kept (default 3, quick 3)")
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask section")
    parser.add_argument("--allocator-only", action="store_true",
                        help="only section 2c (the C allocator), in "
                             "results/bench_parallel_allocator.md")
    args = parser.parse_args()
    quick = args.quick
    repeats = args.repeats or 3
    n_trees = 20 if quick else 100
    n_rows = 6000 if quick else None
    n_batches = 5 if quick else 10
    amf_trees = 10 if quick else 50
    report = Report("bench_parallel", "Parallel training: threads and Dask", args,
                    suffix="_allocator" if args.allocator_only else "")
    if args.allocator_only:
        allocator_section(report, [("MF", n_trees), ("AMF", amf_trees)], n_rows, n_batches,
                          repeats)
        report.finish()
        return

    from mondrianlearn import MondrianForestClassifier

    try:
        from mondrianlearn import AMFClassifier
    except ImportError:
        AMFClassifier = None

    progress("loading letter")
    X, y, X_test, _ = load_scaled("letter")
    if n_rows is not None:
        X, y = X[:n_rows], y[:n_rows]
    warm_up()
    n_test = X_test.shape[0]

    progress("calibration")
    calibration_before = calibration(repeats)
    progress("threads: MondrianForestClassifier")
    rows = thread_rows(f"MondrianForestClassifier({n_trees})",
                       lambda n_jobs: MondrianForestClassifier(n_trees, n_jobs=n_jobs,
                                                               random_state=0),
                       X, y, X_test, n_batches, repeats)
    if AMFClassifier is not None:
        progress("threads: AMFClassifier")
        try:
            rows += thread_rows(f"AMFClassifier({amf_trees})",
                                lambda n_jobs: AMFClassifier(amf_trees, n_jobs=n_jobs,
                                                             random_state=0),
                                X, y, X_test, n_batches, repeats)
        except Exception as error:  # noqa: BLE001 - another module's failure is reported
            rows.append([f"AMFClassifier({amf_trees})", f"failed: {error!r}"[:60],
                         "-", "-", "-", "-", "-"])
            AMFClassifier = None
    progress("threads: scikit-learn")
    rows += sklearn_rows(X, y, n_trees, repeats)
    calibration_after = calibration(repeats)
    report.section(
        f"1. Threads: n_jobs=2 against n_jobs=1 on letter ({X.shape[0]} training rows, "
        f"partial_fit in {n_batches} mini-batches, predict on {n_test} rows)",
        markdown_table(["estimator", "operation", "n_jobs=1", "n_jobs=2", "speed-up",
                        f">= {TARGET}x", "same predictions"], rows),
        f"Best of {repeats} interleaved runs each. The machine is shared: two threads "
        f"of a pure compiled loop (no Python, no memory traffic) got "
        f"{fmt_ratio(calibration_before)} before and {fmt_ratio(calibration_after)} "
        f"after these runs (load average {os.getloadavg()[0]:.1f}), which bounds "
        "what any estimator can show here. river has no multi-core training.")

    progress("why: kernel share")
    import mondrianlearn.forest._base as mf_base

    mf_kernels = ["sample_tree", "learn_forest_rows", "accumulate_new_nodes",
                  "draw_multiplicities", "close_pending_blocks"]
    why = []

    def add(name, operation, tree_module, kernel_modules, work):
        share, per_tree, bound = cpu_shares(tree_module, kernel_modules, work)
        why.append([name, operation, f"{100 * per_tree:.1f}%", f"{100 * share:.1f}%",
                    fmt_ratio(bound)])

    mf_name = f"MondrianForestClassifier({n_trees})"
    add(mf_name, "fit", mf_base, {mf_base: mf_kernels},
        lambda: MondrianForestClassifier(n_trees, n_jobs=1, random_state=0).fit(X, y))
    add(mf_name, "partial_fit", mf_base, {mf_base: mf_kernels},
        lambda: stream(MondrianForestClassifier(n_trees, n_jobs=1, random_state=0),
                       X, y, n_batches))
    if AMFClassifier is not None:
        import mondrianlearn.amf._base as amf_base
        import mondrianlearn.amf.classifier as amf_classifier

        add(f"AMFClassifier({amf_trees})", "fit = partial_fit", amf_base,
            {amf_classifier: ["learn_classifier_forest"]},
            lambda: AMFClassifier(amf_trees, n_jobs=1, random_state=0).fit(X, y))
    progress("why: CPU-time speed-up")
    estimate_rows = []

    def estimate(name, operation, tree_module, make, work):
        speedup, inflation = cpu_time_speedup(tree_module, make, work, repeats)
        estimate_rows.append([name, operation, fmt_ratio(speedup), verdict(speedup >= TARGET),
                              f"{inflation:.2f}x"])

    make_mf = lambda n_jobs: MondrianForestClassifier(n_trees, n_jobs=n_jobs,  # noqa: E731
                                                      random_state=0)
    estimate(mf_name, "fit", mf_base, make_mf, lambda model: model.fit(X, y))
    estimate(mf_name, "partial_fit", mf_base, make_mf,
             lambda model: stream(model, X, y, n_batches))
    if AMFClassifier is not None:
        make_amf = lambda n_jobs: AMFClassifier(amf_trees, n_jobs=n_jobs,  # noqa: E731
                                                random_state=0)
        estimate(f"AMFClassifier({amf_trees})", "fit", amf_base, make_amf,
                 lambda model: model.fit(X, y))
        estimate(f"AMFClassifier({amf_trees})", "partial_fit", amf_base, make_amf,
                 lambda model: stream(model, X, y, n_batches))
    report.section(
        "2. Why: share of single-thread CPU time inside the GIL-free kernels",
        markdown_table(["estimator", "operation", "CPU time in per-tree work",
                        "CPU time in kernels", "Amdahl bound, 2 threads"], why),
        "Per-thread CPU clocks (time.thread_time, insensitive to other processes) "
        "around every per-tree task given to map_trees and every call of the training "
        "kernels, one thread. Outside the per-tree work (validation, sample store) "
        "the code is serial; inside it, what is not a kernel (capacity growth and "
        "trimming: NumPy copies, which release the GIL only in part) is counted as "
        "serial too. The bound assumes the kernels scale perfectly; memory bandwidth "
        "shared by the two cores is not counted.")
    report.section(
        "2b. Speed-up of n_jobs=2 estimated from CPU clocks (as if both cores were free)",
        markdown_table(["estimator", "operation", "estimated speed-up", f">= {TARGET}x",
                        "CPU inflation with 2 threads"], estimate_rows),
        "cpu(n_jobs=1) / (CPU of the calling thread + CPU of the busiest joblib thread) "
        f"with n_jobs=2, median of {repeats}: the serial part, the imbalance between "
        "threads and the cost of sharing caches and memory bandwidth (stall cycles are "
        "CPU time) are in it; time spent waiting for a core or for the GIL is not. "
        "Other processes' cache pressure still inflates it a little.")

    allocator_section(report, [("MF", n_trees)] + ([("AMF", amf_trees)] if AMFClassifier
                                                   else []), n_rows, n_batches, repeats)

    if not args.no_dask:
        try:
            import distributed  # noqa: F401
        except ImportError:
            report.text("3. Dask: skipped (dask.distributed is not installed).")
        else:
            progress("Dask")
            dask_table, startup, warm = dask_rows(X, y, X_test, n_trees, n_batches)
            report.section(
                f"3. Dask LocalCluster (2 worker processes x 1 thread) against local "
                f"threads, MondrianForestClassifier({n_trees}) on letter",
                markdown_table(["mode", "fit", f"predict_proba ({n_test} rows)",
                                f"partial_fit ({n_batches} mini-batches)",
                                "predict_proba after stream", "notes"], dask_table),
                f"Ratios are against local threads. Cluster start-up {fmt_seconds(startup)} "
                f"and loading the kernels in the workers {fmt_seconds(warm)} are not "
                "included. With joblib's backend the forest stays in the client: every "
                "call ships the trees (and the sample store) to the workers and back, so "
                "it only pays off when trees are expensive relative to their size. "
                "Sharded forests keep the trees on the workers and ship only the "
                "mini-batches and the predictions.")
    report.finish()


if __name__ == "__main__":
    main()
