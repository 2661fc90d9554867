"""Parameters fixed once a model has started learning.

The number of trees, online bagging in the Mondrian forests (every tree keeps
per-point multiplicities) and the feature units are set up by the first ``fit`` or
``partial_fit``. A later ``partial_fit`` after ``set_params`` changed one of them
cannot honour it: it used to be ignored silently (a forest kept its 10 trees with
``n_estimators=5``; the kernel models scaled their features by the new count), and
``bootstrap`` turned on in a Mondrian forest wrote past the trees' arrays; a lowered
``lifetime`` gave probabilities of 1e67. It is now
a ``ValueError`` before anything changes; setting the value back, or ``fit``, goes on.
Parameters that a later call can follow (the node budget, drift
adaptation, AMF's per-row bagging weights, ...) still may change.
"""

import pickle

import numpy as np
import online_models
import pytest
from online_models import outputs

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianBoostingClassifier,
    MondrianForestClassifier,
    MondrianForestRegressor,
    MondrianKernel,
    MondrianKernelClassifier,
    MondrianKernelRegressor,
    MondrianTreeClassifier,
    merge_forests,
)

FIXED = [
    (MondrianForestClassifier, {"n_estimators": 3}, "n_estimators", 5),
    (MondrianForestClassifier, {"n_estimators": 3}, "bootstrap", True),
    (MondrianForestClassifier, {"n_estimators": 3, "bootstrap": True}, "bootstrap", False),
    (MondrianForestClassifier, {"n_estimators": 3}, "feature_scale", None),
    (MondrianForestRegressor, {"n_estimators": 3}, "bootstrap", True),
    (MondrianForestClassifier, {"n_estimators": 3}, "lifetime", 1.0),
    (MondrianForestClassifier, {"n_estimators": 3, "lifetime": 1.0}, "lifetime", 5.0),
    (MondrianForestRegressor, {"n_estimators": 3, "lifetime": 5.0}, "lifetime", np.inf),
    (MondrianBoostingClassifier, {"n_estimators": 3}, "lifetime", 2.0),
    (MondrianTreeClassifier, {}, "feature_scale", None),
    (AMFClassifier, {"n_estimators": 3}, "n_estimators", 5),
    (AMFRegressor, {"n_estimators": 3}, "feature_scale", None),
    (MondrianKernelClassifier, {"n_trees": 5, "lifetime": 2.0}, "n_trees", 8),
    (MondrianKernelRegressor, {"n_trees": 5, "lifetime": 2.0}, "n_trees", 8),
    (MondrianKernelRegressor, {"n_trees": 5, "lifetime": 2.0}, "feature_scale", None),
    (MondrianKernel, {"n_trees": 5, "lifetime": 2.0}, "n_trees", 8),
    (MondrianBoostingClassifier, {"n_estimators": 3}, "n_estimators", 5),
]
FREE = [
    (MondrianForestClassifier, {"n_estimators": 3}, "max_nodes", 50),
    (MondrianForestClassifier, {"n_estimators": 3}, "min_samples_split", 5),
    (MondrianForestClassifier, {"n_estimators": 3}, "discount", 1.0),
    (MondrianForestClassifier, {"n_estimators": 3}, "drift", "adwin"),
    (AMFClassifier, {"n_estimators": 3}, "bootstrap", True),
    (AMFClassifier, {"n_estimators": 3}, "step", 2.0),
    (MondrianKernelClassifier, {"n_trees": 5, "lifetime": 2.0}, "alpha", 1e-3),
    (MondrianKernelRegressor, {"n_trees": 5, "lifetime": 2.0}, "lifetime", 3.0),
]


def ids(cases):
    return [f"{cls.__name__}-{name}={value!r}" for cls, _, name, value in cases]


def data(cls, n=120, seed=0):
    return online_models.data(cls, n, seed)


def rows(X, y, start, stop):
    return X[start:stop], None if y is None else y[start:stop]


