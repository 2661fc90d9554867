"""Class labels of every classifier: one kind per model, and every label of y a class.

Labels are all strings or all numbers, as in scikit-learn: a mix (within one call,
or against the classes learned or declared before) is a ``ValueError`` that leaves
the model as it was, never numbers silently turned into strings. A label that
appears only on rows of weight zero is a class (scikit-learn's forests keep it in
``classes_``), whether it comes through ``fit`` or ``partial_fit``.
"""

import pickle

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from mondrianlearn import (
    AMFClassifier,
    MondrianBoostingClassifier,
    MondrianForestClassifier,
    MondrianKernelClassifier,
    MondrianTreeClassifier,
)

CLASSIFIERS = [
    (MondrianForestClassifier, {"n_estimators": 3}),
    (MondrianForestClassifier, {"n_estimators": 3, "bootstrap": True}),
    (MondrianTreeClassifier, {}),
    (AMFClassifier, {"n_estimators": 3}),
    (MondrianKernelClassifier, {"n_trees": 5, "lifetime": 2.0}),
    (MondrianBoostingClassifier, {"n_estimators": 3}),
]
IDS = [f"{cls.__name__}{'-bootstrap' if p.get('bootstrap') else ''}" for cls, p in CLASSIFIERS]
MIX = "Mix of label input types"


def make(cls, params):
    return cls(random_state=0, **params)


def data(n=40, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 2))
    numbers = (X[:, 0] > 0.5).astype(int)
    strings = np.where(numbers == 1, "b", "a")
    return X, numbers, strings


def outputs(model, X):
    if hasattr(model, "predict_proba") and getattr(model, "loss", "log_loss") == "log_loss":
        return model.predict_proba(X)
    return model.decision_function(X)


# ------------------------------------------------------------------ label kinds
@pytest.mark.parametrize("cls, params", CLASSIFIERS, ids=IDS)
@pytest.mark.parametrize("first_kind", ["numbers", "strings"])
@pytest.mark.parametrize("first_call", ["fit", "partial_fit"])
@pytest.mark.parametrize("rows", [40, 1], ids=["batch", "one-row"])
def test_labels_of_the_other_kind_are_refused(cls, params, first_kind, first_call, rows):
    X, numbers, strings = data()
    first, other = (numbers, strings) if first_kind == "numbers" else (strings, numbers)
    model = make(cls, params)
    getattr(model, first_call)(X, first)
    classes = model.classes_.copy()
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=MIX) as error:
        model.partial_fit(X[:rows], other[:rows])
    assert "classes learned so far" in str(error.value)
    assert pickle.dumps(model) == before  # refused before anything changed
    np.testing.assert_array_equal(model.classes_, classes)
    assert model.classes_.dtype.kind == ("i" if first_kind == "numbers" else "U")
    # the model goes on learning labels of its own kind
    model.partial_fit(X[:rows], first[:rows])
    np.testing.assert_array_equal(model.classes_, classes)


@pytest.mark.parametrize("cls, params", CLASSIFIERS, ids=IDS)
def test_declared_number_classes_refuse_string_labels(cls, params):
    X, numbers, strings = data()
    model = make(cls, params).partial_fit(X[:20], numbers[:20], classes=[0, 1])
    before = pickle.dumps(model)
    for y in (strings[20:], numbers[20:].astype(str)):  # "0" is not 0
        with pytest.raises(ValueError, match=MIX):
            model.partial_fit(X[20:], y)
        assert pickle.dumps(model) == before
    with pytest.raises(ValueError, match=MIX):  # declared again, as strings
        model.partial_fit(X[20:], numbers[20:], classes=["0", "1"])
    assert pickle.dumps(model) == before
    # on a first call too: the declared classes and the labels disagree in kind
    fresh = make(cls, params)
    with pytest.raises(ValueError, match=f"{MIX}.*declared `classes`"):
        fresh.partial_fit(X, numbers.astype(str), classes=[0, 1])
    assert not hasattr(fresh, "classes_") and not hasattr(fresh, "n_features_in_")


