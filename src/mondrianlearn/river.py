"""The library's models with river's interface (``pip install "mondrian-learn[river]"``).

Each class here is a river estimator (it subclasses river's base classes) backed by the
scikit-learn-style estimator of the same name, so that
``river.evaluate.progressive_val_score``, river pipelines such as
``preprocessing.MinMaxScaler() | model`` and river metrics work unchanged.

Features are keyed by name. The feature order is the order in which names are first
seen. A feature first seen after learning has started joins the model as if every
earlier point had carried its first value (every box gets that value in the new
dimension), the convention of river's own AMF, whose boxes start a feature's range at
the first value they see. A feature missing from a later row takes that same first
value. At prediction, features the model has never learned from are ignored.

Learning one row at a time costs one call to the compiled kernels per tree; with
mini-batches (``learn_many``) the per-row cost is far lower.
"""

import numpy as np

try:
    from river import base as river_base
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("mondrianlearn.river needs river: pip install 'mondrian-learn[river]'") from exc

__all__ = ["MondrianForestClassifier", "MondrianForestRegressor", "AMFClassifier",
           "AMFRegressor", "MondrianKernelRegressor", "MondrianKernelClassifier"]


class _Backed:
    """Shared plumbing: dict rows to arrays, lazily built scikit-learn-style model."""

    _backing = None  # "module:Class"
    _params = ()  # constructor parameters passed through

    def _init_state(self):
        self._model = None
        self._features = []
        self._index = {}
        self._anchors = []

    def _new_model(self):
        import importlib

        module, name = self._backing.split(":")
        cls = getattr(importlib.import_module(module), name)
        kwargs = {p: getattr(self, p) for p in self._params}
        kwargs["random_state"] = self.seed
        return cls(**kwargs)

    def _learned(self):
        return self._model is not None and hasattr(self._model, "n_features_in_")

    def _register(self, rows):
        """Record new feature names (in order), widening a fitted model."""
        new_names, new_values = [], []
        for x in rows:
            for name, value in x.items():
                if name not in self._index:
                    self._index[name] = len(self._features)
                    self._features.append(name)
                    self._anchors.append(float(value))
                    new_names.append(name)
                    new_values.append(float(value))
        if new_names and self._learned():
            self._model._add_features(np.array(new_values))

    def _matrix(self, rows, learning):
        if learning:
            self._register(rows)
        n_features = self._model.n_features_in_ if self._learned() and not learning \
            else len(self._features)
        out = np.empty((len(rows), n_features))
        out[:] = np.asarray(self._anchors[:n_features])
        for i, x in enumerate(rows):
            for name, value in x.items():
                j = self._index.get(name)
                if j is not None and j < n_features:
                    out[i, j] = value
        return out

    def _learn_rows(self, rows, targets):
        if self._model is None:
            self._model = self._new_model()
        X = self._matrix(rows, learning=True)
        if X.shape[1] == 0:
            return
        if not np.isfinite(X).all():
            raise ValueError("Input contains NaN or infinity.")
        if self._learned() and hasattr(self._model, "_partial_fit_validated"):
            from .utils.validation import check_extent

            check_extent(self._model, X, reset=False)
            self._model._partial_fit_validated(X, targets)
        else:
            self._model.partial_fit(X, np.asarray(targets))

    def _checked(self, rows):
        X = self._matrix(rows, learning=False)
        if not np.isfinite(X).all():
            raise ValueError("Input contains NaN or infinity.")
        return X

    @staticmethod
    def _frame_rows(X):
        return X.to_dict(orient="records")


