"""Endless streams in bounded memory.

A synthetic stream (20 features, a noisy non-linear class boundary) goes through the
Mondrian forest and AMF, with and without a node budget (``max_nodes``). Each model
runs in its own process so that its peak memory (max RSS) is its own. The table shows
peak memory, model size, throughput per segment of the stream with the mean depth of
the trees (throughput may fall only as fast as the depth grows), and test accuracy,
and where each model's peak goes (the process before the stream, node arrays and
their boxes, stored points and their links).
Each process first runs its model on a few rows, untimed, so that the first segment
does not include loading (or, after a change to the sources, compiling) the kernels.

    python benchmarks/bench_stream_memory.py            # 2 million rows
    python benchmarks/bench_stream_memory.py --quick    # 200 thousand rows
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, make_parser, markdown_table, progress  # noqa: E402

N_FEATURES = 20
CHUNK = 10_000


def stream_chunk(index):
    """Rows ``index * CHUNK ...`` of the stream (generated, so nothing is stored)."""
    rng = np.random.RandomState(1_000_003 + index)
    X = rng.uniform(size=(CHUNK, N_FEATURES))
    score = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * X[:, 3] + 0.15 * rng.normal(size=CHUNK)
    return X, (score > 0.9).astype(int)


def mean_leaf_depth(model, X):
    """Average depth of the leaves that rows of ``X`` fall into (first tree)."""
    from mondrianlearn.engine.paths import find_leaf

    tree = model.trees_[0].arrays
    depths = []
    for x in model._in_units(np.ascontiguousarray(X[:500])):  # the trees' coordinates
        node, d = find_leaf(tree, x), 0
        while tree.parent[node] >= 0:
            node, d = tree.parent[node], d + 1
        depths.append(d)
    return float(np.mean(depths))


def current_rss_mb():
    """Resident memory of this process now (Linux ``/proc``; ``nan`` elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return float("nan")


def memory_parts(model):
    """Where a model's memory goes, in MiB of rows in use (spare capacity that is
    never written takes no memory and is not counted): the node arrays (the trees'
    fields and the model's per-node arrays), of which the boxes (one row per node,
    but none for a leaf of one point in a tree that keeps its points: its box is its
    point's, in the sample store); the store of points; the trees' links between
    stored points."""
    nodes = boxes = boxless = links = 0
    n_nodes = n_boxless = 0
    for tree in model.trees_:
        a, n, b = tree.arrays, tree.n_nodes, tree.n_boxes
        box_row = 2 * a.lower.itemsize * a.lower.shape[1]
        nodes += n * (tree.row_nbytes - box_row) + b * box_row
        boxes += b * box_row
        boxless += (n - b) * box_row
        n_nodes += n
        n_boxless += n - b
        links += tree.sample_next.nbytes + tree.sample_mult.nbytes
    store = model.__dict__.get("_store")
    stored = 0 if store is None else store.n * (store.X.itemsize * store.X.shape[1]
                                                 + store.keys.itemsize
                                                 + store.stats.itemsize * store.stats.shape[1])
    mib = 2.0 ** 20
    return {"nodes_MB": nodes / mib, "boxes_MB": boxes / mib,
            "boxless_MB": boxless / mib, "boxless_share": n_boxless / max(n_nodes, 1),
            "store_MB": stored / mib, "links_MB": links / mib}


def run_one(name, n_rows, segments, n_trees):
    from mondrianlearn import AMFClassifier, MondrianForestClassifier

    models = {
        "MF": lambda: MondrianForestClassifier(n_estimators=n_trees, random_state=0),
        "MF max_nodes=20000": lambda: MondrianForestClassifier(n_estimators=n_trees,
                                                               max_nodes=20000,
                                                               random_state=0),
        "AMF": lambda: AMFClassifier(n_estimators=n_trees, random_state=0),
        "AMF max_nodes=20000": lambda: AMFClassifier(n_estimators=n_trees, max_nodes=20000,
                                                     random_state=0),
    }
    X_test, y_test = stream_chunk(10_000_000)  # a chunk far away in the stream: unseen rows
    warm = models[name]()  # numba's kernels loaded (or compiled) before the timing
    warm.partial_fit(X_test[:500], y_test[:500])
    warm.partial_fit(X_test[500:1000], y_test[500:1000])
    warm.score(X_test[:100], y_test[:100])
    del warm
    base_mb = current_rss_mb()  # interpreter, libraries and loaded kernels
    model = models[name]()
    n_chunks = n_rows // CHUNK
    per_segment = max(1, n_chunks // segments)
    rows = []
    tic = time.perf_counter()
    seg_start, seg_rows = tic, 0
    for c in range(n_chunks):
        X, y = stream_chunk(c)
        model.partial_fit(X, y)
        seg_rows += CHUNK
        if (c + 1) % per_segment == 0 or c == n_chunks - 1:
            now = time.perf_counter()
            rows.append({
                "rows": (c + 1) * CHUNK,
                "rows_per_s": seg_rows / (now - seg_start),
                "depth": mean_leaf_depth(model, X_test),
                "nodes_per_tree": float(np.mean(model.n_nodes_)),
                "model_MB": model.model_size_ / 2**20,
                "accuracy": float(model.score(X_test[:5000], y_test[:5000])),
            })
            seg_start, seg_rows = time.perf_counter(), 0
    total = time.perf_counter() - tic
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"name": name, "segments": rows, "seconds": total, "peak_MB": peak_mb,
                      "base_MB": base_mb, "end_MB": current_rss_mb(), **memory_parts(model)}))


