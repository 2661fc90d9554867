"""Feature units (``feature_scale``): the trees do not depend on how features are
measured, online learning stays exact (AMF) or keeps the batch law (Mondrian
forests), and everything shown to users is in the units of ``X``."""

import copy
import gzip
import pickle

import numpy as np
import pytest
from scipy import stats
from sklearn.utils._param_validation import InvalidParameterError

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianForestClassifier,
    MondrianForestRegressor,
    MondrianTreeClassifier,
    MondrianTreeRegressor,
)
from mondrianlearn.datasets import benchmark_data_home
from mondrianlearn.engine.tree import used_rows
from mondrianlearn.utils.feature_scale import RESAMPLE_FREELY_BELOW, common_units, units_of_range

CLASSIFIERS = [MondrianForestClassifier, AMFClassifier]
REGRESSORS = [MondrianForestRegressor, AMFRegressor]
ESTIMATORS = CLASSIFIERS + REGRESSORS


def _stream(n=400, seed=0):
    """Features in very different units, one trending (like a date), one constant
    for the first quarter of the stream (like Elec2's vicprice)."""
    rng = np.random.RandomState(seed)
    X = np.column_stack([
        rng.uniform(0, 1, n),
        rng.uniform(-3e4, 5e4, n),  # large unit
        rng.normal(0, 1e-3, n),  # small unit
        np.linspace(0.1, 0.1 + 1e-3, n),  # trending
        np.where(np.arange(n) < n // 4, 0.25, rng.uniform(0, 200, n)),  # constant first
    ])
    z = X[:, 0] + X[:, 1] / 4e4 + X[:, 2] * 500 + (X[:, 4] > 100)
    return X, z


def _data(cls, n=400, seed=0):
    X, z = _stream(n, seed)
    if cls in CLASSIFIERS:
        return X, (z > np.median(z)).astype(int)
    return X, z


def _predict(model, X):
    return model.predict_proba(X) if hasattr(model, "predict_proba") else model.predict(X)


def _same_trees(a, b):
    """Same trees, node statistics and random streams, with the nodes numbered
    depth-first (AMF renumbers its nodes as a tree grows, at moments that depend on
    the batches)."""
    assert len(a.trees_) == len(b.trees_)
    for s, t in zip(a.trees_, b.trees_):
        s, t = copy.deepcopy(s), copy.deepcopy(t)
        s.trim(renumber=True)
        t.trim(renumber=True)
        n = s.n_nodes
        assert n == t.n_nodes
        for u, v in zip(used_rows(s.arrays).values(), used_rows(t.arrays).values()):
            np.testing.assert_array_equal(np.asarray(u), np.asarray(v))
        for name in s.node_stats:
            np.testing.assert_array_equal(s.node_stats[name][:n], t.node_stats[name][:n])
        np.testing.assert_array_equal(s.rng_state, t.rng_state)


# -------------------------------------------------------------------- units
def test_units_are_powers_of_two_at_least_the_range():
    low = np.array([0.0, -3.0, 5.0, 0.0, 1e300, 0.0])
    high = np.array([1.0, 4.0, 5.0, 3e-9, 1e300 + 1e285, 0.75])
    units = units_of_range(low, high)
    np.testing.assert_array_equal(units[[0, 1, 2, 5]], [1.0, 8.0, 1.0, 1.0])
    assert units[3] == 2.0 ** -28  # smallest power of two >= 3e-9
    mantissa, _ = np.frexp(units)
    assert np.all(mantissa == 0.5)
    assert np.all(units >= high - low) and np.all((high - low)[units != 1] > units[units != 1] / 2)
    assert np.isfinite(1.0 / units).all()


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_predictions_do_not_depend_on_the_units_of_x(cls):
    """Multiplying a feature by a power of two changes nothing (its unit follows),
    in batch and online; feature_scale=None does depend on it."""
    X, y = _data(cls)
    factors = np.array([8.0, 2.0 ** -10, 2.0 ** 20, 0.5, 64.0])
    T = _stream(60, seed=1)[0]
    fitted = cls(n_estimators=3, random_state=0).fit(X, y)
    rescaled = cls(n_estimators=3, random_state=0).fit(X * factors, y)
    np.testing.assert_array_equal(_predict(fitted, T), _predict(rescaled, T * factors))
    np.testing.assert_array_equal(rescaled.feature_scale_, fitted.feature_scale_ * factors)
    online = cls(n_estimators=3, random_state=0)
    online_rescaled = cls(n_estimators=3, random_state=0)
    for start in range(0, len(y), 50):
        online.partial_fit(X[start:start + 50], y[start:start + 50])
        online_rescaled.partial_fit(X[start:start + 50] * factors, y[start:start + 50])
    np.testing.assert_array_equal(_predict(online, T), _predict(online_rescaled, T * factors))
    raw = cls(n_estimators=3, random_state=0, feature_scale=None)
    raw_rescaled = cls(n_estimators=3, random_state=0, feature_scale=None)
    assert not np.array_equal(_predict(raw.fit(X, y), T),
                              _predict(raw_rescaled.fit(X * factors, y), T * factors))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_units_are_those_of_the_range_of_all_rows_whatever_the_batches(cls):
    X, y = _data(cls)
    expected = units_of_range(X.min(axis=0), X.max(axis=0))
    np.testing.assert_array_equal(cls(n_estimators=2, random_state=0).fit(X, y).feature_scale_,
                                  expected)
    model = cls(n_estimators=2, random_state=0)
    for i in range(len(y)):
        model.partial_fit(X[i:i + 1], y[i:i + 1],
                          **({"classes": [0, 1]} if cls in CLASSIFIERS and i == 0 else {}))
    np.testing.assert_array_equal(model.feature_scale_, expected)
    assert expected[4] > 128  # the feature constant at first follows its later range
    # The running range is kept in units; mapped back it is the range of X.
    np.testing.assert_array_equal(model._raw_feature_range(),
                                  np.vstack([X.min(axis=0), X.max(axis=0)]))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_fixed_scales_divide_the_features(cls):
    X, y = _data(cls)
    scales = np.array([0.3, 7e4, 2e-3, 1e-3, 150.0])
    T = _stream(40, seed=2)[0]
    fixed = cls(n_estimators=3, random_state=0, feature_scale=scales).fit(X, y)
    # both relative to their first row (the origin, 0 for the second model)
    raw = cls(n_estimators=3, random_state=0,
              feature_scale=None).fit((X - X[0]) * (1 / scales), y)
    np.testing.assert_array_equal(_predict(fixed, T), _predict(raw, (T - X[0]) * (1 / scales)))
    np.testing.assert_array_equal(fixed.feature_scale_, scales)
    np.testing.assert_array_equal(raw.feature_scale_, np.ones(5))
    # Fixed units never change: the online model is the same as with raw rows scaled.
    online = cls(n_estimators=3, random_state=0, feature_scale=list(scales))
    for start in range(0, len(y), 30):
        online.partial_fit(X[start:start + 30], y[start:start + 30],
                           **({"classes": [0, 1]} if cls in CLASSIFIERS else {}))
    np.testing.assert_array_equal(online.feature_scale_, scales)


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("bad", [[1.0, 2.0], [1.0, 0.0, 1.0, 1.0, 1.0],
                                 [1.0, np.inf, 1.0, 1.0, 1.0], "std"])
def test_bad_feature_scale_is_refused(cls, bad):
    X, y = _data(cls, n=30)
    error = InvalidParameterError if isinstance(bad, str) else ValueError
    with pytest.raises(error, match="feature_scale"):
        cls(n_estimators=2, feature_scale=bad).fit(X, y)


# ------------------------------------------------------------------ online
@pytest.mark.parametrize("cls", [AMFClassifier, AMFRegressor])
def test_amf_fit_equals_partial_fit_in_any_batches_while_units_change(cls):
    """Each row is learned in the units of the rows up to it: cutting the stream
    into batches (or rows, through the fast path) changes nothing, bit for bit."""
    X, y = _data(cls)
    fitted = cls(n_estimators=3, random_state=0).fit(X, y)
    extra = {"classes": [0, 1]} if cls is AMFClassifier else {}
    for size in (1, 7, 100):
        online = cls(n_estimators=3, random_state=0)
        for start in range(0, len(y), size):
            online.partial_fit(X[start:start + size], y[start:start + size],
                               **(extra if start == 0 else {}))
        _same_trees(online, fitted)
        np.testing.assert_array_equal(_predict(online, X[:50]), _predict(fitted, X[:50]))


@pytest.mark.parametrize("cls", [AMFClassifier, AMFRegressor])
def test_amf_batch_learns_its_first_rows_once_for_their_last_units(cls, monkeypatch):
    """A batch whose first rows change the units many times learns them once, in
    the units they end with, not once per change: each restart would throw the
    learning away (with ``n_jobs=2``, each was also a round of thread tasks)."""
    X, y = _data(cls)
    learned = []
    learn_batch = cls._learn_batch

    def counted(self, X, y, sample_weight):
        learned.append(X.shape[0])
        return learn_batch(self, X, y, sample_weight)

    monkeypatch.setattr(cls, "_learn_batch", counted)
    model = cls(n_estimators=3, random_state=0).fit(X, y)
    changes = np.count_nonzero(np.any(np.diff(units_of_range(
        np.minimum.accumulate(X - X[0]), np.maximum.accumulate(X - X[0])), axis=0), axis=1))
    assert changes >= 10  # the stream's first rows change the units many times
    assert len(learned) <= 4 and sum(learned) <= len(y) + RESAMPLE_FREELY_BELOW
    assert model.n_samples_seen_ == len(y)


@pytest.mark.parametrize("cls", [AMFClassifier, AMFRegressor])
def test_amf_learns_its_first_rows_again_in_new_units(cls):
    """While AMF holds fewer than RESAMPLE_FREELY_BELOW rows, new units restart its
    trees and learn the rows again: it is then the AMF trained on its rows in the
    units of their range from the start (fixed scales), bit for bit."""
    X, y = _data(cls, n=RESAMPLE_FREELY_BELOW - 6)
    extra = {"classes": [0, 1]} if cls is AMFClassifier else {}
    online = cls(n_estimators=3, random_state=0)
    for i in range(len(y)):
        online.partial_fit(X[i:i + 1], y[i:i + 1], **(extra if i == 0 else {}))
    units = units_of_range(X.min(axis=0), X.max(axis=0))
    fixed = cls(n_estimators=3, random_state=0, feature_scale=units).fit(X, y)
    _same_trees(online, fixed)
    np.testing.assert_array_equal(_predict(online, X), _predict(fixed, X))
    assert "_first_rows" in online.__dict__  # kept until the model holds enough rows
    online.partial_fit(X[:10], y[:10])
    assert "_first_rows" not in online.__dict__


@pytest.mark.parametrize("cls", [MondrianForestClassifier, MondrianForestRegressor])
def test_mondrian_forest_batches_equal_rows_while_units_change(cls):
    """After a first row, mini-batches and single rows re-sample the trees at the
    same rows (where a unit changes) and extend them alike."""
    X, y = _data(cls, n=200)
    extra = {"classes": [0, 1]} if cls is MondrianForestClassifier else {}
    rows = cls(n_estimators=3, random_state=0)
    batches = cls(n_estimators=3, random_state=0)
    rows.partial_fit(X[:1], y[:1], **extra)
    batches.partial_fit(X[:1], y[:1], **extra)
    for i in range(1, len(y)):
        rows.partial_fit(X[i:i + 1], y[i:i + 1])
    for start in range(1, len(y), 23):
        batches.partial_fit(X[start:start + 23], y[start:start + 23])
    _same_trees(rows, batches)
    np.testing.assert_array_equal(_predict(rows, X), _predict(batches, X))


@pytest.mark.parametrize("cls", [MondrianForestClassifier, MondrianForestRegressor])
def test_mondrian_forest_rescales_in_place_past_its_first_rows(cls):
    """Past RESAMPLE_FREELY_BELOW rows, a unit change rescales the trees in place:
    no re-sampling however often heavy tails change units, batches still equal
    rows, and the units are those of the range of all rows."""
    rng = np.random.RandomState(1)
    n = 1500
    X = np.column_stack([rng.pareto(1.0, n), rng.pareto(0.7, n), rng.uniform(size=n),
                         np.linspace(0, 1, n) ** 2])
    z = np.log1p(X[:, 0]) + X[:, 2]
    y = (z > np.median(z)).astype(int) if cls is MondrianForestClassifier else z
    extra = {"classes": [0, 1]} if cls is MondrianForestClassifier else {}
    resampled, changes = [], []
    rows = cls(n_estimators=2, random_state=0)
    original, move = rows._resample_trees, rows._change_units

    def counted():
        resampled.append(rows._store.n)
        original()

    def moved(*args, **kwargs):
        changes.append(rows.n_samples_seen_)
        move(*args, **kwargs)

    rows._resample_trees, rows._change_units = counted, moved
    rows.partial_fit(X[:1], y[:1], **extra)
    batches = cls(n_estimators=2, random_state=0).partial_fit(X[:1], y[:1], **extra)
    for i in range(1, n):
        rows.partial_fit(X[i:i + 1], y[i:i + 1])
    for start in range(1, n, 97):
        batches.partial_fit(X[start:start + 97], y[start:start + 97])
    assert resampled and max(resampled) < RESAMPLE_FREELY_BELOW
    assert sum(c >= RESAMPLE_FREELY_BELOW for c in changes) >= 3  # units kept changing
    _same_trees(rows, batches)
    np.testing.assert_array_equal(_predict(rows, X), _predict(batches, X))
    np.testing.assert_array_equal(rows.feature_scale_,
                                  units_of_range(X.min(axis=0), X.max(axis=0)))


def test_a_pickled_mondrian_forest_with_a_late_resampling_pending_drops_it():
    """A Mondrian forest saved by a version that put a late re-sampling off
    (``_units_due`` set) loads without it: its trees were rescaled in place, and it
    goes on as one that never had it."""
    from mondrianlearn.utils.feature_scale import NOT_DUE

    rng = np.random.RandomState(2)
    X = np.column_stack([rng.pareto(1.0, 600), rng.uniform(size=600)])
    y = (X[:, 1] > 0.5).astype(int)
    model = MondrianForestClassifier(n_estimators=2, random_state=0)
    for start in range(0, 400, 50):
        model.partial_fit(X[start:start + 50], y[start:start + 50], classes=[0, 1])
    twin = pickle.loads(pickle.dumps(model))
    model._units_due = model.n_samples_seen_ + 7  # what the older version kept
    loaded = pickle.loads(pickle.dumps(model))
    assert loaded._units_due == NOT_DUE
    for m in (loaded, twin):
        for i in range(400, 600):
            m.partial_fit(X[i:i + 1], y[i:i + 1])
    _same_trees(loaded, twin)
    np.testing.assert_array_equal(_predict(loaded, X), _predict(twin, X))


def test_mondrian_tree_online_has_the_law_of_fit_while_units_change():
    """partial_fit row by row (units change as ranges grow, trees re-sampled) and
    fit (units of all rows) give trees of the same law, in the units of X: root
    split time, number of leaves and depth over many seeds (two-sample tests at
    level 1e-3). Control: without units, the widest feature takes the root cuts."""
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.uniform(0, 1e3, 12), rng.uniform(0, 1e-3, 12),
                         np.linspace(0, 1, 12) ** 3])
    y = (X[:, 0] > 500).astype(int) + (X[:, 1] > 5e-4)
    order = np.random.RandomState(5)
    batch, online, raw = [], [], []
    for seed in range(150):
        view = MondrianTreeClassifier(random_state=seed).fit(X, y).tree_
        batch.append((view.split_time[view.root], view.n_leaves, view.max_depth,
                      view.feature[view.root]))
        est = MondrianTreeClassifier(random_state=10_000 + seed)
        for i in order.permutation(12):
            est.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1, 2])
        view = est.tree_
        online.append((view.split_time[view.root], view.n_leaves, view.max_depth,
                       view.feature[view.root]))
        view = MondrianTreeClassifier(random_state=seed, feature_scale=None).fit(X, y).tree_
        raw.append(view.feature[view.root])
    batch, online = np.array(batch), np.array(online)
    assert stats.ks_2samp(batch[:, 0], online[:, 0]).pvalue > 1e-3
    assert stats.mannwhitneyu(batch[:, 1], online[:, 1]).pvalue > 1e-3
    assert stats.mannwhitneyu(batch[:, 2], online[:, 2]).pvalue > 1e-3
    assert stats.chi2_contingency([np.bincount(batch[:, 3].astype(int), minlength=3),
                                   np.bincount(online[:, 3].astype(int), minlength=3)]
                                  ).pvalue > 1e-3
    assert np.mean(np.array(raw) == 0) > 0.95
    assert 0.15 < np.mean(batch[:, 3] == 0) < 0.6


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_trending_and_late_features_keep_learning_sensibly(cls):
    """A stream ordered by a trending feature (which doubles its range many times)
    with a feature constant at first: the model in units predicts at least as
    well as in raw units, on data that depends on the raw-wise narrow features."""
    X, y = _data(cls, n=1200, seed=3)
    scores = []
    for feature_scale in ("range", None):
        model = cls(n_estimators=5, random_state=0, feature_scale=feature_scale)
        errors = []
        for start in range(0, 1200, 50):
            if start:
                pred = model.predict(X[start:start + 50])
                errors.append(pred != y[start:start + 50] if cls in CLASSIFIERS
                              else (pred - y[start:start + 50]) ** 2)
            model.partial_fit(X[start:start + 50], y[start:start + 50],
                              **({"classes": [0, 1]} if cls in CLASSIFIERS else {}))
        scores.append(np.mean(np.concatenate(errors)))
    assert scores[0] < scores[1]


