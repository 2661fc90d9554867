"""Sharded forests on a Dask cluster: speed, accuracy of rows mode, a 2 GB stream.

1. Rows per second of ``DaskShardedForest`` (AMF and MF classifiers, 10 trees, two
   shards, 100,000 x 20 rows):
   - ``mode="rows"`` on a ``LocalCluster`` of worker processes, 1 worker against 2
     (the same forest: two shards, on one worker or one each), fed a ``dask.array``
     held by the workers (target: at least 1.7x);
   - ``mode="trees"`` on two workers in one process (threads) against the same
     forest trained locally with ``n_jobs=2`` (target: overhead at most 1.3x), and
     on worker processes, 1 worker against 2, for reference.
   Wall times are the best of ``--repeats`` runs; the workers' CPU seconds (read on
   the workers) say how much of a wall-time ratio is the machine's load.
2. Accuracy of ``mode="rows"`` against ``mode="trees"`` (the local forest) on the
   shared classification sets (training rows streamed in mini-batches of 500, test
   accuracy, mean over ``--seeds``; target: within 1 point on most sets).
3. The cost of a partition: many small partitions through a one-tree forest (the
   client's and the scheduler's share, which bounds the number of workers).
4. A 2 GB Parquet dataset, written by the workers into a temporary folder, streamed
   through a sharded AMF in rows mode; the client's resident memory sampled every
   half second (target: flat).

Usage: ``python benchmarks/bench_dask.py [--quick] [--repeats N] [--seeds N]
[--parquet-gb G] [--skip-parquet]``. Writes ``results/bench_dask.md``.
"""

import logging
import os
import shutil
import tempfile
import threading
import time
import warnings

import numpy as np
from _common import (
    Report,
    fmt_bytes,
    fmt_ratio,
    fmt_seconds,
    make_parser,
    markdown_table,
    minmax_scale,
    progress,
    verdict,
)

SPEED_ROWS, SPEED_FEATURES, CHUNK = 100_000, 20, 10_000
ROWS_TARGET, TREES_OVERHEAD_TARGET, ACCURACY_POINTS = 1.7, 1.3, 1.0
SECTIONS = ("speed", "accuracy", "partition", "parquet")
CLASSIFICATION_SETS = ("letter", "satimage", "usps", "dna", "spambase", "adult", "bank",
                       "electricity", "bananas")


# ------------------------------------------------------------------ helpers
def models():
    from mondrianlearn import AMFClassifier, MondrianForestClassifier

    return {"AMF": AMFClassifier, "MF": MondrianForestClassifier}


def speed_data(n_rows, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n_rows, SPEED_FEATURES))
    y = (X[:, :3].sum(axis=1) + 0.3 * rng.standard_normal(n_rows) > 1.5).astype(np.int64)
    return X, y


def cluster(n_workers, processes):
    from distributed import Client, LocalCluster

    # Workers in this process would measure the whole process's memory against their
    # limit (and pause): no limit for them.
    local = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=processes,
                         dashboard_address=":0", memory_limit="6GiB" if processes else 0)
    return local, Client(local, set_as_default=False)


def workers_cpu(client):
    """CPU seconds used so far by each worker process (or by this process)."""
    return client.run(time.process_time)


def warm_up_shards(client, cls, mode, X, y):
    """Load the kernels on the workers (numba's cache) before anything is timed."""
    from mondrianlearn.dask import DaskShardedForest

    with DaskShardedForest(cls(2, random_state=0), 2, client, mode=mode) as forest:
        forest.partial_fit(X[:500], y[:500], classes=[0, 1])
        forest.partial_fit(X[500:1000], y[500:1000])
        forest.predict_proba(X[:10])


def busy_loop(n):
    """Pure Python work (one core of one worker process)."""
    total = 0
    for i in range(n):
        total += i % 7
    return total


def machine_parallelism(client, repeats, n=3_000_000):
    """How many cores two worker processes get right now: the time of one busy task
    on one worker, twice, over the time of one on each of two workers at once."""
    workers = sorted(client.run(lambda: 0))
    one = both = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        client.submit(busy_loop, n, workers=workers[:1], pure=False).result()
        one = min(one, time.perf_counter() - start)
        start = time.perf_counter()
        client.gather([client.submit(busy_loop, n, workers=[w], pure=False) for w in workers])
        both = min(both, time.perf_counter() - start)
    return 2 * one / both


