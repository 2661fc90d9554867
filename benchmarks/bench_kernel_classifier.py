"""MondrianKernelClassifier's lifetime sweep: evaluation grid, fit time and accuracy.

With ``lifetime="auto"`` the classifier replays the cuts of its partitions in time
order and runs SGD epochs to score the lifetimes on held-out rows. Evaluating after
every cut (``sweep_step=0``, the sweep of earlier releases) costs one epoch per cut,
``O(cuts * rows * trees)``: seconds on a thousand rows, minutes on tens of thousands
(letter: an ad-hoc run was stopped after 15 minutes). The default ``sweep_step=0.05``
evaluates once the features have grown by 5%, a geometric grid of about a hundred
lifetimes. This benchmark fits the classifier with its defaults and with
``sweep_step`` 0.02 and 0.1 on the eight shared classification sets of
``bench_supervised_rates.py`` (same splits, training rows shuffled with seed 0 and
capped at ``MAX_TRAIN``), and with ``sweep_step=0`` on the sets of at most
``FINEST_MAX_ROWS`` training rows, where it finishes in minutes; RandomForest(100)
beside. One seed (0), one thread (``n_jobs=1`` for every model).

The kernel's partitions cut each feature in proportion to its range in the units it is
given (the Laplace kernel of the L1 distance), and these sets are given raw: a last
column fits the default classifier on the features min-max scaled with the training
rows' range (test rows in the same units), to show what units cost.

Run ``python benchmarks/bench_kernel_classifier.py`` (about 5 minutes on 2 cores) or
``--quick`` (dna and satimage).
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, make_parser, markdown_table, progress  # noqa: E402
from bench_feature_scale import load  # noqa: E402
from bench_supervised_rates import CLASSIFICATION, MAX_TRAIN  # noqa: E402

STEPS = (0.05, 0.02, 0.1)
"""``sweep_step`` values fitted on every set (the default first)."""
FINEST_MAX_ROWS = 5000
"""``sweep_step=0`` only on training sets of at most this many rows."""
QUICK = ("dna", "satimage")


def fit_one(model, X, y, Xt, yt):
    tic = time.process_time()
    model.fit(X, y)
    seconds = time.process_time() - tic
    return float(np.mean(model.predict(Xt) == yt)), seconds, model


def run(name):
    from sklearn.ensemble import RandomForestClassifier

    from mondrianlearn import MondrianKernelClassifier

    data = load(name)
    train, test = data["splits"][0]
    order = np.random.RandomState(0).permutation(len(train))[:MAX_TRAIN]
    X, y = data["X"][train[order]], data["y"][train[order]]
    Xt, yt = data["X"][test], data["y"][test]
    steps = STEPS + ((0.0,) if len(y) <= FINEST_MAX_ROWS else ())
    out = {"n_train": len(y), "n_all": len(train), "kernel": {}}
    for step in steps:
        acc, seconds, model = fit_one(
            MondrianKernelClassifier(sweep_step=step, random_state=0, n_jobs=1), X, y, Xt, yt)
        out["kernel"][step] = (acc, seconds, len(model.lifetime_path_["n_features"]),
                               model.n_kernel_features_)
        progress(f"{name}: sweep_step={step}: {seconds:.1f} s")
    acc, seconds, _ = fit_one(RandomForestClassifier(100, random_state=0, n_jobs=1),
                              X, y, Xt, yt)
    low, span = X.min(axis=0), X.max(axis=0) - X.min(axis=0)
    span[span == 0] = 1.0
    acc, seconds, _ = fit_one(MondrianKernelClassifier(random_state=0, n_jobs=1),
                              (X - low) / span, y, (Xt - low) / span, yt)
    out["scaled"] = (acc, seconds)
    progress(f"{name}: min-max scaled: {seconds:.1f} s")
    acc, seconds, _ = fit_one(RandomForestClassifier(100, random_state=0, n_jobs=1),
                              X, y, Xt, yt)
    out["RF"] = (acc, seconds)
    return out


def warm_up_kernel():
    """Compile (or load) the classifier's kernels before anything is timed."""
    from mondrianlearn import MondrianKernelClassifier

    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    y = (X[:, 0] > 0.5).astype(int)
    for step in (0.0, 0.05):
        MondrianKernelClassifier(10, sweep_step=step, random_state=0).fit(X, y).predict(X)


def main():
    parser = make_parser(__doc__.splitlines()[0])
    for action in parser._actions:
        if action.dest == "datasets":
            action.choices = CLASSIFICATION
            action.help = "datasets to run (default: all eight)"
    args = parser.parse_args()
    names = args.datasets or (QUICK if args.quick else CLASSIFICATION)
    report = Report("bench_kernel_classifier",
                    "MondrianKernelClassifier: the lifetime sweep's grid", args)
    warm_up_kernel()
    results = {name: run(name) for name in names}

    columns = list(STEPS) + [0.0]
    rows = []
    for name in names:
        r = results[name]
        cells = []
        for step in columns:
            if step in r["kernel"]:
                acc, seconds, n_eval, n_feat = r["kernel"][step]
                cells += [f"{acc:.4f}", f"{seconds:.1f} s", f"{n_eval:,}"]
            else:
                cells += ["-", "-", "-"]
        rows.append([name, f"{r['n_train']:,}" + ("*" if r["n_train"] < r["n_all"] else "")]
                    + cells + [f"{r['scaled'][0]:.4f}", f"{r['scaled'][1]:.1f} s",
                               f"{r['RF'][0]:.4f}", f"{r['RF'][1]:.1f} s"])
    header = ["dataset", "train rows"]
    for step in columns:
        label = f"{step:g}" + (" (default)" if step == STEPS[0] else "")
        header += [f"accuracy, {label}", f"fit, {label}", f"evaluations, {label}"]
    report.section(
        "Test accuracy, fit CPU time and number of evaluations by `sweep_step`",
        markdown_table(header + ["accuracy, default, min-max scaled features",
                                 "fit, scaled", "RF accuracy", "RF fit"], rows),
        note=f"`MondrianKernelClassifier(sweep_step=...)`, every other parameter at its "
             f"default (100 partitions, `lifetime=\"auto\"`, `max_features=20000`), seed 0, "
             f"one thread; fit: CPU seconds of `fit` (sampling the partitions, the sweep "
             f"and the final epochs). `0` (an evaluation after every cut, the former "
             f"sweep) only on training sets of at most {FINEST_MAX_ROWS:,} rows; "
             f"`scaled`: the default on features divided by the training rows' range. "
             f"* training rows subsampled to {MAX_TRAIN:,} (shuffled, seed 0).")

    small = [n for n in names if 0.0 in results[n]["kernel"]]
    if small:
        rows = []
        for name in small:
            k = results[name]["kernel"]
            rows.append([name, f"{k[0.0][1] / k[STEPS[0]][1]:.1f}x",
                         f"{100 * (k[STEPS[0]][0] - k[0.0][0]):+.2f}"])
        report.section("The default against an evaluation after every cut",
                       markdown_table(["dataset", "fit time, 0 over default",
                                       "accuracy, default - 0 (points)"], rows))
    report.finish()


if __name__ == "__main__":
    main()
