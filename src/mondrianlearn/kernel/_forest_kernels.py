"""The Mondrian kernel models over all partitions in one compiled call (fast path).

Each kernel loops over the partitions of a
:class:`~mondrianlearn.engine.tree_table.TreeTable` (per-node arrays ``column``,
and ``cell`` for the regressor) and runs the full path's steps in the same order, with the same
compiled pieces, so results are bit-identical:

- extension: ``_features.extend_rows`` per tree (``extend_partition_rows``), rows in
  order; a tree that the full path would grow first, or that runs out of room, is
  left to Python, which finishes it with the full path's loop;
- columns: the leaves made by the call get the next columns, tree by tree and in
  node order (``_features.assign_columns``; older leaves all have a column, and new
  nodes only ever come at the end of the arrays); the regressor's new leaves get
  cells the same way, and its features follow ``_features.assign_feature_columns``;
- the rows' features: the columns of their leaves, sorted per row (the full path's
  CSR rows), and the classifier's SGD epoch on them (``_sweep.sgd_rows``); for the
  regressor, the rows' cells and features, which Python hands to the ridge model
  (``MondrianKernelRegressor._learn_assigned``, shared with the full path);
- prediction: the scores ``intercept + sum scale * W[column]`` summed in column
  order, as scipy's CSR product does.

Work arrays are the estimator's own, allocated once (``FAST_MAX_ROWS`` rows).
"""

import numpy as np

from ..engine._jit import kernel
from ..engine.boxes import find_leaf
from ..engine.storage import FREE_NODES
from ..engine.tree import LEAF, META_N_NODES
from ..engine.tree_table import (
    COLUMN_STATS,
    SIZE_NODES,
    accept_rows,
    finite_rows,
    int_vector_at,
    rng_at,
    tree_at,
)
from ._features import assign_cells, assign_feature_columns, extend_rows
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
        if (n_nodes == 0 or n_nodes + FREE_NODES > capacity  # engine.storage.must_grow
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
    row are distinct: any sort gives numpy's order).

    An insertion sort: a row holds one column per tree, and numba's ``sort`` adds
    seconds of compile time to a first use."""
    for i in range(n_rows):
        for j in range(1, columns.shape[1]):
            value = columns[i, j]
            k = j - 1
            while k >= 0 and columns[i, k] > value:
                columns[i, k + 1] = columns[i, k]
                k -= 1
            columns[i, k + 1] = value


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
def assign_forest(addresses, sizes, n_features, n_before, lifetime, n_cells, n_columns):
    """``MondrianKernelRegressor._assign_trees`` over the table (statistics
    ``column`` then ``cell``): cells for the new leaves, features at ``lifetime``
    of the trees that changed; returns the new numbers of cells and features."""
    for t in range(addresses.shape[0]):
        tree = tree_at(addresses, sizes, t, n_features)
        if tree.meta[META_N_NODES] == n_before[t]:
            continue
        n = sizes[t, SIZE_NODES]
        column = int_vector_at(addresses, t, COLUMN_STATS, n)
        cell = int_vector_at(addresses, t, COLUMN_STATS + 1, n)
        n_cells = assign_cells(tree, cell, n_before[t], n_cells)
        n_columns = assign_feature_columns(tree, column, lifetime, n_columns)
    return n_cells, n_columns


@kernel
def cells_of_leaves(addresses, sizes, leaves, n_rows, cells, columns):
    """The cells and features (in tree order) of the leaves ``leaves[:, i]`` of each
    row ``i`` (``MondrianKernelRegressor._rows_of_leaves``)."""
    for t in range(addresses.shape[0]):
        n = sizes[t, SIZE_NODES]
        column = int_vector_at(addresses, t, COLUMN_STATS, n)
        cell = int_vector_at(addresses, t, COLUMN_STATS + 1, n)
        for i in range(n_rows):
            cells[i, t] = cell[leaves[t, i]] - 1
            columns[i, t] = column[leaves[t, i]] - 1


@kernel
def accept_batch(X, y, feature_range):
    """The checks of ``MondrianKernelRegressor``'s validated ``partial_fit`` on the
    values (finite ``X`` and ``y``, no range overflow); widens ``feature_range``
    only when the rows pass."""
    for i in range(y.shape[0]):
        if not np.isfinite(y[i]):
            return False
    return accept_rows(X, feature_range)


@kernel
def learn_cells(addresses, sizes, X, start, stop, lifetime, feature_lifetime, n_cells,
                n_columns, max_cells, excess, path, no_samples, leaves, n_before, cells,
                columns):
    """The trees' part of ``MondrianKernelRegressor.partial_fit`` for the rows
    ``X[start:stop]``: extend every partition up to ``lifetime`` with one row after
    the other (each row in every tree before the next row), stopping after the row
    that takes the number of cells past ``max_cells``; then give the new leaves
    cells and the changed trees their features at ``feature_lifetime``, and write
    the cells and features (in tree order) of the rows learned to ``cells`` and
    ``columns`` (from row 0).

    The trees must have room for two nodes per row. Returns ``(end, n_cells,
    n_columns)``: the rows learned are ``X[start:end]``.
    """
    n_trees = addresses.shape[0]
    n_features = X.shape[1]
    for t in range(n_trees):
        n_before[t] = tree_at(addresses, sizes, t, n_features).meta[META_N_NODES]
    count = n_cells
    end = stop
    for i in range(start, stop):
        for t in range(n_trees):
            tree = tree_at(addresses, sizes, t, n_features)
            before = tree.meta[META_N_NODES]
            extend_rows(tree, X[: i + 1], i, lifetime, rng_at(addresses, t), leaves[t],
                        excess, path, no_samples)
            count += (tree.meta[META_N_NODES] - before) // 2
        if count > max_cells:
            end = i + 1
            break
    n_cells, n_columns = assign_forest(addresses, sizes, n_features, n_before,
                                       feature_lifetime, n_cells, n_columns)
    cells_of_leaves(addresses, sizes, leaves[:, start:end], end - start, cells, columns)
    return end, n_cells, n_columns


@kernel
def learn_sgd(addresses, sizes, X, labels, weights, feature_range, lifetime, n_columns,
              W, eta, alpha, loss, scale, rng, order, scores, grad, excess, path,
              no_samples, leaves, n_before, stops, columns):
    """``MondrianKernelClassifier.partial_fit`` in one call: one SGD epoch on the rows
    after extending the partitions.

    ``W`` holds the weights in its first ``n_columns`` rows and zeros below. Returns
    ``(status, n_columns)``. ``status``: -1 if the rows are refused (non-finite
    ``X``, range overflow; nothing changed); ``k > 0`` if ``k`` trees are left to
    Python (see ``extend_partitions``); -2 if ``W`` has fewer rows than the new
    number of columns (Python grows it and runs the epoch); 0 when done.
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
