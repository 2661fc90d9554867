"""Saved trees without what their stored points give back: boxes and sums.

In a tree whose leaves link their points in the forest's sample store (Mondrian
forests), two kinds of per-node arrays are functions of the points:

- a node's box is the bounding box of the points below it (:mod:`.boxes`): the box
  of a leaf spans its linked points, the box of a split node its children's boxes;
- additive statistics (``forest._additive``: class counts, weighted moments) are
  the sum, over the points below the node, of each point's vector in the store
  times its multiplicity in the tree.

These arrays are most of a saved forest (boxes take ``2 * n_features`` float32 per
node, class counts one per class), so a forest is saved without them and loading
computes them again, in one pass over the nodes. Minimum and maximum are exact in
floating point, and commute with the outward rounding of stored boxes; sums are
exact when their terms are small integers (unit weights, Poisson multiplicities),
not in general (weighted targets). So an array is left
out only after computing it again from the points gave it back bit for bit; else it
is saved as it is. The loaded forest is therefore the fitted one exactly.
"""

import numpy as np

from ._jit import kernel
from .boxes import set_point_box, widen_box
from .layout import depth_first_order
from .tree import BOX_DTYPE, LEAF, META_ROOT, TreeState, node_boxes


@kernel
def boxes_from_points(left, right, leaf_head, sample_next, order, X, lower, upper):
    """Fill the boxes of the nodes ``order`` (depth-first, parents before
    children) with the bounding boxes of the points linked in their leaves.

    Returns False, with the boxes partly filled, when a leaf links no point or a
    point id lies outside ``X`` (the boxes do not follow from the points then).
    """
    n_samples = X.shape[0]
    for j in range(order.shape[0] - 1, -1, -1):
        node = order[j]
        if left[node] == LEAF:
            s = leaf_head[node]
            if s < 0 or s >= n_samples:
                return False
            set_point_box(lower, upper, node, X[s])
            steps = 0
            s = sample_next[s]
            while s >= 0:
                steps += 1
                if s >= n_samples or steps > n_samples:  # a broken or cyclic list
                    return False
                widen_box(lower, upper, node, X[s])
                s = sample_next[s]
        else:
            a, b = left[node], right[node]
            for d in range(X.shape[1]):
                lower[node, d] = min(lower[a, d], lower[b, d])
                upper[node, d] = max(upper[a, d], upper[b, d])
    return True


@kernel
def sums_from_points(left, right, leaf_head, sample_next, sample_mult, order,
                     point_stats, out):
    """Fill ``out`` at the nodes ``order`` with the sums of ``point_stats`` over the
    points below each node, each times its multiplicity (``sample_mult``; empty:
    one). Returns False when a point id lies outside ``point_stats``."""
    n_samples = point_stats.shape[0]
    n_stats = point_stats.shape[1]
    for j in range(order.shape[0] - 1, -1, -1):
        node = order[j]
        if left[node] == LEAF:
            for k in range(n_stats):
                out[node, k] = 0.0
            s = leaf_head[node]
            steps = 0
            while s >= 0:
                steps += 1
                if s >= n_samples or steps > n_samples:
                    return False
                m = 1.0 if sample_mult.shape[0] == 0 else sample_mult[s]
                for k in range(n_stats):
                    out[node, k] += m * point_stats[s, k]
                s = sample_next[s]
        else:
            a, b = left[node], right[node]
            for k in range(n_stats):
                out[node, k] = out[a, k] + out[b, k]
    return True


def _order(tree):
    """Depth-first order of the tree's nodes, or None when the nodes cannot be
    computed from linked points (no links kept, or nodes off the root)."""
    n = tree.n_nodes
    a = tree.arrays
    if n == 0 or not tree.keep_samples or tree.sample_next.shape[0] == 0:
        return None
    order = depth_first_order(a.left, a.right, a.meta[META_ROOT], n)
    return order if order.shape[0] == n else None


def _computed_boxes(tree, order, X):
    a = tree.arrays
    n = tree.n_nodes
    lower = np.empty((n, a.lower.shape[1]), dtype=BOX_DTYPE)
    upper = np.empty((n, a.lower.shape[1]), dtype=BOX_DTYPE)
    if not boxes_from_points(a.left, a.right, a.leaf_head, tree.sample_next, order, X,
                             lower, upper):
        return None
    return lower, upper


