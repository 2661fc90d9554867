"""The ``mondrian`` command line.

- ``mondrian demo``: an online Mondrian forest and AMF on the bundled Elec2 stream,
  and the drift-adaptive AMF, better on this drifting stream (it says by how much),
  against a random forest retrained on the same prefix (the README's main job).
- ``mondrian evaluate DATA``: progressive (test-then-train) evaluation of any of the
  library's models on a CSV, LIBSVM or Parquet file or a known dataset, optionally
  against baselines, with a progress bar, a table and a plot. It says what it read
  (rows, columns, whether a header row was detected, the target, the task), warns
  when the target is sorted (``--shuffle SEED``), and scales the features online.
- ``mondrian precompile``: compile the kernels of the common path ahead of their first
  use (:mod:`mondrianlearn.precompile`; ``pip install .`` already does it, editable
  installs do not).
- ``mondrian bench NAME``: rerun one of the papers' experiments. Three are in the
  package (:mod:`mondrianlearn.experiments`, the documentation's figures); the others
  run a script of ``benchmarks/`` and so need a clone of the repository: without one,
  the command says so in one line (exit code 2).

User errors (a missing or unreadable file, a bad option or parameter) are reported
in one line on stderr with exit code 2, as argparse does for its own.
"""

import argparse
import ast
import pickle
import subprocess
import sys
from dataclasses import dataclass
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
    "mf-accuracy": ("bench_mf_accuracy.py",
                    "MF paper: test accuracy of 100 trees on letter, satimage, usps, dna"),
    "mf-figure3": ("bench_mf_paper_experiment.py",
                   "MF paper figure 3: accuracy against data seen and time"),
    "mf-online-batch": ("bench_mf_online_vs_batch.py",
                        "online over mini-batches against batch fit"),
    "mf-speed": ("bench_mf_speed.py", "fit/predict speed, import time, memory"),
    "amf-online": ("bench_amf.py", "AMF paper: online curves against river and scikit-learn"),
    "amf-toy": (None, "AMF paper figure 1: decision functions on toy data"),
    "mf-regression-paths": (None, "scikit-garden tutorial: path weights and uncertainty band"),
    "mondrian-painting": (None, "a 2-D Mondrian tree drawn as a Mondrian painting"),
    "kernel": ("bench_kernel.py", "Mondrian kernel paper figures"),
    "ensembles": ("bench_ensembles.py",
                  "online bagging and boosting against a plain Mondrian forest"),
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


_TABLE_SUFFIXES = (".csv", ".gz", ".svm", ".libsvm", ".svmlight", ".parquet", ".tsv", ".txt",
                   ".data")
_COLUMNS_SHOWN = 8


@dataclass
class StreamInfo:
    """What was read, for the summary printed before the evaluation.

    Attributes
    ----------
    label : str
        Name of the data in the results (file name or dataset name).
    description : str
        What was read (rows, features, how the header and the format were decided),
        as printed.
    target : str
        The line about the target, as printed.
    """

    label: str
    description: str
    target: str


