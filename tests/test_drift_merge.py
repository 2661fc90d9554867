"""Merging drift-adaptive forests that learned the same stream (``drift._merge``):
what ``DaskShardedForest.gather`` does in ``mode="trees"``."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianForestClassifier,
    MondrianForestRegressor,
    merge_forests,
)
from mondrianlearn.amf._merge import combine_regression_parts, regression_parts

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


def _concepts(n):
    """Four features, a new concept every 1,000 rows (the Mondrian forests then
    drop stored points); also 200 test rows and the generator, to draw on."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(n, 4))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    for k in range(1, n // 1000):
        rows = slice(k * 1000, (k + 1) * 1000)
        y[rows] = (X[rows, k % 4] > 0.5).astype(int)
    return X, y, rng.uniform(size=(200, 4)), rng


def _two_shards(template):
    """Two halves of ``template``'s trees with their own seeds (the sub-forests a
    sharded forest is made of, without needing dask here)."""
    n_trees = template.n_estimators
    return [clone(template).set_params(n_estimators=size, random_state=seed)
            for size, seed in ((n_trees - n_trees // 2, 11), (n_trees // 2, 12))]


def _learn(models, X, y, batch=150):
    for start in range(0, X.shape[0], batch):
        for model in models:
            model.partial_fit(X[start:start + batch], y[start:start + batch])


def _forecast(model, X):
    return model.predict_proba(X) if hasattr(model, "predict_proba") else model.predict(X)


def _average(shards, X):
    """What the shards predict together: the average of their forecasts, weighted
    by their numbers of trees; a drift-adaptive regressor combines its trees'
    forecasts over all the shards (``drift.combine_tree_forecasts``)."""
    sizes = [len(shard.trees_) for shard in shards]
    if isinstance(shards[0], (AMFRegressor, MondrianForestRegressor)):
        parts = [regression_parts(shard, X, False) for shard in shards]
        return combine_regression_parts(parts, sizes)
    return sum(n * _forecast(shard, X) for n, shard in zip(sizes, shards)) / sum(sizes)


def _shards(cls, X, y, n_trees=6, **params):
    shards = _two_shards(cls(n_trees, random_state=3, drift="adwin", **params))
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
    if cls in (AMFRegressor, MondrianForestRegressor):
        # The linear correction belongs to the forest as a whole: the merged one has
        # learned from the merged forest's forecasts since, each shard's from its
        # own. The trees are compared without it.
        assert not np.allclose(_forecast(merged, X_test), _average(shards, X_test))
        for model in [merged] + shards:
            model.set_params(drift={"linear_rate": 0.0})
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
    n = 8000
    X, y, X_test, rng = _concepts(n)
    shards = _two_shards(MondrianForestClassifier(4, random_state=3, drift="adwin"))
    _learn(shards, X, y, batch=200)
    offsets = [shard._drift_state.store_offset for shard in shards]
    assert offsets[0] != offsets[1] and min(offsets) > 0
    merged = merge_forests(shards, same_stream=True)
    assert merged._drift_state.store_offset == min(offsets)
    assert merged._store.n == n - min(offsets)
    assert_allclose(merged.predict_proba(X_test), _average(shards, X_test), rtol=0, atol=1e-12)
    _learn([merged] + shards, X[-300:], y[-300:], batch=20)
    assert_allclose(merged.predict_proba(X_test), _average(shards, X_test), rtol=0, atol=1e-12)


def _parts_of_different_rows(cls, X, y, n_trees=3, batch=100):
    """Two forests, each learning its own half of each mini-batch (rows mode)."""
    parts = [cls(n_trees, random_state=seed, drift="adwin") for seed in (0, 1)]
    for start in range(0, X.shape[0], batch):
        half = start + batch // 2
        parts[0].partial_fit(X[start:half], y[start:half])
        parts[1].partial_fit(X[half:start + batch], y[half:start + batch])
    return parts


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_forests_of_different_rows_merge_on_one_stream(cls):
    """Forests that learned different rows (DaskShardedForest's rows mode) merge
    slot by slot too: the merged forest predicts their average (up to the rounding
    of moving the second forest to the first one's origin of the features), its
    row counters are moved to the merged stream (each forest's stream ending at
    its last row: ages and rows to the next challenger kept), and it learns on as
    its slots would have in their forests while no tree started after the merge
    takes over; its trees, background trees included, read the rows from the first
    forest's origin."""
    regression = cls in (AMFRegressor, MondrianForestRegressor)
    X, y = _stream(regression, n=2000)
    X_test = np.random.RandomState(1).uniform(size=(200, 4))
    parts = _parts_of_different_rows(cls, X, y)
    assert not np.array_equal(parts[0]._units[2], parts[1]._units[2])  # two origins
    saved = [pickle.dumps(part) for part in parts]
    merged = merge_forests(parts)
    assert [pickle.dumps(part) for part in parts] == saved
    assert merged.n_samples_seen_ == X.shape[0]
    assert_allclose(_forecast(merged, X_test), _average(parts, X_test), rtol=0, atol=1e-6)
    events = [part.drift_events_ for part in parts]
    assert min(len(e) for e in events) > 0
    expected = np.concatenate([events[0].copy(), events[1].copy()])
    expected["row"][: len(events[0])] += parts[1].n_samples_seen_
    expected["row"][len(events[0]):] += parts[0].n_samples_seen_
    expected["tree"][len(events[0]):] += 3
    expected = expected[np.argsort(expected["row"], kind="stable")]
    assert_array_equal(merged.drift_events_, expected)
    state, states = merged._drift_state, [part._drift_state for part in parts]
    rows_to_go = np.concatenate([s.next_challenge - p.n_samples_seen_
                                 for s, p in zip(states, parts)])
    assert_array_equal(state.next_challenge - merged.n_samples_seen_, rows_to_go)
    if cls in (AMFClassifier, AMFRegressor):  # (a Mondrian forest's ages: see _rebased)
        ages = np.concatenate([p.n_samples_seen_ - s.born[:3] for s, p in zip(states, parts)])
        assert_array_equal(merged.n_samples_seen_ - state.born[:6], ages)

    X_more, y_more = _stream(regression, n=100, seed=2)
    y_more = -y_more if regression else 2 - y_more  # the concept after the change
    merged.partial_fit(X_more, y_more)
    for part in parts:
        part.partial_fit(X_more, y_more)
    assert state.born[: state.n_trees].max() < X.shape[0]
    if cls is MondrianForestRegressor:
        # Its running moments of the target (the unit of the trees' losses) are
        # pooled, so the trees' recent losses, the weights of their combination,
        # differ slightly from their forests'; the trees themselves learn on alike.
        trees = [f._tree_forecasts(f._check_predict_input(X_test), False)[0]
                 for f in (merged, *parts)]
        assert_allclose(trees[0], np.concatenate(trees[1:]), rtol=0, atol=1e-6)
    elif cls is not AMFRegressor:  # (its running moments of the target are pooled, as
        # without drift: the prior of new nodes and the unit of the losses differ)
        assert_allclose(_forecast(merged, X_test), _average(parts, X_test), rtol=0,
                        atol=1e-6)
    restored = pickle.loads(pickle.dumps(merged))
    _learn([merged, restored], X[:600], y[:600], batch=50)
    assert_array_equal(_forecast(restored, X_test), _forecast(merged, X_test))


def test_mondrian_forests_of_different_rows_find_their_points_in_the_merged_store():
    """Rows mode for drift-adaptive Mondrian forests that dropped stored points: the
    merged store holds the forests' stores one after the other, every tree finds
    its points there (re-sampling paused leaves from them as its forest would),
    and the points no tree needs any more are dropped from the merged store."""
    n = 8000
    X, y, X_test, rng = _concepts(n)
    parts = _parts_of_different_rows(MondrianForestClassifier, X, y, n_trees=4, batch=400)
    offsets = [part._drift_state.store_offset for part in parts]
    assert min(offsets) > 0
    merged = merge_forests(parts)
    assert merged._store.n == sum(part._store.n for part in parts)
    assert merged._drift_state.store_offset == n - merged._store.n
    assert_allclose(merged.predict_proba(X_test), _average(parts, X_test), rtol=0, atol=1e-6)
    for start in range(n - 400, n, 20):
        for model in [merged] + parts:
            model.partial_fit(X[start:start + 20], y[start:start + 20])
    assert_allclose(merged.predict_proba(X_test), _average(parts, X_test), rtol=0, atol=1e-6)
    stored = merged._store.n
    X_new = rng.uniform(size=(3000, 4))
    y_new = (X_new[:, 0] < 0.5).astype(int)  # a concept not seen so far
    _learn([merged], X_new, y_new, batch=100)
    assert merged._store.n < stored + 3000  # points dropped as trees were replaced
    assert (merged.predict(X_new[-500:]) == y_new[-500:]).mean() > 0.9


@pytest.mark.parametrize("cls", [AMFClassifier, MondrianForestRegressor],
                         ids=lambda c: c.__name__)
def test_drift_forests_that_did_not_learn_the_same_rows_say_so(cls):
    X, y = _stream(cls is MondrianForestRegressor)
    part = cls(3, random_state=0, drift="adwin").fit(X[:600], y[:600])
    other = cls(3, random_state=1, drift="adwin").fit(X[100:700], y[100:700])
    with pytest.raises(ValueError, match="did not learn the same rows"):
        merge_forests([part, other], same_stream=True)


@pytest.mark.parametrize("cls", [AMFClassifier, MondrianForestClassifier],
                         ids=lambda c: c.__name__)
def test_a_new_origin_moves_every_tree_of_a_drift_adaptive_forest(cls):
    """``rescale_to`` with a new origin (what a merge of forests of different rows
    does) moved the foreground trees by the shift alone: wrong for an AMF tree that
    reads its features times weights (forecasts off by up to 0.5), and the
    background trees did not move at all (wrong once they took over). Every tree
    now moves in its own coordinates: the forest forecasts and learns on as before,
    up to the rounding of the move."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(3000, 4))
    y = (X[:, 0] > 0.5).astype(int)
    y[1500:] = (X[1500:, 1] > 0.5).astype(int)
    X_test = rng.uniform(size=(300, 4))
    model = cls(6, random_state=0, drift="adwin")
    _learn([model], X, y, batch=100)
    state = model._drift_state
    assert (state.background[0].n_nodes > 0 or state.background[1].n_nodes > 0)
    if cls is AMFClassifier:
        assert (state.scale[: state.n_trees] != 1.0).any()  # weighted foreground trees
    moved = pickle.loads(pickle.dumps(model))
    moved.rescale_to(model._units[0], model._units[2] - 0.3)
    assert_allclose(moved.predict_proba(X_test), model.predict_proba(X_test), rtol=0, atol=1e-6)
    _learn([model, moved], X[:1000], 1 - y[:1000], batch=100)  # background trees take over
    assert len(moved.drift_events_) == len(model.drift_events_)
    assert_allclose(moved.predict_proba(X_test), model.predict_proba(X_test), rtol=0, atol=1e-6)


@pytest.mark.parametrize("cls", [AMFClassifier, MondrianForestClassifier],
                         ids=lambda c: c.__name__)
def test_classifiers_that_saw_different_classes_keep_their_background_counts(cls):
    """Forests of different rows that saw different labels merge on the union of
    the classes, background trees included, once: the merged forest's background
    trees hold their forests' class counts in the union's columns, before and
    after the merged forest synchronises its drift state (a state left with the
    first forest's classes moved them a second time: counts shifted or lost)."""
    from mondrianlearn.drift._adaptive import _state

    X, y = _stream(False, n=2000)
    y = y + 1  # labels 1, 2, 3
    rows = np.arange(X.shape[0])
    first = y != 3  # the first forest never sees label 3
    parts = [cls(3, random_state=seed, drift="adwin") for seed in (0, 1)]
    for start in range(0, X.shape[0], 100):
        batch = rows[start:start + 100]
        a, b = batch[:50], batch[50:]
        a = a[first[a]]
        parts[0].partial_fit(X[a], y[a])
        parts[1].partial_fit(X[b], y[b])
    assert_array_equal(parts[0].classes_, [1, 2])
    assert_array_equal(parts[1].classes_, [1, 2, 3])
    name = "stats" if cls is MondrianForestClassifier else "counts"
    columns = [[0, 1], [0, 1, 2]]

    def expected_counts():
        out = []
        for part, cols in zip(parts, columns):
            for tree in part._drift_state.background:
                counts = np.zeros((tree.n_nodes, 3))
                counts[:, cols] = tree.node_stats[name][: tree.n_nodes]
                out.append(counts)
        return out

    assert sum(t.n_nodes > 1 for p in parts for t in p._drift_state.background) >= 2
    merged = merge_forests(parts)
    assert_array_equal(merged.classes_, [1, 2, 3])
    for _ in range(2):  # as merged, then once the state synchronised
        background = merged._drift_state.background
        for tree, counts in zip(background, expected_counts()):
            assert_array_equal(tree.node_stats[name][: tree.n_nodes], counts)
        _state(merged)
    X_test = np.random.RandomState(1).uniform(size=(100, 4))
    merged.partial_fit(X[:300], y[:300])
    proba = merged.predict_proba(X_test)
    assert proba.shape == (100, 3) and np.all(np.isfinite(proba))
    assert_allclose(proba.sum(axis=1), 1.0)
