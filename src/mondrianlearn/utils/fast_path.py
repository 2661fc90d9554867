"""The per-call fast path of the online estimators, for calls of a few rows.

Streams arrive a row (or a few rows) at a time, and there scikit-learn's input and
parameter validation and a Python call per tree would cost far more than the
compiled work. A call takes the fast path when all of these hold, which a few
attribute reads decide:

- the model has learned through the full path, and no parameter was set since
  (``set_params`` or assignment leads back through full validation);
- ``X`` is a C-ordered or convertible float64 ``numpy.ndarray`` of the fitted width
  with at most ``FAST_MAX_ROWS`` rows, and the model was not fitted on named
  columns (pandas input goes through full validation, which checks the names);
- labels are ones the model knows (classifiers), given as a NumPy array or a list;
  ``classes`` is not given, or given again as the model's classes
  (``_fast_classes``); ``sample_weight`` is not given or, for the forests and AMF,
  is a NumPy array of positive finite weights, one per row (``_fast_weights``);
- rows to learn reach nothing pending in the units (``utils.feature_scale``: a
  re-sampling, the first rows kept), and change no feature unit, or (one row)
  change one by a rescaling of the trees in place, which the fast path makes
  before the compiled call (``_move_units_for_row``); the rows are divided by the
  units in the same compiled call that checks them.

With ``n_jobs`` above 1, a learning call of enough rows and trees
(``utils.parallel.FAST_THREADS_MIN_WORK``) runs in that many threads, each a
contiguous part of the trees in the same compiled kernel (Mondrian forests and AMF).

A call of one row that went through the fast path without Python's help (no tree
grown, one thread) leaves its compiled call prepared for the next one
(``FastScratch.learn_plan`` and ``predict_plan``; :meth:`FastPathMixin._prepare` says
when one may be made again): the classifiers and ``AMFRegressor`` then learn or
predict a row with a handful of checks and the compiled call, skipping the Python calls
of the fast path, which they take again whenever something the call was prepared from
changed. With drift adaptation, a learning call of one row is prepared after any
one-row call (its loop over the slots goes on in Python from the events it stops at:
``drift.prepare_learning``), and so is AMF's prediction of one row
(``drift.prepare_prediction``), not the Mondrian forests'.

Whatever does not qualify goes through the full path, which gives the same result
or the same error. The values themselves (finite, range within float64) are checked
by the compiled call before it changes anything: on refusal the call falls back to
the full path, which raises the usual error. The result of a call does not depend
on the path it took (tested bit for bit).
"""

import functools
import threading

import numpy as np

from ..engine._jit import compiled_entry
from .feature_scale import NOT_DUE, scale_rows, to_units

FAST_MAX_ROWS = 512
"""Largest call (in rows) that takes the fast path; larger ones are validated in
full, which costs little beside their compiled work."""

ONES = np.ones(FAST_MAX_ROWS)
"""Unit sample weights (read by the kernels, never written)."""

ONE = ONES[:1]
"""Unit weight of a one-row call."""

NO_UNITS = np.ones((3, 0))
"""``units`` of :meth:`FastPathMixin._fast_input` for a model in the units of ``X``
(the kernels then read the rows as they are)."""

_FLOAT64 = np.dtype(np.float64)

NEW_UNITS = "new units"
"""What a fast-path learning method returns for rows that it refused only because
they change a feature unit (see :meth:`FastPathMixin._learn_new_units`)."""


class FastScratch:
    """Scratch state of the fast path, one object per estimator (so that filling it
    during ``predict`` leaves the estimator's attributes as they were): the
    :class:`~mondrianlearn.engine.tree_table.TreeTable` and the work arrays of the
    kernels, by name."""

    def __init__(self):
        self.table = None
        self.work = {}
        self.lock = threading.RLock()
        self.learn_plan = None
        """The compiled call of the last one-row fast ``partial_fit``, ready to be
        made again: ``learn(model, X, data)``, true when it learned the row (see
        :meth:`FastPathMixin._prepare`), or None."""
        self.predict_plan = None
        """The same for the last one-row fast prediction: ``predict(model, X)``, the
        prediction or None (:meth:`FastPathMixin._express_predict`)."""

    def forget_plans(self):
        """Drop the prepared calls (parameters or classes changed)."""
        self.learn_plan = self.predict_plan = None


