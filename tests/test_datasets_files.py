"""Reading features and a target from a file: ``load_file`` and ``detect_header``."""

import gzip

import numpy as np
import pytest

from mondrianlearn.datasets import DataFileError, DataFileInfo, detect_header, load_file

try:
    import pandas  # noqa: F401
except ImportError:
    HAVE_PANDAS = False
else:
    HAVE_PANDAS = True

needs_pandas = pytest.mark.skipif(not HAVE_PANDAS, reason="reading CSV files needs pandas "
                                                          "(the pandas extra)")


def _write(path, text, encoding="utf-8"):
    path.write_bytes(text.encode(encoding))
    return path


def _numeric_lines(X, y):
    return "".join(",".join(repr(float(v)) for v in row) + f",{t}\n" for row, t in zip(X, y))


@pytest.fixture
def numeric():
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(50, 3))
    y = (X[:, 0] > 0.5).astype(int)
    return X, y


# detect_header ---------------------------------------------------------------------

@pytest.mark.parametrize("rows, expected, reason", [
    ([["a", "b", "label"], ["1", "2", "x"], ["3", "4", "y"]], True,
     "text above numeric columns"),
    ([["0.5", "2", "x"], ["1", "2", "y"], ["3", "4", "x"]], False,
     "the first row is numeric like the rows below"),
    ([["0", "1", "2"], ["1.5", "2", "1"], ["3", "4", "0"]], True,
     "the first row numbers the columns"),
    ([["1", "2", "3"], ["1.5", "2", "1"], ["3", "4", "0"]], True,
     "the first row numbers the columns"),
    ([["", "price", "kind"], ["0", "2.5", "x"], ["1", "4", "y"]], True,
     "text above numeric columns"),
    ([["?", "2", "x"], ["1", "2", "x"], ["3", "4", "y"]], False,
     "the first row is numeric like the rows below"),
    ([["NA", "2", "x"], ["1", "?", "x"], ["3", "", "y"]], False,
     "the first row is numeric like the rows below"),
    ([["red", "small", "yes"], ["blue", "large", "no"], ["red", "small", "no"]], False,
     "the first row's values occur again below"),
    ([["color", "size", "label"], ["blue", "large", "no"], ["red", "small", "no"]], True,
     "the first row's values do not occur below"),
    ([["1.5", "2", "0"]], False, "a single numeric row"),
    ([["a", "b", "label"]], True, "a single row with text"),
])
@pytest.mark.parametrize("as_frame", [False, True])
def test_detect_header(rows, expected, reason, as_frame):
    if as_frame:
        pd = pytest.importorskip("pandas", reason="pandas is not installed")
    table = pd.DataFrame(rows) if as_frame else rows
    assert detect_header(table) == (expected, reason)


def test_detect_header_compares_stripped_text_and_pads_short_rows():
    assert detect_header([[" x ", "y"], [" 1", "a "], ["2"]]) == (
        True, "text above numeric columns")
    assert detect_header(np.array([[0.5, 2.0], [3.0, 4.0]])) == (
        False, "the first row is numeric like the rows below")


def test_detect_header_needs_a_row():
    with pytest.raises(ValueError, match="at least one row"):
        detect_header([])


# load_file: headers ----------------------------------------------------------------

@needs_pandas
def test_headerless_file_keeps_its_first_row(tmp_path, numeric):
    X, y = numeric
    path = _write(tmp_path / "plain.csv", _numeric_lines(X, y))
    X_read, y_read, names, info = load_file(path, return_info=True)
    np.testing.assert_array_equal(X_read, X)
    np.testing.assert_array_equal(y_read, y)
    assert names == ["0", "1", "2"]
    assert info == DataFileInfo(path=path, format="csv", n_rows=50,
                                columns=["0", "1", "2", "3"], header=False,
                                header_reason="the first row is numeric like the rows below",
                                target_index=3, target_name="3", encoded=[])


@needs_pandas
def test_headed_file_with_a_text_column(tmp_path):
    path = _write(tmp_path / "weather.csv",
                  "temp,sky,windy,rain\n21.5,clear,True,no\n14,cloudy,False,yes\n"
                  "18,rain,False,yes\n12,clear,True,no\n")
    X, y, names, info = load_file(path, return_info=True)
    assert names == ["temp", "sky=clear", "sky=cloudy", "sky=rain", "windy"]
    np.testing.assert_array_equal(X, [[21.5, 1, 0, 0, 1], [14, 0, 1, 0, 0],
                                      [18, 0, 0, 1, 0], [12, 1, 0, 0, 1]])
    assert list(y) == ["no", "yes", "yes", "no"]
    assert (info.header, info.header_reason) == (True, "text above numeric columns")
    assert (info.target_index, info.target_name, info.encoded) == (3, "rain", ["sky"])
    assert info.columns == ["temp", "sky", "windy", "rain"] and info.n_rows == 4


