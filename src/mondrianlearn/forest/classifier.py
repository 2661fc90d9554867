"""Mondrian forest and Mondrian tree classifiers (MF paper, NIPS 2014)."""

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from ..engine.tree_table import one_tree_table
from ..utils.fast_path import NO_UNITS, fast_call
from ..utils.parallel import map_trees
from ._base import BaseMondrianForest, BaseMondrianForestClassifier
from ._forest_kernels import predict_proba_forest


class MondrianForestClassifier(BaseMondrianForestClassifier):
    """Mondrian forest classifier, trainable in batch and online.

    Each tree is a sample of the Mondrian process restricted to the training data;
    ``partial_fit`` extends the trees with new points so that the forest has the
    same distribution as one fitted in batch on all points seen. Class
    probabilities use the hierarchical normalized-stable-process smoothing with
    interpolated Kneser-Ney counts; a point outside the training boxes is handled
    by integrating over where it would branch off its path. No class seen in
    training gets probability exactly 0 or 1 (see the Notes).

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees.
    lifetime : float, default=inf
        Lifetime (budget) ``lambda`` of the Mondrian process.
    discount : float, default=None
        Discount parameter ``gamma`` of the hierarchical smoothing (a node's
        discount is ``exp(-gamma * Delta)``, ``Delta`` its lifetime); ``None`` means
        ``10 * n_features`` (the MF paper's), or with ``drift`` the drift setting
        ``discount`` (0.3: its young trees' leaves lean on their parents, measured
        1.6 points better on drifting streams; see :data:`mondrianlearn.drift.DEFAULTS`).
        Larger values trust the leaves more. A leaf never cut
        (infinite lifetime) has discount 1/2 whatever ``gamma`` (see the Notes);
        ``gamma = 0`` makes every discount 1.
    min_samples_split : int, default=2
        Blocks with fewer points are paused (not cut) until more arrive.
    max_depth : int, default=None
        Depth at which prediction paths stop (the tree itself is not truncated, so
        that online and batch training keep the same distribution).
    max_nodes : int, default=None
        Node budget of each tree (memory-bounded learning for endless streams). A
        full tree stops creating nodes and keeps updating the statistics of the
        existing ones (each new point widens the boxes and counts in the nodes on
        its path); a paused leaf re-sampled close to the budget is cut only as far
        as the budget allows. Once every tree is full, the stored points that
        pausing needs are released. ``None``: no limit.
    bootstrap : bool, default=False
        Online bagging (Oza and Russell): each tree counts each point a
        Poisson(1) number of times, drawn inside the compiled training loop from
        the tree's own stream; a point drawn zero times is not seen by that tree.
    n_jobs : int, default=None
        Threads used to train and query the trees (results do not depend on it).
    random_state : int, RandomState instance or None, default=None
        Seeds the trees' random streams.
    feature_scale : {"range", "supervised"}, None or array-like, default="range"
        Units of the features. A cut picks its feature with probability proportional to
        the side of the box along it, so in raw units the forest depends on how each
        feature is measured (in metres it would be cut a thousand times more often than
        in kilometres). ``"range"``: each feature is divided by its unit, the smallest
        power of two at least its range over the rows learned so far (1 while it is
        constant), so that every feature spans between half a unit and one at the root.
        When a row widens a range past its unit, the unit doubles and the trees are
        sampled afresh on the stored points in the new units: ``partial_fit`` keeps the
        law of ``fit`` on the same rows, whatever their order (under a node budget they
        are rescaled in place instead). ``None``: features as they are. An array: fixed
        scales (each feature divided by its own). ``"supervised"``: fixed scales learned
        from the labels of the first batch learned (at least 20 rows): each feature's
        range over it divided by a weight, its impurity importance in an ExtraTrees
        fitted on at most 2,000 of its rows over the largest importance (at least 0.01),
        so that cuts go mostly to the features that predict the labels. The scales then
        stay fixed, and ``partial_fit`` keeps the law of ``fit`` for them. Opt-in
        (benchmark: ``bench_supervised_rates``). See
        :mod:`mondrianlearn.utils.feature_scale`.
    drift : {None, "adwin"} or dict, default=None
        Drift adaptation for streams whose concept changes. ``None``: the
        stationary forest. ``"adwin"``: each tree's prequential loss (one minus
        its probability of the row's label) feeds ADWIN detectors; a warning
        starts a background tree, empty, which learns the rows that follow, and a
        drift or a significantly better background tree (a paired test) replaces
        the tree; scheduled challengers renew trees that gradual changes left
        behind. Trees then grow point by point (in ``fit`` too), new feature
        units rescale them in place, and stored points that no tree needs any
        more are dropped, and the smoothing takes the drift setting ``discount``
        unless ``discount`` is given. A dict replaces some settings of ``"adwin"``
        (keys of :data:`mondrianlearn.drift.DEFAULTS`). See :mod:`mondrianlearn.drift`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted class labels; ``partial_fit`` adds labels as they appear.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_scale_ : ndarray of shape (n_features,)
        Scale of each feature: the trees hold ``X / feature_scale_`` (boxes and
        thresholds shown by ``tree_`` and the plots are in the units of ``X``).
    feature_names_in_ : ndarray of str
        Defined when ``X`` had string column names.
    trees_ : list of TreeState
        The fitted trees (node arrays and class counts).
    n_samples_seen_ : int
        Number of rows learned so far (rows of weight zero not counted).
    drift_events_ : structured ndarray
        With ``drift``: what the adaptation did, one entry per event with fields
        ``row`` (stream row), ``tree`` (slot) and ``kind`` (``"warning"``,
        ``"challenge"``, ``"drift"``, ``"swap"``; see :class:`AMFClassifier`).

    Notes
    -----
    *Leaves never cut.* With the default infinite lifetime a leaf is never cut: a
    paused leaf whose points share one label, a leaf of identical points, a leaf of
    a single point. Its lifetime ``Delta`` is infinite and the paper's discount
    ``exp(-gamma * Delta)`` is 0, under which the leaf's distribution is a single
    atom: it would give its own label probability 1 (and every other class 0) from
    a single point, and a test point inside its box would get exactly 0 and 1. The
    paper leaves this case open. Here such a leaf's discount, which the model does
    not determine, gets a uniform prior on ``[0, 1]``; the smoothed prediction is
    linear in the discount, so averaging over the prior means using its mean, 1/2.
    A leaf of one point of class ``k`` predicts ``(1 + G(k)) / 2`` for ``k`` and
    ``G(j) / 2`` for the others, ``G`` its parent's posterior (a Krichevsky-Trofimov
    estimate when ``G`` is uniform over two classes). Nodes with a finite lifetime
    keep the paper's discount. On river's Phishing stream (10 trees, progressive
    validation one row at a time) this brings the log loss from 1.25 to 0.29 at the
    same accuracy (``benchmarks/results/bench_calibration.md``).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from mondrianlearn import MondrianForestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = MondrianForestClassifier(n_estimators=10, random_state=0)
    >>> for start in range(0, 150, 50):  # three mini-batches
    ...     _ = clf.partial_fit(X[start:start + 50], y[start:start + 50])
    >>> proba = clf.predict_proba(X[:1])
    >>> proba.round(2).tolist()
    [[0.99, 0.01, 0.0]]
    >>> bool(proba.min() > 0)  # no class seen in training is ruled out
    True
    """

    _prepares_calls = True  # one-row calls (utils.fast_path)

    _parameter_constraints = {
        **BaseMondrianForest._parameter_constraints,
        "discount": [Interval(Real, 0, None, closed="left"), None],
    }

    def __init__(self, n_estimators=10, *, lifetime=np.inf, discount=None,
                 min_samples_split=2, max_depth=None, max_nodes=None, bootstrap=False,
                 n_jobs=None, random_state=None, feature_scale="range", drift=None):
        self.n_estimators = n_estimators
        self.lifetime = lifetime
        self.discount = discount
        self.min_samples_split = min_samples_split
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.feature_scale = feature_scale
        self.drift = drift

    # ---------------------------------------------------------------- prediction
    @fast_call
    def _predict_proba_fast(self, X, units=NO_UNITS):
        """All trees in one compiled call (see ``utils.fast_path``; ``X`` read in
        ``units``), or None."""
        state = self.__dict__
        table = self._fast_table()
        if table is None:
            return None
        n_rows, n_features = X.shape
        n_classes = state["classes_"].shape[0]
        scaled = self._fast_scaled(n_rows, n_features) if units.shape[1] else X
        out = np.zeros((n_rows, n_classes))
        gamma, max_depth = self._gamma(), self._max_depth_value()  # gamma: features may be added
        head = (state["_store"].X, n_classes, gamma, max_depth, 0.0)
        tail = (*self._predict_work(n_features, n_classes), False)
        status = predict_proba_forest(table.addresses, table.sizes, X, units, scaled, *head,
                                      out, *tail)
        if status < 0:  # a tree outgrew the work arrays
            tail = (*self._predict_work(n_features, n_classes, fresh=True), False)
            status = predict_proba_forest(table.addresses, table.sizes, X, units, scaled,
                                          *head, out, *tail)
        if status == 1 and n_rows == 1 and state.get("_drift_state") is None:
            self._fast_scratch.predict_plan = self._prepare_prediction(
                X, predict_proba_forest, (table.addresses, table.sizes, units, scaled), head,
                tail, out.shape)
        return out if status == 1 else None

    def _predict_proba_trees(self, X):
        """Class probabilities tree by tree, on checked rows in the model's units:
        ``predict_proba_forest`` (the fast path's kernel) on a table of each tree, so
        that one prediction kernel serves both paths."""
        gamma = self._gamma()
        max_depth = self._max_depth_value()
        n_classes = len(self.classes_)
        trees = self._trained_trees()
        if not trees:
            return np.full((X.shape[0], n_classes), 1.0 / n_classes)
        scale = 1.0 / len(trees)
        out = np.zeros((X.shape[0], n_classes))
        for rows in self._chunks(X.shape[0], n_classes):
            Xc = X[rows]

            def one(tree):
                part = np.zeros((Xc.shape[0], n_classes))
                table = one_tree_table(tree, ("stats",))
                n = tree.capacity + 1
                status = predict_proba_forest(
                    table.addresses, table.sizes, Xc, NO_UNITS, Xc, self._store.X, n_classes,
                    gamma, max_depth, scale, part, np.empty(n, dtype=np.int64),
                    np.empty((3, n)), np.empty((3, n_classes)), np.empty(Xc.shape[1]), True)
                if status != 1:
                    raise RuntimeError("a Mondrian tree could not predict (internal error)")
                return part

            for part in map_trees(one, trees, self.n_jobs):
                out[rows] += part
        return out


