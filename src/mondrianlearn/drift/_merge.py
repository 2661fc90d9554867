"""Merging drift-adaptive forests.

A drift-adaptive forest (``drift._adaptive``) keeps, per tree slot, a foreground
tree, a background tree, two detectors, a paired comparison, a challenge schedule,
feature weights and the row at which each tree started. Slots learn independently
of one another, so forests merge slot by slot: the merged forest has the slots of
the first forest, then those of the second, and so on. What belongs to the forest
as a whole is taken once: the random stream new trees draw their seeds from (the
first forest's), the targets' running moments, the sample store (``forest._merge``)
and the recent split gains from which new AMF trees get their feature weights (the
sum of the forests' sums, discounted to the latest row at which one was computed).

- Forests that learned the same rows in the same order (``same_stream``: the
  shards of :class:`mondrianlearn.dask.DaskShardedForest` in ``mode="trees"``):
  each slot is exactly as it was, and the merged forest learns on as its slots
  would have in their forests until a tree started after the merge takes over in a
  slot (its seed, and an AMF tree's feature weights, then come from the merged
  forest: it is one forest from there on). The store is the one that kept the most
  points (drift adaptation drops the points no tree needs any more).
- Forests that learned different rows (``mode="rows"``): their slots counted rows
  in different streams, so their row counters move to the merged stream
  (:func:`_rebased`), and their trees, background trees included, to the first
  forest's origin of the features (``move_background_origin``).

``tests/test_drift_merge.py`` checks both.
"""

import copy

import numpy as np

from ._adaptive import _state
from ._kernels import C_COEFFICIENTS


def check_drift_merge(forests, same_stream):
    """Raise a ``ValueError`` unless the forests, with drift adaptation, can be
    merged: with ``same_stream``, as many rows seen in the same feature units from
    the same origin (a Mondrian forest's stored points are compared too, by
    ``forest._merge``). Called before anything is moved."""
    if not same_stream:
        return
    first = forests[0]
    first_units = first.__dict__.get("_units")
    for i, forest in enumerate(forests[1:], start=1):
        units = forest.__dict__.get("_units")
        if forest.n_samples_seen_ != first.n_samples_seen_ or (
                (units is None) != (first_units is None)
                or (units is not None and not np.array_equal(units, first_units))):
            raise ValueError(f"same_stream=True but forest {i} did not learn the same rows "
                             "as forest 0 (other rows, feature units or origin).")


def drift_states(forests):
    """The drift state of each forest to merge (all ``None`` for forests without
    drift adaptation; see :func:`check_drift_merge` for those with it).

    A forest with drift adaptation that has no state yet (none made since it was
    loaded) gets one, made on a copy of it: the inputs are not modified.
    """
    if getattr(forests[0], "drift", None) is None:
        return [None] * len(forests)
    states = []
    for forest in forests:
        if forest.__dict__.get("_drift_state") is None:
            forest = copy.copy(forest)
            _state(forest)
        states.append(forest._drift_state)
    return states


def background_trees(states):
    """Copies of the background trees of each state, to be expressed in the merged
    forest's frame with its foreground trees."""
    return [[copy.deepcopy(tree) for tree in state.background] for state in states]


def merge_states(states, backgrounds, streams=None, classes=None):
    """One drift state holding the slots of ``states`` in order.

    Parameters
    ----------
    states : list of DriftState
        The forests' states (:func:`drift_states`), in merge order.
    backgrounds : list of list of TreeState
        Each state's background trees, as the merged forest holds them (copies in
        its frame, sample ids in its store).
    streams : list of tuple, default=None
        ``None`` for forests that learned the same stream. Forests that learned
        different rows: ``(n_samples_seen_, points stored, (a, b))`` of each, with
        ``a z + b`` its scaled targets in the merged forest's frame (Mondrian
        forest regressors; ``(1, 0)`` otherwise). See :func:`_rebased`.

    Returns
    -------
    state : DriftState
    """
    first = states[0]
    if streams is not None:
        states = _rebased(states, streams)
    merged = copy.copy(first)  # through __getstate__: no scratch state
    for name, value in vars(merged).items():
        if isinstance(value, np.ndarray):
            setattr(merged, name, value.copy())
    merged.settings = dict(first.settings)
    merged.n_trees = sum(s.n_trees for s in states)
    merged.background = [tree for trees in backgrounds for tree in trees]
    if classes is not None:
        # The background trees were moved to the union of the classes with the
        # foreground trees: the state must not move them again when it next syncs.
        merged.classes = np.array(classes, copy=True)

    def per_slot(name):
        return np.concatenate([getattr(s, name) for s in states])

    def foreground_then_background(name):
        return np.concatenate([getattr(s, name)[: s.n_trees] for s in states]
                              + [getattr(s, name)[s.n_trees:] for s in states])

    for name in ("active", "detectors", "pair", "next_challenge", "gain_seen"):
        setattr(merged, name, per_slot(name))
    merged.scale = foreground_then_background("scale")
    merged.born = foreground_then_background("born")
    # New trees' feature weights come from the gains the foreground trees made
    # recently, discounted by age: each forest's sum, brought to the latest row.
    latest = max(s.weights_row for s in states)
    half_life = float(first.settings["weight_half_life"])
    merged.recent_gains = sum(0.5 ** ((latest - s.weights_row) / half_life) * s.recent_gains
                              for s in states)
    merged.weights_row = latest
    merged.store_offset = min(s.store_offset for s in states)
    if streams is not None:
        merged.store_offset = states[0].store_offset  # (all alike once rebased)
        merged.moments = _pooled([s.moments for s in states])
    events, slot = [], 0
    for s in states:
        part = s.events[: s.n_events].copy()
        part[:, 1] += slot
        events.append(part)
        slot += s.n_trees
    events = np.concatenate(events)
    events = events[np.argsort(events[:, 0], kind="stable")]
    merged.n_events = events.shape[0]
    merged.events = np.zeros((max(16, events.shape[0]), 3), dtype=np.int64)
    merged.events[: events.shape[0]] = events
    merged.correction, merged.gate = merged_correction(states)
    merged.forecasts = np.full((merged.n_trees, 1), np.nan)
    return merged


