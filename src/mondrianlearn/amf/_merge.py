"""Merging aggregated Mondrian forests trained separately into one forest.

An AMF predicts the average of its trees, and each tree is learned from its own
random stream, so a forest of ``T1 + T2`` trees is the union of a forest of ``T1``
trees and one of ``T2``. Merging concatenates the trees after expressing their node
statistics in one frame (:class:`ForestFrame`):

- classifiers: the union of the classes (class counts moved to its columns, node
  label keys renumbered, as ``partial_fit`` does when a new label appears);
- regressors: the first forest's target offset (node means are kept relative to
  it, so each forest's means are shifted by the difference of the offsets) and the
  running moments of the target over all the forests' rows (the prior of empty
  nodes and the unit of the losses), or those of the first forest when the forests
  learned the same rows.

The aggregation weights (``log_weight``, ``log_weight_tree``) are what each tree
learned and are kept as they are. :func:`reframe` gives one forest expressed in a
frame: it predicts what its trees contribute to the merged forest, which is how
:class:`mondrianlearn.dask.DaskShardedForest` predicts without gathering its shards.
"""

import copy
from typing import NamedTuple

import numpy as np

from .classifier import AMFClassifier


class ForestFrame(NamedTuple):
    """The common frame of the node statistics of merged AMF forests.

    Attributes
    ----------
    classes : ndarray or None
        Classes of a classifier (the union over the forests), ``None`` for a
        regressor.
    offset : float
        Regressors: the target offset the node means are relative to.
    moments : ndarray of shape (3,) or None
        Regressors: running total weight, mean (relative to ``offset``) and sum of
        squared deviations of the targets.
    """

    classes: object = None
    offset: float = 0.0
    moments: object = None


def frame_of(forest):
    """The frame a fitted AMF forest keeps its statistics in."""
    if isinstance(forest, AMFClassifier):
        return ForestFrame(classes=np.asarray(forest.classes_).copy())
    return ForestFrame(offset=float(forest._y_offset), moments=forest._y_moments.copy())


def common_frame(frames, same_stream=False):
    """The frame of the forest merging forests kept in ``frames``.

    Parameters
    ----------
    frames : sequence of ForestFrame
        One per forest, in merge order (see :func:`frame_of`).
    same_stream : bool, default=False
        Whether the forests learned the same rows (a regressor then keeps the first
        forest's running moments instead of pooling them).

    Returns
    -------
    frame : ForestFrame
    """
    first = frames[0]
    if first.classes is not None:
        return ForestFrame(classes=np.unique(np.concatenate([f.classes for f in frames])))
    if same_stream:
        return ForestFrame(offset=first.offset, moments=first.moments.copy())
    # Pooled weighted moments (Chan et al.) of the targets, relative to the first
    # forest's offset.
    weights = np.array([f.moments[0] for f in frames])
    means = np.array([f.moments[1] + (f.offset - first.offset) for f in frames])
    total = weights.sum()
    mean = float(weights @ means / total) if total > 0 else 0.0
    sq_dev = float(sum(f.moments[2] for f in frames) + weights @ (means - mean) ** 2)
    return ForestFrame(offset=first.offset, moments=np.array([total, mean, sq_dev]))


def reframe(forest, frame):
    """A copy of a fitted AMF forest with its statistics expressed in ``frame``.

    The copy holds copies of the trees; it predicts what these trees contribute to a
    forest merged in ``frame`` (with the same number of classes, or the same prior
    and unit of the target).

    Parameters
    ----------
    forest : AMFClassifier or AMFRegressor
    frame : ForestFrame

    Returns
    -------
    forest : AMFClassifier or AMFRegressor
    """
    # copy.copy goes through the estimator's __getstate__, which leaves out the
    # fast path's scratch state (tables of addresses of the original trees).
    out = copy.copy(forest)
    for name, value in vars(out).items():
        if isinstance(value, np.ndarray):
            setattr(out, name, value.copy())
    out.trees_ = [copy.deepcopy(tree) for tree in forest.trees_]
    reframe_trees(forest, frame, out.trees_)
    if frame.classes is not None:
        out.classes_ = frame.classes.copy()
    else:
        out._y_offset = frame.offset
        out._y_moments = frame.moments.copy()
    return out


