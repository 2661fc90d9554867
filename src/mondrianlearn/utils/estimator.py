"""What every estimator built on Mondrian trees shares, and what the forests that
learn rows in batches (Mondrian forests, boosting, AMF) share by task."""

from numbers import Integral

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..engine.storage import BatchSizes
from ..engine.tree import UNBOUNDED
from .drift_param import DRIFT_CONSTRAINT
from .fast_path import FastPathMixin
from .feature_scale import FeatureScaleMixin
from .persistence import VersionedStateMixin
from .validation import (
    _check_declared,
    check_classifier_batch,
    check_classifier_fit,
    check_no_missing_target,
    check_regressor_batch,
    check_same_label_kind,
    check_X_predict,
    check_X_y_batch,
)


class TreeModelMixin(FeatureScaleMixin, FastPathMixin, VersionedStateMixin):
    """Introspection, input widening, feature units and versioned pickles for models
    with ``trees_``.

    A model may also hold a shared sample store in ``_store`` (Mondrian forests do,
    for pausing); it counts in ``model_size_`` and is widened with the trees.

    It also declares the methods and class attributes that the integrations rely
    on (:mod:`mondrianlearn.utils.protocols`), with defaults that go through the
    public methods; families override them with faster versions.
    """

    _store = None

    _structure_params = ()
    """Parameters fixed once the model has started learning (its first ``fit`` or
    ``partial_fit``): the number of trees, the feature units, ... . A later
    ``partial_fit`` after one changed is refused (:meth:`_check_structure`)."""

    def _check_targets(self, y):
        """Refuse targets ``y`` (a float, or an array of the rows of a batch) that this
        fitted model cannot learn, before anything changes; for callers that check
        rows themselves (the river adapters). Nothing to refuse by default."""

    def _record_structure(self):
        """Remember the :attr:`_structure_params` the model starts learning with (the
        checks of a first ``fit`` or ``partial_fit`` call this once they pass)."""
        names = set(self._get_param_names())
        self._structure_ = {name: getattr(self, name)
                            for name in self._structure_params if name in names}

    def _check_structure(self):
        """Refuse to go on learning after a structure parameter changed.

        The number of trees, online bagging in the Mondrian forests (per-point
        multiplicities kept by every tree) and the feature units are set up when a
        model starts learning; a later call cannot honour a new value (it used to be
        ignored, or, for ``bootstrap`` turned on, to write past the trees' arrays).
        Models saved in state formats before 7 recorded nothing and are not checked.
        """
        for name, value in self.__dict__.get("_structure_", {}).items():
            now = getattr(self, name)
            if not _same_value(now, value):
                raise ValueError(
                    f"{name}={now!r}, but {type(self).__name__} started learning with "
                    f"{name}={value!r}: it is fixed once a model has started learning, so "
                    "partial_fit cannot follow the change. Set it back, or call fit to "
                    "start anew with the new value.")
    """The shared sample store (``engine.tree.SampleStore``) of a model that keeps
    one (Mondrian forests do, for pausing), set on the instance; None otherwise."""

    _mergeable = False
    """Whether fitted models of exactly this class merge (``forest.merge_forests``)
    and can be sharded (``dask.DaskShardedForest``): their trees are independent
    samples counted by ``n_estimators``. Classes that set it define
    ``_merge_fitted``."""

    def _spawn_tree_states(self, n_streams, rng=None):
        """Independent random streams of the trees (``engine.random``), spawned from
        one seed drawn from ``rng``, by default ``check_random_state(random_state)``
        (a model that draws more from that generator passes it)."""
        from sklearn.utils import check_random_state

        from ..engine.random import spawn_states

        if rng is None:
            rng = check_random_state(self.random_state)
        return spawn_states(rng.randint(np.iinfo(np.int32).max), n_streams)

    # --------------------------------------------------------------- protocols
    def __sklearn_is_fitted__(self):
        """Whether the model holds trees (scikit-learn's ``check_is_fitted`` asks it)."""
        return "trees_" in self.__dict__

    @classmethod
    def _merge_fitted(cls, forests, same_stream):
        """Merge fitted models of this class (see ``forest.merge_forests``, which
        checks them first); only for classes with ``_mergeable``."""
        raise TypeError(f"{cls.__name__} models cannot be merged.")

    def _trained_trees(self):
        """The trees that predictions average over (their number is the model's
        weight in a merge or among Dask shards): every tree by default."""
        return self.trees_

    def _partial_fit_validated(self, X, y):
        """``partial_fit`` of a fitted model on rows its caller has checked (a
        C-contiguous, finite float64 array of the model's width whose range it has
        recorded); river calls it one row at a time. The default checks the rows
        again (``partial_fit``); families with a faster path override it."""
        return self.partial_fit(X, np.asarray(y))

    def _predict_validated(self, X):
        """``predict`` on checked rows (see ``_partial_fit_validated``)."""
        return self.predict(X)

    def _predict_proba_validated(self, X):
        """``predict_proba`` on checked rows (see ``_partial_fit_validated``)."""
        return self.predict_proba(X)

    def _check_predict_input(self, X):
        """Checked rows to predict on, in the model's units (``utils.feature_scale``)."""
        return self._in_units(self._checked_rows(X))

    def _checked_rows(self, X):
        """Checked rows to predict on, in the units of ``X`` (for the
        ``_predict_*_validated`` methods, which take rows as their callers have them)."""
        check_is_fitted(self, "trees_")
        return check_X_predict(self, X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

    @property
    def n_nodes_(self):
        """Number of nodes of each tree."""
        check_is_fitted(self, "trees_")
        return np.array([t.n_nodes for t in self.trees_])

    @property
    def model_size_(self):
        """Bytes held by the fitted model: trees with their statistics, the shared
        sample store, and any other array the model keeps (weights, factors)."""
        check_is_fitted(self, "trees_")
        total = sum(t.nbytes for t in self.trees_)
        store = self._store
        if store is not None:
            total += store.nbytes
        for value in self.__dict__.values():
            if isinstance(value, np.ndarray):
                total += value.nbytes
            elif hasattr(value, "__dict__") and value is not store and not isinstance(value, type):
                total += sum(a.nbytes for a in vars(value).values() if isinstance(a, np.ndarray))
        return total

    def _add_features(self, values):
        """Grow the input space by features first seen now, at ``values``.

        Every box, and every stored point, gets value ``v`` in each new feature: the
        model of the same points had they all carried it (river's convention for a
        feature that appears late; used by :mod:`mondrianlearn.river`). A model in
        units (``utils.feature_scale``) gives each new feature unit 1, the unit of a
        feature constant so far, and origin ``v``: it stores 0. Returns the values
        stored.
        """
        values = self._extend_units(np.atleast_1d(np.asarray(values, dtype=np.float64)))
        store = self._store
        if store is not None:
            store.add_features(values)
        for tree in self.trees_:
            tree.add_features(values)
        self.n_features_in_ += values.shape[0]
        if self.__dict__.get("_feature_range") is not None:
            self._feature_range = np.hstack([self._feature_range,
                                             np.vstack([values, values])])
        return values


class ForestLearnerMixin(TreeModelMixin):
    """The learning entry points of the forests that learn checked rows with
    ``_learn_in_units`` (``utils.feature_scale``): Mondrian forests, boosting, AMF.

    ``fit`` (``_fit``), ``partial_fit`` (``_partial_fit``: the fast path, else
    ``_partial_fit_full``) and ``_partial_fit_validated`` take the same steps in
    every model; the rest comes from

    - the task (:class:`ForestClassifierMixin`, :class:`ForestRegressorMixin`): how
      a batch is checked (``_check_fit_batch``, ``_check_partial_fit_batch``), the
      type of checked labels (``_label_dtype``) and what labels first seen add to
      the model (``_learn_labels``);
    - the family: ``_start(X, y, sample_weight)`` (a fresh model for the checked
      first batch), ``_learn_weighted_rows(X, y, sample_weight)`` (rows of positive
      weight, in units, become statistics), ``_partial_fit_fast(X, y)``
      (``utils.fast_path``; False, nothing changed, when the call must take the full
      path), ``_trim()`` (spare room released after ``fit``) and
      ``_warn_deprecated_params()`` (FutureWarnings for former values of parameters;
      none by default).

    The public ``fit`` and ``partial_fit`` stay with each family, for their
    docstrings.
    """

    _forest_constraints = {
        "bootstrap": ["boolean"],
        "max_nodes": [Interval(Integral, 3, None, closed="left"), None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "feature_scale": [StrOptions({"range", "supervised"}), "array-like", None],
        "drift": DRIFT_CONSTRAINT,
    }
    """Constraints of the parameters that Mondrian forests and AMF share (the last
    entries of their ``_parameter_constraints``)."""

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit(self, X, y, sample_weight):
        """``fit``: a fresh model learns the rows."""
        self._own_arrays()  # loaded from read-only memory maps (utils.persistence)
        X, y, sample_weight = self._check_fit_batch(X, y, sample_weight)
        self._warn_deprecated_params()
        self._start(X, y, sample_weight)
        # The trees that fit samples in batch reserve the size of those sampled before
        # them (fit trims them at its end; partial_fit keeps room for the next rows).
        self._fit_sizes = BatchSizes()
        try:
            self._learn_in_units(X, y, sample_weight)
        finally:
            del self._fit_sizes
        self._trim()
        self._remember_fast_state()
        return self

    def _partial_fit(self, X, y, sample_weight, classes=None):
        """``partial_fit``: the fast path when the call qualifies, else full validation."""
        if classes is None or self._fast_classes(classes):
            if sample_weight is None:
                if self._partial_fit_fast(X, y):
                    return self
            elif self._fast_weighted:
                weights = self._fast_weights(sample_weight, X)
                if weights is not None and self._partial_fit_fast(X, y, weights):
                    return self
        return self._partial_fit_full(X, y, sample_weight, classes)

    @_fit_context(prefer_skip_nested_validation=True)
    def _partial_fit_full(self, X, y, sample_weight, classes):
        """``partial_fit`` through scikit-learn's validation (the first call, and any
        call that the fast path turns down)."""
        self._own_arrays()  # loaded from read-only memory maps (utils.persistence)
        checked = self._check_partial_fit_batch(X, y, sample_weight, classes)
        self._warn_deprecated_params()
        if checked is None:
            return self
        X, y, sample_weight, first = checked
        if first:
            self._start(X, y, sample_weight)
        self._learn_labels(y)  # a row of weight zero teaches nothing but its label
        self._learn_in_units(X, y, sample_weight)
        self._remember_fast_state()
        return self

    def _partial_fit_validated(self, X, y):
        """``partial_fit`` of a fitted model on rows its caller has checked (see
        ``TreeModelMixin._partial_fit_validated``): the fast path when the call
        qualifies, else the rows learned without scikit-learn's validation."""
        if self._partial_fit_fast(X, y):
            return self
        self._check_structure()
        self._own_arrays()  # loaded from read-only memory maps (utils.persistence)
        X = np.ascontiguousarray(X, dtype=np.float64)
        self._check_units_range(X)
        y = np.asarray(y, dtype=self._label_dtype)
        check_no_missing_target(y)
        self._learn_labels(y)
        self._learn_in_units(X, y, np.ones(X.shape[0]))
        self._remember_fast_state()
        return self

    def _learn_batch(self, X, y, sample_weight):
        """Learn checked rows in the model's units (``utils.feature_scale``): those of
        positive weight (a row of weight zero teaches nothing)."""
        keep = sample_weight > 0
        if not keep.all():
            X, y, sample_weight = X[keep], y[keep], sample_weight[keep]
        if X.shape[0]:
            self._learn_weighted_rows(X, y, sample_weight)

    def _warn_deprecated_params(self):
        """FutureWarnings for former values of parameters (called once the batch of
        ``fit`` or ``partial_fit`` is checked); none by default."""

    def _max_nodes_value(self):
        """The node budget of each tree (``UNBOUNDED`` when there is none)."""
        return UNBOUNDED if self.max_nodes is None else int(self.max_nodes)


class ForestClassifierMixin(ClassifierMixin):
    """What the classifiers made of trees with class counts share (Mondrian forest
    classifier, boosting, AMF classifier): the checks of their batches, classes
    learned as they appear, and predictions from class probabilities.

    A class names the per-node class-count column of its trees (``_class_counts``)
    and defines ``_predict_proba_fast(X)`` (all trees in one compiled call,
    ``utils.fast_path``; None when refused) and ``_predict_proba_trees(X)`` (tree by
    tree), both on checked rows in the model's units.
    """

    _label_dtype = None  # class labels are kept as they are given

    def _check_fit_batch(self, X, y, sample_weight):
        return check_classifier_fit(self, X, y, sample_weight)

    def _check_partial_fit_batch(self, X, y, sample_weight, classes):
        return check_classifier_batch(self, X, y, sample_weight, classes)

    def _learn_labels(self, y):
        """Insert labels first seen in ``y`` into ``classes_``, which stays sorted.

        The per-node class counts ``node_stats[_class_counts]`` of every tree, the
        trees' node label keys and, when there is one, the shared sample store (its
        statistics columns and keys) are remapped to the merged classes; new classes
        start with zero counts. With declared classes, an unseen label is an error;
        so is a label of another kind (string or number) than ``classes_``.
        """
        check_same_label_kind(y, self.classes_, "the classes learned so far (`classes_`)")
        _check_declared(self.classes_, y, self._classes_declared)
        new = np.setdiff1d(np.unique(y), self.classes_)
        if new.size == 0:
            return
        merged = np.unique(np.concatenate([self.classes_, new]))
        old_to_new = np.searchsorted(merged, self.classes_)

        def remap(columns):
            out = np.zeros((columns.shape[0], len(merged)))
            out[:, old_to_new] = columns[:, : len(self.classes_)]
            return out

        for tree in self.trees_:
            tree.node_stats[self._class_counts] = remap(tree.node_stats[self._class_counts])
            label = tree.arrays.label[: tree.n_nodes]  # spare rows hold no node
            known = label >= 0
            label[known] = old_to_new[label[known]]
        store = self._store
        if store is not None:
            store.stats = remap(store.stats)
            store.keys[: store.n] = old_to_new[store.keys[: store.n]]
        self.classes_ = merged

    def predict_proba(self, X):
        """Class probabilities, averaged over the trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to one.
        """
        proba = self._express_predict(X)
        if proba is not None:
            return proba
        rows = self._fast_input(X)
        if rows is not None:
            proba = self._predict_proba_fast(rows[0], rows[1])
            if proba is not None:
                return proba
        return self._predict_proba_validated(self._checked_rows(X))

    def _predict_proba_validated(self, X):
        """``predict_proba`` on a checked C-contiguous float64 array (in the units of
        ``X``)."""
        proba = self._express_predict(X)
        if proba is not None:
            return proba
        rows = self._fast_checked(X)
        if rows is not None:
            proba = self._predict_proba_fast(*rows)
            if proba is not None:
                return proba
        return self._predict_proba_trees(self._in_units(X))

    def predict(self, X):
        """Most probable class of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            The most probable class of each row.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class ForestRegressorMixin(RegressorMixin):
    """What the regressors made of trees share (Mondrian forest and AMF
    regressors): the checks of their batches, and the fast path of ``predict``.

    A class defines ``_predict_mean_fast(X)`` (the mean, all trees in one compiled
    call, ``utils.fast_path``; None when refused) and ``_predict_validated(X,
    return_std)``.
    """

    _label_dtype = np.float64

    def _check_fit_batch(self, X, y, sample_weight):
        return check_X_y_batch(self, X, y, sample_weight, reset=True, y_numeric=True)

    def _check_partial_fit_batch(self, X, y, sample_weight, classes):
        return check_regressor_batch(self, X, y, sample_weight)

    def _learn_labels(self, y):
        """Targets add nothing to a regressor beyond the rows they label."""

    def _express_mean(self, X):
        """The mean of one row through a prepared call (``utils.fast_path``), or
        None: for regressors that prepare them."""
        return None

    def _predict(self, X, return_std):
        """``predict``: the mean in one compiled call when the call qualifies, else
        the checked rows (``_predict_validated``)."""
        if not return_std:
            mean = self._express_mean(X)
            if mean is not None:
                return mean
            rows = self._fast_input(X)
            if rows is not None:
                mean = self._predict_mean_fast(rows[0], rows[1])
                if mean is not None:
                    return mean
        return self._predict_validated(self._checked_rows(X), return_std)


def _same_value(a, b):
    """Whether two parameter values are equal (arrays element-wise)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b