def stream_once(client, cls, mode, Xd, yd):
    """Wall time of streaming the dask arrays into a new two-shard forest, and the
    workers' CPU seconds in that run."""
    from mondrianlearn.dask import DaskShardedForest

    forest = DaskShardedForest(cls(10, random_state=0), 2, client, mode=mode)
    forest.partial_fit(Xd[:10], yd[:10], classes=[0, 1], progress=False)  # start the shards
    before = workers_cpu(client)
    start = time.perf_counter()
    forest.partial_fit(Xd, yd, progress=False)
    wall = time.perf_counter() - start
    after = workers_cpu(client)
    forest.close()
    return wall, {w: after[w] - before[w] for w in after}


# ------------------------------------------------------------------ 1. speed
def speed_section(report, args):
    import dask.array as da

    n_rows = SPEED_ROWS // (5 if args.quick else 1)
    X, y = speed_data(n_rows)
    clusters = {}
    try:
        for n_workers in (1, 2):  # both kept up, their runs interleaved
            progress(f"speed: starting {n_workers} worker process(es)")
            local, client = cluster(n_workers, processes=True)
            Xd = client.persist(da.from_array(X, chunks=(CHUNK, SPEED_FEATURES)))
            yd = client.persist(da.from_array(y, chunks=CHUNK))
            clusters[n_workers] = (local, client, Xd, yd)
        results = {}
        parallelism = []
        for name, cls in models().items():
            for mode in ("rows", "trees"):
                progress(f"speed: {name}, {mode} mode")
                parallelism.append(machine_parallelism(clusters[2][1], args.repeats))
                for _, client, _, _ in clusters.values():
                    warm_up_shards(client, cls, mode, X, y)
                for _ in range(args.repeats):
                    for n_workers, (_, client, Xd, yd) in clusters.items():
                        wall, cpu = stream_once(client, cls, mode, Xd, yd)
                        key = (name, mode, n_workers)
                        if key not in results or wall < results[key][1]:
                            results[key] = (n_rows / wall, wall, cpu)
    finally:
        for local, client, _, _ in clusters.values():
            client.close()
            local.close()
    rows = [[name, mode, f"{n_workers} (processes)", f"{rate:,.0f}", fmt_seconds(wall),
             " + ".join(f"{c:.1f}" for c in cpu.values()) + " s",
             f"{n_rows / max(cpu.values()):,.0f}"]
            for (name, mode, n_workers), (rate, wall, cpu) in results.items()]
    report.section(
        f"Rows per second: {n_rows:,} x {SPEED_FEATURES} rows, 10 trees in two shards, "
        f"partitions of {CHUNK:,} rows held by the workers",
        markdown_table(["model", "mode", "workers", "rows/s (wall)", "wall", "workers' CPU",
                        "rows/s at one free core per worker"], rows),
        "Two shards in every row: on one worker they learn one after the other (a worker "
        f"runs its actors in one thread), on two they learn at once. Best of {args.repeats} "
        "runs, the 1-worker and 2-worker clusters' runs interleaved. The machine has 2 "
        "cores shared with other engineers' jobs (load average in the header): wall-time "
        "ratios are what the load left; the workers' CPU seconds (read on the workers) are "
        "the work itself, and the last column is the rate if each worker had a core to "
        "itself (rows over the busiest worker's CPU seconds). Cores that two worker "
        "processes got, measured with a busy loop (one task alone, then one on each worker "
        "at once) before each (model, mode): "
        f"{', '.join(f'{p:.2f}' for p in parallelism)} (2.00 on two free cores).")

    progress("speed: trees mode, threads, against local n_jobs=2")
    overhead = trees_against_local(X, y, args.repeats)
    rows = [[name, f"{n_rows / dask_wall:,.0f}", f"{n_rows / local_wall:,.0f}",
             fmt_ratio(dask_wall / local_wall)]
            for name, (dask_wall, local_wall) in overhead.items()]
    report.section(
        "Trees sharded over two workers in one process (threads) against local n_jobs=2",
        markdown_table(["model", "sharded rows/s", "local rows/s", "time ratio"], rows),
        f"The same 10 trees, mini-batches of {CHUNK:,} rows sent by the client to both "
        "shards, against the forest trained locally with two threads; best of "
        f"{args.repeats} interleaved runs.")
    return results, overhead, parallelism