@pytest.mark.parametrize("cls, params", CLASSIFIERS, ids=IDS)
@pytest.mark.parametrize("container", ["list", "object array"])
def test_a_mix_within_one_call_is_refused(cls, params, container):
    X, numbers, _ = data()
    y = [1 if label else "a" for label in numbers]  # numpy would make "1" of 1
    y = y if container == "list" else np.array(y, dtype=object)
    for method in ("fit", "partial_fit"):
        model = make(cls, params)
        with pytest.raises(ValueError, match=f"{MIX}.*'a' and 1"):
            getattr(model, method)(X, y)
        assert not hasattr(model, "classes_")
    with pytest.raises(ValueError, match=MIX):
        make(cls, params).partial_fit(X, numbers, classes=[0, "a"])


@pytest.mark.parametrize("cls, params", CLASSIFIERS, ids=IDS)
def test_a_zero_weight_row_of_the_other_kind_is_refused(cls, params):
    X, numbers, strings = data()
    model = make(cls, params).fit(X, numbers)
    before = pickle.dumps(model)
    weights = np.zeros(len(numbers))
    with pytest.raises(ValueError, match=MIX):
        model.partial_fit(X, strings, sample_weight=weights)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("cls, params", CLASSIFIERS, ids=IDS)
def test_labels_of_one_kind_keep_working(cls, params):
    X, numbers, strings = data()
    # numbers: ints, floats and booleans are one kind, as in scikit-learn
    model = make(cls, params).fit(X, numbers)
    model.partial_fit(X[:5], numbers[:5].astype(float))
    model.partial_fit(X[:1], np.array([True]))
    np.testing.assert_array_equal(model.classes_, [0, 1])
    model.partial_fit(X[:3], np.array([2, 2, 0]))
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    assert set(model.predict(X).tolist()) <= {0, 1, 2}
    # strings: object arrays of str, pandas-like lists, new labels merged in order
    model = make(cls, params).fit(X, strings.astype(object))
    model.partial_fit(X[:3], ["c", "a", "c"])
    np.testing.assert_array_equal(model.classes_, ["a", "b", "c"])
    assert set(model.predict(X).tolist()) <= {"a", "b", "c"}


@pytest.mark.parametrize("cls", [MondrianForestClassifier, AMFClassifier])
def test_a_late_label_renames_the_nodes_labels_not_the_spare_rows(cls):
    # A new label that sorts first renames every known label key; the spare rows past
    # the nodes hold no node and stay as they are (pages a big tree never wrote).
    X, _, strings = data(200)
    model = cls(n_estimators=2, random_state=0).partial_fit(X, strings)
    spare = [(t.arrays.label, t.arrays.label.copy()) for t in model.trees_]
    model.partial_fit(X[:2], ["0", "0"])
    assert model.classes_.tolist() == ["0", "a", "b"]
    for tree, (before, copy) in zip(model.trees_, spare):
        label = tree.arrays.label
        assert label.shape[0] > tree.n_nodes
        if label is before:  # the tree did not grow: its spare rows were not written
            np.testing.assert_array_equal(label[tree.n_nodes:], copy[tree.n_nodes:])
        nodes = label[: tree.n_nodes]
        assert ((nodes >= -1) & (nodes < 3)).all() and (nodes >= 1).any()
    assert set(model.predict(X).tolist()) <= {"0", "a", "b"}