def _computed_sums(tree, order, point_stats):
    a = tree.arrays
    out = np.empty((tree.n_nodes, point_stats.shape[1]))
    if not sums_from_points(a.left, a.right, a.leaf_head, tree.sample_next,
                            tree.sample_mult, order, point_stats, out):
        return None
    return out


def without_derived(tree, X, point_stats=None, sums=None):
    """A copy of ``tree`` to pickle without the arrays that the stored points give
    back exactly, or ``tree`` itself when none does.

    Parameters
    ----------
    tree : TreeState
    X : ndarray of shape (n_points, n_features)
        The rows of the forest's sample store.
    point_stats : ndarray of shape (n_points, n_stats), default=None
        Each stored point's additive statistics vector.
    sums : str, default=None
        Name of the tree's node statistics array that sums ``point_stats``.

    Returns
    -------
    tree : TreeState
        The copy shares the tree's arrays (cut to its nodes, as ``TreeState``
        saves them) except those left out, which have no rows.
    """
    order = _order(tree)
    if order is None:
        return tree
    n = tree.n_nodes
    a = tree.arrays
    fields = {f: getattr(a, f)[:n] for f in a._fields if f != "meta"}
    for f in ("lower", "upper"):  # rows past the box rows in use were never written
        fields[f] = fields[f].copy()
        fields[f][tree.n_boxes:] = 0
    stats = {k: v[:n] for k, v in tree.node_stats.items()}
    boxes = _computed_boxes(tree, order, X)
    left_out = False
    if boxes is not None:
        stored = node_boxes(a, X, n)  # by node (a box row may be a point)
    if boxes is not None and (np.array_equal(boxes[0], stored[0])
                              and np.array_equal(boxes[1], stored[1])):
        fields["lower"] = fields["upper"] = np.empty((0, a.lower.shape[1]), dtype=BOX_DTYPE)
        left_out = True
    if sums is not None and stats.get(sums) is not None and stats[sums].ndim == 2:
        computed = _computed_sums(tree, order, point_stats)
        if computed is not None and np.array_equal(computed, stats[sums]):
            stats[sums] = np.empty((0, stats[sums].shape[1]))
            left_out = True
    if not left_out:
        return tree
    copy = object.__new__(TreeState)
    copy.__dict__.update(tree.__dict__)
    copy.__dict__["arrays"] = type(a)(meta=a.meta, **fields)
    copy.__dict__["node_stats"] = stats
    return copy


def restore_derived(tree, X, point_stats=None, sums=None):
    """Give a tree loaded from :func:`without_derived` the arrays it was saved
    without (arrays that were saved are left as they are); same parameters."""
    a = tree.arrays
    n = tree.n_nodes
    missing_sums = (sums is not None and tree.node_stats.get(sums) is not None
                    and tree.node_stats[sums].shape[0] == 0 and n > 0)
    missing_boxes = a.lower.shape[0] == 0 and n > 0
    if not (missing_boxes or missing_sums):
        return
    order = _order(tree)
    capacity = tree.capacity
    if missing_boxes:
        boxes = None if order is None else _computed_boxes(tree, order, X)
        if boxes is None:
            raise ValueError("A saved tree without boxes does not match its sample "
                             "store: the pickle is damaged.")
        lower = np.zeros((capacity, a.lower.shape[1]), dtype=BOX_DTYPE)
        upper = np.zeros((capacity, a.lower.shape[1]), dtype=BOX_DTYPE)
        rows = a.box_row[:n]
        own = rows >= 0  # the others are leaves of one point, whose box is its point's
        lower[rows[own]], upper[rows[own]] = boxes[0][own], boxes[1][own]
        tree.arrays = a._replace(lower=lower, upper=upper)
    if missing_sums:
        computed = None if order is None else _computed_sums(tree, order, point_stats)
        if computed is None:
            raise ValueError("A saved tree without its statistics does not match its "
                             "sample store: the pickle is damaged.")
        out = np.zeros((capacity, computed.shape[1]))
        out[:n] = computed
        tree.node_stats[sums] = out
