"""Compiled loops of the drift-adaptive forests (see ``drift._adaptive``).

A forest of ``T`` slots is one :class:`~mondrianlearn.engine.tree_table.TreeTable`
of ``2 T`` trees: row ``t`` is the foreground tree of slot ``t`` (the one that
predicts), row ``T + t`` its background tree (learning only while ``active[t]``).
Each tree sees the rows multiplied by its own feature weights (``scale``, one row
per tree of the table), fixed when the tree was started.

The loops go row by row and, for each row, slot by slot: the foreground tree's
loss on the row, computed before it learns the row, feeds the slot's two ADWIN
detectors; both trees learn the row through the models' own per-tree kernels (the
engine's extension and the models' statistics, unchanged). The loop stops at an
event that Python must handle (``EVENT_*``: a tree needs room, a background tree
must be started or swapped in); Python handles it and calls again from that row
and slot. The forest is therefore in the same state at every (row, slot) however
the stream is cut into calls.

Losses are in ``[0, 1]``. For a classifier, the loss is read off the change of
the root's aggregation weight (``log_weight_tree``) while the tree learns the row:
context tree weighting makes that change ``step * w`` times the log of the tree's
aggregated probability of the row's label (the mixture, over the prunings, of the
probabilities their leaves give it), so the loss ``1 - exp(change / (step * w))``,
the absolute loss of that probability, costs nothing beyond learning the row. (For
a regressor the same change is dominated by the best pruning when ``step`` is
large, so the tree forecasts the row first, see ``_learn_regressor_one``.)

A regressor's linear correction (``learn_correction``) learns each row once every
slot has learned it, from the foreground trees' forecasts that the loop keeps
(``forecasts``: the loop may stop within a row and go on in another call).

The Mondrian forests (``learn_forest_slots``) run the same loop over the points of
the forest's sample store: a tree forecasts the point (its smoothed class
probabilities, or its predictive mean) and is extended with it by the forests' own
online kernel (``forest._additive._extend_points``); its loss is one minus the
probability of the point's label, or the absolute error in units of three running
standard deviations of the target, capped at 1.
"""

import numpy as np

from ..amf._forest_kernels import _clear_done, _work
from ..amf._kernels import _learn_classifier_rows, _learn_regressor_rows, target_moments
from ..amf._path_sums import _proba_rows, _value_rows
from ..engine._jit import borrowed, inline_kernel, kernel
from ..engine.growth import plant_root
from ..engine.random import next_uint64, poisson
from ..engine.tree import META_MAX_LEAF_POINTS, META_N_NODES, META_ROOT
from ..engine.tree_table import (
    COLUMN_SAMPLE_MULT,
    COLUMN_SAMPLE_NEXT,
    COLUMN_STATS,
    SIZE_NODES,
    SIZE_SAMPLE_MULT,
    SIZE_SAMPLE_NEXT,
    accept_rows,
    finite_rows,
    float_matrix_at,
    float_vector_at,
    id_vector_at,
    rng_at,
    tree_at,
)
from ..forest._additive import _extend_points, accumulate_new_nodes
from ..forest._smoothing import _moments_rows
from ..forest._smoothing import _proba_rows as _forest_proba_rows
from ._detectors import adwin_reset, adwin_update

NO_EVENT = 0
EVENT_GROW = 1
"""A tree of the slot needs more node storage before the row."""
EVENT_WARNING = 2
"""The warning detector fired: start a background tree."""
EVENT_DRIFT = 3
"""The drift detector fired: the background tree (or a new one) replaces the
foreground tree."""
EVENT_SWAP = 4
"""The background tree has been significantly better than the foreground tree on
the rows both learned: it replaces it."""
EVENT_CHALLENGE = 5
"""A scheduled background tree (challenger) is due."""
EVENT_WORK = 6
"""A tree of the slot has outgrown the work arrays."""

# Columns of ``settings`` (floats, so that one array carries them).
S_WARNING_DELTA = 0
S_DRIFT_DELTA = 1
S_SWAP_DELTA = 2
S_SWAP_MIN = 3
S_BAGGING = 4
S_UPWARD = 5
S_TRIM = 6
S_LOSS_WEIGHTING = 7
S_LINEAR_RATE = 8
N_SETTINGS = 9

# Rows of a regressor's linear correction (``correction``, shape ``(4,
# n_features + 1)``, see ``learn_correction``): the coefficients (intercept in
# column 0), then the origin and the running low and high of each feature (columns
# 1 on; NaN before the first row), in the model's units.
C_COEFFICIENTS = 0
C_ORIGIN = 1
C_LOW = 2
C_HIGH = 3
N_CORRECTION = 4

GATE_DECAY = 0.995
"""Discount per row of the correction gate's losses (``learn_correction``): about
the last 200 rows count (``drift._adaptive.DEFAULTS`` gives the measurements)."""
GATE_RATE = 1.0
"""Learning rate of the gate's exponential weights, per unit of discounted loss."""

