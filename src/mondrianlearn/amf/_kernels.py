"""Compiled kernels of AMF: node forecasters, log-weights and the CTW recursion.

Every node ``v`` of a tree keeps, in the tree's ``node_stats``:

- its forecaster: weighted class counts ``counts[v, k]`` and their sum ``total[v]``
  (classification, Dirichlet forecaster ``(c_k + alpha) / (n + K alpha)``), or the
  weighted count ``total[v]`` and running mean ``mean[v]`` (regression; an empty node
  predicts 0);
- ``log_weight[v] = -step * (cumulative loss of the forecaster of v)``;
- ``log_weight_tree[v]``: the log of the prior-weighted sum, over all prunings of the
  subtree of ``v``, of ``exp(-step * cumulative loss)`` (context tree weighting):
  ``log_weight[v]`` at a leaf, else ``log((exp(log_weight[v]) + exp(log_weight_tree[l]
  + log_weight_tree[r])) / 2)``.

The partition is updated by the engine's ``extend_to_leaf`` (infinite lifetime, no
pausing). Prediction integrates analytically over the temporary extension of the tree
with the test point (see ``path_coefficients``), so it neither changes the model nor
draws random numbers.
"""

import numpy as np

from ..engine._jit import inline_kernel, kernel
from ..engine.extension import absorb_to_leaf, extend_to_leaf
from ..engine.growth import new_node, sample_blocks
from ..engine.paths import branch_off_path, find_leaf
from ..engine.random import poisson
from ..engine.tree import LEAF, META_N_NODES, META_ROOT

_LOG_2 = np.log(2.0)


LOG_WEIGHT_FLOOR = -1e300
"""Log-weights stop here: a node that has lost this much is as good as dead, and
finite values keep the aggregation defined (no inf - inf) even for losses that
overflow, such as squared errors of targets near 1e300."""


@kernel
def log_mean_exp2(a, b):
    """``log((exp(a) + exp(b)) / 2)`` without overflow.

    Skips the transcendentals where they cannot change the result: near the root one
    term usually dominates by hundreds of nats.
    """
    if a < b:
        a, b = b, a
    d = b - a
    if not d > -745.0:  # exp(d) is 0 (also b = -inf)
        return a - _LOG_2
    e = np.exp(d)
    if d < -37.0:  # log1p(e) rounds to e
        return a + e - _LOG_2
    return a + np.log1p(e) - _LOG_2


@kernel
def _plant_root(tree, X, keys, i, rng):
    """Make a one-point tree from row ``i`` (a single leaf, via the engine's sampler)."""
    root = new_node(tree, -1)
    tree.meta[META_ROOT] = root
    indices = np.full(1, i, dtype=np.int64)
    stack = np.zeros((2, 3), dtype=np.int64)
    stack[0, 0] = root
    stack[0, 1] = 0
    stack[0, 2] = 1
    sample_blocks(tree, X, keys, np.empty(0, dtype=np.int64), indices, stack, 1,
                  np.inf, False, False, 2, rng)
    return root


@kernel
def _extend(tree, X, keys, i, split_pure, rng, excess, max_nodes, no_samples):
    """Put row ``i`` into the partition.

    A tree with ``max_nodes`` nodes (or one short of it) no longer grows: the row only
    widens the boxes down to its leaf. Returns ``(leaf, new_parent, sibling, fresh)``:
    ``fresh`` when ``leaf`` is a new node whose statistics must start empty.
    """
    if tree.meta[META_N_NODES] == 0:
        return _plant_root(tree, X, keys, i, rng), -1, -1, True
    if tree.meta[META_N_NODES] + 2 > max_nodes:
        return absorb_to_leaf(tree, X[i], keys[i]), -1, -1, False
    leaf, new_parent, sibling = extend_to_leaf(
        tree, X[i], keys[i], -1, no_samples, np.inf, False,
        split_pure, rng, excess)
    return leaf, new_parent, sibling, new_parent >= 0


@inline_kernel
def _row_weight(weights, i, bootstrap, rng):
    """Weight of row ``i`` in this tree; -1 when the tree skips the row.

    With ``bootstrap`` (online bagging) the tree counts the row ``k ~ Poisson(1)``
    times, drawn from its own stream, and skips it when ``k = 0``.
    """
    w = weights[i]
    if bootstrap:
        k = poisson(rng, 1.0)
        if k == 0:
            return -1.0
        w *= k
    return w


