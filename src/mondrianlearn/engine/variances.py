"""Predictive variances of the nodes of a regression tree.

A node's targets give a variance only when it holds several points; a leaf holding
one point (the usual leaf of a Mondrian tree restricted to the data) gives none, and
a leaf of identical points gives 0. Both forests' regressors (Mondrian forest, AMF)
therefore give each node the posterior mean of its variance under a conjugate prior
(scaled inverse chi-square) centred on its parent's variance times a decay, worth
``prior_weight`` points::

    variance[v] = (sq_dev[v] + prior_weight * decay * variance[parent]) / (total[v] + prior_weight)

with ``sq_dev`` the sum of squared deviations of the node's targets from their mean
and ``total`` the number of points it counts for: the (weighted) number of targets
in ``AMFRegressor``, their number less one, the degrees of freedom of ``sq_dev``, in
``MondrianForestRegressor`` (a leaf of one point then takes its prior). The root's
prior is given (the forest's estimate of the targets' variance).

The decay is how much smaller a cell's variance is than its parent's, measured on
the tree itself (empirical Bayes): :func:`variance_decay`.
"""

import numpy as np

from ._jit import kernel
from .layout import depth_first_order
from .tree import META_N_NODES, META_ROOT

MIN_POINTS_PER_CHILD = 4.0
"""A split measures the decay only when both its children hold at least this many
points: below, the variances of the children are too noisy to compare."""

DECAY_EXPONENT = 2.0
"""The prior of a node's variance is its parent's times ``rho ** DECAY_EXPONENT``,
where ``rho`` is the typical ratio measured on the splits of larger cells (see
:func:`variance_decay`)."""


@kernel
def variance_decay(tree, total, sq_dev):
    """Factor by which the prior of a node's variance is smaller than its parent's.

    ``rho`` is the geometric mean, over the splits whose two children each hold at
    least ``MIN_POINTS_PER_CHILD`` points, of the ratio of the children's pooled
    variance to the parent's (both unbiased: sums of squares over ``n - 1``); splits
    where either is 0 (identical targets) are left out. The geometric mean is the
    right average for a prior that is multiplied by the ratio level after level.
    Returns ``min(rho, 1) ** DECAY_EXPONENT``: the small cells below, where the
    ratio cannot be measured, are taken to lose variance twice as fast (in log
    scale) as the larger ones. The exponent is a measured choice, not derived: with
    ``rho`` itself, 0.99 of the test targets of the UCI set energy fell within two
    of ``AMFRegressor``'s predictive standard deviations, 0.97 with ``rho ** 2`` (10
    splits x 3 forests; the other shared regression sets:
    ``benchmarks/results/bench_calibration.md``). 1 when no split qualifies (no
    evidence of a decay).
    """
    n_nodes = tree.meta[META_N_NODES]
    log_sum = 0.0
    count = 0
    for node in range(n_nodes):
        left = tree.left[node]
        if left < 0:
            continue
        right = tree.right[node]
        n_left = total[left]
        n_right = total[right]
        if n_left < MIN_POINTS_PER_CHILD or n_right < MIN_POINTS_PER_CHILD:
            continue
        children = sq_dev[left] + sq_dev[right]
        if children <= 0.0 or sq_dev[node] <= 0.0:
            continue
        ratio = (children / (n_left + n_right - 2.0)) / (sq_dev[node] / (total[node] - 1.0))
        log_sum += np.log(ratio)
        count += 1
    if count == 0:
        return 1.0
    rho = min(np.exp(log_sum / count), 1.0)
    return rho ** DECAY_EXPONENT


@kernel(allocates=True)
def shrunk_variances(tree, total, sq_dev, root_prior, prior_weight, decay, out):
    """Posterior mean of every node's variance into ``out`` (see the module
    docstring), computed from the root down; ``root_prior`` is the root's prior
    variance. A node's variance is positive whenever ``root_prior`` is."""
    n_nodes = tree.meta[META_N_NODES]
    if n_nodes == 0:
        return
    for node in depth_first_order(tree.left, tree.right, tree.meta[META_ROOT], n_nodes):
        parent = tree.parent[node]
        prior = decay * out[parent] if parent >= 0 else root_prior
        out[node] = (sq_dev[node] + prior_weight * prior) / (total[node] + prior_weight)
