"""Sample weights, online bagging (``bootstrap``) and rolling-weight boosting."""

import pickle

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_regression

from mondrianlearn import (
    MondrianBoostingClassifier,
    MondrianForestClassifier,
    MondrianForestRegressor,
)
from mondrianlearn.engine.storage import learn_rows
from mondrianlearn.engine.tree import META_ROOT, node_boxes
from mondrianlearn.ensemble._kernels import boost_tree
from mondrianlearn.ensemble.boosting import _regrowth_room

FORESTS = [MondrianForestClassifier, MondrianForestRegressor]

# Node arrays that define the partition and the label keys. ``n_points`` and the
# sample lists are left out on purpose: they count insertions, so a row repeated w
# times has w entries where a row of weight w has one.
STRUCTURE = ("parent", "left", "right", "feature", "threshold", "time", "lower",
             "upper", "label", "paused")


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    order = np.random.RandomState(0).permutation(len(y))
    return X[order], y[order]


@pytest.fixture(scope="module")
def regression():
    X, y = make_regression(n_samples=150, n_features=3, noise=5.0, random_state=0)
    return X, y


def data_for(cls, iris, regression):
    return iris if cls is MondrianForestClassifier else regression


def stream_kwargs(cls, y):
    return {"classes": np.unique(y)} if cls is MondrianForestClassifier else {}


def outputs(model, X):
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X)
    return np.column_stack(model.predict(X, return_std=True))


def probe_points(X, n=60, seed=1):
    """Points inside and outside the training range."""
    rng = np.random.RandomState(seed)
    return rng.uniform(X.min(0) - 1, X.max(0) + 1, size=(n, X.shape[1]))


def assert_same_trees(a, b, stats_rtol=0.0):
    """Same partition (node arrays) and same label statistics in every tree."""
    assert len(a.trees_) == len(b.trees_)
    for ta, tb in zip(a.trees_, b.trees_):
        assert ta.n_nodes == tb.n_nodes
        n = ta.n_nodes
        assert ta.arrays.meta[META_ROOT] == tb.arrays.meta[META_ROOT]
        # The copies drew no random number: both streams are at the same place.
        np.testing.assert_array_equal(ta.rng_state, tb.rng_state)
        fields_a, fields_b = _structure(ta, a), _structure(tb, b)
        for field in STRUCTURE:
            np.testing.assert_array_equal(fields_a[field], fields_b[field], err_msg=field)
        sa, sb = ta.node_stats["stats"][:n], tb.node_stats["stats"][:n]
        if stats_rtol == 0.0:
            np.testing.assert_array_equal(sa, sb)
        else:  # regression moments: sums of the same terms in another order
            np.testing.assert_allclose(sa, sb, rtol=stats_rtol, atol=1e-12)


def _structure(tree, model):
    """The ``STRUCTURE`` fields of a tree's nodes, by name; boxes by node (a leaf of
    one point has its point's box, ``engine.boxes``)."""
    n = tree.n_nodes
    fields = {f: getattr(tree.arrays, f)[:n] for f in STRUCTURE}
    fields["lower"], fields["upper"] = node_boxes(tree.arrays, model._store.X)
    return fields


def model_arrays(model):
    """Everything learned, as one list of arrays (to compare two models exactly)."""
    out = []
    n_points = model._store.n
    for tree in model.trees_:
        n = tree.n_nodes
        out += [tree.arrays.meta] + list(_structure(tree, model).values())
        out += [tree.arrays.n_points[:n], tree.node_stats["stats"][:n], tree.rng_state,
                tree.sample_mult[:n_points]]
    out.append(model._store.X[:n_points])
    out.append(model._store.stats[: model._store.n])
    if hasattr(model, "_boost_errors"):
        out.append(model._boost_errors)
    return out


def assert_same_model(a, b):
    assert a.n_samples_seen_ == b.n_samples_seen_
    for x, y in zip(model_arrays(a), model_arrays(b), strict=True):
        np.testing.assert_array_equal(x, y)


