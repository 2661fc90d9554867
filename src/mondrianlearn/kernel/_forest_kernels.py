"""The Mondrian kernel models over all partitions in one compiled call (fast path).

Each kernel loops over the partitions of a
:class:`~mondrianlearn.engine.tree_table.TreeTable` (one per-node array,
``column``) and runs the full path's steps in the same order, with the same
compiled pieces, so results are bit-identical:

- extension: ``_features.extend_rows`` per tree (``extend_partition_rows``), rows in
  order; a tree that the full path would grow first, or that runs out of room, is
  left to Python, which finishes it with the full path's loop;
- columns: the leaves made by the call get the next columns, tree by tree and in
  node order (``_features.assign_columns``; older leaves all have a column, and new
  nodes only ever come at the end of the arrays);
- the rows' features: the columns of their leaves, sorted per row (the full path's
  CSR rows), and the linear model of the estimator on them (``_ridge.add_rows`` and
  ``chol_solve``, or ``_sweep.sgd_rows``), or the scores
  ``intercept + sum scale * W[column]`` summed in column order, as scipy's CSR
  product does.

Work arrays are the estimator's own, allocated once (``FAST_MAX_ROWS`` rows).
"""

import numpy as np

from ..engine._jit import kernel
from ..engine.boxes import find_leaf
from ..engine.tree import LEAF, META_N_NODES
from ..engine.tree_table import (COLUMN_STATS, SIZE_NODES, accept_rows, finite_rows,
                                 int_vector_at, rng_at, tree_at)
from ._features import extend_rows
from ._ridge import add_rows, chol_solve
from ._sweep import sgd_rows


# ------------------------------------------------------------------ learning
@kernel
def extend_partitions(addresses, sizes, X, lifetime, excess, path, no_samples, leaves,
                      n_before, stops):
    """Extend every partition with the rows (``extend_partition_rows`` per tree).

    ``leaves[t, i]`` receives the leaf of row ``i`` in tree ``t`` and ``n_before[t]``
    the tree's node count before the call. Returns the number of trees left to
    Python: for those, ``stops[t]`` (less than the number of rows) is the first row
    not learned.
    """
    n_rows = X.shape[0]
    left_over = 0
    for t in range(addresses.shape[0]):
        tree = tree_at(addresses, sizes, t, X.shape[1])
        capacity = sizes[t, SIZE_NODES]
        n_nodes = tree.meta[META_N_NODES]
        n_before[t] = n_nodes
        stops[t] = 0
        if (n_nodes == 0 or n_nodes + 2 + min(2 * n_rows, n_nodes + 64) > capacity
                or path.shape[0] < capacity):
            left_over += 1  # the full path grows the tree before extending it
            continue
        stops[t] = extend_rows(tree, X, 0, lifetime, rng_at(addresses, t), leaves[t],
                               excess, path, no_samples)
        if stops[t] < n_rows:
            left_over += 1
    return left_over


@kernel
def assign_new_columns(addresses, sizes, n_features, n_before, n_columns):
    """``_features.assign_columns`` for the nodes made since ``n_before``; returns
    the new number of columns."""
    for t in range(addresses.shape[0]):
        tree = tree_at(addresses, sizes, t, n_features)
        column = int_vector_at(addresses, t, COLUMN_STATS, sizes[t, SIZE_NODES])
        for node in range(n_before[t], tree.meta[META_N_NODES]):
            if tree.left[node] == LEAF and column[node] == 0:
                n_columns += 1
                column[node] = n_columns
    return n_columns


@kernel
def _sort_rows(columns, n_rows):
    """Sort ``columns[i]`` in place for the first ``n_rows`` rows (the columns of a
    row are distinct: any sort gives numpy's order)."""
    for i in range(n_rows):
        columns[i].sort()


@kernel
def columns_of_leaves(addresses, sizes, leaves, n_rows, columns):
    """``columns[i]``: the sorted columns of the leaves ``leaves[:, i]`` of row ``i``."""
    for t in range(addresses.shape[0]):
        column = int_vector_at(addresses, t, COLUMN_STATS, sizes[t, SIZE_NODES])
        for i in range(n_rows):
            columns[i, t] = column[leaves[t, i]] - 1
    _sort_rows(columns, n_rows)


@kernel
def learn_partitions(addresses, sizes, X, lifetime, n_columns, excess, path, no_samples,
                     leaves, n_before, stops):
    """``MondrianKernel.partial_fit``: returns -1 if ``X`` is not finite (nothing
    changed), -2 if trees are left to Python (see ``extend_partitions``; columns are
    then not assigned), else the new number of columns."""
    if not finite_rows(X):
        return -1
    if extend_partitions(addresses, sizes, X, lifetime, excess, path, no_samples, leaves,
                         n_before, stops):
        return -2
    return assign_new_columns(addresses, sizes, X.shape[1], n_before, n_columns)


