"""Supervised split rates: feature weights learned on a pilot of the training rows,
then held fixed, against the default units and against scikit-learn's forests.

A Mondrian cut picks its feature with probability proportional to the side of the
box along it times a rate; dividing a feature by a scale ``s_d`` multiplies its rate
by ``1 / s_d``. Mondrian splits ignore the labels, so a forest spends most of its
cuts on irrelevant features where there are many (dna: 180 binary features, of which
a few dozen matter). This benchmark learns a weight ``w_d`` per feature on a *pilot*
(the first ``min(2000, n)`` shuffled training rows), holds it fixed and passes
``feature_scale = range_d / w_d`` (the feature's range over the pilot; 1 where it is
0): the process then cuts feature ``d`` at a rate proportional to ``w_d`` per unit of
its range. Fixed rates keep the Mondrian process projective: learning online has the
law of learning in batch, for those rates.

Weightings (``w = max((imp / max(imp)) ** power, floor)``):

- ``ET1``: impurity importances of ``ExtraTrees(50, max_features=1)`` on the pilot;
- ``ETsqrt``: the same with ``max_features="sqrt"`` (regression: ``1/3``);
- ``MI``: mutual information (``mutual_info_classif``/``mutual_info_regression``);

with floors 0.001, 0.01 and 0.1, powers 1 and 2 (``^2``). ``pilot range`` is the
control: the pilot's range with all weights 1 (what the weights add to a scale fixed
from the pilot). ``default`` is ``feature_scale="range"``; ``supervised`` is the
estimators' ``feature_scale="supervised"`` (``ETsqrt 0.01``, learned on at most
2,000 rows drawn at random from the first batch, here all training rows, and the
range of all of them; its fit time includes the ExtraTrees).

Forests of 10 trees, default parameters otherwise, ``n_jobs=1``; RandomForest(100)
and ExtraTrees(100) of scikit-learn (default parameters, ``n_jobs=1``) in the same
run. Raw features (no min-max scaling). Splits: the given ones (letter, satimage,
usps, dna, adult), split 0 of the UCI regression sets, else 80/20 at random (seed 0;
Elec2 too, for a batch split). The training rows are shuffled (seed 0) and at most
``MAX_TRAIN`` are used; on training sets of at most ``SMALL`` rows every model is
fitted with ``SMALL_SEEDS`` seeds (the same pilot weights) and the scores averaged,
elsewhere with seed 0. Metrics: test accuracy, test RMSE (UCI sets: standardised
targets; california_housing: dollars); fit time: wall seconds of ``fit`` (the
pilot's weights excluded; they are timed apart).

Online (Mondrian forests, seed 0): ``partial_fit`` over 10 mini-batches of the same
training rows, with the weights learned on the first mini-batch and then fixed (the
``ONLINE_WEIGHTINGS``), against ``fit`` on all of them with those same weights; the
default (units that follow the range) for comparison.

Run ``python benchmarks/bench_supervised_rates.py`` (about 11 minutes on 2 shared
cores) or ``--quick`` (five small sets, a few minutes); ``--datasets`` to choose.
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, make_parser, markdown_table, progress, warm_up  # noqa: E402
from bench_feature_scale import load  # noqa: E402
from bench_feature_scale import make as make_forest  # noqa: E402

CLASSIFICATION = ("adult", "bank", "spambase", "electricity", "letter", "satimage",
                  "usps", "dna")
REGRESSION = ("california_housing", "kin40k", "housing", "concrete", "energy", "yacht",
              "airfoil")
QUICK = ("dna", "spambase", "satimage", "concrete", "yacht")
MAX_TRAIN = 20000
PILOT = 2000
N_TREES = 10
N_BATCHES = 10
SOURCES = ("ET1", "ETsqrt", "MI")
FLOORS = (0.001, 0.01, 0.1)
POWERS = (1, 2)
SMALL = 5000
SMALL_SEEDS = 3
"""Training sets of at most ``SMALL`` rows: scores averaged over ``SMALL_SEEDS``
forest seeds (the same pilot weights)."""
ONLINE_WEIGHTINGS = ("ET1 0.01", "ETsqrt 0.01")
"""Weightings also learned online (Mondrian forests)."""
ONLINE = ("default", "supervised") + ONLINE_WEIGHTINGS


def weighting_names():
    return [f"{s} {f:g}" + ("^2" if p == 2 else "")
            for s in SOURCES for p in POWERS for f in FLOORS]


# ------------------------------------------------------------------ weights
def importances(source, task, X, y, seed=0):
    """Raw importance of each feature on the pilot rows ``X, y``."""
    from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor
    from sklearn.feature_selection import mutual_info_classif, mutual_info_regression

    if source == "MI":
        function = mutual_info_classif if task == "classification" else mutual_info_regression
        return function(X, y, random_state=seed)
    cls = ExtraTreesClassifier if task == "classification" else ExtraTreesRegressor
    max_features = 1 if source == "ET1" else ("sqrt" if task == "classification" else 1 / 3)
    model = cls(n_estimators=50, max_features=max_features, random_state=seed, n_jobs=1)
    return model.fit(X, y).feature_importances_


def weights(imp, floor, power):
    """``max((imp / max(imp)) ** power, floor)``; all ones without any importance."""
    imp = np.maximum(np.asarray(imp, dtype=np.float64), 0.0)
    top = imp.max()
    if not top > 0:
        return np.ones_like(imp)
    return np.maximum((imp / top) ** power, floor)


def pilot_range(X):
    """Range of each feature over ``X``; 1 where it is 0."""
    spread = X.max(axis=0) - X.min(axis=0)
    return np.where(spread > 0, spread, 1.0)


def all_scales(task, X, y):
    """``{weighting: feature_scale}`` learned on the pilot ``X, y`` (``None`` for
    ``default``), and the seconds each importance source took."""
    span = pilot_range(X)
    scales = {"default": None, "pilot range": span}
    seconds = {}
    for source in SOURCES:
        tic = time.perf_counter()
        imp = importances(source, task, X, y)
        seconds[source] = time.perf_counter() - tic
        for power in POWERS:
            for floor in FLOORS:
                name = f"{source} {floor:g}" + ("^2" if power == 2 else "")
                scales[name] = span / weights(imp, floor, power)
    return scales, seconds


# ------------------------------------------------------------------- models
def make(kind, task, seed=0, **params):
    return make_forest(kind, task, seed, n_trees=N_TREES, **params)


def score(task, y, prediction):
    if task == "classification":
        return float(np.mean(prediction == y))
    return float(np.sqrt(np.mean((prediction - y) ** 2)))


def fit_score(model, task, X, y, Xt, yt):
    tic = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - tic
    return score(task, yt, model.predict(Xt)), seconds


def sklearn_forests(task, X, y, Xt, yt, seed=0):
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        ExtraTreesRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )

    out = {}
    for name, (c, r) in (("RF", (RandomForestClassifier, RandomForestRegressor)),
                         ("ET", (ExtraTreesClassifier, ExtraTreesRegressor))):
        cls = c if task == "classification" else r
        out[name] = fit_score(cls(n_estimators=100, random_state=seed, n_jobs=1), task,
                              X, y, Xt, yt)
    return out


def online(task, weighting, X, y, Xt, yt):
    """MF ``partial_fit`` over ``N_BATCHES`` mini-batches, the weights learned on the
    first; and ``fit`` on all rows with the same weights."""
    bounds = np.linspace(0, len(y), N_BATCHES + 1).astype(int)
    first = slice(0, bounds[1])
    if weighting in ("default", "supervised"):
        scale = None if weighting == "default" else weighting
    else:
        source, floor = weighting.split()
        power = 2 if floor.endswith("^2") else 1
        imp = importances(source, task, X[first], y[first])
        scale = pilot_range(X[first]) / weights(imp, float(floor.rstrip("^2")), power)
    extra = {"classes": np.unique(y)} if task == "classification" else {}
    params = {} if scale is None else {"feature_scale": scale}
    model = make("MF", task, **params)
    for a, b in zip(bounds[:-1], bounds[1:]):
        model.partial_fit(X[a:b], y[a:b], **(extra if a == 0 else {}))
    on = score(task, yt, model.predict(Xt))
    batch, _ = fit_score(make("MF", task, **params), task, X, y, Xt, yt)
    return on, batch


# ------------------------------------------------------------------- run
def training_split(name):
    """``(task, X, y, Xt, yt, n_all)`` of a shared set: its first split, the training
    rows shuffled (seed 0) and capped at ``MAX_TRAIN`` out of ``n_all``."""
    data = load(name)
    train, test = data["splits"][0]
    order = np.random.RandomState(0).permutation(len(train))[:MAX_TRAIN]
    return (data["task"], data["X"][train[order]], data["y"][train[order]],
            data["X"][test], data["y"][test], len(train))


def run_datasets(names, run, *args):
    """``{name: run(name, *args)}`` for each dataset, with its seconds on stderr."""
    results = {}
    for name in names:
        tic = time.perf_counter()
        results[name] = run(name, *args)
        progress(f"{name}: {time.perf_counter() - tic:.0f} s")
    return results


def parse_args(description, quick):
    """The common options, ``--datasets`` among the shared sets here; returns
    ``(args, names)``: the sets chosen, ``quick`` with ``--quick``, else all."""
    parser = make_parser(description)
    for action in parser._actions:
        if action.dest == "datasets":
            action.choices = CLASSIFICATION + REGRESSION
            action.help = "datasets to run (default: all)"
    args = parser.parse_args()
    return args, args.datasets or (quick if args.quick else CLASSIFICATION + REGRESSION)


def run(name):
    task, X, y, Xt, yt, n_all = training_split(name)
    n_pilot = min(PILOT, len(y))
    scales, pilot_seconds = all_scales(task, X[:n_pilot], y[:n_pilot])
    scales["supervised"] = "supervised"  # the estimators' own option, on all rows
    result = {"task": task, "n_train": len(y), "n_all": n_all, "n_pilot": n_pilot,
              "pilot_seconds": pilot_seconds, "scores": {}, "seconds": {}}
    seeds = range(SMALL_SEEDS if len(y) <= SMALL else 1)
    result["n_seeds"] = len(seeds)
    runs = {}
    for seed in seeds:
        for kind in ("MF", "AMF"):
            for weighting, scale in scales.items():
                params = {} if scale is None else {"feature_scale": scale}
                runs.setdefault((kind, weighting), []).append(
                    fit_score(make(kind, task, seed, **params), task, X, y, Xt, yt))
        for key, value in sklearn_forests(task, X, y, Xt, yt, seed).items():
            runs.setdefault(key, []).append(value)
    for key, values in runs.items():
        result["scores"][key] = float(np.mean([v[0] for v in values]))
        result["seconds"][key] = float(np.mean([v[1] for v in values]))
    result["online"] = {w: online(task, w, X, y, Xt, yt) for w in ONLINE}
    return result


def warm_up_all():
    """Load the compiled kernels of the four forests before anything is timed."""
    warm_up()
    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    y = X[:, 0] + X[:, 1]
    for task, target in (("classification", (y > 1).astype(int)), ("regression", y)):
        for kind in ("MF", "AMF"):
            for scale in (None, np.ones(3)):
                params = {} if scale is None else {"feature_scale": scale}
                make(kind, task, **params).fit(X, target).predict(X)


def fmt(task, v):
    return f"{v:.3f}" if task == "classification" or abs(v) < 100 else f"{v:,.0f}"


def relative(task, value, reference):
    """Gain over ``reference``: accuracy points, or per cent of RMSE saved."""
    if task == "classification":
        return 100 * (value - reference)
    return 100 * (reference - value) / reference


def main():
    args, names = parse_args(__doc__.splitlines()[0], QUICK)
    report = Report("bench_supervised_rates", "Supervised split rates: feature weights "
                    "from a pilot, held fixed", args)
    warm_up_all()
    results = run_datasets(names, run)
    columns = ["default", "supervised", "pilot range"] + weighting_names()

    # Main table: the default, the control, a few weightings, scikit-learn.
    shown = ["default", "supervised", "pilot range", "ET1 0.001", "ET1 0.01", "ETsqrt 0.001",
             "ETsqrt 0.01", "ETsqrt 0.01^2", "MI 0.01", "MI 0.01^2"]
    for kind in ("MF", "AMF"):
        rows = []
        for name in names:
            r = results[name]
            task = r["task"]
            values = [r["scores"][kind, c] for c in shown]
            best = max(values) if task == "classification" else min(values)
            rows.append([name, "accuracy" if task == "classification" else "RMSE",
                         f"{r['n_train']:,}" + ("*" if r["n_train"] < r["n_all"] else ""),
                         r["n_seeds"]]
                        + [f"**{fmt(task, v)}**" if v == best else fmt(task, v)
                           for v in values]
                        + [fmt(task, r["scores"]["RF"]), fmt(task, r["scores"]["ET"])])
        report.section(
            f"{kind} (10 trees): test score by weighting, against RF(100) and ET(100)",
            markdown_table(["dataset", "metric", "train rows", "seeds"] + shown
                           + ["RF", "ET"], rows),
            note="Bold: best of the Mondrian columns. * training rows subsampled to "
                 f"{MAX_TRAIN:,} (shuffled, seed 0). Seeds: forests (all models) "
                 f"averaged over that many seeds on training sets of at most {SMALL:,} "
                 "rows, with the same pilot weights. Weighting `S f` is source S with "
                 "floor f, `^2` squared; every column but `default` is a scale fixed "
                 f"from the pilot (the first {PILOT:,} training rows).")

    # Tally of every weighting against the default, and the mean gain.
    rows = []
    for kind in ("MF", "AMF"):
        for c in columns[1:]:
            win = tie = loss = 0
            gains = []
            worst = (np.inf, "")
            for name in names:
                r = results[name]
                task = r["task"]
                g = relative(task, r["scores"][kind, c], r["scores"][kind, "default"])
                gains.append(g)
                win, tie, loss = win + (g > 0.5), tie + (abs(g) <= 0.5), loss + (g < -0.5)
                worst = min(worst, (g, name))
            rows.append([kind, c, win, tie, loss, f"{np.mean(gains):+.1f}",
                         f"{worst[0]:+.1f} ({worst[1]})"])
    report.section(
        "Every weighting against the default",
        markdown_table(["forest", "weighting", "better", "within 0.5", "worse",
                        "mean gain", "worst (dataset)"], rows),
        note="Gain: accuracy points (classification) or per cent of the default's RMSE "
             "saved (regression); better / worse: by more than 0.5.")

    # Full grid.
    for kind in ("MF", "AMF"):
        rows = []
        for name in names:
            r = results[name]
            rows.append([name] + [fmt(r["task"], r["scores"][kind, c]) for c in columns])
        report.section(f"{kind}: every weighting", markdown_table(["dataset"] + columns, rows))

    # Times.
    rows = []
    for name in names:
        r = results[name]
        sec = r["seconds"]
        rows.append([name, f"{r['n_train']:,}",
                     f"{sec['MF', 'default']:.2f}", f"{sec['MF', 'ETsqrt 0.01']:.2f}",
                     f"{sec['MF', 'supervised']:.2f}",
                     f"{sec['AMF', 'default']:.2f}", f"{sec['AMF', 'ETsqrt 0.01']:.2f}",
                     f"{sec['AMF', 'supervised']:.2f}",
                     f"{r['pilot_seconds']['ET1']:.2f}", f"{r['pilot_seconds']['ETsqrt']:.2f}",
                     f"{r['pilot_seconds']['MI']:.2f}",
                     f"{sec['RF']:.2f}", f"{sec['ET']:.2f}"])
    report.section(
        "Fit time (wall seconds, one thread)",
        markdown_table(["dataset", "train rows", "MF default", "MF ETsqrt 0.01",
                        "MF supervised", "AMF default", "AMF ETsqrt 0.01",
                        "AMF supervised", "pilot ET1", "pilot ETsqrt", "pilot MI",
                        "RF(100)", "ET(100)"], rows),
        note="Pilot columns: the time to learn the weights on the pilot rows, not "
             "included in the forests' fit times (`ETsqrt 0.01`); `supervised` includes "
             "its ExtraTrees. A shared machine: compare within a row.")

    # Online against batch.
    rows = []
    for name in names:
        r = results[name]
        task = r["task"]
        row = [name, f"{r['n_train'] // N_BATCHES:,}"]
        for w in ONLINE:
            on, batch = r["online"][w]
            row += [fmt(task, on), fmt(task, batch)]
        rows.append(row)
    headers = ["dataset", "first batch"]
    for w in ONLINE:
        headers += [f"{w} online", f"{w} batch"]
    report.section(
        f"MF online ({N_BATCHES} mini-batches) against batch",
        markdown_table(headers, rows),
        note="Online: partial_fit over 10 mini-batches of the training rows, the "
             "weights learned on the first mini-batch and then fixed; batch: fit on "
             "the same rows with the same weights (so the two differ by the random "
             "draws only). For the default, units follow the range in both; for "
             "`supervised` (the estimators' option), the scales come from the first "
             "mini-batch online and from all rows in batch.")
    report.finish()


if __name__ == "__main__":
    main()