def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--trees", type=int, default=5,
                        help="trees per forest (unbounded forests of 10 trees need ~13 GB "
                             "at 2 million rows)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    n_rows = args.rows or (200_000 if args.quick else 2_000_000)
    segments = 5 if args.quick else 10
    if args.child:
        run_one(args.child, n_rows, segments, args.trees)
        return
    report = Report("bench_stream_memory",
                    f"Stream of {n_rows:,} rows x {N_FEATURES} features, {args.trees} trees, "
                    f"mini-batches of {CHUNK:,}", args)
    names = ["MF", "MF max_nodes=20000", "AMF", "AMF max_nodes=20000"]
    results = []
    for name in names:
        progress(name)
        out = subprocess.run([sys.executable, __file__, "--child", name, "--rows", str(n_rows),
                              "--trees", str(args.trees)],
                             capture_output=True, text=True,
                             env={**os.environ, "PYTHONWARNINGS": "ignore"})
        if out.returncode != 0:
            report.text(f"{name} failed: {out.stderr[-2000:]}")
            continue
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    rows = []
    for r in results:
        last = r["segments"][-1]
        rows.append([r["name"], f"{r['peak_MB']:.0f}", f"{last['model_MB']:.1f}",
                     f"{last['nodes_per_tree']:.0f}", f"{r['seconds']:.1f}",
                     f"{n_rows / r['seconds']:.0f}", f"{last['accuracy']:.4f}"])
    report.section("Peak memory, size, speed and accuracy",
                   markdown_table(["model", "peak RSS (MB)", "final model (MB)", "nodes/tree",
                                   "total s", "rows/s", "test accuracy"], rows),
                   "Each model runs in its own process: peak RSS is that process's.")
    parts = [[r["name"], f"{r['peak_MB']:.0f}", f"{r['base_MB']:.0f}",
              f"{r['nodes_MB']:.0f}", f"{r['boxes_MB']:.0f}",
              (f"{r['boxless_MB']:.0f} ({100 * r['boxless_share']:.0f}% of nodes)"
               if r["boxless_share"] else "-"),
              f"{r['store_MB']:.0f}", f"{r['links_MB']:.0f}",
              f"{r['peak_MB'] - r['base_MB'] - r['nodes_MB'] - r['store_MB'] - r['links_MB']:.0f}"]
             for r in results]
    report.section("Where the peak goes (MB)", markdown_table(
        ["model", "peak RSS", "before the stream", "node rows", "of which boxes",
         "boxes not stored (leaves of one point)", "stored points", "point links", "rest"],
        parts),
        "\"Before the stream\": the process's resident memory after its warm-up (Python, "
        "NumPy, scikit-learn, numba and the loaded kernels). Node rows, stored points and "
        "links count the rows in use (MiB). Boxes not stored: in forests that keep "
        "their points (not AMF, nor a budgeted forest once full), a leaf of one point "
        "has no box row, its box is its point's in the sample store (what its box "
        "would take is shown). \"Rest\": peak minus the other columns "
        "(spare rows written, the allocator's free lists, the last batch's work arrays).")
    for r in results:
        segment_rows = [[f"{s['rows']:,}", f"{s['rows_per_s']:.0f}", f"{s['depth']:.1f}",
                         f"{s['nodes_per_tree']:.0f}", f"{s['model_MB']:.1f}",
                         f"{s['accuracy']:.4f}"] for s in r["segments"]]
        first, last = r["segments"][0], r["segments"][-1]
        slow = first["rows_per_s"] / last["rows_per_s"]
        deeper = last["depth"] / max(first["depth"], 1e-9)
        report.section(
            f"{r['name']}: throughput, depth, size and accuracy along the stream",
            markdown_table(["rows seen", "rows/s in segment", "mean leaf depth", "nodes/tree",
                            "model MB", "test accuracy"], segment_rows),
            f"throughput fell {slow:.2f}x while the depth grew {deeper:.2f}x "
            f"({'within' if slow <= 1.25 * deeper else 'MORE than'} what depth explains)")
    report.finish()


if __name__ == "__main__":
    main()
