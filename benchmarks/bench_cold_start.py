"""Cold start: the first fit, partial_fit and predict of each model, compile included.

Each measurement runs in a fresh Python process with its own numba cache folder
(``NUMBA_CACHE_DIR``). The first process of a model starts from an empty folder, so
every kernel it calls is compiled ("cold": what a new user waits for); a second
process with the same folder loads the machine code that the first one stored
("warm": every later run). Steps, on the first rows of the bundled Elec2 stream:

- ``import``: ``from mondrianlearn import <Model>`` (and scikit-learn);
- ``fit``: ``fit`` of a new model with default parameters;
- ``partial_fit 1``: a first ``partial_fit`` of another new model (Mondrian forests
  sample their trees in batch on it);
- ``partial_fit 2``: a second ``partial_fit`` (Mondrian forests extend the trees
  online);
- ``predict``: ``predict_proba`` (classifiers) or ``predict`` (regressors).

Regressors learn ``nswprice`` from the other seven features. The tables give the best
of ``--repeats`` processes for each cell (each cold process with a new empty folder),
in wall time and in CPU time of the process (compiling is single-threaded, so CPU time
is what an idle machine would show; it is less disturbed by other processes).
``--kernel`` adds the Mondrian kernel models; ``--quick`` runs one process per cell.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from _common import Report, fmt_seconds, make_parser, markdown_table, progress

MODELS = {
    "MondrianForestClassifier": "classifier",
    "AMFClassifier": "classifier",
    "MondrianForestRegressor": "regressor",
    "AMFRegressor": "regressor",
    "MondrianKernelClassifier": "classifier",
    "MondrianKernelRegressor": "regressor",
}
DEFAULT_MODELS = list(MODELS)[:4]
STEPS = ("import", "fit", "partial_fit 1", "partial_fit 2", "predict")
TARGETS = {"MondrianForestClassifier": 8.0, "AMFClassifier": 8.0}
"""Cold-start targets of issue 16 (seconds, fit + partial_fit + predict_proba)."""


def child(name, n_rows):
    """Run the steps in this process; print the seconds of each as JSON."""
    times, cpu = {}, {}
    start, start_cpu = time.perf_counter(), time.process_time()
    import numpy as np

    import mondrianlearn
    model_class = getattr(mondrianlearn, name)
    import sklearn.base  # noqa: F401  (loaded by the estimator's module anyway)
    times["import"] = time.perf_counter() - start
    cpu["import"] = time.process_time() - start_cpu

    from mondrianlearn.datasets import load_electricity

    X, labels = load_electricity(n_samples=n_rows)
    if MODELS[name] == "classifier":
        y = labels
    else:
        y = X[:, 3].copy()
        X = np.delete(X, 3, axis=1)
    half = n_rows // 2

    def step(key, function):
        tic, tic_cpu = time.perf_counter(), time.process_time()
        result = function()
        times[key] = time.perf_counter() - tic
        cpu[key] = time.process_time() - tic_cpu
        return result

    step("fit", lambda: model_class(random_state=0).fit(X, y))
    model = model_class(random_state=0)
    step("partial_fit 1", lambda: model.partial_fit(X[:half], y[:half]))
    step("partial_fit 2", lambda: model.partial_fit(X[half:], y[half:]))
    predict = model.predict_proba if MODELS[name] == "classifier" else model.predict
    step("predict", lambda: predict(X))
    print(json.dumps({"wall": times, "cpu": cpu}))


def run_child(name, n_rows, cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    proc = subprocess.run([sys.executable, __file__, "--child", name, "--rows", str(n_rows)],
                          env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{name} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def best(runs):
    return {key: min(run[key] for run in runs) for key in STEPS}


def table(results, with_target):
    headers = ["model", *STEPS, "fit + partial_fit + predict", "total"]
    if with_target:
        headers.append("target")
    rows = []
    for name, times in results.items():
        work = sum(times[k] for k in STEPS if k != "import")
        row = [name, *(fmt_seconds(times[k]) for k in STEPS), fmt_seconds(work),
               fmt_seconds(work + times["import"])]
        if with_target:
            target = TARGETS.get(name)
            row.append("" if target is None else
                       f"<= {target:.0f} s: {'yes' if work <= target else 'MISSED'}")
        rows.append(row)
    return markdown_table(headers, rows)


def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=DEFAULT_MODELS,
                        help="models to measure (default: the forests and AMF)")
    parser.add_argument("--kernel", action="store_true",
                        help="also measure the Mondrian kernel models")
    parser.add_argument("--rows", type=int, default=200, help="rows of Elec2 (default 200)")
    parser.add_argument("--repeats", type=int, default=2,
                        help="processes per model and cache state; the best is kept")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.repeats = 1
    if args.child:
        child(args.child, args.rows)
        return
    models = list(args.models)
    if args.kernel:
        models += [m for m in MODELS if m.startswith("MondrianKernel") and m not in models]
    report = Report("bench_cold_start", "Cold start: first calls with an empty numba cache",
                    args)
    cold, warm = {"wall": {}, "cpu": {}}, {"wall": {}, "cpu": {}}
    for name in models:
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
            "Warm: fresh process, the cache filled by the cold one.")
    report.section("Cold (empty numba cache), wall time", table(cold["wall"], True), note)
    report.section("Cold, CPU time of the process", table(cold["cpu"], True),
                   "Less disturbed by other processes than wall time: compiling is "
                   "single-threaded, so on an idle machine the two agree.")
    report.section("Warm (numba cache filled), wall time", table(warm["wall"], False))
    report.finish()


if __name__ == "__main__":
    main()
