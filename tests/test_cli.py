"""The ``mondrian`` command line, end to end on small files (Agg backend)."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pandas", reason="the command reads data files with pandas "
                                      "(the pandas extra)")

try:  # the command runs without matplotlib (no figure); the tests of figures skip
    import matplotlib

    matplotlib.use("Agg")
except ImportError:
    matplotlib = None

needs_plot = pytest.mark.skipif(matplotlib is None,
                                reason="matplotlib is not installed (the plot extra)")

from mondrianlearn import evaluation
from mondrianlearn.cli import main

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"


@pytest.fixture
def captured(monkeypatch):
    """What ``mondrian evaluate`` hands to the evaluation: the stream, the options
    and the traces it gets back."""
    calls = []
    original = evaluation.progressive_evaluation

    def spy(learners, X, y, **kwargs):
        traces = original(learners, X, y, **kwargs)
        calls.append({"X": X, "y": y, "kwargs": kwargs, "traces": traces})
        return traces

    monkeypatch.setattr(evaluation, "progressive_evaluation", spy)
    return calls


def _write_numeric_csv(path, X, y, header=None):
    with open(path, "w") as f:
        if header is not None:
            f.write(",".join(header) + "\n")
        for row, target in zip(X, y):
            f.write(",".join(repr(float(v)) for v in row) + f",{target}\n")
    return path


@pytest.fixture
def csv_file(tmp_path):
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(400, 3))
    color = np.where(X[:, 2] > 0.5, "red", "blue")
    y = np.where(X[:, 0] + X[:, 1] > 1, "yes", "no")
    path = tmp_path / "stream.csv"
    with open(path, "w") as f:
        f.write("a,b,color,label\n")
        for row, c, label in zip(X, color, y):
            f.write(f"{row[0]},{row[1]},{c},{label}\n")
    return path


@needs_plot
def test_evaluate_classification_writes_table_and_png(csv_file, tmp_path, capsys):
    png = tmp_path / "curve.png"
    code = main(["evaluate", str(csv_file), "--target", "label", "--batch-size", "50",
                 "--baseline", "rf", "--refit-every", "100", "--baseline-trees", "5",
                 "--param", "n_estimators=5", "--plot", str(png), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "| mondrian-forest (online) |" in out and "RandomForest" in out
    for column in ("accuracy", "log_loss", "roc_auc", "samples_per_second", "pickled_MB"):
        assert column in out
    assert png.exists() and png.stat().st_size > 1000


def test_evaluate_regression_on_libsvm(tmp_path, capsys):
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.RandomState(1)
    X = rng.uniform(size=(300, 4))
    path = tmp_path / "reg.svm"
    dump_svmlight_file(X, X @ [1.0, -2.0, 0.5, 0.0], str(path))
    assert main(["evaluate", str(path), "--model", "amf", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "regression" in out and "| amf (online) |" in out and "mse" in out


def test_evaluate_parquet_folder_streams_in_order(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    pytest.importorskip("dask.dataframe")
    from mondrianlearn.datasets import load_electricity

    X, y = load_electricity(900)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    frame["label"] = y
    for part in range(3):
        frame.iloc[300 * part: 300 * (part + 1)].to_parquet(tmp_path / f"part-{part}.parquet")
    assert main(["evaluate", str(tmp_path), "--target", "label", "--model", "amf",
                 "--param", "n_estimators=3", "--batch-size", "100", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "one partition at a time" in out and "| amf (online) |" in out
    row = next(line for line in out.splitlines() if line.startswith("| amf (online) |"))
    accuracy = float(row.split("|")[2])
    assert 0.5 < accuracy <= 1.0
    assert main(["evaluate", str(tmp_path), "--target", "label", "--baseline", "rf"]) == 2
    assert "--baseline needs the whole prefix" in capsys.readouterr().err


def test_evaluate_bundled_dataset_against_river(capsys):
    pytest.importorskip("river")
    code = main(["evaluate", "electricity", "--n-samples", "600", "--model", "amf",
                 "--baseline", "river-amf", "--no-progress"])
    assert code == 0
    assert "river AMF" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["evaluate", "/nonexistent/file.csv"], "No such file"),
    (["evaluate", "/nonexistent/name"], "No such file or dataset"),
    (["evaluate", "{tmp}"], "is a directory"),
    (["evaluate", "{empty}"], "is empty"),
    (["evaluate", "{header_only}"], "fewer than two rows"),
    (["evaluate", "{csv}", "--target", "nope"], "Unknown target column 'nope'"),
    (["evaluate", "{many}"], "is not numeric"),
    (["evaluate", "{holes}"], "missing value"),
    (["evaluate", "{csv}", "--param", "n_estimators"], "KEY=VALUE"),
    (["evaluate", "{csv}", "--target", "label", "--param", "bogus=1"], "Bad --param"),
    (["evaluate", "{csv}", "--target", "label", "--param", "n_estimators=0"], "Bad --param"),
    (["evaluate", "{csv}", "--target", "label", "--param", "max_depth='deep'"], "Bad --param"),
    (["evaluate", "{csv}", "--target", "a", "--model", "mondrian-boosting"],
     "does only classification"),
    (["evaluate", "{csv}", "--target", "label", "--task", "regression"], "numeric target"),
    (["evaluate", "{csv}", "--plot", "{tmp}/no/such/folder/curve.png"], "does not exist"),
    (["evaluate", "{csv}", "--plot", "{tmp}/curve.xyz"], "format"),
    (["bench", "no-such-experiment"], "Unknown experiment"),
])
def test_errors_are_one_clear_line(args, message, csv_file, tmp_path, capsys):
    many = tmp_path / "many.csv"
    with open(many, "w") as f:
        f.write("x,word,y\n")
        for i in range(200):
            f.write(f"{i},w{i},{i % 2}\n")
    holes = tmp_path / "holes.csv"
    holes.write_text("x,y\n" + "".join(f"{i},{'' if i == 5 else i % 2}\n" for i in range(50)))
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "header_only.csv").write_text("a,b,label\n")
    args = [a.format(csv=csv_file, many=many, holes=holes, tmp=tmp_path,
                     empty=tmp_path / "empty.csv", header_only=tmp_path / "header_only.csv")
            for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("mondrian: error:") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("args", [
    ["evaluate", "{csv}", "--model", "no-such-model"],
    ["evaluate", "{csv}", "--batch-size", "0"],
    ["evaluate", "{csv}", "--n-samples", "-3"],
    ["evaluate", "{csv}", "--n-jobs", "0"],
    ["evaluate", "{csv}", "--shuffle", "seed"],
    ["evaluate", "{csv}", "--header", "--no-header"],
    ["demo", "--n-estimators", "0"],
])
def test_option_errors_follow_argparse(args, csv_file, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([a.format(csv=csv_file) for a in args])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith("mondrian")
    assert "error: argument" in err and "Traceback" not in err


def test_headerless_csv_keeps_its_first_row(tmp_path, captured, capsys):
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 3))
    y = (X[:, 0] > 0.5).astype(int)
    path = _write_numeric_csv(tmp_path / "plain.csv", X, y)
    assert main(["evaluate", str(path), "--param", "n_estimators=2", "--no-scale",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "300 rows, 4 columns; no header row" in out
    assert "Target: column 3 (the last); 3 features." in out
    assert "Task: classification" in out and "2 classes: 0, 1" in out
    (call,) = captured
    np.testing.assert_array_equal(call["X"], X)
    np.testing.assert_array_equal(call["y"], y)


def test_header_detected_or_forced(tmp_path, captured, capsys):
    rng = np.random.RandomState(1)
    X = rng.uniform(size=(120, 2))
    y = (X[:, 1] > 0.5).astype(int)
    # A header that numbers the columns, as in UCI's spambase.
    numbered = _write_numeric_csv(tmp_path / "numbered.csv", X, y, header=["1", "2", "3"])
    assert main(["evaluate", str(numbered), "--param", "n_estimators=2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "120 rows, 3 columns; header row detected (the first row numbers the columns" in out
    assert "Target: column 2 ('3') (the last)" in out
    assert main(["evaluate", str(numbered), "--no-header", "--param", "n_estimators=2",
                 "--no-progress", "--task", "regression"]) == 0
    assert "121 rows, 3 columns; no header row (--no-header)" in capsys.readouterr().out
    np.testing.assert_array_equal(captured[-1]["X"][0], [1.0, 2.0])
    plain = _write_numeric_csv(tmp_path / "plain.csv", X, y)
    assert main(["evaluate", str(plain), "--header", "--param", "n_estimators=2",
                 "--no-progress"]) == 0
    assert "119 rows, 3 columns; header row (--header)" in capsys.readouterr().out


def test_sorted_target_warns_and_shuffle_fixes_it(tmp_path, captured, capsys):
    rng = np.random.RandomState(2)
    X = rng.uniform(size=(300, 2))
    y = np.repeat(["a", "b", "c"], 100)
    path = _write_numeric_csv(tmp_path / "sorted.csv", X, y)
    args = ["evaluate", str(path), "--param", "n_estimators=2", "--no-progress"]
    assert main(args) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("mondrian: warning:")]
    assert len(warnings) == 1 and "sorted" in warnings[0] and "--shuffle SEED" in warnings[0]
    assert main(args + ["--shuffle", "0"]) == 0
    captured_out = capsys.readouterr()
    assert "warning" not in captured_out.err
    assert "shuffled with seed 0" in captured_out.out
    shuffled = captured[-1]
    order = np.random.RandomState(0).permutation(300)
    np.testing.assert_array_equal(shuffled["y"], y[order])
    np.testing.assert_array_equal(shuffled["X"], X[order])


def test_time_ordered_stream_is_not_flagged(capsys):
    assert main(["evaluate", "electricity", "--n-samples", "3000", "--param",
                 "n_estimators=2", "--no-progress"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_ordered_target_message():
    from mondrianlearn.datasets import load_electricity
    from mondrianlearn.evaluation import ordered_target_message

    rng = np.random.RandomState(0)
    assert ordered_target_message(np.sort(rng.randint(4, size=1000)), "classification")
    assert ordered_target_message(rng.randint(4, size=1000), "classification") is None
    assert ordered_target_message(np.sort(rng.normal(size=500)), "regression")
    assert ordered_target_message(-np.sort(rng.normal(size=500)), "regression")
    assert ordered_target_message(rng.normal(size=500), "regression") is None
    _, y = load_electricity()
    assert ordered_target_message(y, "classification") is None


@pytest.mark.skipif(not (SHARED / "spambase").exists(),
                    reason="needs the shared datasets folder (../shared/datasets)")
def test_spambase_header_and_order_are_reported(capsys):
    path = SHARED / "spambase" / "spambase.data"
    assert main(["evaluate", str(path), "--param", "n_estimators=2", "--no-progress",
                 "--batch-size", "500"]) == 0
    captured = capsys.readouterr()
    assert "4601 rows, 58 columns; header row detected" in captured.out
    assert "mondrian: warning: the target is sorted" in captured.err


def test_features_are_scaled_from_past_rows_only(tmp_path, captured):
    """Changing the last row of the file must not change any earlier prediction."""
    rng = np.random.RandomState(3)
    X = rng.uniform(size=(400, 2))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    outlier = X.copy()
    outlier[-1] = [1000.0, 0.5]
    metrics = []
    for name, data in (("plain.csv", X), ("outlier.csv", outlier)):
        path = _write_numeric_csv(tmp_path / name, data, y, header=["u", "v", "label"])
        assert main(["evaluate", str(path), "--batch-size", "50", "--param",
                     "n_estimators=3", "--no-progress"]) == 0
        (trace,) = captured[-1]["traces"]
        assert len(trace.metric) == 8
        metrics.append(trace.metric)
    np.testing.assert_array_equal(metrics[0][:-1], metrics[1][:-1])
    assert metrics[0][-2] > 0.8


def test_online_scaler_sees_each_batch_after_predicting_it():
    from sklearn.preprocessing import MinMaxScaler

    from mondrianlearn.evaluation import Learner, progressive_evaluation

    class Recorder:
        """Records what it is given; predicts the first feature as the probability."""

        classes_ = np.array([0, 1])

        def __init__(self):
            self.learned, self.asked = [], []

        def partial_fit(self, X, y, classes=None):
            self.learned.append(X.copy())

        def predict_proba(self, X):
            self.asked.append(X.copy())
            p = np.clip(X[:, :1], 0, 1)
            return np.hstack([1 - p, p])

    X = np.arange(40, dtype=float).reshape(20, 2)
    y = np.arange(20) % 2
    model = Recorder()
    progressive_evaluation([Learner("rec", model)], X, y, batch_size=5, warmup=5,
                           progress=False, compile_first=False, scaler=MinMaxScaler())
    for b in range(4):
        seen = X[: 5 * (b + 1)]
        lo, hi = seen.min(axis=0), seen.max(axis=0)
        np.testing.assert_allclose(model.learned[b], (X[5 * b:5 * b + 5] - lo) / (hi - lo))
    for b in range(1, 4):
        before = X[: 5 * b]
        lo, hi = before.min(axis=0), before.max(axis=0)
        np.testing.assert_allclose(model.asked[b - 1], (X[5 * b:5 * b + 5] - lo) / (hi - lo))


def test_river_model_names_the_features():
    from mondrianlearn.evaluation import RiverModel

    class Recorder:
        """A river regressor that records the rows it is given."""

        def __init__(self):
            self.rows = []

        def learn_one(self, x, y):
            self.rows.append(x)

        def predict_one(self, x):
            self.rows.append(x)
            return None

    X = np.array([[1.0, 2.0], [3.0, 4.0]])
    by_index, by_name = Recorder(), Recorder()
    RiverModel(by_index).partial_fit(X, np.array([0.5, 1.5]))
    model = RiverModel(by_name, feature_names=["a", "b"]).partial_fit(X, np.array([0.5, 1.5]))
    np.testing.assert_array_equal(model.predict(X[:1]), [0.0])
    assert by_index.rows == [{0: 1.0, 1: 2.0}, {0: 3.0, 1: 4.0}]
    assert by_name.rows == [{"a": 1.0, "b": 2.0}, {"a": 3.0, "b": 4.0}, {"a": 1.0, "b": 2.0}]


class _FixedScores:
    """Probabilities from a fixed linear score, over the classes met so far."""

    def __init__(self, n_classes):
        self.weights = np.random.RandomState(4).normal(size=(2, n_classes))
        self.classes_ = np.array([], dtype=int)

    def partial_fit(self, X, y, classes=None):
        self.classes_ = np.union1d(self.classes_, y)

    def predict_proba(self, X):
        scores = np.exp(X @ self.weights)[:, self.classes_]
        return scores / scores.sum(axis=1, keepdims=True)


def _replayed_probabilities(model, X, y, batch_size, warmup):
    """What the evaluation scores: each batch predicted over the classes seen before."""
    rows = []
    for start in range(warmup, len(y), batch_size):
        seen = np.unique(y[:start])
        scores = np.exp(X[start:start + batch_size] @ model.weights)
        full = np.zeros_like(scores)
        full[:, seen] = scores[:, seen] / scores[:, seen].sum(axis=1, keepdims=True)
        rows.append(full)
    return np.vstack(rows)


def test_multiclass_auc_is_one_vs_rest_macro_with_late_classes():
    from sklearn.metrics import roc_auc_score

    from mondrianlearn.evaluation import Learner, progressive_evaluation

    rng = np.random.RandomState(5)
    X = rng.normal(size=(600, 2))
    y = np.argmax(X @ rng.normal(size=(2, 3)) + rng.normal(size=(600, 3)), axis=1)
    y[:200] = np.where(y[:200] == 2, 0, y[:200])  # class 2 appears only later
    model = _FixedScores(3)
    (trace,) = progressive_evaluation([Learner("fixed", model)], X, y, batch_size=100,
                                      progress=False, compile_first=False)
    proba = _replayed_probabilities(model, X, y, 100, 100)
    expected = roc_auc_score(y[100:], proba, multi_class="ovr", average="macro")
    assert trace.summary["roc_auc"] == pytest.approx(expected, abs=1e-12)
    assert 0.5 < trace.summary["roc_auc"] < 1.0

    # A class met only during the warm-up has no ROC curve: the average runs over
    # the classes that were scored.
    y_warm = y.copy()
    y_warm[100:] = np.where(y_warm[100:] == 1, 0, y_warm[100:])
    y_warm[:100] = 1
    model = _FixedScores(3)
    (trace,) = progressive_evaluation([Learner("fixed", model)], X, y_warm, batch_size=100,
                                      progress=False, compile_first=False)
    proba = _replayed_probabilities(model, X, y_warm, 100, 100)
    per_class = [roc_auc_score(y_warm[100:] == k, proba[:, k]) for k in (0, 2)]
    assert trace.summary["roc_auc"] == pytest.approx(np.mean(per_class), abs=1e-12)


def test_multiclass_auc_in_the_table(tmp_path, capsys):
    rng = np.random.RandomState(6)
    X = rng.uniform(size=(300, 2))
    y = np.digitize(X[:, 0], [1 / 3, 2 / 3])
    path = _write_numeric_csv(tmp_path / "three.csv", X, y)
    assert main(["evaluate", str(path), "--param", "n_estimators=3", "--no-progress"]) == 0
    row = [line for line in capsys.readouterr().out.splitlines()
           if line.startswith("| mondrian-forest (online)")][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert 0.8 < float(cells[3]) <= 1.0  # model, accuracy, log_loss, roc_auc


def test_progress_bar_shows_full_names_and_a_dash_in_the_warm_up(monkeypatch):
    import tqdm.auto

    from mondrianlearn.evaluation import Learner, progressive_evaluation

    postfixes = []

    class Bar:
        def __init__(self, *args, **kwargs):
            pass

        def update(self, n):
            pass

        def set_postfix(self, values, refresh=True):
            postfixes.append(dict(values))

        def close(self):
            pass

    monkeypatch.setattr(tqdm.auto, "tqdm", Bar)
    rng = np.random.RandomState(7)
    X = rng.normal(size=(500, 2))
    y = (X[:, 0] > 0).astype(int)
    names = ["a rather long online model name", "batch baseline refit every 300"]
    learners = [Learner(names[0], _FixedScores(2)),
                Learner(names[1], _FixedScores(2), refit_every=300)]
    learners[1].model.fit = lambda X, y: learners[1].model.partial_fit(X, y)
    progressive_evaluation(learners, X, y, batch_size=100, progress=True, compile_first=False)
    assert len(postfixes) == 5
    assert all(list(p) == names for p in postfixes)
    assert all(p[name] == "-" for p in postfixes[:3] for name in names)
    for p in postfixes[3:]:
        assert all(0.0 <= float(p[name]) <= 1.0 for name in names)


@needs_plot
def test_amf_toy_experiment_table(tmp_path, capsys):
    assert main(["bench", "amf-toy", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "amf-toy.md").read_text()
    assert table.startswith("| dataset | AMF | AMF (no aggregation) | Mondrian forest |")
    rows = {line.split("|")[1].strip(): [float(v) for v in line.strip("|\n").split("|")[1:]]
            for line in table.splitlines()[2:]}
    assert set(rows) == {"moons", "circles", "linear"}
    assert all(0.75 < auc <= 1.0 for aucs in rows.values() for auc in aucs)
    assert 1000 < (tmp_path / "amf_toy_decision_functions.png").stat().st_size < 200_000


@needs_plot
def test_bench_list_and_an_in_package_experiment(tmp_path, capsys):
    assert main(["bench", "list"]) == 0
    assert "amf-toy" in capsys.readouterr().out
    assert main(["bench", "mf-regression-paths", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "path_weights.png").stat().st_size > 1000
    assert (tmp_path / "predictive_band.png").stat().st_size > 1000
    assert "| x | mean | std |" in (tmp_path / "mf-regression-paths.md").read_text()


def test_bench_without_a_clone_is_one_clear_line(tmp_path, monkeypatch, capsys):
    """An installed package has no benchmarks/ folder: the experiments that run its
    scripts say so in one line (exit code 2) and name those that need none."""
    from mondrianlearn import cli

    monkeypatch.setattr(cli, "_benchmark_candidates", lambda: [tmp_path / "benchmarks"])
    assert main(["bench", "mf-accuracy", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mondrian: error: ")
    assert "bench_mf_accuracy.py" in err and "clone" in err and "amf-toy" in err
    assert not (tmp_path / "out").exists()


def test_bench_list_says_which_experiments_need_a_clone(capsys):
    assert main(["bench", "list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert "needs a clone" in lines["mf-accuracy"]
    assert "needs a clone" not in lines["amf-toy"]


@needs_plot
def test_in_package_experiments_write_small_pictures(tmp_path, capsys):
    assert main(["bench", "mondrian-painting", "--out", str(tmp_path)]) == 0
    size = (tmp_path / "mondrian_tree.png").stat().st_size
    assert 1000 < size < 200_000
    assert (tmp_path / "mondrian-painting.md").read_text().startswith(
        "| nodes | leaves | depth | first split time | training accuracy |")


@needs_plot
def test_demo_runs_on_a_short_stream(tmp_path, capsys):
    png = tmp_path / "demo.png"
    code = main(["demo", "--n-samples", "1500", "--rf-trees", "5", "--refit-every", "500",
                 "--no-progress", "--plot", str(png)])
    out = capsys.readouterr().out
    assert code == 0 and "Progressive accuracy" in out and png.stat().st_size > 1000
    assert "AMF drift-adaptive" in out and "Drift adaptation (drift='adwin')" in out


def test_evaluation_compiles_before_the_clock_starts(monkeypatch):
    """The throughput column must not count compile time: the library's models are
    warmed on copies first, and the copies never touch the evaluated models."""
    import numpy as np

    from mondrianlearn import AMFClassifier, evaluation
    from mondrianlearn.evaluation import Learner, progressive_evaluation

    seen = []
    original = evaluation.warm_up
    monkeypatch.setattr(evaluation, "warm_up",
                        lambda learners, *a: seen.append(len(learners)) or original(learners, *a))
    rng = np.random.RandomState(0)
    X, y = rng.uniform(size=(300, 3)), rng.randint(2, size=300)
    model = AMFClassifier(n_estimators=2, random_state=0)
    progressive_evaluation([Learner("amf", model)], X, y, progress=False)
    assert seen == [1]
    reference = AMFClassifier(n_estimators=2, random_state=0)
    for start in range(0, 300, 100):
        reference.partial_fit(X[start:start + 100], y[start:start + 100], classes=[0, 1])
    assert np.array_equal(model.predict_proba(X), reference.predict_proba(X))


def test_precompile_command_compiles_the_common_path(monkeypatch, capsys):
    """``mondrian precompile`` runs ``mondrianlearn.precompile`` over every common
    model and says how long it took (the slow test of ``tests/test_precompile.py``
    shows what that leaves in numba's cache)."""
    from mondrianlearn import precompile

    seen = []
    monkeypatch.setattr(precompile, "common_calls",
                        lambda cls, X, y, params=None: seen.append((cls.__name__, params)))
    assert main(["precompile"]) == 0
    assert seen == [(name, params) for name, params in precompile.COMMON_MODELS]
    out = capsys.readouterr().out
    assert "AMFClassifier(drift='adwin'):" in out
    assert "compiled kernels of the common path" in out
