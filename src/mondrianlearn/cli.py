"""The ``mondrian`` command line.

``mondrian demo`` learns online on the bundled Elec2 stream and reports progressive
(test-then-train) accuracy next to a random forest retrained on the same prefix.
"""

import argparse
import sys


def _demo(args):
    import numpy as np
    from sklearn.ensemble import RandomForestClassifier

    from . import MondrianForestClassifier
    from .datasets import load_electricity
    from .evaluation import Learner, format_table, progressive_evaluation

    X, y = load_electricity(n_samples=args.n_samples)
    print(f"Elec2 stream: {X.shape[0]} samples, {X.shape[1]} features, "
          f"classes {sorted(set(y.tolist()))}. Test-then-train in mini-batches of "
          f"{args.batch_size}.", flush=True)
    learners = [
        Learner(f"MondrianForest ({args.n_estimators} trees, online)",
                MondrianForestClassifier(n_estimators=args.n_estimators, n_jobs=args.n_jobs,
                                         random_state=args.seed)),
        Learner(f"RandomForest ({args.rf_trees} trees, refit every {args.refit_every})",
                RandomForestClassifier(n_estimators=args.rf_trees, n_jobs=args.n_jobs,
                                       random_state=args.seed),
                refit_every=args.refit_every),
    ]
    traces = progressive_evaluation(learners, X, y, batch_size=args.batch_size,
                                    progress=not args.no_progress, description="demo")
    rows = []
    for t in traces:
        rows.append({"model": t.name, **{k: v for k, v in t.summary.items()}})
    columns = ["model", "accuracy", "log_loss", "roc_auc", "seconds", "samples_per_second"]
    print()
    print(format_table(rows, columns, floatfmt="{:.4g}"))
    online, batch = traces
    speed = batch.summary["seconds"] / max(online.summary["seconds"], 1e-9)
    diff = 100 * (online.summary["accuracy"] - batch.summary["accuracy"])
    print(f"\nProgressive accuracy: online Mondrian forest {diff:+.2f} points against the "
          f"retrained random forest, in {speed:.1f}x less time.")
    if args.plot:
        from .plotting import plot_progressive

        fig = plot_progressive(traces, metric_name="progressive accuracy")
        fig.savefig(args.plot, dpi=120, bbox_inches="tight")
        print(f"Figure written to {args.plot}")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(
        prog="mondrian", description="Learning with the Mondrian process.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="online learning on the bundled Elec2 stream, "
                                       "against a retrained random forest")
    demo.add_argument("--n-samples", type=int, default=20000,
                      help="length of the stream (default: 20000; 45312 for all of it)")
    demo.add_argument("--batch-size", type=int, default=100)
    demo.add_argument("--n-estimators", type=int, default=10, help="Mondrian trees")
    demo.add_argument("--rf-trees", type=int, default=50, help="random forest trees")
    demo.add_argument("--refit-every", type=int, default=2000,
                      help="samples between two refits of the random forest")
    demo.add_argument("--n-jobs", type=int, default=None)
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--plot", metavar="FILE", help="write a PNG of the curves")
    demo.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    demo.set_defaults(func=_demo)
    return parser


def main(argv=None):
    """Entry point of the ``mondrian`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
