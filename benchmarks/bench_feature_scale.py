"""Feature units: raw features against the default ``feature_scale="range"`` and
alternatives, on every shared dataset, in batch and online.

A Mondrian cut picks its feature with probability proportional to the side of the
box along it, so a forest fed raw features depends on their units. The four
estimators (``MondrianForestClassifier``/``Regressor``, ``AMFClassifier``/
``Regressor``) take ``feature_scale``; this benchmark measures, with 10 trees:

- **batch**: ``fit`` on the training rows (shuffled), score the test rows. Columns:
  ``raw`` (``feature_scale=None``), ``default`` (``"range"``: units that follow the
  range of the rows learned, powers of two), and fixed scales computed from the
  training rows (``feature_scale=<array>``, the same as dividing the features):
  ``min-max`` (the range itself), ``p5-95`` (the 5-95 percentile range; the range
  where it is 0, then 1), ``std`` (the standard deviation, same fallbacks).
- **online, mini-batches of 100** and **online, one row at a time**: progressive
  validation (each batch or row is predicted, then learned) over the whole stream
  (one row at a time: the first 20,000 rows, Elec2 whole). Columns: ``raw``,
  ``default``, ``first 1000`` (the scale fixed from the first 1,000 rows, min-max or
  5-95 percentile range: raw units until then, then the 1,000 rows learned again on
  a fresh model with that scale), and ``in place`` (units that follow the range from
  the first row, every change rescaling the trees in place: the default without its
  re-sampling, for Mondrian forests, and without learning its first 256 rows again,
  for AMF).

Metrics: accuracy (classification, higher is better) and normalised RMSE (RMSE over
the standard deviation of the targets scored; regression, lower is better). Streams
are shuffled (seed 0) except Elec2 and bank, kept in their time order. Splits: the
given ones (letter, satimage, usps, dna, adult, cpu, the UCI sets' split 0, 1 and 2),
else 80/20 at random (seed 0). Batch: 3 seeds (or splits) averaged; online: seed 0.

The Elec2 section adds the persistence baseline (predict the previous label) and
the scale fixed from the first 500 rows, where the date feature, which trends,
spans 0.0003.

Run ``python benchmarks/bench_feature_scale.py`` (two to three hours on 2 cores) or
``--quick`` (small sets, a few minutes); ``--datasets`` to choose, ``--one-row`` to
limit the slow one-row-at-a-time section to some of them.
"""

import gzip
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, markdown_table, progress, warm_up  # noqa: E402

CLASSIFICATION = ("letter", "satimage", "usps", "dna", "spambase", "adult", "bank",
                  "electricity", "bananas")
REGRESSION = ("california_housing", "cpu", "kin40k", "housing", "concrete", "energy",
              "yacht", "airfoil")
UCI = ("kin40k", "housing", "concrete", "energy", "yacht", "airfoil")
TIME_ORDERED = ("electricity", "bank")
QUICK = ("yacht", "energy", "airfoil", "housing", "bananas", "electricity")
N_TREES = 10
FIRST_ROWS = 1000
ROW_LIMIT = 20000
"""One row at a time, streams stop here (Elec2 is learned whole)."""


# ------------------------------------------------------------------- datasets
def _uci(name):
    from mondrianlearn.datasets import benchmark_data_home

    folder = benchmark_data_home() / "uci_regression" / name
    with gzip.open(folder / "data.csv.gz", "rt") as f:
        data = np.loadtxt(f, delimiter=",")
    with gzip.open(folder / "test_mask.csv.gz", "rt") as f:
        masks = np.loadtxt(f, delimiter=",").astype(bool)
    return data[:, :-1], data[:, -1], masks


def load(name):
    """``{"X", "y", "splits": [(train, test) index arrays], "task"}``."""
    from mondrianlearn.datasets import load_benchmark

    task = "classification" if name in CLASSIFICATION else "regression"
    if name in UCI:
        X, y, masks = _uci(name)
        splits = [(np.flatnonzero(~masks[:, s]), np.flatnonzero(masks[:, s]))
                  for s in range(3)]
        return {"X": X, "y": y, "splits": splits, "task": task}
    data = load_benchmark(name)
    if "X_train" in data and name != "adult":
        X = np.vstack([np.asarray(data["X_train"]), np.asarray(data["X_test"])])
        y = np.concatenate([np.asarray(data["y_train"]), np.asarray(data["y_test"])])
        n = len(data["y_train"])
        split = (np.arange(n), np.arange(n, len(y)))
    else:
        X, y = np.asarray(data["X"]), np.asarray(data["y"])
        if name == "adult":
            n = len(data["y_train"])
            split = (np.arange(n), np.arange(n, len(y)))
        else:
            order = np.random.RandomState(0).permutation(len(y))
            cut = int(0.8 * len(y))
            split = (np.sort(order[:cut]), np.sort(order[cut:]))
    return {"X": np.asarray(X, dtype=np.float64), "y": y, "splits": [split] * 3,
            "task": task}


