"""Forests on a Dask cluster, and streams larger than memory.

Three ways to use Dask:

- **Trees spread over workers, model in the client.** ``fit``, ``partial_fit`` and
  ``predict`` of every forest run their per-tree work through joblib, so under
  ``joblib.parallel_backend("dask")`` the trees are trained and queried on the
  workers of the current ``dask.distributed.Client``. Results are the same as local
  training with the same seed.
- **Sharded forests** (:class:`DaskShardedForest`): the trees live on the workers,
  in shards (sub-forests held by Dask actors), for every forest of the library
  (Mondrian forests and AMF, classifiers and regressors, bagged or not). Two modes:
  ``mode="trees"`` sends every row to every shard (the forest is exactly the local
  one); ``mode="rows"`` gives each shard its own part of the stream (the forest is
  made of trees trained on disjoint parts; rows per second grow with the workers).
  :meth:`DaskShardedForest.gather` brings the whole forest back, merged with
  :func:`~mondrianlearn.forest.merge_forests`.
- **Streams larger than memory**: a ``dask.dataframe`` (for instance a folder of
  Parquet files) or a ``dask.array`` is learned partition by partition, in order:
  by a local estimator with :func:`partial_fit_stream` (one or two partitions in the
  client's memory at a time), by a sharded forest with
  :meth:`DaskShardedForest.partial_fit` (partitions go from the workers that read
  them to the shards, never through the client), and evaluated test-then-train with
  :func:`evaluate_parquet`.

Needs ``dask[distributed]`` (``pip install "mondrian-learn[dask]"``); dataframes and
Parquet also need ``dask[dataframe]`` and ``pyarrow``.
"""

import time
import uuid
from collections import deque
from pathlib import Path

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.utils import check_random_state

try:
    from distributed import default_client, get_client, rejoin, secede
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "mondrianlearn.dask needs dask.distributed: pip install \"mondrian-learn[dask]\""
    ) from error

__all__ = ["DaskShardedForest", "ShardLostError", "evaluate_parquet", "partial_fit_stream",
           "shard_estimators", "split_rows"]

MODES = ("trees", "rows")
"""How a :class:`DaskShardedForest` spreads the work (see its ``mode``)."""

_POLL_SECONDS = 1.0
"""How often a wait on the shards checks that their workers are still there."""


class ShardLostError(RuntimeError):
    """A shard of a :class:`DaskShardedForest` is gone (its worker died or left).

    The trees of the shard and what they learned are lost.

    Parameters
    ----------
    shard : int
        Index of the lost shard (kept as the attribute ``shard``).
    worker : str
        Address of the worker that held it (kept as the attribute ``worker``).
    detail : str
        What happened, for the message.
    """

    def __init__(self, shard, worker, detail):
        self.shard = shard
        self.worker = worker
        super().__init__(
            f"Shard {shard} of the sharded forest (held by worker {worker}) was lost: "
            f"{detail}. Its trees and what they learned are gone; the other shards "
            "are intact (gather(skip_lost=True) merges them).")


def _check_shardable(estimator):
    """Refuse, in one line, an estimator that cannot be sharded."""
    from .forest._merge import MERGEABLE_FORESTS, is_mergeable

    if not is_mergeable(type(estimator)):
        raise TypeError(
            f"DaskShardedForest shards forests of independent trees, "
            f"{', '.join(MERGEABLE_FORESTS)} (bagged with bootstrap=True or not); got "
            f"{type(estimator).__name__}.")


def shard_estimators(estimator, n_shards):
    """The sub-forests that a sharded forest of ``estimator`` is made of.

    Shard ``i`` is a clone of ``estimator`` with ``n_estimators // n_shards`` trees
    (one more for the first ``n_estimators % n_shards`` shards) and a seed drawn,
    in shard order, from ``check_random_state(estimator.random_state)``. Training
    these locally on what a :class:`DaskShardedForest` sends them (see its ``mode``)
    and merging them with :func:`~mondrianlearn.forest.merge_forests` gives the same
    forest (when ``random_state`` is an int).

    Parameters
    ----------
    estimator : MondrianForestClassifier, MondrianForestRegressor, AMFClassifier or AMFRegressor
        Unfitted template.
    n_shards : int
        Between 1 and ``estimator.n_estimators``.

    Returns
    -------
    shards : list of estimators
        ``n_shards`` unfitted clones of ``estimator``, in shard order.
    """
    n_trees = int(estimator.n_estimators)
    if not (isinstance(n_shards, (int, np.integer)) and 1 <= n_shards <= n_trees):
        raise ValueError(
            f"n_shards must be an int between 1 and n_estimators={n_trees}, got "
            f"{n_shards!r}.")
    seeds = check_random_state(estimator.random_state).randint(
        np.iinfo(np.int32).max, size=n_shards)
    return [clone(estimator).set_params(n_estimators=n_trees // n_shards
                                        + int(i < n_trees % n_shards),
                                        random_state=int(seed))
            for i, seed in enumerate(seeds)]


