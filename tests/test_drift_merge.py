"""Merging drift-adaptive forests that learned the same stream (``drift._merge``):
what ``DaskShardedForest.gather`` does in ``mode="trees"``."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianForestClassifier,
    MondrianForestRegressor,
    merge_forests,
)
from mondrianlearn.dask import shard_estimators

CLASSES = [AMFClassifier, AMFRegressor, MondrianForestClassifier, MondrianForestRegressor]


def _stream(regression, n=1500, seed=0):
    """Four features; the concept changes at row 700 (labels flipped, targets negated)."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 4))
    if regression:
        y = np.sin(6 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.randn(n)
        y[700:] *= -1.0
    else:
        y = (X[:, 0] + X[:, 1] > 1).astype(int) + (X[:, 2] > 0.6).astype(int)
        y[700:] = 2 - y[700:]
    return X, y


def _learn(models, X, y, batch=150):
    for start in range(0, X.shape[0], batch):
        for model in models:
            model.partial_fit(X[start:start + batch], y[start:start + batch])


def _forecast(model, X):
    return model.predict_proba(X) if hasattr(model, "predict_proba") else model.predict(X)


def _average(shards, X):
    sizes = [len(shard.trees_) for shard in shards]
    return sum(n * _forecast(shard, X) for n, shard in zip(sizes, shards)) / sum(sizes)


def _shards(cls, X, y, n_trees=6, **params):
    shards = shard_estimators(cls(n_trees, random_state=3, drift="adwin", **params), 2)
    _learn(shards, X, y)
    return shards


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_forests_of_one_stream_merge_slot_by_slot(cls):
    """Shards that learned one drifting stream merge into one forest: the average
    of the shards, their events in one record (slots numbered on), the inputs left
    as they were; the merged forest learns on as its slots would have in their
    shards (no event in the stretch learned after, where a new tree of the second
    shard's slots would draw its seed from the merged forest's stream)."""
    X, y = _stream(cls in (AMFRegressor, MondrianForestRegressor))
    X_test = np.random.RandomState(1).uniform(size=(200, 4))
    shards = _shards(cls, X, y)
    saved = [pickle.dumps(shard) for shard in shards]
    merged = merge_forests(shards, same_stream=True)
    assert [pickle.dumps(shard) for shard in shards] == saved
    assert merged.n_estimators == 6 and merged.n_samples_seen_ == X.shape[0]
    assert_allclose(_forecast(merged, X_test), _average(shards, X_test), rtol=0, atol=1e-12)
    events = [shard.drift_events_ for shard in shards]
    assert min(len(e) for e in events) > 0  # the drift was seen: there is state to merge
    expected = np.concatenate([events[0], events[1].copy()])
    expected["tree"][len(events[0]):] += len(shards[0].trees_)
    expected = expected[np.argsort(expected["row"], kind="stable")]
    assert_array_equal(merged.drift_events_, expected)

    before = len(merged.drift_events_)
    X_more, y_more = _stream(cls in (AMFRegressor, MondrianForestRegressor), n=120, seed=2)
    if cls in (AMFRegressor, MondrianForestRegressor):
        y_more *= -1.0  # the concept after the change
    else:
        y_more = 2 - y_more
    _learn([merged] + shards, X_more, y_more, batch=30)
    # every foreground tree started before the merge (challengers started since
    # are background trees, which forecast nothing yet)
    state = merged._drift_state
    assert state.born[: state.n_trees].max() < X.shape[0]
    assert_allclose(_forecast(merged, X_test), _average(shards, X_test), rtol=0, atol=1e-12)
    restored = pickle.loads(pickle.dumps(merged))
    _learn([merged, restored], X[:300], y[:300], batch=50)  # the old concept: events
    assert len(merged.drift_events_) > before
    assert_array_equal(_forecast(restored, X_test), _forecast(merged, X_test))


def test_mondrian_forests_that_dropped_different_points_merge_on_the_largest_store():
    """A drift-adaptive Mondrian forest drops the stored points its trees no longer
    need, so shards of one stream hold different suffixes of it: the merged forest
    keeps the largest, moves the other trees' point ids into it, and goes on
    re-sampling paused leaves from the right points (it learns on as its shards)."""
    rng = np.random.RandomState(0)
    n = 8000
    X = rng.uniform(size=(n, 4))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    for k in range(1, 8):  # a new concept every 1,000 rows
        rows = slice(k * 1000, (k + 1) * 1000)
        y[rows] = (X[rows, k % 4] > 0.5).astype(int)
    X_test = rng.uniform(size=(200, 4))
    shards = shard_estimators(MondrianForestClassifier(4, random_state=3, drift="adwin"), 2)
    _learn(shards, X, y, batch=200)
    offsets = [shard._drift_state.store_offset for shard in shards]
    assert offsets[0] != offsets[1] and min(offsets) > 0
    merged = merge_forests(shards, same_stream=True)
    assert merged._drift_state.store_offset == min(offsets)
    assert merged._store.n == n - min(offsets)
    assert_allclose(merged.predict_proba(X_test), _average(shards, X_test), rtol=0, atol=1e-12)
    _learn([merged] + shards, X[-300:], y[-300:], batch=20)
    assert_allclose(merged.predict_proba(X_test), _average(shards, X_test), rtol=0, atol=1e-12)


@pytest.mark.parametrize("cls", [AMFClassifier, MondrianForestRegressor],
                         ids=lambda c: c.__name__)
def test_drift_forests_of_different_rows_are_not_merged(cls):
    """Slots count the rows of their own stream: forests that learned different rows
    (or that say they learned the same but did not) are refused, with the way out."""
    X, y = _stream(cls is MondrianForestRegressor)
    parts = [cls(3, random_state=s, drift="adwin").fit(X[:600], y[:600]) for s in (0, 1)]
    with pytest.raises(ValueError, match="same rows in the same order .*mode='trees'"):
        merge_forests(parts)
    other = cls(3, random_state=1, drift="adwin").fit(X[100:700], y[100:700])
    with pytest.raises(ValueError, match="did not learn the same rows"):
        merge_forests([parts[0], other], same_stream=True)