def reframe_trees(forest, frame, trees):
    """Express ``trees`` (copies of trees of ``forest``) in ``frame``, in place."""
    if frame.classes is not None:
        to_new = np.searchsorted(frame.classes, forest.classes_)
        if to_new.shape[0] and not np.array_equal(frame.classes[to_new], forest.classes_):
            raise ValueError("The frame's classes do not contain the forest's classes.")
        for tree in trees:
            counts = tree.node_stats["counts"]
            wide = np.zeros((counts.shape[0], frame.classes.shape[0]))
            wide[:, to_new] = counts[:, : to_new.shape[0]]
            tree.node_stats["counts"] = wide
            label = tree.arrays.label
            known = label >= 0
            label[known] = to_new[label[known]]
        return
    shift = float(forest._y_offset) - frame.offset
    if shift != 0.0:
        for tree in trees:
            tree.node_stats["mean"] += shift


def merge_amf_forests(forests, same_stream=False):
    """Merge fitted AMF forests of one class and the same parameters into one.

    Called by :func:`mondrianlearn.forest.merge_forests`, which checks that the
    forests can be merged; see there for the parameters.

    Returns
    -------
    forest : AMFClassifier or AMFRegressor
        A new forest holding copies of all the trees, in the order given, in the
        frame of :func:`common_frame`; ``n_estimators`` is the total number of
        trees, the other parameters are the first forest's. ``n_samples_seen_`` is
        the sum over the forests (the first forest's with ``same_stream``).
    """
    from ..drift._merge import background_trees, drift_states, merge_states

    states = drift_states(forests)
    frame = common_frame([frame_of(f) for f in forests], same_stream)
    parts = [reframe(f, frame) for f in forests]
    merged = parts[0]
    merged.trees_ = [tree for part in parts for tree in part.trees_]
    merged.n_estimators = len(merged.trees_)
    if states[0] is not None:
        backgrounds = background_trees(states)
        for forest, trees in zip(forests, backgrounds):
            reframe_trees(forest, frame, trees)
        streams = None if same_stream else [(f.n_samples_seen_, 0, (1.0, 0.0))
                                            for f in forests]
        merged._drift_state = merge_states(states, backgrounds, streams, frame.classes)
    if isinstance(merged, AMFClassifier):
        merged._classes_declared = all(f._classes_declared for f in forests)
    if not same_stream:
        merged.n_samples_seen_ = int(sum(f.n_samples_seen_ for f in forests))
        ranges = [f._feature_range for f in forests]
        merged._feature_range = np.vstack([np.min([r[0] for r in ranges], axis=0),
                                           np.max([r[1] for r in ranges], axis=0)])
    merged._record_structure()  # the merged forest goes on learning with all its trees
    merged._remember_fast_state()
    return merged


class TreeForecasts(NamedTuple):
    """The parts of a drift-adaptive regressor's prediction (its trees' forecasts
    are combined by ``drift.combine_tree_forecasts``, which is not a sum over
    trees), per tree that predicts, in the units of ``y``."""

    means: np.ndarray
    """Each tree's predictive mean, shape ``(n_trees, n_rows)``."""
    variances: object
    """AMF: each tree's predictive variance (same shape), or None."""
    noise: object
    """Mondrian forest: the noise part of each tree's variance, or None."""
    rest: object
    """Mondrian forest: the rest of each tree's variance, or None."""
    losses: np.ndarray
    """Each tree's recent loss (``drift.tree_losses``)."""
    settings: dict
    """The drift settings."""
    correction: object = None
    """``(weight, forecasts, n_trees)``: the gate's weight and the forecasts (in the
    units of ``y``) of the group's linear correction (``drift.correction_terms``),
    and the group's number of tree slots; or None without one."""