# ------------------------------------------------------------------- origin
def _epoch_stream(seed, n=6000):
    """A time in epoch seconds within one hour (magnitude 1.7e9, range 3600) and a
    uniform feature; the label alternates every 300 s, flipped by the second."""
    rng = np.random.default_rng(seed)
    t = 1.7e9 + rng.uniform(0, 3600, n)
    z = rng.uniform(0, 1, n)
    y = ((np.sin((t - 1.7e9) / 300.0) > 0) ^ (z > 0.5)).astype(int)
    return np.column_stack([t, z]), y


def _online(model, X, y, batch=100):
    for start in range(0, X.shape[0], batch):
        model.partial_fit(X[start:start + batch], y[start:start + batch], classes=[0, 1])
    return model


def test_amf_learns_a_feature_of_large_magnitude_to_the_precision_of_its_range():
    """Boxes are float32 relative to the origin: epoch seconds are known to within
    milliseconds, not minutes. AMF's defaults score 0.994 on these seeds, as they
    did with float64 boxes (0.9735 with float32 boxes without the origin)."""
    X, y = _epoch_stream(0)
    scores = [np.mean(_online(AMFClassifier(random_state=seed), X[:4000], y[:4000])
                      .predict(X[4000:]) == y[4000:]) for seed in range(3)]
    assert np.mean(scores) >= 0.985


