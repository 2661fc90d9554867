"""The ``mondrian`` command line, end to end on small files (Agg backend)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from mondrianlearn.cli import main


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


def test_evaluate_bundled_dataset_against_river(capsys):
    pytest.importorskip("river")
    code = main(["evaluate", "electricity", "--n-samples", "600", "--model", "amf",
                 "--baseline", "river-amf", "--no-progress"])
    assert code == 0
    assert "river AMF" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["evaluate", "/nonexistent/file.csv"], "No such file"),
    (["evaluate", "{csv}", "--target", "nope"], "Unknown target column 'nope'"),
    (["evaluate", "{many}"], "is not numeric"),
    (["evaluate", "{csv}", "--param", "n_estimators"], "KEY=VALUE"),
    (["evaluate", "{csv}", "--target", "label", "--param", "bogus=1"], "Bad --param"),
    (["bench", "no-such-experiment"], "Unknown experiment"),
])
def test_errors_are_one_clear_line(args, message, csv_file, tmp_path, capsys):
    many = tmp_path / "many.csv"
    with open(many, "w") as f:
        f.write("x,word,y\n")
        for i in range(200):
            f.write(f"{i},w{i},{i % 2}\n")
    args = [a.format(csv=csv_file, many=many) for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("mondrian: error:") and message in err


def test_bench_list_and_an_in_package_experiment(tmp_path, capsys):
    assert main(["bench", "list"]) == 0
    assert "amf-toy" in capsys.readouterr().out
    assert main(["bench", "mf-regression-paths", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "path_weights.png").stat().st_size > 1000
    assert (tmp_path / "predictive_band.png").stat().st_size > 1000
    assert "| x | mean | std |" in (tmp_path / "mf-regression-paths.md").read_text()


def test_demo_runs_on_a_short_stream(tmp_path, capsys):
    png = tmp_path / "demo.png"
    code = main(["demo", "--n-samples", "1500", "--rf-trees", "5", "--refit-every", "500",
                 "--no-progress", "--plot", str(png)])
    out = capsys.readouterr().out
    assert code == 0 and "Progressive accuracy" in out and png.stat().st_size > 1000


def test_evaluation_compiles_before_the_clock_starts(monkeypatch):
    """The throughput column must not count compile time: the library's models are
    warmed on copies first, and the copies never touch the evaluated models."""
    import numpy as np

    from mondrianlearn import AMFClassifier
    from mondrianlearn import evaluation
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
