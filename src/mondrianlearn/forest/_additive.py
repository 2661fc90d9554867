"""Training kernels for trees whose node statistics are additive.

Mondrian forests keep, in every node, a sum over the node's points of a per-point
vector: a weighted one-hot class vector (classification) or the weighted moments
``(w, w y, w y^2)`` (regression). Both are learned by the same two loops:
``sample_tree`` (batch) and ``extend_tree`` (online). The per-point vectors live in
the forest's sample store, so re-sampling a paused leaf can recompute its statistics.
"""

import numpy as np

from ..engine._jit import kernel
from ..engine.extension import extend_to_leaf, leaf_must_unpause, regrow_leaf
from ..engine.growth import sample_blocks
from ..engine.tree import LEAF, META_MAX_LEAF_POINTS, META_N_NODES


@kernel
def accumulate_new_nodes(tree, stats, point_stats, sample_next, first):
    """Statistics of the nodes with id >= ``first`` (all created by sampling).

    Leaves sum the vectors of their points; internal nodes sum their children,
    which always have larger ids than their parent among freshly sampled nodes.
    """
    for node in range(tree.meta[META_N_NODES] - 1, first - 1, -1):
        stats[node, :] = 0.0
        if tree.left[node] == LEAF:
            s = tree.leaf_head[node]
            while s >= 0:
                stats[node, :] += point_stats[s, :]
                s = sample_next[s]
        else:
            stats[node, :] = stats[tree.left[node], :] + stats[tree.right[node], :]


@kernel
def sample_tree(tree, X, keys, point_stats, stats, sample_next, indices, stack,
                stack_size, lifetime, use_pausing, pause_pure, min_samples_split,
                rng):
    """Batch-sample a tree on the points ``indices`` (resumable, see ``sample_blocks``).

    When every block is sampled, the statistics of all nodes are computed.
    """
    stack_size = sample_blocks(tree, X, keys, sample_next, indices, stack,
                               stack_size, lifetime, use_pausing, pause_pure,
                               min_samples_split, rng)
    if stack_size == 0:
        accumulate_new_nodes(tree, stats, point_stats, sample_next, 0)
    return stack_size


@kernel
def extend_tree(tree, X, keys, point_stats, stats, sample_next, sample_ids, start,
                lifetime, use_pausing, pause_pure, min_samples_split, rng):
    """Extend a tree online with the points ``sample_ids[start:]``, in order.

    Returns the position of the first point not processed: less than
    ``len(sample_ids)`` when the node capacity may not suffice for the next point
    (grow the tree and call again from there).
    """
    capacity = tree.parent.shape[0]
    excess = np.empty(X.shape[1])
    for i in range(start, sample_ids.shape[0]):
        if tree.meta[META_N_NODES] + 2 * tree.meta[META_MAX_LEAF_POINTS] + 6 > capacity:
            return i
        s = sample_ids[i]
        leaf, new_parent, sibling = extend_to_leaf(
            tree, X[s], keys[s], s, sample_next, lifetime, use_pausing, True, rng,
            excess)
        if new_parent >= 0:
            stats[new_parent, :] = stats[sibling, :]
            stats[leaf, :] = 0.0
        node = leaf
        while node >= 0:
            stats[node, :] += point_stats[s, :]
            node = tree.parent[node]
        if use_pausing and leaf_must_unpause(tree, leaf, pause_pure, min_samples_split):
            first = tree.meta[META_N_NODES]
            regrow_leaf(tree, X, keys, sample_next, leaf, lifetime, pause_pure,
                        min_samples_split, rng)
            accumulate_new_nodes(tree, stats, point_stats, sample_next, first)
    return sample_ids.shape[0]