def trees_against_local(X, y, repeats):
    from mondrianlearn.dask import DaskShardedForest

    local_cluster, client = cluster(2, processes=False)
    out = {}
    try:
        for name, cls in models().items():
            warm_up_shards(client, cls, "trees", X, y)
            best = {"dask": np.inf, "local": np.inf}
            for _ in range(repeats):
                forest = DaskShardedForest(cls(10, random_state=0), 2, client, mode="trees")
                start = time.perf_counter()
                for s in range(0, X.shape[0], CHUNK):
                    forest.partial_fit(X[s:s + CHUNK], y[s:s + CHUNK])
                best["dask"] = min(best["dask"], time.perf_counter() - start)
                forest.close()
                model = cls(10, random_state=0, n_jobs=2)
                start = time.perf_counter()
                for s in range(0, X.shape[0], CHUNK):
                    model.partial_fit(X[s:s + CHUNK], y[s:s + CHUNK])
                best["local"] = min(best["local"], time.perf_counter() - start)
            out[name] = (best["dask"], best["local"])
    finally:
        client.close()
        local_cluster.close()
    return out


# --------------------------------------------------------------- 2. accuracy
def load_classification(name, seed):
    """Scaled training and test rows; sets without a split: shuffled 80/20."""
    from mondrianlearn.datasets import load_benchmark

    data = load_benchmark(name)
    if "X_train" in data:
        X_train, y_train = np.asarray(data["X_train"]), np.asarray(data["y_train"])
        X_test, y_test = np.asarray(data["X_test"]), np.asarray(data["y_test"])
        order = np.random.RandomState(seed).permutation(X_train.shape[0])
        X_train, y_train = X_train[order], y_train[order]
    else:
        X, y = np.asarray(data["X"]), np.asarray(data["y"])
        order = np.random.RandomState(seed).permutation(X.shape[0])
        cut = int(0.8 * X.shape[0])
        X_train, y_train = X[order[:cut]], y[order[:cut]]
        X_test, y_test = X[order[cut:]], y[order[cut:]]
    X_train, X_test = minmax_scale(X_train.astype(np.float64), X_test.astype(np.float64))
    return X_train, y_train, X_test, y_test


def accuracy_section(report, args):
    from mondrianlearn.dask import DaskShardedForest

    local_cluster, client = cluster(2, processes=False)
    table, differences = [], {}
    try:
        for name in args.sets:
            progress(f"accuracy: {name}")
            scores = {}
            for seed in range(args.seeds):
                X, y, X_test, y_test = load_classification(name, seed)
                classes = np.unique(np.concatenate([y, y_test]))
                for model, cls in models().items():
                    for mode in ("trees", "rows"):
                        forest = DaskShardedForest(cls(10, random_state=seed), 2, client,
                                                   mode=mode)
                        for s in range(0, X.shape[0], 500):
                            forest.partial_fit(X[s:s + 500], y[s:s + 500], classes=classes)
                        accuracy = float(np.mean(forest.predict(X_test) == y_test))
                        scores.setdefault((model, mode), []).append(accuracy)
                        forest.close()
            for model in models():
                trees = np.mean(scores[(model, "trees")])
                rows = np.mean(scores[(model, "rows")])
                differences[(name, model)] = 100 * (rows - trees)
                table.append([name, model, f"{trees:.4f}", f"{rows:.4f}",
                              f"{100 * (rows - trees):+.2f}",
                              verdict(abs(rows - trees) * 100 <= ACCURACY_POINTS)])
    finally:
        client.close()
        local_cluster.close()
    report.section(
        "Accuracy: rows partitioned against trees sharded (two shards, 10 trees)",
        markdown_table(["dataset", "model", "trees mode", "rows mode", "rows - trees (points)",
                        "within 1 point"], table),
        f"Test accuracy, mean over {args.seeds} seed(s) (training rows shuffled by the seed, "
        "the forest seeded by it); training rows streamed in mini-batches of 500 with every "
        "label declared. Trees mode is the local forest exactly; in rows mode each tree "
        "learned half of the rows. Sets without a standard split (spambase, bank, "
        "electricity, bananas) are shuffled and split 80/20; adult uses its split.")
    return differences