class MondrianTreeClassifier(MondrianForestClassifier):
    """A single Mondrian tree classifier, with an inspectable tree.

    Same learning and prediction as :class:`MondrianForestClassifier` with one tree.
    The fitted tree is exposed as ``tree_`` (see :class:`MondrianTreeView`).

    Parameters
    ----------
    lifetime : float, default=inf
        Lifetime (budget) ``lambda`` of the Mondrian process.
    discount : float, default=None
        Discount parameter ``gamma`` of the hierarchical smoothing; ``None`` means
        ``10 * n_features`` (see :class:`MondrianForestClassifier`).
    min_samples_split : int, default=2
        Blocks with fewer points are paused (not cut) until more arrive.
    max_depth : int, default=None
        Depth at which prediction paths stop.
    max_nodes : int, default=None
        Node budget of the tree (see :class:`MondrianForestClassifier`): a full tree
        stops creating nodes and keeps updating the existing ones. ``None``: no
        limit.
    random_state : int, RandomState instance or None, default=None
        Seeds the tree's random stream.
    feature_scale : {"range", "supervised"}, None or array-like, default="range"
        Units of the features (see :class:`MondrianForestClassifier`).
    """

    _parameter_constraints = {
        k: v for k, v in MondrianForestClassifier._parameter_constraints.items()
        if k not in ("n_estimators", "n_jobs", "bootstrap", "drift")
    }

    def __init__(self, *, lifetime=np.inf, discount=None, min_samples_split=2,
                 max_depth=None, max_nodes=None, random_state=None, feature_scale="range"):
        self.lifetime = lifetime
        self.discount = discount
        self.min_samples_split = min_samples_split
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.random_state = random_state
        self.feature_scale = feature_scale

    n_estimators = 1
    n_jobs = None
    bootstrap = False
    _mergeable = False  # one tree: merging would make a forest
    drift = None

    @property
    def tree_(self):
        """The fitted tree as read-only arrays (node values: class counts)."""
        from ._view import MondrianTreeView

        tree = self.trees_[0]
        return MondrianTreeView.from_state(tree, value=tree.node_stats["stats"],
                                           posterior=self.node_posteriors(0),
                                           units=self.__dict__.get("_units"),
                                           points=self._store.X)
