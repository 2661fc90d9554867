"""An idea measured, not a feature: regressors that forecast the residual of an online
linear model (issues 18 and 22).

Mondrian forests forecast with piecewise-constant cells. A target with a linear part
(FriedmanDrift: ``10 x3 + 5 x4`` beside its non-linear terms) then costs many cells,
and few rows (the first rows of a stream, the rows after a change) give the forest
coarse cells. river's ARFRegressor grows Hoeffding trees with linear models in the
leaves, and FriedmanDrift is where the drift-adaptive forests miss its MAE.

Here a linear model learns online by recursive least squares (RLS) with a forgetting
factor ``lam``: ``w`` and ``P`` (``P = I / ridge`` at the start, ``ridge`` =
``RIDGE``), updated after each row; the forest learns the *residual* ``y - w . x`` of
the row with ``w`` from before the row, and forecasts ``forest(x) + w . x``. The linear
model never reads the forest, so the residuals of a batch can be computed first and
the forest fitted on them: batch and online training give the same forest, in law
(the Mondrian partition ignores the targets). Features enter the linear model
standardised by the mean and standard deviation of the first ``PILOT`` rows (what an
online model can know; an intercept column is added).

Sections:

- **FriedmanDrift** (``river.datasets.synth.FriedmanDrift``, each drift kind, 20,000
  rows, the streams and seeds of ``bench_drift.py``): progressive MAE, one row at a
  time, of ``AMFRegressor(10 trees, drift="adwin")`` alone and on residuals with
  ``lam`` 0.999 and 0.9999. river's ARFRegressor MAE is read from ``bench_drift.py``'s
  run caches (the same streams and seeds; it is not run again here).
- **Stationary regression** (the shared datasets of issue 22; raw features; the first
  split; at most 20,000 training rows; targets as in the files): test RMSE of AMF and
  the Mondrian forest (10 trees, default parameters) alone and on residuals (``lam`` =
  1: plain online ridge regression), and RandomForest(100) of scikit-learn in the same
  run.

Nothing of this is in the library: the closing note of the stop that added this
script says what a version in the estimators would need.

Run ``python benchmarks/bench_linear_residuals.py`` (about 10 minutes on 2 cores) or
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
FORGETTING = (0.999, 0.9999)
RIDGE = 1e-2
PILOT = 500
N_TREES = 10
MAX_TRAIN = 20000


class OnlineLinear:
    """Recursive least squares with forgetting on standardised features.

    Parameters
    ----------
    n_features : int
    lam : float
        Forgetting factor in (0, 1]: 1 is ridge regression over all rows seen.
    center, scale : ndarray
        Feature standardisation (from a pilot of the first rows).
    """

    def __init__(self, n_features, lam, center, scale):
        self.lam = float(lam)
        self.center, self.scale = center, scale
        self.w = np.zeros(n_features + 1)
        self.P = np.eye(n_features + 1) / RIDGE

    def _z(self, x):
        return np.append((x - self.center) / self.scale, 1.0)

    def predict(self, X):
        Z = np.hstack([(X - self.center) / self.scale, np.ones((X.shape[0], 1))])
        return Z @ self.w

    def residual_then_learn(self, x, y):
        """The residual of ``y`` under the current model, then the model learns the
        row."""
        z = self._z(x)
        residual = y - self.w @ z
        Pz = self.P @ z
        gain = Pz / (self.lam + z @ Pz)
        self.w = self.w + gain * residual
        self.P = (self.P - np.outer(gain, Pz)) / self.lam
        return residual


def pilot_scaling(X):
    rows = X[:PILOT]
    scale = rows.std(axis=0)
    scale[~(scale > 0)] = 1.0
    return rows.mean(axis=0), scale


def residuals(X, y, lam):
    """Prequential residuals of ``y`` and the linear model after all rows."""
    center, scale = pilot_scaling(X)
    model = OnlineLinear(X.shape[1], lam, center, scale)
    out = np.array([model.residual_then_learn(X[i], y[i]) for i in range(len(y))])
    return out, model


# ---------------------------------------------------------------- FriedmanDrift
def friedman_run(task):
    """Progressive MAE of one variant on one stream and seed (``lam`` None: the
    forest alone)."""
    import bench_drift

    from mondrianlearn import AMFRegressor

    name, seed, lam = task
    X, y = bench_drift.load_stream(name, seed, 20000)
    forest = AMFRegressor(n_estimators=N_TREES, random_state=seed, n_jobs=1, drift="adwin")
    linear = None
    if lam is not None:
        linear = OnlineLinear(X.shape[1], lam, *pilot_scaling(X))
    error = 0.0
    for i in range(len(y)):
        row = X[i:i + 1]
        offset = 0.0 if linear is None else float(linear.predict(row)[0])
        forecast = (0.0 if i == 0 else forest.predict(row)[0]) + offset
        error += abs(forecast - y[i])
        target = y[i] if linear is None else linear.residual_then_learn(X[i], y[i])
        forest.partial_fit(row, np.array([target]))
    return name, seed, lam, error / len(y)


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


def friedman_section(report, seeds, processes):
    from multiprocessing import get_context

    variants = (None,) + FORGETTING
    tasks = [(name, seed, lam) for name in FRIEDMAN for seed in seeds for lam in variants]
    results = {}
    with get_context("spawn").Pool(processes) as pool:
        for name, seed, lam, mae in pool.imap_unordered(friedman_run, tasks):
            progress(f"{name} seed {seed} lam {lam}: MAE {mae:.4f}")
            results[(name, seed, lam)] = mae
    arf = arf_scores()
    rows = []
    for name in FRIEDMAN:
        paired = [s for s in seeds if (name, s) in arf]
        means = [np.mean([results[(name, s, lam)] for s in seeds]) for lam in variants]
        arf_mean = np.mean([arf[(name, s)] for s in paired]) if paired else None
        rows.append([name, *(f"{m:.3f}" for m in means),
                     "-" if arf_mean is None else f"{arf_mean:.3f}",
                     f"{len(paired)} of {len(seeds)}"])
    report.section(
        "FriedmanDrift: progressive MAE, one row at a time (mean over the seeds)",
        markdown_table(["stream", "AMF drift", *(f"AMF drift on residuals, lam {lam}"
                                                 for lam in FORGETTING),
                        "river ARF (cached runs)", "seeds with ARF"], rows),
        f"Seeds {', '.join(map(str, seeds))}. AMFRegressor(n_estimators={N_TREES}, "
        f"drift='adwin'), default settings otherwise. river's ARFRegressor: the mean "
        f"over the seeds its cached runs cover.")


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
        rf = RandomForestRegressor(100, random_state=seed, n_jobs=1).fit(X, y)
        scores.append(rmse(rf.predict(X_test), y_test))
        progress(f"{name}: {scores}")
        rows.append([name, f"{len(y):,}", *scores, f"{linear_s:.1f} s"])
    report.section(
        "Stationary regression: test RMSE, raw features",
        markdown_table(["dataset", "train rows", "linear alone", "AMF", "AMF on residuals",
                        "MF", "MF on residuals", "RandomForest(100)",
                        "linear model's time (NumPy)"], rows),
        f"Forests of {N_TREES} trees, default parameters, seed {seed}; training rows "
        f"shuffled, at most {MAX_TRAIN:,}; the first split of each set (the UCI sets' "
        f"own; california_housing: 80/20 at random); targets as in the files "
        f"(california_housing in dollars). The linear model is the online ridge regression "
        f"(lam = 1) over the training rows in order, the forest fitted on its "
        f"prequential residuals; the forecast adds the final linear model.")


def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=6, help="FriedmanDrift seeds 0..n-1")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    seeds = [0] if args.quick else list(range(args.seeds))
    report = Report("bench_linear_residuals", "Forests on the residuals of an online "
                    "linear model (an idea measured)", args)
    friedman_section(report, seeds, args.processes)
    stationary_section(report, QUICK_REGRESSION if args.quick else REGRESSION, args.seed)
    report.finish()


if __name__ == "__main__":
    main()
