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
    """

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
        store = getattr(self, "_store", None)
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
        store = getattr(self, "_store", None)
        if store is not None:
            store.add_features(values)
        for tree in self.trees_:
            tree.add_features(values)
        self.n_features_in_ += values.shape[0]
        self._extend_units(values)
        if getattr(self, "_feature_range", None) is not None:
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
        store = getattr(self, "_store", None)
        if store is not None:
            store.stats = remap(store.stats)
            store.keys[: store.n] = old_to_new[store.keys[: store.n]]
        self.classes_ = merged
