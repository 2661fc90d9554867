"""Models saved by earlier versions: every saved state format loads, predicts and
keeps learning, and a change of the fitted state's layout needs a new format.

``tests/data/state_format_<N>/`` holds one pickled model per estimator, written by
``tests/data/make_state_pickles.py`` when format N was current. The newest format's
models must have exactly the layout (attributes, array dtypes and dimensions, tree
fields) of models fitted by the code under test: a layout change without a bump of
``STATE_FORMAT`` (and new pickles) fails here instead of misreading users' models.
"""

import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

from mondrianlearn.utils.persistence import STATE_FORMAT, IncompatibleModelError

DATA = Path(__file__).resolve().parent / "data"
sys.path.insert(0, str(DATA))

from make_state_pickles import data, estimators, fitted  # noqa: E402

pytestmark = pytest.mark.skipif(
    int(np.__version__.split(".")[0]) < 2,
    reason="the saved pickles were written with numpy 2 (numpy._core module paths)")

SAVED = sorted((int(folder.name.rsplit("_", 1)[1]), path)
               for folder in DATA.glob("state_format_*") for path in folder.glob("*.pkl"))


def layout(value, depth=0):
    """What the fitted state looks like, without its values: attribute names, array
    dtypes and dimensions, named tuples' fields, the type of everything else; one
    element of a list or tuple stands for all (their lengths vary with the data)."""
    if depth > 6:
        return type(value).__name__
    if isinstance(value, np.ndarray):
        if value.dtype.names:
            return ("ndarray", value.dtype.descr, value.ndim)
        return ("ndarray", value.dtype.str, value.ndim)
    if isinstance(value, dict):
        return {str(k): layout(v, depth + 1) for k, v in value.items()
                if not (isinstance(k, str) and k.startswith("_mondrianlearn_"))}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__,
                {f: layout(getattr(value, f), depth + 1) for f in value._fields})
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, layout(value[0], depth + 1) if value else None)
    if isinstance(value, (bool, int, float, str, bytes, type(None), np.generic)):
        return "scalar"
    if hasattr(value, "__getstate__") and hasattr(value, "fit"):  # a nested estimator
        return (type(value).__name__, layout(value.__getstate__(), depth + 1))
    if hasattr(value, "__dict__"):
        return (type(value).__name__, layout(vars(value), depth + 1))
    return type(value).__name__


def _differences(old, new, where="state"):
    if isinstance(old, dict) and isinstance(new, dict):
        out = [f"{where}.{k}: only in the saved model" for k in old.keys() - new.keys()]
        out += [f"{where}.{k}: only in a model fitted now" for k in new.keys() - old.keys()]
        for k in sorted(old.keys() & new.keys()):
            out += _differences(old[k], new[k], f"{where}.{k}")
        return out
    if isinstance(old, tuple) and isinstance(new, tuple) and len(old) == len(new):
        return [d for i, (a, b) in enumerate(zip(old, new))
                for d in _differences(a, b, f"{where}[{i}]")]
    return [] if old == new else [f"{where}: saved {old!r}, now {new!r}"]


def _load(path):
    with open(path, "rb") as f:
        return pickle.load(f)


def test_the_current_format_has_saved_models():
    folder = DATA / f"state_format_{STATE_FORMAT}"
    names = sorted(p.stem for p in folder.glob("*.pkl"))
    assert names == sorted(estimators()), (
        f"STATE_FORMAT is {STATE_FORMAT}: run python tests/data/make_state_pickles.py")


@pytest.mark.parametrize("fmt, path", [s for s in SAVED if s[0] == STATE_FORMAT],
                         ids=lambda v: getattr(v, "stem", str(v)))
def test_layout_of_the_current_format_is_that_of_a_model_fitted_now(fmt, path):
    saved = _load(path)
    now = fitted(path.stem)
    problems = _differences(layout(saved.__getstate__()), layout(now.__getstate__()))
    assert not problems, (
        "The fitted state's layout changed without a new state format: bump "
        "STATE_FORMAT in mondrianlearn/utils/persistence.py (and the estimator's "
        "_oldest_state_format if old models cannot be read), then run "
        "python tests/data/make_state_pickles.py.\n" + "\n".join(problems))


@pytest.mark.parametrize("fmt, path", SAVED, ids=lambda v: getattr(v, "stem", str(v)))
def test_saved_models_load_predict_and_keep_learning(fmt, path):
    try:
        model = _load(path)
    except IncompatibleModelError:
        # Refused on purpose: this estimator's layout changed after that format.
        cls = type(fitted(path.stem))
        assert fmt < cls._oldest_state_format
        return
    _, task = estimators()[path.stem]
    X, y = data(task, n=40, seed=1)
    before = (model.transform(X) if task == "t" else
              model.predict_proba(X) if task == "c" else model.predict(X))
    before = before.toarray() if hasattr(before, "toarray") else np.asarray(before)
    assert np.all(np.isfinite(before))
    if hasattr(model, "partial_fit"):
        model.partial_fit(X, y)
        after = model.transform(X) if task == "t" else model.predict(X)
        assert after.shape[0] == len(X)


def test_a_kernel_classifier_saved_before_sweep_step_takes_its_default():
    """Parameters added later (``sweep_step``) take their default in models saved
    before them: ``get_params`` and ``clone`` work, and the clone fits."""
    from sklearn.base import clone

    paths = [p for _, p in SAVED if p.stem == "MondrianKernelClassifier"]
    assert paths
    for path in paths:
        model = _load(path)
        assert model.get_params()["sweep_step"] == 0.05
        X, y = data("c", n=60, seed=2)
        assert clone(model).fit(X, y).predict(X).shape == (60,)


@pytest.mark.parametrize("name", ["MondrianKernelClassifier", "MondrianKernelRegressor"])
def test_a_kernel_predictor_saved_before_feature_scale_keeps_raw_units(name):
    """Models saved before ``feature_scale`` were fitted in raw units: that is the
    value they take, so ``get_params`` describes them and a clone refits the same way.
    (The pickles of formats up to 6 were written before the kernel models had it.)"""
    paths = [p for fmt, p in SAVED if p.stem == name and fmt <= 6]
    assert paths
    for path in paths:
        model = _load(path)
        assert model.get_params()["feature_scale"] is None
        units = model.__dict__.get("_units")  # none before origins were kept
        assert units is None or np.all(units[0] == 1.0)
