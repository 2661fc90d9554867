"""The integrations' protocols (``utils.protocols``): every estimator provides them,
capability flags say what merges, and no module probes another for private methods."""

import ast
import pickle
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import ClassifierMixin
from sklearn.datasets import make_classification, make_regression

import mondrianlearn
from mondrianlearn.forest import merge_forests
from mondrianlearn.forest._merge import MERGEABLE_FORESTS, is_mergeable
from mondrianlearn.utils.protocols import (
    FittedCheck,
    MergeableForest,
    RiverBacking,
    ShardableForest,
)

SRC = Path(mondrianlearn.__file__).resolve().parent



def _public_classes():
    """The package's public estimator classes; those of an optional extra that is not
    installed (``DaskShardedForest`` without dask) are left out."""
    found = {}
    for name in mondrianlearn.__all__:
        try:
            value = getattr(mondrianlearn, name)
        except ImportError:
            continue
        if isinstance(value, type) and hasattr(value, "fit"):
            found[name] = value
    return found


ESTIMATORS = _public_classes()

LEARNERS = [name for name in ESTIMATORS if name != "MondrianKernel"
            and name != "DaskShardedForest"]


def is_classifier(cls):
    return issubclass(cls, ClassifierMixin)


def _data(cls):
    if is_classifier(cls):
        X, y = make_classification(120, 4, n_informative=3, n_redundant=1, random_state=0)
    else:
        X, y = make_regression(120, 4, random_state=0)
    return np.ascontiguousarray(X), y


def _small(cls):
    names = cls._get_param_names()
    params = {"random_state": 0}
    for key in ("n_estimators", "n_trees"):
        if key in names:
            params[key] = 3
    return cls(**params)


def test_the_estimators_are_registered():
    assert len(LEARNERS) == 9  # every classifier and regressor of the library


@pytest.mark.parametrize("name", LEARNERS)
def test_every_learner_offers_the_river_protocol(name):
    cls = ESTIMATORS[name]
    X, y = _data(cls)
    model = _small(cls)
    assert isinstance(model, RiverBacking) and isinstance(model, FittedCheck)
    assert not model.__sklearn_is_fitted__()
    model.partial_fit(X[:60], y[:60])
    assert model.__sklearn_is_fitted__()
    reference = pickle.loads(pickle.dumps(model))
    # The checked-rows entry points learn and predict as the public methods do.
    model._partial_fit_validated(X[60:61], list(y[60:61]))
    reference.partial_fit(X[60:61], y[60:61])
    if is_classifier(cls):
        got, expected = model._predict_proba_validated(X), reference.predict_proba(X)
    else:
        got, expected = model._predict_validated(X), reference.predict(X)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", LEARNERS)
def test_mergeable_is_declared_exactly_for_the_listed_forests(name):
    cls = ESTIMATORS[name]
    assert is_mergeable(cls) == (name in MERGEABLE_FORESTS)
    assert isinstance(_small(cls), ShardableForest)
    if is_mergeable(cls):
        assert isinstance(_small(cls), MergeableForest)


def test_merge_and_shard_ask_the_flag_not_the_class_name():
    from sklearn.ensemble import RandomForestClassifier

    from mondrianlearn import MondrianForestClassifier

    X, y = _data(MondrianForestClassifier)
    assert not is_mergeable(RandomForestClassifier) and not is_mergeable(object())
    with pytest.raises(TypeError, match="independent trees"):
        merge_forests([RandomForestClassifier(2, random_state=0).fit(X, y)])

    class Dependent(MondrianForestClassifier):
        _mergeable = False

    with pytest.raises(TypeError, match="independent trees .*got Dependent"):
        merge_forests([Dependent(2, random_state=0).fit(X, y)])


def test_boosting_is_a_sibling_of_the_forest_classifier():
    from mondrianlearn import MondrianBoostingClassifier, MondrianForestClassifier
    from mondrianlearn.forest._base import BaseMondrianForestClassifier

    boost = MondrianBoostingClassifier(3, random_state=0)
    assert isinstance(boost, BaseMondrianForestClassifier)
    assert not isinstance(boost, MondrianForestClassifier)
    # nothing stubbed: parameters of the forest it does not have are absent
    for name in ("max_depth", "max_nodes", "bootstrap", "feature_scale"):
        assert not hasattr(boost, name), name
    X, y = _data(MondrianBoostingClassifier)
    boost.fit(X, y)
    assert boost.feature_scale_.tolist() == [1.0] * 4  # features used as they are
    assert boost.node_posteriors(0).shape[1] == 2


def _probes(path):
    """``hasattr(x, "_name")`` and ``getattr(x, "_name"...)`` calls of a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("hasattr", "getattr") and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
                and node.args[1].value.startswith("_")
                and not node.args[1].value.startswith("__")):
            found.append(f"{path.relative_to(SRC)}:{node.lineno} {node.args[1].value}")
    return found


def test_no_module_probes_for_private_members():
    """Integrations call the declared protocol; private members are not looked for
    with ``hasattr``/``getattr``. Exceptions: the numba cache locator (it adapts to
    numba's own private classes) and scikit-learn's ``_estimator_type`` read on any
    user model by the evaluation helpers."""
    probes = [p for path in sorted(SRC.rglob("*.py")) if path.name != "_cache.py"
              for p in _probes(path)]
    assert [p for p in probes if not p.endswith(" _estimator_type")] == []