# ---------------------------------------------------- integer weights = repeated rows
def weights_and_copies(X, y, seed=0, high=4):
    w = np.random.RandomState(seed).randint(0, high, size=len(y)).astype(float)
    reps = w.astype(int)
    return w, np.repeat(X, reps, axis=0), np.repeat(y, reps)


@pytest.mark.parametrize("cls", FORESTS)
def test_integer_weights_equal_repeated_rows_in_batch(cls, iris, regression):
    # Batch sampling depends only on the set of distinct points and the random
    # stream: a row of weight w and w copies of it give the same partition and the
    # same statistics (with min_samples_split=2, see the online test).
    X, y = data_for(cls, iris, regression)
    w, Xr, yr = weights_and_copies(X, y)
    weighted = cls(n_estimators=4, random_state=0).fit(X, y, sample_weight=w)
    copies = cls(n_estimators=4, random_state=0).fit(Xr, yr)
    rtol = 0.0 if cls is MondrianForestClassifier else 1e-12
    assert_same_trees(weighted, copies, stats_rtol=rtol)
    probe = probe_points(X)
    np.testing.assert_allclose(outputs(weighted, probe), outputs(copies, probe),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("lifetime", [np.inf, 1.0])
@pytest.mark.parametrize("cls", FORESTS)
def test_integer_weights_equal_consecutive_copies_online(cls, lifetime, iris, regression):
    # Online, a copy of a point that the tree already holds lies inside every box of
    # its path: no split can be inserted, no random number is drawn, and the leaf it
    # reaches stays as it was (same label, or zero extent). So a row of weight w and
    # the row repeated w times in a row give identical trees.
    X, y = data_for(cls, iris, regression)
    w, _, _ = weights_and_copies(X, y, seed=1)
    kwargs = stream_kwargs(cls, y)
    weighted = cls(n_estimators=4, lifetime=lifetime, random_state=0)
    copies = cls(n_estimators=4, lifetime=lifetime, random_state=0)
    for batch in np.array_split(np.arange(len(y)), 5):
        weighted.partial_fit(X[batch], y[batch], sample_weight=w[batch], **kwargs)
        reps = w[batch].astype(int)
        copies.partial_fit(np.repeat(X[batch], reps, axis=0), np.repeat(y[batch], reps),
                           **kwargs)
    rtol = 0.0 if cls is MondrianForestClassifier else 1e-12
    assert_same_trees(weighted, copies, stats_rtol=rtol)
    probe = probe_points(X)
    np.testing.assert_allclose(outputs(weighted, probe), outputs(copies, probe),
                               rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("cls", FORESTS)
def test_copies_later_in_the_stream_change_no_split(cls, iris, regression):
    # Stronger: the extra copies may come anywhere later (here, all at the end of
    # the stream) and the final trees are still identical. (The first mini-batch is
    # the same in both, because the regressor scales targets with it.)
    X, y = data_for(cls, iris, regression)
    w, _, _ = weights_and_copies(X, y, seed=2)
    w[:30] = 1.0
    kwargs = stream_kwargs(cls, y)
    weighted = cls(n_estimators=4, random_state=0)
    copies = cls(n_estimators=4, random_state=0)
    for batch in np.array_split(np.arange(len(y)), 5):
        weighted.partial_fit(X[batch], y[batch], sample_weight=w[batch], **kwargs)
        keep = batch[w[batch] > 0]
        copies.partial_fit(X[keep], y[keep], **kwargs)
    extra = np.repeat(np.arange(len(y)), np.maximum(w.astype(int) - 1, 0))
    copies.partial_fit(X[extra[::-1]], y[extra[::-1]], **kwargs)
    rtol = 0.0 if cls is MondrianForestClassifier else 1e-12
    assert_same_trees(weighted, copies, stats_rtol=rtol)
    probe = probe_points(X)
    np.testing.assert_allclose(outputs(weighted, probe), outputs(copies, probe),
                               rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("min_samples_split", [2, 5])
@pytest.mark.parametrize("cls", FORESTS)
def test_partition_does_not_depend_on_positive_weights(cls, min_samples_split, iris,
                                                       regression):
    # Positive weights (integer or not) change the statistics, never the partition,
    # in batch and online, whatever min_samples_split. (Copies of a row do count in
    # min_samples_split: with a value above 2, w copies and weight w can pause
    # different blocks, which is why the copy tests above use the default 2.)
    X, y = data_for(cls, iris, regression)
    w = np.random.RandomState(3).uniform(0.1, 5.0, size=len(y))
    kwargs = stream_kwargs(cls, y)
    for online in (False, True):
        models = []
        for weights in (w, None):
            model = cls(n_estimators=3, min_samples_split=min_samples_split,
                        random_state=0)
            if online:
                for batch in np.array_split(np.arange(len(y)), 4):
                    model.partial_fit(X[batch], y[batch], **kwargs,
                                      sample_weight=None if weights is None
                                      else weights[batch])
            else:
                model.fit(X, y, sample_weight=weights)
            models.append(model)
        for ta, tb in zip(models[0].trees_, models[1].trees_):
            assert ta.n_nodes == tb.n_nodes
            fields_a, fields_b = _structure(ta, models[0]), _structure(tb, models[1])
            for field in STRUCTURE:
                np.testing.assert_array_equal(fields_a[field], fields_b[field], err_msg=field)
            np.testing.assert_array_equal(ta.arrays.n_points[:ta.n_nodes],
                                          tb.arrays.n_points[:tb.n_nodes])
            assert not np.allclose(ta.node_stats["stats"][:ta.n_nodes],
                                   tb.node_stats["stats"][:tb.n_nodes])


# ------------------------------------------------------------------- zero weights
def zero_weight_models():
    return [MondrianForestClassifier(n_estimators=3, random_state=0),
            MondrianForestClassifier(n_estimators=3, bootstrap=True, random_state=0),
            MondrianForestRegressor(n_estimators=3, random_state=0),
            MondrianForestRegressor(n_estimators=3, bootstrap=True, random_state=0),
            MondrianBoostingClassifier(n_estimators=3, random_state=0)]


@pytest.mark.parametrize("model", zero_weight_models(), ids=repr)
def test_zero_weights_leave_the_model_unchanged(model, iris, regression):
    X, y = regression if isinstance(model, MondrianForestRegressor) else iris
    model.partial_fit(X[:60], y[:60])
    before = pickle.dumps(model)
    model.partial_fit(X[60:90], y[60:90], sample_weight=np.zeros(30))
    assert pickle.dumps(model) == before
    # Some zero weights: the same as leaving those rows out.
    w = np.ones(90)
    w[::4] = 0.0
    with_zeros = pickle.loads(before).partial_fit(X[60:150], y[60:150], sample_weight=w)
    keep = np.arange(60, 150)[w > 0]
    without = pickle.loads(before).partial_fit(X[keep], y[keep])
    assert pickle.dumps(with_zeros) == pickle.dumps(without)


# ------------------------------------------------------- online bagging (bootstrap)
def bagging_data(n=3000, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, 2))
    y = (X[:, 0] + 0.2 * rng.randn(n) > 0.5).astype(int)
    return X, y


@pytest.mark.parametrize("online", [False, True], ids=["fit", "partial_fit"])
def test_poisson_multiplicities_have_mean_one_and_are_independent(online):
    X, y = bagging_data()
    n, n_trees = len(y), 12
    model = MondrianForestClassifier(n_estimators=n_trees, bootstrap=True, random_state=0)
    if online:
        for batch in np.array_split(np.arange(n), 6):
            model.partial_fit(X[batch], y[batch])
    else:
        model.fit(X, y)
    k = np.array([tree.sample_mult[:n] for tree in model.trees_])
    assert np.all(k == np.round(k)) and k.min() >= 0
    # 36000 Poisson(1) draws: the mean and variance have standard errors ~0.005 and
    # ~0.01; P(k=0) = exp(-1).
    assert abs(k.mean() - 1.0) < 0.03
    assert abs(k.var() - 1.0) < 0.06
    assert abs(np.mean(k == 0) - np.exp(-1)) < 0.015
    assert abs(np.mean(k == 2) - np.exp(-1) / 2) < 0.015
    for row in k:  # every tree on its own
        assert abs(row.mean() - 1.0) < 4 / np.sqrt(n)
    corr = np.corrcoef(k)
    off = corr[~np.eye(n_trees, dtype=bool)]
    assert np.abs(off).max() < 4.5 / np.sqrt(n)
    assert abs(off.mean()) < 0.01
    # Successive points of one tree are independent too.
    lag = [np.corrcoef(row[:-1], row[1:])[0, 1] for row in k]
    assert np.abs(lag).max() < 4.5 / np.sqrt(n)
    # A point drawn k times counts k times; a point drawn 0 times is not in the tree.
    for t, tree in enumerate(model.trees_):
        root = tree.arrays.meta[META_ROOT]
        counts = tree.node_stats["stats"][root]
        expected = np.bincount(y, weights=k[t], minlength=2)
        np.testing.assert_array_equal(counts, expected)
        assert tree.arrays.n_points[root] == np.count_nonzero(k[t])


def test_bootstrap_false_reproduces_the_model_before_the_option():
    # Reference values of the model of commit 7848de4 (before ``bootstrap`` and
    # ``sample_weight`` existed), on the same data, seeds and mini-batches; with
    # never-cut leaves at discount 1/2 (row 4 falls in such a leaf's box) and the
    # standard deviations of MondrianForestRegressor's Notes.
    X, y = load_iris(return_X_y=True)
    order = np.random.RandomState(0).permutation(150)
    X, y = X[order], y[order]
    probe = np.random.RandomState(1).uniform(X.min(0) - 0.5, X.max(0) + 0.5, size=(6, 4))
    # Raw features (feature_scale=None): the model of that commit.
    clf = MondrianForestClassifier(n_estimators=4, random_state=0, feature_scale=None)
    clf.fit(X[:100], y[:100]).partial_fit(X[100:], y[100:])
    assert clf.n_nodes_.tolist() == [33, 55, 59, 47]
    expected = np.array([
        [9.6848164580464080e-01, 1.7106647500697396e-02, 1.4411706694661854e-02],
        [7.4021118723216106e-01, 2.2940130327880179e-01, 3.0387509489037089e-02],
        [4.1570252400293011e-03, 8.2342394882599812e-01, 1.7241902593397260e-01],
        [9.6704332864847198e-01, 1.8115732219617625e-02, 1.4840939131910331e-02],
        [9.9472781394122822e-01, 2.6366902935239505e-03, 2.6354957652478255e-03],
        [9.5851908090359839e-01, 2.3579452478897738e-02, 1.7901466617504014e-02]])
    # Same trees (node counts above); the probabilities move by up to 2e-7 relative
    # since boxes are stored rounded outward to float32 (state format 6,
    # engine.boxes): the branch-off probabilities of the probes read those boxes.
    np.testing.assert_allclose(clf.predict_proba(probe), expected, rtol=1e-6, atol=1e-15)
    assert all(tree.sample_mult.shape == (0,) for tree in clf.trees_)

    Xr, yr = make_regression(n_samples=120, n_features=3, noise=1.0, random_state=0)
    reg = MondrianForestRegressor(n_estimators=4, random_state=0, feature_scale=None)
    reg.partial_fit(Xr[:60], yr[:60]).partial_fit(Xr[60:], yr[60:])
    mean, std = reg.predict(np.random.RandomState(2).normal(size=(6, 3)), return_std=True)
    np.testing.assert_allclose(mean, [-136.22088738122966, 42.59169608890414,
                                      -65.20467832464996, 87.42336124723988,
                                      -1.627558111156695, 106.13976841096917], rtol=1e-6)
    np.testing.assert_allclose(std, [65.33283436032532, 67.34345995876494, 46.125038515726004,
                                     68.54524272159242, 50.04327682774922,
                                     36.860563702937746], rtol=1e-6)  # float32 boxes
    assert all(tree.sample_mult.shape == (0,) for tree in reg.trees_)


@pytest.mark.parametrize("cls", FORESTS)
def test_bootstrap_changes_the_model_only_when_asked(cls, iris, regression):
    X, y = data_for(cls, iris, regression)
    plain = cls(n_estimators=4, random_state=0).fit(X, y)
    explicit = cls(n_estimators=4, bootstrap=False, random_state=0).fit(X, y)
    bagged = cls(n_estimators=4, bootstrap=True, random_state=0).fit(X, y)
    assert_same_model(plain, explicit)
    assert not np.array_equal(plain.n_nodes_, bagged.n_nodes_)


def test_bagged_probabilities_stay_probabilities(iris):
    X, y = iris
    rng = np.random.RandomState(0)
    probe = probe_points(X, n=200)
    # Few points and many trees: some trees see no point at all (P = e^-3 each).
    tiny = MondrianForestClassifier(n_estimators=60, bootstrap=True, random_state=0)
    tiny.fit(X[[0, 1, 3]], y[[0, 1, 3]])
    assert 0 < sum(t.n_nodes == 0 for t in tiny.trees_) < 60
    leaves = tiny.apply(probe)
    empty = [t for t, tree in enumerate(tiny.trees_) if tree.n_nodes == 0]
    assert np.all(leaves[:, empty] == -1)
    models = [tiny]
    for weights in (None, rng.randint(1, 5, size=len(y)).astype(float)):
        clf = MondrianForestClassifier(n_estimators=10, bootstrap=True, random_state=0)
        for batch in np.array_split(np.arange(len(y)), 6):
            clf.partial_fit(X[batch], y[batch], classes=[0, 1, 2],
                            sample_weight=None if weights is None else weights[batch])
        models.append(clf)
    for clf in models:
        proba = clf.predict_proba(probe)
        assert np.all(proba >= 0) and np.all(proba <= 1)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert models[1].score(X, y) > 0.9


@pytest.mark.parametrize("cls", FORESTS)
def test_bagging_is_reproducible_and_thread_independent(cls, iris, regression):
    X, y = data_for(cls, iris, regression)
    kwargs = stream_kwargs(cls, y)

    def train(seed, n_jobs, online):
        model = cls(n_estimators=5, bootstrap=True, n_jobs=n_jobs, random_state=seed)
        if not online:
            return model.fit(X, y)
        for batch in np.array_split(np.arange(len(y)), 4):
            model.partial_fit(X[batch], y[batch], **kwargs)
        return model

    probe = probe_points(X)
    for online in (False, True):
        reference = train(0, 1, online)
        assert_same_model(reference, train(0, 1, online))
        assert_same_model(reference, train(0, 2, online))
        np.testing.assert_array_equal(outputs(reference, probe),
                                      outputs(train(0, 2, online), probe))
        other = train(1, 1, online)
        assert not np.array_equal(reference.trees_[0].sample_mult,
                                  other.trees_[0].sample_mult)


# --------------------------------------------------------- rolling-weight boosting
def two_point_stream(n=60, seed=3):
    """Labels 0/1 at x = 0/1 exactly: each tree's correctness is known by hand.

    A tree that holds a point of the example's class (at the example's location)
    predicts it exactly (pure leaf, time inf, discount 0); a tree that holds only
    the other class, or nothing, predicts wrongly.
    """
    y = np.random.RandomState(seed).randint(0, 2, size=n)
    return y[:, None].astype(float), y


def hand_boosting(k, y, lam0=None, errors0=None, n_before=0, seen0=None, weights=None):
    """Algorithm 6, example by example, with the trees' draws ``k[t, i]`` given.

    With ``weights``, example ``i`` counts ``weights[i] * lam`` in the error sums and
    ``N`` is the total weight so far.

    Returns ``(errors (T, 2), lam_before (T, n), lam_after (n,))``: the weight each
    example had when it reached each tree, and after the last tree.
    """
    n_trees, n = k.shape
    errors = np.zeros((n_trees, 2)) if errors0 is None else errors0.copy()
    seen = np.zeros((n_trees, 2)) if seen0 is None else seen0.copy()
    lam_before = np.zeros((n_trees, n))
    lam_after = np.ones(n) if lam0 is None else lam0.astype(float).copy()
    weights = np.ones(n) if weights is None else weights
    big_n = n_before
    for i in range(n):
        lam = lam_after[i]
        big_n += weights[i]
        for t in range(n_trees):
            lam_before[t, i] = lam
            seen[t, y[i]] += k[t, i]
            if seen[t, y[i]] > 0:  # correct
                errors[t, 0] += weights[i] * lam
                lam *= big_n / (2 * errors[t, 0])
            else:
                errors[t, 1] += weights[i] * lam
                lam *= big_n / (2 * errors[t, 1])
        lam_after[i] = lam
    return errors, lam_before, lam_after


def test_boosting_weights_follow_the_update_rule_on_a_hand_worked_stream():
    X, y = two_point_stream()
    n = len(y)
    model = MondrianBoostingClassifier(n_estimators=6, random_state=0)
    model.fit(X, y)
    k = np.array([tree.sample_mult[:n] for tree in model.trees_])
    errors, _, _ = hand_boosting(k, y)
    np.testing.assert_allclose(model._boost_errors, errors, rtol=1e-13)
    # Both kinds of update happen (trees start empty, then learn).
    assert np.all(errors[:, 0] > 0) and np.all(errors[:, 1] > 0)
    e = errors[:, 1] / errors.sum(axis=1)
    np.testing.assert_allclose(model.estimator_errors_, e, rtol=1e-13)
    np.testing.assert_allclose(model.estimator_weights_,
                               np.where(e < 0.5, np.log((1 - e) / e), 0.0), rtol=1e-12)


def test_boosting_sample_weights_scale_the_error_sums():
    # A weight w scales the example's counts (k * w) and its share w * lam of the
    # error sums; N is the total weight. Unit weights are the plain rule exactly.
    X, y = two_point_stream(n=60, seed=6)
    n = len(y)
    w = np.random.RandomState(1).choice([0.5, 1.0, 2.0, 3.0], size=n)
    model = MondrianBoostingClassifier(n_estimators=5, random_state=0)
    model.fit(X, y, sample_weight=w)
    k = np.array([tree.sample_mult[:n] for tree in model.trees_])
    errors, _, _ = hand_boosting(k, y, weights=w)
    np.testing.assert_allclose(model._boost_errors, errors, rtol=1e-13)
    for t, tree in enumerate(model.trees_):
        root = tree.arrays.meta[META_ROOT]
        np.testing.assert_allclose(tree.node_stats["stats"][root],
                                   np.bincount(y, weights=k[t] * w, minlength=2))
    unit = MondrianBoostingClassifier(n_estimators=5, random_state=0)
    unit.fit(X, y, sample_weight=np.ones(n))
    assert_same_model(unit, MondrianBoostingClassifier(n_estimators=5, random_state=0).fit(X, y))


def test_boost_tree_kernel_updates_a_controlled_weight_array():
    # One tree, driven directly: after 10 examples, a mini-batch of 40 with chosen
    # weights; the kernel's updated weights and (sc, sw) must match the hand rule.
    X, y = two_point_stream(n=50, seed=4)
    model = MondrianBoostingClassifier(n_estimators=1, random_state=0)
    model.partial_fit(X[:10], y[:10], classes=[0, 1])
    tree = model.trees_[0]
    k_first = tree.sample_mult[:10].copy()
    errors_first = model._boost_errors.copy()

    lam_in = np.random.RandomState(0).uniform(0.2, 3.0, size=40)
    lam = lam_in.copy()
    keys = y[10:].astype(np.int64)
    point_stats = np.eye(2)[keys]
    ids = model._store.append(model._in_units(X[10:]), keys, point_stats)
    tree.ensure_sample_capacity(model._store.n)

    def run_kernel(tree, position):
        return boost_tree(tree.arrays, model._store.X, model._store.keys,
                          model._store.stats, tree.node_stats["stats"],
                          tree.sample_next, tree.sample_mult, ids, position, lam,
                          np.ones(40), 10.0 + np.arange(1, 41), model._boost_errors[0],
                          model._gamma(), np.inf, True, 2, tree.rng_state)

    learn_rows(tree, run_kernel, 0, len(ids), room=_regrowth_room)
    k = tree.sample_mult[10:50][None, :]
    seen0 = np.array([[k_first[y[:10] == 0].sum(), k_first[y[:10] == 1].sum()]])
    errors, lam_before, lam_after = hand_boosting(k, y[10:], lam0=lam_in,
                                                  errors0=errors_first, n_before=10,
                                                  seen0=seen0)
    np.testing.assert_allclose(lam_before[0], lam_in)
    np.testing.assert_allclose(lam, lam_after, rtol=1e-13)
    np.testing.assert_allclose(model._boost_errors, errors, rtol=1e-13)


def test_boosting_draws_poisson_with_the_example_weight():
    # k[t, i] ~ Poisson(lam[t, i]): sum(k - lam) / sqrt(sum lam) is about N(0, 1).
    X, y = two_point_stream(n=800, seed=5)
    model = MondrianBoostingClassifier(n_estimators=8, random_state=0).fit(X, y)
    k = np.array([tree.sample_mult[:800] for tree in model.trees_])
    errors, lam_before, _ = hand_boosting(k, y)
    np.testing.assert_allclose(model._boost_errors, errors, rtol=1e-12)
    # Tree 0 always gets weight 1; once the trees are right, later trees get about
    # 1/2. A rate of 1 everywhere would put z near 50.
    assert np.all(lam_before[0] == 1.0) and lam_before[1:].mean() < 0.6
    for rows in (slice(0, 1), slice(1, None)):
        z = (k[rows] - lam_before[rows]).sum() / np.sqrt(lam_before[rows].sum())
        assert abs(z) < 4


def test_boosting_mini_batch_equals_example_by_example(iris):
    X, y = iris
    batch = MondrianBoostingClassifier(n_estimators=5, random_state=0)
    batch.partial_fit(X[:70], y[:70], classes=[0, 1, 2]).partial_fit(X[70:], y[70:])
    single = MondrianBoostingClassifier(n_estimators=5, random_state=0)
    for i in range(len(y)):
        single.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1, 2])
    assert_same_model(batch, single)
    whole = MondrianBoostingClassifier(n_estimators=5, random_state=0).fit(X, y)
    assert_same_model(batch, whole)  # fit is one online pass
    probe = probe_points(X)
    np.testing.assert_array_equal(batch.predict_proba(probe), single.predict_proba(probe))


