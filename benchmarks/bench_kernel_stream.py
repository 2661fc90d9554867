"""The Mondrian kernel classifier at its defaults on a stream, against river.

``MondrianKernelClassifier`` keeps at most ``max_features`` cells: past it, its
partitions are cut back to an earlier lifetime. At the defaults (100 partitions,
100,000 cells; the river adapter 20,000) a stream meets that cap within a few
thousand rows and is cut back again every time its cells have grown by a tenth, so
the cost of a cut back is part of the cost of every row. This script measures, on
the bundled Elec2 stream (45,312 rows, in time order, raw features), one thread:

1. one row per call: a first ``partial_fit`` of the first 500 rows (untimed; the
   lifetime is swept on them), then ``partial_fit`` of one row for the next
   ``--rows`` rows (10,000), rows per CPU second (best of two interleaved runs, with
   ``bench_per_row``'s helpers), for the estimator and for
   ``mondrianlearn.river.MondrianKernelClassifier.learn_one`` (whose first 500 rows
   are learned one at a time, untimed); river's ``forest.AMFClassifier`` (10 trees;
   river has no Mondrian kernel) learns the same rows in the same run, as the
   reference of the per-row benchmark;
2. mini-batches of 100, test-then-train over the whole stream with the library's
   ``evaluation.progressive_evaluation`` (what ``mondrian evaluate`` runs): its rows
   per second (wall time) of ``predict_proba`` and ``partial_fit`` together, progressive
   accuracy, the number of times the partitions were cut back, and the cells at
   the end.

    python benchmarks/bench_kernel_stream.py            # about 2 minutes
    python benchmarks/bench_kernel_stream.py --quick    # 2,000 rows, a quarter of the stream
"""

import os
import sys
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, make_parser, markdown_table, progress  # noqa: E402

WARM_ROWS = 500
BATCH = 100
REPEATS = 2


def one_row(X, y, n_rows, seed):
    """``[(label, rows per CPU second, cells at the end)]`` of one-row learning:
    the estimator, the river adapter and river's AMF on the same rows (the
    interleaved best-of-``REPEATS`` timing of ``bench_per_row.learn_rates``)."""
    from bench_per_row import Ours, RiverStyle, as_dicts, learn_rates
    from river import forest

    import mondrianlearn.river as adapters
    from mondrianlearn import MondrianKernelClassifier

    rows = as_dicts(X[:WARM_ROWS + n_rows])
    runs = [
        ("`MondrianKernelClassifier.partial_fit`, 1 row",
         Ours("estimator", lambda: MondrianKernelClassifier(random_state=seed, n_jobs=1),
              X, y, np.unique(y)), n_rows),
        ("`mondrianlearn.river.MondrianKernelClassifier.learn_one`",
         RiverStyle("adapter", lambda: adapters.MondrianKernelClassifier(seed=seed), rows, y),
         n_rows),
        ("river `forest.AMFClassifier.learn_one` (10 trees)",
         RiverStyle("river", lambda: forest.AMFClassifier(n_estimators=10, seed=seed), rows,
                    y), n_rows),
    ]
    learned = learn_rates(runs, WARM_ROWS, REPEATS)
    out = []
    for label, _, _ in runs:
        rate, model = learned[label]
        inner = getattr(model, "_model", model)  # the adapter's estimator
        out.append((label, rate, getattr(inner, "n_kernel_features_", None)))
    return out


def mini_batches(X, y, seed):
    """Test-then-train in mini-batches of ``BATCH`` by the library's
    ``progressive_evaluation``: ``(rows/s, accuracy, cut backs, cells)``."""
    from mondrianlearn import MondrianKernelClassifier
    from mondrianlearn.evaluation import Learner, progressive_evaluation

    class Counted(MondrianKernelClassifier):
        """Counts its cut backs (``_cap_cells`` lowering ``lifetime_``)."""

        def _cap_cells(self):
            before = self.lifetime_
            super()._cap_cells()
            self.cut_backs_ = getattr(self, "cut_backs_", 0) + (self.lifetime_ < before)

    learner = Learner("kernel", Counted(random_state=seed, n_jobs=1))
    trace, = progressive_evaluation([learner], X, y, batch_size=BATCH, progress=False)
    model = learner.model
    return (trace.summary["samples_per_second"], trace.summary["accuracy"],
            getattr(model, "cut_backs_", 0), model.n_kernel_features_)


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
    # compile (or load) the kernels outside the timings (progressive_evaluation warms
    # up its own learners)
    warm = MondrianKernelClassifier(n_trees=5, random_state=0, n_jobs=1).fit(X[:200], y[:200])
    warm.partial_fit(X[200:201], y[200:201])

    progress(f"one row per call, {n_rows:,} rows")
    learned = one_row(X, y, n_rows, args.seed)
    river_rate = learned[-1][1]
    table = [[label, f"{rate:,.0f}", f"{rate / river_rate:.2f}x",
              "-" if cells is None else f"{cells:,}"]
             for label, rate, cells in learned]
    report.section(
        f"One row per call: rows per CPU second (Elec2, rows {WARM_ROWS:,} to "
        f"{WARM_ROWS + n_rows:,})",
        markdown_table(["learner", "rows/s", "against river's AMF", "cells at the end"],
                       table),
        note=f"Defaults, seed {args.seed}, one thread, the best of {REPEATS} interleaved "
             f"runs (`bench_per_row.learn_rates`). The estimator's first {WARM_ROWS:,} rows "
             "are one `partial_fit` (its lifetime swept on them); the river learners learn "
             "them one at a time (the adapter's first row is too few for a lifetime "
             "sweep: it takes its fixed lifetime and cap of 20,000 cells).")

    progress(f"mini-batches of {BATCH}, {X.shape[0]:,} rows")
    rate, accuracy, cuts, cells = mini_batches(X, y, args.seed)
    report.section(
        f"Mini-batches of {BATCH}, test-then-train over the whole stream ({X.shape[0]:,} "
        "rows)",
        markdown_table(["rows/s (predict + learn, wall)", "progressive accuracy", "cut backs",
                        "cells at the end"],
                       [[f"{rate:,.0f}", f"{accuracy:.4f}", str(cuts), f"{cells:,}"]]),
        note="`MondrianKernelClassifier` at its defaults: the first mini-batch starts it "
             "(its lifetime swept on those rows), every later one is predicted, then "
             "learned.")
    report.finish()


if __name__ == "__main__":
    main()
