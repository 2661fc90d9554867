"""Mondrian forests on a Dask cluster.

Two ways to use a cluster:

- **Trees spread over workers.** ``fit``, ``partial_fit`` and ``predict`` of every
  forest run their per-tree work through joblib, so under
  ``joblib.parallel_backend("dask")`` the trees are trained and queried on the
  workers of the current ``dask.distributed.Client`` (the model itself stays in the
  client process). Results are the same as local training with the same seed.
- **Sharded forests** (:class:`DaskShardedForest`), for streams too large for one
  machine: the trees live on the workers, in shards (sub-forests held by Dask
  actors). Every mini-batch is sent to every shard; predictions are the average of
  the shards weighted by their numbers of trees; :meth:`DaskShardedForest.gather`
  brings the whole forest back with :func:`~mondrianlearn.forest.merge_forests`.

Needs ``dask[distributed]`` (``pip install "mondrian-learn[dask]"``).
"""

import uuid

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.utils import check_random_state

try:
    from distributed import get_client
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "mondrianlearn.dask needs dask.distributed: pip install \"mondrian-learn[dask]\""
    ) from error

__all__ = ["DaskShardedForest", "ShardLostError", "shard_estimators"]


class ShardLostError(RuntimeError):
    """A shard of a :class:`DaskShardedForest` is gone (its worker died or left).

    The trees of the shard and what they learned are lost. Attributes ``shard``
    (index) and ``worker`` (address) say which.
    """

    def __init__(self, shard, worker, detail):
        self.shard = shard
        self.worker = worker
        super().__init__(
            f"Shard {shard} of the sharded forest (held by worker {worker}) was lost: "
            f"{detail}. Its trees and what they learned are gone; the other shards "
            "are intact (gather(skip_lost=True) merges them).")