def _load_data(args):
    """Features, target and a description of what was read, from a file or a dataset."""
    import numpy as np

    from .datasets import (
        BENCHMARK_DATASETS,
        DataFileError,
        DatasetNotFoundError,
        load_benchmark,
        load_electricity,
        load_file,
    )

    source = args.data
    path = Path(source)
    if path.is_dir():
        raise CommandError(f"{source} is a directory with no Parquet file; give a CSV, "
                           "LIBSVM or Parquet file, or a folder of Parquet files.")
    if path.exists() or source.lower().endswith(_TABLE_SUFFIXES):
        if not path.exists():
            raise CommandError(f"No such file: {source}")
        try:
            X, y, _, info = load_file(path, target=args.target, header=args.header,
                                      return_info=True)
        except DataFileError as exc:
            raise CommandError(str(exc)) from exc
        except (ValueError, OSError, ImportError) as exc:
            raise CommandError(f"Could not read {source}: {exc}") from exc
        return X, y, _describe_file(info, X.shape[1], args.target)
    if source == "electricity":
        X, y = load_electricity()
        return X, y, StreamInfo(source, f"electricity (the bundled Elec2 stream): "
                                        f"{X.shape[0]} rows, {X.shape[1]} features.",
                                "Target: UP or DOWN.")
    if source in BENCHMARK_DATASETS:
        try:
            data = load_benchmark(source)
        except DatasetNotFoundError as exc:
            raise CommandError(str(exc)) from exc
        if "X" in data:
            X, y, parts = data["X"], data["y"], ""
        else:
            X = np.vstack([data["X_train"], data["X_test"]])
            y = np.concatenate([data["y_train"], data["y_test"]])
            parts = " (training rows, then test rows)"
        return X, y, StreamInfo(source, f"{source}: {X.shape[0]} rows{parts}, "
                                        f"{X.shape[1]} features.", "Target: the dataset's.")
    raise CommandError(f"No such file or dataset: {source!r} (datasets: electricity, "
                       f"{', '.join(sorted(BENCHMARK_DATASETS))}).")


def _describe_file(info, n_features, target):
    """The summary of a file read by :func:`mondrianlearn.datasets.load_file`."""
    name = info.path.name
    if info.format in ("libsvm", "parquet"):
        kind = "LIBSVM" if info.format == "libsvm" else "Parquet"
        target_text = ("the label of each row" if info.format == "libsvm"
                       else f"column {target or 'the last'}")
        return StreamInfo(name, f"{name} ({kind}): {info.n_rows} rows, {n_features} "
                                f"features.", f"Target: {target_text}.")
    if info.header_reason is None:
        how = "header row (--header)" if info.header else "no header row (--no-header)"
    elif info.header:
        how = f"header row detected ({info.header_reason}; --no-header if it is data)"
    else:
        how = f"no header row ({info.header_reason}; --header if it is one)"
    columns = info.columns
    read = f"{name}: {info.n_rows} rows, {len(columns)} columns; {how}"
    if info.header:
        shown = columns if len(columns) <= _COLUMNS_SHOWN else columns[:_COLUMNS_SHOWN] + ["..."]
        read += f": {', '.join(shown)}."
    else:
        read += "."
    index = info.target_index
    target_text = (f"Target: column {index} ({info.target_name!r})" if info.header
                   else f"Target: column {index}")
    target_text += " (the last)" if index == len(columns) - 1 else ""
    target_text += f"; {n_features} features"
    if info.encoded:
        target_text += f" ({', '.join(info.encoded)} one-hot encoded)"
    return StreamInfo(name, read, target_text + ".")


def _task(y, requested):
    if requested:
        return requested
    from sklearn.utils.multiclass import type_of_target

    try:
        kind = type_of_target(y)
    except ValueError as exc:
        raise CommandError(f"Cannot tell the task from the target ({exc}); give --task.") from exc
    return "regression" if kind == "continuous" else "classification"


def _describe_task(y, task, requested):
    """The task in words, checking that the target fits it."""
    import numpy as np

    how = "given" if requested else "inferred; --task to change"
    if task == "regression":
        try:
            values = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise CommandError("--task regression needs a numeric target.") from exc
        return f"Task: regression ({how}), target from {values.min():.4g} to {values.max():.4g}."
    classes = np.unique(y)
    if classes.size < 2:
        raise CommandError(f"The target has a single value ({classes[0]}) in the rows used: "
                           f"nothing to classify (is the file sorted by class? --shuffle "
                           f"SEED).")
    shown = ", ".join(str(c) for c in classes[:10]) + (", ..." if classes.size > 10 else "")
    return f"Task: classification ({how}), {classes.size} classes: {shown}."


def _check_params(name, model):
    """Check a model's parameters now rather than at its first fit."""
    try:
        model._validate_params()
    except (ValueError, TypeError) as exc:
        raise CommandError(f"Bad --param for {name}: {exc}") from exc