@pytest.mark.parametrize("cls, params, name, value", FIXED, ids=ids(FIXED))
@pytest.mark.parametrize("batch", [1, 40], ids=["one-row", "batch"])
def test_a_fixed_parameter_changed_mid_stream_is_refused(cls, params, name, value, batch):
    X, y = data(cls)
    model = cls(random_state=0, **params).partial_fit(*rows(X, y, 0, 60))
    before, trees = outputs(model, X), pickle.dumps(model.trees_)
    old = model.get_params()[name]
    model.set_params(**{name: value})
    with pytest.raises(ValueError, match=f"started learning with {name}="):
        model.partial_fit(*rows(X, y, 60, 60 + batch))
    np.testing.assert_array_equal(outputs(model, X), before)
    assert pickle.dumps(model.trees_) == trees
    # set back: learning goes on; fit starts anew with the new value
    model.set_params(**{name: old}).partial_fit(*rows(X, y, 60, 60 + batch))
    fresh = cls(random_state=0, **params).set_params(**{name: value})
    fresh.fit(*rows(X, y, 0, 60)).partial_fit(*rows(X, y, 60, 60 + batch))
    assert fresh.get_params()[name] == value


@pytest.mark.parametrize("cls, params, name, value", FREE, ids=ids(FREE))
def test_a_parameter_a_later_call_can_follow_may_change(cls, params, name, value):
    X, y = data(cls)
    model = cls(random_state=0, **params).partial_fit(*rows(X, y, 0, 60))
    model.set_params(**{name: value})
    model.partial_fit(*rows(X, y, 60, 100)).partial_fit(*rows(X, y, 100, 101))
    assert np.isfinite(outputs(model, X)).all()


@pytest.mark.parametrize("cls", [MondrianForestClassifier, AMFClassifier])
def test_merged_forests_go_on_learning_with_all_their_trees(cls):
    X, y = data(cls, n=600)
    forests = [cls(n_estimators=n, random_state=seed).fit(X[:300], y[:300])
               for seed, n in enumerate((3, 2))]
    merged = merge_forests(forests)
    assert merged.n_estimators == 5
    merged.partial_fit(X[300:], y[300:])  # the full path, which checks the structure
    assert len(merged.trees_) == 5


def test_the_river_path_refuses_it_too():
    """``_partial_fit_validated`` (rows checked by the river adapters) falls back to
    learning without scikit-learn's validation when the fast path declines."""
    X, y = data(MondrianForestClassifier)
    model = MondrianForestClassifier(n_estimators=3, random_state=0).fit(X[:60], y[:60])
    model.bootstrap = True
    with pytest.raises(ValueError, match="started learning with bootstrap=False"):
        model._partial_fit_validated(np.ascontiguousarray(X[60:61]), y[60:61])


@pytest.mark.parametrize("bootstrap", [False, True])
def test_a_budget_raised_after_the_points_were_released_is_refused(bootstrap):
    """Once every tree has reached ``max_nodes`` the forest releases its stored points
    (memory stays bounded); a larger budget would let the trees grow again, which
    re-samples paused leaves from their points: it read past the emptied arrays."""
    rng = np.random.RandomState(0)
    X, y = rng.uniform(size=(1200, 3)), rng.randint(3, size=1200)  # no pure leaf pauses
    model = MondrianForestClassifier(n_estimators=3, max_nodes=40, bootstrap=bootstrap,
                                     random_state=0).partial_fit(X[:900], y[:900])
    assert not model._can_resample()  # every tree full: the points are released
    before = outputs(model, X)
    for budget in (None, 200, 41):
        model.set_params(max_nodes=budget)
        with pytest.raises(ValueError, match="released its stored points"):
            model.partial_fit(X[900:901], y[900:901])
        np.testing.assert_array_equal(outputs(model, X), before)
    model.set_params(max_nodes=30).partial_fit(X[900:], y[900:])  # lower: fine
    assert max(tree.n_nodes for tree in model.trees_) <= 40
    kept = MondrianForestClassifier(n_estimators=3, max_nodes=10_000, random_state=0)
    kept.partial_fit(X[:300], y[:300]).set_params(max_nodes=20_000)  # points kept
    kept.partial_fit(X[300:], y[300:])