# Columns of ``pair`` (per slot): rows learned by both trees since the background
# tree started, the sum of the foreground's loss minus the background's on them,
# and the sum of the squares of those differences.
P_ROWS = 0
P_GAIN = 1
P_SQUARES = 2
N_PAIR = 3

# Slot flags (``active``).
BG_OFF = 0
BG_ON = 1


@kernel
def _has_room(sizes, t, n_nodes, max_nodes):
    """Whether tree ``t`` can take one more row without growing (the per-tree
    kernels refuse a row that could need two nodes past the capacity)."""
    return n_nodes + 2 > max_nodes or n_nodes + 2 <= sizes[t, SIZE_NODES]


@kernel
def _weighted_row(X, i, scale, t, row):
    """``row[0] = X[i] * scale[t]``: the row as tree ``t`` sees it."""
    for d in range(X.shape[1]):
        row[0, d] = X[i, d] * scale[t, d]


@kernel
def _row_weight(weights, i, bagging, rng):
    """Weight of row ``i`` in a slot: ``weights[i]`` times a Poisson(``bagging``)
    draw from the slot's stream when ``bagging > 0`` (online bagging; 0: skipped)."""
    w = weights[i]
    if bagging > 0.0:
        w *= poisson(rng, bagging)
    return w


@kernel
def _loss(change, step, w):
    """The loss in [0, 1] of a tree's aggregated forecast from the change of its
    root weight (see the module docstring)."""
    loss = 1.0 - np.exp(change / (step * w))
    return min(max(loss, 0.0), 1.0)


@kernel
def _root_weight(tree, log_weight_tree):
    return log_weight_tree[tree.meta[META_ROOT]] if tree.meta[META_N_NODES] > 0 else np.nan


@kernel
def _learn_classifier_one(addresses, sizes, t, X, key, i, scale, row, weight, step,
                          dirichlet, split_pure, max_nodes, count_first, n_classes, excess,
                          path, no_samples):
    """Tree ``t`` learns row ``i`` (label key ``key[0]``, weight ``weight[0]``);
    returns its loss on the row, or -1 when the tree was empty (no forecast to
    score)."""
    tree = tree_at(addresses, sizes, t, X.shape[1])
    capacity = sizes[t, SIZE_NODES]
    log_weight_tree = float_vector_at(addresses, t, COLUMN_STATS + 3, capacity)
    before = _root_weight(tree, log_weight_tree)
    _weighted_row(X, i, scale, t, row)
    _learn_classifier_rows(tree, row, key, weight, 0,
                           float_matrix_at(addresses, t, COLUMN_STATS, capacity, n_classes),
                           float_vector_at(addresses, t, COLUMN_STATS + 1, capacity),
                           float_vector_at(addresses, t, COLUMN_STATS + 2, capacity),
                           log_weight_tree, step, dirichlet, split_pure,
                           rng_at(addresses, t), False, max_nodes, count_first, excess,
                           path, no_samples)
    if np.isnan(before):
        return -1.0
    return _loss(log_weight_tree[tree.meta[META_ROOT]] - before, step, weight[0])


@kernel
def _scaled_loss(error, unit):
    """An absolute error in units of ``unit`` (three running standard deviations of
    the target), capped at 1."""
    if unit > 0.0:
        return min(error / unit, 1.0)
    return 0.0 if error == 0.0 else 1.0


@kernel
def _learn_regressor_one(addresses, sizes, t, X, i, key, target, prior, spread, scale, row,
                         weight, step, split_pure, max_nodes, count_first, excess, path,
                         no_samples, aggregate, extend, forecast, work, prefix):
    """``_learn_classifier_one`` for regression (one-element arrays: the row's key,
    target, prior and spread). The loss is the tree's absolute error on the row,
    forecast as the model forecasts (``aggregate``, ``extend``), in units of three
    running standard deviations of the target, capped at 1."""
    tree = tree_at(addresses, sizes, t, X.shape[1])
    capacity = sizes[t, SIZE_NODES]
    mean = float_vector_at(addresses, t, COLUMN_STATS + 1, capacity)
    log_weight = float_vector_at(addresses, t, COLUMN_STATS + 3, capacity)
    log_weight_tree = float_vector_at(addresses, t, COLUMN_STATS + 4, capacity)
    _weighted_row(X, i, scale, t, row)
    loss = -1.0
    if tree.meta[META_N_NODES] > 0:
        forecast[0] = 0.0
        _value_rows(tree, row, mean, prior[0], log_weight, log_weight_tree, aggregate, extend,
                    forecast[:0], 1.0, forecast, work, prefix)
        if aggregate:
            _clear_done(tree, row, path, work[6])
        unit = 3.0 * spread[0]
        error = abs(forecast[0] - target[0])
        loss = _scaled_loss(error, unit)
    _learn_regressor_rows(tree, row, key, target, weight, prior, spread, 0,
                          float_vector_at(addresses, t, COLUMN_STATS, capacity), mean,
                          float_vector_at(addresses, t, COLUMN_STATS + 2, capacity),
                          log_weight, log_weight_tree, step, split_pure,
                          rng_at(addresses, t), False, max_nodes, count_first, excess, path,
                          no_samples)
    return loss


