"""Compiled change detectors over fixed-size state arrays.

ADWIN (Bifet and Gavalda, "Learning from time-changing data with adaptive
windowing", SDM 2007) keeps a window of the most recent values of a stream and
drops its oldest part whenever two sub-windows have means that differ by more
than a Hoeffding-type bound; a drop is a detected change. The window is stored
as an exponential histogram: row ``r`` holds up to ``MAX_BUCKETS`` buckets, each
summarising ``2**r`` consecutive values by their sum and the sum of squared
deviations from their mean; row 0 holds the newest values. Memory is
``O(MAX_BUCKETS * log(width))``, here a fixed ``ADWIN_SIZE`` floats per
detector, so that a forest keeps its detectors in one array, one row each, and
updates them inside its compiled loops.

Layout of a state row (``float64``): ``[width, total, variance, n_rows, tick,
n_detections]``, then the bucket count of each row, then the bucket sums and the
bucket variances, ``MAX_BUCKETS + 1`` slots per row (index 0: the oldest bucket
of the row).
"""

import numpy as np

from ..engine._jit import kernel

MAX_BUCKETS = 5
"""Buckets per row of the histogram before the two oldest are merged."""

MAX_ROWS = 32
"""Rows of the histogram: a window holds up to ``MAX_BUCKETS * (2**32 - 1)``
values before its oldest bucket is dropped to make room."""

CLOCK = 32
"""Cut points are tested every ``CLOCK`` values (as in the reference code)."""

MIN_SUB_WINDOW = 5
"""Fewest values on either side of a tested cut."""

_WIDTH, _TOTAL, _VARIANCE, _N_ROWS, _TICK, _N_DETECTIONS = 0, 1, 2, 3, 4, 5
_HEAD = 6
_COUNTS = _HEAD
_SLOTS = MAX_BUCKETS + 1
_SUMS = _COUNTS + MAX_ROWS
_VARS = _SUMS + MAX_ROWS * _SLOTS

ADWIN_SIZE = _VARS + MAX_ROWS * _SLOTS
"""Floats in the state of one ADWIN detector."""


def adwin_states(n):
    """``n`` empty ADWIN states, shape ``(n, ADWIN_SIZE)``."""
    return np.zeros((int(n), ADWIN_SIZE))


@kernel
def adwin_reset(state):
    """Empty the window (the detector starts again)."""
    state[:] = 0.0


@kernel
def adwin_width(state):
    """Number of values in the window."""
    return state[_WIDTH]


@kernel
def adwin_mean(state):
    """Mean of the values in the window (0 when empty)."""
    width = state[_WIDTH]
    return state[_TOTAL] / width if width > 0.0 else 0.0


@kernel
def _push(state, row, total, variance):
    """Append a bucket (the newest) to ``row``."""
    k = int(state[_COUNTS + row])
    state[_SUMS + row * _SLOTS + k] = total
    state[_VARS + row * _SLOTS + k] = variance
    state[_COUNTS + row] = k + 1
    if row + 1 > state[_N_ROWS]:
        state[_N_ROWS] = row + 1


@kernel
def _shift(state, row, n):
    """Remove the ``n`` oldest buckets of ``row``."""
    k = int(state[_COUNTS + row])
    base_sums = _SUMS + row * _SLOTS
    base_vars = _VARS + row * _SLOTS
    for j in range(n, k):
        state[base_sums + j - n] = state[base_sums + j]
        state[base_vars + j - n] = state[base_vars + j]
    state[_COUNTS + row] = k - n