def split_rows(n_rows, n_shards):
    """Rows of a mini-batch that each shard learns in ``mode="rows"``.

    Parameters
    ----------
    n_rows : int
        Number of rows to split.
    n_shards : int
        Number of slices.

    Returns
    -------
    parts : list of slice
        ``n_shards`` contiguous slices of near-equal sizes, in shard order (as
        ``numpy.array_split``); a slice is empty when there are fewer rows than
        shards.
    """
    # the sizes of numpy.array_split: the first n_rows % n_shards parts get one more
    sizes = np.full(n_shards, n_rows // n_shards) + (np.arange(n_shards) < n_rows % n_shards)
    ends = np.cumsum(sizes)
    return [slice(int(end - size), int(end)) for end, size in zip(ends, sizes)]


# ------------------------------------------------------------------ the shards
def _is_amf_regressor(estimator):
    from .amf import AMFRegressor

    return isinstance(estimator, AMFRegressor)


class _Shard:
    """Dask actor holding one sub-forest; its ``identity`` reveals a restart."""

    def __init__(self, estimator):
        self.estimator = estimator
        self.identity = uuid.uuid4().hex  # a restarted actor has another one
        self.n_learned = 0  # learning calls, to know when a cached frame is stale
        self._framed = None

    def get_identity(self):
        return self.identity

    def _summary(self):
        """``(identity, classes, target frame of an AMF regressor, fitted)``."""
        estimator = self.estimator
        fitted = estimator.__sklearn_is_fitted__()
        frame = classes = None
        if fitted and is_classifier(estimator):
            classes = estimator.classes_
        if fitted and _is_amf_regressor(estimator):
            from .amf._merge import frame_of

            frame = frame_of(estimator)
        return self.identity, classes, frame, fitted

    def fit(self, X, y, kwargs):
        self.n_learned += 1
        self.estimator.fit(X, y, **kwargs)
        return self._summary()

    def partial_fit(self, X, y, kwargs, classes=None):
        """``partial_fit``; ``classes`` is declared on the shard's first call only."""
        self.n_learned += 1
        if classes is not None and not self.estimator.__sklearn_is_fitted__():
            kwargs = {**kwargs, "classes": classes}
        self.estimator.partial_fit(X, y, **kwargs)
        return self._summary()

    def _weight(self):
        return len(self.estimator._trained_trees())

    def predict_proba(self, X):
        proba = self.estimator.predict_proba(X)
        return self._summary()[0], proba, self._weight()

    def predict_regression(self, X, return_std, frame):
        """The parts of the sub-forest's prediction
        (:func:`mondrianlearn.amf._merge.regression_parts`): an AMF's in ``frame``, a
        Mondrian forest's as it is (``frame`` None; each tree predicts in its
        forest's target units)."""
        from .amf._merge import regression_parts

        forest = self.estimator if frame is None else self._in_frame(frame)
        return self._summary()[0], regression_parts(forest, X, return_std), self._weight()

    def _in_frame(self, frame):
        """The sub-forest expressed in ``frame`` (cached until it learns again)."""
        from .amf._merge import frame_of, reframe

        own = frame_of(self.estimator)
        if own.offset == frame.offset and np.array_equal(own.moments, frame.moments):
            return self.estimator
        key = (self.n_learned, frame.offset, tuple(frame.moments))
        if self._framed is None or self._framed[0] != key:
            self._framed = (key, reframe(self.estimator, frame))
        return self._framed[1]

    def get_estimator(self):
        return self._summary()[0], self.estimator


def _worker_addresses(dask_scheduler):
    """Addresses of the cluster's workers, read on the scheduler (the client's cached
    ``scheduler_info`` may be refreshed without them at any moment)."""
    return list(dask_scheduler.workers)


def _feed_shard(actor, rows, previous, kwargs, classes):
    """Task run on a shard's worker: the shard learns one partition.

    ``previous`` (the shard's previous feed) only orders the feeds. The task leaves
    the worker's thread pool while the actor learns, so that the worker can read
    the next partition meanwhile.
    """
    X, y = rows
    if X.shape[0] == 0:
        return None, 0
    secede()
    try:
        summary = actor.partial_fit(X, y, kwargs, classes).result()
    finally:
        rejoin()
    return summary, X.shape[0]


class DaskShardedForest:
    """A forest whose trees are sharded over Dask workers.

    Each shard is a sub-forest (see :func:`shard_estimators`) held by a Dask actor
    on a worker, placed round-robin over the workers. Predictions are those of the
    merged forest (:meth:`gather`): the average of the shards' predictions weighted
    by their numbers of trees (for regressors, the predictive distribution of the
    merged forest), computed on the workers without moving the trees.

    Parameters
    ----------
    estimator : MondrianForestClassifier, MondrianForestRegressor, AMFClassifier or AMFRegressor
        Unfitted template: its ``n_estimators`` trees are split over the shards and
        its ``random_state`` seeds them (an int makes the forest reproducible).
        Other estimators (boosting, whose trees depend on one another; the kernel
        models) are refused here.
    n_shards : int
        Number of sub-forests (at most ``n_estimators``). One per worker is the
        natural choice: the shards of one worker learn one after the other (a worker
        runs its actors in one thread).
    client : dask.distributed.Client, default=None
        Client of the cluster; ``None`` uses the current default client.
    mode : {"trees", "rows"}, default="trees"
        How the work is spread.

        - ``"trees"``: every row goes to every shard, so the forest is exactly the
          one the shards would make locally on the whole stream (the same trees
          for any number of workers). The work per row is split over the shards,
          but each row is sent to each of them: use it when the trees are the
          cost (many trees, moderate streams) or when the model must not depend
          on the cluster.
        - ``"rows"``: each mini-batch is cut into ``n_shards`` contiguous parts
          (:func:`split_rows`), part ``i`` learned by shard ``i``; a partition
          ``j`` of a Dask collection goes to shard ``j % n_shards``. Each row is
          learned by one shard, so rows per second grow with the number of workers
          (and each tree does less work); the merged forest is made of trees
          trained on disjoint parts of the stream, each on ``1/n_shards`` of it,
          which costs some accuracy on small data sets
          (``benchmarks/results/bench_dask.md``). A classifier's labels are
          declared to every shard on its first call: ``classes`` if given, else
          the labels of the first mini-batch, or of the whole target for a Dask
          collection (one pass over the target column); later labels outside them
          are an error, as with ``classes`` in ``partial_fit``. Mondrian forests
          with ``feature_scale="range"`` take their feature units from the rows
          they learned, so shards may end in different units, which
          :meth:`gather` refuses: give them fixed scales (or ``None``) in rows mode.
          Drift-adaptive forests (``drift`` set) merge with their row counters
          moved to the merged stream (``drift._merge``).

    Attributes
    ----------
    shard_workers_ : list of str
        Address of the worker holding each shard.
    shard_sizes_ : list of int
        Number of trees of each shard.
    classes_ : ndarray
        Classes seen so far (classifiers).

    Raises
    ------
    ShardLostError
        From any call, when a shard's worker died or left: the loss is reported,
        never ignored.

    Examples
    --------
    >>> from dask.distributed import Client, LocalCluster  # doctest: +SKIP
    >>> client = Client(LocalCluster(n_workers=2))  # doctest: +SKIP
    >>> forest = DaskShardedForest(AMFClassifier(10, random_state=0), n_shards=2,
    ...                            mode="rows")  # doctest: +SKIP
    >>> for X, y in stream:  # doctest: +SKIP
    ...     forest.partial_fit(X, y, classes=[0, 1])
    >>> forest.partial_fit(dask.dataframe.read_parquet("rows/"),
    ...                    target="label")  # doctest: +SKIP
    >>> local = forest.gather()  # one AMFClassifier of 10 trees  # doctest: +SKIP
    """

    def __init__(self, estimator, n_shards, client=None, mode="trees"):
        _check_shardable(estimator)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}.")
        shard_estimators(estimator, n_shards)  # checks n_shards
        self.estimator = estimator
        self.n_shards = n_shards
        self.client = client
        self.mode = mode
        self._actors = None

    # ------------------------------------------------------------------ shards
    def _start_shards(self):
        client = self.client if self.client is not None else get_client()
        shards = shard_estimators(self.estimator, self.n_shards)
        workers = sorted(client.run_on_scheduler(_worker_addresses))
        if not workers:
            raise RuntimeError("The Dask cluster has no worker to hold the shards.")
        token = uuid.uuid4().hex
        self._token = token
        self.shard_workers_ = [workers[i % len(workers)] for i in range(len(shards))]
        self.shard_sizes_ = [shard.n_estimators for shard in shards]
        self._futures = [
            client.submit(_Shard, shard, actor=True, workers=[address],
                          allow_other_workers=False, key=f"mondrian-shard-{i}-{token}")
            for i, (shard, address) in enumerate(zip(shards, self.shard_workers_))]
        with client.as_current():  # the actors bind to this client, default or not
            self._actors = [future.result() for future in self._futures]
        identities = [actor.get_identity() for actor in self._actors]
        self._identities = [identity.result() for identity in identities]
        self._summaries = [None] * len(shards)
        self._lost = set()
        self._client = client
        self._declared = None

    def _call(self, method, calls, skip_lost=False):
        """Call ``method`` on shards at once; ``calls`` maps a shard to its
        arguments (or is one argument tuple for every shard). Returns ``{shard:
        result}``."""
        if self._actors is None:
            raise _not_fitted(self)
        if not isinstance(calls, dict):
            calls = {i: calls for i in range(len(self._actors))}
        if skip_lost:
            calls = {i: a for i, a in calls.items() if i not in self._lost}
        if not calls:
            raise RuntimeError("Every shard of the sharded forest was lost.")
        self._check_alive(calls)
        pending = {}
        for i, args in calls.items():
            try:
                pending[i] = getattr(self._actors[i], method)(*args)
            except RuntimeError as exc:  # the actor's task is known lost already
                raise self._shard_lost(i, str(exc)) from exc
        results, failure = {}, None
        for i, future in pending.items():  # wait for all: no call left running
            try:
                results[i] = future.result()
            except Exception as exc:  # noqa: BLE001 - classified below
                if failure is None:
                    failure = (i, exc)
        restarted = [i for i, result in results.items() if not self._same_actor(i, result[0])]
        if failure is not None:
            i, exc = failure
            alive = self._alive_workers()
            gone = alive is not None and self.shard_workers_[i] not in alive
            if gone or isinstance(exc, OSError):
                raise self._shard_lost(i, f"{type(exc).__name__}: {exc}") from exc
            raise exc
        if restarted:
            raise self._shard_lost(restarted[0], "its actor was restarted")
        return results

    def _same_actor(self, i, identity):
        """Whether shard ``i`` answered from the actor it started with (a restarted
        actor has lost what the shard learned)."""
        return identity == self._identities[i]

    def _check_alive(self, shards):
        alive = self._alive_workers()
        for i in shards:
            if i in self._lost:
                raise ShardLostError(i, self.shard_workers_[i], "reported earlier")
            if alive is not None and self.shard_workers_[i] not in alive:
                raise self._shard_lost(i, "its worker is no longer in the cluster")

    def _alive_workers(self):
        """Addresses of the cluster's workers (``None`` if the scheduler is unreachable)."""
        try:
            return set(self._client.run_on_scheduler(_worker_addresses))
        except OSError:
            return None

    def _shard_lost(self, i, detail):
        self._lost.add(i)
        return ShardLostError(i, self.shard_workers_[i], detail)

    def _learned_shards(self):
        """Shards that have learned rows (in ``mode="rows"`` a shard may not have)."""
        return [i for i, s in enumerate(self._summaries) if s is not None and s[3]]

    # ---------------------------------------------------------------- learning
    def fit(self, X, y=None, **fit_params):
        """Start new shards and learn ``(X, y)``.

        In ``mode="trees"`` every shard calls its ``fit`` on all the rows. In
        ``mode="rows"``, and for Dask collections in either mode, this is a first
        :meth:`partial_fit` of new shards.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), dask DataFrame or dask Array
            Training rows: in memory, or a Dask collection read partition by partition.
        y : array-like of shape (n_samples,), default=None
            Targets of the rows; for a dask DataFrame, ``None`` takes them from its
            target column (see :meth:`partial_fit`).
        **fit_params : dict
            ``sample_weight``, and the options of :meth:`partial_fit`.

        Returns
        -------
        self
        """
        self.close()
        self._start_shards()
        if self.mode == "rows" or _is_dask(X):
            return self.partial_fit(X, y, **fit_params)
        self._record(self._call("fit", (X, y, fit_params)))
        return self

    def partial_fit(self, X, y=None, *, classes=None, sample_weight=None, target=None,
                    progress=True):
        """Learn a mini-batch, or a Dask collection partition by partition.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), dask DataFrame or dask Array
            A mini-batch, or a Dask collection streamed in order (its partitions go
            from the workers that hold or read them to the shards; none passes
            through the client).
        y : array-like of shape (n_samples,), dask Array or dask Series, default=None
            Targets; for a dask DataFrame, ``None`` takes them from its ``target``
            column.
        classes : array-like, default=None
            Classifiers: every label of the stream (see ``mode`` for rows mode).
        sample_weight : array-like of shape (n_samples,), default=None
            Mini-batches only.
        target : str, default=None
            Column of a dask DataFrame holding the targets (default: the last
            one); the other columns are the features, in order, as float64.
        progress : bool, default=True
            Show a progress bar (tqdm) when streaming a Dask collection.

        Returns
        -------
        self
        """
        if self._actors is None:
            self._start_shards()
        if _is_dask(X):
            if sample_weight is not None:
                raise ValueError("sample_weight is not supported with Dask collections.")
            self._stream(X, y, target, classes, progress)
            return self
        kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
        if self.mode == "trees":
            if classes is not None:
                kwargs["classes"] = classes
            self._record(self._call("partial_fit", (X, y, kwargs, None)))
            return self
        declared = self._declare_classes(classes, y)
        n_rows = _n_rows(X)
        calls = {}
        for i, rows in enumerate(split_rows(n_rows, len(self._actors))):
            if rows.stop > rows.start:
                part = dict(kwargs)
                if sample_weight is not None:
                    part["sample_weight"] = _take(sample_weight, rows)
                calls[i] = (_take(X, rows), _take(y, rows), part, declared)
        self._record(self._call("partial_fit", calls))
        return self

    def _declare_classes(self, classes, y):
        """Rows mode: the labels declared to every shard (decided on the first call)."""
        if not is_classifier(self.estimator):
            return None
        if self._declared is None:
            labels = classes if classes is not None else y
            self._declared = np.unique(np.asarray(labels))
        return self._declared

    def _record(self, results):
        for i, result in results.items():
            self._summaries[i] = result
        classes = [self._summaries[i][1] for i in self._learned_shards()]
        classes = [c for c in classes if c is not None]
        if classes:
            if any(not np.array_equal(c, classes[0]) for c in classes[1:]):
                raise RuntimeError("The shards disagree on the classes seen so far.")
            self.classes_ = classes[0]

    def _stream(self, X, y, target, classes, progress):
        """Feed a Dask collection's partitions to the shards, in order."""
        client = self._client
        parts, n_rows = _partitions(X, y, target)
        n_shards = len(self._actors)
        declared = None
        if self.mode == "rows" and is_classifier(self.estimator):
            if self._declared is None:
                self._declared = np.unique(np.asarray(
                    classes if classes is not None
                    else client.compute(_labels(X, y, target)).result()))
            declared = self._declared
        kwargs = {} if classes is None or self.mode == "rows" else {"classes": classes}
        self._check_alive(range(n_shards))
        bar = _progress_bar(progress, n_rows, f"{type(self.estimator).__name__} "
                                             f"({n_shards} shards, {self.mode})")
        previous = [None] * n_shards
        feeds = deque()
        window = 2 * n_shards  # feeds in flight: bounds the partitions held by workers
        try:
            for j, part in enumerate(parts):
                if self.mode == "rows":
                    shards = [j % n_shards]
                    rows = client.compute(part, workers=[self.shard_workers_[shards[0]]])
                else:
                    shards = list(range(n_shards))
                    rows = client.compute(part)
                for i in shards:
                    previous[i] = client.submit(
                        _feed_shard, self._futures[i], rows, previous[i], kwargs, declared,
                        workers=[self.shard_workers_[i]], allow_other_workers=False,
                        pure=False, key=f"mondrian-feed-{i}-{j}-{uuid.uuid4().hex}")
                    feeds.append((i, previous[i]))
                del rows
                while len(feeds) >= window:
                    self._collect_feed(*feeds.popleft(), bar)
            while feeds:
                self._collect_feed(*feeds.popleft(), bar)
        finally:
            for _, future in feeds:
                future.cancel()
            if bar is not None:
                bar.close()
        self._record({})

    def _collect_feed(self, i, future, bar):
        """Wait for a feed of shard ``i``, checking meanwhile that its worker is there."""
        while True:
            try:
                summary, n_rows = future.result(timeout=_POLL_SECONDS)
                break
            except TimeoutError:
                self._check_alive([i])
            except Exception as exc:  # noqa: BLE001 - a lost worker, or the shard's error
                alive = self._alive_workers()
                if alive is not None and self.shard_workers_[i] not in alive:
                    raise self._shard_lost(i, f"{type(exc).__name__}: {exc}") from exc
                raise
        if summary is not None:
            if not self._same_actor(i, summary[0]):
                raise self._shard_lost(i, "its actor was restarted")
            self._summaries[i] = summary
        if bar is not None:
            bar.update(n_rows)

    # -------------------------------------------------------------- prediction
    def _prediction_shards(self):
        shards = self._learned_shards() if self._actors is not None else []
        if not shards:
            raise _not_fitted(self)
        return shards

    def predict_proba(self, X):
        """Class probabilities of the merged forest (the shards' average, weighted by
        their numbers of trees).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to one.
        """
        if not is_classifier(self.estimator):
            raise AttributeError("predict_proba is only available for classifiers.")
        shards = self._prediction_shards()
        parts = self._call("predict_proba", {i: (X,) for i in shards}).values()
        weights = _tree_weights([n for _, _, n in parts])
        return sum(w * proba for w, (_, proba, _) in zip(weights, parts))

    def predict(self, X, return_std=False):
        """Predicted class (classifiers) or predictive mean (regressors) of the merged
        forest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.
        return_std : bool, default=False
            Regressors only: also return the standard deviation of the merged
            forest's predictive distribution.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Predicted class or predictive mean of each row.
        std : ndarray of shape (n_samples,)
            Only when ``return_std`` is true.
        """
        if is_classifier(self.estimator):
            if return_std:
                raise ValueError("return_std is only available for regressors.")
            proba = self.predict_proba(X)  # first: it says when nothing was learned yet
            return self.classes_[np.argmax(proba, axis=1)]
        from .amf._merge import combine_regression_parts, common_frame

        shards = self._prediction_shards()
        frame = None
        if _is_amf_regressor(self.estimator):
            frame = common_frame([self._summaries[i][2] for i in shards],
                                 same_stream=self.mode == "trees")
        results = self._call("predict_regression", {i: (X, return_std, frame) for i in shards})
        parts = [results[i] for i in shards]
        return combine_regression_parts([p for _, p, _ in parts], [n for _, _, n in parts])

    # ------------------------------------------------------------------ result
    def gather(self, skip_lost=False):
        """The whole forest, brought back from the workers and merged.

        Parameters
        ----------
        skip_lost : bool, default=False
            Merge only the shards still alive (instead of raising
            :class:`ShardLostError` when one is gone).

        Returns
        -------
        forest : estimator of the template's class
            A local forest: :func:`~mondrianlearn.forest.merge_forests` of the
            shards (with ``same_stream=True`` in ``mode="trees"``). In
            ``mode="rows"``, shards that have learned no row are left out.
        """
        from .forest import merge_forests

        shards = {i: () for i in self._prediction_shards()}
        results = self._call("get_estimator", shards, skip_lost=skip_lost)
        return merge_forests([results[i][1] for i in sorted(results)],
                             same_stream=self.mode == "trees")

    def close(self):
        """Release the shards (their workers drop the sub-forests)."""
        if self._actors is not None:
            for future in self._futures:
                future.release()
        self._actors = None
        self._futures = []

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __repr__(self):
        return (f"{type(self).__name__}({self.estimator!r}, n_shards={self.n_shards!r}, "
                f"mode={self.mode!r})")


