"""Paths of test points: leaves, depths and branch-off probabilities.

For a test point ``x`` and a node ``j`` on its root-to-leaf path, ``eta_j(x)`` is the
total distance of ``x`` outside the box of ``j`` and ``Delta_j = tau_j -
tau_parent(j)``. Under the Mondrian process extended to ``x``, the probability that
``x`` branches off (is separated by a new cut) just above ``j`` is
``p_j = 1 - exp(-Delta_j * eta_j)``, given that it did not branch off higher up.
"""

import numpy as np

from ._jit import kernel
from .extension import box_excess
from .tree import LEAF, META_ROOT


@kernel
def find_leaf(tree, x):
    """The leaf whose cell contains ``x`` (following thresholds only)."""
    node = tree.meta[META_ROOT]
    while tree.left[node] != LEAF:
        if x[tree.feature[node]] <= tree.threshold[node]:
            node = tree.left[node]
        else:
            node = tree.right[node]
    return node


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


@kernel
def branch_off_path(tree, x, max_depth, nodes, etas, deltas, probs, excess):
    """Walk ``x`` from the root to its leaf, recording the branch-off quantities.

    Parameters
    ----------
    tree : TreeArrays
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
    node = tree.meta[META_ROOT]
    t_parent = 0.0
    depth = 0
    while True:
        eta = box_excess(tree, node, x, excess)
        delta = tree.time[node] - t_parent
        nodes[depth] = node
        etas[depth] = eta
        deltas[depth] = delta
        probs[depth] = branch_off_probability(delta, eta)
        depth += 1
        if tree.left[node] == LEAF or depth > max_depth:
            return depth
        t_parent = tree.time[node]
        if x[tree.feature[node]] <= tree.threshold[node]:
            node = tree.left[node]
        else:
            node = tree.right[node]


@kernel
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