def test_mondrian_forest_online_keeps_the_batch_law_on_a_large_magnitude_feature():
    """In raw units (feature_scale=None), cuts fall along the epoch seconds about
    3600 times as often as along the other feature, so both ways score near 0.65;
    the means of fit and partial_fit over three seeds agree within 0.03 (the
    seeds' spread is about 0.01 each way, 0.006 for a mean of three, 0.008 for a
    difference of means). Without the origin, online learning scored 0.751 against
    0.6585 for fit: rounded boxes, widened by minutes, left it another process."""
    X, y = _epoch_stream(0)
    batch, online = [], []
    for seed in range(3):
        model = MondrianForestClassifier(random_state=seed, feature_scale=None)
        batch.append(np.mean(model.fit(X[:4000], y[:4000]).predict(X[4000:]) == y[4000:]))
        model = MondrianForestClassifier(random_state=seed, feature_scale=None)
        online.append(np.mean(_online(model, X[:4000], y[:4000]).predict(X[4000:])
                              == y[4000:]))
    assert abs(np.mean(online) - np.mean(batch)) <= 0.03


@pytest.mark.parametrize("feature_scale", ["range", None])
@pytest.mark.parametrize("online", [False, True])
def test_stored_boxes_hold_their_points_to_the_precision_of_the_range(feature_scale, online):
    """Every node's stored box holds each of its points (compared exactly, in the
    trees' coordinates) and is their bounding box rounded outward to float32; in
    the units of X, the box overshoots its points by a few float32 steps of the
    feature's range, not of its magnitude."""
    from mondrianlearn.engine.tree import node_boxes, rounded_down, rounded_up
    from mondrianlearn.utils.feature_scale import raw_coordinates

    X, y = _epoch_stream(1, n=600)
    model = MondrianForestClassifier(n_estimators=3, random_state=0,
                                     feature_scale=feature_scale)
    if online:
        _online(model, X, y, batch=37)
    else:
        model.fit(X, y)
    units = model._units
    np.testing.assert_array_equal(units[2], X[0])  # the first row learned
    store = model._store
    points = store.X[: store.n]
    np.testing.assert_array_equal(points, (X - units[2]) * units[1])
    for tree in model.trees_:
        a = tree.arrays
        box_lower, box_upper = node_boxes(a, store.X)  # by node
        below = {}  # node -> ids of its points
        for node in range(tree.n_nodes):
            if a.left[node] == -1:
                ids, s = [], a.leaf_head[node]
                while s >= 0:
                    ids.append(s)
                    s = tree.sample_next[s]
                while node >= 0:
                    below.setdefault(node, []).extend(ids)
                    node = a.parent[node]
        assert sum(len(v) for v in below.values()) > 0
        for node, ids in below.items():
            held = points[ids]
            assert np.all(held >= box_lower[node]) and np.all(held <= box_upper[node])
            np.testing.assert_array_equal(box_lower[node], rounded_down(held.min(axis=0)))
            np.testing.assert_array_equal(box_upper[node], rounded_up(held.max(axis=0)))
        n = tree.n_nodes
        lower, upper, _ = raw_coordinates(box_lower, box_upper, a.threshold[:n],
                                          a.feature[:n], units)
        root = a.meta[1]
        span = X.max(axis=0) - X.min(axis=0)
        assert np.all(X.min(axis=0) - lower[root] <= span * 2.0**-20)
        assert np.all(upper[root] - X.max(axis=0) <= span * 2.0**-20)


