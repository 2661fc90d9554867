"""Saving and loading models: pickles record the library version and state format.

A model loaded with ``joblib.load(path, mmap_mode="r")`` holds read-only memory maps.
The compiled kernels write into the model's arrays when it learns, and numba would
compile every kernel a second time for read-only array types (seconds of a user's
time) even to predict. So a model notes on loading that it holds read-only arrays
(:meth:`VersionedStateMixin.__setstate__`), and the first call that predicts or
learns replaces each of them by a copy (:meth:`VersionedStateMixin._own_arrays`,
:func:`own_arrays`); a model that holds none pays one dictionary look-up per call.
"""

import threading

import numpy as np

STATE_FORMAT = 8
"""Version of the layout of fitted state; bumped when a saved model can no longer load.

An estimator reads the formats from its ``_oldest_state_format`` to this one: a
bump refuses only the models whose own layout changed (2: ``AMFRegressor`` keeps
running moments of the target and a sum of squared deviations per node; 3: trees in
feature units, ``utils.feature_scale``, which older versions would misread: models
saved in formats 1 and 2 load with ``feature_scale=None``, in raw units; 4: AMF
has the ``drift`` parameter and, when it is set, a drift state: models saved in
earlier formats load with ``drift=None``; 5: Mondrian forests save their trees
without the boxes and sums that the stored points give back, ``engine.saved_trees``, which
older versions would misread; 6: boxes are stored in float32, rounded outward,
``engine.boxes``, relative to an origin of the features, ``utils.feature_scale``:
trees saved in earlier formats get their float64 boxes rounded outward when they
load, ``TreeState.__setstate__``, and origin 0; 7: a model records the parameters
that fix its structure when it starts learning, ``_structure_``, and a later
``partial_fit`` refuses a change of them: models saved in earlier formats load
without the record and are not checked; 8: ``MondrianKernelClassifier`` has the
``solver`` parameter and records the one it used, ``solver_``: models saved in
earlier formats load with ``solver="sgd"``, which trained them)."""


_READ_ONLY = "_holds_read_only_arrays"
"""Instance attribute of a loaded model that holds read-only arrays (never pickled)."""

_OWN_LOCK = threading.Lock()
"""Held while a model copies its read-only arrays (two threads may use it at once)."""


def _walk(value, copy, seen):
    """``(value, found)``: ``value`` with its read-only arrays copied (``copy``; lists,
    dicts and objects are changed in place, tuples rebuilt), and whether it holds any.

    Goes into lists, tuples, dicts and the attributes of the library's own objects
    (trees, sample stores, drift states, ridge solutions...), where every array of a
    model lives. A tree copies its own arrays (``TreeState.own_arrays``), so that its
    ``stamp`` changes.
    """
    if isinstance(value, np.ndarray):
        if value.flags.writeable:
            return value, False
        # order="K": the copy keeps the array's layout, as a model loaded in memory has it
        return (np.array(value, order="K") if copy else value), True
    if isinstance(value, (str, bytes, int, float, type)) or value is None:
        return value, False
    if id(value) in seen:
        return value, False
    seen.add(id(value))
    if isinstance(value, tuple):
        items = [_walk(v, copy, seen) for v in value]
        found = any(f for _, f in items)
        if copy and found:
            new = [v for v, _ in items]
            # a tuple subclass here is a named tuple (TreeArrays...): fields by position
            value = tuple(new) if type(value) is tuple else type(value)(*new)
        return value, found
    if isinstance(value, list):
        found = False
        for i, item in enumerate(value):
            value[i], f = _walk(item, copy, seen)
            found |= f
        return value, found
    if isinstance(value, dict):
        found = False
        for key, item in list(value.items()):
            new, f = _walk(item, copy, seen)
            if f:
                found = True
                if copy:
                    value[key] = new
        return value, found
    if not type(value).__module__.startswith("mondrianlearn.") or not hasattr(value, "__dict__"):
        return value, False
    if copy and hasattr(value, "own_arrays"):  # a TreeState
        value.own_arrays()
        return value, True
    found = _walk(vars(value), copy, seen)[1]  # attributes set as they are: no __setattr__
    return value, found


def holds_read_only(state):
    """Whether ``state`` (a dict of attributes, a list...) holds a read-only array."""
    return _walk(state, False, set())[1]


def own_arrays(state):
    """Replace every read-only array in ``state`` (a dict of attributes, a list...) by a
    writable copy, in place (see :func:`_walk` for where it looks)."""
    _walk(state, True, set())


class IncompatibleModelError(ValueError):
    """A saved model was written by a mondrian-learn whose state format differs."""


class VersionedStateMixin:
    """Record the library version in pickles and refuse incompatible ones clearly.

    Works with ``pickle`` and ``joblib`` alike (both go through ``__getstate__`` and
    ``__setstate__``). A model loaded with the same state format predicts exactly as
    before and can keep learning.

    ``_oldest_state_format`` is the oldest format that a class still reads
    correctly: a class whose fitted state changed layout raises it to the new
    ``STATE_FORMAT``; the others keep reading the older pickles.
    """

    _oldest_state_format = 1

    def __getstate__(self):
        from .. import __version__

        # A copy: on Python >= 3.11 ``object.__getstate__`` returns the live __dict__.
        state = dict(super().__getstate__())
        state.pop(_READ_ONLY, None)
        state["_mondrianlearn_version"] = __version__
        state["_mondrianlearn_state_format"] = STATE_FORMAT
        return state

    def __setstate__(self, state):
        from .. import __version__

        saved = state.get("_mondrianlearn_state_format")
        if not (isinstance(saved, int) and self._oldest_state_format <= saved <= STATE_FORMAT):
            version = state.get("_mondrianlearn_version", "an unknown version")
            raise IncompatibleModelError(
                f"This {type(self).__name__} was saved by mondrian-learn {version} "
                f"(state format {saved}); mondrian-learn {__version__} reads state formats "
                f"{self._oldest_state_format} to {STATE_FORMAT} of this estimator. Load it "
                f"with mondrian-learn {version}, or refit it.")
        super().__setstate__(state)
        if holds_read_only(self.__dict__):  # e.g. joblib.load(path, mmap_mode="r")
            self.__dict__[_READ_ONLY] = True

    def _own_arrays(self):
        """Copy the read-only arrays of a model loaded from memory maps, once, before
        its first prediction or learning call (see the module docstring).

        Learning writes into the arrays, and prediction kernels called with read-only
        arrays would be compiled again for that type: a copy costs less than either
        (and the copy is what a model loaded without ``mmap_mode`` holds). Called by
        the full paths only: the fast paths (``utils.fast_path``) run once a full
        learning call has recorded the fast state, and it owns the arrays first.
        """
        if _READ_ONLY in self.__dict__:
            with _OWN_LOCK:
                if _READ_ONLY in self.__dict__:
                    own_arrays(self.__dict__)
                    del self.__dict__[_READ_ONLY]
