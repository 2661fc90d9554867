"""Supervised scales by default? How large a first batch they need to pay.

``feature_scale="supervised"`` (opt-in) learns fixed feature scales from the labels of
the first batch a model learns (ExtraTrees importances, ``utils.feature_scale``);
``"range"`` (the default) divides each feature by a power of two that follows its
range. Issue 22 weighs a default that would take ``"supervised"`` when the first
batch is large enough and ``"range"`` otherwise (a stream learned a row at a time).
This benchmark measures where such a threshold would have to be: each model learns
the training rows in two calls of ``partial_fit``, a first batch of ``n`` rows and
then the rest, with ``"supervised"`` scales learned on the first batch, against
``"range"`` learning the same two calls; and ``fit`` on all rows with each.

Forests of 10 trees (MF and AMF), raw features, the datasets and splits of
``bench_supervised_rates.py`` (training rows shuffled with seed 0, capped at 20,000;
sets of at most 5,000 training rows averaged over three forest seeds).
RandomForest(100) in the same run for reference.

Run ``python benchmarks/bench_supervised_first_batch.py`` (about 6 minutes on 2 cores) or
``--quick`` (five small sets).
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, markdown_table, warm_up  # noqa: E402
from bench_supervised_rates import (  # noqa: E402
    QUICK,
    SMALL,
    SMALL_SEEDS,
    fmt,
    make,
    parse_args,
    relative,
    run_datasets,
    score,
    sklearn_forests,
    training_split,
)

FIRST_BATCHES = (50, 100, 200, 500, 1000)
"""Sizes of the first batch from which the supervised scales are learned."""
KINDS = ("MF", "AMF")


def two_calls(kind, task, seed, setting, n, X, y, Xt, yt):
    """Test score after ``partial_fit`` of the first ``n`` rows, then of the rest."""
    model = make(kind, task, seed, feature_scale=setting)
    extra = {"classes": np.unique(y)} if task == "classification" else {}
    model.partial_fit(X[:n], y[:n], **extra)
    model.partial_fit(X[n:], y[n:])
    return score(task, yt, model.predict(Xt))


def run(name):
    task, X, y, Xt, yt, n_all = training_split(name)
    seeds = range(SMALL_SEEDS if len(y) <= SMALL else 1)
    runs = {}
    for seed in seeds:
        for kind in KINDS:
            for n in FIRST_BATCHES:
                if n >= len(y):
                    continue
                for setting in ("range", "supervised"):
                    runs.setdefault((kind, setting, n), []).append(
                        two_calls(kind, task, seed, setting, n, X, y, Xt, yt))
            for setting in ("range", "supervised"):
                model = make(kind, task, seed, feature_scale=setting).fit(X, y)
                runs.setdefault((kind, setting, "fit"), []).append(
                    score(task, yt, model.predict(Xt)))
        runs.setdefault("RF", []).append(sklearn_forests(task, X, y, Xt, yt, seed)["RF"][0])
    return {"task": task, "n_train": len(y), "n_all": n_all, "n_seeds": len(seeds),
            "scores": {k: float(np.mean(v)) for k, v in runs.items()}}


def main():
    args, names = parse_args(__doc__.splitlines()[0], QUICK)
    report = Report("bench_supervised_first_batch",
                    "Supervised scales: how large a first batch they need to pay", args)
    warm_up()
    results = run_datasets(names, run)

    for kind in KINDS:
        rows = []
        for name in names:
            r = results[name]
            task, s = r["task"], r["scores"]
            row = [name, "accuracy" if task == "classification" else "RMSE",
                   f"{r['n_train']:,}" + ("*" if r["n_train"] < r["n_all"] else ""),
                   r["n_seeds"], fmt(task, s[kind, "range", "fit"]),
                   fmt(task, s[kind, "supervised", "fit"])]
            for n in FIRST_BATCHES:
                pair = (s.get((kind, "range", n)), s.get((kind, "supervised", n)))
                row.append("-" if pair[0] is None
                           else f"{fmt(task, pair[0])} / {fmt(task, pair[1])}")
            rows.append(row + [fmt(task, s["RF"])])
        report.section(
            f"{kind} (10 trees): range against supervised scales",
            markdown_table(["dataset", "metric", "train rows", "seeds", "fit, range",
                            "fit, supervised"]
                           + [f"first {n}: range / supervised" for n in FIRST_BATCHES]
                           + ["RF(100)"], rows),
            note="`fit`: on all training rows (supervised: scales learned on them). "
                 "`first n`: `partial_fit` of the first n training rows, then of the "
                 "rest, with `feature_scale=\"range\"` / `\"supervised\"` (scales "
                 "learned on the first n rows). * training rows subsampled to 20,000.")

    rows = []
    for kind in KINDS:
        for n in ["fit"] + list(FIRST_BATCHES):
            gains = [(relative(results[name]["task"],
                               results[name]["scores"][kind, "supervised", n],
                               results[name]["scores"][kind, "range", n]), name)
                     for name in names if (kind, "range", n) in results[name]["scores"]]
            g = np.array([v for v, _ in gains])
            worst = min(gains)
            rows.append([kind, "fit (all rows)" if n == "fit" else f"first batch of {n}",
                         len(gains), int(np.sum(g > 0.5)), int(np.sum(np.abs(g) <= 0.5)),
                         int(np.sum(g < -0.5)), f"{g.mean():+.1f}",
                         f"{worst[0]:+.1f} ({worst[1]})"])
    report.section(
        "Supervised scales against range units, by the size of the batch they are learned on",
        markdown_table(["forest", "scales learned on", "sets", "better", "within 0.5",
                        "worse", "mean gain", "worst (dataset)"], rows),
        note="Gain: accuracy points (classification) or per cent of the range units' RMSE "
             "saved (regression); better / worse: by more than 0.5.")
    report.finish()


if __name__ == "__main__":
    main()
