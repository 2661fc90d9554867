"""Mondrian regressors beside an online linear model (issues 18 and 22): the
variants measured, and the one the drift-adaptive AMF regressor now has.

Mondrian forests forecast with piecewise-constant cells. A target with a linear part
(FriedmanDrift: ``10 x3 + 5 x4`` beside its non-linear terms) then costs many cells,
and few rows (the first rows of a stream, the rows after a change) give the forest
coarse cells. river's ARFRegressor grows Hoeffding trees with linear models in the
leaves, and FriedmanDrift is where the drift-adaptive forests miss its MAE.

A linear model ``w . x`` learns online: recursive least squares (RLS) with a
forgetting factor (``P = I / RIDGE`` at the start), or normalised least mean squares
(NLMS) with a step size, on features in units that follow their range (as the
library's ``feature_scale="range"``: relative to the first value, divided by the range
so far; an earlier version standardised them by the first 500 rows, and diverged on
Elec2, whose first rows hardly vary), an intercept added. It shares the stream with
the forest in one of two ways (``VARIANTS``):

- **residuals**: the trees learn ``y - w . x`` (``w`` from before the row), the
  forecast is the sum. The linear model never reads the forest, so a batch's
  residuals can be computed first and the forest fitted on them (batch and online
  training give the same forest, in law);
- **linear on the errors**: the trees learn ``y`` as without the linear model, which
  learns the error of the forest's forecast; the forecast is the sum. The trees'
  targets stay as they are;
- **the library's correction** (``drift="adwin"``, setting ``linear_rate``): linear on
  the errors (NLMS 0.05), computed inside the estimator's compiled loop from the
  forest's own combined forecast, and weighed by a gate (exponential weights on
  the discounted losses of the forecast with and without it), so that it costs
  little where it does not help.

Sections:

- **Drifting streams**: progressive MAE, one row at a time, of ``AMFRegressor(10
  trees, drift={"linear_rate": 0})`` (no correction) alone, with each variant
  written here in NumPy, and with ``drift="adwin"`` (the library's gated
  correction), on FriedmanDrift (each drift
  kind, 20,000 rows, the streams and seeds of ``bench_drift.py``) and on the real
  Elec2 stream with ``nswprice`` as the target. river's ARFRegressor MAE on
  FriedmanDrift is read from ``bench_drift.py``'s run caches (not run again here).
- **Stationary regression** (the shared datasets of issue 22; raw features; the first
  split; at most 20,000 training rows; targets as in the files): test RMSE of AMF and
  the Mondrian forest (10 trees, default parameters) alone and on residuals of online
  ridge regression (RLS with factor 1), of the drift-adaptive AMF without and with
  its gated correction (``fit``: the rows learned in their order), and
  RandomForest(100) of scikit-learn in the same run.

The residual variants and the ungated one are not in the library: they cost
accuracy on Elec2 and on stationary sets (the tables). The gated correction is
(``mondrianlearn.drift``).

Run ``python benchmarks/bench_linear_residuals.py`` (about 15 minutes on 2 cores) or
``--quick`` (seed 0, three small datasets).
"""

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, make_parser, markdown_table, progress  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
FRIEDMAN = ("friedman_lea", "friedman_gra", "friedman_gsg")
REGRESSION = ("california_housing", "kin40k", "housing", "concrete", "energy", "yacht",
              "airfoil")
QUICK_REGRESSION = ("housing", "concrete", "yacht")
RIDGE = 1e-2
N_TREES = 10
MAX_TRAIN = 20000


class OnlineLinear:
    """An online linear model, an intercept added, on features in units that follow
    their range, as the library's ``feature_scale="range"`` does: each feature
    relative to its first value, divided by the width of its range so far (1 while
    that is 0). When a row widens a range, the coefficients (and RLS's ``P``) move
    so that the model's forecasts stay as they were.

    Parameters
    ----------
    n_features : int
    rule : {"rls", "nlms"}
        Recursive least squares with forgetting factor ``rate`` (1: ridge regression
        over all rows seen), or normalised least mean squares with step ``rate``.
    rate : float
    """

    def __init__(self, n_features, rule, rate):
        self.rule, self.rate = rule, float(rate)
        self.origin = self.low = self.high = None
        self.w = np.zeros(n_features + 1)
        self.P = np.eye(n_features + 1) / RIDGE if rule == "rls" else None

    def _units(self):
        width = self.high - self.low
        return np.where(width > 0, width, 1.0)

    def _z(self, X):
        X = np.atleast_2d(X)
        if self.origin is None:
            return np.hstack([np.zeros_like(X), np.ones((X.shape[0], 1))])
        return np.hstack([(X - self.origin) / self._units(), np.ones((X.shape[0], 1))])

    def predict(self, X):
        return self._z(X) @ self.w

    def _widen(self, x):
        if self.origin is None:
            self.origin, self.low, self.high = x.copy(), x.copy(), x.copy()
            return
        before = self._units()
        self.low, self.high = np.minimum(self.low, x), np.maximum(self.high, x)
        ratio = self._units() / before  # z_new = z_old / ratio
        if np.all(ratio == 1.0):
            return
        scale = np.append(ratio, 1.0)
        self.w = self.w * scale
        if self.P is not None:
            self.P = self.P * np.outer(scale, scale)  # A = sum z z^T: S A S, P: the inverse

    def learn(self, x, error):
        """One update from the row ``x`` whose forecast missed by ``error``."""
        self._widen(x)
        z = self._z(x)[0]
        if self.rule == "nlms":
            self.w = self.w + self.rate * error * z / (z @ z)
            return
        Pz = self.P @ z
        gain = Pz / (self.rate + z @ Pz)
        self.w = self.w + gain * error
        self.P = (self.P - np.outer(gain, Pz)) / self.rate

    def residual_then_learn(self, x, y):
        """The residual of ``y`` under the current model, then the model learns the
        row."""
        residual = y - float(self.predict(x)[0])
        self.learn(x, residual)
        return residual


