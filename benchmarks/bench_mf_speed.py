"""Speed of Mondrian forests: batch fit, start-up, threads, online throughput.

1. Batch ``fit`` with one thread against scikit-learn's
   ExtraTreesClassifier(max_features=1, n_jobs=1) with the same number of trees
   (target: MF no slower than 2x), with a profile of where MF's time goes
   (compiled sampling kernel, node-array allocation/copies, the rest).
2. ``import mondrianlearn`` in a fresh process (target < 0.5 s).
3. A fit in a fresh process with numba's cache warm, letter, 10 trees (target < 2 s).
4. ``n_jobs=2`` against ``n_jobs=1`` for ``fit`` and ``partial_fit`` (and a check
   that both give the same predictions).
5. For context: online throughput (points per second) of ``partial_fit`` against
   river's ``forest.AMFClassifier.learn_one`` (when river is installed).

Usage: ``python benchmarks/bench_mf_speed.py [--quick]``.
"""

import cProfile
import pstats
import subprocess
import sys
import textwrap
import time

import numpy as np
from _common import (
    PAPER_DATASETS,
    Report,
    best_time,
    best_times,
    fmt_ratio,
    fmt_seconds,
    load_scaled,
    make_parser,
    markdown_table,
    progress,
    timed,
    verdict,
    warm_up,
)


def fit_profile(make_model, X, y):
    """Seconds of one fit spent in the sampling kernel and in node-array resizing."""
    profiler = cProfile.Profile()
    profiler.enable()
    make_model().fit(X, y)
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    total = kernel = resize = 0.0
    for (filename, _, function), (_, _, tottime, cumtime, _) in stats.items():
        total += tottime
        if function == "sample_tree" and "_additive" in filename:
            kernel += cumtime
        elif function in ("reserve", "trim") and filename.endswith("tree.py"):
            resize += cumtime
    return total, kernel, resize


def batch_speed(datasets, n_trees, repeats):
    from sklearn.ensemble import ExtraTreesClassifier

    from mondrianlearn import MondrianForestClassifier

    rows, profile_rows = [], []
    for name in datasets:
        X, y, _, _ = load_scaled(name)
        progress(f"fit speed on {name}")

        def mf():
            return MondrianForestClassifier(n_estimators=n_trees, n_jobs=1, random_state=0)

        def et():
            return ExtraTreesClassifier(n_estimators=n_trees, max_features=1, n_jobs=1,
                                        random_state=0)

        _, t_mf, c_mf = best_times(lambda: mf().fit(X, y), repeats)
        _, t_et, c_et = best_times(lambda: et().fit(X, y), repeats)
        ratio = c_mf / c_et
        rows.append([name, f"{X.shape[0]} x {X.shape[1]}", fmt_seconds(t_mf),
                     fmt_seconds(t_et), fmt_ratio(t_mf / t_et), fmt_seconds(c_mf),
                     fmt_seconds(c_et), fmt_ratio(ratio), verdict(ratio <= 2.0)])
        total, kernel, resize = fit_profile(mf, X, y)
        profile_rows.append([name, fmt_seconds(total), f"{100 * kernel / total:.0f}%",
                             f"{100 * resize / total:.0f}%",
                             f"{100 * (total - kernel - resize) / total:.0f}%"])
    return rows, profile_rows


SECTIONS = ("fit", "startup", "threads", "online")


def fresh_process(code):
    """Run ``code`` in a new interpreter; return its stdout and wall time."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return out.stdout, time.perf_counter() - start


IMPORT_CODE = textwrap.dedent("""
    import sys, time
    start = time.perf_counter()
    import mondrianlearn
    elapsed = time.perf_counter() - start
    heavy = [m for m in ("sklearn", "numba", "scipy", "pandas") if m in sys.modules]
    print(elapsed, ",".join(heavy) or "-")
""")

FIT_CODE = textwrap.dedent("""
    import time
    start = time.perf_counter()
    import numpy as np
    from mondrianlearn.datasets import load_benchmark
    data = load_benchmark("letter")
    X, y = np.asarray(data["X_train"]), np.asarray(data["y_train"])
    low, span = X.min(0), np.ptp(X, 0)
    X = (X - low) / np.where(span > 0, span, 1.0)
    loaded, cpu0 = time.perf_counter(), time.process_time()
    from mondrianlearn import MondrianForestClassifier
    imported = time.perf_counter()
    model = MondrianForestClassifier(n_estimators=10, n_jobs=1, random_state=0).fit(X, y)
    first, cpu1 = time.perf_counter(), time.process_time()
    MondrianForestClassifier(n_estimators=10, n_jobs=1, random_state=0).fit(X, y)
    second = time.perf_counter()
    print(loaded - start, first - loaded, second - first, imported - loaded, cpu1 - cpu0)
