"""Forest size against random forests: how much of the gap to RandomForest(100) the
number of trees closes (issue 22's "the number of trees the defaults use").

The Mondrian forests default to 10 trees (as river's and the papers' reference
implementations do, and as the per-row benchmarks against river measure), while
scikit-learn's RandomForest defaults to 100. This benchmark fits MF and AMF with
``n_estimators`` in ``SIZES`` and every other parameter at its default, on raw
features, against RandomForest(100) in the same run, on the datasets and splits of
``bench_supervised_rates.py`` (training sets shuffled with seed 0 and capped at
``MAX_TRAIN`` rows; small sets averaged over three forest seeds). The largest size is
also run with the opt-in ``feature_scale="supervised"``, the other lever measured
so far, to show what the two give together.

Issue 22's targets, counted for each (forest, size): the best of MF and AMF within
1 point of RandomForest's accuracy on at least 6 of the 8 classification sets; dna
at 0.90 or more; within 10% of RandomForest's RMSE on at least half of the
regression sets. Fit time (wall seconds, ``n_jobs`` threads for every forest,
RandomForest included) is given beside, since trees cost time in every call.

Online, the cost of trees is paid on every row: the bundled Elec2 stream (first
``ONLINE_ROWS`` rows) is learned one row at a time, test-then-train, by MF and AMF
of each size (defaults, one thread) and by river's ``forest.AMFClassifier`` with its
defaults (10 trees): progressive accuracy and rows learned per CPU second.

Run ``python benchmarks/bench_forest_size.py`` (about 5 minutes on 2 cores) or
``--quick`` (five small sets).
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, markdown_table, progress, warm_up  # noqa: E402
from bench_feature_scale import make as make_forest  # noqa: E402
from bench_supervised_rates import (  # noqa: E402
    CLASSIFICATION,
    MAX_TRAIN,
    QUICK,
    SMALL,
    SMALL_SEEDS,
    fit_score,
    fmt,
    parse_args,
    run_datasets,
    training_split,
)

SIZES = (10, 30, 100)
ONLINE_ROWS = 10_000
SUPERVISED_SIZE = SIZES[-1]
KINDS = ("MF", "AMF")


def random_forest(task, seed, n_jobs):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    cls = RandomForestClassifier if task == "classification" else RandomForestRegressor
    return cls(n_estimators=100, random_state=seed, n_jobs=n_jobs)


def configurations():
    """``(label, kind, n_trees, params)`` of every Mondrian forest measured."""
    out = [(f"{kind} {n}", kind, n, {}) for kind in KINDS for n in SIZES]
    out += [(f"{kind} {SUPERVISED_SIZE} supervised", kind, SUPERVISED_SIZE,
             {"feature_scale": "supervised"}) for kind in KINDS]
    return out


def run(name, n_jobs):
    task, X, y, Xt, yt, n_all = training_split(name)
    seeds = range(SMALL_SEEDS if len(y) <= SMALL else 1)
    runs = {}
    for seed in seeds:
        for label, kind, n_trees, params in configurations():
            model = make_forest(kind, task, seed, n_trees, n_jobs, **params)
            runs.setdefault(label, []).append(fit_score(model, task, X, y, Xt, yt))
        runs.setdefault("RF", []).append(
            fit_score(random_forest(task, seed, n_jobs), task, X, y, Xt, yt))
    return {"task": task, "n_train": len(y), "n_all": n_all, "n_seeds": len(seeds),
            "scores": {k: float(np.mean([v[0] for v in vs])) for k, vs in runs.items()},
            "seconds": {k: float(np.mean([v[1] for v in vs])) for k, vs in runs.items()}}


def warm_up_all(n_jobs):
    """Load the compiled kernels of the four forests before anything is timed."""
    warm_up()
    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    y = X[:, 0] + X[:, 1]
    for task, target in (("classification", (y > 1).astype(int)), ("regression", y)):
        for kind in KINDS:
            make_forest(kind, task, 0, 4, n_jobs).fit(X, target).predict(X)


def progressive_elec2(n_rows):
    """``{label: (progressive accuracy, rows learned per CPU second)}`` on the first
    ``n_rows`` rows of Elec2, one row at a time (test-then-train)."""
    from river import forest

    from mondrianlearn.datasets import load_electricity

    X, y = load_electricity(n_rows)
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
    out = {}
    for kind in KINDS:
        for n_trees in SIZES:
            model = make_forest(kind, "classification", 0, n_trees)
            model.partial_fit(X[:1], y[:1], classes=np.unique(y))
            hits, learn = 0, 0.0
            for i in range(1, n_rows):
                xi = X[i:i + 1]
                hits += model.predict(xi)[0] == y[i]
                tic = time.process_time()
                model.partial_fit(xi, y[i:i + 1])
                learn += time.process_time() - tic
            out[f"{kind} {n_trees}"] = (hits / (n_rows - 1), (n_rows - 1) / learn)
    model = forest.AMFClassifier(seed=0)
    rows = [dict(enumerate(map(float, r))) for r in X]
    targets = y.tolist()
    model.learn_one(rows[0], targets[0])
    hits, learn = 0, 0.0
    for x, target in zip(rows[1:], targets[1:]):
        hits += model.predict_one(x) == target
        tic = time.process_time()
        model.learn_one(x, target)
        learn += time.process_time() - tic
    out["river AMF (defaults: 10 trees)"] = (hits / (n_rows - 1), (n_rows - 1) / learn)
    return out


def close_to_rf(task, value, rf):
    """Issue 22's closeness: within 1 point of accuracy, or 10% of RMSE."""
    if task == "classification":
        return value >= rf - 0.01
    return value <= 1.10 * rf