# ---------------------------------------------------------- 3. per partition
def partition_cost_section(report, args):
    """Client and scheduler time per partition, from tiny partitions and one tree."""
    import dask.array as da

    from mondrianlearn import AMFClassifier
    from mondrianlearn.dask import DaskShardedForest

    n_parts = 100 if args.quick else 300
    X, y = speed_data(n_parts * 20, seed=1)
    local_cluster, client = cluster(2, processes=True)
    try:
        Xd = client.persist(da.from_array(X, chunks=(20, SPEED_FEATURES)))
        yd = client.persist(da.from_array(y, chunks=20))
        warm_up_shards(client, AMFClassifier, "rows", X, y)
        out = {}
        for mode in ("rows", "trees"):
            forest = DaskShardedForest(AMFClassifier(2, random_state=0), 2, client, mode=mode)
            forest.partial_fit(X[:40], y[:40], classes=[0, 1])
            wall, own, process = time.perf_counter(), time.thread_time(), time.process_time()
            forest.partial_fit(Xd, yd, progress=False)
            wall = time.perf_counter() - wall
            own, process = time.thread_time() - own, time.process_time() - process
            forest.close()
            out[mode] = (wall / n_parts, own / n_parts, process / n_parts)
    finally:
        client.close()
        local_cluster.close()
    rows = [[mode, f"{1000 * w:.1f} ms", f"{1000 * c:.2f} ms", f"{1000 * s:.2f} ms"]
            for mode, (w, c, s) in out.items()]
    report.section(
        f"Cost of a partition ({n_parts} partitions of 20 rows, one tree per shard, two "
        "worker processes)",
        markdown_table(["mode", "wall per partition", "client loop CPU per partition",
                        "client + scheduler process CPU per partition"], rows),
        "With so little to learn, the wall time per partition is the round trip of the "
        "tasks (read the partition, feed a shard: 2 tasks per partition in rows mode, "
        "1 + n_shards in trees mode). The client loop's CPU is the main thread's (submitting "
        "tasks, collecting summaries); a LocalCluster runs the scheduler in the client's "
        "process, so the process CPU is the client's and the scheduler's together. "
        "docs/dask.md says what they predict for larger clusters.")
    return out


# ----------------------------------------------------------- 4. 2 GB Parquet
def write_parquet_part(folder, index, n_rows, seed):
    """One file of the benchmark's Parquet dataset, written by a worker."""
    import pandas as pd

    X, y = speed_data(n_rows, seed=seed + index)
    frame = pd.DataFrame(X, columns=[f"x{j:02d}" for j in range(X.shape[1])])
    frame["label"] = y
    path = os.path.join(folder, f"part-{index:04d}.parquet")
    frame.to_parquet(path)
    return os.path.getsize(path)


class MemorySampler(threading.Thread):
    """Resident memory of this process every ``interval`` seconds."""

    def __init__(self, interval=0.5):
        super().__init__(daemon=True)
        import psutil

        self.process = psutil.Process()
        self.interval = interval
        self.samples = []
        self.stop = threading.Event()

    def run(self):
        start = time.perf_counter()
        while not self.stop.is_set():
            self.samples.append((time.perf_counter() - start, self.process.memory_info().rss))
            self.stop.wait(self.interval)