@kernel
def _correction_input(correction, x, c):
    """The linear correction's input from the value ``x`` of the feature of column
    ``c``: ``(x - origin) / width``, the width its range so far (1 while it has one
    value)."""
    width = correction[C_HIGH, c] - correction[C_LOW, c]
    return (x - correction[C_ORIGIN, c]) / (width if width > 0.0 else 1.0)


@kernel
def correction_forecast(X, i, correction):
    """The linear correction's forecast of row ``i`` of ``X`` (see
    ``learn_correction``): its intercept plus ``sum_d w_d u_d``, ``u_d`` the input of
    feature ``d`` (``_correction_input``; a feature not seen yet counts 0)."""
    value = correction[C_COEFFICIENTS, 0]
    for d in range(X.shape[1]):
        if not np.isnan(correction[C_ORIGIN, d + 1]):
            value += correction[C_COEFFICIENTS, d + 1] * _correction_input(correction,
                                                                           X[i, d], d + 1)
    return value


@kernel
def correction_weight(gate):
    """Weight of the corrected forecast against the forest's alone: exponential
    weights on their discounted losses ``gate``."""
    return 1.0 / (1.0 + np.exp(min(GATE_RATE * (gate[1] - gate[0]), 700.0)))


@kernel
def _widen_correction(X, i, correction):
    """Widen the correction's ranges to row ``i`` of ``X``; a coefficient follows its
    feature's new width, so that the forecasts stay as they were."""
    for d in range(X.shape[1]):
        x = X[i, d]
        c = d + 1
        if np.isnan(correction[C_ORIGIN, c]):
            correction[C_ORIGIN, c] = x
            correction[C_LOW, c] = x
            correction[C_HIGH, c] = x
            continue
        if correction[C_LOW, c] <= x <= correction[C_HIGH, c]:
            continue
        before = correction[C_HIGH, c] - correction[C_LOW, c]
        correction[C_LOW, c] = min(correction[C_LOW, c], x)
        correction[C_HIGH, c] = max(correction[C_HIGH, c], x)
        after = correction[C_HIGH, c] - correction[C_LOW, c]
        correction[C_COEFFICIENTS, c] *= after / (before if before > 0.0 else 1.0)


@kernel
def learn_correction(X, i, target, weight, spread, forecasts, detectors, settings,
                     correction, gate, losses, order, combine_weights, combined):
    """A regressor's linear correction learns row ``i`` (see
    ``drift._adaptive``'s module docstring).

    ``forecasts[t, 0]`` is foreground tree ``t``'s forecast of the row, made before
    it learned the row (NaN: the tree skipped it); combined as the forest's
    forecast is (``combine_forecasts``), it gives the forest's forecast ``F``. The
    gate's discounted losses (``gate``: the forest alone, the forest plus the
    correction ``c``) take the row's losses, ``|y - F|`` and ``|y - F - c|`` in
    units of three running standard deviations of the target (``spread``), capped
    at 1; then the correction's ranges widen to the row and its coefficients take
    a normalised least-mean-squares step of size ``1 - (1 - rate) ** weight``
    towards ``y - F`` (``rate``: the ``linear_rate`` setting). ``losses`` to
    ``combined`` are work space for the combination. A row of weight 0 changes
    nothing."""
    if weight <= 0.0:
        return
    combine_forecasts(forecasts, detectors, losses, settings[S_TRIM],
                      settings[S_LOSS_WEIGHTING], order, combine_weights, combined)
    forest = combined[0]
    if np.isnan(forest):  # every tree skipped the row (online bagging)
        return
    value = correction_forecast(X, i, correction)
    unit = 3.0 * spread
    gate[0] = GATE_DECAY * gate[0] + weight * _scaled_loss(abs(target - forest), unit)
    gate[1] = GATE_DECAY * gate[1] + weight * _scaled_loss(abs(target - forest - value), unit)
    _widen_correction(X, i, correction)
    norm = 1.0  # the intercept's input
    for d in range(X.shape[1]):
        u = _correction_input(correction, X[i, d], d + 1)
        norm += u * u
    step = (1.0 - (1.0 - settings[S_LINEAR_RATE]) ** weight) * (target - forest - value) / norm
    correction[C_COEFFICIENTS, 0] += step
    for d in range(X.shape[1]):
        correction[C_COEFFICIENTS, d + 1] += step * _correction_input(correction, X[i, d],
                                                                      d + 1)


@kernel
def add_correction(X, correction, weight, out):
    """Add ``weight`` times the linear correction's forecast of each row of ``X`` to
    ``out``; nothing without a correction (``correction`` of no column)."""
    if correction.shape[1] == 0:
        return
    for i in range(X.shape[0]):
        out[i] += weight * correction_forecast(X, i, correction)


@kernel
def _challenge_due(t, i, row0, next_challenge):
    """Whether slot ``t`` starts a challenger before row ``i``: due whether or not a
    background tree learns (one that has not beaten the foreground tree by now
    gives way to a new one)."""
    return 0 <= next_challenge[t] <= row0 + i


