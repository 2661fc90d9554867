"""AMF prediction: the aggregated forecast, in expectation over the extension.

Prediction extends the tree with ``x`` temporarily (AMF paper, Algorithm 3): with
probability ``q_j = p_j prod_{i<j} (1 - p_i)`` (``p_j`` the branch-off probability
of the Mondrian process, see ``engine.paths``) a new node is inserted above the
``j``-th node of the path, with that node's points (hence its forecaster and
cumulative loss), and ``x`` sits in a new empty leaf (forecaster: the prior, loss
0); with probability ``q_none`` it reaches its leaf. For each outcome the
aggregated prediction of the extended tree is exact (context tree weighting), and
it is linear in the forecasters of the path, so its expectation is computed
exactly, with no random draw and no change to the model.

Most of the work does not depend on the point: the share of the posterior held by
the prunings whose leaf on the path is node ``v``,

    share[v] = exp(log_weight[v] + siblings[v] - c_v log 2 - W),

depends only on ``v`` (``siblings[v]``: the summed tree weights of the siblings of
the nodes on the path down to ``v``; ``c_v`` the number of internal nodes down to
and including ``v``; ``W`` the root's tree weight). So are the sums ``prefix[v] =
sum of share[u] * forecaster(u)`` over ``v`` and its ancestors, and
``share_above[v] = sum of share[u]`` over its strict ancestors. They are computed
top-down and memoised for the duration of a prediction call: each node that some
row's path reaches is visited once, however many rows share it (``O(outputs)``
per node). For a large batch, every node is visited in one depth-first pass
instead, which streams through memory when the nodes are stored in that order
(``engine.layout``), and the rows walk a packed copy of the split fields
(``engine.boxes.walk_table``); both ways do the same operations on each node, so
a row's prediction does not depend on its batch. Beyond that, a point needs its
path only for the few nodes where it may branch off, below the deepest box that
holds it:

- it reaches its leaf ``l`` (probability ``q_none``): ``prefix[l]``;
- it branches off above path node ``j`` (probability ``q_j``): relative to ``W``,
  the extended tree's weight is ``share_above[j] + stop[j] + split[j]``, where
  ``stop[j]`` is the share of the prunings that stop at the new parent (it holds
  the points of ``j``: forecaster of ``j``) and ``split[j]`` the share of those that
  split it (``j``'s subtree beside the point's empty leaf: the prior); the
  ancestors keep ``prefix`` of ``j``'s parent. ``stop`` and ``split`` are node
  constants too, so no logarithm or exponential is left for the query; the sum is
  at least 1/2 (``share_above[j]`` plus the mass of the prunings that reach ``j``,
  of which ``split[j]`` is half), so nothing underflows.

The result is the exact expectation over the extensions (``tests/test_amf_exactness.py``
checks it against a brute-force average over every pruning of small trees)."""

import numpy as np

from ..engine._jit import borrowed, inline_kernel, kernel
from ..engine.boxes import (
    box_excess,
    box_holds,
    find_leaf,
    record_path,
    record_path_packed,
    walk_table,
)
from ..engine.layout import depth_first_order
from ..engine.paths import branch_off_probability
from ..engine.tree import LEAF, META_N_NODES, META_ROOT, borrowed_tree


@kernel
def _visit(left, log_weight, log_weight_tree, node, reach, share, split_share,
           share_above):
    """Shares of ``node`` from its own ``reach``; returns the ``reach`` and
    ``share_above`` of its children.

    ``reach[v]`` is the share of the prunings that reach ``v``: 1 at the root; at an
    internal node ``a = exp(log_weight - log_weight_tree) / 2`` of it stops there
    (``share``) and the rest reaches both children; half of it splits ``v``
    (``split_share``). One exponential per internal node.
    """
    split_share[node] = 0.5 * reach[node]
    if left[node] == LEAF:
        share[node] = reach[node]
        return 0.0, 0.0
    stop = 0.5 * reach[node] * np.exp(log_weight[node] - log_weight_tree[node])
    share[node] = stop
    return reach[node] - stop, share_above[node] + stop


