"""AMFClassifier's ``split_pure``: the default against ``True``, and streams that start
with a run of one label.

With ``split_pure=False`` (the default) a leaf whose points all carry the label of a
new point absorbs it and its box grows. AMF keeps no points, so when a point of
another label later falls inside such a leaf's box, no extension can separate them:
the leaf is then cut inside its box (``engine.extension``), and its statistics are
shared between the two parts. Before that cut existed, such a leaf only became mixed
and stayed one leaf for good, and a stream that started with a run of one label could
leave most of the space in it (river's AMF, same default, still does: the bananas
section). This script measures the default against ``split_pure=True``:

1. the shared classification sets (as ``bench_dask.py`` loads them: min-max scaled,
   sets without a split shuffled and split 80/20, training rows shuffled by the seed,
   capped at 20,000), 10 trees, ``fit``, three seeds: test accuracy and log loss of
   the default and of ``split_pure=True``; river's ``forest.AMFClassifier`` (same
   default) on bananas for comparison, where one shuffle starts with such a run;
2. a two-feature XOR (3,000 rows) whose first ten rows share a label.

Run ``python benchmarks/bench_amf_split_pure.py`` (about 5 minutes; the shared
datasets are needed for part 1) or ``--quick`` (one seed).
"""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, make_parser, markdown_table, progress  # noqa: E402
from bench_dask import CLASSIFICATION_SETS, load_classification  # noqa: E402

MAX_TRAIN = 20_000


def scores(model, X_test, y_test):
    from sklearn.metrics import log_loss

    proba = model.predict_proba(X_test)
    accuracy = float(np.mean(model.classes_[proba.argmax(axis=1)] == y_test))
    return accuracy, log_loss(y_test, np.clip(proba, 1e-15, 1.0), labels=model.classes_)


def river_accuracy(X, y, X_test, y_test, seed, split_pure):
    from river import forest

    model = forest.AMFClassifier(n_estimators=10, seed=seed, split_pure=split_pure)
    for x, target in zip(X.tolist(), y.tolist()):
        model.learn_one(dict(enumerate(x)), target)
    return float(np.mean([model.predict_one(dict(enumerate(x))) == target
                          for x, target in zip(X_test.tolist(), y_test.tolist())]))


def shared_sets_section(report, seeds):
    from mondrianlearn import AMFClassifier
    from mondrianlearn.datasets import benchmark_data_home

    if benchmark_data_home() is None:
        report.section("Shared datasets", note="Skipped: the shared datasets were not found.")
        return
    table = []
    for name in CLASSIFICATION_SETS:
        progress(name)
        results = {False: [], True: []}
        for seed in range(seeds):
            X, y, X_test, y_test = load_classification(name, seed)
            X, y = X[:MAX_TRAIN], y[:MAX_TRAIN]
            for split_pure in (False, True):
                model = AMFClassifier(10, split_pure=split_pure, random_state=seed).fit(X, y)
                results[split_pure].append(scores(model, X_test, y_test))
        row = [name]
        for split_pure in (False, True):
            accuracy = [a for a, _ in results[split_pure]]
            row += [" / ".join(f"{a:.3f}" for a in accuracy),
                    f"{np.mean([ll for _, ll in results[split_pure]]):.4f}"]
        table.append(row)
    report.section(
        "Shared datasets: default (split_pure=False) against split_pure=True",
        markdown_table(["dataset", "accuracy per seed, default", "log loss, default",
                        "accuracy per seed, True", "log loss, True"], table),
        f"AMFClassifier(10 trees), `fit`, seeds 0-{seeds - 1} (the seed shuffles the "
        "training rows and seeds the forest); log loss: mean over the seeds.")
    if "bananas" not in CLASSIFICATION_SETS:
        return
    rows = []
    for seed in range(seeds):
        progress(f"river on bananas, seed {seed}")
        X, y, X_test, y_test = load_classification("bananas", seed)
        rows.append([str(seed)] + [f"{river_accuracy(X, y, X_test, y_test, seed, sp):.3f}"
                                   for sp in (False, True)])
    report.section("river's AMFClassifier on bananas (same shuffles)",
                   markdown_table(["seed", "split_pure=False (river's default)",
                                   "split_pure=True"], rows))


def xor_section(report, seeds):
    from mondrianlearn import AMFClassifier

    rng = np.random.RandomState(0)
    X = rng.uniform(size=(3000, 2))
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.5)).astype(int)
    first = np.flatnonzero(y == 0)[:10]
    order = np.concatenate([first, np.setdiff1d(np.arange(3000), first)])
    shuffled = np.random.RandomState(1).permutation(3000)
    X_test = rng.uniform(size=(2000, 2))
    y_test = ((X_test[:, 0] > 0.5) ^ (X_test[:, 1] > 0.5)).astype(int)
    rows = []
    for label, rows_order in (("first ten rows one label", order), ("shuffled", shuffled)):
        for split_pure in (False, True):
            accuracy = [AMFClassifier(10, split_pure=split_pure, random_state=seed).fit(
                X[rows_order], y[rows_order]).score(X_test, y_test) for seed in range(seeds)]
            rows.append([label, str(split_pure), " / ".join(f"{a:.3f}" for a in accuracy)])
    report.section("Two-feature XOR, 3,000 rows",
                   markdown_table(["order", "split_pure", "test accuracy per seed"], rows))


def main():
    parser = make_parser(__doc__.splitlines()[0])
    args = parser.parse_args()
    seeds = 1 if args.quick else 3
    report = Report("bench_amf_split_pure", "AMFClassifier: split_pure", args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xor_section(report, seeds)
        shared_sets_section(report, seeds)
    report.finish()


if __name__ == "__main__":
    main()