@kernel
def _before_row(addresses, sizes, t, n_trees, i, row0, max_nodes, active, next_challenge,
                n_features, path):
    """The event that stops slot ``t`` before row ``i``, or ``NO_EVENT``."""
    tree = tree_at(addresses, sizes, t, n_features)
    if not _has_room(sizes, t, tree.meta[META_N_NODES], max_nodes):
        return EVENT_GROW
    if sizes[t, SIZE_NODES] > path.shape[0]:
        return EVENT_WORK
    if _challenge_due(t, i, row0, next_challenge):
        return EVENT_CHALLENGE
    if active[t] != BG_OFF:
        background = tree_at(addresses, sizes, n_trees + t, n_features)
        if not _has_room(sizes, n_trees + t, background.meta[META_N_NODES], max_nodes):
            return EVENT_GROW
        if sizes[n_trees + t, SIZE_NODES] > path.shape[0]:
            return EVENT_WORK
    return NO_EVENT


@kernel
def _after_row(t, loss, background_loss, active, detectors, pair, settings):
    """Update slot ``t``'s statistics with the losses of its trees on a row (-1: the
    tree was empty); returns the event the row raised, or ``NO_EVENT``."""
    if loss < 0.0:
        return NO_EVENT
    if active[t] != BG_OFF and background_loss >= 0.0:
        difference = loss - background_loss
        pair[t, P_ROWS] += 1.0
        pair[t, P_GAIN] += difference
        pair[t, P_SQUARES] += difference * difference
        m = pair[t, P_ROWS]
        if m >= settings[S_SWAP_MIN] and m >= 2.0:
            # Empirical Bernstein bound (Maurer and Pontil, 2009) for m differences
            # in [-1, 1]: with mean <= 0, their sum exceeds sqrt(2 m V L) +
            # 14 L m / (3 (m - 1)), V their sample variance and L = log(2 /
            # delta), with probability at most delta. The two trees' losses on a
            # row move together, so V is small and the test much sharper than
            # Hoeffding's, which ignores it.
            gain = pair[t, P_GAIN]
            variance = max(pair[t, P_SQUARES] - gain * gain / m, 0.0) / (m - 1.0)
            bound = np.log(2.0 / settings[S_SWAP_DELTA])
            if gain > np.sqrt(2.0 * m * variance * bound) + 14.0 * bound * m / (3.0 * (m - 1.0)):
                return EVENT_SWAP
    upward = settings[S_UPWARD] > 0.0
    drift = adwin_update(detectors[t, 1], loss, settings[S_DRIFT_DELTA], upward)
    warning = adwin_update(detectors[t, 0], loss, settings[S_WARNING_DELTA], upward)
    if drift:
        return EVENT_DRIFT
    if warning:
        adwin_reset(detectors[t, 0])
        return EVENT_WARNING
    return NO_EVENT


@kernel
def _learn_amf_one(regression, addresses, sizes, t, X, i, key, target, target_prior,
                   target_spread, scale, row, weight, step, dirichlet, split_pure, max_nodes,
                   count_first, n_classes, aggregate, extend, excess, path, no_samples,
                   forecast, work, prefix):
    """Tree ``t`` of an AMF learns row ``i``: ``_learn_regressor_one`` or
    ``_learn_classifier_one``; returns its loss on the row (-1: it was empty)."""
    if regression:
        return _learn_regressor_one(addresses, sizes, t, X, i, key, target, target_prior,
                                    target_spread, scale, row, weight, step, split_pure,
                                    max_nodes, count_first, excess, path, no_samples,
                                    aggregate, extend, forecast, work, prefix)
    return _learn_classifier_one(addresses, sizes, t, X, key, i, scale, row, weight, step,
                                 dirichlet, split_pure, max_nodes, count_first, n_classes,
                                 excess, path, no_samples)


@inline_kernel
def _loop_work(floats, ints, done, excess, weights, table):
    """``amf._forest_kernels._work`` from arrays that the caller made (``table`` an
    empty walk table), as borrowed views: the loop then allocates nothing, and is
    compiled without the reference-counting runtime (see ``engine._jit.kernel``),
    which counts references to every array passed per row and tree. Measured ad hoc
    against the loop with the runtime, minutes apart (``benchmarks/bench_drift.py``'s
    protocol, one row per call, seed 0; not a results table): 1-2% faster on FriedmanDrift and
    hyperplane, 7% on LED; learning the rows without predicting between them, 6-13%
    on FriedmanDrift."""
    return (False, borrowed(table), borrowed(floats[0]), borrowed(floats[1]),
            borrowed(floats[2]), borrowed(floats[3]), borrowed(done), borrowed(ints[0]),
            borrowed(excess), borrowed(floats[4]), borrowed(ints[1]), borrowed(weights))