@needs_pandas
def test_header_forced(tmp_path, numeric):
    X, y = numeric
    # A header that numbers the columns is detected; forced off, it is a row of data.
    path = _write(tmp_path / "numbered.csv", "1,2,3,4\n" + _numeric_lines(X, y))
    _, _, names, info = load_file(path, return_info=True)
    assert (info.header, info.header_reason) == (True, "the first row numbers the columns")
    assert names == ["1", "2", "3"] and info.n_rows == 50
    X_read, y_read, _, info = load_file(path, header=False, return_info=True)
    assert (info.header, info.header_reason, info.n_rows) == (False, None, 51)
    np.testing.assert_array_equal(X_read[0], [1, 2, 3])
    np.testing.assert_array_equal(X_read[1:], X)
    assert y_read[0] == 4

    plain = _write(tmp_path / "plain.csv", _numeric_lines(X, y))
    X_read, _, names, info = load_file(plain, header=True, return_info=True)
    assert (info.header, info.header_reason, info.n_rows) == (True, None, 49)
    assert names == [repr(float(v)) for v in X[0]]
    np.testing.assert_array_equal(X_read, X[1:])
    assert load_file(plain, header=np.bool_(False))[0].shape == (50, 3)


@pytest.mark.parametrize("header", [0, 1, "infer", "yes"])
def test_header_must_be_none_or_a_bool(tmp_path, numeric, header):
    path = _write(tmp_path / "plain.csv", _numeric_lines(*numeric))
    with pytest.raises(TypeError, match="header must be None, True or False"):
        load_file(path, header=header)


@needs_pandas
def test_three_values_without_return_info(tmp_path, numeric):
    path = _write(tmp_path / "plain.csv", _numeric_lines(*numeric))
    result = load_file(path)
    assert len(result) == 3 and result[2] == ["0", "1", "2"]


# load_file: target -----------------------------------------------------------------

@needs_pandas
@pytest.mark.parametrize("target, index", [(None, 3), ("b", 1), (0, 0), ("2", 2), (-1, 3),
                                           ("-4", 0)])
def test_target_by_name_or_index(tmp_path, target, index):
    path = _write(tmp_path / "t.csv", "a,b,c,d\n" + "".join(
        f"{i},{2 * i},{3 * i},{4 * i}\n" for i in range(10)))
    X, y, names, info = load_file(path, target=target, return_info=True)
    columns = ["a", "b", "c", "d"]
    assert info.target_index == index and info.target_name == columns[index]
    np.testing.assert_array_equal(y, np.arange(10) * (index + 1))
    assert names == [c for c in columns if c != columns[index]]
    assert X.shape == (10, 3)


@needs_pandas
def test_unknown_target(tmp_path, numeric):
    plain = _write(tmp_path / "plain.csv", _numeric_lines(*numeric))
    with pytest.raises(DataFileError, match=r"the columns are \['0', '1', '2', '3'\] "
                                            r"\(no header: give an index\)"):
        load_file(plain, target="label")
    with pytest.raises(DataFileError, match="Unknown target column 4"):
        load_file(plain, target=4)
    wide = _write(tmp_path / "wide.csv", ",".join(f"c{j}" for j in range(20)) + "\n"
                  + ",".join("1" for _ in range(20)) + "\n")
    with pytest.raises(DataFileError, match=r"'c10', 'c11', '\.\.\.'\]\.$"):
        load_file(wide, target="nope")


@needs_pandas
def test_missing_target_values(tmp_path):
    path = _write(tmp_path / "holes.csv",
                  "x,y\n" + "".join(f"{i},{'' if i in (3, 7) else i % 2}\n" for i in range(20)))
    with pytest.raises(DataFileError, match="'y' has 2 missing value"):
        load_file(path)


@needs_pandas
def test_too_many_categories(tmp_path):
    path = _write(tmp_path / "many.csv",
                  "x,word,y\n" + "".join(f"{i},w{i},{i % 2}\n" for i in range(100)))
    with pytest.raises(DataFileError, match="'word' is not numeric and has 100 distinct"):
        load_file(path)


# load_file: encodings and formats -------------------------------------------------