def _check_plot_path(path):
    """A figure path that can be written: an existing folder and a known format."""
    if path is None:
        return
    target = Path(path)
    if not target.parent.exists():
        raise CommandError(f"Cannot write {path}: the folder {target.parent} does not exist.")
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return
    formats = Figure().canvas.get_supported_filetypes()
    suffix = target.suffix.lstrip(".").lower()
    if suffix not in formats:
        raise CommandError(f"Cannot write {path}: the figure format is taken from the "
                           f"extension, one of {', '.join(sorted(formats))}.")


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
        _check_params(name, model)
        return Learner(label, model, refit_every=args.refit_every)
    if name in ("river-amf", "river-arf"):
        try:
            from river import forest
        except ImportError as exc:
            raise CommandError(
                "river baselines need river: pip install 'mondrian-learn[river]'") from exc
        kind = "AMF" if name == "river-amf" else "ARF"
        cls = getattr(forest, kind + ("Classifier" if classification else "Regressor"))
        kwargs = {"n_models": 10} if kind == "ARF" else {"n_estimators": 10}
        return Learner(f"river {kind}", RiverModel(cls(seed=args.seed, **kwargs)))
    raise CommandError(f"Unknown baseline {name!r}; choose from {sorted(BASELINES)}.")


def _evaluate(args):
    import numpy as np

    from .evaluation import ordered_target_message, progressive_evaluation

    _check_plot_path(args.plot)
    if Path(args.data).is_dir() and any(Path(args.data).glob("*.parquet")):
        return _evaluate_parquet_folder(args)
    X, y, info = _load_data(args)
    print(f"Read {info.description}")
    if args.shuffle is not None:
        order = np.random.RandomState(args.shuffle).permutation(X.shape[0])
        X, y = X[order], y[order]
    if args.n_samples:
        X, y = X[: args.n_samples], y[: args.n_samples]
    if X.shape[0] < 2:
        raise CommandError("The stream has fewer than two rows.")
    if not np.all(np.isfinite(X)):
        raise CommandError("The features contain NaN or infinite values; clean them first.")
    task = _task(y, args.task)
    print(info.target)
    print(_describe_task(y, task, args.task))
    params = _parse_params(args.param)
    learners = _online_learners(args, task, params)
    for name in args.baseline or []:
        learners.append(_baseline(name, task, args))
    rows_used = f"the first {X.shape[0]} rows" if args.n_samples else f"{X.shape[0]} rows"
    row_order = (f"shuffled with seed {args.shuffle}" if args.shuffle is not None
                 else "in file order")
    scaling = ("features min-max scaled online (each batch with the minimum and maximum of "
               "the rows before it)" if args.scale else "features not scaled")
    print(f"Test-then-train on {rows_used} {row_order}, in mini-batches of {args.batch_size}; "
          f"{scaling}.", flush=True)
    message = ordered_target_message(y, task)
    if message is not None:
        print(f"mondrian: warning: {message}; progressive metrics then measure the row "
              f"order: pass --shuffle SEED unless the rows are in time order.",
              file=sys.stderr, flush=True)
    scaler = None
    if args.scale:
        from sklearn.preprocessing import MinMaxScaler

        scaler = MinMaxScaler()
    traces = progressive_evaluation(learners, X, y, batch_size=args.batch_size, task=task,
                                    progress=not args.no_progress, description=info.label,
                                    scaler=scaler)
    _print_results(learners, traces, task)
    if args.plot:
        _plot_results(traces, task, args.plot, f"{info.label}: test-then-train, {X.shape[0]} rows")
    return 0


def _online_learners(args, task, params):
    """The learners of ``--model`` for ``task``, with ``--param`` and ``--seed``."""
    from .evaluation import Learner

    learners = []
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
        _check_params(name, model)
        learners.append(Learner(f"{name} (online)", model))
    return learners


