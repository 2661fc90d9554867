"""The ``drift`` parameter of the online forests (AMF and the Mondrian forests).

The mechanism lives in :mod:`mondrianlearn.drift`; this mixin is what the
estimators share around it: the parameter's constraint, whether rows are learned
with adaptation, the ``drift_events_`` attribute and loading models saved before
the parameter existed.
"""

from sklearn.utils._param_validation import StrOptions

DRIFT_CONSTRAINT = [StrOptions({"adwin"}), dict, None]
"""Constraint of the ``drift`` parameter (its settings are checked by
:func:`mondrianlearn.drift.drift_settings`)."""


_DRIFT = []


def drift_module():
    """:mod:`mondrianlearn.drift`, imported on first use (it imports the models'
    kernels, so the models cannot import it when they load). The models reach it
    through here rather than by an ``import`` statement in their methods, which runs
    the import machinery on every call, even once the module is loaded: on a call of
    one row that counts beside the compiled work."""
    if not _DRIFT:
        from .. import drift

        _DRIFT.append(drift)
    return _DRIFT[0]


class DriftMixin:
    """``drift`` parameter support for an estimator with ``trees_``."""

    def _adapts_to_drift(self):
        """Whether rows are learned with drift adaptation (:mod:`mondrianlearn.drift`).

        A model that learned with it cannot go on without it (its trees and
        detectors are the adaptation's): ``drift=None`` set on it afterwards is an
        error until ``fit`` starts it again.
        """
        if getattr(self, "drift", None) is not None:
            return True
        if self.__dict__.get("_drift_state") is not None:
            raise ValueError("drift=None on a model that learned with drift adaptation: "
                             "set drift back, or fit the model again.")
        return False

    @property
    def drift_events_(self):
        """With ``drift``: what the adaptation did (see :mod:`mondrianlearn.drift`)."""
        state = self.__dict__.get("_drift_state")
        if state is None or getattr(self, "drift", None) is None:
            raise AttributeError("drift_events_ exists once a model with drift adaptation "
                                 "(drift='adwin' or a dict) has learned.")
        return state.events_array()

    def __setstate__(self, state):
        super().__setstate__(state)
        if "drift" not in self.__dict__ and "drift" in type(self)._get_param_names():
            object.__setattr__(self, "drift", None)  # saved before drift adaptation existed
