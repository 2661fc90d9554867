"""A read-only, scikit-learn-like view of one fitted Mondrian tree."""

from dataclasses import dataclass

import numpy as np

from ..engine.paths import tree_depth
from ..engine.tree import META_ROOT


def _frozen(array):
    out = np.array(array, copy=True)
    out.flags.writeable = False
    return out


@dataclass(frozen=True)
class MondrianTreeView:
    """Arrays describing a fitted Mondrian tree, indexed by node id.

    Attributes
    ----------
    node_count : int
    root : int
        Id of the root (not always 0: online splits can be inserted above it).
    children_left, children_right : ndarray of int
        ``-1`` at leaves.
    parent : ndarray of int
        ``-1`` at the root.
    feature : ndarray of int
        Split feature (``-1`` at leaves).
    threshold : ndarray of float
        Points with ``x[feature] <= threshold`` go left (in the units of ``X``).
    split_time : ndarray of float
        Time ``tau`` of each split; at leaves, the lifetime (``inf`` by default).
        Times are those of the process on the scaled features
        (``X / feature_scale_``, see the estimators' ``feature_scale``).
    lower, upper : ndarray of shape (node_count, n_features)
        Bounding box of the training points in each node (in the units of ``X``).
    n_node_samples : ndarray of int
        Number of training points in each node.
    paused : ndarray of bool
        Leaves paused by the pausing rule.
    value : ndarray
        Node statistics: weighted class counts (classifier) or mean and variance of
        the targets (regressor).
    posterior : ndarray or None
        Smoothed class probabilities of each node (classifier).
    max_depth : int
    """

    node_count: int
    root: int
    children_left: np.ndarray
    children_right: np.ndarray
    parent: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    split_time: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    n_node_samples: np.ndarray
    paused: np.ndarray
    value: np.ndarray
    posterior: object
    max_depth: int

    @classmethod
    def from_state(cls, tree, value, posterior=None, units=None, points=None):
        """The view of a :class:`~mondrianlearn.engine.tree.TreeState`; ``units``
        (the model's ``_units``, or None) map its coordinates back to the units of
        ``X`` (``utils.feature_scale.raw_coordinates``); ``points``: the model's
        sample store's points (the boxes of its leaves of one point)."""
        from ..engine.tree import node_boxes
        from ..utils.feature_scale import raw_coordinates

        a = tree.arrays
        n = tree.n_nodes
        lower, upper = node_boxes(a, points, n)
        lower, upper, threshold = raw_coordinates(lower, upper, a.threshold[:n],
                                                  a.feature[:n], units)
        return cls(
            node_count=n,
            root=int(a.meta[META_ROOT]),
            children_left=_frozen(a.left[:n]),
            children_right=_frozen(a.right[:n]),
            parent=_frozen(a.parent[:n]),
            feature=_frozen(a.feature[:n]),
            threshold=_frozen(threshold),
            split_time=_frozen(a.time[:n]),
            lower=_frozen(lower),
            upper=_frozen(upper),
            n_node_samples=_frozen(a.n_points[:n]),
            paused=_frozen(a.paused[:n]),
            value=_frozen(value[:n]),
            posterior=None if posterior is None else _frozen(posterior[:n]),
            max_depth=int(tree_depth(a)),
        )

    @property
    def n_leaves(self):
        return int(np.sum(self.children_left == -1))