class _BackedClassifier(_Backed, river_base.MiniBatchClassifier):
    @property
    def _multiclass(self):
        return True

    def learn_one(self, x, y):
        self._learn_rows([x], [y])

    def learn_many(self, X, y):
        self._learn_rows(self._frame_rows(X), list(y))

    def _proba_matrix(self, rows):
        if not self._learned():
            return None
        model = self._model
        fast = getattr(model, "_predict_proba_validated", model.predict_proba)
        return fast(self._checked(rows))

    def predict_proba_one(self, x):
        proba = self._proba_matrix([x])
        if proba is None:
            return {}
        return {_plain(c): float(p) for c, p in zip(self._model.classes_, proba[0])}

    def predict_proba_many(self, X):
        import pandas as pd

        proba = self._proba_matrix(self._frame_rows(X))
        if proba is None:
            return pd.DataFrame(index=X.index)
        return pd.DataFrame(proba, index=X.index,
                            columns=[_plain(c) for c in self._model.classes_])

    def predict_many(self, X):
        import pandas as pd

        proba = self._proba_matrix(self._frame_rows(X))
        if proba is None:
            return pd.Series([None] * len(X), index=X.index, dtype=object)
        return pd.Series([_plain(c) for c in self._model.classes_[np.argmax(proba, axis=1)]],
                         index=X.index)


class _BackedRegressor(_Backed, river_base.MiniBatchRegressor):
    def learn_one(self, x, y):
        self._learn_rows([x], [float(y)])

    def learn_many(self, X, y):
        self._learn_rows(self._frame_rows(X), np.asarray(y, dtype=float))

    def predict_one(self, x):
        if not self._learned():
            return 0.0
        fast = getattr(self._model, "_predict_validated", self._model.predict)
        return float(fast(self._checked([x]))[0])

    def predict_many(self, X):
        import pandas as pd

        if not self._learned():
            return pd.Series(np.zeros(len(X)), index=X.index)
        fast = getattr(self._model, "_predict_validated", self._model.predict)
        return pd.Series(fast(self._checked(self._frame_rows(X))), index=X.index)


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


class MondrianForestClassifier(_BackedClassifier):
    """Mondrian forest classifier for river (see :class:`mondrianlearn.MondrianForestClassifier`).

    Parameters
    ----------
    n_estimators : int, default=10
    lifetime : float, default=inf
    discount : float, default=None
    min_samples_split : int, default=2
    max_nodes : int, default=None
    bootstrap : bool, default=False
    seed : int, default=None

    Examples
    --------
    >>> from river import datasets, evaluate, metrics
    >>> from mondrianlearn.river import MondrianForestClassifier
    >>> model = MondrianForestClassifier(n_estimators=10, seed=42)
    >>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    Accuracy: ...
    """

    _backing = "mondrianlearn.forest:MondrianForestClassifier"
    _params = ("n_estimators", "lifetime", "discount", "min_samples_split", "max_nodes",
               "bootstrap")

    def __init__(self, n_estimators=10, lifetime=float("inf"), discount=None,
                 min_samples_split=2, max_nodes=None, bootstrap=False, seed=None):
        self.n_estimators = n_estimators
        self.lifetime = lifetime
        self.discount = discount
        self.min_samples_split = min_samples_split
        self.max_nodes = max_nodes
        self.bootstrap = bootstrap
        self.seed = seed
        self._init_state()


class MondrianForestRegressor(_BackedRegressor):
    """Mondrian forest regressor for river (see :class:`mondrianlearn.MondrianForestRegressor`).

    Parameters
    ----------
    n_estimators : int, default=10
    lifetime : float, default=inf
    min_samples_split : int, default=2
    max_nodes : int, default=None
    bootstrap : bool, default=False
    seed : int, default=None
    """

    _backing = "mondrianlearn.forest:MondrianForestRegressor"
    _params = ("n_estimators", "lifetime", "min_samples_split", "max_nodes", "bootstrap")

    def __init__(self, n_estimators=10, lifetime=float("inf"), min_samples_split=2,
                 max_nodes=None, bootstrap=False, seed=None):
        self.n_estimators = n_estimators
        self.lifetime = lifetime
        self.min_samples_split = min_samples_split
        self.max_nodes = max_nodes
        self.bootstrap = bootstrap
        self.seed = seed
        self._init_state()


