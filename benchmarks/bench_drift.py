"""Drift-adaptive forests against river: streams that change.

Every stream is learned one row at a time, test-then-train (river's
``progressive_val_score`` protocol: each row is predicted, then learned; the
first row, predicted by an empty model, counts as wrong, or as a forecast of 0
for regression), by every model in the same run, 10 trees each, one thread, and
the scores are the mean over 3 seeds (the seed of the stream's generator and of
the models; Elec2 is one fixed stream, only the models' seeds change).

Streams, generated offline with river's ``datasets.synth`` (no download):

- Elec2 (bundled with the library: ``mondrianlearn.datasets.load_electricity``),
  45,312 rows;
- ``ConceptDriftStream(Agrawal(0), Agrawal(4), position=10000, width=1000)``;
- ``ConceptDriftStream(SEA(0), SEA(3), position=10000, width=100)``;
- ``Hyperplane(n_features=10, mag_change=0.001)`` (gradual drift);
- LED: ``ConceptDriftStream`` from ``LEDDrift(noise_percentage=0.1,
  irrelevant_features=True, n_drift_features=0)`` to the same with
  ``n_drift_features=7``, ``position=10000, width=1000`` (a single ``LEDDrift``
  permutes its features once, when it is made: it does not drift by itself);
- ``RandomRBFDrift(n_classes=4, n_features=10, n_centroids=50,
  change_speed=0.001, n_drift_centroids=50)`` (moving centroids);
- regression: ``FriedmanDrift`` with each of its drift kinds: ``lea`` (local,
  expanding; changes at rows 5,000, 10,000 and 15,000), ``gra`` (global, recurring
  abrupt; 7,000 and 14,000) and ``gsg`` (global and slow gradual; 7,000 and
  14,000, transitions of 1,000 rows).

The synthetic streams have 20,000 rows. Models: ours (AMF) with
``drift="adwin"``, ours without (``drift=None``, the stationary model), river's
``forest.AMFClassifier`` / ``AMFRegressor`` and ``forest.ARFClassifier`` /
``ARFRegressor`` (10 models), and our Mondrian forests
(``MondrianForestClassifier`` / ``MondrianForestRegressor``) with and without
``drift="adwin"`` ("MF drift", "MF"), all with their default settings. The
targets below are those of the drift-adaptive AMF; the Mondrian forests' rows
and columns are measurements beside them.

Other targets:

- stationary streams (letter and satimage training sets, shuffled with the seed;
  river's Phishing): our models with drift adaptation at most 0.3 points below
  the same model without it (letter and satimage need ``MONDRIANLEARN_DATA``);
- throughput: rows learned per CPU second (the ``partial_fit`` / ``learn_one``
  calls of the runs above only, one row per call, one thread), ours with drift
  against river ARF, summed over the streams: >= 20x;
- memory: ``AMFClassifier(drift="adwin", max_nodes=1000)`` on a 2,000,000-row
  stream whose concept changes every 250,000 rows (a rotating hyperplane in 10
  dimensions, 5% label noise, generated with NumPy; learned in calls of 2,000
  rows, which gives the same model as one row at a time): the size of the
  pickled model and the process's resident memory at every eighth of the stream;
  flat: the largest size over the second half within 10% of the largest over the
  first half (a slot holds one or two trees as background trees come and go).

Run ``python benchmarks/bench_drift.py`` (about an hour on 2 cores: river's ARF
takes most of it) or ``--quick`` (5,000 rows per stream, one seed, 200,000 rows
for memory; a few minutes). ``--processes 2`` runs the streams in two processes.
Writes ``benchmarks/results/bench_drift.md`` (``bench_drift_quick.md``).

Settings chosen on seeds 0-2 are checked on others with ``--first-seed 3`` (seeds
3-5, their own report and cache, ``bench_drift_seeds3-5.md``), on some streams
with ``--streams`` (e.g. ``--first-seed 3 --streams friedman_lea friedman_gra
friedman_gsg``).
"""

import json
import os
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS_DIR, Report, make_parser, markdown_table, max_rss_bytes, progress  # noqa: E402