def weighted_votes(model, X, weights):
    """Hand computation of the boosted vote, tree by tree."""
    from mondrianlearn.forest._smoothing import predict_proba_tree

    n_classes = len(model.classes_)
    votes = np.zeros((len(X), n_classes))
    X = model._in_units(X)  # the trees' coordinates (relative to the origin)
    for tree, w in zip(model.trees_, weights):
        part = np.zeros((len(X), n_classes))
        predict_proba_tree(tree.arrays, model._store.X, tree.node_stats["stats"], X,
                           model._gamma(), 1 << 62, 1.0, part)
        if model.voting == "hard":
            part = np.eye(n_classes)[part.argmax(axis=1)]
        votes += w * part
    return votes / votes.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("voting", ["hard", "soft"])
def test_boosting_predict_proba_is_the_normalised_weighted_vote(voting, iris):
    X, y = iris
    model = MondrianBoostingClassifier(n_estimators=7, voting=voting, random_state=0)
    model.fit(X[:100], y[:100])
    probe = probe_points(X, n=80)
    weights = model.estimator_weights_
    assert np.all(weights >= 0) and np.any(weights > 0)
    proba = model.predict_proba(probe)
    np.testing.assert_allclose(proba, weighted_votes(model, probe, weights), rtol=1e-12,
                               atol=1e-15)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_array_equal(model.predict(probe), model.classes_[proba.argmax(1)])
    assert model.score(X[100:], y[100:]) > 0.85


