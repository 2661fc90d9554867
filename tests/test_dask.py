"""Forests on a cluster: merging forests, joblib's Dask backend, sharded forests,
streams of Dask collections.

The Dask tests start their own ``dask.distributed.LocalCluster``: two workers in
this process for most (one per module), two worker processes for the tests that
kill a worker or need pickling across processes. They are skipped when
``dask.distributed`` is not installed; the Parquet tests when ``dask.dataframe`` or
``pyarrow`` is not.
"""

import os
import signal

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
from mondrianlearn.utils.feature_scale import tree_in_raw_units


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
    """Mean and std of the forest made of all the regressors' trees, from each
    forest's parts (the mean of the trees' means; their variances combined as
    ``MondrianForestRegressor``'s and ``AMFRegressor``'s Notes say)."""
    from mondrianlearn.amf._merge import combine_regression_parts, regression_parts

    parts = [regression_parts(f, X, True) for f in forests]
    return combine_regression_parts(parts, [len(f._trained_trees()) for f in forests])


# ----------------------------------------------------------------- merge_forests
MERGE_TOL = 1e-6
"""Forests fitted apart start from different rows, hence from different origins of
the features (``utils.feature_scale``): a merge moves them to the first one's,
rounding their float32 boxes outward again (``rescale_to``), which moves their
predictions by about 1e-7 (1e-12 when the forests share their origin)."""

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
                    rtol=0, atol=MERGE_TOL)


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
    owners = [parts[0]] * 3 + [parts[1]] * 2
    for tree, reference, reference_forest in zip(merged.trees_,
                                                 parts[0].trees_ + parts[1].trees_, owners):
        assert tree.n_nodes == reference.n_nodes
        n = tree.n_nodes
        assert_allclose(tree_in_raw_units(merged, tree).threshold[:n],
                        tree_in_raw_units(reference_forest, reference).threshold[:n],
                        rtol=MERGE_TOL)
        assert_array_equal(tree.node_stats["stats"][:n], reference.node_stats["stats"][:n])
    assert_allclose(merged.predict_proba(X_test),
                    _weighted(parts, [p.predict_proba(X_test) for p in parts]),
                    rtol=0, atol=MERGE_TOL)


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
                    rtol=0, atol=MERGE_TOL)
    merged.partial_fit(X[:100], y[:100])  # keeps learning
    for part in wide:
        part.partial_fit(X[:100], y[:100])
    assert_allclose(merged.predict_proba(X_test),
                    _weighted(wide, [w.predict_proba(X_test) for w in wide]),
                    rtol=0, atol=MERGE_TOL)


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
    assert_allclose(mean, ref_mean, rtol=MERGE_TOL, atol=MERGE_TOL)
    assert_allclose(std, ref_std, rtol=MERGE_TOL, atol=MERGE_TOL)
    _stream(merged, X[600:], y[600:])
    for part in (a, b):
        _stream(part, X[600:], y[600:])
    mean, std = merged.predict(X_test, return_std=True)
    ref_mean, ref_std = _mixture([a, b], X_test)
    assert_allclose(mean, ref_mean, rtol=MERGE_TOL, atol=MERGE_TOL)
    assert_allclose(std, ref_std, rtol=MERGE_TOL, atol=MERGE_TOL)


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
    """A LocalCluster of two workers in this process, started by this test module."""
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install 'dask[distributed]')")
    cluster = distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1,
                                       dashboard_address=":0")
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def process_client():
    """A LocalCluster of two worker processes (models pickled across processes)."""
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install 'dask[distributed]')")
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=":0")
    client = distributed.Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


def test_joblib_dask_backend_matches_local(process_client, classification, regression):
    joblib = pytest.importorskip("joblib")
    X, y, X_test = classification
    Xr, yr, Xr_test = regression
    local = MondrianForestClassifier(6, random_state=0).fit(X, y)
    local_online = _stream(MondrianForestClassifier(6, random_state=0, min_samples_split=5),
                           X, y, batch=300)
    local_reg = MondrianForestRegressor(6, random_state=0).fit(Xr, yr)
    with joblib.parallel_backend("dask", client=process_client):
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


