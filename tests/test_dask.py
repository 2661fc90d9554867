"""Forests on a cluster: merging forests, joblib's Dask backend, sharded forests.

The Dask tests start their own ``dask.distributed.LocalCluster`` with two worker
processes; they are skipped when ``dask.distributed`` is not installed.
"""

import os
import signal

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from mondrianlearn import MondrianForestClassifier, MondrianForestRegressor, merge_forests


@pytest.fixture(scope="module")
def classification():
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(900, 4))
    y = (X[:, 0] + X[:, 1] > 1).astype(int) + (X[:, 2] > 0.6).astype(int)
    return X, y, rng.uniform(-0.2, 1.2, size=(150, 4))


@pytest.fixture(scope="module")
def regression():
    rng = np.random.RandomState(1)
    X = rng.uniform(size=(900, 3))
    y = np.sin(6 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.randn(900)
    return X, y, rng.uniform(-0.2, 1.2, size=(150, 3))


def _stream(model, X, y, batch=100, **kwargs):
    for start in range(0, X.shape[0], batch):
        model.partial_fit(X[start:start + batch], y[start:start + batch], **kwargs)
    return model


def _weighted(forests, values):
    n = np.array([len(f._trained_trees()) for f in forests], dtype=float)
    return sum(w * v for w, v in zip(n / n.sum(), values))


def _mixture(forests, X):
    """Mean and std of the tree-weighted mixture of regressors' predictions."""
    parts = [f.predict(X, return_std=True) for f in forests]
    mean = _weighted(forests, [m for m, _ in parts])
    second = _weighted(forests, [s * s + m * m for m, s in parts])
    return mean, np.sqrt(np.maximum(second - mean * mean, 0.0))


# ----------------------------------------------------------------- merge_forests
@pytest.mark.parametrize("bootstrap", [False, True])
def test_merged_classifier_predicts_weighted_average(bootstrap, classification):
    X, y, X_test = classification
    a = MondrianForestClassifier(3, bootstrap=bootstrap, random_state=0).fit(X[:400], y[:400])
    b = _stream(MondrianForestClassifier(2, bootstrap=bootstrap, random_state=1),
                X[400:], y[400:])
    merged = merge_forests([a, b])
    assert merged.n_estimators == 5 and len(merged.trees_) == 5
    assert merged.n_samples_seen_ == X.shape[0]
    assert merged._store.n == a._store.n + b._store.n
    assert_allclose(merged.predict_proba(X_test),
                    _weighted([a, b], [a.predict_proba(X_test), b.predict_proba(X_test)]),
                    rtol=0, atol=1e-12)


@pytest.mark.parametrize("bootstrap", [False, True])
def test_merged_classifier_keeps_learning_like_its_parts(bootstrap, classification):
    """The merged trees learn on exactly as they would have in their own forests.

    ``min_samples_split`` makes leaves pause and later re-sample from their stored
    points, which checks that sample ids were moved to the merged store correctly.
    """
    X, y, X_test = classification
    params = dict(min_samples_split=6, bootstrap=bootstrap)
    parts = [_stream(MondrianForestClassifier(3, random_state=0, **params), X[:300], y[:300]),
             _stream(MondrianForestClassifier(2, random_state=1, **params), X[300:600],
                     y[300:600])]
    merged = merge_forests(parts)
    _stream(merged, X[600:], y[600:])
    for part in parts:
        _stream(part, X[600:], y[600:])
    for tree, reference in zip(merged.trees_, parts[0].trees_ + parts[1].trees_):
        assert tree.n_nodes == reference.n_nodes
        n = tree.n_nodes
        assert_array_equal(tree.arrays.threshold[:n], reference.arrays.threshold[:n])
        assert_array_equal(tree.node_stats["stats"][:n], reference.node_stats["stats"][:n])
    assert_allclose(merged.predict_proba(X_test),
                    _weighted(parts, [p.predict_proba(X_test) for p in parts]),
                    rtol=0, atol=1e-12)


def test_merge_takes_the_union_of_classes(classification):
    X, y, X_test = classification
    no_two, no_zero = y != 2, y != 0
    a = MondrianForestClassifier(3, random_state=0).fit(X[no_two][:300], y[no_two][:300])
    b = MondrianForestClassifier(2, random_state=1).fit(X[no_zero][:300], y[no_zero][:300])
    merged = merge_forests([a, b])
    assert_array_equal(merged.classes_, [0, 1, 2])
    # The same forests, told all classes up front (zero counts for the missing one).
    wide = [MondrianForestClassifier(3, random_state=0).partial_fit(
                X[no_two][:300], y[no_two][:300], classes=[0, 1, 2]),
            MondrianForestClassifier(2, random_state=1).partial_fit(
                X[no_zero][:300], y[no_zero][:300], classes=[0, 1, 2])]
    assert_allclose(merged.predict_proba(X_test),
                    _weighted(wide, [w.predict_proba(X_test) for w in wide]),
                    rtol=0, atol=1e-12)
    merged.partial_fit(X[:100], y[:100])  # keeps learning
    for part in wide:
        part.partial_fit(X[:100], y[:100])
    assert_allclose(merged.predict_proba(X_test),
                    _weighted(wide, [w.predict_proba(X_test) for w in wide]),
                    rtol=0, atol=1e-12)


def test_merged_regressor_rescales_targets(regression):
    X, y, X_test = regression
    # Different first batches, hence different target offsets and scales.
    a = MondrianForestRegressor(3, random_state=0, min_samples_split=4).fit(X[:300], y[:300])
    b = _stream(MondrianForestRegressor(2, random_state=1, min_samples_split=4),
                X[300:600], 3.0 * y[300:600] + 5.0)
    assert a._y_offset != b._y_offset and a._y_scale != b._y_scale
    merged = merge_forests([a, b])
    assert merged._y_offset == a._y_offset and merged._y_scale == a._y_scale
    mean, std = merged.predict(X_test, return_std=True)
    ref_mean, ref_std = _mixture([a, b], X_test)
    assert_allclose(mean, ref_mean, rtol=1e-12, atol=1e-12)
    assert_allclose(std, ref_std, rtol=1e-9, atol=1e-12)
    _stream(merged, X[600:], y[600:])
    for part in (a, b):
        _stream(part, X[600:], y[600:])
    mean, std = merged.predict(X_test, return_std=True)
    ref_mean, ref_std = _mixture([a, b], X_test)
    assert_allclose(mean, ref_mean, rtol=1e-12, atol=1e-12)
    assert_allclose(std, ref_std, rtol=1e-9, atol=1e-12)


def test_merge_leaves_its_inputs_unchanged(classification):
    X, y, X_test = classification
    a = MondrianForestClassifier(2, random_state=0).fit(X[:200], y[:200])
    b = MondrianForestClassifier(2, random_state=1).fit(X[200:400], y[200:400])
    before = a.predict_proba(X_test), b.predict_proba(X_test)
    merge_forests([a, b]).partial_fit(X[400:], y[400:])
    assert_array_equal(a.predict_proba(X_test), before[0])
    assert_array_equal(b.predict_proba(X_test), before[1])


def test_merge_rejects_incompatible_forests(classification, regression):
    X, y, _ = classification
    Xr, yr, _ = regression
    clf = MondrianForestClassifier(2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="at least one"):
        merge_forests([])
    with pytest.raises(TypeError, match="same class"):
        merge_forests([clf, MondrianForestRegressor(2).fit(Xr, yr)])
    with pytest.raises(ValueError, match="lifetime"):
        merge_forests([clf, MondrianForestClassifier(2, lifetime=3.0).fit(X, y)])
    with pytest.raises(ValueError, match="features"):
        merge_forests([clf, MondrianForestClassifier(2).fit(X[:, :3], y)])
    with pytest.raises(Exception, match="not fitted"):
        merge_forests([clf, MondrianForestClassifier(2)])
    merged = merge_forests([clf, MondrianForestClassifier(3, n_jobs=2, random_state=5).fit(X, y)])
    assert merged.n_estimators == 5


# ----------------------------------------------------------------------- Dask
@pytest.fixture(scope="module")
def client():
    """A LocalCluster of two worker processes, started by this test module."""
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install 'dask[distributed]')")
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=":0")
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_joblib_dask_backend_matches_local(client, classification, regression):
    joblib = pytest.importorskip("joblib")
    X, y, X_test = classification
    Xr, yr, Xr_test = regression
    local = MondrianForestClassifier(6, random_state=0).fit(X, y)
    local_online = _stream(MondrianForestClassifier(6, random_state=0, min_samples_split=5),
                           X, y, batch=300)
    local_reg = MondrianForestRegressor(6, random_state=0).fit(Xr, yr)
    with joblib.parallel_backend("dask"):
        remote = MondrianForestClassifier(6, random_state=0).fit(X, y)
        remote_online = _stream(MondrianForestClassifier(6, random_state=0, min_samples_split=5),
                                X, y, batch=300)
        remote_reg = MondrianForestRegressor(6, random_state=0).fit(Xr, yr)
        proba = remote.predict_proba(X_test)
        proba_online = remote_online.predict_proba(X_test)
        leaves = remote.apply(X_test)
        mean, std = remote_reg.predict(Xr_test, return_std=True)
    assert_array_equal(proba, local.predict_proba(X_test))
    assert_array_equal(proba_online, local_online.predict_proba(X_test))
    assert_array_equal(leaves, local.apply(X_test))
    local_mean, local_std = local_reg.predict(Xr_test, return_std=True)
    assert_array_equal(mean, local_mean)
    assert_array_equal(std, local_std)


