"""Projectivity: trees grown online have the law of trees sampled in batch.

For each setting, a few hundred trees are sampled in batch on a fixed set of points
and a few hundred others are grown point by point, each in its own random order.
Two-sample tests (Kolmogorov-Smirnov for the root split time, Mann-Whitney and
chi-square for the number of leaves and the depth) must not tell them apart. The
seeds are fixed, so the outcome is deterministic; a control test checks that the
same tests do detect a small change of the law.
"""

import numpy as np
import pytest
from scipy import stats

ALPHA = 1e-3
N_TREES = 400


def classification_points():
    """24 points in 2-D with three classes by region, a little label noise and a
    duplicated row (a zero-extent block)."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(23, 2))
    keys = (X[:, 0] > 0.5).astype(np.int64) + (X[:, 1] > 0.7)
    keys[rng.choice(23, 3, replace=False)] = rng.randint(3, size=3)
    X = np.vstack([X, X[:1]])
    keys = np.append(keys, keys[0])
    return X, keys


def regression_points():
    rng = np.random.RandomState(1)
    X = rng.uniform(size=(30, 3))
    return X, np.zeros(30, dtype=np.int64)


def wide_points():
    """26 points in 8-D: features that vary, a constant one, binary ones, a narrow one
    and a duplicated row (blocks in which most features hardly vary)."""
    rng = np.random.RandomState(2)
    X = rng.uniform(size=(25, 8))
    X[:, 2] = 0.5
    X[:, 3:5] = rng.randint(2, size=(25, 2))
    X[:, 5] *= 1e-3
    X = np.vstack([X, X[:1]])
    keys = (X[:, 0] + X[:, 3] > 1).astype(np.int64)
    return X, keys


SETTINGS = {
    # MF classification: pure blocks are paused.
    "classification-pure-pausing": dict(
        data=classification_points, lifetime=np.inf, use_pausing=True, pause_pure=True,
        min_samples_split=2),
    # MF regression: blocks with fewer than min_samples_split points are paused.
    "regression-min-samples-split": dict(
        data=regression_points, lifetime=np.inf, use_pausing=True, pause_pure=False,
        min_samples_split=5),
    "classification-finite-lifetime": dict(
        data=classification_points, lifetime=1.5, use_pausing=True, pause_pure=True,
        min_samples_split=2),
    "regression-finite-lifetime": dict(
        data=regression_points, lifetime=2.0, use_pausing=True, pause_pure=False,
        min_samples_split=3),
    # More features than points vary in a block, most of them narrow.
    "wide-pure-pausing": dict(
        data=wide_points, lifetime=np.inf, use_pausing=True, pause_pure=True,
        min_samples_split=2),
    "wide-no-pausing-finite-lifetime": dict(
        data=wide_points, lifetime=2.0, use_pausing=False, pause_pure=False,
        min_samples_split=2),
    # The plain Mondrian process restricted to the data (AMF's trees).
    "no-pausing-finite-lifetime": dict(
        data=regression_points, lifetime=3.0, use_pausing=False, pause_pure=False,
        min_samples_split=2),
}


def batch_summaries(grow_batch, summarize, streams, setting, seed, **override):
    X, keys = setting["data"]()
    options = {k: setting[k] for k in ("lifetime", "use_pausing", "pause_pure",
                                       "min_samples_split")}
    options.update(override)
    return np.array([summarize(grow_batch(X, keys, rng, **options))
                     for rng in streams(seed, N_TREES)])


def online_summaries(grow_online, summarize, streams, setting, seed):
    X, keys = setting["data"]()
    options = {k: setting[k] for k in ("lifetime", "use_pausing", "pause_pure",
                                       "min_samples_split")}
    orders = np.random.RandomState(seed)
    out = []
    for rng in streams(seed, N_TREES):
        order = orders.permutation(X.shape[0])
        out.append(summarize(grow_online(X, keys, order, rng, **options)))
    return np.array(out)


def discrete_chisquare_pvalue(a, b):
    """Chi-square test of homogeneity of two integer samples (sparse bins pooled)."""
    values = np.union1d(a, b)
    table = np.array([[np.sum(a == v) for v in values], [np.sum(b == v) for v in values]])
    # Pool bins from both ends until every expected count is at least 5.
    columns = []
    current = np.zeros(2)
    for column in table.T:
        current = current + column
        if current.sum() >= 10:
            columns.append(current)
            current = np.zeros(2)
    if current.sum() > 0:
        if columns:
            columns[-1] = columns[-1] + current
        else:
            columns.append(current)
    table = np.array(columns).T
    if table.shape[1] < 2:
        return 1.0
    return stats.chi2_contingency(table)[1]


def same_law_pvalues(a, b):
    """p-values of the two-sample tests on (root time, n_leaves, depth)."""
    return {
        "root_time_ks": stats.ks_2samp(a[:, 0], b[:, 0]).pvalue,
        "n_leaves_mw": stats.mannwhitneyu(a[:, 1], b[:, 1]).pvalue,
        "depth_mw": stats.mannwhitneyu(a[:, 2], b[:, 2]).pvalue,
        "n_leaves_chi2": discrete_chisquare_pvalue(a[:, 1], b[:, 1]),
        "depth_chi2": discrete_chisquare_pvalue(a[:, 2], b[:, 2]),
    }


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_online_trees_have_the_batch_law(name, grow_batch, grow_online, summarize,
                                         streams):
    setting = SETTINGS[name]
    batch = batch_summaries(grow_batch, summarize, streams, setting, seed=100)
    online = online_summaries(grow_online, summarize, streams, setting, seed=200)
    pvalues = same_law_pvalues(batch, online)
    assert min(pvalues.values()) > ALPHA, pvalues
    # The trees are not degenerate: they do get cut.
    assert batch[:, 1].mean() > 3 and online[:, 1].mean() > 3


def test_two_sample_tests_detect_a_different_law(grow_batch, summarize, streams):
    """Control: a 25% shorter lifetime is detected by the same tests."""
    setting = SETTINGS["regression-finite-lifetime"]
    full = batch_summaries(grow_batch, summarize, streams, setting, seed=100)
    shorter = batch_summaries(grow_batch, summarize, streams, setting, seed=300,
                              lifetime=0.75 * setting["lifetime"])
    pvalues = same_law_pvalues(full, shorter)
    assert pvalues["n_leaves_mw"] < ALPHA and pvalues["depth_mw"] < ALPHA


def test_online_trees_without_unpausing_are_detected(grow_batch, summarize, streams):
    """Control: a tree that never re-samples paused blocks has another law."""
    setting = SETTINGS["classification-pure-pausing"]
    batch = batch_summaries(grow_batch, summarize, streams, setting, seed=100)
    # Pausing every block with at least one point (min_samples_split larger than
    # the data) is what an online learner that forgot to un-pause would give.
    stuck = batch_summaries(grow_batch, summarize, streams, setting, seed=400,
                            min_samples_split=12)
    assert same_law_pvalues(batch, stuck)["n_leaves_mw"] < ALPHA


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_estimator_partial_fit_one_point_at_a_time_matches_fit(kind):
    """End to end: ``partial_fit`` row by row versus ``fit``, over many seeds."""
    from mondrianlearn import MondrianTreeClassifier, MondrianTreeRegressor

    n_seeds = 200
    if kind == "classifier":
        X, y = classification_points()
        X, y = X[:16], y[:16]
        make = lambda seed: MondrianTreeClassifier(random_state=seed)  # noqa: E731
    else:
        X, _ = regression_points()
        X = X[:16]
        y = X.sum(axis=1)
        make = lambda seed: MondrianTreeRegressor(min_samples_split=3,  # noqa: E731
                                                  random_state=seed)
    batch, online = [], []
    orders = np.random.RandomState(5)
    for seed in range(n_seeds):
        batch.append(_view_summary(make(seed).fit(X, y).tree_))
        est = make(10_000 + seed)
        order = orders.permutation(X.shape[0])
        for i in order:
            est.partial_fit(X[i:i + 1], y[i:i + 1],
                            **({"classes": np.unique(y)} if kind == "classifier" else {}))
        online.append(_view_summary(est.tree_))
    batch, online = np.array(batch), np.array(online)
    pvalues = same_law_pvalues(batch, online)
    assert min(pvalues.values()) > ALPHA, pvalues


def _view_summary(view):
    return view.split_time[view.root], view.n_leaves, view.max_depth