def _evaluate_parquet_folder(args):
    """``mondrian evaluate FOLDER``: the Parquet files of a folder, streamed in order
    one partition at a time (``mondrianlearn.dask.evaluate_parquet``), never loaded
    whole."""
    if args.baseline:
        raise CommandError("--baseline needs the whole prefix in memory; it cannot be used "
                           "with a folder of Parquet files.")
    if args.shuffle is not None:
        raise CommandError("--shuffle cannot be used with a folder of Parquet files "
                           "(they are streamed in order).")
    try:
        from .dask import evaluate_parquet
    except ImportError as exc:
        raise CommandError(f"Streaming a Parquet folder needs dask: {exc}") from exc
    params = _parse_params(args.param)
    chosen = {}

    def learners_for(task):
        chosen["task"] = task
        chosen["learners"] = _online_learners(args, task, params)
        return chosen["learners"]

    scaler = None
    if args.scale:
        from sklearn.preprocessing import MinMaxScaler

        scaler = MinMaxScaler()
    label = Path(args.data).name
    print(f"Streaming the Parquet files of {args.data} in order, one partition at a time, "
          f"test-then-train in mini-batches of {args.batch_size}.", flush=True)
    try:
        traces = evaluate_parquet(args.data, learners_for, target=args.target, task=args.task,
                                  batch_size=args.batch_size, n_rows=args.n_samples or None,
                                  scaler=scaler, progress=not args.no_progress,
                                  description=label)
    except (ValueError, KeyError, OSError) as exc:
        raise CommandError(f"Could not stream {args.data}: {exc}") from exc
    _print_results(chosen["learners"], traces, chosen["task"])
    if args.plot:
        _plot_results(traces, chosen["task"], args.plot, f"{label}: test-then-train")
    return 0


def _print_results(learners, traces, task):
    from .evaluation import format_table

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


def _plot_results(traces, task, path, title):
    from .plotting import plot_progressive

    name = "progressive accuracy" if task == "classification" else "progressive MSE"
    fig = plot_progressive(traces, metric_name=name, title=title)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print(f"\nFigure written to {path}")


def _precompile(args):
    from .precompile import main as precompile_main

    return precompile_main()


def _demo(args):
    import numpy as np

    from .datasets import load_electricity
    from .experiments import elec2_demo

    _check_plot_path(args.plot)
    X, y = load_electricity(n_samples=args.n_samples)
    print(f"Elec2 stream: {X.shape[0]} samples, {X.shape[1]} features, "
          f"classes {sorted(set(y.tolist()))}. Test-then-train in mini-batches of "
          f"{args.batch_size}.", flush=True)
    result = elec2_demo(args.n_samples, batch_size=args.batch_size,
                        n_estimators=args.n_estimators, rf_trees=args.rf_trees,
                        refit_every=args.refit_every, n_jobs=args.n_jobs,
                        random_state=args.seed, progress=not args.no_progress)
    traces = result.traces
    print()
    print(result.table(floatfmt="{:.4g}"))
    batch = traces[-1]
    print()
    for online in traces[:-1]:
        seconds, batch_seconds = online.summary["seconds"], batch.summary["seconds"]
        diff = 100 * (online.summary["accuracy"] - batch.summary["accuracy"])
        print(f"Progressive accuracy of {online.name}: {diff:+.2f} points against the "
              f"retrained random forest, in {seconds:.2f} s against {batch_seconds:.2f} s.")
    plain, adaptive = traces[1], traces[2]
    gain = 100 * (adaptive.summary["accuracy"] - plain.summary["accuracy"])
    replaced = int(np.isin(adaptive.drift_events["kind"], ["drift", "swap"]).sum())
    print(f"\nDrift adaptation (drift='adwin'): {gain:+.2f} points against the same AMF "
          f"without it; {replaced} trees replaced as the stream changed"
          + (" (marked on the figure)." if args.plot else ".")
          + ("" if gain > 0 else " It did not pay on this stretch of the stream."))
    if args.plot:
        try:
            from .plotting import plot_progressive

            fig = plot_progressive(traces, metric_name="progressive accuracy",
                                   title=f"Elec2 stream: test-then-train, {X.shape[0]} "
                                         f"samples")
        except ImportError:
            print("(matplotlib is not installed: no figure; pip install 'mondrian-learn[plot]')")
            return 0
        fig.savefig(args.plot, dpi=120, bbox_inches="tight")
        print(f"Figure of the curves written to {args.plot}")
    return 0