@kernel
def _update_tree_weight(tree, log_weight, log_weight_tree, node):
    """The CTW recursion at ``node`` (see the module docstring)."""
    if tree.left[node] == LEAF:
        log_weight_tree[node] = log_weight[node]
    else:
        children = log_weight_tree[tree.left[node]] + log_weight_tree[tree.right[node]]
        log_weight_tree[node] = log_mean_exp2(log_weight[node], children)


@kernel
def learn_classifier_tree(tree, X, keys, weights, start, counts, total, log_weight,
                          log_weight_tree, step, dirichlet, split_pure, rng, bootstrap,
                      max_nodes):
    """Learn the rows ``start:`` of a batch, in order, in one tree (classification).

    For each row: extend the partition (a node inserted above ``sibling`` copies its
    statistics, the new leaf starts empty), then walk from the leaf to the root:
    charge each node the weighted log loss of its forecaster *before* it sees the
    label, update its counts, recompute its CTW weight.

    With ``bootstrap``, the tree counts each row ``k ~ Poisson(1)`` times (drawn from
    its own stream; ``k = 0``: the tree does not see the row). With ``max_nodes``
    reached, rows update the statistics along their path without new nodes.

    Returns
    -------
    position : int
        First row not learned: smaller than ``len(X)`` when the node capacity may not
        suffice for the next row (grow the tree and call again from there).
    """
    capacity = tree.parent.shape[0]
    n_classes = counts.shape[1]
    prior_mass = n_classes * dirichlet
    excess = np.empty(X.shape[1])
    no_samples = np.empty(0, dtype=np.int64)  # AMF leaves keep no point ids
    for i in range(start, X.shape[0]):
        full = tree.meta[META_N_NODES] + 2 > max_nodes
        if not full and tree.meta[META_N_NODES] + 2 > capacity:
            return i
        w = _row_weight(weights, i, bootstrap, rng)
        if w < 0.0:
            continue  # this tree does not see the row (online bagging drew 0)
        leaf, new_parent, sibling, fresh = _extend(tree, X, keys, i, split_pure, rng,
                                                   excess, max_nodes, no_samples)
        if new_parent >= 0:
            counts[new_parent, :] = counts[sibling, :]
            total[new_parent] = total[sibling]
            log_weight[new_parent] = log_weight[sibling]
            log_weight_tree[new_parent] = log_weight_tree[sibling]
        if fresh:
            counts[leaf, :] = 0.0
            total[leaf] = 0.0
            log_weight[leaf] = 0.0
            log_weight_tree[leaf] = 0.0
        k = keys[i]
        node = leaf
        while node >= 0:
            p = (counts[node, k] + dirichlet) / (total[node] + prior_mass)
            log_weight[node] = max(log_weight[node] + step * w * np.log(p), LOG_WEIGHT_FLOOR)
            counts[node, k] += w
            total[node] += w
            _update_tree_weight(tree, log_weight, log_weight_tree, node)
            node = tree.parent[node]
    return X.shape[0]


@kernel
def learn_regressor_tree(tree, X, keys, y, weights, start, total, mean, log_weight,
                         log_weight_tree, step, split_pure, rng, bootstrap,
                     max_nodes):
    """Learn the rows ``start:`` of a batch in one tree (regression, squared loss).

    Same as ``learn_classifier_tree`` with running means; the loss of a node is
    ``w * (mean - y)^2 / 2`` with its mean before the update (0 for an empty node).
    ``keys`` are the bit patterns of the targets, so that ``split_pure=False`` keeps
    together points with exactly the same target.
    """
    capacity = tree.parent.shape[0]
    excess = np.empty(X.shape[1])
    no_samples = np.empty(0, dtype=np.int64)  # AMF leaves keep no point ids
    for i in range(start, X.shape[0]):
        full = tree.meta[META_N_NODES] + 2 > max_nodes
        if not full and tree.meta[META_N_NODES] + 2 > capacity:
            return i
        w = _row_weight(weights, i, bootstrap, rng)
        if w < 0.0:
            continue  # this tree does not see the row (online bagging drew 0)
        leaf, new_parent, sibling, fresh = _extend(tree, X, keys, i, split_pure, rng,
                                                   excess, max_nodes, no_samples)
        if new_parent >= 0:
            total[new_parent] = total[sibling]
            mean[new_parent] = mean[sibling]
            log_weight[new_parent] = log_weight[sibling]
            log_weight_tree[new_parent] = log_weight_tree[sibling]
        if fresh:
            total[leaf] = 0.0
            mean[leaf] = 0.0
            log_weight[leaf] = 0.0
            log_weight_tree[leaf] = 0.0
        target = y[i]
        node = leaf
        while node >= 0:
            err = mean[node] - target
            log_weight[node] = max(log_weight[node] - step * w * 0.5 * err * err,
                                   LOG_WEIGHT_FLOOR)
            total[node] += w
            mean[node] -= w * err / total[node]
            _update_tree_weight(tree, log_weight, log_weight_tree, node)
            node = tree.parent[node]
    return X.shape[0]