@kernel
def _drop_oldest(state):
    """Drop the oldest bucket of the window; returns its number of values."""
    row = int(state[_N_ROWS]) - 1
    n = float(2 ** row)
    u = state[_SUMS + row * _SLOTS]
    v = state[_VARS + row * _SLOTS]
    width = state[_WIDTH] - n
    total = state[_TOTAL] - u
    state[_WIDTH] = width
    state[_TOTAL] = total
    if width > 0.0:
        mean = total / width
        state[_VARIANCE] -= v + n * width * (u / n - mean) ** 2 / (n + width)
        if state[_VARIANCE] < 0.0:  # rounding
            state[_VARIANCE] = 0.0
    else:
        state[_VARIANCE] = 0.0
    _shift(state, row, 1)
    while state[_N_ROWS] > 0 and state[_COUNTS + int(state[_N_ROWS]) - 1] == 0:
        state[_N_ROWS] -= 1
    return n


@kernel
def _insert(state, value):
    """Add ``value`` as a bucket of row 0, then merge full rows upwards."""
    width = state[_WIDTH] + 1.0
    if width > 1.0:
        previous = state[_TOTAL] / (width - 1.0)
        state[_VARIANCE] += (width - 1.0) * (value - previous) ** 2 / width
    state[_WIDTH] = width
    state[_TOTAL] += value
    _push(state, 0, value, 0.0)
    row = 0
    while state[_COUNTS + row] > MAX_BUCKETS:
        if row + 1 >= MAX_ROWS:
            # The histogram is full (an astronomically long window): drop the
            # oldest bucket instead of merging.
            _drop_oldest(state)
            break
        n = float(2 ** row)
        base = row * _SLOTS
        u1, u2 = state[_SUMS + base], state[_SUMS + base + 1]
        merged_var = (state[_VARS + base] + state[_VARS + base + 1]
                      + n * n * (u1 / n - u2 / n) ** 2 / (2.0 * n))
        _push(state, row + 1, u1 + u2, merged_var)
        _shift(state, row, 2)
        row += 1


@kernel
def _cut_exists(state, delta, upward_only):
    """Whether some split of the window into an older and a newer part has means
    further apart than the ADWIN bound (with ``upward_only``, only splits whose
    newer part has the larger mean count)."""
    width = state[_WIDTH]
    total = state[_TOTAL]
    variance_per_value = state[_VARIANCE] / width
    delta_prime = np.log(2.0 * np.log(width) / delta)
    n0 = 0.0
    u0 = 0.0
    for row in range(int(state[_N_ROWS]) - 1, -1, -1):
        n2 = float(2 ** row)
        for k in range(int(state[_COUNTS + row])):
            n0 += n2
            u0 += state[_SUMS + row * _SLOTS + k]
            n1 = width - n0
            if n1 < MIN_SUB_WINDOW:
                return False
            if n0 < MIN_SUB_WINDOW:
                continue
            diff = (total - u0) / n1 - u0 / n0  # newer mean minus older mean
            if upward_only and diff <= 0.0:
                continue
            m_inv = 1.0 / (n0 - MIN_SUB_WINDOW + 1) + 1.0 / (n1 - MIN_SUB_WINDOW + 1)
            epsilon = (np.sqrt(2.0 * m_inv * variance_per_value * delta_prime)
                       + 2.0 / 3.0 * delta_prime * m_inv)
            if abs(diff) > epsilon:
                return True
    return False


@kernel
def adwin_update(state, value, delta, upward_only):
    """Add ``value`` to the window; return whether a change was detected.

    Every ``CLOCK`` values, while some split of the window shows a change, the
    oldest bucket is dropped (the window shrinks to the values after the
    change). ``delta`` is the confidence parameter (smaller: fewer false
    alarms, later detections). With ``upward_only``, only an increase of the
    mean counts as a change (for a loss: the model got worse); the window is
    then never cut for a decrease either.
    """
    _insert(state, value)
    state[_TICK] += 1.0
    if state[_TICK] % CLOCK != 0.0 or state[_WIDTH] <= 2 * MIN_SUB_WINDOW:
        return False
    detected = False
    while state[_WIDTH] > 2 * MIN_SUB_WINDOW and _cut_exists(state, delta, upward_only):
        _drop_oldest(state)
        detected = True
    if detected:
        state[_N_DETECTIONS] += 1.0
    return detected