def _benchmark_candidates():
    """Where the ``benchmarks/`` folder of a clone may be: below the current
    directory, or above the package (an editable install from a clone)."""
    here = Path(__file__).resolve()
    return [Path.cwd() / "benchmarks"] + [p / "benchmarks" for p in here.parents]


def _benchmark_script(name, script):
    """The path of a benchmark script of the clone, or a one-line error."""
    for folder in _benchmark_candidates():
        if (folder / script).is_file():
            return folder / script
    in_package = ", ".join(k for k, (s, _) in BENCHMARKS.items() if s is None)
    raise CommandError(f"'{name}' runs benchmarks/{script}, which is not installed with "
                       f"the package: run it from a clone of the mondrian-learn repository "
                       f"(without one: {in_package}).")


def _bench_in_package(name, out):
    """The experiments of :mod:`mondrianlearn.experiments`: their figures and table."""
    import numpy as np

    from . import experiments

    try:
        from . import plotting
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise CommandError(f"'{name}' draws figures: {exc}") from exc
    figures = {}
    if name == "amf-toy":
        result = experiments.fit_toy_models()
        display = plotting.DecisionFunctionsDisplay.from_estimators(result.models, result.data)
        figures["amf_toy_decision_functions.png"] = display.figure_
    elif name == "mondrian-painting":
        result = experiments.mondrian_painting()
        ax = plotting.plot_mondrian_tree(result.models["tree"], result.data["X"],
                                         result.data["y"])
        figures["mondrian_tree.png"] = ax.figure
    else:
        result = experiments.regression_paths()
        X, y, grid = result.data["X"], result.data["y"], result.data["grid"]
        figures["path_weights.png"] = plotting.plot_path_weights(result.models["tree"], grid)
        ax = plotting.plot_predictive_band(result.models["forest"], X, y, grid,
                                           y_true=np.sin(grid[:, 0]))
        figures["predictive_band.png"] = ax.figure
    out.mkdir(parents=True, exist_ok=True)
    for file_name, fig in figures.items():
        _save_small_png(fig, out / file_name)
    table = result.table()
    print(table)
    (out / f"{name}.md").write_text(table + "\n")
    print(f"\nTable and figure written to {out}/")
    return 0


