"""The Mondrian kernel predictors' defaults: the classifier's sweep grid, and the units
of the features, on the shared datasets (raw features).

1. ``MondrianKernelClassifier``, lifetime chosen by its SGD sweep. Evaluating after
   every cut (``sweep_step=0``, the sweep of earlier releases) costs one epoch per
   cut, ``O(cuts * rows * trees)``: seconds on a thousand rows, minutes on tens of
   thousands (letter: an ad-hoc run was stopped after 15 minutes). The default
   ``sweep_step=0.05`` evaluates once the features have grown by 5%, a geometric
   grid of about a hundred lifetimes. Fitted with its defaults, with ``sweep_step``
   0.02 and 0.1, with ``feature_scale=None`` (raw units), and as earlier releases
   fitted it (``sweep_step=0, feature_scale=None``) on the sets of at most
   ``FINEST_MAX_ROWS`` training rows, where that finishes in minutes.
2. ``MondrianKernelRegressor`` (ridge sweep), defaults against ``feature_scale=None``.

The partitions cut each feature in proportion to its range in the units they are
given (the Laplace kernel of the L1 distance); ``feature_scale="range"`` (the default)
divides each feature by its range over the first batch, rounded up to a power of two.
Datasets and splits of ``bench_supervised_rates.py`` (training rows shuffled with seed
0 and capped at ``MAX_TRAIN``), RandomForest(100) beside; one seed (0), one thread
(``n_jobs=1`` for every model); fit: CPU seconds of ``fit``.

Run ``python benchmarks/bench_kernel_defaults.py`` (about 7 minutes on 2 cores) or
``--quick`` (dna, satimage, concrete, yacht).
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, markdown_table, progress  # noqa: E402
from bench_supervised_rates import MAX_TRAIN, fmt, parse_args, score, training_split  # noqa: E402

CLASSIFIER_RUNS = {
    "default": {},
    "sweep_step=0.02": {"sweep_step": 0.02},
    "sweep_step=0.1": {"sweep_step": 0.1},
    "raw units": {"feature_scale": None},
    "former (step 0, raw)": {"sweep_step": 0.0, "feature_scale": None},
}
"""Classifier fits by label (the parameters set; the rest at their defaults)."""
REGRESSOR_RUNS = {"default": {}, "raw units": {"feature_scale": None}}
FINEST_MAX_ROWS = 5000
"""The former sweep only on training sets of at most this many rows."""
QUICK = ("dna", "satimage", "concrete", "yacht")


def fit_one(model, task, X, y, Xt, yt):
    tic = time.process_time()
    model.fit(X, y)
    seconds = time.process_time() - tic
    return score(task, yt, model.predict(Xt)), seconds, model


def run(name):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    from mondrianlearn import MondrianKernelClassifier, MondrianKernelRegressor

    task, X, y, Xt, yt, n_all = training_split(name)
    classification = task == "classification"
    cls = MondrianKernelClassifier if classification else MondrianKernelRegressor
    runs = CLASSIFIER_RUNS if classification else REGRESSOR_RUNS
    out = {"task": task, "n_train": len(y), "n_all": n_all, "kernel": {}}
    for label, params in runs.items():
        if params.get("sweep_step") == 0.0 and len(y) > FINEST_MAX_ROWS:
            continue
        value, seconds, model = fit_one(cls(random_state=0, n_jobs=1, **params), task,
                                        X, y, Xt, yt)
        n_eval = len(model.lifetime_path_["n_features"])
        out["kernel"][label] = (value, seconds, n_eval)
        progress(f"{name}: {label}: {seconds:.1f} s")
    forest = (RandomForestClassifier if classification else RandomForestRegressor)(
        100, random_state=0, n_jobs=1)
    out["RF"] = fit_one(forest, task, X, y, Xt, yt)[:2]
    return out


def warm_up_kernel():
    """Compile (or load) the predictors' kernels before anything is timed."""
    from mondrianlearn import MondrianKernelClassifier, MondrianKernelRegressor

    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    y = (X[:, 0] > 0.5).astype(int)
    for step in (0.0, 0.05):
        MondrianKernelClassifier(10, sweep_step=step, random_state=0).fit(X, y).predict(X)
    MondrianKernelRegressor(10, random_state=0).fit(X, X[:, 1]).predict(X)


def main():
    args, names = parse_args(__doc__.splitlines()[0], QUICK)
    report = Report("bench_kernel_defaults", "The Mondrian kernel predictors' defaults",
                    args)
    warm_up_kernel()
    results = {name: run(name) for name in names}

    for task, runs, title in (
            ("classification", CLASSIFIER_RUNS,
             "MondrianKernelClassifier: test accuracy, fit CPU time, evaluations of the "
             "sweep"),
            ("regression", REGRESSOR_RUNS,
             "MondrianKernelRegressor: test RMSE, fit CPU time, evaluations of the sweep")):
        these = [n for n in names if results[n]["task"] == task]
        if not these:
            continue
        rows = []
        for name in these:
            r = results[name]
            cells = []
            for label in runs:
                if label in r["kernel"]:
                    value, seconds, n_eval = r["kernel"][label]
                    cells += [fmt(task, value), f"{seconds:.1f} s", f"{n_eval:,}"]
                else:
                    cells += ["-", "-", "-"]
            rows.append([name, f"{r['n_train']:,}" + ("*" if r["n_train"] < r["n_all"] else "")]
                        + cells + [fmt(task, r["RF"][0]), f"{r['RF'][1]:.1f} s"])
        header = ["dataset", "train rows"]
        for label in runs:
            header += [label, "fit", "evaluations"]
        report.section(title, markdown_table(header + ["RF", "RF fit"], rows),
                       note="Defaults: 100 partitions, `lifetime=\"auto\"`, "
                            "`feature_scale=\"range\"`"
                            + (", `sweep_step=0.05`" if task == "classification" else "")
                            + ". `raw units`: `feature_scale=None`. "
                            + ("`former (step 0, raw)`: `sweep_step=0, feature_scale=None`, "
                               "the fit of earlier releases, on training sets of at most "
                               f"{FINEST_MAX_ROWS:,} rows. " if task == "classification"
                               else "")
                            + f"Seed 0, one thread. * training rows subsampled to "
                              f"{MAX_TRAIN:,} (shuffled, seed 0).")

    rows = []
    for name in names:
        r = results[name]
        task, k = r["task"], r["kernel"]
        base = "former (step 0, raw)" if "former (step 0, raw)" in k else "raw units"
        gain = (100 * (k["default"][0] - k[base][0]) if task == "classification"
                else 100 * (k[base][0] - k["default"][0]) / k[base][0])
        rows.append([name, base, f"{gain:+.2f}", f"{k[base][1] / k['default'][1]:.1f}x"])
    report.section(
        "The defaults against the fit of earlier releases",
        markdown_table(["dataset", "against", "gain (points of accuracy, or % of RMSE)",
                        "fit time, earlier over default"], rows),
        note="Earlier releases: raw units, and for the classifier an evaluation after every "
             "cut; where that was not run (more than "
             f"{FINEST_MAX_ROWS:,} rows), against raw units with the default sweep.")
    report.finish()


if __name__ == "__main__":
    main()