def _tree_weights(n_trained):
    """Weights of the shards in the average: their shares of the trained trees."""
    n_trained = np.asarray(n_trained, dtype=np.float64)
    total = n_trained.sum()
    if total <= 0:
        return np.full(n_trained.shape, 1.0 / n_trained.shape[0])
    return n_trained / total


def _not_fitted(forest):
    from sklearn.exceptions import NotFittedError

    return NotFittedError(
        f"This {type(forest).__name__} is not fitted yet: call fit or partial_fit first.")


def _has_learned(estimator):
    """Whether ``estimator`` is fitted, as scikit-learn's ``check_is_fitted`` says
    (the library's models answer with ``__sklearn_is_fitted__``); False for an
    object with ``partial_fit`` that is not a scikit-learn estimator."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(estimator)
    except (NotFittedError, TypeError):
        return False
    return True


def _n_rows(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _take(values, rows):
    """Rows of an array, a pandas object or a list."""
    if values is None:
        return None
    if hasattr(values, "iloc"):
        return values.iloc[rows]
    if isinstance(values, list):
        return values[rows]
    return np.asarray(values)[rows]


# --------------------------------------------------------------- Dask streams
def _is_dask(X):
    from dask import is_dask_collection

    return is_dask_collection(X)


def _frame_rows(frame, target):
    """``(X, y)`` of a pandas partition: the ``target`` column (default: the last)
    and the other columns as a C-contiguous float64 array."""
    name = frame.columns[-1] if target is None else target
    if name not in frame.columns:
        raise KeyError(f"The data has no column {name!r} (columns: {list(frame.columns)}).")
    features = frame.drop(columns=[name])
    other = [c for c, dtype in features.dtypes.items() if dtype.kind not in "biuf"]
    if other:
        raise ValueError(f"Feature columns must be numeric; {other} are not (encode them, or "
                         f"leave them out when reading: read_parquet(..., columns=[...])).")
    return np.ascontiguousarray(features.to_numpy(dtype=np.float64)), frame[name].to_numpy()


def _array_rows(X, y):
    return np.ascontiguousarray(X, dtype=np.float64), np.asarray(y).reshape(-1)


def _partitions(X, y, target):
    """One ``dask.delayed`` per partition, in order, computing ``(X, y)`` as NumPy
    arrays; and the total number of rows when it is known without computing."""
    import dask
    import dask.array as da

    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}.")
        if y is None:
            raise ValueError("A dask array X needs its targets y (a dask array).")
        if not isinstance(y, da.Array):
            raise TypeError("With a dask array X, y must be a dask array too.")
        X = X.rechunk({1: -1})
        y = y.reshape(-1).rechunk((X.chunks[0],))
        blocks, targets = X.to_delayed()[:, 0], y.to_delayed()
        parts = [dask.delayed(_array_rows)(b, t) for b, t in zip(blocks, targets)]
        n_rows = X.shape[0] if not np.isnan(X.shape[0]) else None
        return parts, n_rows
    import dask.dataframe as dd

    if not isinstance(X, dd.DataFrame):
        raise TypeError(f"Expected a dask DataFrame or Array, got {type(X).__name__}.")
    if y is not None:
        if not isinstance(y, dd.Series) or y.npartitions != X.npartitions:
            raise ValueError("y must be a dask Series with the partitions of X, or None "
                             "(the targets are then the column `target`).")
        name = y.name if y.name is not None else "__target__"
        X = X.assign(**{name: y})
        target = name
    return [dask.delayed(_frame_rows)(p, target) for p in X.to_delayed()], None


def _labels(X, y, target):
    """A ``dask.delayed`` of the distinct targets of a Dask collection."""
    import dask
    import dask.array as da

    if isinstance(X, da.Array):
        return dask.delayed(np.unique)(da.unique(y.reshape(-1)))
    if y is None:
        y = X[X.columns[-1] if target is None else target]
    return dask.delayed(np.unique)(y.unique())


def _progress_bar(progress, total, description):
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, unit="rows", unit_scale=True,
                dynamic_ncols=True)


def _client_or_none(client):
    if client is not None:
        return client
    try:
        return default_client()
    except ValueError:
        return None


def _rows_in_order(parts, client, prefetch):
    """``(X, y)`` of each partition, in order, at most ``prefetch + 1`` of them in the
    client's memory (the next ones are computed while the current one is used)."""
    pending = deque()
    if client is None:  # dask's local scheduler, one partition ahead in a thread
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            for part in parts:
                pending.append(pool.submit(part.compute))
                if len(pending) > prefetch:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        return
    for part in parts:
        pending.append(client.compute(part))
        if len(pending) > prefetch:
            future = pending.popleft()
            rows = future.result()
            future.release()
            yield rows
    while pending:
        future = pending.popleft()
        rows = future.result()
        future.release()
        yield rows