def residuals(X, y, lam):
    """Prequential residuals of ``y`` and the linear model (ridge, ``lam`` 1) after
    all rows."""
    model = OnlineLinear(X.shape[1], "rls", lam)
    out = np.array([model.residual_then_learn(X[i], y[i]) for i in range(len(y))])
    return out, model


# ------------------------------------------------------------- drifting streams
VARIANTS = {
    "AMF drift, no correction": None,
    "residuals, RLS 0.999": ("residuals", "rls", 0.999),
    "residuals, RLS 0.9999": ("residuals", "rls", 0.9999),
    "residuals, NLMS 0.05": ("residuals", "nlms", 0.05),
    "linear on the errors, NLMS 0.05": ("errors", "nlms", 0.05),
    "the library's gated correction": "library",
}
"""How the forest and the linear model share a stream. ``residuals``: the trees learn
``y - w . x`` (``w`` from before the row), the forecast is the sum. ``errors``: the
trees learn ``y`` as without a linear model, and the linear model learns the error
of the forest's forecast (``y - forest(x) - w . x``, both from before the row): it
corrects what the trees miss, and leaves their targets alone."""


def load_drift_stream(name, seed):
    """A drifting regression stream: FriedmanDrift (``bench_drift.py``'s), or Elec2
    with ``nswprice`` as the target (every row, in time order; ``seed`` unused)."""
    if name == "elec2_nswprice":
        from mondrianlearn.datasets import load_electricity

        X, _ = load_electricity()
        X = np.asarray(X, dtype=np.float64)
        return np.ascontiguousarray(np.delete(X, 3, axis=1)), X[:, 3].copy()
    import bench_drift

    return bench_drift.load_stream(name, seed, 20000)


def stream_run(task):
    """Progressive MAE of one variant on one stream and seed."""
    from mondrianlearn import AMFRegressor

    name, seed, label = task
    X, y = load_drift_stream(name, seed)
    variant = VARIANTS[label]
    drift = "adwin" if variant == "library" else {"linear_rate": 0.0}
    forest = AMFRegressor(n_estimators=N_TREES, random_state=seed, n_jobs=1, drift=drift)
    if variant == "library":
        variant = None
    linear = None if variant is None else OnlineLinear(X.shape[1], variant[1], variant[2])
    error = 0.0
    for i in range(len(y)):
        row = X[i:i + 1]
        trees = 0.0 if i == 0 else forest.predict(row)[0]
        offset = 0.0 if linear is None else float(linear.predict(row)[0])
        error += abs(trees + offset - y[i])
        target = y[i]
        if variant is not None and variant[0] == "residuals":
            target = linear.residual_then_learn(X[i], y[i])
        elif variant is not None:
            linear.learn(X[i], y[i] - trees - offset)
        forest.partial_fit(row, np.array([target]))
    return name, seed, label, error / len(y)


def arf_scores():
    """river ARFRegressor's progressive MAE per (stream, seed), from the run caches of
    ``bench_drift.py``."""
    scores = {}
    for path in sorted(RESULTS.glob("bench_drift*_runs.jsonl")):
        for line in path.read_text().splitlines():
            run = json.loads(line)
            key = run["key"]
            if key[0] in FRIEDMAN and key[3] == "river ARF" and key[2] == 20000:
                scores[(key[0], key[1])] = run["score"]
    return scores