N_TREES = 10
N_SYNTH = 20_000
CLASSIFICATION = ("elec2", "agrawal", "sea", "hyperplane", "led", "rbf")
REGRESSION = ("friedman_lea", "friedman_gra", "friedman_gsg")
STATIONARY = ("letter", "satimage", "phishing")
MODELS = ("ours drift", "ours", "river AMF", "river ARF", "MF drift", "MF")
OURS = ("ours drift", "ours", "MF drift", "MF")
"""Our models (learned through ``partial_fit``, one row per call)."""
ELEC2_TARGET = 0.88
STATIONARY_SLACK = 0.003
SPEED_TARGET = 20.0
MEMORY_CHANGE = 250_000


# ---------------------------------------------------------------------- streams
def _river_stream(name, seed):
    from river.datasets import synth

    if name == "agrawal":
        return synth.ConceptDriftStream(synth.Agrawal(0, seed=seed), synth.Agrawal(4, seed=seed),
                                        position=10_000, width=1_000, seed=seed)
    if name == "sea":
        return synth.ConceptDriftStream(synth.SEA(0, seed=seed), synth.SEA(3, seed=seed),
                                        position=10_000, width=100, seed=seed)
    if name == "hyperplane":
        return synth.Hyperplane(seed=seed, n_features=10, mag_change=0.001)
    if name == "led":
        return synth.ConceptDriftStream(
            synth.LEDDrift(seed=seed, noise_percentage=0.1, irrelevant_features=True,
                           n_drift_features=0),
            synth.LEDDrift(seed=seed, noise_percentage=0.1, irrelevant_features=True,
                           n_drift_features=7),
            position=10_000, width=1_000, seed=seed)
    if name == "rbf":
        return synth.RandomRBFDrift(seed_model=seed, seed_sample=seed, n_classes=4,
                                    n_features=10, n_centroids=50, change_speed=0.001,
                                    n_drift_centroids=50)
    kind = name.split("_")[1]
    position = {"lea": (5_000, 10_000, 15_000), "gra": (7_000, 14_000),
                "gsg": (7_000, 14_000)}[kind]
    return synth.FriedmanDrift(drift_type=kind, position=position, transition_window=1_000,
                               seed=seed)


def load_stream(name, seed, n_rows):
    """``(X, y)`` of a stream: NumPy arrays, rows in stream order."""
    if name == "elec2":
        from mondrianlearn.datasets import load_electricity

        X, y = load_electricity()
        return np.asarray(X, dtype=np.float64)[:n_rows], np.asarray(y)[:n_rows]
    if name == "phishing":
        from river import datasets

        rows = list(datasets.Phishing())
        keys = list(rows[0][0])
        X = np.array([[float(x[k]) for k in keys] for x, _ in rows])
        y = np.array([int(t) for _, t in rows])
        order = np.random.RandomState(seed).permutation(len(y))
        return X[order][:n_rows], y[order][:n_rows]
    if name in ("letter", "satimage"):
        from mondrianlearn.datasets import benchmark_data_home, load_benchmark

        if benchmark_data_home() is None:
            return None
        data = load_benchmark(name)
        X = np.asarray(data["X_train"], dtype=np.float64)
        y = np.asarray(data["y_train"])
        order = np.random.RandomState(seed).permutation(len(y))
        return X[order][:n_rows], y[order][:n_rows]
    X, y, keys = [], [], None
    for x, target in _river_stream(name, seed).take(n_rows):
        if keys is None:
            keys = list(x)
        X.append([float(x[k]) for k in keys])
        y.append(target)
    y = np.array(y)
    if y.dtype == bool:
        y = y.astype(np.int64)
    return np.array(X), y