@kernel
def learn_amf_slots(addresses, sizes, X, keys, y, weights, prior, spread, row0, position,
                    active, detectors, pair, next_challenge, scale, settings, regression,
                    step, dirichlet, split_pure, max_nodes, count_first, n_classes, aggregate,
                    extend, row, weight, key, target, excess, path, no_samples, floats, ints,
                    done, tree_weights, prefix, table, correction, gate, forecasts, losses,
                    order, combine_weights, combined):
    """Learn the rows of ``X`` in every slot of an AMF, from row ``position[0]`` and
    slot ``position[1]`` on.

    Rows are taken in order and, for each row, the slots in order, so that the
    state of the whole forest at any row does not depend on how the stream was cut
    into calls. ``row0`` is the stream position of ``X[0]``. Returns the event that
    stopped the loop (``NO_EVENT``: every row learned), with ``position`` set to
    where to go on once it is handled: for ``EVENT_GROW``, ``EVENT_WORK`` and
    ``EVENT_CHALLENGE``, due before slot ``position[1]`` learns row
    ``position[0]``, that row and slot; for the others, raised by that row in that
    slot, the next slot.

    Classification uses ``keys``, ``dirichlet`` and ``n_classes``; regression
    (``regression``) ``y`` (relative to the model's offset), ``prior`` and
    ``spread`` (from ``target_moments``), ``aggregate`` and ``extend`` (how the
    trees forecast the row to score it) and the forecast work arrays ``floats`` to
    ``prefix`` (``amf._forest_kernels.prediction_work``) with ``table``, an empty
    walk table (``_loop_work``); ``target`` holds four floats of work space. A
    regressor with a linear correction (``correction`` with columns, see
    ``learn_correction``) keeps each foreground tree's forecast of the current row
    in ``forecasts`` (which persists between calls: a call may stop within a row)
    and, once every slot has learned the row, the correction learns it (``gate``
    to ``combined`` as there). The other family's arguments are not read.
    """
    n_trees = addresses.shape[0] // 2
    work = _loop_work(floats, ints, done, excess, tree_weights, table)
    n_features = X.shape[1]
    correcting = regression and correction.shape[1] > 0
    first_slot = position[1]
    for i in range(position[0], X.shape[0]):
        for t in range(first_slot, n_trees):
            position[0] = i
            position[1] = t
            event = _before_row(addresses, sizes, t, n_trees, i, row0, max_nodes, active,
                                next_challenge, n_features, path)
            if event != NO_EVENT:
                return event
            weight[0] = _row_weight(weights, i, settings[S_BAGGING], rng_at(addresses, t))
            if weight[0] <= 0.0:
                if correcting:
                    forecasts[t, 0] = np.nan
                continue
            key[0] = keys[i]
            if regression:
                target[0] = y[i]
                target[1] = prior[i]
                target[2] = spread[i]
            loss = _learn_amf_one(regression, addresses, sizes, t, X, i, key, target[0:1],
                                  target[1:2], target[2:3], scale, row, weight, step,
                                  dirichlet, split_pure, max_nodes, count_first, n_classes,
                                  aggregate, extend, excess, path, no_samples, target[3:4],
                                  work, prefix)
            if correcting:  # an empty tree forecasts the prior, as in prediction
                forecasts[t, 0] = target[3] if loss >= 0.0 else target[1]
            background_loss = -1.0
            if active[t] != BG_OFF:
                background_loss = _learn_amf_one(
                    regression, addresses, sizes, n_trees + t, X, i, key, target[0:1],
                    target[1:2], target[2:3], scale, row, weight, step, dirichlet,
                    split_pure, max_nodes, count_first, n_classes, aggregate, extend, excess,
                    path, no_samples, target[3:4], work, prefix)
            event = _after_row(t, loss, background_loss, active, detectors, pair, settings)
            if event != NO_EVENT:
                return event
        if correcting:
            learn_correction(X, i, y[i], weights[i], spread[i], forecasts, detectors, settings,
                             correction, gate, losses, order, combine_weights, combined)
        first_slot = 0
    position[0] = X.shape[0]
    position[1] = 0
    return NO_EVENT


# ------------------------------------------------------------- Mondrian forests
@kernel
def _forest_tree_ready(addresses, sizes, t, n_features, n_stored, max_nodes, nodes):
    """``EVENT_GROW`` when tree ``t`` of a Mondrian forest needs more storage before
    its next point (sample links or multiplicities for the stored points, or node
    room for one point and the re-sampling of its largest paused leaf, as
    ``forest._additive.room_for_one_point``, unless its budget is reached),
    ``EVENT_WORK`` when it outgrew the work arrays, else ``NO_EVENT``."""
    links, mult = sizes[t, SIZE_SAMPLE_NEXT], sizes[t, SIZE_SAMPLE_MULT]
    if (links > 0 and links < n_stored) or (mult > 0 and mult < n_stored):
        return EVENT_GROW
    capacity = sizes[t, SIZE_NODES]
    tree = tree_at(addresses, sizes, t, n_features)
    needed = tree.meta[META_N_NODES] + 2 * tree.meta[META_MAX_LEAF_POINTS] + 6
    if capacity < max_nodes and needed > capacity:
        return EVENT_GROW
    if capacity + 1 > nodes.shape[0]:
        return EVENT_WORK
    return NO_EVENT


