"""Hierarchical smoothing of class counts and Mondrian forest predictions.

Classification (MF paper, section 4 and appendix B): a hierarchy of normalized
stable processes with discount ``d_j = exp(-gamma * Delta_j)``, approximated by
interpolated Kneser-Ney; a test point outside the training boxes branches off above
some node of its path, and the prediction integrates over where (expected discount
of the new node). A leaf that is never cut (infinite lifetime: a paused leaf of one
label, identical points, a single point) has an infinite ``Delta``, where the
paper's discount is 0; it gets ``NEVER_CUT_DISCOUNT`` instead (see
``node_discount``). Regression (scikit-garden): the same branch-off weights mix the
means and variances of the nodes on the path, the variances shrunk towards the
parent's (``engine.variances``); ``noise_bound`` bounds the targets' noise from the
tree's finest cells.
"""

import numpy as np

from ..engine._jit import borrowed, inline_kernel, kernel
from ..engine.paths import branch_off_path
from ..engine.tree import LEAF, META_N_NODES, META_ROOT, borrowed_tree
from ..engine.variances import shrunk_variances, variance_decay

NEVER_CUT_DISCOUNT = 0.5
"""Discount of a node whose lifetime ``Delta`` is infinite (see ``node_discount``)."""

VARIANCE_PRIOR_WEIGHT = 1.25
"""Weight, in points, of the prior of a node's variance (``engine.variances``) in
``MondrianForestRegressor``."""


@kernel
def node_discount(delta, gamma):
    """Discount ``d = exp(-gamma * Delta)`` of a node in the smoothing hierarchy.

    With an infinite ``Delta`` (a leaf never cut: infinite lifetime) the paper's
    discount is 0, under which a normalized stable process is a single atom: the
    leaf would give its own labels probability 1 (any class it has not seen,
    probability 0) from a single point. The paper leaves this case open (the
    lifetime is infinite because nothing is left to cut, not because the leaf's
    distribution is known), so such a leaf's discount gets a uniform prior on
    ``[0, 1]``; the smoothed prediction is linear in the discount, so the
    prediction averaged over that prior is the one with its mean,
    ``NEVER_CUT_DISCOUNT``. A leaf of one point then predicts
    ``(1 + G_parent(k)) / 2`` for its label ``k``. With ``gamma = 0`` every
    discount is 1.
    """
    if np.isinf(delta):
        return NEVER_CUT_DISCOUNT if gamma > 0.0 else 1.0
    return np.exp(-gamma * delta)


@kernel(allocates=True)
def preorder(tree):
    """Node ids in pre-order (every parent before its children)."""
    n = tree.meta[META_N_NODES]
    order = np.empty(n, dtype=np.int64)
    stack = np.empty(n + 1, dtype=np.int64)
    stack[0] = tree.meta[META_ROOT]
    size = 1
    k = 0
    while size > 0:
        size -= 1
        node = stack[size]
        order[k] = node
        k += 1
        if tree.left[node] != LEAF:
            stack[size] = tree.right[node]
            stack[size + 1] = tree.left[node]
            size += 2
    return order[:k]


@kernel
def ikn_counts_row(tree, counts, node, out):
    """Interpolated Kneser-Ney counts of ``node`` into ``out``.

    A leaf keeps its class counts; an internal node counts one "table" per class
    and child, ``sum over children of min(c_child,k, 1)``. With integer counts
    ``min(c, 1)`` is the same whether ``c`` is a child's raw or IKN count (both are
    at least one exactly when the class is present below it), so the raw counts of
    the children suffice and no pass over the whole tree is needed.
    """
    n_classes = counts.shape[1]
    if tree.left[node] == LEAF:
        for k in range(n_classes):
            out[k] = counts[node, k]
    else:
        a = tree.left[node]
        b = tree.right[node]
        for k in range(n_classes):
            out[k] = min(counts[a, k], 1.0) + min(counts[b, k], 1.0)


