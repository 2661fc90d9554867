"""What every estimator built on Mondrian trees shares."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .persistence import VersionedStateMixin


class TreeModelMixin(VersionedStateMixin):
    """Introspection, input widening and versioned pickles for models with ``trees_``.

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
        feature that appears late; used by :mod:`mondrianlearn.river`).
        """
        values = np.atleast_1d(np.asarray(values, dtype=np.float64))
        store = getattr(self, "_store", None)
        if store is not None:
            store.add_features(values)
        for tree in self.trees_:
            tree.add_features(values)
        self.n_features_in_ += values.shape[0]
        if getattr(self, "_feature_range", None) is not None:
            self._feature_range = np.hstack([self._feature_range,
                                             np.vstack([values, values])])