class AMFClassifier(_BackedClassifier):
    """Aggregated Mondrian forest classifier for river (see :class:`mondrianlearn.AMFClassifier`).

    Parameters
    ----------
    n_estimators : int, default=10
    step : float, default=1.0
    dirichlet : float, default=None
    use_aggregation : bool, default=True
    split_pure : bool, default=False
    temporary_extension : bool, default=True
    scoring : str, default="paper"
    max_nodes : int, default=None
    seed : int, default=None

    Examples
    --------
    >>> from river import datasets, evaluate, metrics
    >>> from mondrianlearn.river import AMFClassifier
    >>> model = AMFClassifier(n_estimators=10, seed=42)
    >>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    Accuracy: ...
    """

    _backing = "mondrianlearn.amf:AMFClassifier"
    _params = ("n_estimators", "step", "dirichlet", "use_aggregation", "split_pure",
               "temporary_extension", "scoring", "max_nodes")

    def __init__(self, n_estimators=10, step=1.0, dirichlet=None, use_aggregation=True,
                 split_pure=False, temporary_extension=True, scoring="paper",
                 max_nodes=None, seed=None):
        self.n_estimators = n_estimators
        self.step = step
        self.dirichlet = dirichlet
        self.use_aggregation = use_aggregation
        self.split_pure = split_pure
        self.temporary_extension = temporary_extension
        self.scoring = scoring
        self.max_nodes = max_nodes
        self.seed = seed
        self._init_state()


class AMFRegressor(_BackedRegressor):
    """Aggregated Mondrian forest regressor for river (see :class:`mondrianlearn.AMFRegressor`).

    Parameters
    ----------
    n_estimators : int, default=10
    step : float, default=1.0
    use_aggregation : bool, default=True
    split_pure : bool, default=False
    temporary_extension : bool, default=True
    scoring : str, default="paper"
    max_nodes : int, default=None
    seed : int, default=None
    """

    _backing = "mondrianlearn.amf:AMFRegressor"
    _params = ("n_estimators", "step", "use_aggregation", "split_pure",
               "temporary_extension", "scoring", "max_nodes")

    def __init__(self, n_estimators=10, step=1.0, use_aggregation=True, split_pure=False,
                 temporary_extension=True, scoring="paper", max_nodes=None,
                 seed=None):
        self.n_estimators = n_estimators
        self.step = step
        self.use_aggregation = use_aggregation
        self.split_pure = split_pure
        self.temporary_extension = temporary_extension
        self.scoring = scoring
        self.max_nodes = max_nodes
        self.seed = seed
        self._init_state()


class MondrianKernelRegressor(_BackedRegressor):
    """Ridge regression on Mondrian kernel features, for river.

    See :class:`mondrianlearn.MondrianKernelRegressor`: each row extends the
    partitions (new cells become new features) and updates the ridge solution by a
    rank-1 update. The lifetime sweep needs a batch, so the lifetime is given here.

    Parameters
    ----------
    n_trees : int, default=50
    lifetime : float, default=1.0
        Lifetime of the partitions, in the unit of the features (scale them, e.g.
        with ``preprocessing.MinMaxScaler() | model``).
    alpha : float, default=1e-4
    seed : int, default=None
    """

    _backing = "mondrianlearn.kernel:MondrianKernelRegressor"
    _params = ("n_trees", "lifetime", "alpha")

    def __init__(self, n_trees=50, lifetime=1.0, alpha=1e-4, seed=None):
        self.n_trees = n_trees
        self.lifetime = lifetime
        self.alpha = alpha
        self.seed = seed
        self._init_state()


class MondrianKernelClassifier(_BackedClassifier):
    """Linear classifier on Mondrian kernel features (SGD, logistic loss), for river.

    See :class:`mondrianlearn.MondrianKernelClassifier`.

    Parameters
    ----------
    n_trees : int, default=50
    lifetime : float, default=1.0
    alpha : float, default=1e-6
    seed : int, default=None
    """

    _backing = "mondrianlearn.kernel:MondrianKernelClassifier"
    _params = ("n_trees", "lifetime", "alpha")

    def __init__(self, n_trees=50, lifetime=1.0, alpha=1e-6, seed=None):
        self.n_trees = n_trees
        self.lifetime = lifetime
        self.alpha = alpha
        self.seed = seed
        self._init_state()
