"""Readers for the benchmark datasets of the Mondrian papers (local files only)."""

import csv
import gzip
import os
from pathlib import Path

import numpy as np

BENCHMARK_DATASETS = {
    # name: (task, description)
    "letter": ("classification", "UCI letter, LIBSVM split 15000/5000, 16 features, 26 classes"),
    "satimage": ("classification", "Statlog satimage, 4435/2000, 36 features, 6 classes"),
    "usps": ("classification", "USPS digits, 7291/2007, 256 features, 10 classes"),
    "dna": ("classification", "Statlog dna, 1400/1186 (tr/t), 180 features, 3 classes"),
    "spambase": ("classification", "UCI spambase, 4601 rows, 57 features, 2 classes"),
    "adult": ("classification", "UCI adult, 32561/16281, 14 mixed features, one-hot"),
    "bank": ("classification", "UCI bank marketing, 45211 rows, 16 mixed features, one-hot"),
    "electricity": ("classification", "Elec2 stream, 45312 rows, 8 features"),
    "bananas": ("classification", "2-D bananas, 5300 rows"),
    "california_housing": ("regression", "StatLib California housing, 20640 rows, 8 features"),
    "kin40k": ("regression", "kin40k, 40000 rows, 8 features (split 0 of test_mask)"),
    "cpu": ("regression", "CPU of Rahimi and Recht, 6554/819, 21 features"),
}
"""The datasets :func:`load_benchmark` reads: name -> (task, description).

The task is ``"classification"`` or ``"regression"``; the description gives the
source, the train/test split (or the number of rows) and the features.
"""


class DatasetNotFoundError(FileNotFoundError):
    """The benchmark files are not in the data folder."""


def benchmark_data_home(data_home=None):
    """The folder holding the benchmark datasets, or ``None`` when there is none.

    Looks at ``data_home``, then ``$MONDRIANLEARN_DATA``, then ``../shared/datasets``
    relative to the working directory and to this source tree.

    Parameters
    ----------
    data_home : str or Path, default=None
        Folder to try first.

    Returns
    -------
    path : Path or None
        The first of these folders that exists, or ``None``.
    """
    candidates = []
    if data_home is not None:
        candidates.append(Path(data_home))
    if os.environ.get("MONDRIANLEARN_DATA"):
        candidates.append(Path(os.environ["MONDRIANLEARN_DATA"]))
    candidates.append(Path.cwd().parent / "shared" / "datasets")
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidates.append(parent.parent / "shared" / "datasets")
        if (parent / "pyproject.toml").exists():
            break
    for path in candidates:
        if path.is_dir():
            return path
    return None


_SUBFOLDERS = {"kin40k": "uci_regression/kin40k"}


def _folder(name, data_home):
    home = benchmark_data_home(data_home)
    folder = None if home is None else home / _SUBFOLDERS.get(name, name)
    if folder is None or not folder.is_dir():
        raise DatasetNotFoundError(
            f"Benchmark dataset {name!r} not found (looked in {home!s}/{name}). Set "
            "MONDRIANLEARN_DATA or pass data_home= to a folder with the dataset files.")
    return folder


def _svmlight(path, n_features):
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(path), n_features=n_features)
    return X.toarray(), y


def _one_hot_table(rows, categorical):
    """Numeric columns as floats, categorical ones one-hot (categories sorted)."""
    columns = list(zip(*rows))
    blocks = []
    for j, col in enumerate(columns):
        if j in categorical:
            values = np.array([v.strip() for v in col])
            cats = np.unique(values)
            blocks.append((values[:, None] == cats[None, :]).astype(np.float64))
        else:
            blocks.append(np.array(col, dtype=np.float64)[:, None])
    return np.hstack(blocks)


def _split(X, y, n_train):
    return {"X_train": X[:n_train], "y_train": y[:n_train],
            "X_test": X[n_train:], "y_test": y[n_train:]}