# ------------------------------------------------------------------- the models
def make_model(label, regression, seed):
    if label.startswith("MF"):
        from mondrianlearn import MondrianForestClassifier, MondrianForestRegressor

        Est = MondrianForestRegressor if regression else MondrianForestClassifier
        return Est(n_estimators=N_TREES, random_state=seed, n_jobs=1,
                   drift="adwin" if label == "MF drift" else None)
    if label.startswith("ours"):
        from mondrianlearn import AMFClassifier, AMFRegressor

        Est = AMFRegressor if regression else AMFClassifier
        return Est(n_estimators=N_TREES, random_state=seed, n_jobs=1,
                   drift="adwin" if label == "ours drift" else None)
    from river import forest

    if label == "river AMF":
        if regression:
            return forest.AMFRegressor(n_estimators=N_TREES, seed=seed)
        return forest.AMFClassifier(n_estimators=N_TREES, seed=seed)
    if regression:
        return forest.ARFRegressor(n_models=N_TREES, seed=seed)
    return forest.ARFClassifier(n_models=N_TREES, seed=seed)


def progressive(label, X, y, regression, seed):
    """Test-then-train one row at a time: ``(accuracy or MAE, rows learned per CPU
    second of the learning calls)``."""
    model = make_model(label, regression, seed)
    n = len(y)
    learn_cpu = 0.0
    clock = time.process_time
    if label in OURS:
        score = 0.0
        for i in range(n):
            xi = X[i:i + 1]
            if i == 0:
                pred = 0.0 if regression else None
            elif regression:
                pred = model.predict(xi)[0]
            else:
                pred = model.classes_[np.argmax(model.predict_proba(xi)[0])]
            score += abs(pred - y[i]) if regression else (pred == y[i])
            start = clock()
            model.partial_fit(xi, y[i:i + 1])
            learn_cpu += clock() - start
    else:
        names = [f"x{d}" for d in range(X.shape[1])]
        rows = [dict(zip(names, map(float, r))) for r in X]
        targets = y.tolist()
        score = 0.0
        for x, target in zip(rows, targets):
            pred = model.predict_one(x)
            if regression:
                score += abs((0.0 if pred is None else pred) - target)
            else:
                score += pred == target
            start = clock()
            model.learn_one(x, target)
            learn_cpu += clock() - start
    return score / n, n / max(learn_cpu, 1e-9), model


_WARM = []


def warm_up_models():
    """Load the compiled kernels (numba's cache) of our models, and river's
    modules, once per process, before anything is timed."""
    if _WARM:
        return
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 4))
    y = (X[:, 0] > 0.5).astype(np.int64)
    for regression in (False, True):
        for label in MODELS:
            model = make_model(label, regression, 0)
            target = X[:, 1] if regression else y
            if label in OURS:
                model.fit(X[:200], target[:200])
                for i in range(200, 230):
                    model.predict(X[i:i + 1])
                    model.partial_fit(X[i:i + 1], target[i:i + 1])
            else:
                for i in range(50):
                    x = dict(enumerate(X[i]))
                    model.predict_one(x)
                    model.learn_one(x, target[i])
    _WARM.append(True)


def run_task(task):
    """One model on one stream and seed, or the memory run; appends its result to
    the run cache (one JSON line) and returns it."""
    cache, key = task
    warm_up_models()
    if key[0] == "memory":
        result = {"key": list(key), "checkpoints": run_memory(key[1])}
    else:
        name, seed, n_rows, label = key
        data = load_stream(name, seed, n_rows)
        if data is None:
            return {"key": list(key), "missing": True}
        X, y = data
        started = time.perf_counter()
        score, rate, model = progressive(label, X, y, name.startswith("friedman"), seed)
        events = getattr(model, "drift_events_", None)
        replaced = (int(np.isin(events["kind"], ["drift", "swap"]).sum())
                    if events is not None else None)
        result = {"key": list(key), "score": float(score), "rate": float(rate),
                  "replaced": replaced, "n": int(len(y))}
        progress(f"{name} seed {seed} {label}: {score:.4f}, {rate:,.0f} rows/s learned, "
                 f"{time.perf_counter() - started:.0f} s")
    with open(cache, "a") as f:
        f.write(json.dumps(result) + "\n")
    return result


def read_cache(cache):
    """Results of earlier runs, by key (the last one of each key)."""
    done = {}
    if cache.exists():
        for line in cache.read_text().splitlines():
            if line.strip():
                result = json.loads(line)
                done[tuple(result["key"])] = result
    return done