def test_joblib_dask_backend_amf_matches_local(client, classification):
    joblib = pytest.importorskip("joblib")
    amf = pytest.importorskip("mondrianlearn.amf", reason="AMF is not importable")
    X, y, X_test = classification
    local = _stream(amf.AMFClassifier(4, random_state=0), X, y, batch=300)
    with joblib.parallel_backend("dask"):
        remote = _stream(amf.AMFClassifier(4, random_state=0), X, y, batch=300)
        proba = remote.predict_proba(X_test)
    assert_array_equal(proba, local.predict_proba(X_test))


def test_sharded_classifier_matches_local_merged_forest(client, classification):
    from mondrianlearn.dask import DaskShardedForest, shard_estimators

    X, y, X_test = classification
    template = MondrianForestClassifier(7, min_samples_split=4, random_state=3)
    shards = shard_estimators(template, 3)
    assert [s.n_estimators for s in shards] == [3, 2, 2]
    forest = DaskShardedForest(template, n_shards=3, client=client)
    for start in range(0, X.shape[0], 150):
        batch = X[start:start + 150], y[start:start + 150]
        forest.partial_fit(*batch)
        for shard in shards:
            shard.partial_fit(*batch)
    assert len(set(forest.shard_workers_)) == 2  # spread over both workers
    local = merge_forests(shards)
    assert_array_equal(forest.classes_, local.classes_)
    assert_allclose(forest.predict_proba(X_test), local.predict_proba(X_test),
                    rtol=0, atol=1e-12)
    assert_array_equal(forest.predict(X_test), local.predict(X_test))
    gathered = forest.gather()
    assert gathered.n_estimators == 7
    assert_array_equal(gathered.predict_proba(X_test), local.predict_proba(X_test))
    with pytest.raises(ValueError, match="features"):  # errors of the shards come back
        forest.partial_fit(X[:10, :3], y[:10])
    forest.partial_fit(X[:50], y[:50])  # and the forest is still usable
    forest.close()


