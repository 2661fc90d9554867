"""Saving and loading models: pickles record the library version and state format."""

STATE_FORMAT = 6
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
load, ``TreeState.__setstate__``, and origin 0)."""


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