def merged_correction(states):
    """``(correction, gate)`` of the merged forest: the linear corrections of
    regressors (``drift._kernels.learn_correction``) made one, whose gated forecast
    is the mean of the forests' gated forecasts weighted by their numbers of trees
    (what their sharded prediction adds, ``amf._merge``): the gate's losses are
    those means, and the coefficients those of the weighted mean of the forests'
    linear functions, divided by the merged gate's weight, in ranges that cover the
    forests' (the forests are in the same units and origin, see
    :func:`mondrianlearn.forest.merge_forests`)."""
    from ._kernels import C_HIGH, C_LOW, C_ORIGIN, correction_weight

    if not all(s.correction.shape[1] for s in states):
        return np.zeros((states[0].correction.shape[0], 0)), np.zeros(2)
    shares = np.array([s.n_trees for s in states], dtype=np.float64)
    shares /= shares.sum()
    gate = sum(share * s.gate for share, s in zip(shares, states))
    corrections = [s.correction for s in states]
    merged = np.full_like(corrections[0], np.nan)
    with np.errstate(all="ignore"):  # (features a forest has not seen: NaN)
        merged[C_LOW] = np.nanmin([c[C_LOW] for c in corrections], axis=0)
        merged[C_HIGH] = np.nanmax([c[C_HIGH] for c in corrections], axis=0)
    merged[C_ORIGIN] = merged[C_LOW]
    intercept, slopes = 0.0, np.zeros(merged.shape[1] - 1)
    for share, state, c in zip(shares, states, corrections):
        seen = ~np.isnan(c[C_ORIGIN, 1:])
        width = np.where(seen, c[C_HIGH, 1:] - c[C_LOW, 1:], 1.0)
        slope = np.where(seen, c[C_COEFFICIENTS, 1:] / np.where(width > 0, width, 1.0), 0.0)
        weight = share * correction_weight(state.gate)
        intercept += weight * (c[C_COEFFICIENTS, 0]
                               - float(np.sum(slope * np.where(seen, c[C_ORIGIN, 1:], 0.0))))
        slopes += weight * slope
    seen = ~np.isnan(merged[C_ORIGIN, 1:])
    width = np.where(seen, merged[C_HIGH, 1:] - merged[C_LOW, 1:], 1.0)
    scale = 1.0 / correction_weight(gate)
    merged[C_COEFFICIENTS, 0] = scale * (
        intercept + float(np.sum(slopes * np.where(seen, merged[C_ORIGIN, 1:], 0.0))))
    merged[C_COEFFICIENTS, 1:] = scale * slopes * np.where(width > 0, width, 1.0)
    merged[C_ORIGIN:, 0] = 0.0  # (unused)
    return merged, gate


def _rebased(states, streams):
    """Copies of the states of forests that learned different rows, with their row
    counters moved to the merged forest's stream.

    The merged forest has seen ``N``, the sum of the forests' rows. Each forest's
    stream is taken to end at the merged forest's last row: its rows move up by
    ``N - n`` (``n`` its own), so that every slot keeps the number of rows to its
    next challenger, every tree its age, and the events their order within the
    forest. A Mondrian forest's trees also find their points by the row at which
    they started (the first point a tree keeps is ``born - store_offset`` in the
    store): the merged store holds the forests' stores one after the other, so a
    tree's start is the row of its first point in that store, and the trees of
    every forest but the last count the later forests' stored points in their age.
    The targets' running moments (the unit of a regression tree's loss) move to
    the merged frame.
    """
    total = sum(n for n, _, _ in streams)
    stored = sum(m for _, m, _ in streams)
    offset = total - stored  # the merged store's first point, as a stream row
    position = 0  # of each forest's first stored point in the merged store
    out = []
    for state, (n, m, (a, b)) in zip(states, streams):
        moved = copy.copy(state)
        shift = total - n
        moved.next_challenge = np.where(state.next_challenge >= 0,
                                        state.next_challenge + shift, state.next_challenge)
        moved.events = state.events.copy()
        moved.events[: state.n_events, 0] += shift
        moved.weights_row = state.weights_row + shift
        if state.stores_points:
            moved.born = offset + position + (state.born - state.store_offset)
        else:
            moved.born = state.born + shift
        moved.store_offset = offset
        w, mean, squares = state.moments
        moved.moments = np.array([w, a * mean + b, a * a * squares])
        moved.correction = state.correction.copy()  # forecasts of errors: times a
        moved.correction[C_COEFFICIENTS] *= a
        position += m
        out.append(moved)
    return out


def _pooled(moments):
    """Running ``(weight, mean, sum of squared deviations)`` of the union of
    samples whose moments are ``moments`` (Chan et al.)."""
    weights = np.array([m[0] for m in moments])
    means = np.array([m[1] for m in moments])
    total = weights.sum()
    mean = float(weights @ means / total) if total > 0 else 0.0
    squares = float(sum(m[2] for m in moments) + weights @ (means - mean) ** 2)
    return np.array([total, mean, squares])
