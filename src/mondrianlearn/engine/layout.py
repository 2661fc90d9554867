"""Node order in memory: renumbering a tree depth-first.

Online learning appends nodes in the order they are created, so the nodes of a
root-to-leaf path end up scattered over the arrays, and so do the rows of the model
statistics that a prediction reads along it. Renumbered in depth-first preorder
(a node, then its left subtree, then its right subtree), every parent precedes its
children, the left child follows its parent directly and each subtree is one
contiguous range: a walk from the root reads increasing addresses, and a pass over
the whole tree in that order streams through memory.

Renumbering changes node ids only, not the tree: no computation depends on ids,
so predictions and further learning are bit-identical. Models opt in where they
hold no node ids across the call (AMF renumbers when its trees grow and when
``fit`` trims them); the Mondrian kernel does not renumber, since its features are
leaf ids.
"""

import numpy as np

from ._jit import shared_kernel

RENUMBER_FROM_NODES = 512
"""Smallest tree that a model renumbers outside growth: a copy of a smaller tree
costs more than its scattered nodes do (AMF re-learning its first rows in new
feature units, one row at a time, spent most of its time renumbering small trees)."""


@shared_kernel(allocates=True)
def depth_first_order(left, right, root, n_nodes):
    """Node ids in depth-first preorder from ``root`` (left subtree first).

    Returns an int64 array with one entry per node reachable from ``root`` (all
    ``n_nodes`` of them in a well-formed tree).
    """
    order = np.empty(n_nodes, dtype=np.int64)
    stack = np.empty(n_nodes + 1, dtype=np.int64)
    stack[0] = root
    size = 1
    count = 0
    while size > 0 and count < n_nodes:
        size -= 1
        node = stack[size]
        order[count] = node
        count += 1
        if left[node] >= 0:  # an internal node (a leaf's children are -1)
            stack[size] = right[node]
            stack[size + 1] = left[node]
            size += 2
    return order[:count]


def renumbered_ids(order, n_nodes):
    """``new_id[old]`` for the node order ``order`` (``order[new] = old``)."""
    new_id = np.full(n_nodes, -1, dtype=np.int64)
    new_id[order] = np.arange(order.shape[0], dtype=np.int64)
    return new_id


def map_ids(ids, new_id):
    """``ids`` with every non-negative entry replaced by ``new_id[entry]``."""
    out = ids.copy()
    valid = out >= 0
    out[valid] = new_id[out[valid]]
    return out
