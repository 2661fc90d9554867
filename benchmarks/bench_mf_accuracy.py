"""Test accuracy of Mondrian forests on the MF paper's datasets, and model memory.

MondrianForestClassifier (batch ``fit``) next to scikit-learn's
ExtraTreesClassifier(max_features=1) and RandomForestClassifier with the same number
of trees, features scaled to [0, 1] with the training min/max, the paper's
train/test splits (satimage: the full training set, the paper used a 3104-row
subset). A second table reports the memory of the fitted forests: bytes per node,
nodes per tree, and the shared sample store against the trees (no tree holds a copy
of the data).

Usage: ``python benchmarks/bench_mf_accuracy.py [--quick] [--seeds N]``.
"""

import gc

import numpy as np
from _common import (
    ACCURACY_TARGETS,
    DNA_RELEVANT,
    ET1_REFERENCE,
    PAPER_DATASETS,
    Report,
    fmt_bytes,
    fmt_seconds,
    load_scaled,
    make_parser,
    markdown_table,
    max_rss_bytes,
    progress,
    timed,
    traced_peak,
    verdict,
    warm_up,
)


def models(n_trees, n_jobs, seed):
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

    from mondrianlearn import MondrianForestClassifier

    return {
        "MF": lambda s: MondrianForestClassifier(n_estimators=n_trees, n_jobs=n_jobs,
                                                 random_state=seed + s),
        "ET-1": lambda s: ExtraTreesClassifier(n_estimators=n_trees, max_features=1,
                                               n_jobs=n_jobs, random_state=seed + s),
        "RF": lambda s: RandomForestClassifier(n_estimators=n_trees, n_jobs=n_jobs,
                                               random_state=seed + s),
    }


def _arrays(value):
    """All NumPy arrays inside nested dicts, tuples and lists."""
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _arrays(item)
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _arrays(item)


def memory_row(name, forest, X_train, peak):
    """Memory of a fitted forest, split into trees and the shared sample store."""
    trees = forest.trees_
    store = forest._store
    nodes = np.array([t.n_nodes for t in trees])
    node_bytes = sum(sum(a.nbytes for a in t.arrays) + sum(s.nbytes for s in t.node_stats.values())
                     for t in trees)
    link_bytes = sum(t.sample_next.nbytes for t in trees)
    # Every array of a tree is indexed by node, except the int64 point links; a copy
    # of the data would be any other array with a row per point.
    copies = sum(1 for t in trees for a in _arrays(vars(t))
                 if a is not t.sample_next and a.shape[0] != t.capacity and a.size >= store.n)
    per_tree_node_bytes = node_bytes / len(trees)
    return [
        name, f"{nodes.mean():.0f}", f"{node_bytes / nodes.sum():.0f} B",
        f"{forest.model_size_ / nodes.sum():.0f} B",
        fmt_bytes(per_tree_node_bytes), fmt_bytes(link_bytes / len(trees)),
        fmt_bytes(store.nbytes), fmt_bytes(X_train.nbytes),
        fmt_bytes(forest.model_size_), fmt_bytes(peak), str(copies),
    ]


def main():
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--n-estimators", type=int, default=None,
                        help="trees per forest (default 100, 20 with --quick)")
    parser.add_argument("--seeds", type=int, default=None,
                        help="random seeds averaged (default 3, 1 with --quick)")
    args = parser.parse_args()
    n_trees = args.n_estimators or (20 if args.quick else 100)
    n_seeds = args.seeds or (1 if args.quick else 3)
    datasets = args.datasets or PAPER_DATASETS + (DNA_RELEVANT,)

    report = Report("bench_mf_accuracy", "Mondrian forest accuracy on the MF paper's datasets",
                    args)
    report.text(f"{n_trees} trees per forest, n_jobs={args.n_jobs}, mean over {n_seeds} "
                f"seed(s) (± std when more than one); features min-max scaled to [0, 1] "
                "with the training min/max. Targets are for 100 trees.")
    warm_up()
    factories = models(n_trees, args.n_jobs, args.seed)
    acc_rows, time_rows, mem_rows = [], [], []
    for name in datasets:
        X, y, Xt, yt = load_scaled(name)
        scores = {m: [] for m in factories}
        fit_times = {m: [] for m in factories}
        for s in range(n_seeds):
            for label, factory in factories.items():
                progress(f"{name}: {label} seed {s}")
                model, seconds = timed(factory(s).fit, X, y)
                fit_times[label].append(seconds)
                scores[label].append(model.score(Xt, yt))
                del model
                gc.collect()

        def cell(values):
            values = np.asarray(values)
            return f"{values.mean():.4f}" + (f" ± {values.std():.4f}" if len(values) > 1 else "")

        mf = float(np.mean(scores["MF"]))
        target = ACCURACY_TARGETS.get(name)
        acc_rows.append([name, f"{X.shape[0]}/{Xt.shape[0]} x {X.shape[1]}", cell(scores["MF"]),
                         f">= {target}" if target else "(paper's MF-dagger)",
                         verdict(mf >= target) if target else "-", cell(scores["ET-1"]),
                         f"{ET1_REFERENCE[name]:.3f}" if name in ET1_REFERENCE else "-",
                         cell(scores["RF"]),
                         f"{mf - np.mean(scores['ET-1']):+.4f}"])
        time_rows.append([name] + [fmt_seconds(float(np.mean(fit_times[m]))) for m in factories]
                         + [f"{np.mean(fit_times['MF']) / np.mean(fit_times['ET-1']):.2f}x"])

        progress(f"{name}: MF memory")
        from mondrianlearn import MondrianForestClassifier

        forest, peak = traced_peak(lambda: MondrianForestClassifier(
            n_estimators=n_trees, n_jobs=args.n_jobs, random_state=args.seed).fit(X, y))
        mem_rows.append(memory_row(name, forest, X, peak))
        del forest
        gc.collect()

    report.section(
        "Test accuracy",
        markdown_table(["dataset", "train/test x D", "MF", "MF target", "met",
                        "ET-1 (sklearn)", "ET-1 ref (issue)", "RF (sklearn)", "MF - ET-1"],
                       acc_rows))
    report.section(
        f"Fit time (n_jobs={args.n_jobs}, mean over seeds)",
        markdown_table(["dataset", "MF", "ET-1", "RF", "MF / ET-1"], time_rows),
        note="Single-thread speed is compared in bench_mf_speed.py.")
    report.section(
        "Memory of the fitted MF (seed 0)",
        markdown_table(["dataset", "nodes/tree", "bytes/node", "model_size_/nodes",
                        "node arrays/tree",
                        "sample links/tree", "sample store (shared)", "X_train",
                        "model_size_", "peak traced in fit", "per-tree data copies"],
                       mem_rows),
        note=("bytes/node counts every per-node array (structure, split, time, the "
              "D-dimensional box lower/upper, counts, label, pausing, class counts): "
              "about 16 D + 8 K + 90 bytes for D features and K classes; "
              "model_size_/nodes also spreads the links and the store over the nodes. "
              "Each tree "
              "keeps only an int64 link per training point (its leaves' point lists, "
              "needed to un-pause leaves); the points themselves are in the one "
              "sample store shared by all trees. model_size_ = trees + store. "
              f"Process max RSS at the end: {fmt_bytes(max_rss_bytes())}."))
    report.finish()


if __name__ == "__main__":
    main()
