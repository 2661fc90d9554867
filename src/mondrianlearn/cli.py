"""The ``mondrian`` command line.

- ``mondrian demo``: an online Mondrian forest and AMF on the bundled Elec2 stream,
  against a random forest retrained on the same prefix (the README's main job).
- ``mondrian evaluate DATA``: progressive (test-then-train) evaluation of any of the
  library's models on a CSV, LIBSVM or Parquet file or a known dataset, optionally
  against baselines, with a progress bar, a table and a plot.
- ``mondrian bench NAME``: rerun one of the papers' experiments from ``benchmarks/``.
"""

import argparse
import ast
import pickle
import subprocess
import sys
from pathlib import Path

MODELS = {
    # name: (classifier, regressor) as "module:Class"
    "mondrian-forest": ("mondrianlearn.forest:MondrianForestClassifier",
                        "mondrianlearn.forest:MondrianForestRegressor"),
    "amf": ("mondrianlearn.amf:AMFClassifier", "mondrianlearn.amf:AMFRegressor"),
    "mondrian-boosting": ("mondrianlearn.ensemble:MondrianBoostingClassifier", None),
    "mondrian-kernel": ("mondrianlearn.kernel:MondrianKernelClassifier",
                        "mondrianlearn.kernel:MondrianKernelRegressor"),
}

BASELINES = {
    "rf": "scikit-learn RandomForest, refit on the prefix",
    "et": "scikit-learn ExtraTrees, refit on the prefix",
    "et1": "scikit-learn ExtraTrees with max_features=1, refit on the prefix",
    "river-amf": "river's forest.AMFClassifier / AMFRegressor, online",
    "river-arf": "river's forest.ARFClassifier / ARFRegressor, online",
}

BENCHMARKS = {
    "mf-accuracy": ("bench_mf_accuracy.py", "MF paper: test accuracy of 100 trees on letter, satimage, usps, dna"),
    "mf-figure3": ("bench_mf_paper_experiment.py", "MF paper figure 3: accuracy against data seen and time"),
    "mf-online-batch": ("bench_mf_online_vs_batch.py", "online over mini-batches against batch fit"),
    "mf-speed": ("bench_mf_speed.py", "fit/predict speed, import time, memory"),
    "amf-online": ("bench_amf.py", "AMF paper: online curves against river and scikit-learn"),
    "amf-toy": (None, "AMF paper figure 1: decision functions on toy data"),
    "mf-regression-paths": (None, "scikit-garden tutorial: path weights and uncertainty band"),
    "mondrian-painting": (None, "a 2-D Mondrian tree drawn as a Mondrian painting"),
    "kernel": ("bench_kernel.py", "Mondrian kernel paper figures"),
    "ensembles": ("bench_ensembles.py", "seed 002 tables: bagging, boosting, plain forest"),
}


class CommandError(Exception):
    """An error to report in one line, with exit code 2."""


def _import(spec):
    module, name = spec.split(":")
    import importlib

    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise CommandError(f"{spec} is not available in this installation ({exc}).") from exc


