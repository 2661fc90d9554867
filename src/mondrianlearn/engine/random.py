"""Per-tree random number streams for the compiled kernels.

Each tree owns a ``uint64[4]`` state for the xoshiro256** generator. Streams are
drawn up front from one seed (``numpy.random.SeedSequence``), so the same
``random_state`` and the same sequence of calls give identical trees whatever the
number of threads, and a tree's stream survives pickling with the model.
"""

import numpy as np

from ._jit import kernel

_TWO_POW_M53 = 1.0 / 9007199254740992.0


def spawn_states(seed, n_streams):
    """Independent generator states, one per stream.

    Parameters
    ----------
    seed : int
        Root seed (e.g. drawn from ``sklearn.utils.check_random_state``).
    n_streams : int
        Number of streams (usually one per tree).

    Returns
    -------
    states : ndarray of shape (n_streams, 4), dtype uint64
    """
    children = np.random.SeedSequence(int(seed)).spawn(int(n_streams))
    states = np.empty((int(n_streams), 4), dtype=np.uint64)
    for i, child in enumerate(children):
        states[i] = child.generate_state(4, dtype=np.uint64)
        if not states[i].any():  # the all-zero state is a fixed point of xoshiro
            states[i, 0] = 1
    return states


@kernel
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@kernel
def next_uint64(state):
    """Advance a xoshiro256** state in place and return 64 random bits."""
    s0 = state[0]
    s1 = state[1]
    s2 = state[2]
    s3 = state[3]
    result = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
    return result


@kernel
def uniform(state):
    """A float uniform on [0, 1) with 53 random bits."""
    return np.float64(next_uint64(state) >> np.uint64(11)) * _TWO_POW_M53


@kernel
def uniform_between(state, lo, hi):
    """A float uniform on ``[lo, hi)``; ``lo`` when rounding would give ``hi`` (so
    that a cut at the result leaves a point at ``hi`` on its right)."""
    value = lo + uniform(state) * (hi - lo)
    return value if value < hi else lo


@kernel
def exponential(state, rate):
    """A draw from Exponential(rate); ``inf`` when ``rate`` is zero."""
    if rate <= 0.0:
        return np.inf
    return -np.log1p(-uniform(state)) / rate


@kernel
def choose_proportional(state, weights, total):
    """An index drawn with probability ``weights[i] / total`` (weights >= 0)."""
    target = uniform(state) * total
    acc = 0.0
    last = -1
    for i in range(weights.shape[0]):
        w = weights[i]
        if w > 0.0:
            acc += w
            last = i
            if target < acc:
                return i
    return last  # rounding put target at the very end


@kernel
def poisson(state, lam):
    """A draw from Poisson(lam).

    Inversion by sequential search for ``lam < 30``; for larger means, the
    transformed rejection method with squeeze (Hormann, 1993, "PTRS").
    """
    if lam <= 0.0:
        return 0
    if lam < 30.0:
        limit = np.exp(-lam)
        k = 0
        prod = uniform(state)
        while prod > limit:
            k += 1
            prod *= uniform(state)
        return k
    slam = np.sqrt(lam)
    loglam = np.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    while True:
        u = uniform(state) - 0.5
        v = uniform(state)
        us = 0.5 - abs(u)
        k = np.floor((2.0 * a / us + b) * u + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return np.int64(k)
        if k < 0.0 or (us < 0.013 and v > us):
            continue
        lhs = np.log(v) + np.log(invalpha) - np.log(a / (us * us) + b)
        rhs = -lam + k * loglam - _log_factorial(k)
        if lhs <= rhs:
            return np.int64(k)


@kernel
def _log_factorial(k):
    return np.log(np.float64(1.0)) if k < 2 else _lgamma(k + 1.0)


@kernel
def _lgamma(x):
    # Stirling series; accurate to ~1e-12 for x >= 10, recursion below that.
    shift = 0.0
    while x < 10.0:
        shift -= np.log(x)
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    series = inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)))
    return shift + (x - 0.5) * np.log(x) - x + 0.5 * np.log(2.0 * np.pi) + series
