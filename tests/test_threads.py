"""Threads: ``n_jobs=2`` gives the same models and predictions as ``n_jobs=1``, bit
for bit (every tree has its own random stream and results are reduced in tree
order)."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import mondrianlearn.utils.parallel as parallel
from mondrianlearn import (
    AMFClassifier,
    AMFRegressor,
    MondrianBoostingClassifier,
    MondrianForestClassifier,
    MondrianForestRegressor,
)
from mondrianlearn.engine.tree import used_rows
from mondrianlearn.utils.fast_path import FAST_MAX_ROWS

CLASSIFIERS = [
    pytest.param(lambda **kw: MondrianForestClassifier(**kw), id="MF"),
    pytest.param(lambda **kw: MondrianForestClassifier(bootstrap=True, **kw), id="MF-bootstrap"),
    pytest.param(lambda **kw: MondrianForestClassifier(max_nodes=41, min_samples_split=3, **kw),
                 id="MF-max_nodes"),
    pytest.param(lambda **kw: AMFClassifier(**kw), id="AMFClassifier"),
    pytest.param(lambda **kw: MondrianBoostingClassifier(**kw), id="Boosting"),
]
REGRESSORS = [
    pytest.param(lambda **kw: MondrianForestRegressor(**kw), id="MF"),
    pytest.param(lambda **kw: MondrianForestRegressor(bootstrap=True, **kw), id="MF-bootstrap"),
    pytest.param(lambda **kw: AMFRegressor(**kw), id="AMFRegressor"),
]

# Calls of more than FAST_MAX_ROWS rows take the full path, the one that runs the
# trees in threads (a small call is one compiled loop over the trees, whatever
# n_jobs is): training batches and test sets are larger than that.
N_TRAIN, BATCH, N_TEST = 1300, 650, 700
assert BATCH > FAST_MAX_ROWS and N_TEST > FAST_MAX_ROWS


@pytest.fixture
def thread_pools(monkeypatch):
    """Counts the thread pools that ``map_trees`` starts (positive control: the
    ``n_jobs=2`` models must really run in threads)."""
    started = []
    real = parallel.Parallel

    def counting(*args, **kwargs):
        started.append(kwargs.get("n_jobs"))
        return real(*args, **kwargs)

    monkeypatch.setattr(parallel, "Parallel", counting)
    return started


@pytest.fixture(scope="module")
def classification():
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(N_TRAIN, 5))
    y = (X[:, 0] + X[:, 1] > 1).astype(int) + (X[:, 2] > 0.6).astype(int)
    return X, y, rng.uniform(-0.2, 1.2, size=(N_TEST, 5))


@pytest.fixture(scope="module")
def regression():
    rng = np.random.RandomState(1)
    X = rng.uniform(size=(N_TRAIN, 4))
    y = np.sin(6 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.randn(N_TRAIN)
    return X, y, rng.uniform(-0.2, 1.2, size=(N_TEST, 4))


def assert_same_trees(a, b):
    """Every array of every tree (structure, boxes, statistics, random streams)."""
    assert len(a.trees_) == len(b.trees_)
    for ta, tb in zip(a.trees_, b.trees_):
        assert ta.n_nodes == tb.n_nodes
        rows_a, rows_b = used_rows(ta.arrays), used_rows(tb.arrays)  # the rest holds none
        for name in rows_a:
            assert_array_equal(rows_a[name], rows_b[name], err_msg=name)
        assert ta.node_stats.keys() == tb.node_stats.keys()
        for name in ta.node_stats:  # capacity depends on which trees finished first
            assert_array_equal(ta.node_stats[name][:ta.n_nodes],
                               tb.node_stats[name][:tb.n_nodes], err_msg=name)
        assert_array_equal(ta.rng_state, tb.rng_state)
        assert_array_equal(ta.sample_next, tb.sample_next)
        assert_array_equal(ta.sample_mult, tb.sample_mult)


def _train(make, n_jobs, X, y, online):
    model = make(n_estimators=6, random_state=7, n_jobs=n_jobs)
    if not online:
        return model.fit(X, y)
    for start in range(0, X.shape[0], BATCH):
        model.partial_fit(X[start:start + BATCH], y[start:start + BATCH])
    return model


@pytest.mark.parametrize("online", [False, True], ids=["fit", "partial_fit"])
@pytest.mark.parametrize("make", CLASSIFIERS)
def test_classifier_two_threads_equal_one(make, online, classification, thread_pools):
    X, y, X_test = classification
    one = _train(make, 1, X, y, online)
    proba = one.predict_proba(X_test)
    assert thread_pools == []
    two = _train(make, 2, X, y, online)
    if not isinstance(two, MondrianBoostingClassifier):  # boosting trains tree by tree
        assert thread_pools, "training with n_jobs=2 ran no thread"
    del thread_pools[:]
    assert_array_equal(two.predict_proba(X_test), proba)
    assert thread_pools, "predicting with n_jobs=2 ran no thread"
    assert_same_trees(one, two)
    assert_array_equal(one.predict(X_test), two.predict(X_test))
    if hasattr(one, "apply"):
        assert_array_equal(one.apply(X_test), two.apply(X_test))


@pytest.mark.parametrize("online", [False, True], ids=["fit", "partial_fit"])
@pytest.mark.parametrize("make", REGRESSORS)
def test_regressor_two_threads_equal_one(make, online, regression, thread_pools):
    X, y, X_test = regression
    one = _train(make, 1, X, y, online)
    prediction = one.predict(X_test)
    assert thread_pools == []
    two = _train(make, 2, X, y, online)
    assert thread_pools, "training with n_jobs=2 ran no thread"
    del thread_pools[:]
    assert_array_equal(two.predict(X_test), prediction)
    assert thread_pools, "predicting with n_jobs=2 ran no thread"
    assert_same_trees(one, two)
    if isinstance(one, MondrianForestRegressor):
        mean1, std1 = one.predict(X_test, return_std=True)
        mean2, std2 = two.predict(X_test, return_std=True)
        assert_array_equal(mean1, mean2)
        assert_array_equal(std1, std2)
        assert_array_equal(one.apply(X_test), two.apply(X_test))
        path1, ptr1 = one.weighted_decision_path(X_test)
        path2, ptr2 = two.weighted_decision_path(X_test)
        assert_array_equal(ptr1, ptr2)
        assert_array_equal(path1.toarray(), path2.toarray())


def test_models_trained_with_threads_predict_alike_without(classification):
    """Training threads and prediction threads are independent choices."""
    X, y, X_test = classification
    model = MondrianForestClassifier(n_estimators=6, random_state=3, n_jobs=2).fit(X, y)
    proba = model.predict_proba(X_test)
    model.set_params(n_jobs=1)
    assert_array_equal(model.predict_proba(X_test), proba)
    model.set_params(n_jobs=-1)
    assert_array_equal(model.predict_proba(X_test), proba)


def test_run_split_runs_each_part_once_and_waits_for_all_on_an_error():
    import threading
    import time

    from mondrianlearn.utils.parallel import run_split

    seen, lock = [], threading.Lock()

    def part(a, b, k):
        with lock:
            seen.append((a, b, k))
        return b - a

    assert run_split(part, 10, 3) == 10
    assert sorted(seen) == [(0, 3, 0), (3, 6, 1), (6, 10, 2)]
    assert run_split(part, 1, 2) == 1  # never more parts than items
    done = []

    def failing(a, b, k):
        if k == 0:
            raise ValueError("part 0")
        time.sleep(0.05)
        done.append(k)
        return 0

    with pytest.raises(ValueError, match="part 0"):
        run_split(failing, 4, 2)
    assert done == [1]  # the other part had finished when the error came out


def test_run_each_calls_the_function_once_per_item():
    import threading

    from mondrianlearn.utils.parallel import run_each

    seen, lock = [], threading.Lock()

    def one(item):
        with lock:
            seen.append((item, threading.get_ident()))

    run_each(one, [5, 7, 9, 11], 2)
    assert sorted(item for item, _ in seen) == [5, 7, 9, 11]
    assert len({ident for _, ident in seen}) == 2  # the two halves in two threads
    run_each(one, [], 2)  # nothing to do
    assert len(seen) == 4
