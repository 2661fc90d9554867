"""Drift adaptation of the Mondrian forests (``drift`` on MondrianForestClassifier
and MondrianForestRegressor, :mod:`mondrianlearn.drift`).

As for AMF (``tests/test_drift.py``): the adaptive forests recover from an abrupt
change where the stationary ones do not and cost little on a stationary stream;
the library's guarantees hold (same model however the stream is cut, across
``n_jobs``, through a pickle). Specific to the forests: the sample store drops the
points that no tree needs any more (bounded under ``max_nodes``), and feature
units that change during the stream rescale the background trees too.
"""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.utils.estimator_checks import parametrize_with_checks

from mondrianlearn import MondrianForestClassifier, MondrianForestRegressor
from mondrianlearn.drift import DEFAULTS, combine_tree_forecasts, correction_terms, tree_losses
from mondrianlearn.engine.tree import node_boxes, rounded_down, rounded_up
from mondrianlearn.forest.regressor import forest_variance
from mondrianlearn.utils.fast_path import FAST_MAX_ROWS

N_ROWS, CHANGE = 4000, 2000
CASES = [(MondrianForestClassifier, "c"), (MondrianForestRegressor, "r")]


def _stream(task, seed=0, n=N_ROWS, change=CHANGE, scales=(1.0, 1.0, 1.0)):
    """Three features, the first one informative. Classification: the label is
    ``x0 > 0.5``, flipped from row ``change`` on; regression: ``10 x0`` plus noise,
    mapped to ``8 - 2 y`` from row ``change`` on."""
    rng = np.random.RandomState(seed)
    U = rng.uniform(size=(n, 3))
    if task == "c":
        y = (U[:, 0] > 0.5).astype(int)
        y[change:] = 1 - y[change:]
    else:
        y = 10.0 * U[:, 0] + 0.1 * rng.randn(n)
        y[change:] = 8.0 - 2.0 * y[change:]
    return U * np.asarray(scales), y


def _out(model):
    return "predict_proba" if isinstance(model, MondrianForestClassifier) else "predict"


def _drift_smoothing(Est):
    """Parameters giving a stationary forest the smoothing of its drift-adaptive twin
    (the classifier's drift setting ``discount``), so that the two may be compared
    bit for bit."""
    if Est is MondrianForestClassifier:
        return {"discount": DEFAULTS["discount"]}
    return {}


def _plain_mean(Est, **settings):
    """Drift settings whose forest predicts the plain mean of its trees, as the
    stationary forest does (the regressors' ``trim``, ``loss_weighting`` and linear
    correction off; learning is the same), so that the two may be compared bit for
    bit."""
    if Est is MondrianForestRegressor:
        settings.update(trim=0.0, loss_weighting=0.0, linear_rate=0.0)
    return settings or "adwin"


def _prequential(model, X, y, batch=50):
    """Test-then-train in mini-batches: per-row hits (or absolute errors) of the
    prediction made before the row was learned (the first batch: NaN)."""
    scores = np.full(len(y), np.nan)
    classifier = isinstance(model, MondrianForestClassifier)
    for start in range(0, len(y), batch):
        rows = slice(start, start + batch)
        if start:
            pred = model.predict(X[rows])
            scores[rows] = (pred == y[rows]) if classifier else np.abs(pred - y[rows])
        model.partial_fit(X[rows], y[rows])
    return scores


# ---------------------------------------------------------------------- settings
@pytest.mark.parametrize("drift, message", [
    ("ddm", "drift"),
    ({"no_such_setting": 1}, "Unknown drift settings"),
    ({"drift_delta": 0.0}, "drift_delta"),
    ({"swap_min": 1.5}, "swap_min"),
    ({"discount": -1.0}, "discount"),
    ({"discount": np.inf}, "discount"),
    (3, "drift"),
])
@pytest.mark.parametrize("Est, task", CASES)
def test_bad_drift_values_fail_clearly(Est, task, drift, message):
    X, y = _stream(task, n=50)
    with pytest.raises(ValueError, match=message):
        Est(n_estimators=2, drift=drift, random_state=0).fit(X, y)