def test_joblib_dask_backend_amf_matches_local(process_client, classification):
    joblib = pytest.importorskip("joblib")
    amf = pytest.importorskip("mondrianlearn.amf", reason="AMF is not importable")
    X, y, X_test = classification
    local = _stream(amf.AMFClassifier(4, random_state=0), X, y, batch=300)
    with joblib.parallel_backend("dask", client=process_client):
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


def test_predicting_before_learning_is_not_fitted(client, classification):
    """NotFittedError, as for the local estimators (the classifier's predict read
    ``classes_`` first and raised AttributeError)."""
    from sklearn.exceptions import NotFittedError

    from mondrianlearn.dask import DaskShardedForest

    X = classification[0]
    for template in (MondrianForestClassifier(4, random_state=0),
                     AMFClassifier(n_estimators=4, random_state=0),
                     MondrianForestRegressor(4, random_state=0)):
        with DaskShardedForest(template, n_shards=2, client=client) as forest:
            with pytest.raises(NotFittedError):
                forest.predict(X[:3])
            if hasattr(template, "predict_proba"):
                with pytest.raises(NotFittedError):
                    forest.predict_proba(X[:3])


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
    """Killing a shard's worker (between mini-batches or while a Dask collection
    streams in), or closing it, raises ShardLostError."""
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
        # Killed while a Dask collection streams in (rows mode: partitions fed by tasks).
        da = pytest.importorskip("dask.array", reason="dask.array is not installed")
        forest = DaskShardedForest(AMFClassifier(4, random_state=0), 2, client, mode="rows")
        forest.partial_fit(X[:100], y[:100], classes=[0, 1, 2])
        victim = forest.shard_workers_[1]
        nanny = next(n for n in cluster.workers.values() if n.worker_address == victim)
        os.kill(nanny.process.process.pid, signal.SIGKILL)
        stream = da.from_array(X, chunks=(100, 4)), da.from_array(y, chunks=100)
        with pytest.raises(ShardLostError, match="Shard 1 "):
            forest.partial_fit(*stream, progress=False)
        assert forest.gather(skip_lost=True).n_estimators == 2

        client.wait_for_workers(2, timeout=60)
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


# ------------------------------------------------------------ AMF merges, dispatch
def test_merged_amf_classifier_predicts_and_learns_like_its_parts(classification):
    X, y, X_test = classification
    parts = [AMFClassifier(3, random_state=0).fit(X[:400], y[:400]),
             _stream(AMFClassifier(2, random_state=1), X[400:700], y[400:700])]
    merged = merge_forests(parts)
    assert merged.n_estimators == 5 and merged.n_samples_seen_ == 700
    for rows in (X_test, X_test[:3]):  # full path and the fast path of a few rows
        assert_allclose(merged.predict_proba(rows),
                        _weighted(parts, [p.predict_proba(rows) for p in parts]),
                        rtol=0, atol=1e-12)
    _stream(merged, X[700:], y[700:], batch=50)
    for part in parts:
        _stream(part, X[700:], y[700:], batch=50)
    # Learning reads the boxes (a cut inside a pure leaf shares its statistics by the
    # box's side of the cut), which the merge re-rounded in the first part's origin.
    assert_allclose(merged.predict_proba(X_test),
                    _weighted(parts, [p.predict_proba(X_test) for p in parts]),
                    rtol=0, atol=MERGE_TOL)


def test_merged_amf_classifier_takes_the_union_of_classes(classification):
    X, y, X_test = classification
    no_two, no_zero = y != 2, y != 0
    parts = [AMFClassifier(3, random_state=0).fit(X[no_two][:300], y[no_two][:300]),
             AMFClassifier(2, random_state=1).fit(X[no_zero][:300], y[no_zero][:300])]
    merged = merge_forests(parts)
    assert_array_equal(merged.classes_, [0, 1, 2])
    # The union is what each forest would hold after meeting the other's labels on
    # rows of weight zero (class counts moved to the new columns, nothing learned).
    for part, missing in zip(parts, (2, 0)):
        part.partial_fit(X[:1], [missing], sample_weight=[0.0])
    assert_allclose(merged.predict_proba(X_test),
                    _weighted(parts, [p.predict_proba(X_test) for p in parts]),
                    rtol=0, atol=1e-12)


