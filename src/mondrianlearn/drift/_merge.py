"""Merging drift-adaptive forests that learned the same stream.

A drift-adaptive forest (``drift._adaptive``) keeps, per tree slot, a foreground
tree, a background tree, two detectors, a paired comparison, a challenge schedule,
feature weights and the row at which each tree started. Slots learn independently
of one another, so forests that learned the same rows in the same order (the
shards of :class:`mondrianlearn.dask.DaskShardedForest` in ``mode="trees"``) merge
slot by slot: the merged forest has the slots of the first forest, then those of
the second, and so on, each exactly as it was. What belongs to the forest as a
whole is taken once: the random stream new trees draw their seeds from and the
targets' running moments (the first forest's), the sample store (the one that kept
the most rows, see ``forest._merge``), and the recent split gains from which new AMF
trees get their feature weights (the sum of the forests' sums, discounted to the
latest row at which one was computed). So the merged forest learns on as its slots
would have in their forests until a tree started after the merge takes over in a
slot (its seed, and an AMF tree's feature weights, then come from the merged
forest: it is one forest from there on); ``tests/test_drift_merge.py`` checks both.

Forests that learned different rows are not merged: their slots count their rows
in different streams (when each tree started, when the next challenger is due,
which stored points a tree still needs), and their background trees read the
features from different origins.
"""

import copy

import numpy as np

from ._adaptive import _state

NOT_SAME_STREAM = (
    "Forests with drift adaptation (drift != None) merge only when they learned the same "
    "rows in the same order (merge_forests(..., same_stream=True), as the shards of a "
    "DaskShardedForest in mode='trees'): their detectors and challengers count the rows "
    "of one stream.")


def check_drift_merge(forests, same_stream):
    """Raise a ``ValueError`` unless the forests, with drift adaptation, can be
    merged: ``same_stream``, and as many rows seen in the same feature units from
    the same origin (rows of one stream; a Mondrian forest's stored points are
    compared too, by ``forest._merge``). Called before anything is moved."""
    if not same_stream:
        raise ValueError(NOT_SAME_STREAM)
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


def merge_states(states, backgrounds):
    """One drift state holding the slots of ``states`` in order.

    Parameters
    ----------
    states : list of DriftState
        The forests' states (:func:`drift_states`), in merge order.
    backgrounds : list of list of TreeState
        Each state's background trees, as the merged forest holds them (copies in
        its frame, sample ids in its store).

    Returns
    -------
    state : DriftState
    """
    first = states[0]
    merged = copy.copy(first)  # through __getstate__: no scratch state
    for name, value in vars(merged).items():
        if isinstance(value, np.ndarray):
            setattr(merged, name, value.copy())
    merged.settings = dict(first.settings)
    merged.n_trees = sum(s.n_trees for s in states)
    merged.background = [tree for trees in backgrounds for tree in trees]

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
    return merged