@kernel
def _count_sums(ikn):
    """``(c, t)``: the total of a node's IKN counts and its number of tables
    ``sum_k min(c_k, 1)``."""
    total = 0.0
    tables = 0.0
    for k in range(ikn.shape[0]):
        total += ikn[k]
        tables += min(ikn[k], 1.0)
    return total, tables


@kernel
def smooth_counts(ikn, discount, base, out):
    """``out(k) = (c_k - d t_k + d t G_base(k)) / c`` with ``t_k = min(c_k, 1)``.

    ``out`` may alias ``base``. A node without counts returns ``base``.
    """
    n_classes = ikn.shape[0]
    total, tables = _count_sums(ikn)
    if total <= 0.0:
        for k in range(n_classes):
            out[k] = base[k]
        return
    for k in range(n_classes):
        c = ikn[k]
        out[k] = (c - discount * min(c, 1.0) + discount * tables * base[k]) / total


@kernel
def _branch_and_stay(ikn, branch_discount, discount, weight, posterior, out):
    """``smooth_counts`` twice over one node's counts: add ``weight`` times the
    posterior of a new node branching off above it (``branch_discount``) to ``out``,
    then smooth ``posterior`` in place with the node's own ``discount``. The same
    arithmetic as the two calls, with the counts' sums taken once."""
    n_classes = ikn.shape[0]
    total, tables = _count_sums(ikn)
    if total <= 0.0:
        for k in range(n_classes):
            out[k] += weight * posterior[k]
        return
    for k in range(n_classes):
        c = ikn[k]
        base = posterior[k]
        out[k] += weight * ((c - branch_discount * min(c, 1.0)
                             + branch_discount * tables * base) / total)
        posterior[k] = (c - discount * min(c, 1.0) + discount * tables * base) / total


@kernel(allocates=True)
def ikn_posterior(tree, counts, gamma, posterior):
    """Posterior mean ``G_j`` of every node (used to inspect a tree).

    ``G_j(k) = (c_jk - d_j t_jk + d_j t_j G_parent(j)(k)) / c_j`` from the root
    down, with discount ``d_j = exp(-gamma * Delta_j)`` (``node_discount``) and
    ``G_parent(root)`` uniform.
    """
    order = preorder(tree)
    n_classes = counts.shape[1]
    ikn = np.empty(n_classes)
    uniform = np.full(n_classes, 1.0 / n_classes)
    for i in range(order.shape[0]):
        node = order[i]
        parent = tree.parent[node]
        t_parent = 0.0 if parent < 0 else tree.time[parent]
        discount = node_discount(tree.time[node] - t_parent, gamma)
        ikn_counts_row(tree, counts, node, ikn)
        base = uniform if parent < 0 else posterior[parent]
        smooth_counts(ikn, discount, base, posterior[node])


@kernel
def expected_discount(eta, delta, gamma, p, discount):
    """Mean discount of a node created by branching off, over its split time.

    The split time of the new node is Exponential(eta) truncated to ``[0, delta]``,
    and its discount is ``exp(-gamma * time)``: the mean is ``eta / (eta + gamma)
    * (1 - exp(-(eta + gamma) * delta)) / p``. ``p`` is the branch-off probability
    ``1 - exp(-eta * delta)`` (the truncation's normaliser) and ``discount`` the
    node's own ``exp(-gamma * delta)`` (``node_discount``), which the caller has:
    with ``q = 1 - discount``, ``1 - exp(-(eta + gamma) * delta) = p + q (1 - p)``,
    a sum of non-negative terms, as accurate as the exponential it replaces (one
    of the three a node of a prediction path cost; ``q`` is computed with ``expm1``
    where ``1 - discount`` would lose digits).
    """
    if np.isinf(eta):
        return 1.0  # cut off at once: the new node's split time is 0
    ratio = eta / (eta + gamma)
    if np.isinf(delta):
        return ratio
    if discount > 0.5:  # gamma * delta below log 2: 1 - discount loses digits
        q = -np.expm1(-gamma * delta)
    else:
        q = 1.0 - discount
    return ratio * (p + q * (1.0 - p)) / p