def parquet_section(report, args):
    import dask.dataframe as dd

    from mondrianlearn import AMFClassifier
    from mondrianlearn.dask import DaskShardedForest

    gigabytes = 0.2 if args.quick else args.parquet_gb
    rows_per_file = 500_000
    bytes_per_row = 21 * 8
    n_files = max(2, int(round(gigabytes * 1e9 / (rows_per_file * bytes_per_row))))
    folder = tempfile.mkdtemp(prefix="mondrian-bench-parquet-")
    local_cluster, client = cluster(2, processes=True)
    try:
        progress(f"parquet: writing {n_files} files of {rows_per_file:,} rows to {folder}")
        sizes = client.gather(client.map(write_parquet_part, [folder] * n_files,
                                         range(n_files), [rows_per_file] * n_files,
                                         [args.seed] * n_files, pure=False))
        on_disk = sum(sizes)
        n_rows = n_files * rows_per_file
        frame = dd.read_parquet(folder)
        template = AMFClassifier(2, max_nodes=5000, random_state=0)
        warm_up_shards(client, AMFClassifier, "rows", *speed_data(2000))
        progress(f"parquet: streaming {fmt_bytes(on_disk)} ({n_rows:,} rows)")
        sampler = MemorySampler()
        sampler.start()
        time.sleep(1.0)
        start = time.perf_counter()
        with DaskShardedForest(template, 2, client, mode="rows") as forest:
            forest.partial_fit(frame, target="label", progress=args.progress)
            wall = time.perf_counter() - start
            workers_rss = client.run(lambda: __import__("psutil").Process().memory_info().rss)
            X_check, y_check = speed_data(20_000, seed=10_000)
            accuracy = float(np.mean(forest.predict(X_check) == y_check))
        sampler.stop.set()
        sampler.join()
    finally:
        client.close()
        local_cluster.close()
        shutil.rmtree(folder, ignore_errors=True)
    rss = np.array([r for _, r in sampler.samples])
    first_minute = rss[: max(1, len(rss) // 10)]
    rows = [
        ["dataset on disk", f"{fmt_bytes(on_disk)}, {n_files} files, {n_rows:,} rows x 20 "
                            "features + label"],
        ["stream", f"{fmt_seconds(wall)}, {n_rows / wall:,.0f} rows/s (2 worker processes, "
                   "rows mode, AMFClassifier(2 trees, max_nodes=5000))"],
        ["client memory (RSS)", f"start {fmt_bytes(rss[0])}, first tenth max "
                                f"{fmt_bytes(first_minute.max())}, max {fmt_bytes(rss.max())}, "
                                f"end {fmt_bytes(rss[-1])} ({len(rss)} samples)"],
        ["client memory growth", f"{fmt_bytes(rss.max() - rss[0])} over the stream "
                                 f"({100 * (rss.max() - rss[0]) / on_disk:.2f}% of the data)"],
        ["workers' memory at the end", ", ".join(fmt_bytes(v) for v in workers_rss.values())],
        ["accuracy on fresh rows", f"{accuracy:.4f}"],
    ]
    report.section(f"A {fmt_bytes(on_disk)} Parquet dataset streamed through a sharded AMF",
                   markdown_table(["what", "measured"], rows),
                   "The files are written by the workers into a temporary folder and read "
                   "by them (dask.dataframe.read_parquet, one partition per file); each "
                   "partition goes from the worker that reads it to its shard. The client "
                   "only submits tasks and receives a summary per partition.")
    return rss, on_disk


# ---------------------------------------------------------------------- main
def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--sets", nargs="+", default=list(CLASSIFICATION_SETS),
                        choices=CLASSIFICATION_SETS)
    parser.add_argument("--parquet-gb", type=float, default=2.0)
    parser.add_argument("--skip-parquet", action="store_true")
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS),
                        help="parts to run (default: all)")
    parser.add_argument("--progress", action="store_true", help="progress bar of the stream")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.seeds = 1, 1
    logging.getLogger("distributed").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="distributed")
    suffix = "" if set(args.sections) == set(SECTIONS) else "_" + "_".join(args.sections)
    report = Report("bench_dask", "Sharded forests on a Dask cluster", args, suffix=suffix)

    sections = set(args.sections)
    targets = []
    if "speed" in sections:
        speed, overhead, parallelism = speed_section(report, args)
        for name in models():
            one, two = speed[(name, "rows", 1)], speed[(name, "rows", 2)]
            ratio = two[0] / one[0]
            cpu_ratio = sum(one[2].values()) / max(two[2].values())
            targets.append([f"{name}, rows mode, 2 workers over 1 (processes)",
                            f">= {ROWS_TARGET}x rows/s",
                            f"{fmt_ratio(ratio)} (wall); {fmt_ratio(cpu_ratio)} from the "
                            f"workers' CPU time; the machine gave two workers "
                            f"{min(parallelism):.2f}-{max(parallelism):.2f} cores",
                            verdict(ratio >= ROWS_TARGET)])
        for name, (dask_wall, local_wall) in overhead.items():
            ratio = dask_wall / local_wall
            targets.append([f"{name}, trees mode, 2 thread workers / local n_jobs=2",
                            f"<= {TREES_OVERHEAD_TARGET}x time", fmt_ratio(ratio),
                            verdict(ratio <= TREES_OVERHEAD_TARGET)])
    if "accuracy" in sections:
        differences = accuracy_section(report, args)
        within = sum(abs(d) <= ACCURACY_POINTS for d in differences.values())
        worst = min(differences.items(), key=lambda item: item[1])
        targets.append(["rows against trees mode, accuracy", "within 1 point on most",
                        f"{within} of {len(differences)} (set, model) within 1 point; "
                        f"largest loss {worst[1]:+.2f} points ({worst[0][0]}, {worst[0][1]})",
                        verdict(within > len(differences) / 2)])
    if "partition" in sections:
        partition_cost_section(report, args)
    if "parquet" in sections and not args.skip_parquet:
        rss, on_disk = parquet_section(report, args)
        growth = rss.max() - rss[0]
        targets.append([f"{fmt_bytes(on_disk)} Parquet stream", "client memory flat",
                        f"client RSS grew {fmt_bytes(growth)} (max {fmt_bytes(rss.max())})",
                        verdict(growth < 0.05 * on_disk)])
    report.section("Targets", markdown_table(["what", "target", "measured", "met"], targets),
                   "Speed measured on 2 cores shared with other engineers' jobs (load "
                   "average in the header): wall-time ratios are lower bounds of what free "
                   "cores give; the CPU-time ratio is the speed-up the same work would have "
                   "with a free core per worker.")
    report.finish()


if __name__ == "__main__":
    main()
