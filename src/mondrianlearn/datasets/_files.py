"""Reading a labelled table from a CSV, LIBSVM or Parquet file."""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

_LIBSVM_SUFFIXES = (".svm", ".libsvm", ".svmlight", ".svm.gz", ".libsvm.gz")
_MISSING_MARKS = {"", "?", "na", "n/a", "nan", "null", "none"}
_MAX_CATEGORIES = 64
_HEADER_PROBE_ROWS = 200
_COLUMNS_SHOWN = 12


class DataFileError(ValueError):
    """A data file that cannot be read as features and a target."""


@dataclass
class DataFileInfo:
    """What :func:`load_file` read from a file and what it decided.

    Attributes
    ----------
    path : Path
        The file.
    format : {"csv", "libsvm", "parquet"}
        ``"csv"`` stands for every delimited text file (commas, tabs, ...).
    n_rows : int
        Rows of data, the header row not counted.
    columns : list of str or None
        The table's columns, target included: the names of the header row, or
        ``"0"``, ``"1"``, ... when there is none. None for LIBSVM files.
    header : bool or None
        Whether the first line of a text file was read as column names. None for
        LIBSVM and Parquet files, whose format says where the names are.
    header_reason : str or None
        Why :func:`detect_header` decided as it did, in a few words. None when the
        ``header`` argument of :func:`load_file` settled it, and for LIBSVM and
        Parquet files.
    target_index : int or None
        Position of the target in ``columns``, from 0. None for LIBSVM files.
    target_name : str or None
        Name of the target column. None for LIBSVM files.
    encoded : list of str
        Feature columns that were not numeric and were one-hot encoded, in the
        order of the table.
    """

    path: Path
    format: str
    n_rows: int
    columns: list = None
    header: bool = None
    header_reason: str = None
    target_index: int = None
    target_name: str = None
    encoded: list = field(default_factory=list)


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_present(text):
    return text.lower() not in _MISSING_MARKS


def _text_rows(rows):
    """The rows as lists of stripped strings, all as long as the longest."""
    if hasattr(rows, "to_numpy"):
        rows = rows.to_numpy(dtype=object).tolist()
    table = [[str(v).strip() for v in row] for row in rows]
    width = max((len(row) for row in table), default=0)
    return [row + [""] * (width - len(row)) for row in table]


def detect_header(rows):
    """Decide whether the first row of a table holds column names.

    :func:`load_file` calls it on the first 200 lines of a text file when its
    ``header`` argument is None.

    Parameters
    ----------
    rows : pandas.DataFrame or sequence of sequences
        The first rows of the table, the first line included, as read without a
        header. Cells are compared as text (``str(cell).strip()``).

    Returns
    -------
    has_header : bool
        True when the first row holds column names.
    reason : str
        Why, in a few words.

    Raises
    ------
    ValueError
        If ``rows`` is empty.

    See Also
    --------
    load_file : Read features and target from a file, detecting its header.

    Notes
    -----
    Empty cells and the usual marks of missing values (``?``, ``NA``, ``nan``,
    ``null``, ``none``) are ignored. The rules, in order:

    1. a column whose other cells are all numbers but whose first cell is not:
       a header;
    2. numeric columns whose first cells are numbers too: no header, unless the
       first row is ``0, 1, ..., k - 1`` or ``1, 2, ..., k`` (columns numbered, as
       in some UCI files);
    3. text only: a header when no first cell occurs again below it in its
       column.

    A single row is a header unless all its cells are numbers.

    Examples
    --------
    >>> from mondrianlearn.datasets import detect_header
    >>> detect_header([["x", "y"], ["1.5", "a"], ["2", "b"]])
    (True, 'text above numeric columns')
    >>> detect_header([["0.3", "a"], ["1.5", "b"], ["2", "a"]])
    (False, 'the first row is numeric like the rows below')
    >>> detect_header([["1", "2", "3"], ["0.5", "7", "1"], ["0.2", "4", "0"]])
    (True, 'the first row numbers the columns')
    >>> detect_header([["red", "yes"], ["blue", "no"], ["red", "no"]])
    (False, "the first row's values occur again below")
    """
    table = _text_rows(rows)
    if not table:
        raise ValueError("detect_header needs at least one row.")
    first, rest = table[0], table[1:]
    present = [_is_present(v) for v in first]
    if not rest:
        if all(_is_number(v) for v, p in zip(first, present) if p):
            return False, "a single numeric row"
        return True, "a single row with text"
    numeric_columns = []
    for j in range(len(first)):
        values = [row[j] for row in rest if _is_present(row[j])]
        numeric_columns.append(bool(values) and all(_is_number(v) for v in values))
    if any(num and p and not _is_number(v)
           for num, p, v in zip(numeric_columns, present, first)):
        return True, "text above numeric columns"
    if any(numeric_columns):
        if all(p and _is_number(v) for p, v in zip(present, first)):
            numbers = [float(v) for v in first]
            k = len(numbers)
            if numbers in (list(map(float, range(k))), list(map(float, range(1, k + 1)))):
                return True, "the first row numbers the columns"
        return False, "the first row is numeric like the rows below"
    repeated = any(p and v in {row[j] for row in rest}
                   for j, (p, v) in enumerate(zip(present, first)))
    if repeated:
        return False, "the first row's values occur again below"
    return True, "the first row's values do not occur below"