def stream_section(report, seeds, processes):
    from multiprocessing import get_context

    streams = [(name, seed) for name in FRIEDMAN for seed in seeds] + [("elec2_nswprice", 0)]
    tasks = [(name, seed, label) for name, seed in streams for label in VARIANTS]
    results = {}
    with get_context("spawn").Pool(processes) as pool:
        for name, seed, label, mae in pool.imap_unordered(stream_run, tasks):
            progress(f"{name} seed {seed} {label}: MAE {mae:.5g}")
            results[(name, seed, label)] = mae
    arf = arf_scores()
    rows = []
    for name in FRIEDMAN + ("elec2_nswprice",):
        used = seeds if name in FRIEDMAN else [0]
        paired = [s for s in used if (name, s) in arf]
        means = [np.mean([results[(name, s, label)] for s in used]) for label in VARIANTS]
        arf_mean = np.mean([arf[(name, s)] for s in paired]) if paired else None
        rows.append([name, *(f"{m:.4g}" for m in means),
                     "-" if arf_mean is None else f"{arf_mean:.4g}",
                     f"{len(paired)} of {len(used)}" if name in FRIEDMAN else "-"])
    report.section(
        "Drifting streams: progressive MAE, one row at a time (mean over the seeds)",
        markdown_table(["stream", *VARIANTS, "river ARF (cached runs)", "seeds with ARF"],
                       rows),
        f"FriedmanDrift: seeds {', '.join(map(str, seeds))}, 20,000 rows. Elec2 "
        f"(`nswprice`, the real stream): all 45,312 rows in time order, the other 7 "
        f"columns as features, seed 0. AMFRegressor(n_estimators={N_TREES}, "
        f"drift={{'linear_rate': 0}}), default settings otherwise, but in the last column "
        f"(drift='adwin', its gated correction included). The linear models read the "
        f"features in units that follow their range. river's ARFRegressor: the mean over "
        f"the seeds its cached runs cover (`bench_drift.py`).")


# -------------------------------------------------------- stationary regression
def rmse(forecast, y):
    """Root mean squared error, written with four significant digits (dollars of
    california_housing as whole numbers)."""
    value = float(np.sqrt(np.mean((forecast - y) ** 2)))
    return f"{value:,.0f}" if value >= 1000 else f"{value:.4g}"


def stationary_section(report, names, seed):
    from bench_feature_scale import load
    from sklearn.ensemble import RandomForestRegressor

    from mondrianlearn import AMFRegressor, MondrianForestRegressor

    rows = []
    for name in names:
        try:
            data = load(name)
        except Exception as exc:  # noqa: BLE001 - a missing dataset is reported
            progress(f"{name} skipped: {exc}")
            continue
        train, test = data["splits"][0]
        order = np.random.RandomState(seed).permutation(len(train))[:MAX_TRAIN]
        X, y = data["X"][train][order], np.asarray(data["y"], dtype=np.float64)[train][order]
        X_test = data["X"][test]
        y_test = np.asarray(data["y"], dtype=np.float64)[test]
        start = time.process_time()
        resid, linear = residuals(X, y, 1.0)
        linear_s = time.process_time() - start
        scores = [rmse(linear.predict(X_test), y_test)]
        for Est in (AMFRegressor, MondrianForestRegressor):
            alone = Est(n_estimators=N_TREES, random_state=seed, n_jobs=1).fit(X, y)
            on_resid = Est(n_estimators=N_TREES, random_state=seed, n_jobs=1).fit(X, resid)
            forecast = on_resid.predict(X_test) + linear.predict(X_test)
            scores += [rmse(alone.predict(X_test), y_test), rmse(forecast, y_test)]
        for drift in ({"linear_rate": 0.0}, "adwin"):
            adaptive = AMFRegressor(n_estimators=N_TREES, random_state=seed, n_jobs=1,
                                    drift=drift).fit(X, y)
            scores.append(rmse(adaptive.predict(X_test), y_test))
        rf = RandomForestRegressor(100, random_state=seed, n_jobs=1).fit(X, y)
        scores.append(rmse(rf.predict(X_test), y_test))
        progress(f"{name}: {scores}")
        rows.append([name, f"{len(y):,}", *scores, f"{linear_s:.1f} s"])
    report.section(
        "Stationary regression: test RMSE, raw features",
        markdown_table(["dataset", "train rows", "linear alone", "AMF", "AMF on residuals",
                        "MF", "MF on residuals", "AMF drift, no correction",
                        "AMF drift, gated correction", "RandomForest(100)",
                        "linear model's time (NumPy)"], rows),
        f"Forests of {N_TREES} trees, default parameters, seed {seed}; training rows "
        f"shuffled, at most {MAX_TRAIN:,}; the first split of each set (the UCI sets' "
        f"own; california_housing: 80/20 at random); targets as in the files "
        f"(california_housing in dollars). The linear model is the online ridge regression "
        f"(lam = 1) over the training rows in order, the forest fitted on its "
        f"prequential residuals; the forecast adds the final linear model. AMF drift: "
        f"AMFRegressor(drift={{'linear_rate': 0}}) and AMFRegressor(drift='adwin') (its "
        f"gated correction), fitted on the training rows in order.")


def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=6, help="FriedmanDrift seeds 0..n-1")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    seeds = [0] if args.quick else list(range(args.seeds))
    report = Report("bench_linear_residuals", "Mondrian regressors beside an online "
                    "linear model", args)
    stream_section(report, seeds, args.processes)
    stationary_section(report, QUICK_REGRESSION if args.quick else REGRESSION, args.seed)
    report.finish()


if __name__ == "__main__":
    main()
