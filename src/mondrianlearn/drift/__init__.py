"""Drift adaptation for the online forests (the estimators' ``drift`` parameter).

``drift="adwin"`` on :class:`~mondrianlearn.AMFClassifier`,
:class:`~mondrianlearn.AMFRegressor`, :class:`~mondrianlearn.MondrianForestClassifier`
and :class:`~mondrianlearn.MondrianForestRegressor` (and their river adapters) makes
the forest follow a stream that changes: each tree's online loss feeds ADWIN
detectors that start background trees and swap them in; scheduled challengers
replace trees that a background tree beats; new AMF trees cut the features that
the forest currently finds useful more often. See :mod:`mondrianlearn.drift._adaptive`
for the mechanism and why it was chosen, and ``benchmarks/bench_drift.py`` for the
measurements. The estimators then record what happened in ``drift_events_``.
Forests that learned the same stream merge slot by slot (``drift._merge``, through
``merge_forests(..., same_stream=True)``).

AMF calls :func:`learn`, :func:`learn_fast` (and :func:`prepare_learning` after a
row it learned alone), :func:`predict_fast`,
:func:`combine_forecasts` and :func:`add_correction` (regressors, after
:func:`adopt_settings`; :func:`tree_losses`, :func:`combine_tree_forecasts` and
:func:`correction_terms` for its parts) and
:func:`rows_for`, the Mondrian forests :func:`learn_points` (and
:func:`prepare_point_learning`); both
:func:`foreground_weights` and :func:`move_background_origin` when their
features get a new origin (regressors also :func:`move_correction` when their
features get new units, and Mondrian forest regressors :func:`scale_correction` when
their scaled targets are rescaled);
:func:`drift_event_markers` and :func:`mark_drift_events` draw the events on a
progressive-metric plot.
"""

from ._adaptive import (
                        DEFAULTS,
                        EVENTS_DTYPE,
                        add_correction,
                        adopt_settings,
                        combine_forecasts,
                        combine_tree_forecasts,
                        correction_terms,
                        drift_settings,
                        foreground_weights,
                        learn,
                        learn_fast,
                        learn_points,
                        move_background_origin,
                        move_correction,
                        predict_fast,
                        prepare_learning,
                        prepare_point_learning,
                        prepare_prediction,
                        rows_for,
                        scale_correction,
                        tree_losses,
                        trees_hold_every_row,
)
from ._plot import drift_event_markers, mark_drift_events

__all__ = ["DEFAULTS", "EVENTS_DTYPE", "add_correction", "adopt_settings", "combine_forecasts",
           "combine_tree_forecasts", "correction_terms", "drift_settings",
           "foreground_weights", "learn", "learn_fast", "learn_points",
           "move_background_origin", "move_correction", "predict_fast",
           "prepare_learning", "prepare_point_learning", "prepare_prediction", "rows_for",
           "scale_correction",
           "tree_losses",
           "trees_hold_every_row", "drift_event_markers", "mark_drift_events"]