def partial_fit_stream(estimator, X, y=None, *, target=None, classes=None, progress=True,
                       client=None, prefetch=1):
    """Learn a Dask collection with ``estimator.partial_fit``, partition by partition.

    The partitions are learned in order, each as one mini-batch; the next ones are
    computed meanwhile, and at most ``prefetch + 1`` of them are in the client's
    memory at once, so a dataset larger than memory (a folder of Parquet files read
    with ``dask.dataframe.read_parquet``) streams in flat memory.

    Parameters
    ----------
    estimator : estimator with ``partial_fit``, or DaskShardedForest
        A local estimator of the library (or any with ``partial_fit``). A
        :class:`DaskShardedForest` is given the collection itself (its
        :meth:`~DaskShardedForest.partial_fit`: the partitions then go to the
        shards without passing through the client).
    X : dask DataFrame or dask Array
        Features (a dask DataFrame may hold the targets in its ``target`` column).
    y : dask Array or dask Series, default=None
        Targets, in the partitions of ``X`` (rechunked to them for arrays).
    target : str, default=None
        Column of a dask DataFrame holding the targets (default: the last one); the
        other columns are the features, in order, as float64.
    classes : array-like, default=None
        Passed to the first ``partial_fit`` of an estimator that has not learned yet.
    progress : bool, default=True
        Show a progress bar (tqdm), in rows.
    client : dask.distributed.Client, default=None
        Computes the partitions on its cluster; ``None``: the current default client
        if there is one, else dask's local scheduler.
    prefetch : int, default=1
        Partitions computed ahead of the one being learned.

    Returns
    -------
    estimator
        The estimator, fitted.

    Examples
    --------
    >>> import dask.dataframe as dd  # doctest: +SKIP
    >>> from mondrianlearn import AMFClassifier
    >>> from mondrianlearn.dask import partial_fit_stream
    >>> rows = dd.read_parquet("stream/")  # a folder of Parquet files  # doctest: +SKIP
    >>> model = partial_fit_stream(AMFClassifier(random_state=0), rows,
    ...                            target="label")  # doctest: +SKIP
    """
    if isinstance(estimator, DaskShardedForest):
        return estimator.partial_fit(X, y, target=target, classes=classes, progress=progress)
    parts, n_rows = _partitions(X, y, target)
    bar = _progress_bar(progress, n_rows, type(estimator).__name__)
    declare = classes is not None and not _has_learned(estimator)
    try:
        for X_part, y_part in _rows_in_order(parts, _client_or_none(client), int(prefetch)):
            if X_part.shape[0] == 0:
                continue
            if declare:
                estimator.partial_fit(X_part, y_part, classes=classes)
                declare = False
            else:
                estimator.partial_fit(X_part, y_part)
            if bar is not None:
                bar.update(X_part.shape[0])
    finally:
        if bar is not None:
            bar.close()
    return estimator