@pytest.mark.parametrize("online", [False, True])
def test_mondrian_kernel_partitions_are_relative_to_the_origin(online):
    """The kernel models (no feature_scale) also read features relative to the
    first row: the root box of a partition overshoots the epoch seconds by a few
    float32 steps of their range, and transform follows the same cells online."""
    from mondrianlearn import MondrianKernel
    from mondrianlearn.engine.tree import node_boxes
    from mondrianlearn.utils.feature_scale import raw_coordinates

    X, _ = _epoch_stream(3, n=300)
    X[:, 1] *= 3600  # both features cut alike
    kernel = MondrianKernel(n_trees=3, lifetime=0.01, random_state=0)
    if online:
        for start in range(0, 300, 30):
            kernel.partial_fit(X[start:start + 30])
    else:
        kernel.fit(X)
    np.testing.assert_array_equal(kernel._units[2], X[0])
    span = X.max(axis=0) - X.min(axis=0)
    for tree in kernel.trees_:
        a, n = tree.arrays, tree.n_nodes
        lower, upper = node_boxes(a, None)  # a partition keeps no points
        lower, upper, _ = raw_coordinates(lower, upper, a.threshold[:n], a.feature[:n],
                                          kernel._units)
        root = a.meta[1]
        assert np.all(X.min(axis=0) - lower[root] <= span * 2.0**-20)
        assert np.all(upper[root] - X.max(axis=0) <= span * 2.0**-20)
    assert kernel.transform(X).nnz == 3 * X.shape[0]
    np.testing.assert_array_equal(kernel.transform(X[:5]).toarray(),
                                  kernel.transform(X).toarray()[:5])


