"""Compiled loop of rolling-weight (online) boosting over Mondrian trees.

Oza and Russell's online boosting visits the trees in order for each example. Tree
``t`` only depends on the examples up to the current one and on the example's weight
after trees ``0..t-1``, so processing a mini-batch tree by tree (each tree over all
examples, in order) gives exactly the same model as example by example; this loop
does one tree.
"""

import numpy as np

from ..engine._jit import kernel
from ..engine.growth import plant_root
from ..engine.random import poisson
from ..engine.tree import META_N_NODES, UNBOUNDED
from ..forest._additive import accumulate_new_nodes, add_point, regrow_and_count, room_for_one_point
from ..forest._smoothing import path_buffers, predict_proba_point


@kernel(allocates=True)
def boost_tree(tree, X, keys, point_stats, stats, sample_next, sample_mult, sample_ids,
               start, lam, weights, seen_weight, errors, gamma, lifetime, pause_pure,
               min_samples_split, rng):
    """Train one boosted tree on ``sample_ids[start:]`` and update the example weights.

    For example ``i`` of weight ``lam[i]``: the tree counts it ``k ~ Poisson(lam[i])``
    times; then if the tree predicts it correctly, ``sc += lam[i]`` and
    ``lam[i] *= N / (2 sc)``, otherwise ``sw += lam[i]`` and ``lam[i] *= N / (2 sw)``,
    with ``N`` the number of examples seen so far. ``errors`` holds ``(sc, sw)`` and
    is updated in place.

    With sample weights (``weights[i]``, already scaling the example's statistics),
    the example counts as ``weights[i] * lam[i]`` in ``sc``/``sw`` and ``N`` is the
    total weight seen up to example ``i`` (``seen_weight[i]``); unit weights give
    the rule above exactly.

    Returns the position of the first example not processed (less than the batch
    size when the node capacity may not suffice: grow the tree and call again).
    """
    n_classes = point_stats.shape[1]
    nodes, reals, classes = path_buffers(tree, n_classes)
    return boost_rows(tree, X, keys, point_stats, stats, sample_next, sample_mult,
                      sample_ids, start, lam, weights, seen_weight, errors, gamma, lifetime,
                      pause_pure, min_samples_split, rng, nodes, reals, classes,
                      np.empty(X.shape[1]), np.empty(tree.parent.shape[0], dtype=np.int64),
                      np.empty(n_classes))


@kernel
def boost_rows(tree, X, keys, point_stats, stats, sample_next, sample_mult, sample_ids,
               start, lam, weights, seen_weight, errors, gamma, lifetime, pause_pure,
               min_samples_split, rng, nodes, reals, classes, excess, path, proba):
    """The loop of ``boost_tree`` on given work arrays: ``nodes``, ``reals``,
    ``classes`` as from ``path_buffers`` (at least the tree's capacity + 1 nodes),
    ``excess`` (one per feature), ``path`` (at least the capacity) and ``proba``
    (one per class)."""
    for i in range(start, sample_ids.shape[0]):
        if not room_for_one_point(tree):
            return i
        s = sample_ids[i]
        k = poisson(rng, lam[i])
        sample_mult[s] = k
        if k > 0:
            if tree.meta[META_N_NODES] == 0:
                plant_root(tree, X[s], keys[s], lifetime, True, s, sample_next)
                accumulate_new_nodes(tree, stats, point_stats, sample_next, sample_mult, 0)
            else:
                leaf, must_regrow = add_point(
                    tree, X, keys, point_stats, stats, sample_next, sample_mult, s,
                    np.float64(k), lifetime, True, pause_pure, min_samples_split, rng,
                    excess, path, True)
                if must_regrow:  # room_for_one_point guaranteed the space
                    regrow_and_count(tree, X, keys, point_stats, stats, sample_next,
                                     sample_mult, leaf, lifetime, pause_pure,
                                     min_samples_split, rng)
        correct = False
        if tree.meta[META_N_NODES] > 0:
            for k in range(proba.shape[0]):  # a scalar loop compiles faster
                proba[k] = 0.0
            predict_proba_point(tree, X, stats, X[s], gamma, UNBOUNDED, 1.0, proba, nodes,
                                reals, classes, excess)
            correct = np.argmax(proba) == keys[s]
        if correct:
            errors[0] += weights[i] * lam[i]
            lam[i] *= seen_weight[i] / (2.0 * errors[0])
        else:
            errors[1] += weights[i] * lam[i]
            lam[i] *= seen_weight[i] / (2.0 * errors[1])
    return sample_ids.shape[0]
