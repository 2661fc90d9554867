"""Rolling-weight boosting of Mondrian trees (Oza and Russell's online boosting)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..engine.storage import FREE_NODES, learn_rows
from ..engine.tree import META_MAX_LEAF_POINTS, UNBOUNDED
from ..forest._base import _NO_TARGETS, BaseMondrianForestClassifier
from ..utils.fast_path import FAST_MAX_ROWS, NO_UNITS, ONES, fast_call
from ..utils.feature_scale import to_units
from ..utils.parallel import map_trees
from ._kernels import boost_tree


def _regrowth_room(tree):
    """Free nodes that ``boost_tree`` needs beyond ``FREE_NODES`` to take a row: it
    cannot hand a re-sampling back, so it stops unless the largest paused leaf can
    be re-sampled too (``forest._additive.room_for_one_point``)."""
    return 2 * int(tree.arrays.meta[META_MAX_LEAF_POINTS]) + 6 - FREE_NODES


class MondrianBoostingClassifier(BaseMondrianForestClassifier):
    """Online boosting of Mondrian trees ("rolling weight boosting").

    Each example starts with weight ``lam = 1`` and visits the trees in order: tree
    ``t`` counts it ``k ~ Poisson(lam)`` times, then ``lam`` grows if the tree now
    gets it wrong and shrinks if it gets it right (``lam *= N / (2 sw_t)`` or
    ``N / (2 sc_t)``, with ``sc_t, sw_t`` the weight the tree classified correctly
    and wrongly so far and ``N`` the number of examples seen). Trees vote with
    weight ``log((1 - e_t) / e_t)``, ``e_t = sw_t / (sw_t + sc_t)``; trees no better
    than chance (``e_t >= 1/2``) do not vote.

    Training is sequential over the trees (each depends on the previous ones) but
    runs in one compiled loop per tree and mini-batch; ``fit`` is one online pass
    over the data in order; a ``partial_fit`` or ``predict_proba`` of a few rows
    after the first call runs all trees in one compiled call (``utils.fast_path``).
    A ``sample_weight`` ``w`` scales the example's class counts and its share
    ``w * lam`` of ``sc_t, sw_t`` (``N`` is then the total weight seen); a row of
    weight 2 is still one example (one draw per tree), not two copies.

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees, boosted in order.
    lifetime : float, default=inf
        Lifetime (budget) ``lambda`` of the Mondrian process of each tree.
    discount : float, default=None
        Discount ``gamma`` of each tree's smoothing; ``None`` means ``10 * n_features``.
    min_samples_split : int, default=2
        Blocks with fewer points are paused (not cut) until more arrive.
    voting : {"hard", "soft"}, default="hard"
        ``"hard"``: ``predict_proba`` is the normalised weighted vote of the trees'
        predicted classes. ``"soft"``: the weighted average of the trees' class
        probabilities.
    n_jobs : int, default=None
        Threads used for prediction (training is sequential over trees).
    random_state : int, RandomState instance or None, default=None
        Seeds the trees' random streams (their cuts and their Poisson draws).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted class labels; ``partial_fit`` adds labels as they appear.
    estimator_errors_ : ndarray of shape (n_estimators,)
        Weighted error ``e_t`` of each tree.
    estimator_weights_ : ndarray of shape (n_estimators,)
        Voting weight of each tree.
    """

    _fast_weighted = False  # its fast path boosts unit weights only

    _parameter_constraints = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "lifetime": [Interval(Real, 0, None, closed="right")],
        "discount": [Interval(Real, 0, None, closed="left"), None],
        "min_samples_split": [Interval(Integral, 2, None, closed="left")],
        "voting": [StrOptions({"hard", "soft"})],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(self, n_estimators=10, *, lifetime=np.inf, discount=None,
                 min_samples_split=2, voting="hard", n_jobs=None, random_state=None):
        self.n_estimators = n_estimators
        self.lifetime = lifetime
        self.discount = discount
        self.min_samples_split = min_samples_split
        self.voting = voting
        self.n_jobs = n_jobs
        self.random_state = random_state

    _mergeable = False  # each tree learns from the previous ones' errors

    def _bootstrap(self):
        """Always: each tree counts each example a Poisson(lam) number of times."""
        return True

    def _max_nodes_value(self):
        """No node budget: boosted trees grow as the Mondrian process makes them."""
        return UNBOUNDED

    def _start_model(self, n_features, n_stats):
        super()._start_model(n_features, n_stats)
        self._boost_errors = np.zeros((self.n_estimators, 2))
        self._boost_weight_seen = 0.0

    def _learn(self, X, keys, point_stats):
        """Boost: trees one after the other, each over the whole mini-batch.

        A sample weight ``w`` (the row sum of ``point_stats``) scales the example's
        class counts and its contribution ``w * lam`` to the trees' error sums;
        ``N`` in the weight update is the total weight seen.
        """
        ids = self._store.append(X, keys, point_stats)
        self.n_samples_seen_ += X.shape[0]
        weights = np.ascontiguousarray(point_stats.sum(axis=1))
        seen_weight = self._boost_weight_seen + np.cumsum(weights)
        self._boost_weight_seen = float(seen_weight[-1])
        self._boost_trees(ids, np.ones(ids.shape[0]), weights, seen_weight)

    def _boost_trees(self, ids, lam, weights, seen_weight, first_tree=0, position=0):
        """Boost the trees from ``first_tree`` on with the stored points ``ids`` (the
        first tree from point ``position`` on); ``lam`` holds the example weights."""
        store = self._store
        gamma = self._gamma()
        for t in range(first_tree, len(self.trees_)):
            tree = self.trees_[t]
            tree.ensure_sample_capacity(store.n)

            def run_kernel(tree, position, t=t):
                return boost_tree(
                    tree.arrays, store.X, store.keys, store.stats, tree.node_stats["stats"],
                    tree.sample_next, tree.sample_mult, ids, position, lam, weights,
                    seen_weight, self._boost_errors[t], gamma, float(self.lifetime), True,
                    int(self.min_samples_split), tree.rng_state)

            learn_rows(tree, run_kernel, position, ids.shape[0], room=_regrowth_room)
            position = 0

    # ----------------------------------------------------------------- fast path
    @fast_call
    def _partial_fit_fast(self, X, y):
        """The fast path of ``partial_fit`` (see ``utils.fast_path``): the rows are
        stored and boosted through all trees in one compiled call; False when the
        call must take the full path (nothing has changed then)."""
        from ._forest_kernels import boost_forest

        rows = self._fast_rows(X, y)
        if rows is None:
            return False
        X, keys = rows
        n = X.shape[0]
        table = self._fast_table()
        store = self._store
        if table is None or store.n + n > store.X.shape[0]:
            return False  # the full path grows the store
        rows, paths = self._fast_boost_work(X.shape[1], store.stats.shape[1])
        ids, lam, seen_weight, stop = rows
        weights = ONES[:n]
        first = boost_forest(table.addresses, table.sizes, X, keys, weights,
                             self._feature_range, _NO_TARGETS, store.X, store.keys,
                             store.stats, store.n, self._boost_weight_seen, ids, lam,
                             seen_weight, self._boost_errors, self._gamma(),
                             *self._fast_boost_args, *paths, stop)
        if first < 0:
            return False
        store.n += n
        self.n_samples_seen_ += n
        self._boost_weight_seen = float(seen_weight[n - 1])
        if first < len(self.trees_):  # the full path's loop from there
            self._boost_trees(ids[:n], lam[:n], weights, seen_weight[:n], first, int(stop[0]))
            if paths[4].shape[0] < max(t.capacity for t in self.trees_):
                del self._fast_scratch.work["boost"]  # outgrown: the next call makes larger
        return True

    def _fast_boost_work(self, n_features, n_classes):
        """Work arrays of ``boost_forest``: rows ``(ids, lam, seen_weight, stop)`` and
        paths ``(nodes, reals, classes, excess, path, proba)``."""
        work = self._fast_scratch.work.get("boost")
        if (work is None or work[1][3].shape[0] != n_features
                or work[1][5].shape[0] != n_classes):
            capacity = 2 * max(t.capacity for t in self.trees_)
            work = self._fast_scratch.work["boost"] = (
                (np.empty(FAST_MAX_ROWS, dtype=np.int64), np.empty(FAST_MAX_ROWS),
                 np.empty(FAST_MAX_ROWS), np.zeros(1, dtype=np.int64)),
                (np.empty(capacity + 1, dtype=np.int64), np.empty((3, capacity + 1)),
                 np.empty((3, n_classes)), np.empty(n_features),
                 np.empty(capacity, dtype=np.int64), np.empty(n_classes)))
        return work

    def _remember_fast_state(self):
        super()._remember_fast_state()
        self._fast_boost_args = (float(self.lifetime), True, int(self.min_samples_split))

    def _vote_weights(self):
        """``estimator_weights_``, or equal weights when no tree is better than chance
        (computed again only when the trees' error sums have changed)."""
        errors = self._boost_errors
        key = errors.tobytes()
        scratch = self.__dict__.get("_fast_scratch")
        cached = None if scratch is None else scratch.work.get("vote")
        if cached is not None and cached[0] == key:
            return cached[1]
        weights = self.estimator_weights_
        if not np.any(weights > 0):
            weights = np.ones_like(weights)  # no tree better than chance yet: plain votes
        weights = np.ascontiguousarray(weights, dtype=np.float64)
        if scratch is not None:
            scratch.work["vote"] = (key, weights)
        return weights

    @property
    def estimator_errors_(self):
        """Weighted error ``e_t`` of each tree (1/2 for a tree that saw nothing)."""
        sc, sw = self._boost_errors[:, 0], self._boost_errors[:, 1]
        total = sc + sw
        return np.divide(sw, total, out=np.full_like(total, 0.5), where=total > 0)

    @property
    def estimator_weights_(self):
        """Voting weight ``log((1 - e_t) / e_t)`` of each tree (0 if ``e_t >= 1/2``)."""
        e = np.clip(self.estimator_errors_, 1e-10, 1 - 1e-10)
        return np.where(e < 0.5, np.log((1 - e) / e), 0.0)

    def predict_proba(self, X):
        """Normalised weighted votes of the trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to one.
        """
        return super().predict_proba(X)

    @fast_call
    def _predict_proba_fast(self, X, units=NO_UNITS):
        """All trees' votes in one compiled call (see ``utils.fast_path``; ``X`` read
        in ``units``), or None."""
        from ._forest_kernels import vote_forest

        if units.shape[1]:
            scaled = np.empty_like(X)
            to_units(X, units, scaled)
            X = scaled

        table = self._fast_table()
        if table is None:
            return None
        n_classes = len(self.classes_)
        out = np.zeros((X.shape[0], n_classes))
        args = (table.addresses, table.sizes, X, self._store.X, n_classes, self._gamma(),
                self._vote_weights(), self.voting == "hard", out)
        work = self._fast_scratch.work
        for _ in range(2):
            cached = work.get("votes")
            if (cached is None or cached[0].shape[1] != n_classes
                    or cached[4].shape[0] != X.shape[1]):
                n = 2 * max(t.capacity for t in self.trees_) + 1
                cached = work["votes"] = (  # part, then path_buffers' arrays and excess
                    np.empty((FAST_MAX_ROWS, n_classes)), np.empty(n, dtype=np.int64),
                    np.empty((3, n)), np.empty((3, n_classes)), np.empty(X.shape[1]))
            status = vote_forest(*args, *cached)
            if status >= 0:
                return _normalised(out, n_classes) if status == 1 else None
            del work["votes"]  # a tree outgrew the work arrays
        return None

    def _predict_proba_trees(self, X):
        """The trees' votes tree by tree, on checked rows."""
        n_classes = len(self.classes_)
        weights = self._vote_weights()
        gamma = self._gamma()
        out = np.zeros((X.shape[0], n_classes))
        from ..forest._smoothing import predict_proba_tree

        def one(item):
            tree, w = item
            part = np.zeros((X.shape[0], n_classes))
            if tree.n_nodes == 0 or w <= 0:
                return part
            predict_proba_tree(tree.arrays, self._store.X, tree.node_stats["stats"], X,
                               gamma, UNBOUNDED, 1.0, part)
            if self.voting == "hard":
                votes = np.zeros_like(part)
                votes[np.arange(X.shape[0]), np.argmax(part, axis=1)] = 1.0
                part = votes
            return w * part

        for part in map_trees(one, list(zip(self.trees_, weights)), self.n_jobs):
            out += part
        return _normalised(out, n_classes)


def _normalised(out, n_classes):
    """The votes ``out`` as probabilities, in place (rows without a vote: uniform)."""
    total = out.sum(axis=1, keepdims=True)
    empty = total[:, 0] <= 0
    if empty.any():
        out[empty] = 1.0 / n_classes
        total[empty] = 1.0
    return np.divide(out, total, out=out)