_SEPARATORS = ",;\t| "
"""Column separators that a text table may use, in the order they are preferred."""


def _separator(path, encoding):
    """The column separator of a text table: the one of :data:`_SEPARATORS` that
    Python's CSV sniffer finds in the first lines, or a comma. (pandas' own guess
    takes any character: a file of one column named "label" was split at its
    letters.)"""
    import bz2
    import csv
    import gzip
    import lzma

    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(
        path.suffix.lower(), open)
    if path.suffix.lower() in (".zip", ".zst", ".tar"):
        return None  # pandas opens these; its own guess of the separator
    with opener(path, "rt", encoding=encoding, newline="") as f:
        sample = f.read(1 << 16)
    try:
        return csv.Sniffer().sniff(sample, delimiters=_SEPARATORS).delimiter
    except csv.Error:  # no separator found: one column
        return ","


def _read_text(pd, path, **options):
    """``pandas.read_csv`` with the separator guessed (tabs for ``.tsv``), as UTF-8
    with or without a byte-order mark, or else as Latin-1."""
    import csv

    for encoding in ("utf-8-sig", "latin-1"):
        try:
            sep = "\t" if ".tsv" in path.name.lower() else _separator(path, encoding)
            return pd.read_csv(path, sep=sep, engine="python", skipinitialspace=True,
                               encoding=encoding, **options)
        except UnicodeDecodeError:
            continue
        except pd.errors.EmptyDataError as exc:
            raise DataFileError(f"{path} is empty.") from exc
        except (pd.errors.ParserError, csv.Error, ValueError, OSError) as exc:
            raise DataFileError(f"Could not read {path} as a table: {exc}") from exc
    raise DataFileError(f"Could not decode {path} (neither UTF-8 nor Latin-1).")


def _target_index(target, columns, hint=""):
    if target is None:
        return len(columns) - 1
    if str(target) in columns:
        return columns.index(str(target))
    if str(target).lstrip("-").isdigit() and -len(columns) <= int(target) < len(columns):
        return int(target) % len(columns)
    shown = columns if len(columns) <= _COLUMNS_SHOWN else columns[:_COLUMNS_SHOWN] + ["..."]
    raise DataFileError(f"Unknown target column {target!r}; the columns are {shown}{hint}.")


def _one_hot(pd, features):
    """Numeric and boolean columns as they are, the others one-hot encoded."""
    blocks, names, encoded = [], [], []
    for col in features.columns:
        values = features[col]
        if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
            blocks.append(values.to_numpy(dtype=np.float64)[:, None])
            names.append(col)
            continue
        text = values.astype(str).to_numpy()
        categories = np.unique(text)
        if len(categories) > _MAX_CATEGORIES:
            raise DataFileError(
                f"Column {col!r} is not numeric and has {len(categories)} distinct values "
                f"(at most {_MAX_CATEGORIES} are one-hot encoded); drop or encode it.")
        blocks.append((text[:, None] == categories[None, :]).astype(np.float64))
        names.extend(f"{col}={c}" for c in categories)
        encoded.append(col)
    X = np.hstack(blocks) if blocks else np.empty((len(features), 0))
    return X, names, encoded