@kernel
def _learn_forest_one(addresses, sizes, t, store_X, store_keys, store_stats, ids, i, n_stats,
                      regression, spread, bootstrap, lifetime, pause_pure,
                      min_samples_split, max_nodes, one_hot, gamma, max_depth, excess, path,
                      pending, nodes, reals, classes, forecast):
    """Tree ``t`` of a Mondrian forest forecasts the stored point ``ids[i]``, then
    is extended with it; returns its loss on the point, or -1 when the tree was
    empty (the point then plants its root). Its storage was checked by
    ``_forest_tree_ready``, so the extension never stops half-way."""
    n_features = store_X.shape[1]
    tree = tree_at(addresses, sizes, t, n_features)
    capacity = sizes[t, SIZE_NODES]
    stats = float_matrix_at(addresses, t, COLUMN_STATS, capacity, n_stats)
    sample_next = id_vector_at(addresses, t, COLUMN_SAMPLE_NEXT, sizes[t, SIZE_SAMPLE_NEXT])
    sample_mult = float_vector_at(addresses, t, COLUMN_SAMPLE_MULT, sizes[t, SIZE_SAMPLE_MULT])
    rng = rng_at(addresses, t)
    s = ids[i]
    point = ids[i:i + 1]
    if tree.meta[META_N_NODES] == 0:
        # The first point of the tree is its root (``_sample_tree_batch`` on one
        # point, with its multiplicity drawn first under ``bootstrap``).
        if bootstrap:
            k = poisson(rng, 1.0)
            sample_mult[s] = k
            if k == 0:
                return -1.0
        tree.meta[META_MAX_LEAF_POINTS] = 0
        plant_root(tree, store_X[s], store_keys[s], lifetime, True, s, sample_next)
        accumulate_new_nodes(tree, stats, store_stats, sample_next, sample_mult, 0)
        return -1.0
    x = store_X[s:s + 1]
    if regression:
        _moments_rows(tree, store_X, stats, reals[0, :0], x, max_depth, forecast[0], forecast[0],
                      forecast[0], (nodes, reals[0], reals[1], reals[2], excess))
        unit = 3.0 * spread[i]
        error = abs(forecast[0, 0] - store_stats[s, 1] / store_stats[s, 0])
        loss = _scaled_loss(error, unit)
    else:
        for k in range(forecast.shape[1]):
            forecast[0, k] = 0.0
        _forest_proba_rows(tree, store_X, stats, x, gamma, max_depth, 1.0, forecast, nodes,
                           reals, classes, excess)
        loss = min(max(1.0 - forecast[0, store_keys[s]], 0.0), 1.0)
    # Under ``bootstrap`` a tree that draws the point zero times does not learn it;
    # its loss on the point is then an out-of-bag one, scored all the same.
    _extend_points(tree, store_X, store_keys, store_stats, stats, sample_next, sample_mult,
                   point, 0, bootstrap, lifetime, True, pause_pure, min_samples_split, rng,
                   pending, max_nodes, one_hot, excess, path)
    return loss


@kernel
def learn_forest_slots(addresses, sizes, store_X, store_keys, store_stats, ids, spread, row0,
                       position, active, detectors, pair, next_challenge, settings, n_stats,
                       regression, bootstrap, lifetime, pause_pure, min_samples_split,
                       max_nodes, one_hot, gamma, max_depth, excess, path, pending, nodes,
                       reals, classes, forecast, correction, gate, forecasts, losses, order,
                       combine_weights, combined):
    """``learn_amf_slots`` for the Mondrian forests: the rows are the stored
    points ``ids`` (``spread``: the running standard deviation of the scaled target
    up to each of them, for the regression losses). The slots' bookkeeping
    (detectors, challengers, the swap test) and a regressor's linear correction
    (its scaled targets) are those of the AMF loops; a tree that has seen no point
    is absent from the combination, as in prediction."""
    n_trees = addresses.shape[0] // 2
    n_features = store_X.shape[1]
    n_stored = ids[ids.shape[0] - 1] + 1
    correcting = regression and correction.shape[1] > 0
    first_slot = position[1]
    for i in range(position[0], ids.shape[0]):
        for t in range(first_slot, n_trees):
            position[0] = i
            position[1] = t
            event = _forest_tree_ready(addresses, sizes, t, n_features, n_stored, max_nodes,
                                       nodes)
            if event != NO_EVENT:
                return event
            if _challenge_due(t, i, row0, next_challenge):
                return EVENT_CHALLENGE
            if active[t] != BG_OFF:
                event = _forest_tree_ready(addresses, sizes, n_trees + t, n_features,
                                           n_stored, max_nodes, nodes)
                if event != NO_EVENT:
                    return event
            loss = _learn_forest_one(
                addresses, sizes, t, store_X, store_keys, store_stats, ids, i, n_stats,
                regression, spread, bootstrap, lifetime, pause_pure, min_samples_split,
                max_nodes, one_hot, gamma, max_depth, excess, path, pending, nodes, reals,
                classes, forecast)
            if correcting:
                forecasts[t, 0] = forecast[0, 0] if loss >= 0.0 else np.nan
            background_loss = -1.0
            if active[t] != BG_OFF:
                background_loss = _learn_forest_one(
                    addresses, sizes, n_trees + t, store_X, store_keys, store_stats, ids, i,
                    n_stats, regression, spread, bootstrap, lifetime, pause_pure,
                    min_samples_split, max_nodes, one_hot, gamma, max_depth, excess, path,
                    pending, nodes, reals, classes, forecast)
            event = _after_row(t, loss, background_loss, active, detectors, pair, settings)
            if event != NO_EVENT:
                return event
        if correcting:
            s = ids[i]
            learn_correction(store_X, s, store_stats[s, 1] / store_stats[s, 0],
                             store_stats[s, 0], spread[i], forecasts, detectors, settings,
                             correction, gate, losses, order, combine_weights, combined)
        first_slot = 0
    position[0] = ids.shape[0]
    position[1] = 0
    return NO_EVENT