def _parse_params(items):
    params = {}
    for item in items or []:
        if "=" not in item:
            raise CommandError(f"--param expects KEY=VALUE, got {item!r}.")
        key, value = item.split("=", 1)
        try:
            params[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            params[key.strip()] = value.strip()
    return params


def _load_data(args):
    import numpy as np

    from .datasets import (BENCHMARK_DATASETS, DataFileError, DatasetNotFoundError,
                           load_benchmark, load_electricity, load_file)

    source = args.data
    if Path(source).exists() or any(source.lower().endswith(e) for e in (
            ".csv", ".gz", ".svm", ".libsvm", ".parquet", ".tsv", ".txt")):
        try:
            X, y, _ = load_file(source, target=args.target)
        except DataFileError as exc:
            raise CommandError(str(exc)) from exc
        return X, y, Path(source).name
    if source == "electricity":
        X, y = load_electricity()
        return X, y, source
    if source in BENCHMARK_DATASETS:
        try:
            data = load_benchmark(source)
        except DatasetNotFoundError as exc:
            raise CommandError(str(exc)) from exc
        if "X" in data:
            return data["X"], data["y"], source
        return (np.vstack([data["X_train"], data["X_test"]]),
                np.concatenate([data["y_train"], data["y_test"]]), source)
    raise CommandError(f"No such file or dataset: {source!r} (datasets: electricity, "
                       f"{', '.join(sorted(BENCHMARK_DATASETS))}).")


def _task(y, requested):
    if requested:
        return requested
    from sklearn.utils.multiclass import type_of_target

    return "regression" if type_of_target(y) == "continuous" else "classification"


def _baseline(name, task, args):
    from .evaluation import Learner, RiverModel

    classification = task == "classification"
    if name in ("rf", "et", "et1"):
        from sklearn import ensemble

        kind = "RandomForest" if name == "rf" else "ExtraTrees"
        cls = getattr(ensemble, kind + ("Classifier" if classification else "Regressor"))
        extra = {"max_features": 1} if name == "et1" else {}
        label = f"{kind}{' (max_features=1)' if extra else ''}, refit every {args.refit_every}"
        model = cls(n_estimators=args.baseline_trees, n_jobs=args.n_jobs,
                    random_state=args.seed, **extra)
        return Learner(label, model, refit_every=args.refit_every)
    if name in ("river-amf", "river-arf"):
        try:
            from river import forest
        except ImportError as exc:
            raise CommandError("river baselines need river: pip install 'mondrian-learn[river]'") from exc
        kind = "AMF" if name == "river-amf" else "ARF"
        cls = getattr(forest, kind + ("Classifier" if classification else "Regressor"))
        kwargs = {"n_models": 10} if kind == "ARF" else {"n_estimators": 10}
        return Learner(f"river {kind}", RiverModel(cls(seed=args.seed, **kwargs)))
    raise CommandError(f"Unknown baseline {name!r}; choose from {sorted(BASELINES)}.")


def _evaluate(args):
    import numpy as np

    from .evaluation import Learner, format_table, progressive_evaluation

    X, y, label = _load_data(args)
    if args.n_samples:
        X, y = X[: args.n_samples], y[: args.n_samples]
    if X.shape[0] < 2:
        raise CommandError("The stream has fewer than two rows.")
    if not np.all(np.isfinite(X)):
        raise CommandError("The features contain NaN or infinite values; clean them first.")
    task = _task(y, args.task)
    if args.scale:
        lo, hi = X.min(axis=0), X.max(axis=0)
        X = (X - lo) / np.where(hi > lo, hi - lo, 1.0)
    learners = []
    params = _parse_params(args.param)
    for name in args.model or ["mondrian-forest"]:
        if name not in MODELS:
            raise CommandError(f"Unknown model {name!r}; choose from {sorted(MODELS)}.")
        spec = MODELS[name][0 if task == "classification" else 1]
        if spec is None:
            raise CommandError(f"{name} does only classification.")
        cls = _import(spec)
        kwargs = {"random_state": args.seed, **params}
        try:
            model = cls(**kwargs)
        except TypeError as exc:
            raise CommandError(f"Bad --param for {name}: {exc}") from exc
        learners.append(Learner(f"{name} (online)", model))
    for name in args.baseline or []:
        learners.append(_baseline(name, task, args))
    print(f"{label}: {X.shape[0]} samples, {X.shape[1]} features, {task}; test-then-train "
          f"in mini-batches of {args.batch_size}.", flush=True)
    traces = progressive_evaluation(learners, X, y, batch_size=args.batch_size, task=task,
                                    progress=not args.no_progress, description=label)
    rows = []
    for lr, t in zip(learners, traces):
        row = {"model": t.name, **t.summary}
        model = lr.model.model if hasattr(lr.model, "model") else lr.model
        try:
            row["pickled_MB"] = len(pickle.dumps(model)) / 2**20
        except Exception:  # noqa: BLE001 - some third-party models do not pickle
            row["pickled_MB"] = float("nan")
        rows.append(row)
    metrics = (["accuracy", "log_loss", "roc_auc"] if task == "classification" else ["mse", "mae"])
    print()
    print(format_table(rows, ["model", *metrics, "samples_per_second", "seconds", "pickled_MB"],
                       floatfmt="{:.4g}"))
    if args.plot:
        from .plotting import plot_progressive

        name = "progressive accuracy" if task == "classification" else "progressive MSE"
        fig = plot_progressive(traces, metric_name=name)
        fig.savefig(args.plot, dpi=120, bbox_inches="tight")
        print(f"\nFigure written to {args.plot}")
    return 0


def _demo(args):
    from sklearn.ensemble import RandomForestClassifier

    from .datasets import load_electricity
    from .evaluation import Learner, format_table, progressive_evaluation
    from .forest import MondrianForestClassifier

    X, y = load_electricity(n_samples=args.n_samples)
    print(f"Elec2 stream: {X.shape[0]} samples, {X.shape[1]} features, "
          f"classes {sorted(set(y.tolist()))}. Test-then-train in mini-batches of "
          f"{args.batch_size}.", flush=True)
    from .amf import AMFClassifier

    learners = [
        Learner(f"MondrianForest ({args.n_estimators} trees, online)",
                MondrianForestClassifier(n_estimators=args.n_estimators, n_jobs=args.n_jobs,
                                         random_state=args.seed)),
        Learner(f"AMF ({args.n_estimators} trees, online)",
                AMFClassifier(n_estimators=args.n_estimators, n_jobs=args.n_jobs,
                              random_state=args.seed)),
        Learner(f"RandomForest ({args.rf_trees} trees, refit every {args.refit_every})",
                RandomForestClassifier(n_estimators=args.rf_trees, n_jobs=args.n_jobs,
                                       random_state=args.seed),
                refit_every=args.refit_every),
    ]
    # progressive_evaluation compiles the kernels (or loads them from numba's cache)
    # before the clock starts, so that a first run does not time the compiler.
    traces = progressive_evaluation(learners, X, y, batch_size=args.batch_size,
                                    progress=not args.no_progress, description="demo")
    rows = [{"model": t.name, **t.summary} for t in traces]
    columns = ["model", "accuracy", "log_loss", "roc_auc", "seconds", "samples_per_second"]
    print()
    print(format_table(rows, columns, floatfmt="{:.4g}"))
    batch = traces[-1]
    print()
    for online in traces[:-1]:
        seconds, batch_seconds = online.summary["seconds"], batch.summary["seconds"]
        diff = 100 * (online.summary["accuracy"] - batch.summary["accuracy"])
        print(f"Progressive accuracy of {online.name}: {diff:+.2f} points against the "
              f"retrained random forest, in {seconds:.2f} s against {batch_seconds:.2f} s.")
    if args.plot:
        try:
            from .plotting import plot_progressive

            fig = plot_progressive(traces, metric_name="progressive accuracy")
        except ImportError:
            print("(matplotlib is not installed: no figure; pip install 'mondrian-learn[plot]')")
            return 0
        fig.savefig(args.plot, dpi=120, bbox_inches="tight")
        print(f"Figure of the curves written to {args.plot}")
    return 0


def _benchmarks_folder():
    candidates = [Path.cwd() / "benchmarks"]
    here = Path(__file__).resolve()
    candidates += [p / "benchmarks" for p in here.parents]
    for c in candidates:
        if (c / "_common.py").exists() or any(c.glob("bench_*.py")):
            return c
    raise CommandError("The benchmarks/ folder was not found: run `mondrian bench` from a "
                       "clone of the mondrian-learn repository.")


def _bench_in_package(name, out):
    """The experiments that are plotting functions of the package."""
    import numpy as np

    from .evaluation import format_table
    from .plotting import plot_decision_functions, plot_path_weights, plot_predictive_band

    out.mkdir(parents=True, exist_ok=True)
    if name == "amf-toy":
        fig = plot_decision_functions()
        path = out / "amf_toy_decision_functions.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        models = list(dict.fromkeys(m for _, m in fig.aucs))
        rows = [{"dataset": d, **{m: fig.aucs[(d, m)] for m in models}}
                for d in dict.fromkeys(d for d, _ in fig.aucs)]
        table = format_table(rows, ["dataset", *models])
    elif name == "mondrian-painting":
        from sklearn.datasets import make_moons

        from .forest import MondrianTreeClassifier
        from .plotting import plot_mondrian_tree

        X, y = make_moons(n_samples=80, noise=0.2, random_state=0)
        tree = MondrianTreeClassifier(random_state=3).fit(X, y)
        ax = plot_mondrian_tree(tree, X, y)
        ax.figure.savefig(out / "mondrian_tree.png", dpi=110, bbox_inches="tight")
        view = tree.tree_
        rows = [{"nodes": view.node_count, "leaves": view.n_leaves, "depth": view.max_depth,
                 "first split time": float(view.split_time[view.root]),
                 "training accuracy": float(tree.score(X, y))}]
        table = format_table(rows, list(rows[0]))
    else:
        from .forest import MondrianForestRegressor, MondrianTreeRegressor

        X = np.linspace(-np.pi, np.pi, 10)[:, None]
        y = np.sin(X[:, 0])
        grid = np.linspace(-6, 6, 400)[:, None]
        tree = MondrianTreeRegressor(max_depth=2, random_state=1).fit(X, y)
        fig = plot_path_weights(tree, grid)
        fig.savefig(out / "path_weights.png", dpi=110, bbox_inches="tight")
        forest = MondrianForestRegressor(n_estimators=50, random_state=0).fit(X, y)
        ax = plot_predictive_band(forest, X, y, grid, y_true=np.sin(grid[:, 0]))
        ax.figure.savefig(out / "predictive_band.png", dpi=110, bbox_inches="tight")
        probe = np.array([[0.0], [3.0], [6.0], [60.0]])
        mean, std = forest.predict(probe, return_std=True)
        rows = [{"x": float(p[0]), "mean": float(m), "std": float(s)}
                for p, m, s in zip(probe, mean, std)]
        rows.append({"x": "training data", "mean": float(y.mean()), "std": float(y.std())})
        table = format_table(rows, ["x", "mean", "std"])
    print(table)
    (out / f"{name}.md").write_text(table + "\n")
    print(f"\nTable and figure written to {out}/")
    return 0


def _bench(args):
    if args.name == "list" or args.name not in BENCHMARKS:
        lines = [f"  {k:20s} {v[1]}" for k, v in BENCHMARKS.items()]
        print("Experiments:\n" + "\n".join(lines))
        if args.name != "list":
            raise CommandError(f"Unknown experiment {args.name!r}.")
        return 0
    script, _ = BENCHMARKS[args.name]
    out = Path(args.out)
    if script is None:
        return _bench_in_package(args.name, out)
    folder = _benchmarks_folder()
    command = [sys.executable, str(folder / script)] + (["--quick"] if args.quick else [])
    out.mkdir(parents=True, exist_ok=True)
    print("$ " + " ".join(command), flush=True)
    proc = subprocess.run(command, cwd=folder.parent, capture_output=True, text=True)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr[-4000:])
    (out / f"{args.name}.md").write_text(proc.stdout)
    print(f"\nOutput written to {out / (args.name + '.md')} (figures: benchmarks/results/).")
    return proc.returncode