@kernel
def learn_ridge(addresses, sizes, X, y, weights, intercept, feature_range, lifetime,
                n_columns, U, b, size, root, scale, excess, path, no_samples, leaves,
                n_before, stops, columns, targets, x):
    """``MondrianKernelRegressor.partial_fit`` in one call.

    Returns ``(status, n_columns, coef)``. ``status``: -1 if the rows are refused
    (non-finite ``X`` or ``y``, range overflow; nothing changed); ``k > 0`` if
    ``k`` trees are left to Python (see ``extend_partitions``); -2 if the columns
    are assigned (``n_columns`` is the new count, ``columns[:n]`` the rows'
    features) but the factor ``U`` has no room for them (Python grows it and goes
    on); 0 when done: ``size + new columns`` features, ``coef`` the new solution.
    """
    none = np.empty(0)
    for i in range(y.shape[0]):
        if not np.isfinite(y[i]):
            return -1, n_columns, none
    if not accept_rows(X, feature_range):
        return -1, n_columns, none
    left_over = extend_partitions(addresses, sizes, X, lifetime, excess, path, no_samples,
                                  leaves, n_before, stops)
    if left_over:
        return left_over, n_columns, none
    n_rows = X.shape[0]
    total = assign_new_columns(addresses, sizes, X.shape[1], n_before, n_columns)
    columns_of_leaves(addresses, sizes, leaves, n_rows, columns)
    new_size = size + total - n_columns
    if new_size > U.shape[0] or x.shape[0] < new_size:
        return -2, total, none
    # OnlineRidge.add_features, add_rows and solve
    for i in range(size, new_size):
        U[i, i] = root
    for i in range(n_rows):
        targets[i] = y[i] - intercept
    add_rows(U, new_size, b, columns[:n_rows], weights, targets[:n_rows], scale, x)
    coef = np.empty(new_size)
    chol_solve(U, new_size, b, coef)
    return 0, total, coef


@kernel
def learn_sgd(addresses, sizes, X, labels, weights, feature_range, lifetime, n_columns,
              W, eta, alpha, loss, scale, rng, order, scores, grad, excess, path,
              no_samples, leaves, n_before, stops, columns):
    """``MondrianKernelClassifier.partial_fit`` in one call: one SGD epoch on the rows
    after extending the partitions.

    ``W`` holds the weights in its first ``n_columns`` rows and zeros below. Returns
    ``(status, n_columns)``; ``status`` as in ``learn_ridge``, -2 meaning that ``W``
    has fewer rows than the new number of columns (Python grows it and runs the
    epoch).
    """
    if not accept_rows(X, feature_range):
        return -1, n_columns
    left_over = extend_partitions(addresses, sizes, X, lifetime, excess, path, no_samples,
                                  leaves, n_before, stops)
    if left_over:
        return left_over, n_columns
    n_rows = X.shape[0]
    total = assign_new_columns(addresses, sizes, X.shape[1], n_before, n_columns)
    columns_of_leaves(addresses, sizes, leaves, n_rows, columns)
    if total > W.shape[0]:
        return -2, total
    for i in range(n_rows):
        order[i] = i
    sgd_rows(W[:total], columns[:n_rows], labels, weights, order[:n_rows], 1, eta, alpha,
             loss, scale, rng, scores, grad)
    return 0, total


# ----------------------------------------------------------------- prediction
@kernel
def leaf_columns(addresses, sizes, X, columns):
    """``columns[i]``: the sorted columns (0-based) of the leaves of row ``i``, one per
    tree (``_features.feature_matrix``). Returns False, with nothing written, if
    ``X`` is not finite."""
    if not finite_rows(X):
        return False
    n_features = X.shape[1]
    for t in range(addresses.shape[0]):
        tree = tree_at(addresses, sizes, t, n_features)
        column = int_vector_at(addresses, t, COLUMN_STATS, sizes[t, SIZE_NODES])
        for i in range(X.shape[0]):
            columns[i, t] = column[find_leaf(tree, X[i])] - 1
    _sort_rows(columns, X.shape[0])
    return True


@kernel
def predict_linear(addresses, sizes, X, W, scale, intercept, add_intercept, out, columns):
    """``out[i, k] = (intercept +) sum_t scale * W[column_t(i), k]``, the product of the
    feature map and ``W`` summed in column order (scipy's CSR product). Returns
    False if ``X`` is not finite."""
    if not leaf_columns(addresses, sizes, X, columns):
        return False
    n_trees = addresses.shape[0]
    for i in range(X.shape[0]):
        for k in range(W.shape[1]):
            acc = 0.0
            for s in range(n_trees):
                acc += scale * W[columns[i, s], k]
            out[i, k] = intercept + acc if add_intercept else acc
    return True