@kernel
def _log_add_exp(a, b):
    """``log(exp(a) + exp(b))``, skipping what cannot change the result."""
    if a < b:
        a, b = b, a
    d = b - a
    if not d > -745.0:  # exp(d) is 0 (also b = -inf)
        return a
    e = np.exp(d)
    if d < -37.0:  # log1p(e) rounds to e
        return a + e
    return a + np.log1p(e)


@kernel
def path_coefficients(tree, log_weight, log_weight_tree, x, extend, nodes, etas,
                      deltas, probs, coef, log_terms, branch_mass, excess):
    """Aggregation weights of ``x``'s prediction, in expectation over its extension.

    Prediction extends the tree with ``x`` temporarily (AMF paper, Algorithm 3): with
    probability ``q_j = p_j prod_{i<j} (1 - p_i)`` (``p_j`` the branch-off probability
    of the Mondrian process, see ``engine.paths``) a new node ``j~`` is inserted above
    the ``j``-th node of the path, with that node's points (hence its forecaster and
    cumulative loss), and ``x`` sits in a new empty leaf (forecaster: the prior,
    loss 0); with probability ``q_none`` it reaches its leaf. For each outcome the
    aggregated prediction of the extended tree is exact, and it is linear in the
    forecasters of the path, so its expectation is a weighted sum of the forecasters
    of the path nodes plus a weight on the prior.

    The weight of the forecaster of path node ``i`` in one tree is the posterior mass
    of the prunings whose leaf on ``x``'s path is ``i``:
    ``exp(N_i - W)`` with ``N_i = w_i + sum_{k<i} wbar(sibling of path node k+1)
    - (number of internal nodes among 0..i) log 2`` and ``W`` the log tree weight of
    the root. The extension at ``j`` changes only ``W`` (to ``W_j = logsumexp(N_0..
    N_{j-1}, N_j~, M_j)``, where ``M_j`` is the mass of the prunings that split
    ``j~``), so all outcomes are summed in two passes over the path.

    Parameters
    ----------
    extend : bool
        Integrate over the temporary extension; if false, use the leaf cell of ``x``
        (no extension, as the reference implementations do).
    nodes, etas, deltas, probs, coef, log_terms, branch_mass : arrays
        Work space of length at least ``depth + 2``; ``coef[i]`` receives the weight
        of the forecaster of ``nodes[i]``.

    Returns
    -------
    length : int
        Number of path nodes with a weight (0 when the work space is too short:
        grow it and call again).
    prior : float
        Weight of the prior forecaster (the new empty leaf).
    prior_depth : float
        Sum of the prior's weights times the depth of the new leaf.
    """
    max_index = nodes.shape[0] - 1
    m = branch_off_path(tree, x, max_index - 1, nodes, etas, deltas, probs, excess)
    if tree.left[nodes[m - 1]] != LEAF:
        return 0, 0.0, 0.0
    last = m - 1
    root_weight = log_weight_tree[nodes[0]]
    siblings = 0.0  # sum of the tree weights of the siblings of the path so far
    # shares[i] = exp(N_i - W) <= 1; their running sum gives logsumexp(N_0..N_{i-1})
    # as W + log(sum) where an extension needs it, with one exp per node.
    shares = log_terms
    share_sum = 0.0
    prior = 0.0
    prior_depth = 0.0
    survive = 1.0
    length = m
    for i in range(m):
        node = nodes[i]
        split_norm = (i + 1) * _LOG_2
        coef[i] = 0.0
        branch_mass[i] = 0.0
        gap = log_weight[node] + siblings - (split_norm if i < last else i * _LOG_2) - root_weight
        shares[i] = np.exp(gap) if gap > -745.0 else 0.0  # else it underflows to 0
        p = probs[i] if extend else 0.0
        if p > 0.0:
            prefix = root_weight + np.log(share_sum) if share_sum > 0.0 else -np.inf
            stop_here = log_weight[node] + siblings - split_norm
            split_here = log_weight_tree[node] + siblings - split_norm
            extended = _log_add_exp(prefix, _log_add_exp(stop_here, split_here))
            q = survive * p
            branch_mass[i] = q * np.exp(root_weight - extended)
            coef[i] = q * np.exp(stop_here - extended)
            to_prior = q * np.exp(split_here - extended)
            prior += to_prior
            prior_depth += to_prior * (i + 1)
            survive *= 1.0 - p
            if survive <= 0.0:
                length = i + 1
                break
        if i < last:
            share_sum += shares[i]
            child = nodes[i + 1]
            sibling = tree.left[node] if tree.right[node] == child else tree.right[node]
            siblings += log_weight_tree[sibling]
    # Node i is weighted by every outcome that keeps it on the path: no branch-off
    # (q_none) or a branch-off strictly below it.
    below = survive if length == m else 0.0
    for i in range(length - 1, -1, -1):
        coef[i] += shares[i] * below
        below += branch_mass[i]
    return length, prior, prior_depth