# ------------------------------------------------------------------ evaluation
def evaluate_parquet(path, learners, *, target=None, features=None, task=None, batch_size=100,
                     scaler=None, n_rows=None, progress=True, description=None, client=None):
    """Progressive (test-then-train) evaluation on a folder of Parquet files, streamed.

    The same protocol as :func:`mondrianlearn.evaluation.progressive_evaluation`
    (each mini-batch is predicted by every learner, then learned; optional online
    scaling; the first mini-batch is only learned), over the rows of the files in
    order, one partition at a time: the client holds about two partitions, never
    the whole dataset. The task and the classes are read first, in one pass over the
    target column only.

    Parameters
    ----------
    path : str or Path
        A Parquet file, or a folder of them (read with ``dask.dataframe.read_parquet``).
    learners : list of Learner, or callable
        Online learners (:class:`mondrianlearn.evaluation.Learner` with
        ``refit_every=None``; a learner refit on the prefix would need the whole
        prefix in memory). A callable is called with the task (``"classification"``
        or ``"regression"``) and returns them, for callers whose models depend on it.
    target : str, default=None
        Target column (default: the last one).
    features : list of str, default=None
        Feature columns, read in this order (default: every column but the target;
        they must be numeric).
    task : {"classification", "regression"}, default=None
        Inferred when ``None``: regression for a floating-point target with a
        non-integer value, classification otherwise.
    batch_size : int, default=100
        Size of the mini-batches (a batch is predicted, then learned).
    scaler : transformer with ``partial_fit`` and ``transform``, default=None
        Online feature scaling, as in ``progressive_evaluation`` (a clone is used).
    n_rows : int, default=None
        Evaluate the first ``n_rows`` rows only.
    progress : bool, default=True
        Show a progress bar (tqdm) with the running metric.
    description : str, default=None
        Label of the progress bar (default: the folder's name).
    client : dask.distributed.Client, default=None
        Reads the partitions on its cluster; ``None``: the current default client if
        there is one, else dask's local scheduler.

    Returns
    -------
    traces : list of Trace
        As ``progressive_evaluation``: curves and a ``summary`` (accuracy and log
        loss, or MSE and MAE; seconds, samples per second, model size). ROC AUC is
        not computed (it would need every prediction kept).

    Examples
    --------
    >>> from mondrianlearn import AMFClassifier
    >>> from mondrianlearn.evaluation import Learner
    >>> traces = evaluate_parquet("stream/", [Learner("AMF", AMFClassifier())],
    ...                           target="label")  # doctest: +SKIP
    >>> traces[0].summary["accuracy"]  # doctest: +SKIP
    """
    import dask
    import dask.dataframe as dd

    from .evaluation import Trace, warm_up

    if features is not None:
        if target is None:
            raise ValueError("Give the target column when choosing the feature columns.")
        frame = dd.read_parquet(str(path), columns=[*features, target])
    else:
        frame = dd.read_parquet(str(path))
    name = frame.columns[-1] if target is None else target
    if name not in frame.columns:
        raise KeyError(f"{path} has no column {name!r} (columns: {list(frame.columns)}).")
    column = frame[name]
    client = _client_or_none(client)
    compute = client.compute if client is not None else None
    floating = column.dtype.kind == "f"
    checks = [column.count()]
    if task is None and floating:
        checks.append((column % 1 != 0).any())
    if task != "regression":
        checks.append(column.unique())
    values = (dask.compute(*checks) if compute is None
              else [f.result() for f in compute(list(checks))])
    total = int(values[0])
    if task is None:
        task = "regression" if floating and bool(values[1]) else "classification"
    classification = task == "classification"
    classes = np.unique(values[-1]) if classification else None
    if n_rows is not None:
        total = min(total, int(n_rows))
    if callable(learners):
        learners = learners(task)
    learners = list(learners)
    if any(lr.refit_every is not None for lr in learners):
        raise ValueError("evaluate_parquet evaluates online learners only (refit_every=None): "
                         "refitting on the prefix would need it in memory.")
    if scaler is not None:
        scaler = clone(scaler)
    batch_size = int(batch_size)
    parts, _ = _partitions(frame, None, name)
    traces = [Trace(lr.name) for lr in learners]
    scores = [_StreamScores(classes) for _ in learners]
    checkpoint_every = max(batch_size, (total // 50) // batch_size * batch_size)
    bar = _progress_bar(progress, total, description or Path(str(path)).name)
    seen = 0
    try:
        for X_part, y_part in _rows_in_order(parts, client, 1):
            if seen >= total:
                break
            X_part, y_part = X_part[: total - seen], y_part[: total - seen]
            if seen == 0 and X_part.shape[0]:
                warm_up(learners, X_part, y_part, task)
            for start in range(0, X_part.shape[0], batch_size):
                Xb = X_part[start:start + batch_size]
                yb = y_part[start:start + batch_size]
                X_test = scaler.transform(Xb) if scaler is not None and seen > 0 else Xb
                if scaler is not None:
                    scaler.partial_fit(Xb)
                X_train = scaler.transform(Xb) if scaler is not None else Xb
                for lr, trace, score in zip(learners, traces, scores):
                    if seen > 0:
                        tic = time.perf_counter()
                        score.add(lr.model, X_test, yb)
                        trace.predict_seconds += time.perf_counter() - tic
                    tic = time.perf_counter()
                    if seen == 0 and classification:
                        lr.model.partial_fit(X_train, yb, classes=classes)
                    else:
                        lr.model.partial_fit(X_train, yb)
                    trace.train_seconds += time.perf_counter() - tic
                seen += Xb.shape[0]
                if seen % checkpoint_every < Xb.shape[0] or seen == total:
                    for trace, score in zip(traces, scores):
                        trace.samples.append(seen)
                        trace.metric.append(score.main_metric())
                        trace.seconds.append(trace.train_seconds + trace.predict_seconds)
                if bar is not None:
                    bar.update(Xb.shape[0])
                    bar.set_postfix({lr.name: f"{s.main_metric():.4f}"
                                     for lr, s in zip(learners, scores)}, refresh=False)
    finally:
        if bar is not None:
            bar.close()
    for lr, trace, score in zip(learners, traces, scores):
        trace.summary = score.summary()
        elapsed = trace.train_seconds + trace.predict_seconds
        trace.summary["seconds"] = elapsed
        trace.summary["samples_per_second"] = seen / elapsed if elapsed > 0 else float("inf")
        size = getattr(lr.model, "model_size_", None)
        if size is not None:
            trace.summary["model_MB"] = size / 2**20
    return traces


class _StreamScores:
    """Running metrics of a progressive evaluation, in constant memory."""

    def __init__(self, classes):
        self.classes = classes
        self.n = 0
        self.correct = 0
        self.log_loss = 0.0
        self.sq = 0.0
        self.abs = 0.0

    def add(self, model, X, y):
        if X.shape[0] == 0:
            return
        self.n += X.shape[0]
        if self.classes is None:
            error = np.asarray(model.predict(X), dtype=np.float64) - np.asarray(y, np.float64)
            self.sq += float(error @ error)
            self.abs += float(np.abs(error).sum())
            return
        proba = np.asarray(model.predict_proba(X), dtype=np.float64)
        known = np.asarray(model.classes_)
        if not np.array_equal(known, self.classes):  # classes the model has not met yet
            wide = np.zeros((X.shape[0], self.classes.shape[0]))
            wide[:, np.searchsorted(self.classes, known)] = proba
            proba = wide
        truth = np.searchsorted(self.classes, y)
        self.correct += int(np.sum(np.argmax(proba, axis=1) == truth))
        p_true = np.clip(proba[np.arange(X.shape[0]), truth], 1e-15, 1.0)
        self.log_loss -= float(np.log(p_true).sum())

    def main_metric(self):
        if self.n == 0:
            return float("nan")
        return self.correct / self.n if self.classes is not None else self.sq / self.n

    def summary(self):
        if self.n == 0:
            return {}
        if self.classes is None:
            return {"mse": self.sq / self.n, "mae": self.abs / self.n}
        return {"accuracy": self.correct / self.n, "log_loss": self.log_loss / self.n}