def stream(name, data, limit=None):
    X, y = data["X"], data["y"]
    if name not in TIME_ORDERED:
        order = np.random.RandomState(0).permutation(len(y))
        X, y = X[order], y[order]
    if limit is not None:
        X, y = X[:limit], y[:limit]
    return np.ascontiguousarray(X), y


# --------------------------------------------------------------------- models
def make(kind, task, seed=0, n_trees=N_TREES, n_jobs=1, **params):
    """A Mondrian forest (``kind`` "MF" or "AMF") for ``task``, default parameters
    but those given."""
    from mondrianlearn import (
        AMFClassifier,
        AMFRegressor,
        MondrianForestClassifier,
        MondrianForestRegressor,
    )

    cls = {("MF", "classification"): MondrianForestClassifier,
           ("MF", "regression"): MondrianForestRegressor,
           ("AMF", "classification"): AMFClassifier,
           ("AMF", "regression"): AMFRegressor}[kind, task]
    return cls(n_estimators=n_trees, random_state=seed, n_jobs=n_jobs, **params)


def spread(X, how):
    """Fixed scales from rows ``X``: the range, the 5-95 percentile range or the
    standard deviation; the range where that is 0, then 1."""
    full = X.max(axis=0) - X.min(axis=0)
    if how == "min-max":
        s = full.copy()
    elif how == "p5-95":
        s = np.percentile(X, 95, axis=0) - np.percentile(X, 5, axis=0)
    else:
        s = X.std(axis=0)
    s = np.where(s > 0, s, full)
    return np.where(s > 0, s, 1.0)


class FirstRows:
    """Raw units for the first rows, then a scale fixed from them (``how``); the
    rows are learned again on a fresh model with that scale."""

    def __init__(self, kind, task, seed, how, n_first=FIRST_ROWS):
        self.kind, self.task, self.seed, self.how = kind, task, seed, how
        self.n_first = n_first
        self.model = make(kind, task, seed, feature_scale=None)
        self.kept, self.fixed, self.extra = [], False, None

    def partial_fit(self, X, y, **extra):
        if self.extra is None:
            self.extra = extra  # the classes, given with the first rows
        if self.fixed:
            return self.model.partial_fit(X, y)
        self.kept.append((X, y))
        self.model.partial_fit(X, y, **extra)
        if sum(len(part[1]) for part in self.kept) >= self.n_first:
            Xk = np.vstack([part[0] for part in self.kept])
            yk = np.concatenate([part[1] for part in self.kept])
            self.model = make(self.kind, self.task, self.seed,
                              feature_scale=spread(Xk[:self.n_first], self.how))
            self.model.partial_fit(Xk, yk, **self.extra)
            self.fixed, self.kept = True, None
        return self

    def predict(self, X):
        return self.model.predict(X)


def in_place(kind, task, seed):
    """The default's units, every change rescaling the trees in place (no
    re-sampling, no first rows learned again)."""
    model = make(kind, task, seed)
    model._resamples_on_new_units = lambda: False
    model._relearns_first_rows = lambda: False
    return model


def score(task, y, prediction):
    if task == "classification":
        return float(np.mean(prediction == y))
    return float(np.sqrt(np.mean((prediction - y) ** 2)) / np.std(y))