def test_merged_amf_regressor_is_the_mixture_in_a_common_frame(regression):
    from mondrianlearn.amf._merge import (
        combine_regression_parts,
        common_frame,
        frame_of,
        reframe,
        regression_parts,
    )

    X, y, X_test = regression
    # different offsets (first targets) and running moments
    a = AMFRegressor(3, random_state=0).fit(X[:400], y[:400])
    b = _stream(AMFRegressor(2, random_state=1), X[400:], 3.0 * y[400:] + 5.0)
    merged = merge_forests([a, b])
    assert merged._y_offset == a._y_offset
    assert merged._y_moments[0] == 900  # pooled total weight
    pooled = np.concatenate([y[:400], 3.0 * y[400:] + 5.0])
    assert_allclose(merged._y_moments[1] + merged._y_offset, pooled.mean(), rtol=1e-12)
    assert_allclose(merged._y_moments[2] / 900, pooled.var(), rtol=1e-9)
    # the mean is the tree-weighted average (empty nodes are not met here)
    assert_allclose(merged.predict(X_test), _weighted([a, b], [a.predict(X_test),
                                                               b.predict(X_test)]),
                    rtol=0, atol=1e-12)
    # groups of trees in the merged frame give the merged forest's distribution
    frame = common_frame([frame_of(a), frame_of(b)])
    parts = [regression_parts(reframe(f, frame), X_test, True) for f in (a, b)]
    mean, std = combine_regression_parts(parts, [3, 2])
    ref_mean, ref_std = merged.predict(X_test, return_std=True)
    assert_allclose(mean, ref_mean, rtol=1e-12, atol=1e-12)
    assert_allclose(std, ref_std, rtol=1e-9, atol=1e-12)
    merged.partial_fit(X[:50], y[:50])  # keeps learning
    assert np.all(np.isfinite(merged.predict(X_test)))


def test_merge_same_stream_keeps_the_stream_once(classification, regression):
    X, y, X_test = classification
    parts = [_stream(MondrianForestClassifier(3, random_state=s, min_samples_split=5), X, y)
             for s in (0, 1)]
    merged = merge_forests(parts, same_stream=True)
    assert merged._store.n == X.shape[0] and merged.n_samples_seen_ == X.shape[0]
    _stream(merged, X[:300], y[:300])
    for part in parts:
        _stream(part, X[:300], y[:300])
    assert_allclose(merged.predict_proba(X_test),
                    _weighted(parts, [p.predict_proba(X_test) for p in parts]),
                    rtol=0, atol=1e-12)
    Xr, yr, _ = regression
    amf = [AMFRegressor(2, random_state=s).fit(Xr, yr) for s in (0, 1)]
    merged = merge_forests(amf, same_stream=True)
    assert_array_equal(merged._y_moments, amf[0]._y_moments)
    assert merged.n_samples_seen_ == Xr.shape[0]
    other = MondrianForestClassifier(2, min_samples_split=5).fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="same rows"):
        merge_forests([parts[0], other], same_stream=True)


def test_merge_refuses_forests_of_dependent_trees(classification):
    from mondrianlearn import MondrianBoostingClassifier, MondrianTreeClassifier

    X, y, _ = classification
    for model in (MondrianBoostingClassifier(2, random_state=0), MondrianTreeClassifier()):
        with pytest.raises(TypeError, match="independent trees .*AMFClassifier"):
            merge_forests([model.fit(X[:200], y[:200])])
    with pytest.raises(TypeError, match="same class"):
        merge_forests([AMFClassifier(2).fit(X, y), MondrianForestClassifier(2).fit(X, y)])


# ------------------------------------------------- sharded forests, both modes
MODELS = {
    "MF classifier": (MondrianForestClassifier, dict(min_samples_split=4)),
    "MF regressor": (MondrianForestRegressor, {}),
    "AMF classifier": (AMFClassifier, {}),
    "AMF regressor": (AMFRegressor, dict(temporary_extension=True)),
}