@pytest.mark.parametrize("voting", ["hard", "soft"])
def test_boosting_fast_and_full_paths_give_the_weighted_vote(voting, iris):
    """A small call (the compiled fast path over all trees), the per-tree full path
    (a call over ``FAST_MAX_ROWS`` rows) and the river entry point give the boosted
    vote computed by hand from ``estimator_weights_``; not the plain average of the
    trees that the forest classifier's helper computes."""
    from mondrianlearn.utils.fast_path import FAST_MAX_ROWS

    X, y = iris
    model = MondrianBoostingClassifier(n_estimators=6, voting=voting, random_state=0)
    for start in range(0, 150, 10):
        model.partial_fit(X[start:start + 10], y[start:start + 10])
    weights = model.estimator_weights_
    assert np.all(weights > 0) and np.ptp(weights) > 1.0  # unequal votes
    probe = np.ascontiguousarray(probe_points(X, n=200, seed=2))
    expected = weighted_votes(model, probe, weights)
    plain = weighted_votes(model, probe, np.ones(len(weights)))
    assert np.abs(expected - plain).max() > 0.05  # the weights change the answer here

    fast = model._predict_proba_fast(probe, model._units)  # the compiled call over the table
    assert fast is not None
    small = np.vstack([model.predict_proba(probe[i:i + 1]) for i in range(20)])
    repeats = FAST_MAX_ROWS // len(probe) + 1
    full = model.predict_proba(np.tile(probe, (repeats, 1)))[:len(probe)]
    river_entry = model._predict_proba_validated(probe)
    for proba in (fast, full, river_entry, model.predict_proba(probe)):
        np.testing.assert_allclose(proba, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(small, fast[:20])
    np.testing.assert_array_equal(full, fast)
    np.testing.assert_array_equal(model.predict(probe[:20]),
                                  model.classes_[expected[:20].argmax(axis=1)])
    # Boosting shares a base with the forest classifier but is not one: none of the
    # forest's averaging code (caught above if it ran) is among its methods.
    assert not isinstance(model, MondrianForestClassifier)


def test_boosting_without_useful_trees_votes_with_equal_weights(iris):
    # No tree better than chance (e_t >= 1/2, or nothing seen): all weights are
    # zero, and predict_proba falls back to the plain (unweighted) vote.
    X, y = iris
    model = MondrianBoostingClassifier(n_estimators=4, random_state=0).fit(X, y)
    model._boost_errors[:] = [[1.0, 3.0], [2.0, 2.0], [0.0, 1.0], [0.0, 0.0]]
    np.testing.assert_array_equal(model.estimator_weights_, 0.0)
    np.testing.assert_allclose(model.estimator_errors_, [0.75, 0.5, 1.0, 0.5])
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba, weighted_votes(model, X, np.ones(4)), rtol=1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("model", [
    MondrianForestClassifier(n_estimators=4, bootstrap=True, random_state=0),
    MondrianForestRegressor(n_estimators=4, bootstrap=True, random_state=0),
    MondrianBoostingClassifier(n_estimators=4, random_state=0),
], ids=repr)
def test_pickled_ensembles_go_on_learning_identically(model, iris, regression):
    X, y = regression if isinstance(model, MondrianForestRegressor) else iris
    model.partial_fit(X[:70], y[:70])
    restored = pickle.loads(pickle.dumps(model))
    model.partial_fit(X[70:], y[70:])
    restored.partial_fit(X[70:], y[70:])
    assert_same_model(model, restored)
    probe = probe_points(X)
    np.testing.assert_array_equal(outputs(model, probe), outputs(restored, probe))


def test_boosting_predictions_do_not_depend_on_n_jobs(iris):
    X, y = iris
    probe = probe_points(X)
    one = MondrianBoostingClassifier(n_estimators=6, n_jobs=1, random_state=0).fit(X, y)
    two = MondrianBoostingClassifier(n_estimators=6, n_jobs=2, random_state=0).fit(X, y)
    assert_same_model(one, two)
    for voting in ("hard", "soft"):
        one.set_params(voting=voting)
        two.set_params(voting=voting)
        np.testing.assert_array_equal(one.predict_proba(probe), two.predict_proba(probe))