def main():
    args, names = parse_args(__doc__.splitlines()[0], QUICK)
    report = Report("bench_forest_size", "Forest size against RandomForest(100)", args)
    warm_up_all(args.n_jobs)
    results = run_datasets(names, run, args.n_jobs)
    labels = [c[0] for c in configurations()]

    rows = []
    for name in names:
        r = results[name]
        task, scores = r["task"], r["scores"]
        rows.append([name, "accuracy" if task == "classification" else "RMSE",
                     f"{r['n_train']:,}" + ("*" if r["n_train"] < r["n_all"] else ""),
                     r["n_seeds"]]
                    + [fmt(task, scores[c]) + ("" if close_to_rf(task, scores[c], scores["RF"])
                                               else " ·") for c in labels]
                    + [fmt(task, scores["RF"])])
    report.section(
        "Test score by forest size (default parameters), against RandomForest(100)",
        markdown_table(["dataset", "metric", "train rows", "seeds"] + labels + ["RF"], rows),
        note=f"`·`: further from RandomForest than issue 22 allows (1 point of accuracy, "
             f"10% of RMSE). * training rows subsampled to {MAX_TRAIN:,} (shuffled, seed "
             f"0). Seeds: every model averaged over that many seeds on training sets of "
             f"at most {SMALL:,} rows. `supervised`: `feature_scale=\"supervised\"` "
             "(opt-in), every other parameter at its default.")

    rows = []
    for name in names:
        r = results[name]
        rows.append([name] + [f"{r['seconds'][c]:.2f}" for c in labels + ["RF"]])
    report.section(f"Fit time (wall seconds, n_jobs={args.n_jobs} for every forest)",
                   markdown_table(["dataset"] + labels + ["RF"], rows))

    classification = [n for n in names if results[n]["task"] == "classification"]
    regression = [n for n in names if results[n]["task"] == "regression"]
    groups = [(f"{n} trees", [f"MF {n}", f"AMF {n}"]) for n in SIZES]
    groups.append((f"{SUPERVISED_SIZE} trees, supervised",
                   [f"MF {SUPERVISED_SIZE} supervised", f"AMF {SUPERVISED_SIZE} supervised"]))
    rows = []
    for title, pair in groups:
        def best(name, pair=pair):
            r = results[name]
            values = [r["scores"][c] for c in pair]
            return max(values) if r["task"] == "classification" else min(values)

        n_cls = sum(close_to_rf("classification", best(n), results[n]["scores"]["RF"])
                    for n in classification)
        n_reg = sum(close_to_rf("regression", best(n), results[n]["scores"]["RF"])
                    for n in regression)
        dna = f"{best('dna'):.3f}" if "dna" in names else "-"
        need_cls = 6 if len(classification) == len(CLASSIFICATION) else None
        rows.append([title,
                     f"{n_cls} of {len(classification)}"
                     + ("" if need_cls is None else (" (met)" if n_cls >= need_cls
                                                     else " (MISSED)")),
                     dna + ("" if dna == "-" else (" (met)" if best("dna") >= 0.90
                                                   else " (MISSED)")),
                     f"{n_reg} of {len(regression)}"
                     + ("" if not regression else (" (met)" if 2 * n_reg >= len(regression)
                                                   else " (MISSED)"))])
    report.section(
        "Issue 22's targets by forest size (best of MF and AMF on each set)",
        markdown_table(["forests", "classification within 1 point of RF (target 6 of 8)",
                        "dna (target >= 0.90)",
                        "regression within 10% of RF's RMSE (target half)"], rows))

    progress("online: Elec2, one row at a time")
    online = progressive_elec2(ONLINE_ROWS // (5 if args.quick else 1))
    river_rate = online["river AMF (defaults: 10 trees)"][1]
    report.section(
        f"Online: the first {ONLINE_ROWS // (5 if args.quick else 1):,} rows of Elec2, "
        "one row at a time",
        markdown_table(["model", "progressive accuracy", "rows/s (learning)",
                        "against river AMF"],
                       [[label, f"{acc:.4f}", f"{rate:,.0f}", f"{rate / river_rate:.2f}x"]
                        for label, (acc, rate) in online.items()]),
        note="Test-then-train, rows in stream order; rows/s: rows learned per CPU second "
             "of the learning calls (`partial_fit` of one row, `learn_one`), one thread.")
    report.finish()


if __name__ == "__main__":
    main()