@kernel
def _descend(left, right, log_weight, log_weight_tree, path, m, done, mark, reach, share,
             split_share, share_above):
    """Visit the nodes of ``path[:m]`` not yet ``done``, top-down.

    Returns the position of the first one (``m`` if none): the caller fills their
    prefix sums from there. A visited node also sets ``reach`` and ``share_above``
    of both its children, so any later path can start below it. With ``mark``, the
    visited nodes are marked ``done`` for the next rows of the call; a call of one
    row marks none (nothing to share, and nothing to clear after it).
    """
    start = 0
    while start < m and done[path[start]]:
        start += 1
    if start == 0 and m > 0:
        reach[path[0]] = 1.0
        share_above[path[0]] = 0.0
    for j in range(start, m):
        node = path[j]
        child_reach, child_above = _visit(left, log_weight, log_weight_tree, node,
                                          reach, share, split_share, share_above)
        if left[node] != LEAF:
            for child in (left[node], right[node]):
                reach[child] = child_reach
                share_above[child] = child_above
        if mark:
            done[node] = True
    return start


@kernel(allocates=True)
def _visit_all(tree, log_weight, log_weight_tree, reach, share, split_share,
               share_above):
    """Visit every node depth-first from the root (the order of ``engine.layout``):
    the whole-tree version of ``_descend``. Returns the order, for the prefix sums."""
    left, right, root = tree.left, tree.right, tree.meta[META_ROOT]
    order = depth_first_order(left, right, root, tree.meta[META_N_NODES])
    reach[root] = 1.0
    share_above[root] = 0.0
    for node in order:
        child_reach, child_above = _visit(left, log_weight, log_weight_tree, node,
                                          reach, share, split_share, share_above)
        if left[node] != LEAF:
            reach[left[node]] = child_reach
            share_above[left[node]] = child_above
            reach[right[node]] = child_reach
            share_above[right[node]] = child_above
    return order


@kernel
def _whole_tree(n_rows, n_nodes):
    """Whether to compute the sums of every node up front rather than of the nodes
    that the rows reach.

    A pass over the whole tree streams through memory (see ``engine.layout``) and
    costs less per node than visiting nodes one path at a time, while the rows of a
    call reach a large part of the tree once they are a few percent of its nodes.
    The threshold is where the two took the same time in timings on letter.
    """
    return n_rows * 12 >= n_nodes


@kernel
def class_prefix(counts, total, dirichlet, share, node, parent, prefix):
    """``prefix[node]``: ``share * p_node`` plus ``prefix[parent]`` (none: -1)."""
    n_classes = counts.shape[1]
    factor = share[node] / (total[node] + n_classes * dirichlet)
    for k in range(n_classes):
        value = factor * (counts[node, k] + dirichlet)
        prefix[node, k] = value + prefix[parent, k] if parent >= 0 else value


@kernel
def value_prefix(values, share, node, parent, prefix):
    """``class_prefix`` for a scalar forecaster (``values[node]``)."""
    value = share[node] * values[node]
    prefix[node] = value + prefix[parent] if parent >= 0 else value


@kernel
def _branch_weights(left, share, split_share, share_above, node, q):
    """Weights of (the ancestors' prefix, the node's forecaster, the prior) when the
    point branches off above ``node`` with probability ``q``."""
    stop = share[node] if left[node] != LEAF else 0.5 * share[node]
    split = split_share[node]
    scale = q / (share_above[node] + stop + split)
    return scale, scale * stop, scale * split


@kernel
def _branch_offs(lower, upper, time, left, x, path, m, extend, share, split_share,
                 share_above, excess, etas, where, weights):
    """Where ``x`` may branch off its path ``path[:m]``, and the weights of each case.

    Fills ``where[i]`` (a path position ``j``) and ``weights[i] = (a, b, c)``: the
    weights of the ancestors' prefix (``prefix[path[j - 1]]``), of the forecaster of
    ``path[j]`` and of the prior. Returns how many, and the probability that ``x``
    reaches its leaf (the weight of ``prefix[path[m - 1]]``). Takes the tree's
    arrays, not the tree (see ``engine.boxes``); AMF keeps no points, so a node's box
    row is its id.
    """
    # Up from the leaf, the distance of x to each box (etas), until the deepest box
    # that holds it (see engine.boxes.deepest_holding): one read of each box.
    holding = m - 1
    scan = extend
    if scan and np.isinf(time[path[m - 1]]):
        # A leaf that is never cut (infinite lifetime) splits off any point outside
        # its box: only whether x is outside matters, not how far.
        if box_holds(lower, upper, path[m - 1], x):
            scan = False
        else:
            etas[m - 1] = np.inf
            holding = m - 2
    while scan and holding >= 0:
        eta = box_excess(lower, upper, path[holding], x, excess)
        if eta == 0.0:
            break
        etas[holding] = eta
        holding -= 1
    survive = 1.0
    count = 0
    t_parent = time[path[holding]] if holding >= 0 else 0.0
    for j in range(holding + 1, m):
        node = path[j]
        p = branch_off_probability(time[node] - t_parent, etas[j])
        t_parent = time[node]
        if p > 0.0:
            a, b, c = _branch_weights(left, share, split_share, share_above, node,
                                      survive * p)
            where[count] = j
            weights[count, 0] = a
            weights[count, 1] = b
            weights[count, 2] = c
            count += 1
            survive *= 1.0 - p
            if survive <= 0.0:
                break
    return count, survive