def test_origin_survives_pickling_and_merges_move_trees_to_one_origin():
    """A pickled model keeps its origin and learns on as the original; forests that
    started from different rows are merged at the first one's origin and predict
    as the mixture of their trees (to float32 rounding of the moved boxes)."""
    from mondrianlearn import merge_forests

    X, y = _epoch_stream(2, n=900)
    a = MondrianForestClassifier(n_estimators=2, random_state=0).fit(X[:300], y[:300])
    copied = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(copied._units, a._units)
    a.partial_fit(X[300:400], y[300:400])
    copied.partial_fit(X[300:400], y[300:400])
    np.testing.assert_array_equal(copied.predict_proba(X), a.predict_proba(X))
    b = MondrianForestClassifier(n_estimators=3, random_state=1).fit(X[400:700], y[400:700])
    b.rescale_to(a.feature_scale_)  # the merge wants one set of units
    before = (2 * a.predict_proba(X[700:]) + 3 * b.predict_proba(X[700:])) / 5
    merged = merge_forests([a, b])
    np.testing.assert_array_equal(merged._units[2], a._units[2])
    np.testing.assert_array_equal(b._units[2], X[400])  # b itself is left as it was
    # b's boxes were rounded outward again at the new origin (a float32 step each
    # side at most): its predictions move by about that much
    np.testing.assert_allclose(merged.predict_proba(X[700:]), before, atol=1e-6)
    merged.partial_fit(X[700:], y[700:])
    assert np.mean(merged.predict(X[700:]) == y[700:]) > 0.9