def test_sharded_regressor_matches_local_merged_forest(client, regression):
    from mondrianlearn.dask import DaskShardedForest, shard_estimators

    X, y, X_test = regression
    template = MondrianForestRegressor(4, random_state=0)
    shards = shard_estimators(template, 2)
    with DaskShardedForest(template, n_shards=2, client=client) as forest:
        forest.fit(X[:300], y[:300])
        for shard in shards:
            shard.fit(X[:300], y[:300])
        for start in range(300, X.shape[0], 200):
            forest.partial_fit(X[start:start + 200], y[start:start + 200])
            for shard in shards:
                shard.partial_fit(X[start:start + 200], y[start:start + 200])
        local = merge_forests(shards)
        mean, std = forest.predict(X_test, return_std=True)
        local_mean, local_std = local.predict(X_test, return_std=True)
        assert_allclose(mean, local_mean, rtol=1e-12, atol=1e-12)
        assert_allclose(std, local_std, rtol=1e-9, atol=1e-12)
        assert_allclose(forest.predict(X_test), local_mean, rtol=1e-12, atol=1e-12)
        assert_array_equal(forest.gather().predict(X_test), local_mean)


def test_lost_worker_is_reported(classification):
    """Killing a shard's worker, or closing it, mid-stream raises ShardLostError."""
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install 'dask[distributed]')")
    from mondrianlearn.dask import DaskShardedForest, ShardLostError

    X, y, _ = classification
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        forest = DaskShardedForest(MondrianForestClassifier(4, random_state=0), 2, client)
        forest.partial_fit(X[:100], y[:100])
        victim = forest.shard_workers_[1]
        nanny = next(n for n in cluster.workers.values() if n.worker_address == victim)
        os.kill(nanny.process.process.pid, signal.SIGKILL)
        with pytest.raises(ShardLostError, match="Shard 1 ") as error:
            forest.partial_fit(X[100:200], y[100:200])
        assert error.value.shard == 1 and error.value.worker == victim
        with pytest.raises(ShardLostError, match="Shard 1 "):  # and stays reported
            forest.predict_proba(X[:5])
        survivors = forest.gather(skip_lost=True)
        assert survivors.n_estimators == 2

        client.wait_for_workers(2, timeout=60)  # the nanny restarts the killed worker
        forest = DaskShardedForest(MondrianForestClassifier(4, random_state=0), 2, client)
        forest.partial_fit(X[:100], y[:100])
        # A worker leaving the cluster (Dask refuses to retire a worker holding
        # actors, so its nanny closes it).
        leaving = forest.shard_workers_[0]
        nanny = next(n for n in cluster.workers.values() if n.worker_address == leaving)
        cluster.sync(nanny.close)
        with pytest.raises(ShardLostError, match="Shard 0 "):
            forest.partial_fit(X[100:200], y[100:200])


def test_kernels_pickle_by_reference():
    """Closures shipped to Dask workers refer to kernels: they must not be pickled
    by value (the worker would recompile them, without numba's disk cache)."""
    import pickle

    from mondrianlearn.forest._smoothing import predict_proba_tree

    data = pickle.dumps(predict_proba_tree)
    assert len(data) < 200
    assert pickle.loads(data) is predict_proba_tree