@pytest.mark.parametrize("Est, task", CASES)
def test_drift_none_is_the_stationary_model(Est, task):
    """``drift=None`` (the default) runs none of the drift code: the forest of
    before, bit for bit, with the store keeping every point."""
    X, y = _stream(task, n=600)
    assert Est().drift is None
    default = Est(n_estimators=3, random_state=1).fit(X[:400], y[:400])
    explicit = Est(n_estimators=3, random_state=1, drift=None).fit(X[:400], y[:400])
    for model in (default, explicit):
        for start in range(400, 600, 7):
            model.partial_fit(X[start:start + 7], y[start:start + 7])
        assert "_drift_state" not in model.__dict__
        assert model._store.n == 600
        with pytest.raises(AttributeError):
            _ = model.drift_events_
    assert_array_equal(getattr(default, _out(default))(X), getattr(explicit, _out(explicit))(X))
    for a, b in zip(default.trees_, explicit.trees_):
        assert_array_equal(a.arrays.threshold[: a.n_nodes], b.arrays.threshold[: b.n_nodes])


# ------------------------------------------------------------------ recovery
def test_classifier_smoothing_with_drift():
    """With drift adaptation, the classifier's smoothing discount is the drift setting
    ``discount`` (its young trees lean on their parents) unless ``discount`` is given;
    the parameter itself is not changed, and the setting can be overridden."""
    X, y = _stream("c", n=300)
    stationary = MondrianForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    adaptive = MondrianForestClassifier(n_estimators=2, random_state=0, drift="adwin").fit(X, y)
    given = MondrianForestClassifier(n_estimators=2, random_state=0, drift="adwin",
                                     discount=5.0).fit(X, y)
    custom = MondrianForestClassifier(n_estimators=2, random_state=0,
                                      drift={"discount": 2.0}).fit(X, y)
    assert stationary._gamma() == 10.0 * X.shape[1]
    assert adaptive._gamma() == DEFAULTS["discount"] and adaptive.discount is None
    assert given._gamma() == 5.0
    assert custom._gamma() == 2.0
    # the smoothing is what the predictions use
    proba = adaptive.predict_proba(X[:20])
    adaptive.discount = 10.0 * X.shape[1]
    assert not np.array_equal(adaptive.predict_proba(X[:20]), proba)


def test_classifier_recovers_from_an_abrupt_change():
    X, y = _stream("c")
    stationary = _prequential(MondrianForestClassifier(random_state=0), X, y)
    model = MondrianForestClassifier(random_state=0, drift="adwin")
    adaptive = _prequential(model, X, y)
    after = slice(CHANGE + 500, None)
    assert np.nanmean(stationary[:CHANGE]) > 0.95
    assert np.nanmean(adaptive[:CHANGE]) > 0.95
    # After the change the stationary forest keeps the old labels in its leaves;
    # the adaptive one has replaced its trees.
    assert np.mean(stationary[after]) < 0.5
    assert np.mean(adaptive[after]) > 0.95
    events = model.drift_events_
    assert events.dtype.names == ("row", "tree", "kind")
    replaced = events[np.isin(events["kind"], ["drift", "swap"])]
    after_change = replaced[replaced["row"] >= CHANGE]
    assert set(after_change["tree"]) == set(range(model.n_estimators))
    first = [after_change["row"][after_change["tree"] == t].min() for t in range(10)]
    assert max(first) < CHANGE + 500
    assert np.all(np.diff(events["row"]) >= 0)


def test_regressor_recovers_from_an_abrupt_change():
    X, y = _stream("r")
    stationary = _prequential(MondrianForestRegressor(random_state=0), X, y)
    model = MondrianForestRegressor(random_state=0, drift="adwin")
    adaptive = _prequential(model, X, y)
    after = slice(CHANGE + 500, None)
    assert np.mean(adaptive[after]) < 0.2 * np.mean(stationary[after])
    replaced = model.drift_events_
    replaced = replaced[np.isin(replaced["kind"], ["drift", "swap"])]
    assert np.any(replaced["row"] >= CHANGE)


@pytest.mark.parametrize("Est, task", CASES)
def test_a_stationary_stream_costs_little(Est, task):
    """Without a change, the adaptive forest is about as good as the stationary
    one (it renews trees now and then: challengers, false alarms)."""
    X, y = _stream(task, n=3000, change=3000)
    stationary = np.nanmean(_prequential(Est(random_state=0), X, y)[1000:])
    adaptive = np.nanmean(_prequential(Est(random_state=0, drift="adwin"), X, y)[1000:])
    if task == "c":
        assert adaptive > stationary - 0.01
    else:
        assert adaptive < 1.15 * stationary