def _save_small_png(fig, path, dpi=100):
    """Write a figure as a PNG of at most 256 colours (the documentation's pictures,
    each under 200 KB; Pillow comes with matplotlib)."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    buffer.seek(0)
    with Image.open(buffer) as image:
        image.convert("RGB").quantize(256).save(path, format="PNG", optimize=True)


def _bench(args):
    if args.name == "list" or args.name not in BENCHMARKS:
        lines = [f"  {k:20s} {v[1]}" + ("" if v[0] is None else " (needs a clone)")
                 for k, v in BENCHMARKS.items()]
        print("Experiments:\n" + "\n".join(lines))
        if args.name != "list":
            raise CommandError(f"Unknown experiment {args.name!r}.")
        return 0
    script, _ = BENCHMARKS[args.name]
    out = Path(args.out)
    if script is None:
        return _bench_in_package(args.name, out)
    path = _benchmark_script(args.name, script)
    command = [sys.executable, str(path)] + (["--quick"] if args.quick else [])
    out.mkdir(parents=True, exist_ok=True)
    print("$ " + " ".join(command), flush=True)
    proc = subprocess.run(command, cwd=path.parent.parent, capture_output=True, text=True)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr[-4000:])
    (out / f"{args.name}.md").write_text(proc.stdout)
    print(f"\nOutput written to {out / (args.name + '.md')} (figures: benchmarks/results/).")
    return proc.returncode


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2**32 - 1, got {text!r}")
    return value


def _n_jobs(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value == 0:
        raise argparse.ArgumentTypeError(f"expected a non-zero integer (-1: all cores), "
                                         f"got {text!r}")
    return value


def build_parser():
    """The argument parser of the ``mondrian`` command (demo, evaluate, precompile, bench).

    Returns
    -------
    parser : argparse.ArgumentParser
        Each subcommand sets ``func``, the function that runs it on the parsed
        arguments.
    """
    parser = argparse.ArgumentParser(prog="mondrian",
                                     description="Learning with the Mondrian process.")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="online Mondrian forest and AMF on the bundled Elec2 "
                                       "stream, against a retrained random forest")
    demo.add_argument("--n-samples", type=_positive_int, default=20000,
                      help="length of the stream (default: 20000; 45312 for all of it)")
    demo.add_argument("--batch-size", type=_positive_int, default=100)
    demo.add_argument("--n-estimators", type=_positive_int, default=10,
                      help="trees of the Mondrian forest and of AMF")
    demo.add_argument("--rf-trees", type=_positive_int, default=50, help="random forest trees")
    demo.add_argument("--refit-every", type=_positive_int, default=2000,
                      help="samples between two refits of the random forest")
    demo.add_argument("--n-jobs", type=_n_jobs, default=None)
    demo.add_argument("--seed", type=_seed, default=0)
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
    header = ev.add_mutually_exclusive_group()
    header.add_argument("--header", dest="header", action="store_true", default=None,
                        help="the first row of the CSV file holds the column names "
                             "(default: detected)")
    header.add_argument("--no-header", dest="header", action="store_false",
                        help="the first row of the CSV file is data")
    ev.add_argument("--task", choices=["classification", "regression"])
    ev.add_argument("--model", action="append", choices=sorted(MODELS),
                    help="model to evaluate online (repeatable; default: mondrian-forest)")
    ev.add_argument("--param", action="append", metavar="KEY=VALUE",
                    help="model parameter, e.g. --param n_estimators=50 (repeatable)")
    ev.add_argument("--baseline", action="append", choices=sorted(BASELINES),
                    help="baseline to compare with (repeatable)")
    ev.add_argument("--baseline-trees", type=_positive_int, default=100)
    ev.add_argument("--refit-every", type=_positive_int, default=1000,
                    help="samples between refits of batch baselines")
    ev.add_argument("--batch-size", type=_positive_int, default=100)
    ev.add_argument("--n-samples", type=_positive_int,
                    help="use only the first N rows (after --shuffle)")
    ev.add_argument("--shuffle", type=_seed, metavar="SEED",
                    help="shuffle the rows with this seed first (for files sorted by class "
                         "or target; not for time-ordered streams)")
    ev.add_argument("--no-scale", dest="scale", action="store_false",
                    help="do not scale the features (by default they are min-max scaled "
                         "online: each batch with the minimum and maximum of the rows "
                         "before it)")
    ev.add_argument("--n-jobs", type=_n_jobs, default=None)
    ev.add_argument("--seed", type=_seed, default=0)
    ev.add_argument("--plot", metavar="FILE", help="write a PNG of the metric against "
                                                   "samples and time")
    ev.add_argument("--no-progress", action="store_true")
    ev.set_defaults(func=_evaluate)

    pre = sub.add_parser("precompile", help="compile the kernels of the common path ahead "
                                            "of their first use (done by pip install .)")
    pre.set_defaults(func=_precompile)

    bench = sub.add_parser("bench", help="rerun one of the papers' experiments "
                                         "('mondrian bench list' lists them)")
    bench.add_argument("name")
    bench.add_argument("--quick", action="store_true", help="reduced version (minutes)")
    bench.add_argument("--out", default="benchmarks/results", help="folder for the table")
    bench.set_defaults(func=_bench)
    return parser


def main(argv=None):
    """Entry point of the ``mondrian`` console script.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    code : int
        Exit code: 0 on success, 2 for a user error (reported in one line on
        stderr), 130 when interrupted, or the exit code of a benchmark script.
    """
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