@needs_pandas
def test_byte_order_mark_and_spaces_after_commas(tmp_path):
    path = _write(tmp_path / "bom.csv", "u, v, label\n0.5, 1, a\n0.25, 2, b\n", "utf-8-sig")
    X, y, names, info = load_file(path, return_info=True)
    assert info.columns == ["u", "v", "label"] and names == ["u", "v"]
    np.testing.assert_array_equal(X, [[0.5, 1], [0.25, 2]])
    assert list(y) == ["a", "b"]


@needs_pandas
def test_latin_1(tmp_path):
    path = _write(tmp_path / "latin.csv",
                  "prix,saison,label\n1.5,été,0\n2,hiver,1\n3,été,1\n", "latin-1")
    X, _, names, info = load_file(path, return_info=True)
    assert names == ["prix", "saison=hiver", "saison=été"]
    assert info.encoded == ["saison"]
    np.testing.assert_array_equal(X, [[1.5, 0, 1], [2, 1, 0], [3, 0, 1]])


@needs_pandas
def test_tab_separated_and_gzipped(tmp_path, numeric):
    X, y = numeric
    text = "a\tb\tc\tlabel\n" + _numeric_lines(X, y).replace(",", "\t")
    tsv = _write(tmp_path / "t.tsv", text)
    gz = tmp_path / "t.csv.gz"
    with gzip.open(gz, "wt") as f:
        f.write("a,b,c,label\n" + _numeric_lines(X, y))
    for path in (tsv, gz):
        X_read, y_read, names, info = load_file(path, return_info=True)
        np.testing.assert_array_equal(X_read, X)
        np.testing.assert_array_equal(y_read, y)
        assert names == ["a", "b", "c"] and info.header is True


@needs_pandas
@pytest.mark.parametrize("name", ["one.csv", "one.csv.gz"])
def test_a_file_of_one_column_is_not_split_at_its_letters(tmp_path, name):
    """The separator is one of ``,;<tab>| `` (pandas' own guess took any character:
    the column "label" was read as three columns split at its letters)."""
    text = "label\n" + "".join(f"{i % 2}\n" for i in range(20))
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        _write(path, text)
    with pytest.raises(DataFileError, match="has 1 column"):
        load_file(path)


@needs_pandas
@pytest.mark.parametrize("sep", [";", "|", " "])
def test_other_separators(tmp_path, numeric, sep):
    X, y = numeric
    path = _write(tmp_path / "t.csv", sep.join("abc") + sep + "label\n"
                  + _numeric_lines(X, y).replace(",", sep))
    X_read, y_read, names, _ = load_file(path, return_info=True)
    np.testing.assert_array_equal(X_read, X)
    np.testing.assert_array_equal(y_read, y)
    assert names == ["a", "b", "c"]


@needs_pandas
@pytest.mark.parametrize("content, message", [
    (b"", "is empty"),
    (b"\n\n", "is empty"),  # blank lines: no column
    (b"a,b\n1,2\n\x81\xff\x00,\"x\n", "Could not read .* as a table"),
])
def test_unreadable_files(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(DataFileError, match=message):
        load_file(path)


def test_missing_file(tmp_path):
    with pytest.raises(DataFileError, match="No such file"):
        load_file(tmp_path / "absent.csv")


def test_parquet_ignores_header(tmp_path, numeric):
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    X, y = numeric
    path = tmp_path / "t.parquet"
    pd.DataFrame({"a": X[:, 0], "kind": np.where(y, "u", "v"), "label": y}).to_parquet(path)
    for header in (None, True, False):
        X_read, y_read, names, info = load_file(path, target="kind", header=header,
                                                return_info=True)
        assert names == ["a", "label"] and list(y_read) == list(np.where(y, "u", "v"))
        assert (info.format, info.header, info.header_reason) == ("parquet", None, None)
        assert (info.target_index, info.target_name) == (1, "kind")
    pd.DataFrame({"label": y}).to_parquet(path)
    with pytest.raises(DataFileError, match=r"has 1 column\(s\); need features and a target"):
        load_file(path)


def test_libsvm(tmp_path, numeric):
    from sklearn.datasets import dump_svmlight_file

    X, y = numeric
    path = tmp_path / "t.svm"
    dump_svmlight_file(X, y, str(path))
    X_read, y_read, names, info = load_file(path, target="ignored", header=True,
                                            return_info=True)
    np.testing.assert_allclose(X_read, X)
    np.testing.assert_array_equal(y_read, y)
    assert names == ["x0", "x1", "x2"]
    assert info == DataFileInfo(path=path, format="libsvm", n_rows=50)


@pytest.mark.skipif(HAVE_PANDAS, reason="pandas is installed")
def test_without_pandas_a_csv_is_a_clear_error(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n3,4\n")
    with pytest.raises(DataFileError, match=r"needs pandas: pip install"):
        load_file(path)