# ---------------------------------------------------------------------- memory
def rotating_hyperplane(n_rows, change, seed, chunk):
    """Chunks ``(X, y)`` of a stream whose concept changes every ``change`` rows: a
    new random hyperplane through the centre of [0, 1]^10, 5% labels flipped."""
    rng = np.random.RandomState(seed)
    normal = rng.normal(size=10)
    for start in range(0, n_rows, chunk):
        if start and start % change == 0:
            normal = rng.normal(size=10)
        X = rng.uniform(size=(chunk, 10))
        y = ((X - 0.5) @ normal > 0).astype(np.int64)
        flip = rng.uniform(size=chunk) < 0.05
        y[flip] = 1 - y[flip]
        yield X, y


def run_memory(n_rows, seed=0, chunk=2_000, max_nodes=1_000):
    import pickle

    from mondrianlearn import AMFClassifier

    model = AMFClassifier(n_estimators=N_TREES, max_nodes=max_nodes, random_state=seed,
                          n_jobs=1, drift="adwin")
    checkpoints = []
    seen = 0
    hits = 0
    started = time.perf_counter()
    for X, y in rotating_hyperplane(n_rows, MEMORY_CHANGE, seed, chunk):
        if seen:
            hits += int((model.predict(X) == y).sum())
        model.partial_fit(X, y, classes=[0, 1] if seen == 0 else None)
        seen += len(y)
        if seen % (n_rows // 8) == 0:
            state = model._drift_state
            nodes = max(t.n_nodes for t in list(model.trees_) + list(state.background))
            checkpoints.append((seen, len(pickle.dumps(model)), max_rss_bytes(), nodes,
                                len(model.drift_events_), hits / max(seen - chunk, 1)))
            progress(f"memory: {seen:,} rows, {checkpoints[-1][1] / 2**20:.2f} MB pickled, "
                     f"{time.perf_counter() - started:.0f} s")
    return checkpoints


# ----------------------------------------------------------------------- report
def fmt_score(value, regression):
    if value is None:
        return "n/a"
    return f"{value:.3f}" if regression else f"{value:.4f}"


def met(ok):
    return "MET" if ok else "MISSED"


def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=None, help="seeds (default 3, quick 1)")
    parser.add_argument("--processes", type=int, default=1,
                        help="streams run in this many processes (each one thread)")
    parser.add_argument("--rows", type=int, default=None,
                        help="rows per stream (default 20,000 and all of Elec2; quick 5,000)")
    parser.add_argument("--memory-rows", type=int, default=None,
                        help="rows of the memory stream (default 2,000,000; quick 200,000)")
    parser.add_argument("--fresh", action="store_true",
                        help="forget the runs cached in results/bench_drift_runs.jsonl")
    parser.add_argument("--report-only", action="store_true",
                        help="no new runs: the report of the cached ones")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="seeds first-seed, first-seed + 1, ... (default 0); other "
                             "seeds than 0-2 write their own report and cache "
                             "(bench_drift_seeds<first>-<last>.md)")
    parser.add_argument("--streams", nargs="+", default=None,
                        choices=CLASSIFICATION + REGRESSION + STATIONARY + ("memory",),
                        help="only these streams ('memory': the memory run); the report "
                             "then needs --suffix unless the seeds are not 0-2")
    parser.add_argument("--suffix", default=None,
                        help="added to the report's and the cache's file names")
    args = parser.parse_args()
    n_seeds = args.seeds or (1 if args.quick else 3)
    seed_list = list(range(args.first_seed, args.first_seed + n_seeds))
    suffix = args.suffix
    if suffix is None and args.first_seed:
        suffix = f"_seeds{seed_list[0]}-{seed_list[-1]}"
    if args.streams and suffix is None and not args.report_only and not args.no_save:
        parser.error("--streams rewrites part of the report: give --suffix (or --no-save)")
    selected = set(args.streams or CLASSIFICATION + REGRESSION + STATIONARY + ("memory",))
    classification = [n for n in CLASSIFICATION if n in selected]
    regression = [n for n in REGRESSION if n in selected]
    stationary = [n for n in STATIONARY if n in selected]
    n_synth = args.rows or (5_000 if args.quick else N_SYNTH)
    n_elec2 = args.rows or (5_000 if args.quick else 10**9)
    memory_rows = args.memory_rows or (200_000 if args.quick else 2_000_000)
    report = Report("bench_drift",
                    "Drift-adaptive AMF and Mondrian forests against river's AMF and ARF",
                    args, suffix=suffix or "")
    if seed_list != [0, 1, 2][:n_seeds] or args.streams:
        report.text(f"Seeds {', '.join(map(str, seed_list))}; streams: "
                    f"{', '.join(n for n in (*classification, *regression, *stationary))}"
                    f"{', memory' if 'memory' in selected else ''}.")

    cache = RESULTS_DIR / f"{report.name}_runs.jsonl"
    memory_key = ("memory", memory_rows)
    keys = [memory_key] if "memory" in selected else []
    keys += [(name, seed, n_elec2 if name == "elec2" else n_synth, label)
             for seed in seed_list for name in classification + regression
             for label in MODELS]
    keys += [(name, seed, n_synth, label) for seed in seed_list for name in stationary
             for label in ("ours drift", "ours", "MF drift", "MF")]
    done = read_cache(cache) if not args.fresh else {}
    if args.fresh and cache.exists():
        cache.unlink()
    # What the targets need first (ours with drift, river's ARF, the stationary
    # check), then the other models, so that an interrupted run has the targets.
    priority = {"ours drift": 0, "river ARF": 1, "ours": 2, "river AMF": 3, "MF drift": 4,
                "MF": 5}
    order = sorted(keys, key=lambda k: (0, 0, 0) if k[0] == "memory" else
                   (priority[k[3]] + (k[0] in STATIONARY and k[3] == "ours") * -2, k[1],
                    keys.index(k)))
    todo = [(cache, key) for key in order if key not in done]
    if todo and not args.report_only:
        RESULTS_DIR.mkdir(exist_ok=True)
        if args.processes > 1:
            from multiprocessing import get_context

            with get_context("spawn").Pool(args.processes) as pool:
                for result in pool.imap_unordered(run_task, todo):
                    done[tuple(result["key"])] = result
        else:
            for task in todo:
                result = run_task(task)
                done[tuple(result["key"])] = result

    by_seed = {}
    for key in keys:
        if key[0] == "memory":
            continue
        result = done.get(key)
        if result is None or result.get("missing"):
            continue
        name, seed, _, label = key
        by_seed.setdefault((name, label), {})[seed] = (
            result["score"], result["rate"], result["replaced"], result["n"])
    missing = [key for key in keys if key not in done]
    if missing:
        report.text(f"**Incomplete run**: {len(missing)} of {len(keys)} runs missing. Ours "
                    f"with drift and river's ARF are compared on the seeds both finished; "
                    f"the other columns are over their own finished seeds (column 'seeds').")

    def paired(name):
        """Seeds on which ours with drift and river's ARF both ran."""
        ours = by_seed.get((name, "ours drift"), {})
        if name in STATIONARY:
            return sorted(ours)
        return sorted(set(ours) & set(by_seed.get((name, "river ARF"), {})))

    def runs(name, label):
        values = by_seed.get((name, label), {})
        if label in ("ours drift", "river ARF"):
            values = {s: values[s] for s in paired(name) if s in values}
        return list(values.values())

    scores = {(name, label): runs(name, label) for name, label in by_seed}

    def mean(name, label, k=0):
        values = scores.get((name, label))
        return None if not values else float(np.mean([v[k] for v in values]))

    def seeds(name):
        counts = {label: len(scores.get((name, label), [])) for label in MODELS}
        common = len(paired(name))
        fewer = [f"{label} {n}" for label, n in counts.items() if n != common]
        return str(common) + (f" ({', '.join(fewer)})" if fewer else "")

    def replaced(name, label="ours drift"):
        value = mean(name, label, 2)
        return "" if value is None else f"{value:.0f}"

    # Classification
    rows = []
    for name in classification:
        values = [mean(name, label) for label in MODELS]
        rows.append([name, *(fmt_score(v, False) for v in values), replaced(name),
                     replaced(name, "MF drift"), seeds(name)])
    complete = [n for n in classification if paired(n)]
    averages = [float(np.mean([mean(n, label) for n in complete]))
                if complete and all(mean(n, label) is not None for n in complete)
                else float("nan") for label in MODELS]
    rows.append([f"**mean** ({len(complete)} streams)",
                 *(f"**{v:.4f}**" if v == v else "n/a" for v in averages),
                 "", "", ""])
    if classification:
        report.section(
            "Classification: progressive accuracy, one row at a time (mean over the seeds)",
            markdown_table(["stream", *MODELS, "trees replaced (ours drift)",
                            "trees replaced (MF drift)", "seeds"], rows))

    # Regression
    rows = []
    for name in regression:
        values = [mean(name, label) for label in MODELS]
        rows.append([name, *(fmt_score(v, True) for v in values), replaced(name),
                     replaced(name, "MF drift"), seeds(name)])
    if regression:
        report.section("Regression (FriedmanDrift): progressive MAE (mean over the seeds)",
                       markdown_table(["stream", *MODELS, "trees replaced (ours drift)",
                                       "trees replaced (MF drift)", "seeds"], rows))

    # Stationary
    rows = []
    stationary_ok = []
    for name in stationary:
        drift, plain = mean(name, "ours drift"), mean(name, "ours")
        if drift is None:
            rows.append([name, "(no data)", "", "", "", "", "", ""])
            continue
        ok = drift >= plain - STATIONARY_SLACK
        stationary_ok.append(ok)
        mf_drift, mf = mean(name, "MF drift"), mean(name, "MF")
        mf_cells = (["n/a"] * 3 if mf_drift is None or mf is None else
                    [f"{mf_drift:.4f}", f"{mf:.4f}", f"{100 * (mf_drift - mf):+.2f}"])
        rows.append([name, f"{drift:.4f}", f"{plain:.4f}", f"{100 * (drift - plain):+.2f}",
                     met(ok), *mf_cells])
    if stationary:
        report.section("Stationary streams: progressive accuracy, with and without drift "
                       "adaptation", markdown_table(
                           ["stream", "ours drift", "ours", "difference (points)", "target",
                            "MF drift", "MF", "difference (points)"], rows))

    # Throughput (learning calls only, all streams of the comparison)
    # Rows per CPU second over all streams: total rows / total seconds.
    def throughput(label, names):
        runs = [v for name in names for v in scores.get((name, label), [])]
        seconds = sum(n / rate for _, rate, _, n in runs)
        return sum(n for *_, n in runs) / seconds if seconds else float("nan")

    totals = {label: throughput(label, classification + regression) for label in MODELS}
    speed_ratio = totals["ours drift"] / totals["river ARF"]
    rows = [[label, f"{totals[label]:,.0f}", f"{totals[label] / totals['river ARF']:.1f}x"]
            for label in MODELS]
    report.section("Learning throughput: rows per CPU second of the learning calls, one row "
                   "per call, one thread (all streams above)",
                   markdown_table(["model", "rows/s", "against river ARF"], rows))
    # The ratio depends on the stream (river's trees and ours grow differently):
    # by stream and by group, the same rows and seeds for both models.
    groups = [(name, [name]) for name in classification + regression]
    groups += [("classification streams", classification), ("FriedmanDrift", regression)]
    rows = []
    for name, names in groups:
        if not names:
            continue
        ours, arf = throughput("ours drift", names), throughput("river ARF", names)
        rows.append([name, f"{ours:,.0f}", f"{arf:,.0f}", f"{ours / arf:.1f}x"])
    report.section("Learning throughput of ours with drift against river ARF, by stream",
                   markdown_table(["stream", "ours drift (rows/s)", "river ARF (rows/s)",
                                   "ratio"], rows))

    # Memory
    memory = done.get(memory_key) if "memory" in selected else None
    checkpoints = memory["checkpoints"] if memory else [(0, 0, 0, 0, 0, 0.0)] * 2
    rows = [[f"{seen:,}", f"{size / 2**20:.2f} MB", f"{rss / 2**20:.0f} MB", str(nodes),
             f"{events:,}", f"{accuracy:.4f}"]
            for seen, size, rss, nodes, events, accuracy in checkpoints]
    # Between one and two trees per slot (background trees come and go): flat means
    # that the largest size over the second half of the stream is within 10% of the
    # largest over the first half.
    sizes = [c[1] for c in checkpoints]
    half = len(sizes) // 2
    first_half, second_half = max(sizes[:half]), max(sizes[half:])
    memory_ok = memory is not None and second_half <= 1.1 * first_half
    if memory is not None:
        report.section(
            f"Memory: AMFClassifier(drift='adwin', max_nodes=1000), {memory_rows:,}-row "
            f"stream, new concept every {MEMORY_CHANGE:,} rows",
            markdown_table(["rows", "pickled model", "process max RSS", "largest tree (nodes)",
                            "events recorded", "progressive accuracy"], rows),
            note="The pickled model holds every tree (foreground and background), the "
                 "detectors and the event log (24 bytes per event, the only part that grows "
                 "once the node budget is reached). Process RSS is that of the worker that "
                 "ran it.")

    # Targets
    def f(value, digits=4):
        return "n/a" if value is None or value != value else f"{value:.{digits}f}"

    def verdict(ok, *values):
        if any(v is None or v != v for v in values):
            return "not run"
        return met(ok)

    elec2 = {label: mean("elec2", label) for label in MODELS}
    friedman = [(mean(n, "ours drift"), mean(n, "river ARF")) for n in regression]
    regression_ok = all(a is not None and b is not None and a <= b for a, b in friedman)
    rows = [
        ["classification: mean progressive accuracy >= river ARF",
         f"{f(averages[0])} vs {f(averages[3])}",
         verdict(averages[0] >= averages[3], averages[0], averages[3])],
        ["Elec2 >= river ARF", f"{f(elec2['ours drift'])} vs {f(elec2['river ARF'])}",
         verdict(elec2["ours drift"] is not None and elec2["river ARF"] is not None
                 and elec2["ours drift"] >= elec2["river ARF"], elec2["ours drift"],
                 elec2["river ARF"])],
        [f"Elec2 >= {ELEC2_TARGET}", f(elec2["ours drift"]),
         verdict(elec2["ours drift"] is not None and elec2["ours drift"] >= ELEC2_TARGET,
                 elec2["ours drift"])],
        ["FriedmanDrift (each kind): MAE <= river ARFRegressor",
         ", ".join(f"{n.split('_')[1]} {f(a, 3)} vs {f(b, 3)}"
                   for n, (a, b) in zip(regression, friedman)),
         verdict(regression_ok, *(v for pair in friedman for v in pair))
         if friedman else "not run"],
        ["stationary: at most 0.3 points below without drift adaptation",
         ", ".join(f"{n} {100 * (mean(n, 'ours drift') - mean(n, 'ours')):+.2f}"
                   for n in stationary if mean(n, "ours") is not None
                   and mean(n, "ours drift") is not None),
         met(all(stationary_ok)) if stationary_ok else "not run"],
        [f"learning throughput >= {SPEED_TARGET:.0f}x river ARF", f"{f(speed_ratio, 1)}x",
         verdict(speed_ratio >= SPEED_TARGET, speed_ratio)],
        ["memory under max_nodes flat after the budget is reached",
         f"largest pickled model {first_half / 2**20:.2f} MB over the first half, "
         f"{second_half / 2**20:.2f} MB over the second" if memory else "n/a",
         met(memory_ok) if memory else "not run"],
    ]
    report.section("Targets", markdown_table(["target", "measured", ""], rows))
    report.finish()


if __name__ == "__main__":
    main()
