"""Reading a labelled table from a file for the command line."""

from pathlib import Path

import numpy as np

_MAX_CATEGORIES = 64


class DataFileError(ValueError):
    """A data file that cannot be read as features and a target."""


def load_file(path, target=None):
    """Read features and target from a CSV, LIBSVM or Parquet file.

    Parameters
    ----------
    path : str or Path
        ``.csv``/``.tsv``/``.txt`` (optionally ``.gz``; header row expected when
        ``target`` names a column), ``.svm``/``.libsvm``/``.svmlight``, or
        ``.parquet``.
    target : str or int, default=None
        Target column (name, or index for files without a header); default: the
        last column. LIBSVM files carry their target and ignore this.

    Returns
    -------
    X : ndarray of float64
    y : ndarray
    feature_names : list of str

    Raises
    ------
    DataFileError
        Missing file, unknown target column, or a non-numeric column with too many
        distinct values to one-hot encode.
    """
    path = Path(path)
    if not path.exists():
        raise DataFileError(f"No such file: {path}")
    name = path.name.lower()
    if name.endswith((".svm", ".libsvm", ".svmlight", ".svm.gz", ".libsvm.gz")):
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(str(path))
        return X.toarray(), y, [f"x{j}" for j in range(X.shape[1])]
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise DataFileError("Reading CSV or Parquet files needs pandas: "
                            "pip install 'mondrian-learn[pandas]'") from exc
    if name.endswith(".parquet"):
        try:
            frame = pd.read_parquet(path)
        except ImportError as exc:
            raise DataFileError("Reading Parquet needs pyarrow: pip install pyarrow") from exc
    else:
        sep = "\t" if ".tsv" in name else None
        frame = pd.read_csv(path, sep=sep, engine="python")
    if frame.shape[1] < 2:
        raise DataFileError(f"{path} has {frame.shape[1]} column(s); need features and a target.")
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    if target is None:
        target_name = columns[-1]
    elif str(target) in columns:
        target_name = str(target)
    elif str(target).lstrip("-").isdigit() and -len(columns) <= int(target) < len(columns):
        target_name = columns[int(target)]
    else:
        raise DataFileError(f"Unknown target column {target!r}; the columns are {columns}.")
    y = frame[target_name].to_numpy()
    features = frame.drop(columns=[target_name])
    blocks, names = [], []
    for col in features.columns:
        values = features[col]
        if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
            blocks.append(values.to_numpy(dtype=np.float64)[:, None])
            names.append(col)
            continue
        cats = pd.unique(values.astype(str))
        if len(cats) > _MAX_CATEGORIES:
            raise DataFileError(
                f"Column {col!r} is not numeric and has {len(cats)} distinct values "
                f"(at most {_MAX_CATEGORIES} are one-hot encoded); drop or encode it.")
        cats = np.sort(cats)
        text = values.astype(str).to_numpy()
        blocks.append((text[:, None] == cats[None, :]).astype(np.float64))
        names.extend(f"{col}={c}" for c in cats)
    X = np.hstack(blocks) if blocks else np.empty((len(frame), 0))
    return X, y, names