# ------------------------------------------------------------- guarantees
def test_regressor_predicts_its_trees_combined():
    """The drift-adaptive regressor predicts its trees' means combined with their
    recent losses (``drift.combine_tree_forecasts``) plus its gated linear
    correction (in its scaled targets), one row at a time as in a large call; its
    predictive variance is that of the trees."""
    X, y = _stream("r", n=1600, change=800, scales=(1.0, 100.0, 0.01))
    model = MondrianForestRegressor(n_estimators=5, random_state=4, drift="adwin").fit(X, y)
    X_test = np.random.RandomState(2).uniform(size=(FAST_MAX_ROWS + 40, 3)) * [1, 100, 0.01]
    rows = model._check_predict_input(X_test)
    means, noise, rest, slots = model._tree_forecasts(rows, True)
    assert slots.all() and means.shape == noise.shape == rest.shape == (5, X_test.shape[0])
    losses = tree_losses(model._drift_state)
    assert np.ptp(losses) > 0
    weight, correction = correction_terms(model._drift_state, rows)
    assert 0.0 < weight < 1.0 and np.ptp(correction) > 0.0
    expected = (combine_tree_forecasts(means, losses, model._drift_state.settings)
                + weight * model._y_scale * correction)
    mean, std = model.predict(X_test, return_std=True)
    assert_allclose(mean, expected, rtol=1e-12, atol=1e-12 * np.abs(y).max())
    assert not np.allclose(mean, means.mean(axis=0), rtol=0, atol=1e-6)
    assert_allclose(std, np.sqrt(forest_variance(noise.mean(axis=0), rest.mean(axis=0),
                                                 means.var(axis=0), 5)), rtol=1e-9)
    large = model.predict(X_test)
    for i in range(20):
        assert_array_equal(model.predict(X_test[i:i + 1])[0], large[i])
    model.set_params(drift={"trim": 0.0, "loss_weighting": 0.0, "linear_rate": 0.0})
    assert_allclose(model.predict(X_test), means.mean(axis=0), rtol=1e-12,
                    atol=1e-12 * np.abs(y).max())