def shard_estimators(estimator, n_shards):
    """The sub-forests that a sharded forest of ``estimator`` is made of.

    Shard ``i`` is a clone of ``estimator`` with ``n_estimators // n_shards`` trees
    (one more for the first ``n_estimators % n_shards`` shards) and a seed drawn,
    in shard order, from ``check_random_state(estimator.random_state)``. Training
    these locally on the same stream and merging them with
    :func:`~mondrianlearn.forest.merge_forests` gives the same forest as a
    :class:`DaskShardedForest` (when ``random_state`` is an int).

    Parameters
    ----------
    estimator : MondrianForestClassifier or MondrianForestRegressor
        Unfitted template.
    n_shards : int
        Between 1 and ``estimator.n_estimators``.

    Returns
    -------
    shards : list of estimators
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


class _Shard:
    """Dask actor holding one sub-forest; counts its calls to detect a restart."""

    def __init__(self, estimator):
        self.estimator = estimator
        self.n_calls = 0

    def _summary(self):
        self.n_calls += 1
        return self.n_calls, getattr(self.estimator, "classes_", None)

    def fit(self, X, y, kwargs):
        self.estimator.fit(X, y, **kwargs)
        return self._summary()

    def partial_fit(self, X, y, kwargs):
        self.estimator.partial_fit(X, y, **kwargs)
        return self._summary()

    def predict_proba(self, X):
        proba = self.estimator.predict_proba(X)
        return self._summary()[0], proba, len(self.estimator._trained_trees())

    def predict_with_std(self, X):
        mean, std = self.estimator.predict(X, return_std=True)
        return self._summary()[0], (mean, std), len(self.estimator._trained_trees())

    def get_estimator(self):
        return self._summary()[0], self.estimator


class DaskShardedForest:
    """A Mondrian forest whose trees are sharded over Dask workers.

    Each shard is a sub-forest (see :func:`shard_estimators`) held by a Dask actor
    on a worker, placed round-robin over the workers. Every mini-batch given to
    :meth:`partial_fit` is sent to every shard, which extends its trees online;
    predictions are the average of the shards' predictions weighted by their
    numbers of trained trees (for regressors, the mixture of the shards'
    predictive distributions), i.e. the predictions of the merged forest.

    Parameters
    ----------
    estimator : MondrianForestClassifier or MondrianForestRegressor
        Unfitted template: its ``n_estimators`` trees are split over the shards and
        its ``random_state`` seeds them (an int makes the forest reproducible).
    n_shards : int
        Number of sub-forests (at most ``n_estimators``).
    client : dask.distributed.Client, default=None
        Client of the cluster; ``None`` uses the current default client.

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
    >>> forest = DaskShardedForest(MondrianForestClassifier(100, random_state=0),
    ...                            n_shards=2)  # doctest: +SKIP
    >>> for X, y in stream:  # doctest: +SKIP
    ...     forest.partial_fit(X, y)
    >>> local = forest.gather()  # one MondrianForestClassifier of 100 trees  # doctest: +SKIP
    """

    def __init__(self, estimator, n_shards, client=None):
        self.estimator = estimator
        self.n_shards = n_shards
        self.client = client
        self._actors = None

    # ------------------------------------------------------------------ shards
    def _start_shards(self):
        client = self.client if self.client is not None else get_client()
        shards = shard_estimators(self.estimator, self.n_shards)
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise RuntimeError("The Dask cluster has no worker to hold the shards.")
        token = uuid.uuid4().hex
        self.shard_workers_ = [workers[i % len(workers)] for i in range(len(shards))]
        self.shard_sizes_ = [shard.n_estimators for shard in shards]
        self._futures = [
            client.submit(_Shard, shard, actor=True, workers=[address],
                          allow_other_workers=False, key=f"mondrian-shard-{i}-{token}")
            for i, (shard, address) in enumerate(zip(shards, self.shard_workers_))]
        self._actors = [future.result() for future in self._futures]
        self._n_calls = [0] * len(shards)
        self._lost = set()
        self._client = client

    def _call(self, method, *args, skip_lost=False):
        """Call ``method`` on every shard at once; return ``{shard: result}``."""
        if self._actors is None:
            raise _not_fitted(self)
        shards = [i for i in range(len(self._actors)) if not (skip_lost and i in self._lost)]
        if not shards:
            raise RuntimeError("Every shard of the sharded forest was lost.")
        alive = self._alive_workers()
        for i in shards:
            if i in self._lost:
                raise ShardLostError(i, self.shard_workers_[i], "reported earlier")
            if alive is not None and self.shard_workers_[i] not in alive:
                raise self._shard_lost(i, "its worker is no longer in the cluster")
        pending = {}
        for i in shards:
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
        restarted = []
        for i, result in results.items():
            self._n_calls[i] += 1
            if result[0] != self._n_calls[i]:  # a fresh actor answered: state lost
                restarted.append(i)
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

    def _alive_workers(self):
        """Addresses of the cluster's workers (``None`` if the scheduler is unreachable)."""
        try:
            return set(self._client.scheduler_info()["workers"])
        except OSError:
            return None

    def _shard_lost(self, i, detail):
        self._lost.add(i)
        return ShardLostError(i, self.shard_workers_[i], detail)

    # ---------------------------------------------------------------- learning
    def fit(self, X, y, **fit_params):
        """Sample every shard's trees in batch on ``(X, y)`` (new shards).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **fit_params : dict
            Passed to each shard's ``fit`` (e.g. ``sample_weight``).

        Returns
        -------
        self
        """
        self.close()
        self._start_shards()
        self._record(self._call("fit", X, y, fit_params))
        return self

    def partial_fit(self, X, y, **fit_params):
        """Send a mini-batch to every shard, which extends its trees online.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **fit_params : dict
            Passed to each shard's ``partial_fit`` (``classes``, ``sample_weight``).

        Returns
        -------
        self
        """
        if self._actors is None:
            self._start_shards()
        self._record(self._call("partial_fit", X, y, fit_params))
        return self

    def _record(self, results):
        classes = [r[1] for r in results.values()]
        if classes[0] is not None:
            if any(not np.array_equal(c, classes[0]) for c in classes[1:]):
                raise RuntimeError("The shards disagree on the classes seen so far.")
            self.classes_ = classes[0]

    # -------------------------------------------------------------- prediction
    def predict_proba(self, X):
        """Class probabilities, averaged over the shards (weighted by trees).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        if not is_classifier(self.estimator):
            raise AttributeError("predict_proba is only available for classifiers.")
        parts = self._call("predict_proba", X).values()
        weights = _tree_weights([n for _, _, n in parts])
        return sum(w * proba for w, (_, proba, _) in zip(weights, parts))

    def predict(self, X, return_std=False):
        """Predicted class (classifiers) or predictive mean (regressors).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Regressors only: also return the standard deviation of the mixture of
            the shards' predictive distributions.

        Returns
        -------
        y : ndarray of shape (n_samples,)
        std : ndarray of shape (n_samples,)
            Only when ``return_std`` is true.
        """
        if is_classifier(self.estimator):
            if return_std:
                raise ValueError("return_std is only available for regressors.")
            return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
        parts = list(self._call("predict_with_std", X).values())
        weights = _tree_weights([n for _, _, n in parts])
        mean = sum(w * m for w, (_, (m, _), _) in zip(weights, parts))
        if not return_std:
            return mean
        second = sum(w * (s * s + m * m) for w, (_, (m, s), _) in zip(weights, parts))
        return mean, np.sqrt(np.maximum(second - mean * mean, 0.0))

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
        forest : MondrianForestClassifier or MondrianForestRegressor
            A local forest (see :func:`~mondrianlearn.forest.merge_forests`).
        """
        from .forest import merge_forests

        results = self._call("get_estimator", skip_lost=skip_lost)
        return merge_forests([results[i][1] for i in sorted(results)])

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
        return (f"{type(self).__name__}({self.estimator!r}, n_shards={self.n_shards!r})")


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
