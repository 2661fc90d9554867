"""``feature_scale="supervised"``: fixed scales learned from the labels of the first
batch (``utils.feature_scale.supervised_scales``)."""

import pickle

import numpy as np
import pytest

from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianForestClassifier,
    MondrianForestRegressor,
)
from mondrianlearn.utils.feature_scale import (
    SUPERVISED_FLOOR,
    SUPERVISED_MIN_ROWS,
    supervised_scales,
)

CLASSIFIERS = [MondrianForestClassifier, AMFClassifier]
REGRESSORS = [MondrianForestRegressor, AMFRegressor]


def _relevant_and_noise(n=600, n_noise=20, seed=0):
    """Two informative features among ``n_noise`` noise features, in other units."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(0, 1, (n, 2 + n_noise))
    X[:, 1] *= 1000.0
    y = (X[:, 0] + X[:, 1] / 1000.0 > 1.0).astype(int)
    return X, y


def test_scales_are_range_over_weight_with_a_floor():
    X, y = _relevant_and_noise()
    scales = supervised_scales(X, y, regression=False, random_state=0)
    span = X.max(axis=0) - X.min(axis=0)
    weights = span / scales
    assert weights.max() == pytest.approx(1.0)
    assert weights.min() >= SUPERVISED_FLOOR * (1 - 1e-12)
    # The two informative features weigh far more than any noise feature.
    assert weights[:2].min() > 3 * weights[2:].max()
    # Same seed, same scales.
    np.testing.assert_array_equal(scales, supervised_scales(X, y, False, random_state=0))


def test_scales_without_any_split_are_the_range():
    X = np.column_stack([np.linspace(0, 4, 50), np.full(50, 3.0)])
    scales = supervised_scales(X, np.zeros(50), regression=True, random_state=0)
    np.testing.assert_array_equal(scales, [4.0, 1.0])  # constant target; constant feature


@pytest.mark.parametrize("magnitude", [5e-324, 1e-300, 1.0, 1e300])
def test_scales_and_their_inverses_stay_finite_at_any_magnitude(magnitude):
    """Features of subnormal or huge values (found by the property tests): the pilot
    learns them (scikit-learn's trees read float32, where 1e300 overflows), and every
    scale is a positive float whose inverse is finite; the importances, hence the
    scales relative to the range, do not depend on the magnitude."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    scales = supervised_scales(X * magnitude, y, False, random_state=0)
    assert np.all(scales > 0) and np.all(np.isfinite(scales))
    assert np.all(np.isfinite(1.0 / scales))
    if 1e-300 <= magnitude <= 1e300:
        np.testing.assert_allclose(scales, supervised_scales(X, y, False, random_state=0)
                                   * magnitude, rtol=1e-12)


def test_regression_scales_do_not_depend_on_the_unit_of_the_target():
    """Targets of any usual scale give the same weights: a standard deviation of
    1e-100 used to give none (scikit-learn's trees do not split so small an
    impurity), so the scales fell back to the ranges."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(500, 5))
    y = np.sin(5 * X[:, 0]) + X[:, 1]
    reference = supervised_scales(X, y, regression=True, random_state=0)
    assert reference[0] < reference[2:].min() / 3  # the informative features weigh more
    for a, b in ((1e-100, 0.0), (1e100, 0.0), (1e-160, 1e-158), (-3e5, 2e6)):
        np.testing.assert_allclose(
            supervised_scales(X, a * y + b, regression=True, random_state=0), reference,
            rtol=1e-12)


def test_rows_of_weight_zero_are_left_out():
    X, y = _relevant_and_noise(n=300)
    weight = np.r_[np.ones(200), np.zeros(100)]
    X_out = X.copy()
    X_out[200:] *= 50.0  # would widen every range
    a = supervised_scales(X_out, y, False, sample_weight=weight, random_state=0)
    b = supervised_scales(X[:200], y[:200], False, sample_weight=np.ones(200),
                          random_state=0)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_classifiers_cut_the_informative_features_and_gain(cls):
    X, y = _relevant_and_noise(n=1200, seed=1)
    Xt, yt = _relevant_and_noise(n=1000, seed=2)
    plain = cls(n_estimators=10, random_state=0).fit(X, y)
    model = cls(n_estimators=10, random_state=0, feature_scale="supervised").fit(X, y)
    np.testing.assert_array_equal(model.feature_scale_,
                                  supervised_scales(X, y, False, random_state=0))
    assert np.mean(model.predict(Xt) == yt) > np.mean(plain.predict(Xt) == yt) + 0.05
    assert np.mean(model.predict(Xt) == yt) > 0.9


@pytest.mark.parametrize("cls", REGRESSORS)
def test_regressors_gain(cls):
    rng = np.random.RandomState(3)
    X = rng.uniform(0, 1, (1500, 12))
    X[:, 0] *= 100.0
    y = np.sin(X[:, 0] / 15.0) + X[:, 1]
    plain = cls(n_estimators=10, random_state=0).fit(X[:1000], y[:1000])
    model = cls(n_estimators=10, random_state=0, feature_scale="supervised").fit(
        X[:1000], y[:1000])

    def rmse(m):
        return np.sqrt(np.mean((m.predict(X[1000:]) - y[1000:]) ** 2))

    assert rmse(model) < 0.8 * rmse(plain)


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_scales_come_from_the_first_batch_and_stay_fixed(cls):
    X, y = _relevant_and_noise(n=900, seed=4)
    model = cls(n_estimators=5, random_state=0, feature_scale="supervised")
    model.partial_fit(X[:300], y[:300], classes=[0, 1])
    first = model.feature_scale_
    model.partial_fit(X[300:600] * 3.0, y[300:600])  # wider ranges change nothing
    model.partial_fit(X[600:], y[600:])
    np.testing.assert_array_equal(model.feature_scale_, first)
    assert model.n_samples_seen_ == 900
    reference = cls(n_estimators=5, random_state=0, feature_scale="supervised")
    np.testing.assert_array_equal(reference.fit(X[:300], y[:300]).feature_scale_, first)


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS)
def test_a_small_first_batch_is_refused_and_a_larger_one_then_learned(cls):
    X, y = _relevant_and_noise(n=200, seed=5)
    extra = {"classes": [0, 1]} if cls in CLASSIFIERS else {}
    model = cls(n_estimators=3, random_state=0, feature_scale="supervised")
    with pytest.raises(ValueError, match="at least 20 rows"):
        model.partial_fit(X[:SUPERVISED_MIN_ROWS - 1], y[:SUPERVISED_MIN_ROWS - 1], **extra)
    model.partial_fit(X[:100], y[:100])
    assert model.n_samples_seen_ == 100
    assert not np.all(model.feature_scale_ == 1.0)
    with pytest.raises(ValueError, match="at least 20 rows"):
        cls(n_estimators=3, feature_scale="supervised").fit(X[:10], y[:10])


def test_pickled_model_keeps_its_scales_and_predictions():
    X, y = _relevant_and_noise(n=400, seed=6)
    model = MondrianForestClassifier(n_estimators=3, random_state=0,
                                     feature_scale="supervised").fit(X, y)
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(loaded.feature_scale_, model.feature_scale_)
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    loaded.partial_fit(X[:50], y[:50])
    np.testing.assert_array_equal(loaded.feature_scale_, model.feature_scale_)
