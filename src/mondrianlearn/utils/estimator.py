"""What every estimator built on Mondrian trees shares."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .fast_path import FastPathMixin
from .feature_scale import FeatureScaleMixin
from .persistence import VersionedStateMixin


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
        feature constant so far: ``v`` is stored as it is.
        """
        values = np.atleast_1d(np.asarray(values, dtype=np.float64))
        store = self._store
        if store is not None:
            store.add_features(values)
        for tree in self.trees_:
            tree.add_features(values)
        self.n_features_in_ += values.shape[0]
        self._extend_units(values)
        if self.__dict__.get("_feature_range") is not None:
            self._feature_range = np.hstack([self._feature_range,
                                             np.vstack([values, values])])

    def _merge_new_classes(self, y, stats_name):
        """Insert labels first seen in ``y`` into ``classes_``, which stays sorted.

        The per-node class-count columns ``node_stats[stats_name]`` of every tree, the
        trees' node label keys and, when there is one, the shared sample store (its
        statistics columns and keys) are remapped to the merged classes; new classes
        start with zero counts. With declared classes, an unseen label is an error;
        so is a label of another kind (string or number) than ``classes_``.
        """
        from .validation import _check_declared, check_same_label_kind

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
            tree.node_stats[stats_name] = remap(tree.node_stats[stats_name])
            label = tree.arrays.label
            known = label >= 0
            label[known] = old_to_new[label[known]]
        store = self._store
        if store is not None:
            store.stats = remap(store.stats)
            store.keys[: store.n] = old_to_new[store.keys[: store.n]]
        self.classes_ = merged