@pytest.mark.parametrize("resample", [False, True])
def test_regressor_linear_correction_follows_units_and_target_scale(resample):
    """New feature units (rescaled trees, or trees sampled afresh on the stored
    points) and a rescaling of the scaled targets leave the correction's part of
    the forecasts as it was."""
    X, y = _stream("r", n=800, change=400, scales=(1.0, 100.0, 0.01))
    model = MondrianForestRegressor(n_estimators=3, random_state=1, drift="adwin").fit(X, y)
    X_test = X[:100]

    def correction_part(m):
        weight, values = correction_terms(m._drift_state, m._check_predict_input(X_test))
        return weight * m._y_scale * values

    before = correction_part(model)
    assert np.ptp(before) > 0.1
    units = model._units
    model._change_units(units[0] * np.array([4.0, 2.0, 1.0]),
                        resample=resample, origin=units[2] + np.array([0.5, -20.0, 0.0]))
    assert_allclose(correction_part(model), before, rtol=1e-9, atol=1e-9)
    model._rescale_targets(8.0)
    assert_allclose(correction_part(model), before, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("Est, task", CASES)
def test_any_cut_of_the_stream_gives_the_same_model(Est, task):
    """fit, uneven mini-batches and one row at a time give the same forest, with
    feature units that change during the stream (features far from unit scale)."""
    X, y = _stream(task, n=1600, change=800, scales=(1.0, 100.0, 0.01))
    whole = Est(n_estimators=3, random_state=3, drift="adwin").fit(X, y)
    rng = np.random.RandomState(0)
    cuts = np.unique(np.concatenate([[0, len(y)], rng.randint(1, len(y), 30),
                                     np.arange(790, 830)]))
    pieces = Est(n_estimators=3, random_state=3, drift="adwin")
    for a, b in zip(cuts[:-1], cuts[1:]):
        pieces.partial_fit(X[a:b], y[a:b])
    assert len(whole.drift_events_) > 3
    assert_array_equal(whole.drift_events_, pieces.drift_events_)
    out = _out(whole)
    if task == "c":
        assert_array_equal(getattr(whole, out)(X), getattr(pieces, out)(X))
    else:
        # The regressor stores its targets centred and scaled by its first batch
        # (a model setting, not the adaptation's): equal up to rounding (of the
        # targets' size, for forecasts near 0).
        assert_allclose(getattr(whole, out)(X), getattr(pieces, out)(X), rtol=1e-12,
                        atol=1e-12 * np.abs(y).max())
    # One-row predictions (the compiled fast path) agree with a large call.
    large = getattr(whole, out)(X[:FAST_MAX_ROWS + 50])
    for i in range(20):
        assert_array_equal(getattr(whole, out)(X[i:i + 1])[0], large[i])


@pytest.mark.parametrize("Est, task", CASES)
def test_n_jobs_does_not_change_the_model(Est, task):
    X, y = _stream(task, n=2000, change=1000)
    models = [Est(n_estimators=4, random_state=5, drift="adwin", n_jobs=n_jobs).fit(X, y)
              for n_jobs in (1, 2)]
    assert_array_equal(models[0].drift_events_, models[1].drift_events_)
    X_test = np.random.RandomState(1).uniform(-0.2, 1.2, size=(FAST_MAX_ROWS + 300, 3))
    out = _out(models[0])
    assert_array_equal(getattr(models[0], out)(X_test), getattr(models[1], out)(X_test))


@pytest.mark.parametrize("Est, task", CASES)
def test_pickle_round_trip_predicts_and_learns_identically(Est, task):
    X, y = _stream(task, n=2400, change=1200)
    model = Est(n_estimators=4, random_state=2, drift="adwin").fit(X[:1500], y[:1500])
    loaded = pickle.loads(pickle.dumps(model))
    out = _out(model)
    assert_array_equal(getattr(model, out)(X), getattr(loaded, out)(X))
    assert_array_equal(model.drift_events_, loaded.drift_events_)
    for m in (model, loaded):
        for start in range(1500, 2400, 30):
            m.partial_fit(X[start:start + 30], y[start:start + 30])
    assert_array_equal(model.drift_events_, loaded.drift_events_)
    assert_array_equal(getattr(model, out)(X), getattr(loaded, out)(X))


@pytest.mark.parametrize("bootstrap", [False, True])
def test_replaced_trees_release_their_points(bootstrap):
    """Once every tree that started before the change has been replaced, the
    store no longer holds the points from before the change."""
    X, y = _stream("c")
    model = MondrianForestClassifier(n_estimators=5, random_state=0, drift="adwin",
                                     bootstrap=bootstrap)
    for start in range(0, len(y), 100):
        model.partial_fit(X[start:start + 100], y[start:start + 100])
    state = model._drift_state
    assert state.store_offset >= CHANGE
    assert model._store.n == model.n_samples_seen_ - state.store_offset
    _check_point_lists(model)


def test_the_first_point_kept_is_the_one_computed_afresh():
    """The first stored point that a tree may need is kept between calls and looked
    at again only when trees start, stop or are replaced: one row at a time through
    the change, it is always the one computed from the trees afresh, and the store
    drops the points that no tree needs."""
    from mondrianlearn.drift._adaptive import _first_point_needed

    X, y = _stream("c", n=3000, change=1000)
    model = MondrianForestClassifier(n_estimators=3, random_state=0, drift="adwin")
    model.partial_fit(X[:20], y[:20])
    for i in range(20, len(y)):
        model.partial_fit(X[i:i + 1], y[i:i + 1])
        state = model._drift_state
        kept = _first_point_needed(model, state)
        state._first_point = None
        assert kept == _first_point_needed(model, state)
    assert state.n_events > 3
    assert state.store_offset > 500  # points dropped
    assert model._store.n == model.n_samples_seen_ - state.store_offset
    _check_point_lists(model)


def _check_point_lists(model, required=True):
    """Every tree that keeps point lists refers only to points still in the store,
    and each of its leaves' lists holds as many points as the leaf (``required``:
    some tree has such lists); returns the number of leaves checked."""
    checked = 0
    for tree in list(model.trees_) + model._drift_state.background:
        if not tree.keep_samples:
            continue
        a = tree.arrays
        for leaf in np.flatnonzero(a.left[: tree.n_nodes] < 0):
            count, s = 0, a.leaf_head[leaf]
            while s >= 0:
                assert s < model._store.n
                count += 1
                s = tree.sample_next[s]
            assert count == a.n_points[leaf]
            checked += 1
    assert checked > 0 or not required
    return checked


def test_drift_switched_on_after_the_store_was_released():
    """A stationary forest under ``max_nodes`` releases its store once every tree
    is full; drift adaptation switched on later counts stream rows from there."""
    X, y = _stream("c", n=6000, change=3000)
    model = MondrianForestClassifier(n_estimators=3, max_nodes=41, random_state=0)
    model.fit(X[:2000], y[:2000])
    assert model._store.n < 2000  # released, then filled again
    model.set_params(drift="adwin")
    checked = 0
    for start in range(2000, 6000, 250):
        model.partial_fit(X[start:start + 250], y[start:start + 250])
        assert model._store.n == model.n_samples_seen_ - model._drift_state.store_offset
        # (all trees may be full, or background trees empty, after a batch)
        checked += _check_point_lists(model, required=False)
    assert checked > 0
    replaced = model.drift_events_
    assert np.any(np.isin(replaced["kind"], ["drift", "swap"]) & (replaced["row"] >= 3000))


@pytest.mark.parametrize("Est, task", CASES)
def test_max_nodes_bounds_trees_and_store(Est, task):
    """Under a node budget, a full tree keeps no point list: the store holds the
    points since the oldest tree still growing, not the stream."""
    X, y = _stream(task, n=12000, change=4000)
    model = Est(n_estimators=3, max_nodes=101, random_state=0, drift="adwin")
    held = []
    for start in range(0, len(y), 500):
        model.partial_fit(X[start:start + 500], y[start:start + 500])
        held.append(model._store.n)
    state = model._drift_state
    trees = list(model.trees_) + list(state.background)
    assert max(tree.n_nodes for tree in trees) <= 101
    assert max(tree.capacity for tree in trees) <= 101
    assert len(model.drift_events_) > 0
    # A tree that took over while small (pure leaves pause) keeps its points until
    # it fills or is replaced: the store holds at most the rows since then, and
    # falls back once every tree is full.
    assert max(held) <= 4000 and held[-1] <= 1000  # of 12,000 rows
    assert model.n_samples_seen_ == len(y)


def test_new_feature_units_rescale_the_background_trees():
    """A feature whose range keeps growing changes its unit while background
    trees learn: every tree's boxes stay within the rows' range in the current
    units (a background tree left in the old units would stick out)."""
    rng = np.random.RandomState(0)
    n = 3000
    X = rng.uniform(size=(n, 2))
    X[:, 1] *= np.linspace(1.0, 64.0, n)  # the unit of feature 1 doubles six times
    y = (X[:, 0] > 0.5).astype(int)
    y[1500:] = 1 - y[1500:]
    model = MondrianForestClassifier(n_estimators=4, random_state=0, drift="adwin")
    checked = 0
    for start in range(0, n, 100):
        model.partial_fit(X[start:start + 100], y[start:start + 100])
        state = model._drift_state
        low, high = model._feature_range
        for t, tree in enumerate(list(model.trees_) + state.background):
            if tree.n_nodes == 0:
                continue
            root = tree.arrays.meta[1]
            lower, upper = node_boxes(tree.arrays, model._store.X)
            # stored boxes are rounded outward to float32 (engine.boxes)
            assert np.all(lower[root] >= rounded_down(low))
            assert np.all(upper[root] <= rounded_up(high))
            checked += t >= model.n_estimators
    assert checked > 0  # background trees were checked
    assert model.feature_scale_[1] == 64.0


@pytest.mark.parametrize("Est, task", CASES)
def test_new_units_re_sample_the_trees_while_every_tree_holds_every_row(Est, task):
    """Until a tree starts later than the others (the first challenger, or a
    replacement), new feature units re-sample the trees on the stored points, as
    the stationary forest does: with no event at all, the two forests are the
    same, bit for bit; after the first challenger, units rescale the trees."""
    X, y = _stream(task, n=600, change=600, scales=(1.0, 100.0, 0.01))
    X[:, 1] *= np.linspace(1.0, 16.0, 600)  # the unit of feature 1 doubles late too
    quiet = {"first_challenge": -1, "warning_delta": 1e-9, "drift_delta": 1e-9}
    stationary = Est(n_estimators=3, random_state=2, **_drift_smoothing(Est))
    adaptive = Est(n_estimators=3, random_state=2, drift=_plain_mean(Est, **quiet))
    default = Est(n_estimators=3, random_state=2, drift=_plain_mean(Est))
    out = _out(stationary)
    for i in range(600):
        for model in (stationary, adaptive, default):
            model.partial_fit(X[i:i + 1], y[i:i + 1])
        if i < 90:  # before the first challenger (first_challenge: 100)
            assert_array_equal(getattr(default, out)(X[:50]), getattr(stationary, out)(X[:50]))
    assert len(adaptive.drift_events_) == 0
    assert_array_equal(getattr(adaptive, out)(X), getattr(stationary, out)(X))
    assert default._drift_state.n_events > 0  # challengers started: rescaled since
    assert default.feature_scale_[1] == stationary.feature_scale_[1]
    assert np.all(np.isfinite(getattr(default, out)(X)))


def test_switching_drift_off_after_learning_with_it_is_an_error():
    X, y = _stream("c", n=600, change=300)
    model = MondrianForestClassifier(n_estimators=3, random_state=0, drift="adwin")
    model.fit(X[:400], y[:400])
    proba = model.predict_proba(X)
    model.set_params(drift=None)
    held = model._store.n
    for rows in (slice(400, 401), slice(400, 600)):  # the fast path and the full path
        with pytest.raises(ValueError, match="drift=None on a model that learned"):
            model.partial_fit(X[rows], y[rows])
    assert model._store.n == held  # nothing was stored
    assert_array_equal(model.predict_proba(X), proba)
    model.fit(X, y)
    assert "_drift_state" not in model.__dict__
    assert_array_equal(model.predict_proba(X), MondrianForestClassifier(
        n_estimators=3, random_state=0).fit(X, y).predict_proba(X))


# ------------------------------------------------------------- conventions
def _expected_failed_checks(estimator):
    # As for AMF with drift (tests/test_drift.py): the adaptive forest learns the
    # rows in their order (its trees grow point by point, its detectors read the
    # stream), where the stationary forest is sampled in batch.
    return {"check_sample_weight_equivalence_on_dense_data":
            "online model: repeating a row elsewhere in the stream differs from weighting it"}


@parametrize_with_checks(
    [MondrianForestClassifier(n_estimators=3, random_state=0, drift="adwin"),
     MondrianForestRegressor(n_estimators=3, random_state=0, drift="adwin")],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_conventions_with_drift(estimator, check):
    check(estimator)


# ------------------------------------------------------------------- river
def _river_cases():
    river_checks = pytest.importorskip("river.checks")
    from mondrianlearn import river as mlr

    for cls in (mlr.MondrianForestClassifier, mlr.MondrianForestRegressor):
        for check in river_checks.yield_checks(cls(n_estimators=3, drift="adwin")):
            yield pytest.param(cls, check, id=f"{cls.__name__}-{check.__name__}")


@pytest.mark.parametrize("cls, check", list(_river_cases()))
def test_river_adapters_with_drift_pass_river_checks(cls, check):
    model = cls(n_estimators=3, drift="adwin", seed=42)
    if check.__name__ in model._unit_test_skips():
        pytest.skip("declared in _unit_test_skips")
    check(model.clone())


def test_river_adapter_drift_events_and_recovery():
    from mondrianlearn import river as mlr

    X, y = _stream("c", n=3000, change=1500)
    models = {drift: mlr.MondrianForestClassifier(n_estimators=5, seed=0, drift=drift)
              for drift in (None, "adwin")}
    hits = {drift: [] for drift in models}
    for x_row, label in zip(X, y):
        x = {"a": x_row[0], "b": x_row[1], "c": x_row[2]}
        for drift, model in models.items():
            hits[drift].append(model.predict_one(x) == label)
            model.learn_one(x, int(label))
    after = slice(2000, None)
    assert np.mean(hits["adwin"][after]) > 0.9 > np.mean(hits[None][after])
    events = models["adwin"].drift_events_
    assert np.any((events["row"] >= 1500) & np.isin(events["kind"], ["drift", "swap"]))