@kernel(allocates=True)
def path_buffers(tree, n_classes):
    """Work space for ``predict_proba_point`` on a tree of at most its capacity."""
    capacity = tree.parent.shape[0] + 1
    nodes = np.empty(capacity, dtype=np.int64)
    reals = np.empty((3, capacity))
    classes = np.empty((3, n_classes))
    return nodes, reals, classes


@kernel(inline=True)
def predict_proba_point(tree, points, counts, x, gamma, max_depth, scale, out, nodes, reals,
                        classes, excess):
    """Add ``scale`` times the class probabilities of one tree at ``x`` to ``out``.

    Walking down the path of ``x``: with probability ``p_j`` (given it has not yet
    branched off) ``x`` branches off above node ``j`` into a new node whose
    discount is the expected one, smoothing ``j``'s counts towards the parent's
    posterior; otherwise it goes on, and at the end of the path it takes the
    posterior of the last node. Posteriors are computed along the path. The work
    arrays come from ``path_buffers``.
    """
    n_classes = counts.shape[1]
    etas = reals[0]
    deltas = reals[1]
    probs = reals[2]
    ikn = classes[0]
    posterior = classes[2]
    length = branch_off_path(tree, points, x, max_depth, nodes, etas, deltas, probs, excess)
    for k in range(n_classes):
        posterior[k] = 1.0 / n_classes
    stay = scale
    for m in range(length):
        ikn_counts_row(tree, counts, nodes[m], ikn)
        p = probs[m]
        discount = node_discount(deltas[m], gamma)
        if p > 0.0:
            d = expected_discount(etas[m], deltas[m], gamma, p, discount)
            _branch_and_stay(ikn, d, discount, stay * p, posterior, out)
            stay *= 1.0 - p
            if stay == 0.0:
                # x has branched off for sure (p = 1 to double precision): the
                # nodes below add zeros, and the last posterior has weight 0
                return
        else:
            smooth_counts(ikn, discount, posterior, posterior)
    for k in range(n_classes):
        out[k] += stay * posterior[k]


@kernel(allocates=True)
def predict_proba_tree(tree, points, counts, X, gamma, max_depth, scale, out):
    """Add ``scale`` times the class probabilities of one tree to ``out`` (all rows)."""
    nodes, reals, classes = path_buffers(tree, counts.shape[1])
    _proba_rows(tree, points, counts, X, gamma, max_depth, scale, out, nodes, reals, classes,
                np.empty(X.shape[1]))


@kernel(inline=True)
def _proba_rows(tree, points, counts, X, gamma, max_depth, scale, out, nodes, reals, classes,
                excess):
    """The loop of ``predict_proba_tree`` over borrowed arrays (see
    ``engine._jit.borrowed``)."""
    tree = borrowed_tree(tree)
    counts, X, out = borrowed(counts), borrowed(X), borrowed(out)
    nodes, reals, classes = borrowed(nodes), borrowed(reals), borrowed(classes)
    excess = borrowed(excess)
    for i in range(X.shape[0]):
        predict_proba_point(tree, points, counts, X[i], gamma, max_depth, scale, out[i], nodes,
                            reals, classes, excess)


@kernel(allocates=True)
def predict_moments_tree(tree, points, stats, variances, X, max_depth, out_mean, out_within,
                         out_spread):
    """Predictive mean and the two parts of the variance of one tree.

    ``stats`` holds ``(sum w, sum w y, sum w y^2)`` per node. Node ``j`` of the path
    gets weight ``w_j = p_j * prod_{i above j} (1 - p_i)`` (scikit-garden's
    weights); the last node takes the rest. The tree's predictive distribution is
    the mixture, with these weights, of the nodes' distributions (mean of the node's
    targets, variance ``variances[j]``, see ``node_variances``). Its variance is the
    sum of two parts (law of total variance), written apart because the forest
    combines them differently (``MondrianForestRegressor``): ``out_within``, the
    mean of the nodes' variances ``sum_j w_j variances[j]``, and ``out_spread``, the
    variance of the nodes' means ``sum_j w_j (mean_j - mean)^2``. With
    ``variances`` empty only the mean is computed (``out_within`` and
    ``out_spread`` are left as they are).
    """
    _moments_rows(tree, points, stats, variances, X, max_depth, out_mean, out_within,
                  out_spread, _path_work_space(tree, X))


