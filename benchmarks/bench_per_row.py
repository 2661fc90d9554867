"""Per-row cost against river: one row per call, side by side in one run.

Every model has 10 trees, runs on one thread (``n_jobs=1``; BLAS and OpenMP limited
to one thread) and has a fixed seed. Each stream is used in its order: the first
``--warm-rows`` rows (300) are learned first, untimed, by every model (in one
``partial_fit`` call for ours, ``learn_one`` row by row for river and the adapters),
then the next ``--rows`` rows (2,000) are learned one row per call and timed, then
the models, which have now seen the same prefix, predict the following ``--rows``
rows one row per call. river may be timed on fewer rows (``--river-rows``); its rate
is then taken on the first rows of the same stretch and it learns the rest untimed
before predicting. A rate is rows per CPU second of this process, the best of
``--repeats`` runs (5), each learning run starting again from the warmed-up state;
the runs of all models on a stream are interleaved (see ``learn_rates``).
Before anything is timed, every model is run once on a few rows so that numba's
kernels are compiled (or loaded from the cache) outside the timings.

Measures (targets, as ours / river rows per second in the same run):

- ``partial_fit(X[i:i+1], y[i:i+1])`` of ``AMFClassifier`` and
  ``MondrianForestClassifier`` against river ``forest.AMFClassifier.learn_one``
  (>= 15x), and their ``predict_proba(X[i:i+1])`` against ``predict_proba_one``
  (>= 5x), on Elec2 (bundled with the library) and river's Phishing;
- the river adapters ``mondrianlearn.river.AMFClassifier`` and
  ``MondrianForestClassifier``: ``learn_one`` (>= 10x) and ``predict_proba_one``
  (>= 4x) on the same dict rows;
- ``partial_fit`` in mini-batches of 100 rows on letter (training set, min-max
  scaled) against river's ``learn_one`` over the same rows (>= 40x); skipped when
  the benchmark datasets are absent;
- ``AMFRegressor`` and ``MondrianForestRegressor`` ``partial_fit`` of one row against
  river ``forest.AMFRegressor.learn_one`` (>= 15x) on Elec2 with ``nswprice``
  (column 3) as the target and the 7 other columns as features;
- for information only: ``MondrianKernelClassifier``/``Regressor`` (10 trees) and
  ``MondrianBoostingClassifier`` ``partial_fit`` of one row, and that of
  ``AMFClassifier`` and ``MondrianForestClassifier`` with a ``sample_weight`` per
  row (uniform in [0.5, 2], seeded).

Run ``python benchmarks/bench_per_row.py`` (1-2 minutes on 2 cores once the kernels are
compiled) or ``--quick`` (about 15 s).
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    Report,
    fmt_ratio,
    markdown_table,
    minmax_scale,
    progress,
    timed_cpu,
    verdict,
    warm_up,
)

N_TREES = 10
BATCH = 100
TARGETS = {"learn": 15.0, "predict": 5.0, "adapter learn": 10.0, "adapter predict": 4.0,
           "batch": 40.0, "regression": 15.0}
ELEC2_TARGET = 3  # nswprice


# ------------------------------------------------------------------- the models
class Ours:
    """A scikit-learn-style model of the library fed with NumPy rows."""

    def __init__(self, label, make, X, y, classes=None):
        self.label, self.make, self.X, self.y, self.classes = label, make, X, y, classes

    def warm(self, n):
        model = self.make()
        if self.classes is None:
            model.partial_fit(self.X[:n], self.y[:n])
        else:
            model.partial_fit(self.X[:n], self.y[:n], classes=self.classes)
        return model

    def learn(self, model, start, stop):
        X, y = self.X, self.y
        for i in range(start, stop):
            model.partial_fit(X[i:i + 1], y[i:i + 1])
        return model

    def learn_batches(self, model, start, stop):
        X, y = self.X, self.y
        for s in range(start, stop, BATCH):
            model.partial_fit(X[s:min(s + BATCH, stop)], y[s:min(s + BATCH, stop)])
        return model

    def predict(self, model, start, stop):
        X = self.X
        for i in range(start, stop):
            model.predict_proba(X[i:i + 1])


class Weighted(Ours):
    """``Ours`` with a ``sample_weight`` per row (uniform in [0.5, 2], seeded)."""

    def __init__(self, label, make, X, y, classes=None):
        super().__init__(label, make, X, y, classes)
        self.weights = np.random.RandomState(0).uniform(0.5, 2.0, size=len(y))

    def learn(self, model, start, stop):
        X, y, w = self.X, self.y, self.weights
        for i in range(start, stop):
            model.partial_fit(X[i:i + 1], y[i:i + 1], sample_weight=w[i:i + 1])
        return model


class RiverStyle:
    """A river model (river's own or the library's adapters) fed with dict rows."""

    def __init__(self, label, make, rows, y):
        self.label, self.make, self.rows, self.y = label, make, rows, list(y)

    def warm(self, n):
        return self.learn(self.make(), 0, n)

    def learn(self, model, start, stop):
        rows, y = self.rows, self.y
        for i in range(start, stop):
            model.learn_one(rows[i], y[i])
        return model

    def predict(self, model, start, stop):
        rows = self.rows
        for i in range(start, stop):
            model.predict_proba_one(rows[i])


def as_dicts(X):
    keys = [f"x{j}" for j in range(X.shape[1])]
    return [dict(zip(keys, row)) for row in X.tolist()]


def compile_kernels(spec, n_warm):
    """One small untimed run of every code path timed later (numba compilation)."""
    model = spec.warm(min(n_warm, 50))
    spec.learn(model, 50, 55)
    if isinstance(spec, Ours) and spec.classes is not None:
        spec.learn_batches(model, 55, 55 + BATCH)
        spec.predict(model, 55, 57)
    elif not isinstance(spec, Ours):
        spec.predict(model, 55, 57)


# --------------------------------------------------------------------- timing
def learn_rates(runs, n_warm, repeats, batches=False):
    """``{key: (rows per CPU second, model)}`` for ``runs``, a list of ``(key, spec,
    n_rows)``: each rate is the best of ``repeats`` runs learning rows ``n_warm ..
    n_warm + n_rows`` from a fresh warmed-up model (prepared untimed); with
    ``batches``, the library's models learn them in mini-batches of ``BATCH``.

    The runs are interleaved: each round times every model once, in turn. The
    shared machine has slow spells lasting seconds, in which the same pure-Python
    loop runs markedly slower; timing one model's repeats back to back can put all
    of them in a spell and its competitor's outside it, so that the ratio measures
    the machine. Interleaved, every model gets its chance at the fast state.
    """
    best = {}
    for _ in range(max(1, repeats)):
        for key, spec, n_rows in runs:
            model = spec.warm(n_warm)
            # river's models always learn one row per call
            run = spec.learn_batches if batches and isinstance(spec, Ours) else spec.learn
            _, _, cpu = timed_cpu(run, model, n_warm, n_warm + n_rows)
            if key not in best or n_rows / cpu > best[key][0]:
                best[key] = (n_rows / cpu, model)
    return best


def predict_rates(runs, start, repeats):
    """``{key: rows per CPU second}`` for ``runs``, a list of ``(key, spec, model,
    n_rows)`` predicting rows ``start .. start + n_rows`` one per call: the best of
    ``repeats`` interleaved rounds (see :func:`learn_rates`)."""
    best = {}
    for _ in range(max(1, repeats)):
        for key, spec, model, n_rows in runs:
            _, _, cpu = timed_cpu(spec.predict, model, start, start + n_rows)
            best[key] = max(best.get(key, 0.0), n_rows / cpu)
    return best


def row(measure, dataset, ours, river, target):
    ratio = ours / river
    return [measure, dataset, f"{ours:,.0f}", f"{river:,.0f}", fmt_ratio(ratio),
            f">= {target:g}x" if target else "-",
            verdict(ratio >= target) if target else "-"]


# ------------------------------------------------------------------- datasets
def load_elec2(n):
    from mondrianlearn.datasets import load_electricity

    X, y = load_electricity(n)
    return X, y


def load_phishing():
    from river import datasets

    rows, labels = zip(*datasets.Phishing())
    keys = list(rows[0])
    X = np.array([[float(r[k]) for k in keys] for r in rows])
    return X, np.array(labels, dtype=np.int64)


def sizes(n_available, args):
    """Warm-up, learning and prediction row counts fitting in ``n_available`` rows."""
    n_warm = args.warm_rows
    n_learn = min(args.rows, (n_available - n_warm) // 2)
    n_pred = min(args.rows, n_available - n_warm - n_learn)
    return n_warm, n_learn, n_pred


# ---------------------------------------------------------- classification
def classification_rows(name, X, y, args):
    from river import forest

    import mondrianlearn.river as adapters
    from mondrianlearn import (
        AMFClassifier,
        MondrianBoostingClassifier,
        MondrianForestClassifier,
        MondrianKernelClassifier,
    )

    seed, repeats = args.seed, args.repeats
    n_warm, n_learn, n_pred = sizes(len(X), args)
    n_river, n_river_pred = min(n_learn, args.river_rows), min(n_pred, args.river_rows)
    classes = np.unique(y)
    rows = as_dicts(X)
    labels = y.tolist()
    ours = {
        "AMFClassifier": Ours("AMFClassifier", lambda: AMFClassifier(
            N_TREES, random_state=seed, n_jobs=1), X, y, classes),
        "MondrianForestClassifier": Ours("MondrianForestClassifier",
                                         lambda: MondrianForestClassifier(
                                             N_TREES, random_state=seed, n_jobs=1),
                                         X, y, classes),
    }
    info = {}
    if hasattr(MondrianKernelClassifier, "partial_fit"):
        info["MondrianKernelClassifier (n_trees=10)"] = Ours(
            "kernel", lambda: MondrianKernelClassifier(N_TREES, random_state=seed, n_jobs=1),
            X, y, classes)
    for label, make in (("AMFClassifier", AMFClassifier),
                        ("MondrianForestClassifier", MondrianForestClassifier)):
        info[f"{label} with `sample_weight`"] = Weighted(
            f"{label} weighted", lambda make=make: make(N_TREES, random_state=seed, n_jobs=1),
            X, y, classes)
    if hasattr(MondrianBoostingClassifier, "partial_fit"):
        info["MondrianBoostingClassifier"] = Ours(
            "boosting", lambda: MondrianBoostingClassifier(N_TREES, random_state=seed,
                                                           n_jobs=1), X, y, classes)
    adapted = {
        "mondrianlearn.river.AMFClassifier": RiverStyle(
            "adapter AMF", lambda: adapters.AMFClassifier(N_TREES, seed=seed), rows, labels),
        "mondrianlearn.river.MondrianForestClassifier": RiverStyle(
            "adapter MF", lambda: adapters.MondrianForestClassifier(N_TREES, seed=seed),
            rows, labels),
    }
    river = RiverStyle("river", lambda: forest.AMFClassifier(n_estimators=N_TREES, seed=seed),
                       rows, labels)
    for spec in list(ours.values()) + list(info.values()) + list(adapted.values()):
        compile_kernels(spec, n_warm)

    progress(f"{name}: learning, {repeats} interleaved round(s) of "
             f"{1 + len(ours) + len(adapted) + len(info)} models")
    runs = [("river", river, n_river)] + [
        (label, spec, n_learn) for label, spec in {**ours, **adapted, **info}.items()]
    learned = learn_rates(runs, n_warm, repeats)
    river_learn, river_model = learned["river"]
    river.learn(river_model, n_warm + n_river, n_warm + n_learn)
    start = n_warm + n_learn
    progress(f"{name}: predicting")
    predicted = predict_rates(
        [("river", river, river_model, n_river_pred)]
        + [(label, spec, learned[label][1], n_pred)
           for label, spec in {**ours, **adapted}.items()], start, repeats)
    river_pred = predicted["river"]

    learn_rows = [row(f"`partial_fit` 1 row, {label}", name, learned[label][0], river_learn,
                      TARGETS["learn"]) for label in ours]
    pred_rows = [row(f"`predict_proba` 1 row, {label}", name, predicted[label], river_pred,
                     TARGETS["predict"]) for label in ours]
    adapter_learn = [row(f"`learn_one`, {label}", name, learned[label][0], river_learn,
                         TARGETS["adapter learn"]) for label in adapted]
    adapter_pred = [row(f"`predict_proba_one`, {label}", name, predicted[label], river_pred,
                        TARGETS["adapter predict"]) for label in adapted]
    info_rows = [row(f"(info) `partial_fit` 1 row, {label}", name, learned[label][0],
                     river_learn, None) for label in info]
    note = (f"{name}: {n_warm} warm-up rows, {n_learn} rows learned one per call "
            f"(river timed on the first {n_river}), {n_pred} rows predicted "
            f"(river: {n_river_pred}).")
    return learn_rows + pred_rows + adapter_learn + adapter_pred + info_rows, note


# ------------------------------------------------------------------- letter
def letter_rows(args):
    from river import forest

    from mondrianlearn import AMFClassifier, MondrianForestClassifier
    from mondrianlearn.datasets import DatasetNotFoundError, benchmark_data_home, load_benchmark

    home = benchmark_data_home()
    try:
        if home is None:
            raise DatasetNotFoundError("no ../shared/datasets folder and no "
                                       "$MONDRIANLEARN_DATA")
        data = load_benchmark("letter")
    except DatasetNotFoundError as exc:
        reason = f"letter (mini-batches) skipped: the dataset was not found ({exc})."
        print(reason, flush=True)
        return [], reason
    seed, repeats = args.seed, args.repeats
    X = np.asarray(data["X_train"], dtype=np.float64)
    X, _ = minmax_scale(X, X[:1])
    y = np.asarray(data["y_train"]).astype(np.int64)
    n_warm = args.warm_rows
    n_learn = min(args.rows, len(X) - n_warm)
    n_river = min(n_learn, args.river_rows)
    X, y = X[:n_warm + n_learn], y[:n_warm + n_learn]
    classes = np.unique(y)
    river = RiverStyle("river", lambda: forest.AMFClassifier(n_estimators=N_TREES, seed=seed),
                       as_dicts(X), y.tolist())
    ours = {}
    for label, make in (("AMFClassifier", lambda: AMFClassifier(
            N_TREES, random_state=seed, n_jobs=1)),
            ("MondrianForestClassifier", lambda: MondrianForestClassifier(
                N_TREES, random_state=seed, n_jobs=1))):
        ours[label] = Ours(label, make, X, y, classes)
        compile_kernels(ours[label], n_warm)
    progress(f"letter: river AMFClassifier one row per call ({n_river} rows), ours in "
             f"mini-batches of {BATCH}, {repeats} interleaved round(s)")
    best = {key: rate for key, (rate, _) in learn_rates(
        [("river", river, n_river)] + [(label, spec, n_learn) for label, spec in ours.items()],
        n_warm, repeats, batches=True).items()}
    out = [row(f"`partial_fit` mini-batches of {BATCH}, {label}", "letter", best[label],
               best["river"], TARGETS["batch"]) for label in ours]
    note = (f"letter (training set, min-max scaled, file order): {n_warm} warm-up rows, "
            f"then {n_learn} rows in mini-batches of {BATCH} (river: `learn_one` over "
            f"the first {n_river} of them).")
    return out, note


# ---------------------------------------------------------------- regression
def regression_rows(X_all, args):
    from river import forest

    from mondrianlearn import AMFRegressor, MondrianForestRegressor, MondrianKernelRegressor

    seed, repeats = args.seed, args.repeats
    y = X_all[:, ELEC2_TARGET].copy()
    X = np.delete(X_all, ELEC2_TARGET, axis=1)
    n_warm, n_learn, _ = sizes(len(X), args)
    n_river = min(n_learn, args.river_rows)
    river = RiverStyle("river", lambda: forest.AMFRegressor(n_estimators=N_TREES, seed=seed),
                       as_dicts(X), y.tolist())
    models = [("AMFRegressor", lambda: AMFRegressor(N_TREES, random_state=seed, n_jobs=1),
               TARGETS["regression"]),
              ("MondrianForestRegressor", lambda: MondrianForestRegressor(
                  N_TREES, random_state=seed, n_jobs=1), TARGETS["regression"])]
    if hasattr(MondrianKernelRegressor, "partial_fit"):
        models.append(("MondrianKernelRegressor (n_trees=10)", lambda: MondrianKernelRegressor(
            N_TREES, random_state=seed, n_jobs=1), None))
    specs = {label: Ours(label, make, X, y) for label, make, _ in models}
    for spec in specs.values():
        compile_kernels(spec, n_warm)
    progress(f"Elec2 regression: river AMFRegressor ({n_river} rows) and "
             f"{len(models)} models, {repeats} interleaved round(s)")
    learned = learn_rates([("river", river, n_river)]
                          + [(label, spec, n_learn) for label, spec in specs.items()],
                          n_warm, repeats)
    out = [row(f"{'' if target else '(info) '}`partial_fit` 1 row, {label}",
               "Elec2 (nswprice)", learned[label][0], learned["river"][0], target)
           for label, _, target in models]
    note = (f"Elec2 (nswprice): regression on the Elec2 stream, target column 3 "
            f"(nswprice), features the 7 other columns; {n_warm} warm-up rows, {n_learn} "
            f"rows learned one per call (river: the first {n_river} of them, "
            f"`forest.AMFRegressor.learn_one`).")
    return out, note


# ----------------------------------------------------------------------- main
def commit_line():
    """Which script, at which commit, timed which copy of the library."""
    import mondrianlearn

    def git(where, *cmd):
        try:
            done = subprocess.run(["git", "-C", str(where), *cmd], capture_output=True,
                                  text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""

    here = Path(__file__).resolve().parent
    package = Path(mondrianlearn.__file__).resolve().parent
    line = (f"Script `benchmarks/{Path(__file__).name}` at commit "
            f"{git(here, 'rev-parse', '--short', 'HEAD') or 'unknown'}; mondrianlearn "
            f"{mondrianlearn.__version__} imported from `{package}`")
    top = git(package, "rev-parse", "--show-toplevel")
    if not top:
        return line + " (not a git checkout)."
    dirty = git(package, "status", "--porcelain", "--", ".")
    state = (f"with uncommitted changes in {len(dirty.splitlines())} file(s) of the package"
             if dirty else "package clean")
    return line + f", commit {git(package, 'rev-parse', '--short', 'HEAD')} ({state})."


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer rows and a single run per rate (about 15 s)")
    parser.add_argument("--rows", type=int, default=None,
                        help="rows learned (and rows predicted) per measure "
                             "(default 2000, --quick 400)")
    parser.add_argument("--river-rows", type=int, default=None,
                        help="rows on which river is timed (default: as --rows)")
    parser.add_argument("--warm-rows", type=int, default=300,
                        help="rows learned untimed before timing (default 300)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="runs per rate, the best is kept (default 5, --quick 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-save", action="store_true",
                        help="do not write benchmarks/results/bench_per_row.md")
    args = parser.parse_args()
    if args.rows is None:
        args.rows = 400 if args.quick else 2000
    if args.river_rows is None:
        args.river_rows = args.rows
    if args.repeats is None:
        args.repeats = 1 if args.quick else 5

    report = Report("bench_per_row", "Per-row cost against river", args)
    report.text(commit_line())
    warm_up()
    import river

    X_elec, y_elec = load_elec2(args.warm_rows + 2 * args.rows)
    table_rows, notes = [], []
    for name, (X, y) in (("Elec2", (X_elec, y_elec)), ("Phishing", load_phishing())):
        rows, note = classification_rows(name, X, y, args)
        table_rows += rows
        notes.append(note)
    rows, note = letter_rows(args)
    table_rows += rows
    notes.append(note)
    rows, note = regression_rows(X_elec, args)
    table_rows += rows
    notes.append(note)

    table = markdown_table(["measure", "dataset", "ours (rows/s)", "river AMF (rows/s)",
                            "ratio", "target", "met"], table_rows)
    note = (f"10 trees, one thread, seed {args.seed}; river {river.__version__}. Rows per "
            f"CPU second, best of {args.repeats} run(s), the runs of all models on a stream "
            f"interleaved; ratio = ours / river AMF "
            f"(`forest.AMFClassifier`, or `forest.AMFRegressor` for the regressors) in "
            f"this run, on the same rows. One row per call: `partial_fit(X[i:i+1], "
            f"y[i:i+1])` and `predict_proba(X[i:i+1])` for ours, `learn_one` and "
            f"`predict_proba_one` on dicts for river and the adapters. Prediction rows "
            f"follow the learned rows; every model has then seen the same prefix. "
            f"(info) rows have no target; their ratio is to river AMF's `learn_one`. "
            + " ".join(notes))
    report.section("Rows per second, ours against river AMF", table, note)
    report.finish()


if __name__ == "__main__":
    main()