def load_file(path, target=None, header=None, *, return_info=False):
    """Read features and target from a CSV, LIBSVM or Parquet file.

    Non-numeric feature columns are one-hot encoded (at most 64 distinct values
    each).

    Parameters
    ----------
    path : str or Path
        A delimited text file (``.csv``, ``.tsv``, ``.txt``, ``.data``, ...,
        optionally compressed, e.g. ``.csv.gz``), a LIBSVM file (``.svm``,
        ``.libsvm``, ``.svmlight``, optionally ``.gz``) or a ``.parquet`` file. Text
        files are read as UTF-8 (a byte-order mark allowed), or else as Latin-1;
        their separator is guessed (tabs for ``.tsv``) and spaces after it are
        skipped.
    target : str or int, default=None
        Target column: its name, or its index (negative indices count from the
        end); default: the last column. LIBSVM files carry their target and ignore
        it.
    header : bool, default=None
        Whether the first line of a text file holds the column names. None:
        decided by :func:`detect_header` from the first 200 lines. Without a header
        the columns are named ``"0"``, ``"1"``, .... Ignored for LIBSVM and Parquet
        files.
    return_info : bool, default=False
        Also return a :class:`DataFileInfo`: whether a header was detected and
        why, the target column's index and name, the one-hot encoded columns.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features) of float64
        The features (categorical columns one-hot encoded).
    y : ndarray of shape (n_samples,)
        The target column.
    feature_names : list of str
        One per column of ``X``; a one-hot encoded column ``c`` gives
        ``"c=<value>"`` for each of its values, in sorted order. LIBSVM features are
        named ``"x0"``, ``"x1"``, ....
    info : DataFileInfo
        Only when ``return_info`` is True.

    Raises
    ------
    DataFileError
        A missing, empty or unreadable file, fewer than two columns, an unknown
        target column, missing values in the target, or a non-numeric column with
        too many distinct values to one-hot encode.
    TypeError
        If ``header`` is neither None nor a bool.

    See Also
    --------
    detect_header : How a header row is recognised.

    Examples
    --------
    >>> from pathlib import Path
    >>> from tempfile import TemporaryDirectory
    >>> from mondrianlearn.datasets import load_file
    >>> with TemporaryDirectory() as folder:
    ...     path = Path(folder) / "weather.csv"
    ...     _ = path.write_text("temp,sky,rain\\n21.5,clear,0\\n14,cloudy,1\\n18,clear,0\\n")
    ...     X, y, names, info = load_file(path, return_info=True)
    >>> X
    array([[21.5,  1. ,  0. ],
           [14. ,  0. ,  1. ],
           [18. ,  1. ,  0. ]])
    >>> y
    array([0, 1, 0])
    >>> names
    ['temp', 'sky=clear', 'sky=cloudy']
    >>> info.header, info.header_reason, info.target_name, info.encoded
    (True, 'text above numeric columns', 'rain', ['sky'])
    """
    if header is not None and not isinstance(header, (bool, np.bool_)):
        raise TypeError(f"header must be None, True or False, got {header!r}.")
    path = Path(path)
    if not path.exists():
        raise DataFileError(f"No such file: {path}")
    name = path.name.lower()
    if name.endswith(_LIBSVM_SUFFIXES):
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(str(path))
        X = X.toarray()
        info = DataFileInfo(path=path, format="libsvm", n_rows=X.shape[0])
        names = [f"x{j}" for j in range(X.shape[1])]
        return (X, y, names, info) if return_info else (X, y, names)
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise DataFileError("Reading CSV or Parquet files needs pandas: "
                            "pip install 'mondrian-learn[pandas]'") from exc
    reason = None
    if name.endswith(".parquet"):
        try:
            frame = pd.read_parquet(path)
        except ImportError as exc:
            raise DataFileError("Reading Parquet needs pyarrow: pip install pyarrow") from exc
        kind, header = "parquet", None
    else:
        kind = "csv"
        if path.stat().st_size == 0:
            raise DataFileError(f"{path} is empty.")
        if header is None:
            probe = _read_text(pd, path, header=None, dtype=str, keep_default_na=False,
                               nrows=_HEADER_PROBE_ROWS)
            header, reason = detect_header(probe)
        header = bool(header)
        frame = _read_text(pd, path, header=0 if header else None)
    if frame.shape[1] < 2:
        raise DataFileError(f"{path} has {frame.shape[1]} column(s); need features and a "
                            f"target.")
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    index = _target_index(target, columns,
                          " (no header: give an index)" if header is False else "")
    target_name = columns[index]
    missing = int(pd.isna(frame[target_name]).sum())
    if missing:
        raise DataFileError(f"The target column {target_name!r} has {missing} missing "
                            f"value(s); drop those rows first.")
    y = frame[target_name].to_numpy()
    X, names, encoded = _one_hot(pd, frame.drop(columns=[target_name]))
    info = DataFileInfo(path=path, format=kind, n_rows=frame.shape[0], columns=columns,
                        header=header, header_reason=reason, target_index=index,
                        target_name=target_name, encoded=encoded)
    return (X, y, names, info) if return_info else (X, y, names)