@kernel
def _class_row(path, m, counts, total, dirichlet, prefix, where, weights, count,
               survive, row):
    """One tree's aggregated class probabilities for a row (see ``_branch_offs``)."""
    n_classes = counts.shape[1]
    prior_mass = n_classes * dirichlet
    for k in range(n_classes):  # scalar loops compile faster than slice assignments
        row[k] = 0.0
    for i in range(count):
        j = where[i]
        node = path[j]
        a = weights[i, 0]
        b = weights[i, 1] / (total[node] + prior_mass)
        c = weights[i, 2] / n_classes
        if j > 0:  # the ancestors' prefix
            above = path[j - 1]
            for k in range(n_classes):
                row[k] += a * prefix[above, k]
        for k in range(n_classes):
            row[k] += b * (counts[node, k] + dirichlet) + c
    if survive > 0.0:
        leaf = path[m - 1]
        for k in range(n_classes):
            row[k] += survive * prefix[leaf, k]


@kernel
def _value_row(path, m, values, prior, prior_depth, prefix, where, weights, count,
               survive):
    """One tree's aggregated scalar forecast for a row: the mean (the new empty leaf
    of a branch-off predicts ``prior``) or, with ``prior_depth``, the depth
    (``values`` the depths of the path; the new leaf of a branch-off above path node
    ``j`` has depth ``j + 1``)."""
    value = 0.0
    for i in range(count):
        j = where[i]
        value += weights[i, 1] * values[path[j]]
        if prior_depth:
            value += weights[i, 2] * (j + 1)
        else:
            value += weights[i, 2] * prior
        if j > 0:
            value += weights[i, 0] * prefix[path[j - 1]]
    if survive > 0.0:
        value += survive * prefix[path[m - 1]]
    return value


@kernel
def _leaf_cell_share(left, node, reach, log_weight, log_weight_tree):
    """``share`` of ``node`` reached with ``reach`` (``_visit``'s arithmetic)."""
    if left[node] == LEAF:
        return reach
    return 0.5 * reach * np.exp(log_weight[node] - log_weight_tree[node])


@kernel
def leaf_cell_classes(left, right, feature, threshold, root, n_nodes, x, counts, total,
                      log_weight, log_weight_tree, dirichlet, sums):
    """``prefix`` of the leaf of ``x`` in ``sums`` (one entry per class): the
    aggregated class probabilities when the point is not extended (leaf-cell
    prediction). The operations of ``_descend``, ``class_prefix`` and ``_class_row``
    on the path (so the same result, bit for bit), in one pass down the tree with
    the running sums in ``sums``: no node-indexed work array is written, which for a
    row's path costs more than the arithmetic (scattered writes, marks to clear).

    Takes the arrays it reads, not the tree (``root`` and ``n_nodes`` from its
    ``meta``): a call that passes a whole tree, or the work of the batch path,
    costs more than this walk (see ``engine.boxes.box_excess``), and a one-row
    prediction makes one such call per tree (``_forest_kernels``)."""
    n_classes = counts.shape[1]
    node = root
    reach = 1.0
    for depth in range(n_nodes):  # record_path's bound
        share = _leaf_cell_share(left, node, reach, log_weight, log_weight_tree)
        factor = share / (total[node] + n_classes * dirichlet)
        for k in range(n_classes):
            value = factor * (counts[node, k] + dirichlet)
            sums[k] = value + sums[k] if depth > 0 else value
        child = left[node]
        if child == LEAF:
            break
        reach = reach - share
        node = child if x[feature[node]] <= threshold[node] else right[node]
    for k in range(n_classes):
        sums[k] = 0.0 + 1.0 * sums[k]  # _class_row: no branch-off, survive = 1


@kernel
def leaf_cell_value(left, right, feature, threshold, root, n_nodes, x, values, log_weight,
                    log_weight_tree):
    """``leaf_cell_classes`` for a scalar forecaster (``value_prefix`` and
    ``_value_row``)."""
    node = root
    reach = 1.0
    total = 0.0
    for depth in range(n_nodes):
        share = _leaf_cell_share(left, node, reach, log_weight, log_weight_tree)
        value = share * values[node]
        total = value + total if depth > 0 else value
        child = left[node]
        if child == LEAF:
            break
        reach = reach - share
        node = child if x[feature[node]] <= threshold[node] else right[node]
    value = 0.0
    value += 1.0 * total
    return value