def progressive(task, model, X, y, batch, warmup=100):
    """Test-then-train over the stream; scores the rows from ``warmup`` on."""
    extra = {"classes": np.unique(y)} if task == "classification" else {}
    predictions = []
    for start in range(0, len(y), batch):
        stop = min(start + batch, len(y))
        if start >= warmup:
            predictions.append(model.predict(X[start:stop]))
        model.partial_fit(X[start:stop], y[start:stop], **(extra if start == 0 else {}))
    first = -(-warmup // batch) * batch
    return score(task, y[first:], np.concatenate(predictions))


# ------------------------------------------------------------------- sections
BATCH_COLUMNS = ("raw", "default", "min-max", "p5-95", "std")


def batch_results(name, data):
    task = data["task"]
    out = {}
    for seed, (train, test) in enumerate(data["splits"]):
        order = np.random.RandomState(100 + seed).permutation(len(train))
        X, y = data["X"][train[order]], data["y"][train[order]]
        Xt, yt = data["X"][test], data["y"][test]
        for kind in ("MF", "AMF"):
            for column in BATCH_COLUMNS:
                if column == "default":
                    params = {}
                else:
                    params = {"feature_scale": None if column == "raw" else spread(X, column)}
                model = make(kind, task, seed, **params).fit(X, y)
                out.setdefault((kind, column), []).append(score(task, yt, model.predict(Xt)))
    return {k: float(np.mean(v)) for k, v in out.items()}


ONLINE_COLUMNS = ("raw", "default", "first 1000 min-max", "first 1000 p5-95", "in place")


def online_results(name, data, batch, columns, limit=None):
    task = data["task"]
    X, y = stream(name, data, limit)
    out, seconds = {}, {}
    for kind in ("MF", "AMF"):
        for column in columns:
            if column == "raw":
                model = make(kind, task, 0, feature_scale=None)
            elif column == "default":
                model = make(kind, task, 0)
            elif column == "in place":
                model = in_place(kind, task, 0)
            else:
                model = FirstRows(kind, task, 0, column.split()[-1])
            tic = time.process_time()
            out[kind, column] = progressive(task, model, X, y, batch)
            seconds[kind, column] = time.process_time() - tic
    return out, seconds, len(y)


def table(names, results, columns, tasks):
    rows = []
    for name in names:
        if name not in results:
            continue
        task = tasks[name]
        metric = "accuracy" if task == "classification" else "NRMSE"
        row = [name, metric]
        for kind in ("MF", "AMF"):
            values = [results[name][kind, c] for c in columns]
            best = max(values) if task == "classification" else min(values)
            row += [f"**{v:.3f}**" if v == best else f"{v:.3f}" for v in values]
        rows.append(row)
    headers = ["dataset", "metric"] + [f"{k} {c}" for k in ("MF", "AMF") for c in columns]
    return markdown_table(headers, rows)


def tally(names, results, columns, tasks, against="raw", margin=0.005):
    """How often each column beats, ties (within ``margin``) or loses to ``against``."""
    rows = []
    for kind in ("MF", "AMF"):
        for column in columns:
            if column == against:
                continue
            win = tie = loss = 0
            for name in names:
                if name not in results:
                    continue
                sign = 1 if tasks[name] == "classification" else -1
                d = sign * (results[name][kind, column] - results[name][kind, against])
                win, tie, loss = win + (d > margin), tie + (abs(d) <= margin), loss + (d < -margin)
            rows.append([kind, column, win, tie, loss])
    return markdown_table(["model", "column", f"better than {against}", "within 0.005",
                           "worse"], rows)


def elec2_section(report, data):
    task = "classification"
    X, y = stream("electricity", data)
    rows = []
    persistence_row = float(np.mean(y[101:] == y[100:-1]))
    persistence_batch = float(np.mean(np.concatenate(
        [y[s:s + 100] == y[s - 1] for s in range(100, len(y), 100)])))
    rows.append(["persistence (previous label)", "-", f"{persistence_batch:.3f}",
                 f"{persistence_row:.3f}"])
    for kind in ("MF", "AMF"):
        for label, build in (
                ("raw", lambda: make(kind, task, 0, feature_scale=None)),
                ("default", lambda: make(kind, task, 0)),
                ("first 500 min-max", lambda: FirstRows(kind, task, 0, "min-max", 500)),
                ("first 1000 min-max", lambda: FirstRows(kind, task, 0, "min-max", 1000))):
            rows.append([label, kind, f"{progressive(task, build(), X, y, 100):.3f}",
                         f"{progressive(task, build(), X, y, 1):.3f}"])
            progress(f"elec2 {kind} {label}")
    date = X[:500, 0]
    report.section(
        "Elec2 in time order: progressive accuracy",
        markdown_table(["model", "forest", "mini-batches of 100", "one row at a time"], rows),
        note=(f"The date feature spans {date.max() - date.min():.4f} in the first 500 rows "
              f"and {X[:, 0].max() - X[:, 0].min():.2f} over the stream; vicprice, "
              f"vicdemand and transfer are constant for the first "
              f"{int(np.argmax(np.any(X[:, 5:8] != X[0, 5:8], axis=1)))} rows. A scale "
              "fixed from the first rows gives the date (which trends) thousands of "
              "times the weight of the other features: every new row is then cut off "
              "at the top of the trees by date, and a row is predicted from the rows "
              "just before it. One row at a time that is the persistence baseline (the "
              "price moves in runs), not learning; in mini-batches it falls below raw "
              "units."))


def main():
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"only {', '.join(QUICK)} (a few minutes)")
    parser.add_argument("--datasets", nargs="+", choices=CLASSIFICATION + REGRESSION,
                        default=None, help="datasets to run (default: all shared ones)")
    parser.add_argument("--one-row", nargs="+", default=None, metavar="DATASET",
                        help="datasets of the one-row-at-a-time section (default: all "
                             "those run; it is the slow part, about 90%% of the time)")
    parser.add_argument("--no-save", action="store_true",
                        help="do not write benchmarks/results/bench_feature_scale.md")
    args = parser.parse_args()
    names = args.datasets or (QUICK if args.quick else CLASSIFICATION + REGRESSION)
    report = Report("bench_feature_scale", "Feature units: raw against feature_scale "
                    "(default \"range\") and alternatives", args)
    warm_up()
    tasks = {n: "classification" if n in CLASSIFICATION else "regression" for n in names}
    batch, online100, online1, timing = {}, {}, {}, {}
    for name in names:
        data = load(name)
        tic = time.perf_counter()
        batch[name] = batch_results(name, data)
        progress(f"{name}: batch ({time.perf_counter() - tic:.0f} s)")
        online100[name], _, _ = online_results(name, data, 100, ONLINE_COLUMNS)
        progress(f"{name}: mini-batches ({time.perf_counter() - tic:.0f} s)")
        if args.one_row is not None and name not in args.one_row:
            continue
        limit = None if name == "electricity" else ROW_LIMIT
        online1[name], seconds, n_rows = online_results(
            name, data, 1, ("raw", "default", "first 1000 min-max", "in place"), limit)
        timing[name] = (seconds, n_rows)
        progress(f"{name}: one row at a time ({time.perf_counter() - tic:.0f} s)")
    report.section("Batch: fit on the training rows, score the test rows",
                   table(names, batch, BATCH_COLUMNS, tasks),
                   note="Mean over 3 seeds (UCI sets: splits 0-2). Bold: best of the row "
                        "for each forest. min-max, p5-95 and std are scales fixed from "
                        "the training rows (feature_scale=<array>).")
    report.section("Batch: against raw units", tally(names, batch, BATCH_COLUMNS, tasks))
    report.section("Online, mini-batches of 100: progressive validation",
                   table(names, online100, ONLINE_COLUMNS, tasks),
                   note="Seed 0; Elec2 and bank in time order, the others shuffled.")
    report.section("Online, mini-batches of 100: against raw units",
                   tally(names, online100, ONLINE_COLUMNS, tasks))
    columns1 = ("raw", "default", "first 1000 min-max", "in place")
    names1 = [n for n in names if n in online1]
    report.section("Online, one row at a time: progressive validation",
                   table(names1, online1, columns1, tasks),
                   note=f"The first {ROW_LIMIT:,} rows of each stream (Elec2 whole).")
    report.section("Online, one row at a time: against raw units",
                   tally(names1, online1, columns1, tasks))
    rows = []
    for name in names1:
        seconds, n_rows = timing[name]
        rows.append([name, n_rows] + [
            f"{seconds[k, 'raw']:.1f} / {seconds[k, 'default']:.1f} / "
            f"{seconds[k, 'in place']:.1f}" for k in ("MF", "AMF")])
    report.section("Online, one row at a time: CPU seconds (learning and predicting)",
                   markdown_table(["dataset", "rows", "MF raw / default / in place",
                                   "AMF raw / default / in place"], rows),
                   note="One process, one thread, a shared machine: compare within a row.")
    if "electricity" in names:
        elec2_section(report, load("electricity"))
    report.finish()


if __name__ == "__main__":
    main()