def build_parser():
    parser = argparse.ArgumentParser(prog="mondrian",
                                     description="Learning with the Mondrian process.")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="online Mondrian forest and AMF on the bundled Elec2 "
                                       "stream, against a retrained random forest")
    demo.add_argument("--n-samples", type=int, default=20000,
                      help="length of the stream (default: 20000; 45312 for all of it)")
    demo.add_argument("--batch-size", type=int, default=100)
    demo.add_argument("--n-estimators", type=int, default=10,
                      help="trees of the Mondrian forest and of AMF")
    demo.add_argument("--rf-trees", type=int, default=50, help="random forest trees")
    demo.add_argument("--refit-every", type=int, default=2000,
                      help="samples between two refits of the random forest")
    demo.add_argument("--n-jobs", type=int, default=None)
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--plot", metavar="FILE", default="mondrian_demo.png",
                      help="PNG of the curves (default: mondrian_demo.png)")
    demo.add_argument("--no-plot", dest="plot", action="store_const", const=None,
                      help="do not draw the curves")
    demo.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    demo.set_defaults(func=_demo)

    ev = sub.add_parser("evaluate", help="progressive evaluation on a file or dataset")
    ev.add_argument("data", help="CSV/LIBSVM/Parquet file, 'electricity' (bundled) or a "
                                 "benchmark dataset name")
    ev.add_argument("--target", help="target column (name or index; default: last)")
    ev.add_argument("--task", choices=["classification", "regression"])
    ev.add_argument("--model", action="append", choices=sorted(MODELS),
                    help="model to evaluate online (repeatable; default: mondrian-forest)")
    ev.add_argument("--param", action="append", metavar="KEY=VALUE",
                    help="model parameter, e.g. --param n_estimators=50 (repeatable)")
    ev.add_argument("--baseline", action="append", choices=sorted(BASELINES),
                    help="baseline to compare with (repeatable)")
    ev.add_argument("--baseline-trees", type=int, default=100)
    ev.add_argument("--refit-every", type=int, default=1000,
                    help="samples between refits of batch baselines")
    ev.add_argument("--batch-size", type=int, default=100)
    ev.add_argument("--n-samples", type=int, help="use only the first N rows")
    ev.add_argument("--no-scale", dest="scale", action="store_false",
                    help="do not min-max scale the features (scaled by default, as in the papers)")
    ev.add_argument("--n-jobs", type=int, default=None)
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--plot", metavar="FILE", help="write a PNG of the metric against "
                                                   "samples and time")
    ev.add_argument("--no-progress", action="store_true")
    ev.set_defaults(func=_evaluate)

    bench = sub.add_parser("bench", help="rerun one of the papers' experiments "
                                         "('mondrian bench list' lists them)")
    bench.add_argument("name")
    bench.add_argument("--quick", action="store_true", help="reduced version (minutes)")
    bench.add_argument("--out", default="benchmarks/results", help="folder for the table")
    bench.set_defaults(func=_bench)
    return parser


def main(argv=None):
    """Entry point of the ``mondrian`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except CommandError as exc:
        print(f"mondrian: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
