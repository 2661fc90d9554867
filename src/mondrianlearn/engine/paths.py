"""Paths of test points: leaves, depths and branch-off probabilities.

For a test point ``x`` and a node ``j`` on its root-to-leaf path, ``eta_j(x)`` is the
total distance of ``x`` outside the box of ``j`` and ``Delta_j = tau_j -
tau_parent(j)``. Under the Mondrian process extended to ``x``, the probability that
``x`` branches off (is separated by a new cut) just above ``j`` is
``p_j = 1 - exp(-Delta_j * eta_j)``, given that it did not branch off higher up.
"""

import numpy as np

from ._jit import kernel
from .boxes import deepest_holding, find_leaf, node_box_excess, record_path  # noqa: F401
from .tree import LEAF, META_ROOT


@kernel
def apply_tree(tree, X, out):
    """Leaf id of every row of ``X`` into ``out``."""
    for i in range(X.shape[0]):
        out[i] = find_leaf(tree, X[i])


@kernel
def branch_off_probability(delta, eta):
    """``1 - exp(-delta * eta)`` with the limits ``eta = 0`` and ``delta = inf``."""
    if eta <= 0.0 or delta <= 0.0:
        return 0.0
    if np.isinf(delta) or np.isinf(eta):
        return 1.0
    return -np.expm1(-delta * eta)


@kernel(inline=True)
def branch_off_path(tree, points, x, max_depth, nodes, etas, deltas, probs, excess):
    """Walk ``x`` from the root to its leaf, recording the branch-off quantities.

    Parameters
    ----------
    tree : TreeArrays
    points : float64 array (n_store, n_features)
        The sample store's points, whose boxes are those of the leaves of one point
        (``engine.boxes``); None for a tree that keeps no points.
    x : float64 array (n_features,)
    max_depth : int
        The walk stops at this depth (the root has depth 0); the last node then
        acts as the leaf.
    nodes : int64 array
        Output: node ids of the path, root first.
    etas, deltas, probs : float64 arrays
        Output: ``eta_j(x)``, ``Delta_j`` and ``p_j`` for each node of the path.
    excess : float64 array (n_features,)
        Work space.

    Returns
    -------
    length : int
        Number of nodes on the path.
    """
    m = record_path(tree.left, tree.right, tree.feature, tree.threshold,
                    tree.meta[META_ROOT], x, nodes,
                    min(max_depth + 1, nodes.shape[0]))
    # x cannot branch off down to nodes[holding]
    holding = deepest_holding(tree.lower, tree.upper, tree.box_row, tree.leaf_head, points,
                              x, nodes, m)
    t_parent = 0.0
    for j in range(m):
        node = nodes[j]
        eta = 0.0
        if j > holding:
            eta = node_box_excess(tree.lower, tree.upper, tree.box_row, tree.leaf_head,
                                  points, node, x, excess)
        delta = tree.time[node] - t_parent
        etas[j] = eta
        deltas[j] = delta
        probs[j] = branch_off_probability(delta, eta)
        t_parent = tree.time[node]
    return m


@kernel(allocates=True)
def tree_depth(tree):
    """Largest depth of a leaf (root has depth 0)."""
    n = tree.meta[0]
    depth = np.zeros(n, dtype=np.int64)
    root = tree.meta[META_ROOT]
    stack = np.empty(n + 1, dtype=np.int64)
    stack[0] = root
    size = 1
    best = 0
    while size > 0:
        size -= 1
        node = stack[size]
        if tree.left[node] != LEAF:
            for child in (tree.left[node], tree.right[node]):
                depth[child] = depth[node] + 1
                if depth[child] > best:
                    best = depth[child]
                stack[size] = child
                size += 1
    return best
