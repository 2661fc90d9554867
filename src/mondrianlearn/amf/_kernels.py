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
pausing). Prediction is in ``_path_sums``.
"""

import numpy as np

from ..engine._jit import borrowed, inline_kernel, kernel
from ..engine.extension import absorb_to_leaf, extend_to_leaf
from ..engine.growth import new_node, sample_blocks
from ..engine.random import poisson
from ..engine.tree import LEAF, META_N_NODES, META_ROOT, borrowed_tree

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
    if not d > -745.0 or (d < -37.0 and abs(a) >= 1.0):
        # exp(d) is 0 (also b = -inf), or below half an ulp of a (< 8.6e-17 <= ulp/2)
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


@inline_kernel
def _extend(tree, X, keys, i, split_pure, rng, excess, path, max_nodes, no_samples):
    """Put row ``i`` into the partition.

    A tree with ``max_nodes`` nodes (or one short of it) no longer grows: the row only
    widens the boxes down to its leaf. Returns ``(leaf, new_parent, sibling, fresh)``:
    ``fresh`` when ``leaf`` is a new node whose statistics must start empty.
    """
    if tree.meta[META_N_NODES] == 0:
        return _plant_root(tree, X, keys, i, rng), -1, -1, True
    if tree.meta[META_N_NODES] + 2 > max_nodes:
        return absorb_to_leaf(tree, X[i], keys[i], path), -1, -1, False
    leaf, new_parent, sibling = extend_to_leaf(
        tree, X[i], keys[i], -1, no_samples, np.inf, False,
        split_pure, rng, excess, path)
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
def _update_tree_weight(left, right, log_weight, log_weight_tree, node):
    """The CTW recursion at ``node`` (see the module docstring)."""
    if left[node] == LEAF:
        log_weight_tree[node] = log_weight[node]
    else:
        children = log_weight_tree[left[node]] + log_weight_tree[right[node]]
        log_weight_tree[node] = log_mean_exp2(log_weight[node], children)


@kernel
def learn_classifier_tree(tree, X, keys, weights, start, counts, total, log_weight,
                          log_weight_tree, step, dirichlet, split_pure, rng, bootstrap,
                          max_nodes, onelearn):
    """Learn the rows ``start:`` of a batch, in order, in one tree (classification).

    For each row: extend the partition (a node inserted above ``sibling`` copies its
    statistics, the new leaf starts empty), then walk from the leaf to the root:
    charge each node the weighted log loss of its forecaster *before* it sees the
    label, update its counts, recompute its CTW weight.

    With ``onelearn`` (the convention of onelearn and river): the forecaster's total
    already counts the row when it is scored (``(c_y + alpha) / (n + w + K alpha)``),
    and a node is not charged for its first row: a fresh leaf starts at weight 0.

    With ``bootstrap``, the tree counts each row ``k ~ Poisson(1)`` times (drawn from
    its own stream; ``k = 0``: the tree does not see the row). With ``max_nodes``
    reached, rows update the statistics along their path without new nodes.

    Returns
    -------
    position : int
        First row not learned: smaller than ``len(X)`` when the node capacity may not
        suffice for the next row (grow the tree and call again from there).
    """
    excess, path, no_samples = _learn_work_space(tree, X)
    return _learn_classifier_rows(tree, X, keys, weights, start, counts, total,
                                  log_weight, log_weight_tree, step, dirichlet,
                                  split_pure, rng, bootstrap, max_nodes, onelearn,
                                  excess, path, no_samples)


@kernel
def _learn_work_space(tree, X):
    """Work arrays of the learning loops (allocated outside them: see ``borrowed``)."""
    return (np.empty(X.shape[1]), np.empty(tree.parent.shape[0], dtype=np.int64),
            np.empty(0, dtype=np.int64))  # AMF leaves keep no point ids


@kernel
def _learn_classifier_rows(tree, X, keys, weights, start, counts, total, log_weight,
                           log_weight_tree, step, dirichlet, split_pure, rng, bootstrap,
                           max_nodes, onelearn, excess, path, no_samples):
    """The loop of ``learn_classifier_tree`` over borrowed arrays."""
    tree = borrowed_tree(tree)
    X, keys, weights, rng = borrowed(X), borrowed(keys), borrowed(weights), borrowed(rng)
    counts, total = borrowed(counts), borrowed(total)
    log_weight, log_weight_tree = borrowed(log_weight), borrowed(log_weight_tree)
    excess, path, no_samples = borrowed(excess), borrowed(path), borrowed(no_samples)
    capacity = tree.parent.shape[0]
    prior_mass = counts.shape[1] * dirichlet
    for i in range(start, X.shape[0]):
        full = tree.meta[META_N_NODES] + 2 > max_nodes
        if not full and tree.meta[META_N_NODES] + 2 > capacity:
            return i
        w = _row_weight(weights, i, bootstrap, rng)
        if w < 0.0:
            continue  # this tree does not see the row (online bagging drew 0)
        leaf, new_parent, sibling, fresh = _extend(tree, X, keys, i, split_pure, rng,
                                                   excess, path, max_nodes, no_samples)
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
            if not (onelearn and fresh and node == leaf):
                seen = total[node] + w if onelearn else total[node]
                p = (counts[node, k] + dirichlet) / (seen + prior_mass)
                log_weight[node] = max(log_weight[node] + step * w * np.log(p),
                                       LOG_WEIGHT_FLOOR)
            counts[node, k] += w
            total[node] += w
            _update_tree_weight(tree.left, tree.right, log_weight, log_weight_tree, node)
            node = tree.parent[node]
    return X.shape[0]


@kernel
def learn_regressor_tree(tree, X, keys, y, weights, start, total, mean, log_weight,
                         log_weight_tree, step, split_pure, rng, bootstrap,
                         max_nodes, onelearn):
    """Learn the rows ``start:`` of a batch in one tree (regression, squared loss).

    Same as ``learn_classifier_tree`` with running means; the loss of a node is
    ``w * (mean - y)^2 / 2`` with its mean before the update (0 for an empty node;
    with ``onelearn``, a fresh leaf is not charged for its first row).
    ``keys`` are the bit patterns of the targets, so that ``split_pure=False`` keeps
    together points with exactly the same target.
    """
    excess, path, no_samples = _learn_work_space(tree, X)
    return _learn_regressor_rows(tree, X, keys, y, weights, start, total, mean,
                                 log_weight, log_weight_tree, step, split_pure, rng,
                                 bootstrap, max_nodes, onelearn, excess, path,
                                 no_samples)


@kernel
def _learn_regressor_rows(tree, X, keys, y, weights, start, total, mean, log_weight,
                          log_weight_tree, step, split_pure, rng, bootstrap, max_nodes,
                          onelearn, excess, path, no_samples):
    """The loop of ``learn_regressor_tree`` over borrowed arrays."""
    tree = borrowed_tree(tree)
    X, keys, y, weights = borrowed(X), borrowed(keys), borrowed(y), borrowed(weights)
    rng, total, mean = borrowed(rng), borrowed(total), borrowed(mean)
    log_weight, log_weight_tree = borrowed(log_weight), borrowed(log_weight_tree)
    excess, path, no_samples = borrowed(excess), borrowed(path), borrowed(no_samples)
    capacity = tree.parent.shape[0]
    for i in range(start, X.shape[0]):
        full = tree.meta[META_N_NODES] + 2 > max_nodes
        if not full and tree.meta[META_N_NODES] + 2 > capacity:
            return i
        w = _row_weight(weights, i, bootstrap, rng)
        if w < 0.0:
            continue  # this tree does not see the row (online bagging drew 0)
        leaf, new_parent, sibling, fresh = _extend(tree, X, keys, i, split_pure, rng,
                                                   excess, path, max_nodes, no_samples)
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
            if not (onelearn and fresh and node == leaf):
                log_weight[node] = max(log_weight[node] - step * w * 0.5 * err * err,
                                       LOG_WEIGHT_FLOOR)
            total[node] += w
            mean[node] -= w * err / total[node]
            _update_tree_weight(tree.left, tree.right, log_weight, log_weight_tree, node)
            node = tree.parent[node]
    return X.shape[0]
