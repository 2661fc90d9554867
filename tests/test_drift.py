"""Drift adaptation (the ``drift`` parameter, :mod:`mondrianlearn.drift`).

The stationary models are untouched when ``drift`` is None (their exactness tests
run unchanged elsewhere); here: the adaptive forests recover from an abrupt change
where the stationary ones do not, record what they did, and keep the library's
guarantees (same model however the stream is cut, across ``n_jobs``, through a
pickle, under ``max_nodes``). The compiled ADWIN detectors are checked on
streams with and without a change of mean.
"""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.utils.estimator_checks import parametrize_with_checks

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianForestClassifier,
    MondrianForestRegressor,
)
from mondrianlearn.drift import (
    DEFAULTS,
    combine_tree_forecasts,
    correction_terms,
    drift_event_markers,
    drift_settings,
    mark_drift_events,
    tree_losses,
)
from mondrianlearn.drift._detectors import adwin_mean, adwin_states, adwin_update, adwin_width
from mondrianlearn.utils.fast_path import FAST_MAX_ROWS

N_ROWS, CHANGE = 4000, 2000


def _abrupt_classification(seed=0, n=N_ROWS, change=CHANGE):
    """Two features; the label is ``x0 > 0.5``, flipped from row ``change`` on."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 3))
    y = (X[:, 0] > 0.5).astype(int)
    y[change:] = 1 - y[change:]
    return X, y


def _abrupt_regression(seed=0, n=N_ROWS, change=CHANGE):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 3))
    y = 10.0 * X[:, 0] + 0.1 * rng.randn(n)
    y[change:] = 8.0 - 2.0 * y[change:]
    return X, y


def _prequential(model, X, y, batch=50, **first):
    """Test-then-train in mini-batches: per-row hits (or absolute errors) of the
    prediction made before the row was learned (the first batch: NaN)."""
    scores = np.full(len(y), np.nan)
    for start in range(0, len(y), batch):
        rows = slice(start, start + batch)
        if start:
            pred = model.predict(X[rows])
            scores[rows] = (pred == y[rows]) if y.dtype.kind in "iub" else np.abs(pred - y[rows])
        model.partial_fit(X[rows], y[rows], **(first if start == 0 else {}))
    return scores


# ---------------------------------------------------------------------- settings
def test_settings_values():
    assert drift_settings(None) is None
    assert drift_settings("adwin") == DEFAULTS
    changed = drift_settings({"drift_delta": 0.001})
    assert changed["drift_delta"] == 0.001 and changed["warning_delta"] == DEFAULTS["warning_delta"]


@pytest.mark.parametrize("drift, message", [
    ("ddm", "drift"),
    ({"no_such_setting": 1}, "Unknown drift settings"),
    ({"drift_delta": 0.0}, "drift_delta"),
    ({"drift_delta": 2}, "drift_delta"),
    ({"swap_min": 1.5}, "swap_min"),
    ({"challenge_growth": 1.0}, "challenge_growth"),
    ({"weight_floor": 0.0}, "weight_floor"),
    ({"bagging": -1.0}, "bagging"),
    ({"trim": 0.5}, "trim"),
    ({"trim": -0.1}, "trim"),
    ({"loss_weighting": -1.0}, "loss_weighting"),
    ({"loss_weighting": np.inf}, "loss_weighting"),
    ({"linear_rate": 1.5}, "linear_rate"),
    ({"linear_rate": -0.1}, "linear_rate"),
    (3, "drift"),
])
@pytest.mark.parametrize("Est", [AMFClassifier, AMFRegressor])
def test_bad_drift_values_fail_clearly(Est, drift, message):
    X, y = _abrupt_classification(n=50)
    with pytest.raises(ValueError, match=message):
        Est(n_estimators=2, drift=drift, random_state=0).fit(X, y)


# ---------------------------------------------------------------- stationary
@pytest.mark.parametrize("Est, data", [(AMFClassifier, _abrupt_classification),
                                       (AMFRegressor, _abrupt_regression)])
def test_drift_none_is_the_stationary_model(Est, data):
    """``drift=None`` (the default) gives the model of before, bit for bit: the
    default is None and none of the drift code runs."""
    X, y = data(n=600)
    assert Est().drift is None
    default = Est(n_estimators=3, random_state=1).fit(X[:400], y[:400])
    explicit = Est(n_estimators=3, random_state=1, drift=None).fit(X[:400], y[:400])
    for model in (default, explicit):
        for start in range(400, 600, 7):
            model.partial_fit(X[start:start + 7], y[start:start + 7])
        assert "_drift_state" not in model.__dict__
        with pytest.raises(AttributeError):
            _ = model.drift_events_
    out = "predict_proba" if Est is AMFClassifier else "predict"
    assert_array_equal(getattr(default, out)(X), getattr(explicit, out)(X))
    for a, b in zip(default.trees_, explicit.trees_):
        assert_array_equal(a.arrays.threshold[: a.n_nodes], b.arrays.threshold[: b.n_nodes])


# ------------------------------------------- the regressors' combined forecast
def _reference_combination(values, losses, trim, eta):
    """The trimmed mean weighted by recent losses, written out row by row."""
    n_trees = values.shape[0]
    k = min(int(np.floor(trim * n_trees)), (n_trees - 1) // 2)
    known = np.isfinite(losses)
    filled = np.where(known, losses, losses[known].mean() if known.any() else 0.0)
    weights = np.exp(-eta * filled)
    out = []
    for column in values.T:
        kept = np.argsort(column, kind="stable")[k:n_trees - k]
        out.append(np.sum(weights[kept] * column[kept]) / np.sum(weights[kept]))
    return np.array(out)


@pytest.mark.parametrize("n_trees", [1, 2, 3, 10, 21])
@pytest.mark.parametrize("trim, eta", [(0.0, 0.0), (0.1, 0.0), (0.0, 15.0), (0.1, 15.0),
                                       (0.3, 40.0)])
def test_combined_forecast_is_the_weighted_trimmed_mean(n_trees, trim, eta):
    rng = np.random.RandomState(n_trees)
    values = rng.normal(size=(n_trees, 50))
    values[:, :10] = np.round(values[:, :10])  # ties among the trees
    losses = rng.uniform(size=n_trees)
    losses[0] = np.nan  # a tree just swapped in: weighs as the others on average
    settings = drift_settings({"trim": trim, "loss_weighting": eta})
    combined = combine_tree_forecasts(values, losses, settings)
    assert_allclose(combined, _reference_combination(values, losses, trim, eta),
                    rtol=1e-12, atol=1e-12)
    if trim == 0.0 and eta == 0.0:
        assert_allclose(combined, values.mean(axis=0), rtol=1e-12, atol=1e-12)


def test_combination_reads_the_detectors_and_skips_absent_trees():
    """The compiled combination of the one-row path: losses read off the warning
    detectors' windows (an empty window: the mean of the others), and a tree whose
    forecasts are NaN (a Mondrian forest's tree without points) left out."""
    from mondrianlearn.drift._detectors import ADWIN_SIZE
    from mondrianlearn.drift._kernels import combine_forecasts as combine_kernel

    rng = np.random.RandomState(0)
    values = rng.normal(size=(7, 30))
    values[4] = np.nan  # absent
    detectors = np.zeros((7, 2, ADWIN_SIZE))
    widths = np.array([10.0, 0.0, 50.0, 3.0, 8.0, 20.0, 1.0])  # tree 1: empty window
    detectors[:, 0, 0] = widths
    detectors[:, 0, 1] = widths * rng.uniform(size=7)
    losses, out = np.empty(7), np.empty(30)
    combine_kernel(values, detectors, losses, 0.2, 15.0, np.empty(14, np.int64),
                   np.empty(7), out)
    present = [0, 1, 2, 3, 5, 6]
    expected_losses = np.where(widths > 0, detectors[:, 0, 1] / np.maximum(widths, 1), np.nan)
    assert_allclose(losses[present], expected_losses[present], rtol=0, atol=0, equal_nan=True)
    assert_allclose(out, _reference_combination(values[present], expected_losses[present],
                                                0.2, 15.0), rtol=1e-12, atol=1e-12)


def test_combined_forecast_follows_the_tree_that_does_well_lately():
    values = np.array([[1.0], [5.0], [9.0]])
    settings = drift_settings({"trim": 0.0, "loss_weighting": 50.0})
    assert combine_tree_forecasts(values, np.array([0.1, 0.5, 0.5]), settings)[0] < 1.01
    # Trimming drops the extreme forecasts whatever their weights.
    settings = drift_settings({"trim": 0.34, "loss_weighting": 50.0})
    assert combine_tree_forecasts(values, np.array([0.1, 0.5, 0.5]), settings)[0] == 5.0
    # Weights that all underflow leave the plain mean of the trees kept.
    settings = drift_settings({"trim": 0.34, "loss_weighting": 1e6})
    assert combine_tree_forecasts(values, np.array([0.0, 1.0, 1.0]), settings)[0] == 5.0


def test_regressor_predicts_its_trees_combined():
    """A drift-adaptive AMF regressor predicts its foreground trees' means combined
    with their recent losses, plus its gated linear correction; plain settings
    give the plain mean of the trees."""
    X, y = _abrupt_regression(n=2400, change=1200)
    model = AMFRegressor(n_estimators=6, random_state=4, drift="adwin").fit(X, y)
    state = model._drift_state
    losses = tree_losses(state)
    assert np.isfinite(losses).sum() >= 3 and np.ptp(losses[np.isfinite(losses)]) > 0
    X_test = np.random.RandomState(2).uniform(size=(300, 3))
    rows = model._check_predict_input(X_test)
    means, variances = model._tree_forecasts(rows, True)
    assert means.shape == variances.shape == (6, 300) and np.all(variances >= 0)
    expected = combine_tree_forecasts(means - model._y_offset, losses, state.settings)
    weight, correction = correction_terms(state, rows)
    assert 0.0 < weight < 1.0 and np.ptp(correction) > 0.0
    assert_allclose(model.predict(X_test), model._y_offset + expected + weight * correction,
                    rtol=0, atol=1e-9)
    assert not np.allclose(model.predict(X_test), means.mean(axis=0), rtol=0, atol=1e-6)
    model.set_params(drift={"trim": 0.0, "loss_weighting": 0.0, "linear_rate": 0.0})
    assert_allclose(model.predict(X_test), means.mean(axis=0), rtol=0, atol=1e-9)
    assert correction_terms(model._drift_state, rows) is None  # dropped with its setting
    mean, std = model.predict(X_test, return_std=True)
    expected_std = np.sqrt(variances.mean(axis=0) + means.var(axis=0) / 6)
    assert_allclose(std, expected_std, rtol=1e-9, atol=1e-12)


def _one_row_mae(model, X, y):
    """Progressive MAE, one row at a time (the first row: no prediction)."""
    errors = []
    for i in range(len(y)):
        if i:
            errors.append(abs(model.predict(X[i:i + 1])[0] - y[i]))
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    return float(np.mean(errors))


@pytest.mark.parametrize("Est", [AMFRegressor, MondrianForestRegressor])
def test_regressor_linear_correction_learns_what_the_trees_miss(Est):
    """The linear correction of a drift-adaptive regressor learns the error of the
    forest's forecast: on a target with a linear part, before and after a change,
    the forecasts are far better, while the trees learn exactly as without it
    (they learn ``y``; only the forest's forecast adds the correction);
    ``linear_rate=0`` has none. The correction and its gate are pickled and go on
    learning as they were."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(3000, 6))
    y = X[:, :4] @ [10.0, -8.0, 6.0, 4.0] + np.sin(6.0 * X[:, 4]) + 0.1 * rng.randn(3000)
    y[1500:] = -y[1500:]
    corrected = Est(n_estimators=4, random_state=0, drift="adwin")
    plain = Est(n_estimators=4, random_state=0, drift={"linear_rate": 0.0})
    mae_corrected, mae_plain = _one_row_mae(corrected, X, y), _one_row_mae(plain, X, y)
    assert mae_corrected < 0.85 * mae_plain  # (0.77 for AMF, 0.75 for MF measured)
    assert plain._drift_state.correction.shape == (4, 0)
    state = corrected._drift_state
    assert state.correction.shape == (4, 7)
    rows = corrected._check_predict_input(X[:100])
    assert correction_terms(state, rows)[0] > 0.5  # the gate trusts it here
    assert_array_equal(corrected._tree_forecasts(rows, False)[0],
                       plain._tree_forecasts(rows, False)[0])
    assert_array_equal(corrected.drift_events_, plain.drift_events_)
    restored = pickle.loads(pickle.dumps(corrected))
    for model in (corrected, restored):
        model.partial_fit(X[:200], y[:200])
    assert_array_equal(restored.predict(X[:100]), corrected.predict(X[:100]))
    assert_array_equal(restored._drift_state.gate, corrected._drift_state.gate)


def test_regressor_linear_correction_gate_holds_it_back_where_it_does_not_help():
    """Where the forest's error has no linear part the gate weighs the correction
    down, and the forecasts are no worse than without it (to within noise)."""
    rng = np.random.RandomState(1)
    X = rng.uniform(size=(3000, 2))
    y = np.where((X[:, 0] > 0.5) ^ (X[:, 1] > 0.5), 1.0, -1.0) + 0.5 * rng.standard_t(2, 3000)
    corrected = AMFRegressor(n_estimators=4, random_state=0, drift="adwin")
    plain = AMFRegressor(n_estimators=4, random_state=0, drift={"linear_rate": 0.0})
    assert _one_row_mae(corrected, X, y) < 1.01 * _one_row_mae(plain, X, y)
    assert correction_terms(corrected._drift_state, X[:5])[0] < 0.5


def test_regressor_linear_correction_follows_new_feature_units():
    """New units and a new origin of the features (``_change_units``, as a row past
    the range or a merge makes them) leave the correction's forecasts of the same
    raw rows as they were, and the forest's to within rounding."""
    rng = np.random.RandomState(2)
    X = rng.uniform(size=(800, 3))
    y = 5.0 * X[:, 0] + np.sin(4.0 * X[:, 1]) + 0.1 * rng.randn(800)
    model = AMFRegressor(n_estimators=3, random_state=1, drift="adwin").fit(X[:600], y[:600])
    X_test = X[600:700]
    weight, before = correction_terms(model._drift_state, model._check_predict_input(X_test))
    predicted = model.predict(X_test)
    units = model._units
    model._change_units(units[0] * np.array([4.0, 1.0, 2.0]),
                        origin=units[2] + np.array([0.5, -0.25, 2.0]))
    weight_after, after = correction_terms(model._drift_state,
                                           model._check_predict_input(X_test))
    assert weight_after == weight and np.ptp(before) > 1.0
    assert_allclose(after, before, rtol=0, atol=1e-9)
    assert_allclose(model.predict(X_test), predicted, rtol=0, atol=1e-6)


def test_regressor_saved_before_the_linear_correction_goes_on_with_it():
    """A drift state saved before the correction existed loads without one (its
    forecasts as saved), and the current settings give it one from then on."""
    from mondrianlearn.drift._adaptive import DriftState

    X, y = _abrupt_regression(n=600, change=300)
    model = AMFRegressor(n_estimators=3, random_state=0, drift={"linear_rate": 0.0}).fit(X, y)
    predicted = model.predict(X[:50])
    saved = model._drift_state.__getstate__()
    for name in ("correction", "gate", "forecasts"):
        del saved[name]
    saved["settings"] = {k: v for k, v in saved["settings"].items() if k != "linear_rate"}
    old = DriftState.__new__(DriftState)
    old.__setstate__(saved)
    assert old.correction.shape == (4, 0) and old.settings["linear_rate"] == 0.0
    model._drift_state = old
    model.set_params(drift="adwin")
    assert_array_equal(model.predict(X[:50]), predicted)  # a new correction knows nothing
    assert model._drift_state.correction.shape == (4, 4)
    model.partial_fit(X[:100], y[:100])
    assert np.any(model._drift_state.correction[0] != 0.0)


# ------------------------------------------------------------------ recovery
def test_classifier_recovers_from_an_abrupt_change():
    X, y = _abrupt_classification()
    stationary = _prequential(AMFClassifier(random_state=0), X, y, classes=[0, 1])
    adaptive_model = AMFClassifier(random_state=0, drift="adwin")
    adaptive = _prequential(adaptive_model, X, y, classes=[0, 1])
    after = slice(CHANGE + 500, None)
    # Before the change both learn the same concept equally well.
    assert np.nanmean(stationary[:CHANGE]) > 0.95
    assert np.nanmean(adaptive[:CHANGE]) > 0.95
    # After it, the stationary forest keeps predicting the old labels; the
    # adaptive one has replaced its trees.
    assert np.mean(stationary[after]) < 0.5
    assert np.mean(adaptive[after]) > 0.95
    events = adaptive_model.drift_events_
    assert events.dtype.names == ("row", "tree", "kind")
    replaced = events[np.isin(events["kind"], ["drift", "swap"])]
    after_change = replaced[replaced["row"] >= CHANGE]
    # Every tree was replaced after the change, within a few hundred rows.
    assert set(after_change["tree"]) == set(range(adaptive_model.n_estimators))
    first = {t: after_change["row"][after_change["tree"] == t].min() for t in range(10)}
    assert max(first.values()) < CHANGE + 500
    assert np.all(np.diff(events["row"]) >= 0)
    assert set(events["kind"]) <= {"warning", "challenge", "drift", "swap"}


def test_regressor_recovers_from_an_abrupt_change():
    X, y = _abrupt_regression()
    stationary = _prequential(AMFRegressor(random_state=0), X, y)
    adaptive_model = AMFRegressor(random_state=0, drift="adwin")
    adaptive = _prequential(adaptive_model, X, y)
    after = slice(CHANGE + 500, None)
    assert np.mean(adaptive[after]) < 0.5 * np.mean(stationary[after])
    replaced = adaptive_model.drift_events_
    replaced = replaced[np.isin(replaced["kind"], ["drift", "swap"])]
    assert np.any(replaced["row"] >= CHANGE)


# ------------------------------------------------------------- guarantees
@pytest.mark.parametrize("Est, data", [(AMFClassifier, _abrupt_classification),
                                       (AMFRegressor, _abrupt_regression)])
def test_any_cut_of_the_stream_gives_the_same_model(Est, data):
    """fit, partial_fit in uneven mini-batches and one row at a time give the same
    forest (same events, same predictions, bit for bit)."""
    X, y = data(n=2600, change=1300)
    whole = Est(n_estimators=4, random_state=3, drift="adwin").fit(X, y)
    rng = np.random.RandomState(0)
    cuts = np.unique(np.concatenate([[0, len(y)], rng.randint(1, len(y), 40),
                                     np.arange(1290, 1330)]))
    pieces = Est(n_estimators=4, random_state=3, drift="adwin")
    for a, b in zip(cuts[:-1], cuts[1:]):
        pieces.partial_fit(X[a:b], y[a:b])
    assert len(whole.drift_events_) > 4
    assert_array_equal(whole.drift_events_, pieces.drift_events_)
    out = "predict_proba" if Est is AMFClassifier else "predict"
    assert_array_equal(getattr(whole, out)(X), getattr(pieces, out)(X))
    # One-row calls (the compiled fast path) and a large call (the full path) agree.
    large = getattr(whole, out)(X[:FAST_MAX_ROWS + 50])
    for i in range(20):
        assert_array_equal(getattr(whole, out)(X[i:i + 1])[0], large[i])


@pytest.mark.parametrize("Est, data", [(AMFClassifier, _abrupt_classification),
                                       (AMFRegressor, _abrupt_regression),
                                       (MondrianForestClassifier, _abrupt_classification)])
def test_one_row_calls_prepared_for_drift_adaptation_change_nothing(Est, data, monkeypatch):
    """One-row calls of a drift-adaptive forest leave their compiled call prepared
    (``drift.prepare_learning``; AMF's predictions too): the next row skips the fast
    path's Python calls, and learning goes on in Python from any event. Against a
    twin whose rows all go through scikit-learn's validation, with what may change
    between calls: units that move
    (a widening range), new drift settings, a refused row, a pickle, another model
    learning in between."""
    from mondrianlearn.utils.fast_path import FastPathMixin

    X, y = data(n=2000, change=1000)
    X = X * np.linspace(1.0, 3.0, len(y))[:, None]
    model, twin, other = (Est(n_estimators=4, random_state=seed, drift="adwin")
                          .partial_fit(X[:300], y[:300]) for seed in (3, 3, 4))
    calls = []
    original = FastPathMixin._fast_input

    def counted(self, X, learning=False):
        if self.__dict__.get("_counted"):
            calls.append(learning)
        return original(self, X, learning)

    monkeypatch.setattr(FastPathMixin, "_fast_input", counted)
    model._counted = True  # kept through the pickle
    out = "predict" if Est is AMFRegressor else "predict_proba"
    for i in range(300, len(y)):
        if i == 900:
            model.set_params(drift={"swap_delta": 0.05})
            twin.set_params(drift={"swap_delta": 0.05})
        if i == 1200:
            bad = X[i:i + 1].copy()
            bad[0, 2] = np.inf
            before = getattr(model, out)(X[::50])
            with pytest.raises(ValueError):
                model.partial_fit(bad, y[i:i + 1])
            assert_array_equal(getattr(model, out)(X[::50]), before)
        if i == 1500:
            model = pickle.loads(pickle.dumps(model))
            twin = pickle.loads(pickle.dumps(twin))
        model.partial_fit(X[i:i + 1], y[i:i + 1])
        twin.partial_fit(X[i:i + 1].tolist(), y[i:i + 1].tolist())
        other.partial_fit(X[(7 * i) % 300:(7 * i) % 300 + 1], y[(7 * i) % 300:(7 * i) % 300 + 1])
        # one-row predictions (AMF's prepared: ``drift.prepare_prediction``) as the
        # validated path gives them
        forecast = getattr(model, out)(X[i - 299:i - 298])
        if i % 7 == 0:
            assert_array_equal(forecast, getattr(twin, out)(X[i - 299:i - 298].tolist()))
    # the model's calls go through the fast path's checks after an event or a tree
    # that grew, and once after each change; the others take the prepared call
    n_rows = len(y) - 300
    assert 0 < calls.count(True) < 0.1 * n_rows
    if Est is not MondrianForestClassifier:  # (whose drift prediction is not prepared)
        assert 0 < calls.count(False) < 0.25 * n_rows
        assert model._fast_scratch.predict_plan is not None
    assert len(model.drift_events_) > 5
    assert_array_equal(model.drift_events_, twin.drift_events_)
    assert model.n_samples_seen_ == twin.n_samples_seen_ == len(y)
    assert_array_equal(getattr(model, out)(X), getattr(twin, out)(X))
    assert model._fast_scratch.learn_plan is not None


@pytest.mark.parametrize("Est, data", [(AMFClassifier, _abrupt_classification),
                                       (AMFRegressor, _abrupt_regression)])
def test_n_jobs_does_not_change_the_model(Est, data):
    X, y = data(n=2400, change=1200)
    models = [Est(n_estimators=4, random_state=5, drift="adwin", n_jobs=n_jobs).fit(X, y)
              for n_jobs in (1, 2)]
    assert_array_equal(models[0].drift_events_, models[1].drift_events_)
    out = "predict_proba" if Est is AMFClassifier else "predict"
    X_test = np.random.RandomState(1).uniform(-0.2, 1.2, size=(FAST_MAX_ROWS + 300, 3))
    assert_array_equal(getattr(models[0], out)(X_test), getattr(models[1], out)(X_test))


@pytest.mark.parametrize("Est, data", [(AMFClassifier, _abrupt_classification),
                                       (AMFRegressor, _abrupt_regression)])
def test_pickle_round_trip_predicts_and_learns_identically(Est, data):
    X, y = data(n=2400, change=1200)
    model = Est(n_estimators=4, random_state=2, drift="adwin").fit(X[:1500], y[:1500])
    loaded = pickle.loads(pickle.dumps(model))
    out = "predict_proba" if Est is AMFClassifier else "predict"
    assert_array_equal(getattr(model, out)(X), getattr(loaded, out)(X))
    assert_array_equal(model.drift_events_, loaded.drift_events_)
    for m in (model, loaded):
        for start in range(1500, 2400, 30):
            m.partial_fit(X[start:start + 30], y[start:start + 30])
    assert len(model.drift_events_) > 0
    assert_array_equal(model.drift_events_, loaded.drift_events_)
    assert_array_equal(getattr(model, out)(X), getattr(loaded, out)(X))


@pytest.mark.parametrize("Est, data", [(AMFClassifier, _abrupt_classification),
                                       (AMFRegressor, _abrupt_regression)])
def test_max_nodes_bounds_every_tree(Est, data):
    X, y = data(n=6000, change=3000)
    model = Est(n_estimators=3, max_nodes=101, random_state=0, drift="adwin")
    for start in range(0, len(y), 500):
        model.partial_fit(X[start:start + 500], y[start:start + 500])
    state = model._drift_state
    trees = list(model.trees_) + list(state.background)
    assert max(tree.n_nodes for tree in trees) <= 101
    assert max(tree.capacity for tree in trees) <= 101
    assert len(model.drift_events_) > 0


def test_features_weights_favour_the_useful_feature():
    """New trees cut the feature that carries the label more often (positive
    control: it is one of three)."""
    X, y = _abrupt_classification(n=3000, change=3000)
    model = AMFClassifier(n_estimators=5, random_state=0, drift="adwin").fit(X, y)
    state = model._drift_state
    later = np.flatnonzero(state.born[: model.n_estimators] > 0)
    assert later.size > 0  # some trees were started during the stream
    weights = state.scale[later]
    assert np.all(weights[:, 0] == 1.0)
    assert np.all(weights[:, 1:] < 0.5)


# ------------------------------------------------------------------- ADWIN
def test_adwin_detects_a_change_in_mean_and_not_noise():
    rng = np.random.RandomState(0)
    state = adwin_states(1)[0]
    stable = (rng.uniform(size=3000) < 0.2).astype(float)
    hits = [i for i, v in enumerate(stable) if adwin_update(state, v, 0.002, False)]
    assert hits == []  # no false alarm on 3000 stationary values at delta = 0.002
    assert adwin_width(state) == 3000
    assert abs(adwin_mean(state) - stable.mean()) < 1e-12
    changed = (rng.uniform(size=2000) < 0.6).astype(float)
    hits = [i for i, v in enumerate(changed) if adwin_update(state, v, 0.002, False)]
    assert hits and hits[0] < 200  # detected within a few clocks
    assert adwin_width(state) < 2500  # most old values were dropped
    assert abs(adwin_mean(state) - 0.6) < 0.1


def test_adwin_upward_only_ignores_a_decrease():
    rng = np.random.RandomState(1)
    values = np.concatenate([(rng.uniform(size=1500) < 0.6), (rng.uniform(size=1500) < 0.1)])
    both, up = adwin_states(2)
    assert any(adwin_update(both, float(v), 0.002, False) for v in values)
    assert not any(adwin_update(up, float(v), 0.002, True) for v in values)


def test_adwin_bucket_statistics_match_the_window():
    """Width, mean and variance kept by the exponential histogram equal those of
    the values it summarises (no cut: a constant-mean stream)."""
    rng = np.random.RandomState(2)
    values = rng.normal(size=5000)
    state = adwin_states(1)[0]
    for v in values:
        adwin_update(state, v, 1e-9, False)
    assert adwin_width(state) == 5000
    np.testing.assert_allclose(adwin_mean(state), values.mean(), rtol=1e-9)
    np.testing.assert_allclose(state[2] / 5000, values.var(), rtol=1e-9)


# ---------------------------------------------------------------- plotting
def test_event_markers_count_replacements_per_row():
    events = np.array([(5, 0, "warning"), (9, 1, "drift"), (9, 2, "swap"), (12, 0, "drift")],
                      dtype=[("row", np.int64), ("tree", np.int64), ("kind", "U9")])
    rows, counts = drift_event_markers(events)
    assert_array_equal(rows, [9, 12])
    assert_array_equal(counts, [2, 1])
    rows, _ = drift_event_markers(events, kinds=("warning",))
    assert_array_equal(rows, [5])


def test_mark_drift_events_draws_one_line_per_row():
    matplotlib = pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    X, y = _abrupt_classification()
    model = AMFClassifier(n_estimators=4, random_state=0, drift="adwin").fit(X, y)
    rows, _ = drift_event_markers(model.drift_events_)
    fig, ax = plt.subplots()
    try:
        marked = mark_drift_events(ax, model.drift_events_, label="trees replaced")
        assert_array_equal(marked, rows)
        assert len(ax.lines) == len(rows) > 0
    finally:
        plt.close(fig)
    assert matplotlib.get_backend()  # the backend is left as it was


# ------------------------------------------------------------- conventions
def _expected_failed_checks(estimator):
    # As for the stationary AMF (tests/test_estimator_checks_amf.py): an online
    # model learns rows in their order.
    return {"check_sample_weight_equivalence_on_dense_data":
            "online model: repeating a row elsewhere in the stream differs from weighting it"}


@parametrize_with_checks(
    [AMFClassifier(random_state=0, drift="adwin"), AMFRegressor(random_state=0, drift="adwin")],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_conventions_with_drift(estimator, check):
    check(estimator)


# ------------------------------------------------------------------- river
def _river_cases():
    river_checks = pytest.importorskip("river.checks")
    from mondrianlearn import river as mlr

    for cls in (mlr.AMFClassifier, mlr.AMFRegressor):
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

    X, y = _abrupt_classification(n=3000, change=1500)
    models = {drift: mlr.AMFClassifier(n_estimators=5, seed=0, drift=drift)
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
    with pytest.raises(AttributeError):
        _ = models[None].drift_events_


def test_progressive_evaluation_and_plot_mark_the_replacements():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from mondrianlearn.evaluation import Learner, progressive_evaluation
    from mondrianlearn.plotting import plot_progressive

    X, y = _abrupt_classification(n=3000, change=1500)
    traces = progressive_evaluation(
        [Learner("AMF", AMFClassifier(n_estimators=4, random_state=0)),
         Learner("AMF drift", AMFClassifier(n_estimators=4, random_state=0, drift="adwin"))],
        X, y, batch_size=100, progress=False)
    assert traces[0].drift_events is None
    rows, _ = drift_event_markers(traces[1].drift_events)
    assert rows.size > 0
    fig = plot_progressive(traces, metric_name="accuracy")
    try:
        left, right = fig.axes
        assert len(right.lines) == 2
        assert len(left.lines) == 2 + rows.size  # one vertical line per marked row
        # The marks take the colour of their model's curve.
        assert left.lines[-1].get_color() == left.lines[1].get_color()
    finally:
        plt.close(fig)


def test_switching_drift_off_after_learning_with_it_is_an_error():
    X, y = _abrupt_classification(n=600, change=300)
    model = AMFClassifier(n_estimators=3, random_state=0, drift="adwin").fit(X[:400], y[:400])
    proba = model.predict_proba(X)
    model.set_params(drift=None)
    for rows in (slice(400, 401), slice(400, 600)):  # the fast path and the full path
        with pytest.raises(ValueError, match="drift=None on a model that learned"):
            model.partial_fit(X[rows], y[rows])
    # It still predicts as it did; fit starts a stationary model afresh.
    assert_array_equal(model.predict_proba(X), proba)
    model.fit(X, y)
    assert "_drift_state" not in model.__dict__
    assert_array_equal(model.predict_proba(X),
                       AMFClassifier(n_estimators=3, random_state=0).fit(X, y).predict_proba(X))


@pytest.mark.parametrize("Est", [AMFClassifier, AMFRegressor, MondrianForestClassifier,
                                 MondrianForestRegressor], ids=lambda c: c.__name__)
def test_new_drift_settings_keep_what_the_state_learned(Est):
    """``set_params(drift=...)`` between calls (or a model saved under other
    default settings) goes on with the new settings from the next row: the events,
    detectors and background trees stay; new trees follow the new settings (no
    challengers here, a stricter swap test)."""
    regression = Est in (AMFRegressor, MondrianForestRegressor)
    X, y = (_abrupt_regression if regression else _abrupt_classification)(n=3000, change=1500)
    model = Est(n_estimators=4, random_state=0, drift="adwin")
    for start in range(0, 2000, 100):
        model.partial_fit(X[start:start + 100], y[start:start + 100])
    state = model._drift_state
    events = model.drift_events_.copy()
    assert len(events) > 0
    background = list(state.background)
    new = {"first_challenge": -1, "swap_delta": 0.001, "warning_delta": 0.05}
    model.set_params(drift=new)
    model.partial_fit(X[2000:2001], y[2000:2001])
    assert model._drift_state is state
    assert state.settings == drift_settings(new)
    assert state.settings_array[2] == 0.001
    assert_array_equal(state.next_challenge, -1)
    assert_array_equal(model.drift_events_[: len(events)], events)
    assert all(a is b for a, b in zip(state.background, background))
    # From then on, the same as a model saved and loaded with these settings.
    saved = pickle.loads(pickle.dumps(model))
    for start in range(2001, 3000, 250):
        model.partial_fit(X[start:start + 250], y[start:start + 250])
        saved.partial_fit(X[start:start + 250], y[start:start + 250])
    assert not np.isin(model.drift_events_["kind"][len(events):], ["challenge"]).any()
    assert_array_equal(model.drift_events_, saved.drift_events_)
    assert_array_equal(model.predict(X[:200]), saved.predict(X[:200]))
    # Challengers switched back on start counting from the row they were switched on.
    model.set_params(drift="adwin")
    model.partial_fit(X[:1], y[:1])
    assert np.all(model._drift_state.next_challenge > 3000)