# --------------------------------------------------------------- raw units out
@pytest.mark.parametrize("cls", [MondrianTreeClassifier, MondrianTreeRegressor])
def test_tree_view_is_in_the_units_of_x(cls):
    X, y = _data(MondrianForestClassifier if cls is MondrianTreeClassifier else cls, n=120)
    tree = cls(random_state=0).fit(X, y)
    view = tree.tree_
    # boxes are stored rounded outward to float32 relative to the origin
    # (engine.boxes), then moved back to the units of X (float64 rounding)
    low, high = X.min(axis=0), X.max(axis=0)
    slack = 4 * np.spacing(np.abs(X).max(axis=0))
    assert np.all(view.lower[view.root] <= low + slack)
    assert np.all(view.upper[view.root] >= high - slack)
    assert np.all(low - view.lower[view.root] <= (high - low) * 2.0**-22)
    assert np.all(view.upper[view.root] - high <= (high - low) * 2.0**-22)
    # Routing rows with the view's thresholds reaches the leaves of apply().
    leaves = tree.apply(X)[:, 0]
    for x, leaf in zip(X, leaves):
        node = view.root
        while view.children_left[node] != -1:
            go_left = x[view.feature[node]] <= view.threshold[node]
            node = view.children_left[node] if go_left else view.children_right[node]
        assert node == leaf