@kernel
def _work_space(size, n_features):
    return (np.empty(size, dtype=np.int64), np.empty(size), np.empty(size),
            np.empty(size), np.empty(size), np.empty(size), np.empty(size),
            np.empty(n_features))


@kernel
def _coefficients(tree, log_weight, log_weight_tree, x, extend, space):
    """``path_coefficients`` with work space grown until the path fits."""
    while True:
        nodes, etas, deltas, probs, coef, log_terms, branch_mass, excess = space
        m, prior, prior_depth = path_coefficients(tree, log_weight, log_weight_tree, x,
                                                  extend, nodes, etas, deltas, probs,
                                                  coef, log_terms, branch_mass, excess)
        if m > 0:
            return space, m, prior, prior_depth
        space = _work_space(2 * nodes.shape[0], x.shape[0])


@kernel
def predict_proba_tree(tree, X, counts, total, log_weight, log_weight_tree, dirichlet,
                       use_aggregation, extend, scale, out):
    """Add ``scale`` times one tree's class probabilities for the rows of ``X``."""
    n_classes = counts.shape[1]
    prior_mass = n_classes * dirichlet
    space = _work_space(64, X.shape[1])
    for r in range(X.shape[0]):
        if not use_aggregation:
            node = find_leaf(tree, X[r])
            denom = total[node] + prior_mass
            for k in range(n_classes):
                out[r, k] += scale * (counts[node, k] + dirichlet) / denom
            continue
        space, m, prior, _ = _coefficients(tree, log_weight, log_weight_tree, X[r],
                                           extend, space)
        nodes = space[0]
        coef = space[4]
        for i in range(m):
            c = coef[i]
            if c == 0.0:
                continue
            node = nodes[i]
            factor = scale * c / (total[node] + prior_mass)
            for k in range(n_classes):
                out[r, k] += factor * (counts[node, k] + dirichlet)
        if prior > 0.0:
            for k in range(n_classes):
                out[r, k] += scale * prior / n_classes


@kernel
def predict_mean_tree(tree, X, mean, log_weight, log_weight_tree, use_aggregation,
                      extend, scale, out):
    """Add ``scale`` times one tree's predictions for the rows of ``X`` (regression)."""
    space = _work_space(64, X.shape[1])
    for r in range(X.shape[0]):
        if not use_aggregation:
            out[r] += scale * mean[find_leaf(tree, X[r])]
            continue
        space, m, prior, _ = _coefficients(tree, log_weight, log_weight_tree, X[r],
                                           extend, space)
        nodes = space[0]
        coef = space[4]
        value = 0.0
        for i in range(m):
            value += coef[i] * mean[nodes[i]]
        out[r] += scale * value  # the prior (empty leaf) predicts 0


@kernel
def weighted_depth_tree(tree, X, log_weight, log_weight_tree, extend, scale, out):
    """Add ``scale`` times the mean depth of the aggregation weights of each row."""
    space = _work_space(64, X.shape[1])
    for r in range(X.shape[0]):
        space, m, prior, prior_depth = _coefficients(tree, log_weight, log_weight_tree,
                                                     X[r], extend, space)
        coef = space[4]
        value = prior_depth
        for i in range(m):
            value += coef[i] * i
        out[r] += scale * value