def load_benchmark(name, data_home=None):
    """Read a benchmark dataset from local files.

    Parameters
    ----------
    name : str
        One of :data:`BENCHMARK_DATASETS`.
    data_home : str or Path, default=None
        Folder holding ``<name>/`` (see :func:`benchmark_data_home`).

    Returns
    -------
    data : dict
        ``X_train, y_train, X_test, y_test`` (float features, raw labels) for the
        datasets with a standard split. Datasets without one (spambase, bank,
        electricity, bananas, california_housing) are returned whole, in file order,
        as ``X, y``; ``adult`` (rows with a missing value dropped) joins its train
        and test files in the same way and also gives the split. ``task`` and
        ``description`` say what it is.

    Raises
    ------
    DatasetNotFoundError
        When the files are missing.
    """
    if name not in BENCHMARK_DATASETS:
        raise ValueError(f"Unknown dataset {name!r}; choose from {sorted(BENCHMARK_DATASETS)}.")
    folder = _folder(name, data_home)
    task, description = BENCHMARK_DATASETS[name]
    out = {"name": name, "task": task, "description": description}
    if name in ("letter", "satimage"):
        d = 16 if name == "letter" else 36
        Xtr, ytr = _svmlight(folder / f"{name}.scale", d)
        Xte, yte = _svmlight(folder / f"{name}.scale.t", d)
        out.update(X_train=Xtr, y_train=ytr, X_test=Xte, y_test=yte)
    elif name == "dna":
        Xtr, ytr = _svmlight(folder / "dna.scale.tr", 180)
        Xte, yte = _svmlight(folder / "dna.scale.t", 180)
        out.update(X_train=Xtr, y_train=ytr, X_test=Xte, y_test=yte)
    elif name == "usps":
        z = np.load(folder / "usps_esl.npz")
        out.update(X_train=z["X_train"].astype(np.float64), y_train=z["y_train"],
                   X_test=z["X_test"].astype(np.float64), y_test=z["y_test"])
    elif name == "cpu":
        from scipy.io import loadmat

        m = loadmat(folder / "cpu.mat")

        def dense(a):  # the .mat file may store the arrays as sparse matrices
            return np.asarray(a.toarray() if hasattr(a, "toarray") else a, dtype=np.float64)

        out.update(X_train=dense(m["Xtrain"]).T, y_train=dense(m["ytrain"]).ravel(),
                   X_test=dense(m["Xtest"]).T, y_test=dense(m["ytest"]).ravel())
    elif name == "spambase":
        data = np.loadtxt(folder / "spambase.data", delimiter=",", skiprows=1)
        out.update(X=data[:, :-1], y=data[:, -1].astype(int))
    elif name == "bananas":
        data = np.loadtxt(folder / "banana.csv", delimiter=",", encoding="utf-8-sig")
        out.update(X=data[:, :-1], y=data[:, -1].astype(int))
    elif name == "electricity":
        with open(folder / "electricity-normalized.csv") as f:
            rows = [line.strip().split(",") for line in f if line.strip()]
        out.update(X=np.array([[float(v) for v in r[:-1]] for r in rows]),
                   y=np.array([r[-1] for r in rows]))
    elif name == "adult":
        rows = []
        n_train = 0
        for fname in ("adult.data", "adult.test"):
            with open(folder / fname) as f:
                reader = csv.reader(f)
                next(reader)
                part = [r for r in reader if len(r) == 15 and "?" not in "".join(r)]
            rows.extend(part)
            n_train = n_train or len(part)
        y = np.array([r[-1].strip().rstrip(".") == ">50K" for r in rows], dtype=int)
        X = _one_hot_table([r[:-1] for r in rows], {1, 3, 5, 6, 7, 8, 9, 13})
        out.update(X=X, y=y, **_split(X, y, n_train))
    elif name == "bank":
        with open(folder / "bank-full.csv") as f:
            reader = csv.reader(f, delimiter=";")
            next(reader)
            rows = [r for r in reader if r]
        y = np.array([r[-1].strip('"') == "yes" for r in rows], dtype=int)
        X = _one_hot_table([[v.strip('"') for v in r[:-1]] for r in rows],
                           {1, 2, 3, 4, 6, 7, 8, 10, 15})
        out.update(X=X, y=y)
    elif name == "california_housing":
        data = np.loadtxt(folder / "cal_housing.data", delimiter=",")
        out.update(X=data[:, :-1], y=data[:, -1])
    elif name == "kin40k":
        with gzip.open(folder / "data.csv.gz", "rt") as f:
            data = np.loadtxt(f, delimiter=",")
        with gzip.open(folder / "test_mask.csv.gz", "rt") as f:
            mask = np.loadtxt(f, delimiter=",")[:, 0].astype(bool)
        X, y = data[:, :-1], data[:, -1]
        out.update(X=X, y=y, X_train=X[~mask], y_train=y[~mask], X_test=X[mask], y_test=y[mask])
    return out
