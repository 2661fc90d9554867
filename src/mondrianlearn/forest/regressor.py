"""Mondrian forest and Mondrian tree regressors with predictive uncertainty."""

import numpy as np
import scipy.sparse as sp

from ..utils.drift_param import drift_module
from ..utils.estimator import ForestRegressorMixin
from ..utils.fast_path import FAST_MAX_ROWS, NEW_UNITS, NO_UNITS, fast_call
from ..utils.parallel import map_trees
from ._base import _MAX_SCALED_TARGET, BaseMondrianForest
from ._forest_kernels import predict_mean_forest
from ._smoothing import (
    node_moments,
    node_variances,
    noise_bound,
    path_lengths,
    path_weights_tree,
    predict_moments_tree,
)

_ZERO_KEY = np.zeros(1, dtype=np.int64)
"""Label key of a one-row call (regression has one; kernels only read keys)."""

_NO_VARIANCES = np.empty(0)
"""``variances`` of ``predict_moments_tree`` when only the means are wanted."""

_NO_PER_TREE = np.empty((0, 0))
"""``per_tree`` of ``predict_mean_forest`` when only the forest's mean is wanted."""


def forest_variance(noise, error, between, n_trees):
    """Predictive variance of a Mondrian forest from its trees' parts.

    ``noise + max(error - between, between / (n_trees - 1))``: the noise, plus the
    error of the forest's mean, which is the trees' mean error ``error`` less the
    variance of their means ``between`` (ambiguity decomposition), and at least the
    Monte-Carlo error of a mean over ``n_trees`` trees drawn at random (see
    :class:`MondrianForestRegressor`'s Notes).

    Parameters
    ----------
    noise : ndarray
        Mean over the trees of the noise part of their variance.
    error : ndarray
        Mean over the trees of the rest of their variance, each tree's estimate of
        the squared error of its mean.
    between : ndarray
        Variance of the trees' means (population variance).
    n_trees : int
        Number of trees.

    Returns
    -------
    variance : ndarray
    """
    return noise + np.maximum(error - between, between / max(n_trees - 1, 1))