# ------------------------------------------------------------ zero-weight labels
@pytest.mark.parametrize("cls, params", CLASSIFIERS, ids=IDS)
def test_a_label_seen_only_with_weight_zero_is_a_class(cls, params):
    X, numbers, _ = data(60)
    y = numbers.copy()
    y[[3, 17, 40]] = 2  # label 2 only on rows of weight zero
    w = np.ones(len(y))
    w[y == 2] = 0.0
    expected = RandomForestClassifier(n_estimators=2, random_state=0).fit(
        X, y, sample_weight=w).classes_
    np.testing.assert_array_equal(expected, [0, 1, 2])  # scikit-learn's convention

    fitted = make(cls, params).fit(X, y, sample_weight=w)
    online = make(cls, params).partial_fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(fitted.classes_, expected)
    np.testing.assert_array_equal(online.classes_, expected)
    # fit is the first partial_fit: the same model, with the same outputs
    probe = np.random.RandomState(1).uniform(-0.5, 1.5, size=(30, 2))
    np.testing.assert_array_equal(outputs(fitted, probe), outputs(online, probe))
    assert outputs(fitted, probe).shape[1] == 3

    # the label may arrive later, in a batch of its own, with weight zero too
    later = make(cls, params).partial_fit(X[:30], numbers[:30])
    np.testing.assert_array_equal(later.classes_, [0, 1])
    later.partial_fit(X[30:], y[30:], sample_weight=w[30:])
    np.testing.assert_array_equal(later.classes_, [0, 1, 2])


@pytest.mark.parametrize("cls, params", CLASSIFIERS, ids=IDS)
def test_declared_classes_refuse_an_undeclared_label_of_weight_zero(cls, params):
    # as scikit-learn's SGDClassifier.partial_fit: every label of y must be declared
    X, numbers, _ = data()
    model = make(cls, params).partial_fit(X[:20], numbers[:20], classes=[0, 1])
    before = pickle.dumps(model)
    y = numbers[20:].copy()
    y[0] = 2
    w = np.ones(len(y))
    w[0] = 0.0
    with pytest.raises(ValueError, match=r"Labels \[2\] are not in `classes`"):
        model.partial_fit(X[20:], y, sample_weight=w)
    assert pickle.dumps(model) == before


# ------------------------------------------------------------------ river
RIVER = ["MondrianForestClassifier", "AMFClassifier", "MondrianKernelClassifier"]


def _river_stream(labels, n=30, seed=0):
    rng = np.random.RandomState(seed)
    for _ in range(n):
        x = {"a": float(rng.uniform()), "b": float(rng.uniform())}
        yield x, labels[int(x["a"] > 0.5)]


@pytest.mark.parametrize("name", RIVER)
@pytest.mark.parametrize("labels", [(0, 1), ("no", "yes"), (False, True)], ids=repr)
def test_river_adapters_give_back_the_labels_they_learned(name, labels):
    pytest.importorskip("river", reason="river is an optional dependency")
    from mondrianlearn import river as mlr
    model = getattr(mlr, name)(seed=0, **next(getattr(mlr, name)._unit_test_params()))
    for x, label in _river_stream(labels):
        model.learn_one(x, label)
    x = {"a": 0.9, "b": 0.5}
    prediction = model.predict_one(x)
    assert prediction in labels and type(prediction) is type(labels[0])
    proba = model.predict_proba_one(x)
    assert set(proba) == set(labels)
    assert all(type(k) is type(labels[0]) for k in proba)


@pytest.mark.parametrize("name", RIVER)
def test_river_adapters_refuse_a_label_of_the_other_kind(name):
    """A string label after number labels is refused with the scikit-learn message
    (never learned as the string "1" of the number 1); the adapter is unchanged and
    goes on predicting its own labels."""
    pytest.importorskip("river", reason="river is an optional dependency")
    from mondrianlearn import river as mlr
    model = getattr(mlr, name)(seed=0, **next(getattr(mlr, name)._unit_test_params()))
    for x, label in _river_stream((0, 1)):
        model.learn_one(x, label)
    x = {"a": 0.5, "b": 0.5}  # inside the range learned: nothing to widen
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match=MIX):
        model.learn_one(x, "yes")
    assert pickle.dumps(model) == before
    assert model.predict_one(x) in (0, 1)
    assert set(model.predict_proba_one(x)) == {0, 1}
