"""Cold start: the first fit, partial_fit and predict of each model, compile included.

Each measurement runs in a fresh Python process with its own temporary numba cache
folder (``NUMBA_CACHE_DIR``), so the user's cache is never touched. The first
process of a model starts from an empty folder, so every kernel it calls is compiled
("cold": what a new user waits for); a second process with the same folder loads the
machine code that the first one stored ("warm": every later run). Steps, on the
first rows of the bundled Elec2 stream, with default parameters:

- ``sklearn``: ``import sklearn.base`` (which every estimator's module needs: the
  floor of any import);
- ``import``: then ``from mondrianlearn import <Model>`` (what the library adds);
- ``fit``: ``fit`` of a new model;
- ``partial_fit 1``: a first ``partial_fit`` of another new model (Mondrian forests
  sample their trees in batch on it);
- ``partial_fit 2``: a second ``partial_fit`` (Mondrian forests extend the trees
  online; a call of at most 512 rows takes the per-call fast path);
- ``predict``: ``predict_proba`` (classifiers), ``predict`` (regressors) or
  ``transform`` (``MondrianKernel``), on all the rows.

Regressors learn ``nswprice`` from the other seven features. Every online model
family is measured: the Mondrian forests, AMF, the Mondrian kernel models and
boosting. The tables give the best of ``--repeats`` processes for each cell (each
cold process with a new empty folder), in CPU time of the process (compiling is
single-threaded, so on an idle machine CPU and wall time agree; CPU time is less
disturbed by other processes) and in wall time. Run
``python benchmarks/bench_cold_start.py`` (about 10 minutes on 2 cores) or
``--quick`` (one process per cell).

``--installed`` adds what a new user meets after ``pip install .``: the package is
built as pip builds it (``setup.py build_py`` on a copy of the sources, whose hook
compiles the common path's kernels into the built package, ``mondrianlearn.precompile``)
and each model's first process runs from the built folder with numba's cache next to
its sources, as in an installed package. The build's seconds with and without that
step are reported too: the time the installation spends compiling.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import Report, fmt_ratio, fmt_seconds, make_parser, markdown_table, progress

MODELS = {
    "MondrianForestClassifier": "classifier",
    "AMFClassifier": "classifier",
    "MondrianForestRegressor": "regressor",
    "AMFRegressor": "regressor",
    "MondrianKernelClassifier": "classifier",
    "MondrianKernelRegressor": "regressor",
    "MondrianKernel": "transformer",
    "MondrianBoostingClassifier": "classifier",
}
STEPS = ("sklearn", "import", "fit", "partial_fit 1", "partial_fit 2", "predict")
WORK = ("fit", "partial_fit 1", "partial_fit 2", "predict")
TARGETS = {"MondrianForestClassifier": 8.0, "AMFClassifier": 8.0}
"""Cold-start targets (seconds of fit + partial_fit + predict_proba)."""


def child(name, n_rows):
    """Run the steps in this process; print the seconds of each as JSON."""
    times, cpu = {}, {}

    def step(key, function):
        tic, tic_cpu = time.perf_counter(), time.process_time()
        result = function()
        times[key] = time.perf_counter() - tic
        cpu[key] = time.process_time() - tic_cpu
        return result

    import numpy as np

    step("sklearn", lambda: __import__("sklearn.base"))
    model_class = step("import", lambda: getattr(__import__("mondrianlearn"), name))
    from mondrianlearn.datasets import load_electricity

    X, labels = load_electricity(n_samples=n_rows)
    if MODELS[name] == "classifier":
        y = labels
    else:
        y = X[:, 3].copy()
        X = np.delete(X, 3, axis=1)
    half = n_rows // 2

    step("fit", lambda: model_class(random_state=0).fit(X, y))
    model = model_class(random_state=0)
    step("partial_fit 1", lambda: model.partial_fit(X[:half], y[:half]))
    step("partial_fit 2", lambda: model.partial_fit(X[half:], y[half:]))
    predict = {"classifier": "predict_proba", "regressor": "predict",
               "transformer": "transform"}[MODELS[name]]
    step("predict", lambda: getattr(model, predict)(X))
    print(json.dumps({"wall": times, "cpu": cpu}))


def run_child(name, n_rows, cache_dir, source=None):
    """Run :func:`child` in a fresh process with ``cache_dir`` as numba's cache and
    the library that this process imports first on the path; with ``source`` (a
    built package's folder), that library instead and numba's cache next to its
    sources (``cache_dir`` None)."""
    if source is None:
        import mondrianlearn

        source = str(Path(mondrianlearn.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH")) if p)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = path
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    proc = subprocess.run([sys.executable, __file__, "--child", name, "--rows", str(n_rows)],
                          env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{name} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def build_package(folder, precompile=True):
    """Build the package from the repository into ``folder`` as pip does
    (``_build/local_build.py``); returns ``(built folder, wall seconds, CPU seconds
    of the build's processes)``."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_build"))
    from local_build import build_env
    from local_build import build_package as build

    env = build_env(MONDRIANLEARN_PRECOMPILE="1" if precompile else "0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    tic = time.perf_counter()
    lib = build(folder, env)
    wall = time.perf_counter() - tic
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return str(lib), wall, cpu


def best(runs):
    return {key: min(run[key] for run in runs) for key in STEPS}


def work_seconds(times):
    return sum(times[k] for k in WORK)


def table(results, with_target):
    headers = ["model", *STEPS, "fit + partial_fit + predict", "total"]
    if with_target:
        headers.append("target")
    rows = []
    for name, times in results.items():
        work = work_seconds(times)
        row = [name, *(fmt_seconds(times[k]) for k in STEPS), fmt_seconds(work),
               fmt_seconds(sum(times[k] for k in STEPS))]
        if with_target:
            target = TARGETS.get(name)
            row.append("" if target is None else
                       f"<= {target:.0f} s: {'yes' if work <= target else 'MISSED'}")
        rows.append(row)
    return markdown_table(headers, rows)


def ratio_table(cold, warm):
    rows = [[name, fmt_seconds(work_seconds(cold[name])), fmt_seconds(work_seconds(warm[name])),
             fmt_ratio(work_seconds(cold[name]) / max(work_seconds(warm[name]), 1e-9))]
            for name in cold]
    return markdown_table(["model", "cold", "warm", "cold / warm"], rows)


def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS),
                        help="models to measure (default: all)")
    parser.add_argument("--rows", type=int, default=200, help="rows of Elec2 (default 200)")
    parser.add_argument("--repeats", type=int, default=2,
                        help="processes per model and cache state; the best is kept")
    parser.add_argument("--suffix", default="",
                        help="appended to the results file's name")
    parser.add_argument("--installed", action="store_true",
                        help="also measure the first use after pip install . (the build "
                             "compiles the common path's kernels)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.repeats = 1
    if args.child:
        child(args.child, args.rows)
        return
    report = Report("bench_cold_start", "Cold start: first calls with an empty numba cache",
                    args, suffix=args.suffix)
    cold, warm = {"wall": {}, "cpu": {}}, {"wall": {}, "cpu": {}}
    for name in args.models:
        cold_runs, warm_runs = [], []
        for r in range(max(1, args.repeats)):
            with tempfile.TemporaryDirectory(prefix="coldcache-") as cache:
                progress(f"{name}: cold process {r + 1}")
                cold_runs.append(run_child(name, args.rows, cache))
                progress(f"{name}: warm process {r + 1}")
                warm_runs.append(run_child(name, args.rows, cache))
        for clock in ("wall", "cpu"):
            cold[clock][name] = best([run[clock] for run in cold_runs])
            warm[clock][name] = best([run[clock] for run in warm_runs])
    note = (f"{args.rows} rows of Elec2, default parameters, best of {args.repeats} "
            "processes per cell. Cold: fresh process, empty numba cache. "
            "Warm: fresh process, the cache filled by the cold one. `sklearn` is "
            "`import sklearn.base` alone; `import` is what importing the model adds.")
    report.section("Cold (empty numba cache), CPU time of the process",
                   table(cold["cpu"], True), note)
    report.section("Cold, wall time", table(cold["wall"], True),
                   "Compiling is single-threaded: on an idle machine wall and CPU time "
                   "agree; wall time is more disturbed by other processes.")
    report.section("Warm (numba cache filled), CPU time", table(warm["cpu"], False))
    report.section("Warm, wall time", table(warm["wall"], False))
    report.section("Cold against warm: fit + partial_fit + predict, CPU time",
                   ratio_table(cold["cpu"], warm["cpu"]))
    if args.installed:
        installed_section(report, args)
    report.finish()


def installed_section(report, args):
    """First use after ``pip install .``, and what the build spends compiling."""
    with tempfile.TemporaryDirectory(prefix="plainbuild-") as folder:
        progress("build without the kernels (MONDRIANLEARN_PRECOMPILE=0)")
        _, plain_wall, plain_cpu = build_package(folder, precompile=False)
    installed = {"wall": {}, "cpu": {}}
    with tempfile.TemporaryDirectory(prefix="build-") as folder:
        progress("build with the kernels compiled")
        lib, build_wall, build_cpu = build_package(folder)
        for name in args.models:
            runs = []
            for r in range(max(1, args.repeats)):
                progress(f"{name}: first process after the build {r + 1}")
                runs.append(run_child(name, args.rows, None, source=lib))
            for clock in ("wall", "cpu"):
                installed[clock][name] = best([run[clock] for run in runs])
    report.section(
        "After pip install . (kernels compiled by the build), CPU time",
        table(installed["cpu"], False),
        "Each model's first process runs from the built package, numba's cache next to "
        "its sources as in an installed package (no NUMBA_CACHE_DIR): what a new user "
        f"meets after `pip install .`. Best of {args.repeats} processes per cell. The "
        f"build took {build_wall:.1f} s ({build_cpu:.1f} s of CPU) with the kernels "
        f"compiled and {plain_wall:.1f} s ({plain_cpu:.1f} s) without "
        "(MONDRIANLEARN_PRECOMPILE=0), besides pip's own work (the build environment, "
        "whose packages are the library's dependencies). The target applies to the "
        "empty cache above.")


if __name__ == "__main__":
    main()
