"""The Mondrian kernel classifier at its defaults on a stream, against river.

``MondrianKernelClassifier`` keeps at most ``max_features`` cells: past it, its
partitions are cut back to an earlier lifetime. At the defaults (100 partitions,
100,000 cells; the river adapter 20,000) a stream meets that cap within a few
thousand rows and is cut back again every time its cells have grown by a tenth, so
the cost of a cut back is part of the cost of every row. This script measures, on
the bundled Elec2 stream (45,312 rows, in time order, raw features), one thread:

1. one row per call: ``fit`` on the first 500 rows (untimed), then ``partial_fit``
   of one row for the next ``--rows`` rows (10,000), rows per CPU second, for the
   estimator and for ``mondrianlearn.river.MondrianKernelClassifier.learn_one``
   (whose first 500 rows are learned one at a time, untimed); river's
   ``forest.AMFClassifier`` (10 trees; river has no Mondrian kernel) learns the same
   rows in the same run, as the reference of the per-row benchmark;
2. mini-batches of 100, test-then-train over the whole stream (the way
   ``mondrian evaluate`` learns): rows per CPU second of ``predict_proba`` and
   ``partial_fit`` together, progressive accuracy, the number of times the
   partitions were cut back, and the cells at the end.

    python benchmarks/bench_kernel_stream.py            # about 2 minutes
    python benchmarks/bench_kernel_stream.py --quick    # 2,000 rows, a quarter of the stream
"""

import os
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, make_parser, markdown_table, progress  # noqa: E402

WARM_ROWS = 500
BATCH = 100


class CutBacks:
    """Counts the cut backs of a model (``lifetime_`` lowered by ``_cap_cells``)."""

    def __init__(self, model):
        self.model, self.n, self.lifetime = model, 0, None

    def check(self):
        lifetime = getattr(self.model, "lifetime_", None)
        if self.lifetime is not None and lifetime is not None and lifetime < self.lifetime:
            self.n += 1
        self.lifetime = lifetime


def one_row(X, y, n_rows, seed):
    """Rows per CPU second of one-row learning: the estimator, the river adapter and
    river's AMF on the same rows."""
    from river import forest

    import mondrianlearn.river as adapters
    from mondrianlearn import MondrianKernelClassifier

    stop = WARM_ROWS + n_rows
    dicts = [dict(enumerate(row)) for row in X[:stop].tolist()]
    labels = y[:stop].tolist()
    rows = []

    model = MondrianKernelClassifier(random_state=seed, n_jobs=1).fit(X[:WARM_ROWS],
                                                                     y[:WARM_ROWS])
    cuts = CutBacks(model)
    cuts.check()
    start = time.process_time()
    for i in range(WARM_ROWS, stop):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
        cuts.check()
    rows.append(("`MondrianKernelClassifier.partial_fit`, 1 row",
                 n_rows / (time.process_time() - start), cuts.n, model.n_kernel_features_))

    for label, make in (
            ("`mondrianlearn.river.MondrianKernelClassifier.learn_one`",
             lambda: adapters.MondrianKernelClassifier(seed=seed)),
            ("river `forest.AMFClassifier.learn_one` (10 trees)",
             lambda: forest.AMFClassifier(n_estimators=10, seed=seed))):
        learner = make()
        for i in range(WARM_ROWS):
            learner.learn_one(dicts[i], labels[i])
        inner = getattr(learner, "_model", None)  # the adapter's estimator (river's: None)
        cuts = CutBacks(inner)
        cuts.check()
        start = time.process_time()
        for i in range(WARM_ROWS, stop):
            learner.learn_one(dicts[i], labels[i])
            cuts.check()
        cells = getattr(inner, "n_kernel_features_", None)
        rows.append((label, n_rows / (time.process_time() - start),
                     cuts.n if inner is not None else None, cells))
    return rows


def mini_batches(X, y, seed):
    """Test-then-train in mini-batches of ``BATCH``: rows/s, accuracy, cut backs."""
    from mondrianlearn import MondrianKernelClassifier

    model = MondrianKernelClassifier(random_state=seed, n_jobs=1)
    classes = np.unique(y)
    model.partial_fit(X[:BATCH], y[:BATCH], classes=classes)
    cuts = CutBacks(model)
    cuts.check()
    right = 0
    elapsed = 0.0
    for i in range(BATCH, X.shape[0], BATCH):
        start = time.process_time()
        proba = model.predict_proba(X[i:i + BATCH])
        model.partial_fit(X[i:i + BATCH], y[i:i + BATCH])
        elapsed += time.process_time() - start
        cuts.check()
        right += int((classes[proba.argmax(axis=1)] == y[i:i + BATCH]).sum())
    n = X.shape[0] - BATCH
    return n / elapsed, right / n, cuts.n, model.n_kernel_features_


def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000,
                        help="rows learned one per call and timed (default 10,000)")
    args = parser.parse_args()
    from mondrianlearn import MondrianKernelClassifier
    from mondrianlearn.datasets import load_electricity

    X, y = load_electricity()
    n_rows = 2_000 if args.quick else args.rows
    if args.quick:
        X, y = X[: X.shape[0] // 4], y[: y.shape[0] // 4]
    report = Report("bench_kernel_stream", "The Mondrian kernel classifier on a stream",
                    args)
    # compile (or load) the kernels outside the timings
    warm = MondrianKernelClassifier(n_trees=5, random_state=0, n_jobs=1).fit(X[:200], y[:200])
    warm.partial_fit(X[200:201], y[200:201])
    warm.partial_fit(X[201:301], y[201:301])
    warm.predict_proba(X[:100])

    progress(f"one row per call, {n_rows:,} rows")
    learned = one_row(X, y, n_rows, args.seed)
    river_rate = learned[-1][1]
    table = [[label, f"{rate:,.0f}", f"{rate / river_rate:.2f}x",
              "-" if cuts is None else str(cuts), "-" if cells is None else f"{cells:,}"]
             for label, rate, cuts, cells in learned]
    report.section(
        f"One row per call: rows per CPU second (Elec2, rows {WARM_ROWS:,} to "
        f"{WARM_ROWS + n_rows:,})",
        markdown_table(["learner", "rows/s", "against river's AMF", "cut backs",
                        "cells at the end"], table),
        note=f"Defaults, seed {args.seed}, one thread. The estimator's first "
             f"{WARM_ROWS:,} rows are one `fit`; the river learners learn them one at a "
             "time (the adapter's first rows are too few for a lifetime sweep: it takes "
             "its fixed lifetime and cap of 20,000 cells).")

    progress(f"mini-batches of {BATCH}, {X.shape[0]:,} rows")
    rate, accuracy, cuts, cells = mini_batches(X, y, args.seed)
    report.section(
        f"Mini-batches of {BATCH}, test-then-train over the whole stream ({X.shape[0]:,} "
        "rows)",
        markdown_table(["rows/s (predict + learn)", "progressive accuracy", "cut backs",
                        "cells at the end"],
                       [[f"{rate:,.0f}", f"{accuracy:.4f}", str(cuts), f"{cells:,}"]]),
        note="`MondrianKernelClassifier` at its defaults: the first mini-batch starts it "
             "(its lifetime swept on those rows), every later one is predicted, then "
             "learned.")
    report.finish()


if __name__ == "__main__":
    main()