def test_partition_plot_is_drawn_in_the_units_of_x():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from mondrianlearn.plotting import plot_mondrian_tree

    rng = np.random.RandomState(0)
    X = np.column_stack([rng.uniform(100, 300, 80), rng.uniform(-1e-3, 1e-3, 80)])
    y = (X[:, 0] > 200).astype(int)
    ax = plot_mondrian_tree(MondrianTreeClassifier(random_state=0).fit(X, y), X, y)
    frame = [p for p in ax.patches if p.get_linewidth() == 3.0]  # the root's box
    assert len(frame) == 1
    # boxes are stored rounded outward to float32 (engine.boxes)
    np.testing.assert_allclose(frame[0].get_xy(), X.min(axis=0), rtol=2.0**-23)
    np.testing.assert_allclose([frame[0].get_width(), frame[0].get_height()],
                               X.max(axis=0) - X.min(axis=0), rtol=2.0**-22)
    cuts = np.concatenate([line.get_xydata() for line in ax.lines])
    low, high = X.min(axis=0), X.max(axis=0)  # widened by the float32 rounding of boxes
    low, high = low - np.abs(low) * 2.0**-22, high + np.abs(high) * 2.0**-22
    assert np.all((cuts >= low) & (cuts <= high))
    import matplotlib.pyplot as plt

    plt.close("all")


# --------------------------------------------------------------- persistence
@pytest.mark.parametrize("cls", ESTIMATORS)
def test_pickles_keep_the_units_and_older_ones_load_in_raw_units(cls):
    X, y = _data(cls, n=150)
    model = cls(n_estimators=2, random_state=0).partial_fit(X[:100], y[:100])
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.feature_scale_, model.feature_scale_)
    model.partial_fit(X[100:], y[100:])
    copy.partial_fit(X[100:], y[100:])
    np.testing.assert_array_equal(_predict(copy, X), _predict(model, X))
    # A model saved before feature units existed (state format 2) was trained on
    # raw features: it loads with feature_scale=None and predicts as it did.
    # Its first row at 0 makes the origin 0: its trees are those of a model saved
    # then, in the units of X.
    X = np.vstack([np.zeros((1, X.shape[1])), X])
    y = np.concatenate([y[:1], y])
    old = cls(n_estimators=2, random_state=0, feature_scale=None).fit(X, y)
    state = old.__getstate__()
    del state["feature_scale"], state["_units"]
    state["_mondrianlearn_state_format"] = 2
    loaded = type(old).__new__(type(old))
    loaded.__setstate__(state)
    assert loaded.feature_scale is None
    np.testing.assert_array_equal(_predict(loaded, X), _predict(old, X))
    loaded.partial_fit(X[:10], y[:10])


