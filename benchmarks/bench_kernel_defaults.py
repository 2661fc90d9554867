"""The Mondrian kernel predictors' defaults: the classifier's sweep grid, and the units
of the features, on the shared datasets (raw features).

1. ``MondrianKernelClassifier``, lifetime chosen by its SGD sweep. Evaluating after
   every cut (``sweep_step=0``, the sweep of earlier releases) costs one epoch per
   cut, ``O(cuts * rows * trees)``: seconds on a thousand rows, minutes on tens of
   thousands (letter: an ad-hoc run was stopped after 15 minutes). The default
   ``sweep_step=0.05`` evaluates once the features have grown by 5%, a geometric
   grid of about a hundred lifetimes; the lifetime selected is the longest within
   one standard error of the lowest validation error, up to ``max_features=100000``
   cells; the weights are then fitted on all rows by SGD epochs or L-BFGS,
   whichever did better on the sweep's validation rows (``solver="auto"``).
   Fitted with its defaults, with ``solver="sgd"`` (the ten SGD epochs of earlier
   releases), with ``feature_scale="range"`` (their units), with the former cap of
   20,000 cells, with ``feature_scale=None`` (raw units), and with the grid, units,
   cap and solver of earlier releases (``sweep_step=0, feature_scale=None,
   max_features=20000, solver="sgd"``; today's selection rule) on the sets of at
   most ``FINEST_MAX_ROWS`` training rows, where that finishes in minutes.
2. ``MondrianKernelRegressor`` (ridge sweep), defaults against ``feature_scale="range"``
   and ``feature_scale=None``.

The partitions cut each feature in proportion to its range in the units they are
given (the Laplace kernel of the L1 distance); ``feature_scale="range"`` divides each
feature by its range over the first batch, rounded up to a power of two, and
``"auto"`` (the default) by its range over its importance in an ExtraTrees fitted on
the first batch (``utils.feature_scale.supervised_scales``).
Datasets and splits of ``bench_supervised_rates.py`` (training rows shuffled with seed
0 and capped at ``MAX_TRAIN``), RandomForest(100) beside; one seed (0), one thread
(``n_jobs=1`` for every model); fit: CPU seconds of ``fit``.

Run ``python benchmarks/bench_kernel_defaults.py`` (about 15 minutes on 2 cores) or
``--quick`` (dna, satimage, concrete, yacht).
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, markdown_table, progress  # noqa: E402
from bench_defaults import within  # noqa: E402
from bench_supervised_rates import MAX_TRAIN, fmt, parse_args, score, training_split  # noqa: E402

CLASSIFIER_RUNS = {
    "default": {},
    "solver=sgd": {"solver": "sgd"},
    "range units": {"feature_scale": "range"},
    "max_features=20000": {"max_features": 20000},
    "raw units": {"feature_scale": None},
    "former (step 0, raw)": {"sweep_step": 0.0, "feature_scale": None,
                             "max_features": 20000, "solver": "sgd"},
}
"""Classifier fits by label (the parameters set; the rest at their defaults)."""
REGRESSOR_RUNS = {"default": {}, "range units": {"feature_scale": "range"},
                  "raw units": {"feature_scale": None}}
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


AGAINST_FOREST = {
    # task: (title, gap column, within column, gap of default over RF, target)
    "classification": ("The classifier's defaults against RandomForest(100)",
                       "points below RF", "within 1 point",
                       lambda model, forest: 100 * (forest - model),
                       "within 1 point of its accuracy", "6 of 8"),
    "regression": ("The regressor's defaults against RandomForest(100)", "RMSE over RF's",
                   "within 10%", lambda model, forest: model / forest,
                   "within 10% of its RMSE", "half"),
}
"""How each task's defaults are set against RandomForest (issue 22's targets; the
margins are ``bench_defaults.within``'s)."""


def against_forest(report, results, names, task):
    """A section: the defaults of ``task`` against RandomForest(100), set by set."""
    if not names:
        return
    title, gap_column, within_column, gap_of, phrase, target = AGAINST_FOREST[task]
    rows, close = [], 0
    for name in names:
        model, forest = results[name]["kernel"]["default"][0], results[name]["RF"][0]
        gap = gap_of(model, forest)
        ok = within(task, model, forest)
        close += ok
        rows.append([name, fmt(task, model), fmt(task, forest),
                     f"{gap:+.2f}" if task == "classification" else f"{gap:.2f}",
                     "yes" if ok else "no"])
    report.section(
        title, markdown_table(["dataset", "default", "RF", gap_column, within_column], rows),
        note=f"The defaults {phrase} on {close} of {len(names)} sets (issue 22's target "
             f"for the best default Mondrian estimator: {target}).")


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
                            "`feature_scale=\"auto\"` (supervised scales)"
                            + (", `sweep_step=0.05`, `max_features=100000`, the longest "
                               "lifetime within one standard error of the lowest "
                               "validation error, `solver=\"auto\"`; `solver=sgd`: the "
                               "ten SGD epochs of earlier releases"
                               if task == "classification" else "")
                            + ". `range units`: `feature_scale=\"range\"`; `raw units`: "
                              "`feature_scale=None`. "
                            + ("`former (step 0, raw)`: `sweep_step=0, feature_scale=None, "
                               "max_features=20000, solver=\"sgd\"`, "
                               "the fit of earlier releases, on training sets of at most "
                               f"{FINEST_MAX_ROWS:,} rows. " if task == "classification"
                               else "")
                            + f"Seed 0, one thread. * training rows subsampled to "
                              f"{MAX_TRAIN:,} (shuffled, seed 0).")

    for task in ("classification", "regression"):
        against_forest(report, results, [n for n in names if results[n]["task"] == task],
                       task)

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