@kernel
def shift_sample_ids(leaf_head, n_nodes, sample_next, sample_mult, offset):
    """Renumber a tree's references to stored points after the store dropped its
    first ``offset`` points (none of which the tree references): every id in the
    leaves' lists goes down by ``offset``, and the per-point arrays move with them."""
    for v in range(n_nodes):
        if leaf_head[v] >= 0:
            leaf_head[v] -= offset
    n = sample_next.shape[0]
    for s in range(offset, n):
        nxt = sample_next[s]
        sample_next[s - offset] = nxt - offset if nxt >= 0 else nxt
    for s in range(max(n - offset, 0), n):
        sample_next[s] = -1
    m = sample_mult.shape[0]
    for s in range(offset, m):
        sample_mult[s - offset] = sample_mult[s]
    for s in range(max(m - offset, 0), m):
        sample_mult[s] = 0.0


@kernel
def check_rows(X, feature_range):
    """``accept_rows`` for the drift loops (finite rows whose range, widened into
    ``feature_range``, has a finite width)."""
    return accept_rows(X, feature_range)


@kernel
def check_targets(y):
    return finite_rows(y.reshape((y.shape[0], 1)))


@kernel
def running_target_moments(z, weights, moments, prior, spread):
    """``amf._kernels.target_moments`` (re-exported for the drift driver)."""
    target_moments(z, weights, moments, prior, spread)


# ------------------------------------------------------------------ prediction
@kernel
def predict_proba_slots(addresses, sizes, X, n_classes, dirichlet, aggregate, extend,
                        tree_weights, scale, row, out, floats, ints, done, excess, weights,
                        prefix, class_row, prefix_1d):
    """Add ``tree_weights[t]`` times the probabilities of each foreground tree to
    ``out`` (each tree reads the rows multiplied by its feature weights). The work
    arrays are those of ``amf._forest_kernels.prediction_work``. Returns 1, or 0 if
    ``X`` is not finite, or -1 if a tree does not fit the work arrays (nothing
    added in both cases)."""
    if not finite_rows(X):
        return 0
    n_trees = addresses.shape[0] // 2
    for t in range(n_trees):
        if sizes[t, SIZE_NODES] > done.shape[0]:
            return -1
    if class_row.shape[0] < n_classes:
        return -1
    work = _work(floats, ints, done, excess, weights)
    n_features = X.shape[1]
    for t in range(n_trees):
        tree = tree_at(addresses, sizes, t, n_features)
        capacity = sizes[t, SIZE_NODES]
        if tree.meta[META_N_NODES] == 0:
            for i in range(out.shape[0]):  # scalar loops compile faster
                for k in range(out.shape[1]):
                    out[i, k] += tree_weights[t] / n_classes
            continue
        counts = float_matrix_at(addresses, t, COLUMN_STATS, capacity, n_classes)
        total = float_vector_at(addresses, t, COLUMN_STATS + 1, capacity)
        log_weight = float_vector_at(addresses, t, COLUMN_STATS + 2, capacity)
        log_weight_tree = float_vector_at(addresses, t, COLUMN_STATS + 3, capacity)
        for i in range(X.shape[0]):
            _weighted_row(X, i, scale, t, row)
            _proba_rows(tree, row, counts, total, log_weight, log_weight_tree, dirichlet,
                        aggregate, extend, tree_weights[t], out[i:i + 1], work, prefix,
                        class_row)
            if aggregate:
                _clear_done(tree, row, ints[0], done)
    return 1