class MondrianForestRegressor(ForestRegressorMixin, BaseMondrianForest):
    """Mondrian forest regressor with predictive mean and standard deviation.

    Every node keeps the mean and variance of its targets. A test point is
    predicted by the nodes on its path, weighted by the probability that it
    branches off the tree just above each of them (scikit-garden's Mondrian
    trees): near the data the leaf dominates, far from it the root does, so the
    prediction falls back to the training mean and variance. The forest predicts
    the mean of its trees' means; see the Notes for its standard deviation.

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees.
    lifetime : float, default=inf
        Lifetime (budget) ``lambda`` of the Mondrian process.
    min_samples_split : int, default=2
        Blocks with fewer points are paused until more arrive.
    max_depth : int, default=None
        Depth at which prediction paths stop.
    max_nodes : int, default=None
        Node budget of each tree (memory-bounded learning for endless streams). A
        full tree stops creating nodes and keeps updating the statistics of the
        existing ones (each new point widens the boxes and counts in the nodes on
        its path); a paused leaf re-sampled close to the budget is cut only as far
        as the budget allows. Once every tree is full, the stored points that
        pausing needs are released. ``None``: no limit.
    bootstrap : bool, default=False
        Online bagging: each tree counts each point a Poisson(1) number of times
        (drawn in the compiled loop; zero means the tree does not see the point).
    n_jobs : int, default=None
        Threads used to train and query the trees (results do not depend on it).
    random_state : int, RandomState instance or None, default=None
        Seeds the trees' random streams.
    feature_scale : {"range", "supervised"}, None or array-like, default="range"
        Units of the features, as in :class:`MondrianForestClassifier`: ``"range"``
        divides each feature by the smallest power of two at least its range over
        the rows learned so far, and samples the trees afresh on the stored points
        when a unit doubles (``partial_fit`` keeps the law of ``fit``); ``None``
        uses the features as they are; an array gives fixed scales;
        ``"supervised"`` gives fixed scales learned from the targets of the first
        batch (ExtraTrees importances, see :mod:`mondrianlearn.utils.feature_scale`).
    drift : {None, "adwin"} or dict, default=None
        Drift adaptation for streams whose concept changes. ``None``: the
        stationary forest. ``"adwin"``: each tree's prequential loss (one minus
        its probability of the row's label, here its absolute error in units of three running
        standard deviations of the target, capped at 1) feeds ADWIN detectors; a warning
        starts a background tree, empty, which learns the rows that follow, and a
        drift or a significantly better background tree (a paired test) replaces
        the tree; scheduled challengers renew trees that gradual changes left
        behind. Trees then grow point by point (in ``fit`` too), new feature
        units rescale them in place, and stored points that no tree needs any
        more are dropped. The forest predicts the mean of its trees' forecasts
        without the highest and the lowest tenth, weighted by each tree's recent
        loss (settings ``trim`` and ``loss_weighting``, as
        :class:`~mondrianlearn.AMFRegressor`), plus the gated online linear
        correction of its errors (setting ``linear_rate``, as there); the
        predictive variance is that of the trees as without drift adaptation. A
        dict replaces some settings of
        ``"adwin"`` (keys of :data:`mondrianlearn.drift.DEFAULTS`). See
        :mod:`mondrianlearn.drift`.

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_scale_ : ndarray of shape (n_features,)
        Scale of each feature: the trees hold ``X / feature_scale_``.
    trees_ : list of TreeState
        The fitted trees (node arrays and target moments).
    n_samples_seen_ : int
        Number of rows learned so far (rows of weight zero not counted).
    drift_events_ : structured ndarray
        With ``drift``: what the adaptation did, one entry per event with fields
        ``row`` (stream row), ``tree`` (slot) and ``kind`` (``"warning"``,
        ``"challenge"``, ``"drift"``, ``"swap"``; see :class:`MondrianForestClassifier`).

    Notes
    -----
    *Predictive distribution* (``predict(X, return_std=True)``). A node forecasts
    the mean of its targets with a variance: the posterior of its targets' variance
    under a conjugate prior centred on its parent's variance times a decay, worth
    1.25 points, the targets' sum of squares about their mean counting as ``n - 1``
    points (``engine.variances``; the decay, by which a cell's variance is smaller
    than its parent's, is measured on the tree's splits of larger cells). A leaf of
    one point has no spread of its own: it takes its parent's variance times the
    decay, so no standard deviation is 0 unless all the training targets are equal.
    A tree predicts the mixture, with the branch-off weights, of the nodes on the
    row's path; its variance is the mean of the nodes' variances (``within_t``)
    plus the variance of the nodes' means (``spread_t``).

    The forest predicts the mean ``m`` of its trees' means; its error ``y - m`` is
    the noise of ``y`` plus the error ``f - m`` of ``m`` as an estimate of the
    regression function ``f``. A tree's variance estimates its own error in the
    same two parts. A node's variance, the spread of targets within its cell, is
    noise plus the spread of ``f`` over the cell; each tree bounds the noise
    variance on its finest cells (``_smoothing.noise_bound``: pairs of sibling
    leaves, whose means differ by the noise plus the change of ``f`` between two
    neighbouring cells, so the bound is at least the noise variance). Up to that
    bound, ``within_t`` is noise; the rest of the tree's variance, ``e_t =
    within_t - min(within_t, bound_t) + spread_t``, estimates ``(f - m_t)^2``. The
    error of the average of the trees is smaller than theirs by exactly the
    variance of their means (ambiguity decomposition: ``(f - m)^2 = mean_t (f -
    m_t)^2 - var_t(m_t)``), and never below the Monte-Carlo error of a mean over
    ``T`` trees drawn at random, ``var_t(m_t) / (T - 1)``. The forest's variance
    is::

        mean_t min(within_t, bound_t)
            + max(mean_t e_t - var_t(m_t), var_t(m_t) / (T - 1))

    Near the data the trees' means differ, and the average removes that part of
    their error; far from it every tree predicts the root's distribution, the
    trees agree, and the forest falls back on the training targets' variance.
    With these choices, on raw features and targets, 0.93 to 0.98 of the test
    targets of every shared regression set fall within two standard deviations
    (``benchmarks/results/bench_calibration.md``); the mean does not depend on
    them. Where the targets are mostly noise around a smooth function the band is
    narrower: 0.84 of the test targets inside for a two-dimensional sine under
    Gaussian noise, 0.87 for pure noise (1000 training rows, 10 trees); the noise
    of the few training targets that the forest's mean averages is only partly
    counted. Computing the node variances visits every node of every tree
    once per call; ``predict`` without ``return_std`` does not.

    Examples
    --------
    >>> import numpy as np
    >>> from mondrianlearn import MondrianForestRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-3, 3, size=(200, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.randn(200)
    >>> reg = MondrianForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> mean, std = reg.predict([[0.0], [30.0]], return_std=True)
    >>> bool(std[1] > std[0])  # far from the data the forest is unsure
    True
    """

    def __init__(self, n_estimators=10, *, lifetime=np.inf, min_samples_split=2,
                 max_depth=None, max_nodes=None, bootstrap=False, n_jobs=None,
                 random_state=None, feature_scale="range", drift=None):
        self.n_estimators = n_estimators
        self.lifetime = lifetime
        self.min_samples_split = min_samples_split
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.feature_scale = feature_scale
        self.drift = drift

    def fit(self, X, y, sample_weight=None):
        """Sample the forest in batch on ``(X, y)``, discarding earlier training.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Targets of the rows.
        sample_weight : array-like of shape (n_samples,), default=None
            A weight ``w`` counts as ``w`` copies of the row in the node moments;
            rows of weight zero are ignored.

        Returns
        -------
        self
        """
        return self._fit(X, y, sample_weight)

    def partial_fit(self, X, y, sample_weight=None):
        """Extend the forest online with a mini-batch.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows of the mini-batch.
        y : array-like of shape (n_samples,)
            Targets of the rows.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each row, as in ``fit`` (``None``: all 1).

        Returns
        -------
        self

        Notes
        -----
        A call of a few rows (``utils.fast_path``) after the first one skips
        scikit-learn's validation when nothing it checks can have changed, and
        extends all trees in one compiled call: same model, same errors.
        """
        return self._partial_fit(X, y, sample_weight)

    def _partial_fit_fast(self, X, y, weights=None):
        """The fast path of ``partial_fit`` (see ``utils.fast_path``; ``weights``
        from ``_fast_weights``, None for ones); False when the call must take the
        full path (nothing has changed then)."""
        rows = self._fast_input(X, learning=True)
        if rows is None:
            return False
        n_rows = rows[0].shape[0]
        y = self._fast_targets(y, n_rows)
        if y is None:
            return False
        z = (y - self._y_offset) / self._y_scale
        keys = _ZERO_KEY if n_rows == 1 else np.zeros(n_rows, dtype=np.int64)
        done = self._learn_fast(rows, keys, z, weights)
        if done is NEW_UNITS:
            if not np.isfinite(y).all():  # not yet checked when a unit changes
                return False
            if self._move_units_for_row(rows[0]):
                done = self._learn_fast((rows[0], self._units, True), keys, z, weights)
            if done is NEW_UNITS:
                return self._learn_new_units(rows[0], y, weights)
        return bool(done)

    def _start(self, X, y, sample_weight):
        """Empty trees; targets are stored centred and scaled by the first batch (for
        accuracy)."""
        y = np.asarray(y, dtype=np.float64)
        w = sample_weight if sample_weight.sum() > 0 else np.ones_like(y)
        self._y_offset = float(np.average(y, weights=w))
        used = y[w > 0]  # rows of weight zero are not learned
        spread = float(np.max(np.abs(used - self._y_offset))) if used.size else 0.0
        self._y_scale = spread if np.isfinite(spread) and spread > 0 else 1.0
        self._start_model(X.shape[1], 3)

    def _learn_weighted_rows(self, X, y, sample_weight):
        z = (np.asarray(y, dtype=np.float64) - self._y_offset) / self._y_scale
        largest = float(np.max(np.abs(z)))
        if largest > _MAX_SCALED_TARGET:
            factor = largest  # far larger targets than the first batch's: rescale
            self._rescale_targets(factor)
            z /= factor
        point_stats = np.column_stack([sample_weight, sample_weight * z, sample_weight * z * z])
        self._learn(X, np.zeros(X.shape[0], dtype=np.int64), point_stats)

    def _rescale_targets(self, factor):
        """Divide the stored (scaled) targets by ``factor``, so that their squares
        cannot overflow; the model's predictions do not change."""
        self._y_scale *= factor
        trees = list(self.trees_)
        state = self.__dict__.get("_drift_state")
        if state is not None:
            from ..drift import scale_correction

            trees += state.background
            state.moments[1] /= factor  # the running moments of the scaled targets
            state.moments[2] /= factor * factor
            scale_correction(state, 1.0 / factor)
        for stats in [t.node_stats["stats"] for t in trees] + [self._store.stats]:
            stats[:, 1] /= factor
            stats[:, 2] /= factor * factor

    def predict(self, X, return_std=False):
        """Predictive mean (and standard deviation) of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.
        return_std : bool, default=False
            Also return the standard deviation of the predictive distribution (see
            the class Notes).

        Returns
        -------
        mean : ndarray of shape (n_samples,)
            Predictive mean of each row, averaged over the trees.
        std : ndarray of shape (n_samples,)
            Only when ``return_std`` is true.
        """
        return self._predict(X, return_std)

    @fast_call
    def _predict_mean_fast(self, X, units=NO_UNITS):
        """The mean, all trees in one compiled call (see ``utils.fast_path``; ``X``
        read in ``units``), or None."""
        table = self._fast_table()
        if table is None:
            return None
        scaled = self._fast_scaled(X.shape[0], X.shape[1]) if units.shape[1] else X
        drift = self.__dict__.get("_drift_state")
        for fresh in (False, True):
            mean = np.zeros(X.shape[0])
            per_tree = (_NO_PER_TREE if drift is None
                        else np.full((table.addresses.shape[0], X.shape[0]), np.nan))
            nodes, reals, _, excess = self._predict_work(X.shape[1], 0, fresh)
            trained = predict_mean_forest(table.addresses, table.sizes, X, units, scaled,
                                          self._store.X, self._max_depth_value(), mean,
                                          per_tree, nodes, reals, excess)
            if trained != -2:  # -2: a tree outgrew the work arrays
                break
        if trained < 0:
            return None
        if drift is not None and trained:  # (rows of NaN: trees that have seen no point)
            module = drift_module()
            combined = module.combine_forecasts(drift, per_tree)
            return self._y_offset + self._y_scale * module.add_correction(drift, scaled, combined)
        return self._y_offset + self._y_scale * (mean / max(trained, 1))

    def _predict_validated(self, X, return_std=False):
        """``predict`` on a C-contiguous, finite float64 array of the right width (in
        the units of ``X``)."""
        X = self._in_units(X)
        if (not return_std and X.shape[0] and X.shape[0] <= FAST_MAX_ROWS
                and self._fast_ready()):
            result = self._predict_mean_fast(X)
            if result is not None:
                return result
        mean, noise, error, between = self._tree_parts(X, return_std)
        out = self._y_offset + self._y_scale * mean
        if not return_std:
            return out
        variance = forest_variance(noise, error, between, len(self._trained_trees()))
        return out, self._y_scale * np.sqrt(variance)

    def _std_parts(self, X):
        """The parts of the predictive variance (class Notes) on ``X`` in the trees'
        units, in the units of ``y``: the forest's mean, and over the trees, the
        mean of the noise part of their variance, the mean of the rest ``e_t``, and
        the variance of their means (population variance)."""
        mean, noise, error, between = self._tree_parts(X, True)
        square = np.float64(self._y_scale) ** 2
        return (self._y_offset + self._y_scale * mean, square * noise, square * error,
                square * between)

    def _tree_parts(self, X, with_variance):
        """Mean over the trees of their means and, ``with_variance``, of the noise
        part of their variance and the rest, and the variance of their means
        (scaled targets; otherwise those three are 0). With drift adaptation, the
        first is the trees' means combined (``drift.combine_forecasts``) plus the
        gated linear correction (``drift.add_correction``)."""
        trees = self._trained_trees()
        drift = None
        if "_drift_state" in self.__dict__:
            drift = drift_module().adopt_settings(self)
            slots = np.array([t.n_nodes > 0 for t in self.trees_])
            combined = np.zeros(X.shape[0])
        mean = np.zeros(X.shape[0])
        noise = np.zeros(X.shape[0])  # sum over trees of the noise part of their variance
        error = np.zeros(X.shape[0])  # sum over trees of the rest, e_t (class Notes)
        between = np.zeros(X.shape[0])  # variance of the trees' means
        for rows, parts in self._per_tree_chunks(X, with_variance):
            for m, capped, rest in parts:
                mean[rows] += m
                if with_variance:
                    noise[rows] += capped
                    error[rows] += rest
            if with_variance and parts:
                between[rows] = np.var([m for m, _, _ in parts], axis=0)
            if drift is not None and parts:
                module = drift_module()
                combined[rows] = module.add_correction(drift, X[rows], module.combine_forecasts(
                    drift, np.array([m for m, _, _ in parts]), slots))
        n_trees = max(len(trees), 1)
        first = mean / n_trees if drift is None else combined
        return first, noise / n_trees, error / n_trees, between

    def _per_tree_chunks(self, X, with_variance):
        """``(rows, parts)`` over chunks of the rows of ``X`` (the trees' units):
        ``parts`` holds, per tree that has seen a point, its means, and
        ``with_variance`` the noise part of its variance and the rest (else None)."""
        max_depth = self._max_depth_value()
        trees = self._trained_trees()
        if with_variance:
            variances = map_trees(self._node_variances, trees, self.n_jobs)
        else:
            variances = [(_NO_VARIANCES, 0.0)] * len(trees)
        for rows in self._chunks(X.shape[0], 3):
            Xc = X[rows]

            def one(tree_and_variances):
                tree, (node_var, bound) = tree_and_variances
                m = np.empty(Xc.shape[0])
                within = np.empty(Xc.shape[0])
                spread = np.empty(Xc.shape[0])
                predict_moments_tree(tree.arrays, self._store.X, tree.node_stats["stats"],
                                     node_var, Xc, max_depth, m, within, spread)
                if node_var.shape[0] == 0:
                    return m, None, None
                capped = np.minimum(within, bound)
                return m, capped, within - capped + spread

            yield rows, map_trees(one, list(zip(trees, variances)), self.n_jobs)

    def _tree_forecasts(self, X, return_std):
        """Each tree's (that has seen a point) predictive mean of the rows ``X``
        (checked, in the model's units), in the units of ``y``, shape ``(n_trees,
        n_rows)``; with ``return_std`` also the noise part of each tree's variance
        and the rest (else None); and the slots of those trees: what a
        drift-adaptive forest combines (``amf._merge.regression_parts``)."""
        slots = np.array([t.n_nodes > 0 for t in self.trees_])
        n = int(slots.sum())
        means = np.zeros((n, X.shape[0]))
        noise = np.zeros((n, X.shape[0])) if return_std else None
        rest = np.zeros((n, X.shape[0])) if return_std else None
        for rows, parts in self._per_tree_chunks(X, return_std):
            for k, (m, capped, other) in enumerate(parts):
                means[k, rows] = m
                if return_std:
                    noise[k, rows] = capped
                    rest[k, rows] = other
        square = np.float64(self._y_scale) ** 2
        if return_std:
            noise, rest = square * noise, square * rest
        return self._y_offset + self._y_scale * means, noise, rest, slots

    @staticmethod
    def _node_variances(tree):
        """Predictive variance of every node of ``tree`` and the tree's bound on the
        noise variance (scaled targets)."""
        out = np.zeros(tree.n_nodes)
        node_variances(tree.arrays, tree.node_stats["stats"], out)
        return out, noise_bound(tree.arrays, tree.node_stats["stats"])

    def weighted_decision_path(self, X):
        """Weights of the nodes of each row's path, for every tree.

        The prediction of a tree is the weighted average of its nodes' means with
        these weights (they sum to one per row and tree).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to follow down the trees.

        Returns
        -------
        weights : scipy.sparse.csr_matrix of shape (n_samples, n_nodes_total)
            Column ``n_nodes_ptr[t] + j`` is node ``j`` of tree ``t``.
        n_nodes_ptr : ndarray of shape (n_estimators + 1,)
            Column offsets of the trees.
        """
        X = self._check_predict_input(X)
        max_depth = self._max_depth_value()

        def one(tree):
            if tree.n_nodes == 0:
                return sp.csr_matrix((X.shape[0], 0))
            lengths = np.empty(X.shape[0], dtype=np.int64)
            path_lengths(tree.arrays, X, max_depth, lengths)
            indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
            np.cumsum(lengths, out=indptr[1:])
            indices = np.empty(indptr[-1], dtype=np.int64)
            weights = np.empty(indptr[-1])
            path_weights_tree(tree.arrays, self._store.X, X, max_depth, indptr, indices,
                              weights)
            return sp.csr_matrix((weights, indices, indptr), shape=(X.shape[0], tree.n_nodes))

        blocks = map_trees(one, self.trees_, self.n_jobs)
        n_nodes_ptr = np.zeros(len(blocks) + 1, dtype=np.int64)
        np.cumsum([b.shape[1] for b in blocks], out=n_nodes_ptr[1:])
        return sp.hstack(blocks, format="csr"), n_nodes_ptr

    def node_means_and_variances(self, tree_index=0):
        """Mean and variance of the training targets in every node of one tree.

        Parameters
        ----------
        tree_index : int, default=0
            Index of the tree in ``trees_``.

        Returns
        -------
        moments : ndarray of shape (n_nodes, 2)
            Row ``j``: mean and variance of the targets of node ``j`` (in the units
            of ``y``).
        """
        tree = self.trees_[tree_index]
        stats = tree.node_stats["stats"]
        n = tree.n_nodes
        out = np.array([node_moments(stats, j) for j in range(n)]).reshape(n, 2)
        out[:, 0] = self._y_offset + self._y_scale * out[:, 0]
        out[:, 1] *= self._y_scale ** 2
        return out