""")


def startup(repeats):
    progress("import time in fresh processes")
    _, t_python = best_time(lambda: fresh_process("pass"), repeats)
    imports, walls, heavy = [], [], "-"
    for _ in range(repeats):
        out, wall = fresh_process(IMPORT_CODE)
        seconds, heavy = out.split()
        imports.append(float(seconds))
        walls.append(wall)
    rows = [["`import mondrianlearn` (in-process clock)", fmt_seconds(min(imports)),
             fmt_seconds(float(np.median(imports))), "< 0.5 s", verdict(min(imports) < 0.5)],
            ["`python -c 'import mondrianlearn'` wall", fmt_seconds(min(walls)),
             fmt_seconds(float(np.median(walls))), "", ""],
            ["`python -c pass` wall (interpreter alone)", fmt_seconds(t_python), "", "", ""]]

    progress("fit in fresh processes (warming numba's cache first)")
    fresh_process(FIT_CODE)  # compiles into the cache if it is cold
    loads, firsts, seconds_, walls, imports_, cpus = [], [], [], [], [], []
    for _ in range(repeats):
        out, wall = fresh_process(FIT_CODE)
        load, first, second, imported, cpu = map(float, out.split())
        loads.append(load)
        firsts.append(first)
        seconds_.append(second)
        walls.append(wall)
        imports_.append(imported)
        cpus.append(cpu)
    first = min(firsts)
    rows += [["fresh process, letter, 10 trees: import estimator + first fit",
              fmt_seconds(first), fmt_seconds(float(np.median(firsts))), "< 2 s",
              verdict(first < 2.0)],
             ["  of which importing the estimator (scikit-learn, numba, kernels' modules)",
              fmt_seconds(min(imports_)), fmt_seconds(float(np.median(imports_))), "", ""],
             ["  CPU time of import + first fit", fmt_seconds(min(cpus)),
              fmt_seconds(float(np.median(cpus))), "", ""],
             ["  same process, second fit (steady state)", fmt_seconds(min(seconds_)),
              fmt_seconds(float(np.median(seconds_))), "", ""],
             ["  loading + scaling letter (not counted)", fmt_seconds(min(loads)), "", "", ""],
             ["  whole process wall time (interpreter, data, fits)", fmt_seconds(min(walls)),
              fmt_seconds(float(np.median(walls))), "", ""]]
    return rows, heavy


def thread_speedup(datasets, n_trees, n_batches, repeats):
    import gc

    from mondrianlearn import MondrianForestClassifier

    rows = []
    for name in datasets:
        X, y, Xt, _ = load_scaled(name)
        classes = np.unique(y)
        batches = np.array_split(np.random.default_rng(0).permutation(X.shape[0]), n_batches)
        progress(f"threads on {name}")
        times, probas = {}, {}
        for n_jobs in (1, 2):
            def make():
                return MondrianForestClassifier(n_estimators=n_trees, n_jobs=n_jobs,
                                                random_state=0)

            def online():
                model = make()
                for batch in batches:
                    model.partial_fit(X[batch], y[batch], classes=classes)
                return model

            for what, train in (("fit", lambda: make().fit(X, y)), ("partial_fit", online)):
                best = np.inf
                for _ in range(max(1, repeats)):
                    gc.collect()  # one forest alive at a time (usps forests are large)
                    model, seconds = timed(train)
                    best = min(best, seconds)
                    if _ < repeats - 1:
                        del model
                times[what, n_jobs] = best
                probas[what, n_jobs] = model.predict_proba(Xt)
                if what == "partial_fit":
                    _, times["predict_proba", n_jobs] = best_time(
                        lambda: model.predict_proba(Xt), repeats)  # noqa: F821 (called before del)
                del model
        for what in ("fit", "partial_fit", "predict_proba"):
            same = "" if what == "predict_proba" else (
                "yes" if np.array_equal(probas[what, 1], probas[what, 2]) else "NO")
            label = f"partial_fit x {n_batches}" if what == "partial_fit" else what
            rows.append([name, label, fmt_seconds(times[what, 1]), fmt_seconds(times[what, 2]),
                         fmt_ratio(times[what, 1] / times[what, 2]), same])
    return rows


def online_throughput(n_points, n_trees):
    """Points per second learned one at a time / by mini-batches, MF and river AMF."""
    from mondrianlearn import MondrianForestClassifier

    X, y, _, _ = load_scaled("letter")
    X, y = X[:n_points], y[:n_points]
    classes = np.unique(y)
    rows = []
    progress("online throughput")
    model = MondrianForestClassifier(n_estimators=n_trees, n_jobs=1, random_state=0)

    def one_by_one():
        for i in range(n_points):
            model.partial_fit(X[i:i + 1], y[i:i + 1], classes=classes)

    _, seconds = timed(one_by_one)
    rows.append([f"MF partial_fit, 1 point per call ({n_trees} trees, 1 thread)",
                 f"{n_points / seconds:,.0f}"])
    for size in (100, n_points):
        model = MondrianForestClassifier(n_estimators=n_trees, n_jobs=1, random_state=0)

        def by_batches(size=size, model=model):
            for start in range(0, n_points, size):
                model.partial_fit(X[start:start + size], y[start:start + size],
                                  classes=classes)

        _, seconds = timed(by_batches)
        label = "one call (batch sampling)" if size == n_points else f"{size} points per call"
        rows.append([f"MF partial_fit, {label}", f"{n_points / seconds:,.0f}"])
    try:
        from river import forest
    except ImportError:
        rows.append(["river AMFClassifier.learn_one", "river not installed"])
        return rows
    amf = forest.AMFClassifier(n_estimators=n_trees, seed=0)
    dicts = [dict(enumerate(row)) for row in X.tolist()]

    def river_learn():
        for x, label in zip(dicts, y.tolist()):
            amf.learn_one(x, label)

    _, seconds = timed(river_learn)
    rows.append([f"river forest.AMFClassifier.learn_one ({n_trees} trees)",
                 f"{n_points / seconds:,.0f}"])
    return rows


def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--n-estimators", type=int, default=None,
                        help="trees for the fit comparison (default 100, 10 with --quick)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timings keep the best of this many runs (default 3, 1 quick)")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=SECTIONS,
                        help="sections to run (default: all)")
    args = parser.parse_args()
    n_trees = args.n_estimators or (10 if args.quick else 100)
    repeats = args.repeats or (1 if args.quick else 3)
    datasets = args.datasets or PAPER_DATASETS

    warm_up()
    partial = "" if set(args.only) == set(SECTIONS) else "_" + "_".join(args.only)
    report = Report("bench_mf_speed", "Mondrian forest speed", args, suffix=partial)
    report.text("Times are the best of "
                f"{repeats} run(s) (least disturbed by other processes).")

    if "fit" in args.only:
        fit_section(report, datasets, n_trees, repeats)
    if "startup" in args.only:
        rows, heavy = startup(max(3, repeats))
        report.section("Start-up in fresh processes", markdown_table(
            ["what", "best", "median", "target", "met"], rows),
            note=f"Heavy modules loaded by `import mondrianlearn`: {heavy}.")
    if "threads" in args.only:
        thread_sets = [d for d in ("letter", "usps") if d in datasets] or list(datasets[:1])
        thread_trees = 20 if args.quick else 50
        n_batches = 20 if args.quick else 100
        rows = thread_speedup(thread_sets, thread_trees, n_batches, repeats)
        report.section(
            f"Threads: n_jobs=2 against n_jobs=1 ({thread_trees} trees)",
            markdown_table(["dataset", "operation", "n_jobs=1", "n_jobs=2", "speed-up",
                            "same predictions"], rows),
            note="Wall times: the speed-up is only meaningful when two cores are free "
                 "(see the load average above).")
    if "online" in args.only:
        rows = online_throughput(1000 if args.quick else 3000, 10)
        report.section("Online throughput on letter (points per second, for context)",
                       markdown_table(["learner", "points / s"], rows),
                       note="river learns one point per call in pure Python; MF's "
                            "partial_fit pays input validation per call, so it is meant "
                            "for mini-batches.")
    report.finish()


def fit_section(report, datasets, n_trees, repeats):
    rows, profile_rows = batch_speed(datasets, n_trees, repeats)
    report.section(
        f"Batch fit, one thread, {n_trees} trees: MF against ExtraTrees(max_features=1)",
        markdown_table(["dataset", "n x D", "MF wall", "ET-1 wall", "wall ratio",
                        "MF CPU", "ET-1 CPU", "CPU ratio", "MF <= 2x ET-1 (CPU)"], rows),
        note="With one thread, CPU time is the fit's own work; it is the fairer measure "
             "when other processes share the machine (wall time is shown too).")
    report.section(
        "Where MF's fit time goes (cProfile of one fit)",
        markdown_table(["dataset", "fit (profiled)", "sampling kernel",
                        "node-array resize/trim", "other Python"], profile_rows),
        note="The sampling kernel computes the bounding box of every node in all D "
             "features (O(n D) per tree level) where ExtraTrees(max_features=1) looks "
             "at one feature per node (O(n)); resize/trim is NumPy allocation and "
             "copying of the node arrays (each node carries a 2 D float box).")


if __name__ == "__main__":
    main()