def regression_parts(forest, X, return_std):
    """What one group of trees contributes to a forest's regression prediction.

    Parameters
    ----------
    forest : AMFRegressor or MondrianForestRegressor
        The group of trees, expressed in the merged forest's frame (:func:`reframe`
        for AMF). Each of its trees is predicted as a forest of one tree.
    X : array-like of shape (n_samples, n_features)
    return_std : bool

    Returns
    -------
    parts : tuple of ndarray, or TreeForecasts
        ``(mean,)``: the group's mean prediction; with ``return_std`` also, for AMF,
        the mean over its trees of each tree's predictive variance and the variance
        of the trees' means (population variance over the group); for a Mondrian
        forest, the means over its trees of the noise part of their variance and of
        the rest, and the variance of the trees' means
        (``MondrianForestRegressor._std_parts``). A drift-adaptive forest gives
        its trees' forecasts apart (:class:`TreeForecasts`).
    """
    from ..forest.regressor import MondrianForestRegressor

    state = forest.__dict__.get("_drift_state")
    if state is not None:
        from ..drift import adopt_settings, correction_terms, tree_losses

        adopt_settings(forest)
        rows = forest._check_predict_input(X)
        losses = tree_losses(state)
        terms = correction_terms(state, rows)
        if isinstance(forest, MondrianForestRegressor):
            means, noise, rest, slots = forest._tree_forecasts(rows, return_std)
            if terms is not None:  # scaled targets
                terms = (terms[0], forest._y_scale * terms[1], state.n_trees)
            return TreeForecasts(means, None, noise, rest, losses[slots],
                                 dict(state.settings), terms)
        means, variances = forest._tree_forecasts(rows, return_std)
        if terms is not None:
            terms = (*terms, state.n_trees)
        return TreeForecasts(means, variances, None, None, losses, dict(state.settings), terms)
    if not return_std:
        return (forest.predict(X),)
    if isinstance(forest, MondrianForestRegressor):
        return forest._std_parts(forest._check_predict_input(X))
    single = copy.copy(forest)  # one tree at a time: its mean and its own variance
    means, variances = [], []
    for tree in forest._trained_trees():  # the trees that predictions average over
        single.trees_ = [tree]
        single.n_estimators = 1
        mean, std = single.predict(X, return_std=True)
        means.append(mean)
        variances.append(std * std)
    means = np.array(means)
    center = means.mean(axis=0)
    return center, np.mean(variances, axis=0), np.mean((means - center) ** 2, axis=0)


def combine_regression_parts(parts, n_trees):
    """The forest's prediction from its groups' :func:`regression_parts`.

    Parameters
    ----------
    parts : sequence of tuple
        Parts of each group, all with or all without the variances (all
        :class:`TreeForecasts` for a drift-adaptive forest).
    n_trees : sequence of int
        Number of trees of each group.

    Returns
    -------
    mean : ndarray
    std : ndarray
        Only when the parts hold the variances: the standard deviation of the
        forest's predictive distribution. AMF (see ``AMFRegressor``'s Notes): the
        mean of the trees' variances plus the variance of the trees' means divided
        by the number of trees; a Mondrian forest:
        :func:`mondrianlearn.forest.regressor.forest_variance`.
    """
    if isinstance(parts[0], TreeForecasts):
        return _combine_tree_forecasts(parts)
    n_trees = np.asarray(n_trees, dtype=np.float64)
    total = n_trees.sum()
    weights = n_trees / total
    mean = sum(w * p[0] for w, p in zip(weights, parts))
    if len(parts[0]) == 1:
        return mean
    between = sum(w * (p[-1] + (p[0] - mean) ** 2) for w, p in zip(weights, parts))
    if len(parts[0]) == 4:  # Mondrian forest: noise and the trees' error apart
        from ..forest.regressor import forest_variance

        noise = sum(w * p[1] for w, p in zip(weights, parts))
        error = sum(w * p[2] for w, p in zip(weights, parts))
        return mean, np.sqrt(forest_variance(noise, error, between, int(total)))
    within = sum(w * p[1] for w, p in zip(weights, parts))
    return mean, np.sqrt(np.maximum(within + between / total, 0.0))


def _combine_tree_forecasts(parts):
    """``combine_regression_parts`` of drift-adaptive groups: the trees' forecasts
    of all groups combined as one forest's (the variance as without drift
    adaptation: ``AMFRegressor._predictive_variance``, ``forest_variance``)."""
    from ..drift import combine_tree_forecasts

    means = np.concatenate([p.means for p in parts])
    losses = np.concatenate([p.losses for p in parts])
    mean = combine_tree_forecasts(means, losses, parts[0].settings)
    if parts[0].correction is not None:
        # each group's gated correction, weighted by its share of the tree slots (the
        # merged forest's correction is made to give the same, ``drift._merge``)
        slots = sum(p.correction[2] for p in parts)
        for p in parts:
            weight, values, n_slots = p.correction
            mean = mean + (n_slots / slots) * weight * values
    between = means.var(axis=0)
    if parts[0].noise is not None:  # Mondrian forest
        from ..forest.regressor import forest_variance

        noise = np.concatenate([p.noise for p in parts]).mean(axis=0)
        rest = np.concatenate([p.rest for p in parts]).mean(axis=0)
        return mean, np.sqrt(forest_variance(noise, rest, between, means.shape[0]))
    if parts[0].variances is None:
        return mean
    within = np.concatenate([p.variances for p in parts]).mean(axis=0)
    return mean, np.sqrt(np.maximum(within + between / means.shape[0], 0.0))