def _local_shards(template, n_shards, mode, batches):
    """What a sharded forest's shards learn, trained locally, then merged."""
    from mondrianlearn.dask import shard_estimators, split_rows

    shards = shard_estimators(template, n_shards)
    classes = None
    for X, y in batches:
        if mode == "trees":
            for shard in shards:
                shard.partial_fit(X, y)
            continue
        if classes is None and hasattr(template, "predict_proba"):
            classes = np.unique(y)  # rows mode declares the first batch's labels
        for shard, rows in zip(shards, split_rows(X.shape[0], n_shards)):
            if rows.stop > rows.start:
                first = classes is not None and not hasattr(shard, "trees_")
                shard.partial_fit(X[rows], y[rows], **({"classes": classes} if first else {}))
    return merge_forests(shards, same_stream=mode == "trees")


def _assert_same_predictions(forest, local, X_test, exact=False):
    check = assert_array_equal if exact else (
        lambda a, b: assert_allclose(a, b, rtol=MERGE_TOL, atol=MERGE_TOL))
    if hasattr(local, "predict_proba"):
        check(forest.predict_proba(X_test), local.predict_proba(X_test))
        assert_array_equal(forest.predict(X_test), local.predict(X_test))
        return
    mean, std = forest.predict(X_test, return_std=True)
    local_mean, local_std = local.predict(X_test, return_std=True)
    check(mean, local_mean)
    if exact:
        assert_array_equal(std, local_std)
    else:
        assert_allclose(std, local_std, rtol=MERGE_TOL, atol=MERGE_TOL)


@pytest.mark.parametrize("mode", ["trees", "rows"])
@pytest.mark.parametrize("name", list(MODELS))
def test_sharded_forest_equals_local_shards_merged(client, classification, regression, name,
                                                   mode):
    from mondrianlearn.dask import DaskShardedForest

    cls, params = MODELS[name]
    X, y, X_test = classification if "classifier" in name else regression
    template = cls(5, random_state=3, **params)
    batches = [(X[s:s + 150], y[s:s + 150]) for s in range(0, X.shape[0], 150)]
    with DaskShardedForest(template, 2, client, mode=mode) as forest:
        for batch in batches:
            forest.partial_fit(*batch)
        local = _local_shards(template, 2, mode, batches)
        _assert_same_predictions(forest, local, X_test)
        gathered = forest.gather()
        assert type(gathered) is cls and gathered.n_estimators == 5
        assert gathered.n_samples_seen_ == X.shape[0]
        _assert_same_predictions(gathered, local, X_test, exact=True)


@pytest.mark.parametrize("name", ["AMF classifier", "AMF regressor", "MF regressor"])
def test_drift_adaptive_sharded_forest_gathers_in_trees_mode(client, classification,
                                                             regression, name):
    """Drift-adaptive shards gather into the forest of the local shards merged slot
    by slot (``drift._merge``), in both modes."""
    from mondrianlearn.dask import DaskShardedForest

    cls, params = MODELS[name]
    X, y, X_test = classification if "classifier" in name else regression
    X, y = np.vstack([X, X]), np.concatenate([y, y[::-1]])  # a change halfway
    template = cls(4, random_state=3, drift="adwin", **params)
    batches = [(X[s:s + 150], y[s:s + 150]) for s in range(0, X.shape[0], 150)]
    for mode in ("trees", "rows"):
        with DaskShardedForest(template, 2, client, mode=mode) as forest:
            for batch in batches:
                forest.partial_fit(*batch)
            local = _local_shards(template, 2, mode, batches)
            assert len(local.drift_events_) > 0
            _assert_same_predictions(forest, local, X_test)
            gathered = forest.gather()
            assert type(gathered) is cls and gathered.n_estimators == 4
            assert gathered.n_samples_seen_ == X.shape[0]
            _assert_same_predictions(gathered, local, X_test, exact=True)
            assert_array_equal(gathered.drift_events_, local.drift_events_)