@kernel
def _walk(tree, table, whole, x, path, log_weight, log_weight_tree, done, mark, reach,
          share, split_share, share_above):
    """Record the path of ``x`` in ``path``; returns its length and the position from
    which its nodes still need their prefix sums (see ``_descend``; ``mark``: mark
    them ``done``). With ``whole``, every node already has its sums and the walk
    reads the packed ``table``."""
    root = tree.meta[META_ROOT]
    n_nodes = tree.meta[META_N_NODES]
    if whole:
        m = record_path_packed(table, root, x, path, n_nodes)
        return m, m
    m = record_path(tree.left, tree.right, tree.feature, tree.threshold, root, x, path,
                    n_nodes)
    return m, _descend(tree.left, tree.right, log_weight, log_weight_tree, path, m, done,
                       mark, reach, share, split_share, share_above)


@kernel(allocates=True)
def _work_space(tree, X, use_aggregation):
    """Per-call arrays of the prediction kernels: the walk table (filled when every
    node's sums are computed up front, see ``_whole_tree``) and one entry per node or
    path node. Allocated here, outside the loops, which borrow them (see
    ``engine._jit.borrowed``)."""
    n_nodes = tree.meta[META_N_NODES] if use_aggregation else 0
    whole = use_aggregation and _whole_tree(X.shape[0], n_nodes)
    table = walk_table(tree.left, tree.right, tree.feature, tree.threshold,
                       n_nodes if whole else 0)
    return (whole, table, np.empty(n_nodes), np.empty(n_nodes), np.empty(n_nodes),
            np.empty(n_nodes), np.zeros(n_nodes, dtype=np.bool_),
            np.empty(n_nodes, dtype=np.int64), np.empty(X.shape[1]), np.empty(n_nodes),
            np.empty(n_nodes, dtype=np.int64), np.empty((n_nodes, 3)))


@inline_kernel
def _borrowed_work(work):
    """The arrays of ``_work_space`` as borrowed views (``work`` an argument of the
    caller)."""
    (_, table, reach, share, split_share, share_above, done, path, excess, etas, where,
     weights) = work
    return (borrowed(table), borrowed(reach), borrowed(share), borrowed(split_share),
            borrowed(share_above), borrowed(done), borrowed(path), borrowed(excess),
            borrowed(etas), borrowed(where), borrowed(weights))


@kernel(allocates=True)
def _proba_rows(tree, X, counts, total, log_weight, log_weight_tree, dirichlet,
                use_aggregation, extend, scale, out, work, prefix, row):
    """Add ``scale`` times one tree's class probabilities for the rows of ``X`` to
    ``out``, one addition per entry (so accumulating trees in place or summing
    per-tree parts in tree order gives identical results). ``work``: the tuple of
    ``_work_space`` (or ``_forest_kernels._work``); ``prefix`` and ``row`` work
    arrays of one row per node and one entry per class."""
    tree = borrowed_tree(tree)
    X, out, prefix, row = borrowed(X), borrowed(out), borrowed(prefix), borrowed(row)
    counts, total = borrowed(counts), borrowed(total)
    log_weight, log_weight_tree = borrowed(log_weight), borrowed(log_weight_tree)
    whole = work[0]
    (table, reach, share, split_share, share_above, done, path, excess, etas, where,
     weights) = _borrowed_work(work)
    n_classes = counts.shape[1]
    if not use_aggregation:
        for r in range(X.shape[0]):
            node = find_leaf(tree, X[r])
            denom = total[node] + n_classes * dirichlet
            for k in range(n_classes):
                out[r, k] += scale * ((counts[node, k] + dirichlet) / denom)
        return
    if X.shape[0] == 1 and not whole and not extend:
        # One row shares no node with another: one pass, no memo (see
        # ``leaf_cell_classes``). Rows of a batch share their upper paths, whose
        # sums the memo then computes once.
        leaf_cell_classes(tree.left, tree.right, tree.feature, tree.threshold,
                          tree.meta[META_ROOT], tree.meta[META_N_NODES], X[0], counts, total,
                          log_weight, log_weight_tree, dirichlet, row)
        for k in range(n_classes):
            out[0, k] += scale * row[k]
        return
    if whole:
        order = _visit_all(tree, log_weight, log_weight_tree, reach, share, split_share,
                           share_above)
        for node in order:
            # the parent as int64, as path[j - 1] below: one specialisation of class_prefix
            class_prefix(counts, total, dirichlet, share, node, np.int64(tree.parent[node]),
                         prefix)
    mark = X.shape[0] > 1  # one row: no node is reached twice, nothing to clear
    for r in range(X.shape[0]):
        x = X[r]
        m, start = _walk(tree, table, whole, x, path, log_weight, log_weight_tree, done,
                         mark, reach, share, split_share, share_above)
        for j in range(start, m):
            class_prefix(counts, total, dirichlet, share, path[j],
                         path[j - 1] if j > 0 else -1, prefix)
        count, survive = _branch_offs(tree.lower, tree.upper, tree.time, tree.left, x,
                                      path, m, extend, share, split_share, share_above,
                                      excess, etas, where, weights)
        _class_row(path, m, counts, total, dirichlet, prefix, where, weights, count,
                   survive, row)
        for k in range(n_classes):
            out[r, k] += scale * row[k]