@kernel(allocates=True)
def _path_work_space(tree, X):
    """Work arrays of ``engine.paths.branch_off_path`` over the rows of ``X``."""
    capacity = tree.meta[META_N_NODES] + 1
    return (np.empty(capacity, dtype=np.int64), np.empty(capacity), np.empty(capacity),
            np.empty(capacity), np.empty(X.shape[1]))


@inline_kernel
def _borrowed_path_work(work):
    """The arrays of ``_path_work_space`` as borrowed views (``work`` an argument of
    the caller; see ``engine._jit.borrowed``)."""
    nodes, etas, deltas, probs, excess = work
    return (borrowed(nodes), borrowed(etas), borrowed(deltas), borrowed(probs),
            borrowed(excess))


@kernel
def _moments_rows(tree, points, stats, variances, X, max_depth, out_mean, out_within, out_spread,
                  work):
    """The loop of ``predict_moments_tree`` over borrowed arrays."""
    tree = borrowed_tree(tree)
    stats, variances, X = borrowed(stats), borrowed(variances), borrowed(X)
    out_mean, out_within = borrowed(out_mean), borrowed(out_within)
    out_spread = borrowed(out_spread)
    nodes, etas, deltas, probs, excess = _borrowed_path_work(work)
    with_variance = variances.shape[0] > 0
    for i in range(X.shape[0]):
        length = branch_off_path(tree, points, X[i], max_depth, nodes, etas, deltas, probs,
                                 excess)
        stay = 1.0
        mean = 0.0
        for m in range(length):
            w = stay if m == length - 1 else stay * probs[m]
            if w > 0.0:
                mean += w * node_mean(stats, nodes[m])
            stay -= w
        out_mean[i] = mean
        if not with_variance:
            continue
        # A second pass about the mean: no cancellation when the spread is small.
        stay = 1.0
        within = 0.0
        spread = 0.0
        for m in range(length):
            w = stay if m == length - 1 else stay * probs[m]
            if w > 0.0:
                gap = node_mean(stats, nodes[m]) - mean
                within += w * variances[nodes[m]]
                spread += w * gap * gap
            stay -= w
        out_within[i] = within
        out_spread[i] = spread


@kernel
def node_mean(stats, node):
    """Mean of the targets in ``node`` (0 if it has none)."""
    w = stats[node, 0]
    return stats[node, 1] / w if w > 0.0 else 0.0


@kernel(allocates=True)
def node_variances(tree, stats, out):
    """Predictive variance of every node into ``out`` (``MondrianForestRegressor``).

    The posterior of the node's variance (``engine.variances``): its targets' sum of
    squares shrunk towards its parent's variance times the tree's
    ``variance_decay``, with the weight of ``VARIANCE_PRIOR_WEIGHT`` points; the
    root's prior, and so its variance, is the unbiased variance of the tree's
    targets (sum of squares over ``n - 1``; over ``n`` when ``n <= 1``). The sum
    of squares of ``n`` targets about their own mean has ``n - 1`` degrees of
    freedom, and it is counted as that many points: ``(sq_dev + prior_weight *
    prior) / (n - 1 + prior_weight)``. A leaf of one point, which tells nothing
    about the spread of its cell, thus takes its prior, its parent's variance times
    the decay; a leaf of identical targets is pulled towards 0 only by its repeated
    points. A node's variance is positive unless every target of the tree is the
    same.
    """
    n_nodes = tree.meta[META_N_NODES]
    if n_nodes == 0:
        return
    total = np.empty(n_nodes)
    sq_dev = np.empty(n_nodes)
    dof = np.empty(n_nodes)
    for node in range(n_nodes):
        w = stats[node, 0]
        total[node] = w
        dof[node] = max(w - 1.0, 0.0)
        sq_dev[node] = max(stats[node, 2] - stats[node, 1] * stats[node, 1] / w, 0.0) \
            if w > 0.0 else 0.0
    root = tree.meta[META_ROOT]
    if dof[root] > 0.0:
        root_variance = sq_dev[root] / dof[root]
    else:
        root_variance = sq_dev[root] / total[root] if total[root] > 0.0 else 0.0
    shrunk_variances(tree, dof, sq_dev, root_variance, VARIANCE_PRIOR_WEIGHT,
                     variance_decay(tree, total, sq_dev), out)


