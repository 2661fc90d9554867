"""Online Mondrian forests reach the accuracy of batch ones.

For each dataset, MondrianForestClassifier is trained (a) in batch with ``fit`` on
the whole training set and (b) online with ``partial_fit`` over 100 mini-batches of a
random permutation of it. Online trees have the same distribution as batch trees on
the same points, so the final test accuracies should agree up to the randomness of
the forest (target: within 0.5 points). Both are repeated over a few
seeds; the table gives each and their mean difference.

Usage: ``python benchmarks/bench_mf_online_vs_batch.py [--quick] [--seeds N]``.
"""

import gc

import numpy as np
from _common import (
    PAPER_DATASETS,
    Report,
    fmt_ratio,
    fmt_seconds,
    load_scaled,
    make_parser,
    markdown_table,
    progress,
    timed,
    verdict,
    warm_up,
)


def train_online(model, X, y, n_batches, seed):
    """``partial_fit`` over ``n_batches`` mini-batches of a random permutation."""
    classes = np.unique(y)
    order = np.random.default_rng(seed).permutation(X.shape[0])
    for batch in np.array_split(order, n_batches):
        model.partial_fit(X[batch], y[batch], classes=classes)
    return model


def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--n-estimators", type=int, default=None,
                        help="trees per forest (default 100, 20 with --quick)")
    parser.add_argument("--seeds", type=int, default=None,
                        help="seeds per dataset (default 3, 1 with --quick)")
    parser.add_argument("--n-batches", type=int, default=100)
    args = parser.parse_args()
    n_trees = args.n_estimators or (20 if args.quick else 100)
    n_seeds = args.seeds or (1 if args.quick else 3)
    datasets = args.datasets or PAPER_DATASETS

    from mondrianlearn import MondrianForestClassifier

    warm_up()
    report = Report("bench_mf_online_vs_batch", "Online (partial_fit) against batch (fit)",
                    args)
    report.text(f"{n_trees} trees, n_jobs={args.n_jobs}, online over {args.n_batches} "
                f"mini-batches of a random permutation of the training set, {n_seeds} "
                "seed(s); accuracy on the test set after the last mini-batch.")
    rows, summary = [], []
    for name in datasets:
        X, y, Xt, yt = load_scaled(name)
        diffs, batch_scores, online_scores = [], [], []
        for s in range(n_seeds):
            seed = args.seed + s

            def model():
                return MondrianForestClassifier(n_estimators=n_trees, n_jobs=args.n_jobs,
                                                random_state=seed)

            progress(f"{name}: batch seed {seed}")
            batch, t_batch = timed(model().fit, X, y)
            acc_batch = batch.score(Xt, yt)
            nodes_batch = batch.n_nodes_.mean()
            del batch
            gc.collect()
            progress(f"{name}: online seed {seed}")
            online, t_online = timed(train_online, model(), X, y, args.n_batches, seed)
            acc_online = online.score(Xt, yt)
            nodes_online = online.n_nodes_.mean()
            del online
            gc.collect()
            diffs.append(100 * (acc_online - acc_batch))
            batch_scores.append(acc_batch)
            online_scores.append(acc_online)
            rows.append([name, str(seed), f"{acc_batch:.4f}", f"{acc_online:.4f}",
                         f"{diffs[-1]:+.2f}", f"{nodes_batch:.0f}", f"{nodes_online:.0f}",
                         fmt_seconds(t_batch), fmt_seconds(t_online),
                         fmt_ratio(t_online / t_batch)])
        mean_diff = 100 * (np.mean(online_scores) - np.mean(batch_scores))
        spread = 100 * np.std(batch_scores + online_scores)
        summary.append([name, f"{np.mean(batch_scores):.4f}", f"{np.mean(online_scores):.4f}",
                        f"{mean_diff:+.2f}", f"{spread:.2f}",
                        verdict(abs(mean_diff) <= 0.5)])

    report.section("Per seed", markdown_table(
        ["dataset", "seed", "batch acc", "online acc", "online - batch (points)",
         "nodes/tree batch", "nodes/tree online", "batch fit", "online (all batches)",
         "online / batch time"], rows))
    report.section("Summary (mean over seeds)", markdown_table(
        ["dataset", "batch acc", "online acc", "difference (points)",
         "std of all runs (points)", "within 0.5 points"], summary),
        note="Batch and online forests of one seed are different random draws from the "
             "same distribution, so single-seed differences reflect the forest's "
             "randomness; the standard deviation of the runs gives its scale.")
    report.finish()


if __name__ == "__main__":
    main()