def fast_call(method):
    """Decorator of the fast-path methods that use the scratch state: the method runs
    holding the scratch lock, and a call that finds it held by another thread returns
    None instead (it then takes the full path, which shares no work arrays), so
    threads that predict with one model at once never share work arrays."""

    @functools.wraps(method)
    def locked(self, *args):
        scratch = self.__dict__.get("_fast_scratch")
        if scratch is None:
            return None
        lock = scratch.lock
        if not lock.acquire(False):  # not blocking (positional: a faster call)
            return None
        try:
            return method(self, *args)
        finally:
            lock.release()

    return locked


class FastPathMixin:
    """Fast-path eligibility of estimator calls (see the module docstring).

    An estimator calls :meth:`_remember_fast_state` at the end of each fully
    validated ``fit``/``partial_fit``; :meth:`_fast_X` then accepts the ``X`` of a
    later call, or returns ``None`` for the full path.
    """

    _prepares_calls = False
    """Whether one-row fast calls leave their compiled call prepared for the next
    (:meth:`_prepare`): AMF's classifier and regressor and the Mondrian forest
    classifier, for learning and prediction."""

    _fast_weighted = False
    """Whether the fast path of ``partial_fit`` takes ``sample_weight``
    (``_fast_weights``)."""

    def __setattr__(self, name, value):
        # Setting a parameter (``set_params`` or plain assignment) sends the next
        # call through full validation.
        names = type(self).__dict__.get("_fast_param_names")
        if names is None:
            names = type(self)._fast_param_names = frozenset(self._get_param_names())
        if name in names:
            self.__dict__.pop("_fast_params", None)
            scratch = self.__dict__.get("_fast_scratch")
            if scratch is not None:
                scratch.forget_plans()
        object.__setattr__(self, name, value)

    def _remember_fast_state(self):
        """Record that the parameters were just validated; the fast path requires it."""
        self._fast_params = True
        if "_fast_scratch" not in self.__dict__:
            self._fast_scratch = FastScratch()
        else:
            self._fast_scratch.forget_plans()
        classes = self.__dict__.get("classes_")
        if classes is not None:
            self._fast_class_index = {c: k for k, c in enumerate(classes.tolist())}
            # each label's one-row key array, shared between calls (kernels only read
            # keys)
            self._fast_one_key_of = {c: np.full(1, k, dtype=np.int64)
                                     for c, k in self._fast_class_index.items()}

    def _fast_ready(self):
        """Whether the parameters were validated since they last changed (the fast
        path may run)."""
        return "_fast_params" in self.__dict__

    def _fast_table(self):
        """The trees' :class:`~mondrianlearn.engine.tree_table.TreeTable` (columns of
        per-node arrays: the class attribute ``_fast_stats``), or None."""
        table = self._fast_scratch.table
        if table is None:
            from ..engine.tree_table import TreeTable

            table = self._fast_scratch.table = TreeTable(self._fast_stats)
        return table if table.refresh(self.trees_) else None

    # ------------------------------------------------------- prepared calls
    def _prepare(self, X, trees, units, run, kernel):
        """A call made on ``X`` prepared to be made again: ``call(model, X,
        data=None)`` returns ``run(model, model.__dict__, X, data)`` holding the
        scratch lock when ``X`` passes the checks below, else None (the caller then
        takes the fast path, which decides); its attribute ``kernel`` is the
        compiled function that ``run`` calls. None instead of a call when the call
        may not be prepared: its kernel read the rows in ``units`` that are not the
        model's (rows already in the model's units). The model is an argument, not
        held by the call, which the model holds: no reference cycle keeps a dropped
        model's memory until Python's garbage collector runs.

        A fast call of one row that went through without Python's help (no tree
        grown, one thread; with drift adaptation, any) leaves its compiled call prepared
        (``FastScratch.learn_plan``, ``predict_plan``): ``run`` makes the kernel's
        compiled function (``engine._jit.compiled_entry``) with the table of the
        trees' arrays, the work arrays and the settings it was given, and whatever
        the model family does after it. The next call of one row makes it again,
        without the fast path's Python calls, when ``X`` is a writable, aligned,
        C-contiguous float64 array of the same shape (the compiled function takes no
        other) and nothing the call was prepared from has changed: the parameters
        (``set_params`` drops the plans, and so does every call through full
        validation), the list of trees, the model's units, and the arrays of any
        tree (the global stamp of :mod:`~mondrianlearn.engine.tree`, so that the
        table's addresses are those of live arrays). ``run`` checks what else its
        family depends on; the kernel checks the rest (values, room in the trees and
        work arrays) and refuses what the fast path would. What the checks compare
        with is held by the closures, not looked up through attributes and methods:
        a one-row call of AMF spent 0.2 µs (learning) and 0.4 µs (prediction) less
        in Python than with the same checks made by methods (ad-hoc timings).
        """
        from ..engine.tree import LAST_STAMP

        model_units = self.__dict__.get("_units")
        if units is not (NO_UNITS if model_units is None else model_units):
            return None
        shape, stamp, lock = X.shape, LAST_STAMP[0], self._fast_scratch.lock
        stamps = LAST_STAMP

        def call(model, X, data=None):
            state = model.__dict__
            if (type(X) is not np.ndarray or X.shape != shape or X.dtype is not _FLOAT64
                    or stamps[0] != stamp or state["trees_"] is not trees
                    or state.get("_units") is not model_units or "_fast_params" not in state):
                return None
            # ``carray``: C-contiguous, aligned and writeable, in one flag
            if not X.flags.carray or not lock.acquire(False):
                return None
            try:
                return run(model, state, X, data)
            finally:
                lock.release()

        call.kernel = kernel
        return call

    def _prepare_prediction(self, X, kernel, fixed, head, tail, out_shape):
        """``_prepare`` for the prediction kernel just called as ``kernel(addresses,
        sizes, X, units, scaled, *head, out, *tail)`` (``fixed = (addresses, sizes,
        units, scaled)``; ``out`` of shape ``out_shape``): the prepared call returns a
        new ``out``, or None when the kernel refused the row."""
        addresses, sizes, units, scaled = fixed
        entry = compiled_entry(kernel, (addresses, sizes, X, units, scaled, *head,
                                        np.zeros(out_shape), *tail))

        def run(model, state, X, _):
            out = np.zeros(out_shape)
            status = entry(addresses, sizes, X, units, scaled, *head, out, *tail)
            return out if status == 1 else None

        return self._prepare(X, self.trees_, units, run, entry)

    def _express_predict(self, X):
        """The prediction of one row through the call that the last one-row fast
        prediction prepared, or None: the fast path then decides."""
        scratch = self.__dict__.get("_fast_scratch")
        predict = None if scratch is None else scratch.predict_plan
        return None if predict is None else predict(self, X)

    def _fast_input(self, X, learning=False):
        """``(X, units, follow)`` for a kernel that puts the rows in the model's units
        itself (``utils.feature_scale.rows_in_units``), if this call may take the
        fast path (a 2-D ``numpy.ndarray`` of 1 to ``FAST_MAX_ROWS`` rows of the
        fitted width, parameters validated since they last changed, no column names
        to check; rows to learn in units that follow the range reach no re-learning
        or re-sampling, ``_units_due``), else None.

        ``X`` is C-contiguous, writable, aligned float64 (one array type for the
        kernels), in the units of the caller; ``units`` the model's units (rows:
        unit, 1 / unit, origin), or :data:`NO_UNITS`; ``follow`` whether the rows
        must be refused when they would change a unit (rows to learn, units that
        follow the range); the kernel does the rest of the check (:meth:`_fast_X`
        for kernels that take rows in units). (Written out in one function: it runs
        on every call of a row or a few, where each Python call counts beside the
        compiled work.)
        """
        if type(X) is not np.ndarray:
            return None
        state = self.__dict__
        shape = X.shape
        if (len(shape) != 2 or not 0 < shape[0] <= FAST_MAX_ROWS
                or "_fast_params" not in state or "feature_names_in_" in state
                or shape[1] != state["n_features_in_"]):
            return None
        if X.dtype is not _FLOAT64 or not X.flags.carray:  # C-contiguous, aligned, writeable
            if X.dtype.kind not in "fiu":
                return None
            # one array type for the kernels (another would compile them again),
            # which may read the rows in place
            X = np.array(X, dtype=np.float64, order="C")
        units = state.get("_units")
        if units is None:
            return X, NO_UNITS, False
        if learning and state["_units_follow_range"]:
            # nothing pending in the units within these rows (while AMF keeps its
            # first rows, rows that keep the units may be learned: it keeps them)
            due = NOT_DUE if "_first_rows" in state else state["_units_due"]
            if (state.get("_feature_range") is None
                    or state["n_samples_seen_"] + shape[0] > due):
                return None
            return X, units, True
        return X, units, False

    def _fast_checked(self, X):
        """``(X, units)`` for the fast path of a call on rows already checked (a
        C-contiguous float64 array of the fitted width, in the units of the caller:
        the ``_predict_*_validated`` methods), or None."""
        if (not 0 < X.shape[0] <= FAST_MAX_ROWS or "_fast_params" not in self.__dict__
                or not X.flags.writeable):
            return None
        units = self.__dict__.get("_units")
        return X, NO_UNITS if units is None else units

    def _fast_scaled(self, n_rows, n_features):
        """A work array of shape ``(n_rows, n_features)`` for the rows in units (one
        kept per estimator for one-row calls; call with the scratch lock held)."""
        if n_rows != 1:
            return np.empty((n_rows, n_features))
        work = self._fast_scratch.work
        scaled = work.get("scaled")
        if scaled is None or scaled.shape[1] != n_features:
            scaled = work["scaled"] = np.empty((1, n_features))
        return scaled

    def _fast_labels(self, y, n_rows):
        """Class keys (a model with ``classes_``) or float targets of ``y`` for the
        fast path, or None."""
        if "_fast_class_index" in self.__dict__:
            return self._fast_keys(y, n_rows)
        return self._fast_targets(y, n_rows)

    def _fast_weights(self, sample_weight, X):
        """``sample_weight`` as the fast path's weights of the rows of ``X``: a
        C-contiguous, writable, aligned float64 array of one positive finite weight
        per row, or None when the call must take the full path (which checks the
        weights as scikit-learn does, and learns nothing from rows of weight zero)."""
        if (type(sample_weight) is not np.ndarray or type(X) is not np.ndarray
                or X.ndim != 2 or sample_weight.shape != (X.shape[0],)):
            return None
        if sample_weight.dtype is not _FLOAT64 or not sample_weight.flags.carray:
            if sample_weight.dtype.kind not in "fiu":
                return None
            sample_weight = np.array(sample_weight, dtype=np.float64)
        if sample_weight.shape[0] == 1:
            if not 0.0 < sample_weight[0] < np.inf:  # NaN fails too
                return None
        elif not ((sample_weight > 0.0).all() and (sample_weight < np.inf).all()):
            return None
        return sample_weight

    def _learn_new_units(self, X, y, weights=None):
        """Learn rows that the fast path refused only because they change a feature
        unit (``X`` from :meth:`_fast_input`, ``y`` labels it accepted, ``weights``
        from :meth:`_fast_weights` or None for ones), as the full path does
        (``_learn_in_units``) but without scikit-learn's validation, whose checks of
        type, width, labels and weights the fast path made. Returns False, with
        nothing changed, for rows the full path must refuse (a value not finite, a
        range that overflows): it then raises the usual error."""
        if not self._finite_in_range(X):
            return False
        self._learn_in_units(X, y, np.ones(X.shape[0]) if weights is None else weights)
        self._remember_fast_state()
        return True

    def _fast_X(self, X, learning=False):
        """``X`` as a C-contiguous float64 array in the model's units
        (``utils.feature_scale``) if this call may take the fast path, else None: the
        rows of :meth:`_fast_input`, put in units here (for kernels that take rows
        in units).

        Rows to learn (``learning``) that would change a unit, or hold a value that is
        not finite, take the full path.
        """
        rows = self._fast_input(X, learning)
        if rows is None:
            return None
        X, units, follow = rows
        if not units.shape[1]:
            return X
        out = np.empty_like(X)
        if follow:
            if scale_rows(X, units, self._feature_range, out):
                return None
        else:
            to_units(X, units, out)
        return out

    def _fast_rows(self, X, y):
        """``(X, labels)`` for the fast path of ``partial_fit``, or None: class keys
        for a classifier (a model with ``classes_``), float targets otherwise."""
        X = self._fast_X(X, learning=True)
        if X is None:
            return None
        labels = self._fast_labels(y, X.shape[0])
        return None if labels is None else (X, labels)

    def _fast_classes(self, classes):
        """Whether ``classes``, given again to ``partial_fit`` (as scikit-learn's
        examples do on every call), are what the full path accepts: labels of the
        kind of ``classes_`` whose sorted unique values are ``classes_``. Such a
        call changes nothing that ``classes=None`` would not, so it may take the
        fast path. The last accepted argument is kept (a copy, compared by value,
        along with the ``classes_`` it was checked against), so that passing the
        same classes every call costs a comparison, not the full check."""
        state = self.__dict__
        known = state.get("classes_")
        if known is None or "_fast_params" not in state:
            return False
        seen = state.get("_fast_seen_classes")
        if seen is not None and seen[1] is known and type(classes) is type(seen[0]):
            if type(classes) is np.ndarray:
                if (classes.dtype == seen[0].dtype and classes.shape == seen[0].shape
                        and np.array_equal(classes, seen[0])):
                    return True
            elif type(classes) in (list, tuple) and classes == seen[0]:
                return True
        from .validation import check_same_label_kind, label_kind

        try:
            label_kind(classes, "`classes`")
            check_same_label_kind(classes, known, "`classes_`", "`classes`")
            same = np.array_equal(np.unique(np.asarray(classes)), known)
        except (TypeError, ValueError):
            return False  # the full path raises the usual error
        if same and type(classes) in (np.ndarray, list, tuple):
            copy = classes.copy() if type(classes) is np.ndarray else type(classes)(classes)
            self._fast_seen_classes = (copy, known)
        return same

    def _learn_one_express(self, X, y, sample_weight=None):
        """Learn one row of a known label (and weight) through the call that the last
        one-row call prepared (``FastScratch.learn_plan``, called with ``(keys,
        weights)`` from ``_fast_keys`` and ``_fast_weights``, for classifiers); false,
        with nothing changed, when the call must take the fast path."""
        scratch = self.__dict__.get("_fast_scratch")
        learn = None if scratch is None else scratch.learn_plan
        if learn is None:
            return False
        keys = self._fast_keys(y, 1)
        if keys is None:
            return False
        weights = ONE if sample_weight is None else self._fast_weights(sample_weight, X)
        return weights is not None and learn(self, X, (keys, weights))

    def _fast_keys(self, y, n_rows):
        """Class keys (indices into ``classes_``) of labels all known, else None."""
        if type(y) is np.ndarray:
            if y.ndim != 1 or y.shape[0] != n_rows:
                return None
            # Python scalars, as the keys of the index are (faster to hash)
            labels = y.tolist()
        elif type(y) is list and len(y) == n_rows:
            labels = y
        else:
            return None
        try:
            if n_rows == 1:
                return self._fast_one_key_of.get(labels[0])
            index = self._fast_class_index
            keys = [index[label] for label in labels]
        except (KeyError, TypeError):  # a new or unhashable label: the full path
            return None
        return np.array(keys, dtype=np.int64)

    def _fast_targets(self, y, n_rows):
        """Regression targets as a float64 array of ``n_rows``, or None."""
        if type(y) is np.ndarray:
            if y.shape != (n_rows,) or y.dtype.kind not in "fiu":
                return None
            return np.ascontiguousarray(y, dtype=np.float64)
        if type(y) is list and len(y) == n_rows:
            try:
                return np.array(y, dtype=np.float64)
            except (TypeError, ValueError):
                return None
        return None

    def __getstate__(self):
        # Fast-path scratch (tables of addresses, work arrays) is never saved.
        state = super().__getstate__()
        return {k: v for k, v in state.items() if not k.startswith("_fast")}