class MondrianTreeRegressor(MondrianForestRegressor):
    """A single Mondrian tree regressor, with an inspectable tree.

    Same learning and prediction as :class:`MondrianForestRegressor` with one tree;
    the fitted tree is exposed as ``tree_`` with node ``value`` = (mean, variance).

    Parameters
    ----------
    lifetime : float, default=inf
        Lifetime (budget) ``lambda`` of the Mondrian process.
    min_samples_split : int, default=2
        Blocks with fewer points are paused (not cut) until more arrive.
    max_depth : int, default=None
        Depth at which prediction paths stop.
    max_nodes : int, default=None
        Node budget of the tree (see :class:`MondrianForestRegressor`): a full tree
        stops creating nodes and keeps updating the existing ones. ``None``: no
        limit.
    random_state : int, RandomState instance or None, default=None
        Seeds the tree's random stream.
    feature_scale : {"range", "supervised"}, None or array-like, default="range"
        Units of the features (see :class:`MondrianForestClassifier`).
    """

    _parameter_constraints = {
        k: v for k, v in MondrianForestRegressor._parameter_constraints.items()
        if k not in ("n_estimators", "n_jobs", "bootstrap", "drift")
    }
    n_estimators = 1
    n_jobs = None
    bootstrap = False
    _mergeable = False  # one tree: merging would make a forest
    drift = None

    def __init__(self, *, lifetime=np.inf, min_samples_split=2, max_depth=None,
                 max_nodes=None, random_state=None, feature_scale="range"):
        self.lifetime = lifetime
        self.min_samples_split = min_samples_split
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.random_state = random_state
        self.feature_scale = feature_scale

    def weighted_decision_path(self, X):
        """Weights of the nodes on each row's path.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to follow down the tree.

        Returns
        -------
        weights : scipy.sparse.csr_matrix of shape (n_samples, n_nodes)
            Column ``j`` is node ``j`` of the tree; each row sums to one.
        """
        return super().weighted_decision_path(X)[0]

    @property
    def tree_(self):
        """The fitted tree as read-only arrays (node values: mean and variance)."""
        from ._view import MondrianTreeView

        return MondrianTreeView.from_state(self.trees_[0],
                                           value=self.node_means_and_variances(0),
                                           units=self.__dict__.get("_units"),
                                           points=self._store.X)