def test_merged_amf_keeps_all_its_trees_when_units_change():
    """A merged forest did not keep every row it learned: new units rescale it in
    place (instead of learning the first forest's rows again on its trees alone)."""
    from mondrianlearn import merge_forests

    X, y = _data(AMFClassifier, n=300)
    a = AMFClassifier(n_estimators=3, random_state=0).fit(X[:100], y[:100])
    b = AMFClassifier(n_estimators=2, random_state=1).fit(X[:100][::-1], y[:100][::-1])
    merged = merge_forests([a, b])
    merged.partial_fit(X[100:] * 4, y[100:])
    assert len(merged.trees_) == merged.n_estimators == 5
    assert all(tree.n_nodes > 1 for tree in merged.trees_)
    assert "_first_rows" not in merged.__dict__


def test_amf_rescaled_to_common_units_predicts_the_same():
    """Forests fitted apart are brought to the units of their joint range before
    a merge; AMF's predictions (leaf paths) do not change."""
    X, y = _data(AMFClassifier)
    a = AMFClassifier(n_estimators=2, random_state=0).fit(X[:200], y[:200])
    b = AMFClassifier(n_estimators=2, random_state=1).fit(X[200:], y[200:])
    units = common_units([a, b])
    np.testing.assert_array_equal(units, units_of_range(X.min(axis=0), X.max(axis=0)))
    before = a.predict_proba(X)
    a.rescale_to(units)
    np.testing.assert_array_equal(a.feature_scale_, units)
    np.testing.assert_array_equal(a.predict_proba(X), before)


# --------------------------------------------------------------------- river
def test_river_adapter_learns_in_units_and_gives_late_features_unit_one():
    pytest.importorskip("river", reason="river is not installed (the river extra)")
    import mondrianlearn.river as river
    X, y = _data(AMFClassifier, n=200)
    adapter = river.AMFClassifier(n_estimators=3, seed=0)
    model = AMFClassifier(n_estimators=3, random_state=0)
    names = [f"f{j}" for j in range(X.shape[1])]
    for i, (x, label) in enumerate(zip(X, y)):
        adapter.learn_one(dict(zip(names, x.tolist())), int(label))
        model.partial_fit(X[i:i + 1], y[i:i + 1], **({"classes": [0, 1]} if i == 0 else {}))
    np.testing.assert_array_equal(adapter._model.feature_scale_, model.feature_scale_)
    probe = dict(zip(names, X[5].tolist()))
    proba = adapter.predict_proba_one(probe)
    np.testing.assert_allclose([proba[0], proba[1]], model.predict_proba(X[5:6])[0], rtol=1e-12)
    adapter.learn_one({**probe, "late": 3.5}, 1)
    assert adapter._model.feature_scale_[-1] == 1.0
    adapter.learn_one({**probe, "late": 1000.0}, 0)
    assert adapter._model.feature_scale_[-1] == 1024.0


# ------------------------------------------------------------ shared datasets
@pytest.mark.skipif(benchmark_data_home() is None
                    or not (benchmark_data_home() / "uci_regression" / "airfoil").is_dir(),
                    reason="the shared benchmark datasets (uci_regression/airfoil) are absent")
@pytest.mark.parametrize("cls", REGRESSORS)
def test_units_help_on_unnormalised_airfoil(cls):
    """airfoil's features span 0.0004 to 20,000: in raw units the widest takes the
    cuts (normalised RMSE about 0.96 in batch, bench_feature_scale.md)."""
    folder = benchmark_data_home() / "uci_regression" / "airfoil"
    with gzip.open(folder / "data.csv.gz", "rt") as f:
        data = np.loadtxt(f, delimiter=",")
    with gzip.open(folder / "test_mask.csv.gz", "rt") as f:
        test = np.loadtxt(f, delimiter=",")[:, 0].astype(bool)
    X, y = data[:, :-1], data[:, -1]
    errors = {}
    for feature_scale in ("range", None):
        model = cls(random_state=0, feature_scale=feature_scale).fit(X[~test], y[~test])
        errors[feature_scale] = np.sqrt(np.mean((model.predict(X[test]) - y[test]) ** 2))
    spread = np.std(y[test])
    assert errors["range"] / spread < 0.4 < 0.8 < errors[None] / spread
