"""The experiment of the MF paper (NIPS 2014, section 7, figure 3).

The training set (in a random order) is cut into 100 mini-batches. A Mondrian forest
learns them online, one ``partial_fit`` per mini-batch; RandomForest, ExtraTrees
(default ``max_features``, the paper's ERT-k) and ExtraTrees with ``max_features=1``
(ERT-1) are retrained from scratch on all data seen so far after every mini-batch.
Test accuracy is recorded against the fraction of training data seen and against the
cumulative training time (evaluation time excluded). All models have 100 trees and
use the same number of threads. The paper's claim checked here: MF is at least 10
times faster in total than retraining RandomForest, at a similar accuracy.

Curves are printed at a few checkpoints, saved as JSON, and plotted like figure 3
(top row: accuracy against fraction of data; bottom row: against time) to
``benchmarks/results/bench_mf_paper_experiment.png`` when matplotlib is available.

Usage: ``python benchmarks/bench_mf_paper_experiment.py [--quick]``.
"""

import gc
import json

import numpy as np
from _common import (
    PAPER_DATASETS,
    RESULTS_DIR,
    Report,
    fmt_ratio,
    fmt_seconds,
    load_scaled,
    make_parser,
    markdown_table,
    progress,
    timed_cpu,
    verdict,
    warm_up,
)

METHODS = ("MF", "RF", "ET-k", "ET-1")
TABLE_FRACTIONS = (0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)


def batch_factories(n_trees, n_jobs, seed):
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

    return {
        "RF": lambda: RandomForestClassifier(n_estimators=n_trees, n_jobs=n_jobs,
                                             random_state=seed),
        "ET-k": lambda: ExtraTreesClassifier(n_estimators=n_trees, n_jobs=n_jobs,
                                             random_state=seed),
        "ET-1": lambda: ExtraTreesClassifier(n_estimators=n_trees, max_features=1,
                                             n_jobs=n_jobs, random_state=seed),
    }