@kernel
def noise_bound(tree, stats):
    """Upper bound of the targets' noise variance measured on the tree's finest cells.

    Over the splits whose two children are leaves, the mean of ``(m_l - m_r)^2 /
    (1 / n_l + 1 / n_r)`` (``m`` the leaf's mean, ``n`` its weight; for two leaves of
    one point each, ``(y_l - y_r)^2 / 2``). For targets ``y = f(x) + noise`` with
    noise variance ``s^2``, each term has expectation ``s^2`` plus the squared
    difference of ``f`` between the two leaves over ``1 / n_l + 1 / n_r``: at least
    ``s^2``. ``inf`` when no split has two leaves with points (no bound).
    """
    n_nodes = tree.meta[META_N_NODES]
    acc = 0.0
    count = 0
    for node in range(n_nodes):
        left = tree.left[node]
        if left == LEAF:
            continue
        right = tree.right[node]
        if tree.left[left] != LEAF or tree.left[right] != LEAF:
            continue
        n_left = stats[left, 0]
        n_right = stats[right, 0]
        if n_left <= 0.0 or n_right <= 0.0:
            continue
        gap = stats[left, 1] / n_left - stats[right, 1] / n_right
        acc += gap * gap / (1.0 / n_left + 1.0 / n_right)
        count += 1
    if count == 0:
        return np.inf
    return acc / count


@kernel
def node_moments(stats, node):
    """Mean and variance of the targets in ``node``."""
    w = stats[node, 0]
    if w <= 0.0:
        return 0.0, 0.0
    mu = stats[node, 1] / w
    var = stats[node, 2] / w - mu * mu
    return mu, max(var, 0.0)


@kernel(allocates=True)
def path_weights_tree(tree, points, X, max_depth, indptr, indices, weights):
    """Branch-off weights of every node on each path, as CSR rows.

    ``indptr`` must already hold the row offsets (path lengths, from ``path_lengths``).
    """
    _weights_rows(tree, points, X, max_depth, indptr, indices, weights,
                  _path_work_space(tree, X))


@kernel
def _weights_rows(tree, points, X, max_depth, indptr, indices, weights, work):
    """The loop of ``path_weights_tree`` over borrowed arrays."""
    tree = borrowed_tree(tree)
    X, indptr = borrowed(X), borrowed(indptr)
    indices, weights = borrowed(indices), borrowed(weights)
    nodes, etas, deltas, probs, excess = _borrowed_path_work(work)
    for i in range(X.shape[0]):
        length = branch_off_path(tree, points, X[i], max_depth, nodes, etas, deltas, probs,
                                 excess)
        stay = 1.0
        pos = indptr[i]
        for m in range(length):
            w = stay if m == length - 1 else stay * probs[m]
            indices[pos + m] = nodes[m]
            weights[pos + m] = w
            stay -= w


@kernel
def path_lengths(tree, X, max_depth, out):
    """Number of nodes on the (possibly truncated) path of every row."""
    tree = borrowed_tree(tree)  # see engine._jit.borrowed
    X, out = borrowed(X), borrowed(out)
    root = tree.meta[META_ROOT]
    for i in range(X.shape[0]):
        node = root
        length = 1
        while tree.left[node] != LEAF and length <= max_depth:
            if X[i, tree.feature[node]] <= tree.threshold[node]:
                node = tree.left[node]
            else:
                node = tree.right[node]
            length += 1
        out[i] = length