def test_sharded_forest_across_processes(process_client, classification):
    """The shards pickled to worker processes and back (AMF, rows mode)."""
    from mondrianlearn.dask import DaskShardedForest

    X, y, X_test = classification
    template = AMFClassifier(4, random_state=0)
    batches = [(X[s:s + 300], y[s:s + 300]) for s in range(0, X.shape[0], 300)]
    with DaskShardedForest(template, 2, process_client, mode="rows") as forest:
        for batch in batches:
            forest.partial_fit(*batch)
        assert len(set(forest.shard_workers_)) == 2
        local = _local_shards(template, 2, "rows", batches)
        _assert_same_predictions(forest.gather(), local, X_test, exact=True)


def test_sharded_forest_refuses_what_it_cannot_shard(client):
    from mondrianlearn import MondrianBoostingClassifier, MondrianKernelClassifier
    from mondrianlearn.dask import DaskShardedForest

    for model in (MondrianBoostingClassifier(4), MondrianKernelClassifier()):
        with pytest.raises(TypeError, match=r"^DaskShardedForest shards .*AMFRegressor.*got "):
            DaskShardedForest(model, 2, client)
    with pytest.raises(ValueError, match="mode"):
        DaskShardedForest(AMFClassifier(4), 2, client, mode="columns")
    with pytest.raises(ValueError, match="n_shards"):
        DaskShardedForest(AMFClassifier(4), 5, client)


def test_rows_mode_declares_the_first_labels(client, classification):
    from mondrianlearn.dask import DaskShardedForest

    X, y, _ = classification
    keep = y < 2
    with DaskShardedForest(AMFClassifier(4, random_state=0), 2, client, mode="rows") as forest:
        forest.partial_fit(X[keep][:200], y[keep][:200])
        assert_array_equal(forest.classes_, [0, 1])
        with pytest.raises(ValueError):  # a label outside those declared
            forest.partial_fit(X[:200], y[:200])
    with DaskShardedForest(AMFClassifier(4, random_state=0), 2, client, mode="rows") as forest:
        forest.partial_fit(X[keep][:200], y[keep][:200], classes=[0, 1, 2])
        forest.partial_fit(X[:200], y[:200])
        assert_array_equal(forest.classes_, [0, 1, 2])


# ------------------------------------------------------ Dask collections, Parquet
@pytest.fixture(scope="module")
def parquet_folder(tmp_path_factory, classification):
    """The classification rows in 6 Parquet files of 150 rows (a 'label' column)."""
    pytest.importorskip("pyarrow", reason="Parquet needs pyarrow (pip install pyarrow)")
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    X, y, _ = classification
    folder = tmp_path_factory.mktemp("parquet")
    for part, start in enumerate(range(0, X.shape[0], 150)):
        frame = pd.DataFrame(X[start:start + 150], columns=[f"x{j}" for j in range(4)])
        frame["label"] = y[start:start + 150]
        frame.to_parquet(folder / f"part-{part:03d}.parquet")
    return folder


def _read_parquet(folder):
    dd = pytest.importorskip("dask.dataframe", reason="dask.dataframe is not installed")
    return dd.read_parquet(str(folder))


@pytest.mark.parametrize("mode", ["trees", "rows"])
def test_sharded_forest_streams_parquet(client, parquet_folder, classification, mode):
    from mondrianlearn.dask import DaskShardedForest, shard_estimators

    X, y, X_test = classification
    frame = _read_parquet(parquet_folder)
    assert frame.npartitions == 6
    template = AMFClassifier(4, random_state=0)
    with DaskShardedForest(template, 2, client, mode=mode) as forest:
        forest.partial_fit(frame, target="label", progress=False)
        # locally: partition j to every shard (trees) or to shard j % 2 (rows)
        shards = shard_estimators(template, 2)
        for j, start in enumerate(range(0, X.shape[0], 150)):
            for i, shard in enumerate(shards):
                if mode == "trees" or i == j % 2:
                    first = mode == "rows" and not hasattr(shard, "trees_")
                    shard.partial_fit(X[start:start + 150], y[start:start + 150],
                                      **({"classes": np.unique(y)} if first else {}))
        local = merge_forests(shards, same_stream=mode == "trees")
        _assert_same_predictions(forest.gather(), local, X_test, exact=True)
        _assert_same_predictions(forest, local, X_test)