@kernel(allocates=True)
def predict_value_slots(addresses, sizes, X, prior, aggregate, extend, scale, row, values,
                        floats, ints, done, excess, weights, prefix_2d, class_row, prefix):
    """Each foreground tree's mean forecast of the rows, ``values[t, i]`` (relative
    to the model's offset; an empty tree forecasts ``prior``; ``values`` zeroed by
    the caller), for :func:`combine_forecasts`. Returns as ``predict_proba_slots``."""
    if not finite_rows(X):
        return 0
    n_trees = addresses.shape[0] // 2
    for t in range(n_trees):
        if sizes[t, SIZE_NODES] > done.shape[0]:
            return -1
    work = _work(floats, ints, done, excess, weights)
    n_features = X.shape[1]
    no_depths = np.empty(0)
    for t in range(n_trees):
        tree = tree_at(addresses, sizes, t, n_features)
        capacity = sizes[t, SIZE_NODES]
        if tree.meta[META_N_NODES] == 0:
            for i in range(X.shape[0]):  # scalar loops compile faster
                values[t, i] = prior
            continue
        mean = float_vector_at(addresses, t, COLUMN_STATS + 1, capacity)
        log_weight = float_vector_at(addresses, t, COLUMN_STATS + 3, capacity)
        log_weight_tree = float_vector_at(addresses, t, COLUMN_STATS + 4, capacity)
        for i in range(X.shape[0]):
            _weighted_row(X, i, scale, t, row)
            _value_rows(tree, row, mean, prior, log_weight, log_weight_tree, aggregate,
                        extend, no_depths, 1.0, values[t, i:i + 1], work, prefix)
            if aggregate:
                _clear_done(tree, row, ints[0], done)
    return 1


@kernel
def combine_forecasts(values, detectors, losses, trim, eta, order, weights, out):
    """The forest's forecast of each row from its trees' (``values[t, i]``; a tree
    whose ``values[t, 0]`` is NaN is absent, as a Mondrian forest's tree that has
    seen no point): the mean, weighted by ``exp(-eta (L_t - min L))``, of the trees'
    forecasts left after the ``floor(trim * n)`` smallest and as many largest are
    dropped (``n`` present trees; at least one is kept; ties broken by the tree's
    index). ``L_t`` is tree ``t``'s recent loss: the mean of its warning detector's
    window when ``detectors`` (``DriftState.detectors``) has rows (written to
    ``losses``), else ``losses[t]``; NaN (an empty window) counts as the mean loss of
    the other present trees. ``order`` (``2 n_trees`` integers) and ``weights``
    (``n_trees``) are work space. Without trimming the trees are added in their
    order, so that equal weights give the plain mean bit for bit."""
    n_trees = values.shape[0]
    n_rows = values.shape[1]
    present = 0
    known = 0
    loss_sum = 0.0
    for t in range(n_trees):
        if n_rows > 0 and np.isnan(values[t, 0]):
            continue
        order[present] = t
        present += 1
        if detectors.shape[0] > 0:
            width = detectors[t, 0, 0]
            losses[t] = detectors[t, 0, 1] / width if width > 0.0 else np.nan
        if not np.isnan(losses[t]):
            known += 1
            loss_sum += losses[t]
    if present == 0:
        for i in range(n_rows):
            out[i] = np.nan
        return
    fill = loss_sum / known if known > 0 else 0.0
    lowest = np.inf
    for k in range(present):
        t = order[k]
        weights[t] = fill if np.isnan(losses[t]) else losses[t]
        lowest = min(lowest, weights[t])
    for k in range(present):
        t = order[k]
        weights[t] = np.exp(-eta * (weights[t] - lowest)) if eta > 0.0 and known > 0 else 1.0
    n_trim = min(int(np.floor(trim * present)), (present - 1) // 2)
    rank = order[n_trees:]
    for i in range(n_rows):
        for k in range(present):
            rank[k] = order[k]
        if n_trim > 0:
            for k in range(1, present):  # insertion sort: a forest has few trees
                t = rank[k]
                j = k
                while j > 0 and values[rank[j - 1], i] > values[t, i]:
                    rank[j] = rank[j - 1]
                    j -= 1
                rank[j] = t
        total = 0.0
        weight = 0.0
        plain = 0.0
        for k in range(n_trim, present - n_trim):
            t = rank[k]
            total += weights[t] * values[t, i]
            weight += weights[t]
            plain += values[t, i]
        # All kept weights can underflow to 0 only for extreme settings: plain mean
        out[i] = total / weight if weight > 0.0 else plain / (present - 2 * n_trim)


@kernel(allocates=True)
def child_stream(rng):
    """A new generator state (for a new tree) drawn from the stream ``rng``."""
    state = np.empty(4, dtype=np.uint64)
    for k in range(4):
        state[k] = next_uint64(rng)
    if state[0] == 0 and state[1] == 0 and state[2] == 0 and state[3] == 0:
        state[0] = 1  # the all-zero state is a fixed point of xoshiro
    return state


# ------------------------------------------------------------- feature weights
@kernel
def split_gains(left, right, feature, log_weight, n_nodes, gains, counts):
    """Add, per feature, the aggregation gains of a tree's splits on it.

    The gain of a split is how much better the two children's forecasters did than
    their parent's on the rows they saw, in the aggregation's own currency
    (``log_weight``: minus the step times the cumulative loss; negative when the
    split made the forecasts worse, as splits on noise do). ``gains[d]`` sums them
    over the splits on feature ``d``, ``counts[d]`` counts those splits.
    """
    for v in range(n_nodes):
        child = left[v]
        if child < 0:
            continue
        d = feature[v]
        gains[d] += log_weight[child] + log_weight[right[v]] - log_weight[v]
        counts[d] += 1.0
