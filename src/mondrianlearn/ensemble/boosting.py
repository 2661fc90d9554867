"""Rolling-weight boosting of Mondrian trees (Oza and Russell's online boosting)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..forest._base import _reserve_nodes
from ..forest.classifier import MondrianForestClassifier
from ..utils.parallel import map_trees
from ._kernels import boost_tree


class MondrianBoostingClassifier(MondrianForestClassifier):
    """Online boosting of Mondrian trees ("rolling weight boosting", seed 002).

    Each example starts with weight ``lam = 1`` and visits the trees in order: tree
    ``t`` counts it ``k ~ Poisson(lam)`` times, then ``lam`` grows if the tree now
    gets it wrong and shrinks if it gets it right (``lam *= N / (2 sw_t)`` or
    ``N / (2 sc_t)``, with ``sc_t, sw_t`` the weight the tree classified correctly
    and wrongly so far and ``N`` the number of examples seen). Trees vote with
    weight ``log((1 - e_t) / e_t)``, ``e_t = sw_t / (sw_t + sc_t)``; trees no better
    than chance (``e_t >= 1/2``) do not vote.

    Training is sequential over the trees (each depends on the previous ones) but
    runs in one compiled loop per tree and mini-batch; ``fit`` is one online pass
    over the data in order. A ``sample_weight`` ``w`` scales the example's class
    counts and its share ``w * lam`` of ``sc_t, sw_t`` (``N`` is then the total
    weight seen); a row of weight 2 is still one example (one draw per tree), not
    two copies.

    Parameters
    ----------
    n_estimators : int, default=10
    lifetime : float, default=inf
    discount : float, default=None
        Discount ``gamma`` of each tree's smoothing; ``None`` means ``10 * n_features``.
    min_samples_split : int, default=2
    voting : {"hard", "soft"}, default="hard"
        ``"hard"``: ``predict_proba`` is the normalised weighted vote of the trees'
        predicted classes. ``"soft"``: the weighted average of the trees' class
        probabilities.
    n_jobs : int, default=None
        Threads used for prediction (training is sequential over trees).
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimator_errors_ : ndarray of shape (n_estimators,)
        Weighted error ``e_t`` of each tree.
    estimator_weights_ : ndarray of shape (n_estimators,)
        Voting weight of each tree.
    """

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

    max_depth = None

    def _bootstrap(self):
        return True  # trees keep per-point multiplicities

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
        store = self._store
        lam = np.ones(ids.shape[0])
        gamma = self._gamma()
        for t, tree in enumerate(self.trees_):
            tree.ensure_sample_capacity(store.n)
            position = 0
            while position < ids.shape[0]:
                _reserve_nodes(tree, ids.shape[0] - position, conservative=True)
                position = boost_tree(
                    tree.arrays, store.X, store.keys, store.stats, tree.node_stats["stats"],
                    tree.sample_next, tree.sample_mult, ids, position, lam, weights,
                    seen_weight, self._boost_errors[t], gamma, float(self.lifetime), True,
                    int(self.min_samples_split), tree.rng_state)

    @property
    def estimator_errors_(self):
        sc, sw = self._boost_errors[:, 0], self._boost_errors[:, 1]
        total = sc + sw
        return np.divide(sw, total, out=np.full_like(total, 0.5), where=total > 0)

    @property
    def estimator_weights_(self):
        e = np.clip(self.estimator_errors_, 1e-10, 1 - 1e-10)
        return np.where(e < 0.5, np.log((1 - e) / e), 0.0)

    def predict_proba(self, X):
        """Normalised weighted votes of the trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        X = self._check_predict_input(X)
        n_classes = len(self.classes_)
        weights = self.estimator_weights_
        if not np.any(weights > 0):
            weights = np.ones_like(weights)  # no tree better than chance yet: plain votes
        gamma = self._gamma()
        out = np.zeros((X.shape[0], n_classes))
        from ..forest._smoothing import predict_proba_tree

        def one(item):
            tree, w = item
            part = np.zeros((X.shape[0], n_classes))
            if tree.n_nodes == 0 or w <= 0:
                return part
            predict_proba_tree(tree.arrays, tree.node_stats["stats"], X, gamma, 1 << 62,
                               1.0, part)
            if self.voting == "hard":
                votes = np.zeros_like(part)
                votes[np.arange(X.shape[0]), np.argmax(part, axis=1)] = 1.0
                part = votes
            return w * part

        for part in map_trees(one, list(zip(self.trees_, weights)), self.n_jobs):
            out += part
        total = out.sum(axis=1, keepdims=True)
        empty = total[:, 0] <= 0
        out[empty] = 1.0 / n_classes
        total[empty] = 1.0
        return out / total