def test_partial_fit_stream_equals_partial_fit_on_partitions(client, parquet_folder,
                                                           classification, regression):
    da = pytest.importorskip("dask.array", reason="dask.array is not installed")
    from mondrianlearn.dask import partial_fit_stream

    X, y, X_test = classification
    streamed = partial_fit_stream(MondrianForestClassifier(3, random_state=0),
                                  _read_parquet(parquet_folder), target="label",
                                  progress=False)
    local = _stream(MondrianForestClassifier(3, random_state=0), X, y, batch=150)
    assert_array_equal(streamed.predict_proba(X_test), local.predict_proba(X_test))
    Xr, yr, Xr_test = regression  # a dask array, without a distributed client
    streamed = partial_fit_stream(AMFRegressor(3, random_state=0),
                                  da.from_array(Xr, chunks=(200, 2)),
                                  da.from_array(yr, chunks=300), progress=False,
                                  client=None)
    local = AMFRegressor(3, random_state=0)
    for start in range(0, Xr.shape[0], 200):
        local.partial_fit(Xr[start:start + 200], yr[start:start + 200])
    assert_array_equal(streamed.predict(Xr_test), local.predict(Xr_test))


def test_evaluate_parquet_equals_progressive_evaluation(client, parquet_folder,
                                                        classification):
    from mondrianlearn.dask import evaluate_parquet
    from mondrianlearn.evaluation import Learner, progressive_evaluation

    X, y, _ = classification
    traces = evaluate_parquet(parquet_folder,
                              lambda task: [Learner(task, AMFClassifier(3, random_state=0))],
                              target="label", batch_size=50, progress=False)
    reference = progressive_evaluation([Learner("AMF", AMFClassifier(3, random_state=0))],
                                       X, y, batch_size=50, progress=False)
    assert traces[0].name == "classification"
    for key in ("accuracy", "log_loss"):
        assert traces[0].summary[key] == pytest.approx(reference[0].summary[key], rel=1e-12)
    assert traces[0].samples[-1] == X.shape[0]
    with pytest.raises(ValueError, match="online learners"):
        evaluate_parquet(parquet_folder, [Learner("rf", AMFClassifier(), refit_every=100)],
                         target="label", progress=False)


def test_partial_fit_stream_declares_classes_on_the_first_call_only(classification):
    da = pytest.importorskip("dask.array", reason="dask.array is not installed")
    from mondrianlearn.dask import partial_fit_stream

    class Recorder:  # has partial_fit but is not a scikit-learn estimator
        def __init__(self):
            self.calls = []

        def partial_fit(self, X, y, classes=None):
            self.calls.append(classes)

    X, y, X_test = classification
    parts = (da.from_array(X[:600], chunks=(200, 4)), da.from_array(y[:600], chunks=200))
    recorder = partial_fit_stream(Recorder(), *parts, classes=[0, 1, 2, 7], progress=False)
    assert recorder.calls == [[0, 1, 2, 7], None, None]
    # a library model: declared on its first call (so label 7 is a class), never later
    streamed = partial_fit_stream(MondrianForestClassifier(3, random_state=0), *parts,
                                  classes=[0, 1, 2, 7], progress=False)
    local = _stream(MondrianForestClassifier(3, random_state=0), X[:200], y[:200],
                    batch=200, classes=[0, 1, 2, 7])
    _stream(local, X[200:600], y[200:600], batch=200)
    assert streamed.classes_.tolist() == [0, 1, 2, 7]
    assert_array_equal(streamed.predict_proba(X_test), local.predict_proba(X_test))
    # an estimator that has learned already is not given classes (these would differ
    # from its first call's, an error)
    again = partial_fit_stream(streamed, *parts, classes=[0, 1, 2, 7, 9], progress=False)
    assert again.n_samples_seen_ == 1200 and again.classes_.tolist() == [0, 1, 2, 7]
