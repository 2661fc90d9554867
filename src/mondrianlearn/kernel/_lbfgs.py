"""Batch training of the kernel classifier: L-BFGS on its whole objective.

The classifier's weights minimise the mean (weighted) loss of the rows plus
``alpha / 2`` times the squared norm of the weights. Online, SGD takes one step
per row; in batch (``fit``) the objective is known in full, and a quasi-Newton
method reaches its minimum where a fixed number of SGD epochs at a constant rate
stops short of it (on satimage, ten epochs: 0.897 test accuracy; the minimum: 0.904,
``benchmarks/bench_kernel_defaults.py``). Which of the two generalises better varies
with the data: ``solver="auto"`` of the classifier asks the sweep's validation rows.

:func:`objective` is the compiled loss and gradient over the rows' feature columns;
:func:`minimize` is a plain L-BFGS (two-loop recursion, backtracking line search) on
a flat vector (SciPy's ``L-BFGS-B`` spent longer on its own bookkeeping per
iteration than on the objective at these hundreds of thousands of weights).
"""

import numpy as np

from ..engine._jit import kernel
from ._sweep import _loss_gradient

HISTORY = 5
"""Pairs of steps and gradient changes that L-BFGS keeps (each pair reads all the
weights twice per iteration: with ten, this took as long as the objective)."""

GRADIENT_TOLERANCE = 1e-6
"""L-BFGS stops once no gradient entry is larger (or after ``max_iter``)."""


@kernel(allocates=True)
def objective(W, by_tree, labels, weights, alpha, loss, scale, G):
    """The classifier's batch objective at ``W`` and its gradient (into ``G``).

    ``sum_n weights[n] * loss_n / sum_n weights[n] + alpha / 2 * |W|^2``, where the
    scores of row ``n`` are ``scale`` times the sum of the rows of ``W`` at its
    feature columns ``by_tree[:, n]`` (one per tree: the transpose of the rows'
    columns).

    The rows' scores are summed, and the gradient scattered, one tree at a time
    over all rows (a tree's block of the weights stays in cache, and its columns
    are read in order), rather than row by row, which reads the weights of every
    tree for each row.
    """
    n_rows, n_out = by_tree.shape[1], W.shape[1]
    total_weight = 0.0
    for n in range(n_rows):
        total_weight += max(weights[n], 0.0)
    if total_weight <= 0.0:  # no row to learn: the penalty alone
        total_weight = 1.0
    scores = np.zeros((n_rows, n_out))
    for t in range(by_tree.shape[0]):
        for n in range(n_rows):
            j = by_tree[t, n]
            for k in range(n_out):
                scores[n, k] += W[j, k]
    grad = np.empty(n_out)
    value = 0.0
    for n in range(n_rows):  # scores becomes each row's weighted gradient
        w = weights[n] / total_weight
        row = scores[n]
        if w <= 0.0:
            row[:] = 0.0
            continue
        for k in range(n_out):
            row[k] *= scale
        value += w * _loss_gradient(row, labels[n], loss, grad)
        for k in range(n_out):
            row[k] = w * scale * grad[k]
    penalty = 0.0
    for j in range(W.shape[0]):
        for k in range(n_out):
            penalty += W[j, k] * W[j, k]
            G[j, k] = alpha * W[j, k]
    for t in range(by_tree.shape[0]):
        for n in range(n_rows):
            j = by_tree[t, n]
            for k in range(n_out):
                G[j, k] += scores[n, k]
    return value + 0.5 * alpha * penalty


@kernel
def _direction(gradient, S, Y, rho, count, newest, coefficients, out):
    """The L-BFGS direction ``-H gradient`` into ``out`` (two-loop recursion) from
    the last ``count`` pairs of the ring buffers ``S``, ``Y``, ``rho`` (the newest
    at ``newest``); returns its slope ``gradient . out``."""
    n = gradient.shape[0]
    size = S.shape[0]
    for i in range(n):
        out[i] = -gradient[i]
    for c in range(count):
        slot = (newest - c) % size
        a = 0.0
        for i in range(n):
            a += S[slot, i] * out[i]
        a *= rho[slot]
        coefficients[c] = a
        for i in range(n):
            out[i] -= a * Y[slot, i]
    if count > 0:
        sy = 0.0
        yy = 0.0
        for i in range(n):
            sy += S[newest, i] * Y[newest, i]
            yy += Y[newest, i] * Y[newest, i]
        gamma = sy / yy
    else:  # the first step: at most a unit change of any weight
        top = 1.0
        for i in range(n):
            top = max(top, abs(gradient[i]))
        gamma = 1.0 / top
    for i in range(n):
        out[i] *= gamma
    for c in range(count - 1, -1, -1):
        slot = (newest - c) % size
        b = 0.0
        for i in range(n):
            b += Y[slot, i] * out[i]
        b = coefficients[c] - rho[slot] * b
        for i in range(n):
            out[i] += b * S[slot, i]
    slope = 0.0
    for i in range(n):
        slope += gradient[i] * out[i]
    return slope


def minimize(fun, x, max_iter, history=HISTORY, tolerance=GRADIENT_TOLERANCE):
    """Minimise ``fun`` (``x -> (value, gradient)``, flat arrays; the gradient may
    be overwritten by the next call) by L-BFGS from ``x``; returns ``(x,
    iterations)``.

    Each iteration takes the quasi-Newton direction of the last ``history`` steps
    (scaled by the last step's curvature) and halves the step until the value falls
    by a share of the slope (Armijo); a direction that does not descend restarts
    from the gradient. A pair whose curvature is not positive is not kept.
    """
    n = x.shape[0]
    S = np.empty((history, n))
    Y = np.empty((history, n))
    rho = np.empty(history)
    coefficients = np.empty(history)
    direction = np.empty(n)
    candidate = np.empty(n)
    count, newest = 0, history - 1
    value, gradient = fun(x)
    gradient = gradient.copy()
    iteration = 0
    while iteration < max_iter and np.abs(gradient).max() > tolerance:
        iteration += 1
        slope = _direction(gradient, S, Y, rho, count, newest, coefficients, direction)
        if slope >= 0.0:  # not a descent direction: start again from the gradient
            count = 0
            slope = _direction(gradient, S, Y, rho, count, newest, coefficients, direction)
        length = 1.0
        while True:
            np.multiply(direction, length, out=candidate)
            candidate += x
            new_value, new_gradient = fun(candidate)
            if new_value <= value + 1e-4 * length * slope:
                break
            length *= 0.5
            if length < 1e-12:
                return x, iteration
        slot = (newest + 1) % history
        np.subtract(candidate, x, out=S[slot])
        np.subtract(new_gradient, gradient, out=Y[slot])
        curvature = S[slot] @ Y[slot]
        if curvature > 1e-12 * (Y[slot] @ Y[slot]):
            rho[slot] = 1.0 / curvature
            newest = slot
            count = min(count + 1, history)
        x, candidate, value = candidate, x, new_value
        gradient[:] = new_gradient
    return x, iteration


def fit_weights(W, active, labels, weights, alpha, loss, scale, max_iter):
    """The weights that minimise :func:`objective`, by L-BFGS from ``W`` (its
    shape kept); returns ``(W, iterations)``."""
    shape = W.shape
    G = np.empty(shape)
    by_tree = np.ascontiguousarray(active.T)

    def fun(x):
        value = objective(x.reshape(shape), by_tree, labels, weights, alpha, loss, scale, G)
        return value, G.ravel()

    x, iterations = minimize(fun, np.ascontiguousarray(W, dtype=np.float64).ravel().copy(),
                             max_iter)
    return x.reshape(shape), iterations