def checkpoints(n_batches):
    """Mini-batch counts after which the test accuracy is measured."""
    marks = {max(1, round(f * n_batches)) for f in TABLE_FRACTIONS}
    marks |= set(range(max(1, n_batches // 10), n_batches + 1, max(1, n_batches // 10)))
    return sorted(marks)


def run_mf(X, y, Xt, yt, batches, marks, n_trees, n_jobs, seed):
    from mondrianlearn import MondrianForestClassifier

    classes = np.unique(y)
    model = MondrianForestClassifier(n_estimators=n_trees, n_jobs=n_jobs, random_state=seed)
    elapsed, cpu, curve = 0.0, 0.0, []
    for i, batch in enumerate(batches, start=1):
        _, seconds, cpu_seconds = timed_cpu(model.partial_fit, X[batch], y[batch],
                                            classes=classes)
        elapsed += seconds
        cpu += cpu_seconds
        if i in marks:
            curve.append((i, elapsed, cpu, model.score(Xt, yt)))
    return curve


def run_retrained(factory, X, y, Xt, yt, batches, marks):
    ends = np.cumsum([len(b) for b in batches])
    order = np.concatenate(batches)
    elapsed, cpu, curve = 0.0, 0.0, []
    for i, end in enumerate(ends, start=1):
        rows = order[:end]
        model, seconds, cpu_seconds = timed_cpu(factory().fit, X[rows], y[rows])
        elapsed += seconds
        cpu += cpu_seconds
        if i in marks:
            curve.append((i, elapsed, cpu, model.score(Xt, yt)))
    return curve


def plot(results, n_batches, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return None
    names = list(results)
    fig, axes = plt.subplots(2, len(names), figsize=(4 * len(names), 7), squeeze=False)
    styles = {"MF": ("tab:red", "o"), "RF": ("tab:blue", "s"), "ET-k": ("tab:green", "^"),
              "ET-1": ("tab:purple", "v")}
    for j, name in enumerate(names):
        for method, curve in results[name].items():
            color, marker = styles[method]
            fraction = [point[0] / n_batches for point in curve]
            seconds = [point[1] for point in curve]
            accuracy = [point[3] for point in curve]
            axes[0, j].plot(fraction, accuracy, color=color, marker=marker, ms=3, label=method)
            axes[1, j].plot(seconds, accuracy, color=color, marker=marker, ms=3, label=method)
        axes[0, j].set_title(name)
        axes[0, j].set_xlabel("fraction of training data")
        axes[1, j].set_xlabel("cumulative training time (s)")
        axes[1, j].set_xscale("log")
        axes[1, j].xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        for row in range(2):
            axes[row, j].set_ylabel("test accuracy")
            axes[row, j].grid(alpha=0.3)
    axes[0, 0].legend(loc="lower right")
    fig.suptitle("MF online (partial_fit per mini-batch) vs batch forests retrained "
                 "after each mini-batch")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def curve_table(curves, n_batches):
    rows = []
    for k in range(len(curves["MF"])):
        i = curves["MF"][k][0]
        if i not in {max(1, round(f * n_batches)) for f in TABLE_FRACTIONS}:
            continue
        row = [f"{i / n_batches:.2f}"]
        row += [f"{curves[m][k][3]:.4f}" for m in METHODS if m in curves]
        row += [fmt_seconds(curves[m][k][1]) for m in METHODS if m in curves]
        rows.append(row)
    methods = [m for m in METHODS if m in curves]
    headers = (["fraction"] + [f"acc {m}" for m in methods]
               + [f"time {m}" for m in methods])
    return markdown_table(headers, rows)


def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--n-estimators", type=int, default=None,
                        help="trees per forest (default 100, 10 with --quick)")
    parser.add_argument("--n-batches", type=int, default=None,
                        help="mini-batches (default 100, 20 with --quick)")
    parser.add_argument("--plot-only", action="store_true",
                        help="redraw the figure from the saved JSON curves and exit")
    args = parser.parse_args()
    n_trees = args.n_estimators or (10 if args.quick else 100)
    n_batches = args.n_batches or (20 if args.quick else 100)
    stem = "bench_mf_paper_experiment" + ("_quick" if args.quick else "")
    if args.plot_only:
        saved = json.loads((RESULTS_DIR / f"{stem}.json").read_text())
        curves = {d: {m: [(p["batches"], p["seconds"], p["cpu_seconds"], p["accuracy"])
                          for p in points] for m, points in cs.items()}
                  for d, cs in saved["curves"].items()}
        print(plot(curves, saved["n_batches"], RESULTS_DIR / f"{stem}.png"))
        return
    datasets = args.datasets or PAPER_DATASETS

    warm_up()
    report = Report("bench_mf_paper_experiment",
                    "MF paper experiment (figure 3): online MF vs retrained batch forests",
                    args)
    report.text(f"{n_trees} trees for every model, n_jobs={args.n_jobs} for every model, "
                f"{n_batches} mini-batches of a random permutation (seed {args.seed}) of "
                "the training set; batch models are retrained from scratch after each "
                "mini-batch. Times are cumulative training times (evaluation excluded).")
    marks = set(checkpoints(n_batches))
    results, summary, cpu_summary = {}, [], []
    for name in datasets:
        X, y, Xt, yt = load_scaled(name)
        order = np.random.default_rng(args.seed).permutation(X.shape[0])
        batches = np.array_split(order, n_batches)
        curves = {}
        progress(f"{name}: MF online")
        curves["MF"] = run_mf(X, y, Xt, yt, batches, marks, n_trees, args.n_jobs, args.seed)
        gc.collect()
        for method, factory in batch_factories(n_trees, args.n_jobs, args.seed).items():
            progress(f"{name}: {method} retrained {n_batches} times")
            curves[method] = run_retrained(factory, X, y, Xt, yt, batches, marks)
        results[name] = curves
        report.section(f"{name} ({X.shape[0]} train, {Xt.shape[0]} test, {X.shape[1]} "
                       "features): accuracy and cumulative training time",
                       curve_table(curves, n_batches))
        total = {m: curves[m][-1][1] for m in curves}
        cpu = {m: curves[m][-1][2] for m in curves}
        final = {m: curves[m][-1][3] for m in curves}
        summary.append([name] + [fmt_seconds(total[m]) for m in METHODS]
                       + [fmt_ratio(total[m] / total["MF"]) for m in ("RF", "ET-k", "ET-1")]
                       + [verdict(total["RF"] / total["MF"] >= 10)]
                       + [f"{final[m]:.4f}" for m in METHODS])
        cpu_summary.append([name] + [fmt_seconds(cpu[m]) for m in METHODS]
                           + [fmt_ratio(cpu[m] / cpu["MF"]) for m in ("RF", "ET-k", "ET-1")]
                           + [verdict(cpu["RF"] / cpu["MF"] >= 10)])

    report.section(
        "Summary: total training time over all mini-batches and final accuracy",
        markdown_table(["dataset"] + [f"total {m}" for m in METHODS]
                       + ["RF / MF", "ET-k / MF", "ET-1 / MF", "MF >= 10x faster than RF"]
                       + [f"final acc {m}" for m in METHODS], summary),
        note="Wall-clock times; see the CPU-time table when the machine is shared.")
    report.section(
        "Summary: total CPU time (all threads) over all mini-batches",
        markdown_table(["dataset"] + [f"CPU {m}" for m in METHODS]
                       + ["RF / MF", "ET-k / MF", "ET-1 / MF", "MF >= 10x less than RF"],
                       cpu_summary))
    if not args.no_save:
        RESULTS_DIR.mkdir(exist_ok=True)
        (RESULTS_DIR / f"{stem}.json").write_text(json.dumps(
            {"n_trees": n_trees, "n_batches": n_batches, "n_jobs": args.n_jobs,
             "curves": {d: {m: [{"batches": i, "seconds": s, "cpu_seconds": c, "accuracy": a}
                                for i, s, c, a in points]
                            for m, points in cs.items()} for d, cs in results.items()}},
            indent=1))
        figure = plot(results, n_batches, RESULTS_DIR / f"{stem}.png")
        if figure is not None:
            report.text(f"Figure: benchmarks/results/{figure.name}")
    report.finish()


if __name__ == "__main__":
    main()