@kernel(allocates=True)
def predict_value_tree(tree, X, values, prior, log_weight, log_weight_tree,
                       use_aggregation, extend, depths, scale, out):
    """Add ``scale`` times one tree's aggregated scalar forecast for each row of ``X``.

    ``values``: a scalar forecast per node (regression: the means, or the second
    moments of ``AMFRegressor.predict(return_std=True)``), ``prior`` that of an empty
    leaf. With a non-empty ``depths`` (work space of one entry per node), the
    forecast is the depth of the prediction instead (``weighted_depth``; ``prior``
    is then unused).
    """
    n_nodes = tree.meta[META_N_NODES]
    if n_nodes == 0:  # a tree that has seen no row predicts the prior (at depth 0)
        if depths.shape[0] == 0:
            for i in range(out.shape[0]):
                out[i] += scale * prior
        return
    # The loop runs in another kernel, over borrowed views of these arrays.
    _value_rows(tree, X, values, prior, log_weight, log_weight_tree, use_aggregation,
                extend, depths, scale, out, _work_space(tree, X, use_aggregation),
                np.empty(n_nodes if use_aggregation else 0))


@kernel(allocates=True)
def _value_rows(tree, X, values, prior, log_weight, log_weight_tree, use_aggregation,
                extend, depths, scale, out, work, prefix):
    """The work of ``predict_value_tree`` (see ``_proba_rows``)."""
    tree = borrowed_tree(tree)
    X, values, depths, out = borrowed(X), borrowed(values), borrowed(depths), borrowed(out)
    prefix = borrowed(prefix)
    log_weight, log_weight_tree = borrowed(log_weight), borrowed(log_weight_tree)
    whole = work[0]
    (table, reach, share, split_share, share_above, done, path, excess, etas, where,
     weights) = _borrowed_work(work)
    depth = depths.shape[0] > 0
    if not use_aggregation:
        for r in range(X.shape[0]):
            out[r] += scale * values[find_leaf(tree, X[r])]
        return
    if X.shape[0] == 1 and not whole and not extend and not depth:  # see _proba_rows
        out[0] += scale * leaf_cell_value(tree.left, tree.right, tree.feature,
                                          tree.threshold, tree.meta[META_ROOT],
                                          tree.meta[META_N_NODES], X[0], values, log_weight,
                                          log_weight_tree)
        return
    if whole:
        order = _visit_all(tree, log_weight, log_weight_tree, reach, share, split_share,
                           share_above)
        for node in order:
            parent = tree.parent[node]
            if depth:
                depths[node] = depths[parent] + 1 if parent >= 0 else 0
                value_prefix(depths, share, node, parent, prefix)
            else:
                value_prefix(values, share, node, parent, prefix)
    mark = X.shape[0] > 1  # one row: no node is reached twice, nothing to clear
    for r in range(X.shape[0]):
        x = X[r]
        m, start = _walk(tree, table, whole, x, path, log_weight, log_weight_tree, done,
                         mark, reach, share, split_share, share_above)
        for j in range(start, m):
            parent = path[j - 1] if j > 0 else -1
            if depth:
                depths[path[j]] = j
                value_prefix(depths, share, path[j], parent, prefix)
            else:
                value_prefix(values, share, path[j], parent, prefix)
        count, survive = _branch_offs(tree.lower, tree.upper, tree.time, tree.left, x,
                                      path, m, extend, share, split_share, share_above,
                                      excess, etas, where, weights)
        if depth:
            value = _value_row(path, m, depths, 0.0, True, prefix, where, weights, count,
                               survive)
        else:
            value = _value_row(path, m, values, prior, False, prefix, where, weights,
                               count, survive)
        out[r] += scale * value
