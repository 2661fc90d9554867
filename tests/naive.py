"""Slow pure-Python reference of the Mondrian forest predictions (tests only).

Everything here is recomputed from scratch in plain Python, independently of the
compiled code: the tree is read once from its node arrays (structure, split
features, thresholds, times and boxes), node statistics are recomputed by routing
the training points down the tree, and the formulas of ALGORITHMS.md sections 2-3
are applied literally, one test point and one node at a time.
"""

import math


class NaiveTree:
    """Plain-Python copy of the structure of a fitted tree.

    Parameters
    ----------
    arrays : TreeArrays
        The engine's node arrays (``est.trees_[t].arrays``).
    """

    def __init__(self, arrays):
        n = int(arrays.meta[0])
        self.root = int(arrays.meta[1])
        self.left = [int(v) for v in arrays.left[:n]]
        self.right = [int(v) for v in arrays.right[:n]]
        self.parent = [int(v) for v in arrays.parent[:n]]
        self.feature = [int(v) for v in arrays.feature[:n]]
        self.threshold = [float(v) for v in arrays.threshold[:n]]
        self.time = [float(v) for v in arrays.time[:n]]
        self.lower = [[float(v) for v in row] for row in arrays.lower[:n]]
        self.upper = [[float(v) for v in row] for row in arrays.upper[:n]]
        self.n_nodes = n

    def is_leaf(self, node):
        return self.left[node] == -1

    def parent_time(self, node):
        p = self.parent[node]
        return 0.0 if p < 0 else self.time[p]

    def route(self, x):
        """Nodes from the root to the leaf whose cell holds ``x``."""
        node = self.root
        path = [node]
        while not self.is_leaf(node):
            node = self.left[node] if x[self.feature[node]] <= self.threshold[node] \
                else self.right[node]
            path.append(node)
        return path

    def children_first(self):
        """All nodes, every child before its parent."""
        order = []
        stack = [self.root]
        while stack:
            node = stack.pop()
            order.append(node)
            if not self.is_leaf(node):
                stack.extend([self.left[node], self.right[node]])
        return order[::-1]


def eta(tree, node, x):
    """Total distance of ``x`` outside the box of ``node``."""
    total = 0.0
    for d, v in enumerate(x):
        total += max(tree.lower[node][d] - v, 0.0) + max(v - tree.upper[node][d], 0.0)
    return total


def branch_off_path(tree, x, max_depth=None):
    """``[(node, eta_j, Delta_j, p_j)]`` along the path of ``x``, root first.

    The path stops at depth ``max_depth`` (root at depth 0); that node then acts as
    the leaf.
    """
    path = tree.route(x)
    if max_depth is not None:
        path = path[: max_depth + 1]
    out = []
    for node in path:
        e = eta(tree, node, x)
        delta = tree.time[node] - tree.parent_time(node)
        if e == 0.0:
            p = 0.0
        elif math.isinf(delta):
            p = 1.0
        else:
            p = 1.0 - math.exp(-delta * e)
        out.append((node, e, delta, p))
    return out


# ------------------------------------------------------------------ classification
def leaf_class_counts(tree, X, y_index, n_classes, weights=None):
    """Class counts of every node, obtained by routing the training points."""
    counts = {node: [0.0] * n_classes for node in range(tree.n_nodes)}
    for i, x in enumerate(X):
        w = 1.0 if weights is None else float(weights[i])
        if w <= 0:
            continue
        for node in tree.route(x):
            counts[node][int(y_index[i])] += w
    return counts


def ikn_counts(tree, counts):
    """Leaves keep their counts; internal nodes sum ``min(child count, 1)``."""
    out = {}
    for node in tree.children_first():
        if tree.is_leaf(node):
            out[node] = list(counts[node])
        else:
            a, b = out[tree.left[node]], out[tree.right[node]]
            out[node] = [min(ca, 1.0) + min(cb, 1.0) for ca, cb in zip(a, b)]
    return out


def smooth(c, discount, base):
    """``(c_k - d t_k + d t G_base(k)) / c`` (``base`` itself for an empty node)."""
    total = sum(c)
    if total <= 0:
        return list(base)
    tables = sum(min(ck, 1.0) for ck in c)
    return [(ck - discount * min(ck, 1.0) + discount * tables * gk) / total
            for ck, gk in zip(c, base)]


def node_discount(delta, gamma):
    """``exp(-gamma Delta)``; a node never cut (infinite ``Delta``) gets 1/2, the
    mean of a uniform prior on the discount (1 when ``gamma`` is 0)."""
    if math.isinf(delta):
        return 0.5 if gamma > 0 else 1.0
    return math.exp(-gamma * delta)


def posteriors(tree, ikn, gamma, n_classes):
    """Posterior means ``G_j`` of all nodes, from the root down."""
    uniform = [1.0 / n_classes] * n_classes
    post = {}
    for node in reversed(tree.children_first()):  # parents first
        parent = tree.parent[node]
        base = uniform if parent < 0 else post[parent]
        discount = node_discount(tree.time[node] - tree.parent_time(node), gamma)
        post[node] = smooth(ikn[node], discount, base)
    return post


def expected_discount(e, delta, gamma):
    """Mean of ``exp(-gamma t)`` for ``t ~ Exponential(e)`` truncated to [0, delta]."""
    if math.isinf(delta):
        return e / (e + gamma)
    return (e / (e + gamma) * (1.0 - math.exp(-(e + gamma) * delta))
            / (1.0 - math.exp(-e * delta)))


def predict_proba_tree(tree, ikn, post, x, gamma, n_classes, max_depth=None):
    """Class probabilities of one tree at ``x`` (ALGORITHMS.md section 2)."""
    uniform = [1.0 / n_classes] * n_classes
    out = [0.0] * n_classes
    stay = 1.0
    path = branch_off_path(tree, x, max_depth)
    for node, e, delta, p in path:
        if p > 0.0:
            parent = tree.parent[node]
            base = uniform if parent < 0 else post[parent]
            branch = smooth(ikn[node], expected_discount(e, delta, gamma), base)
            for k in range(n_classes):
                out[k] += stay * p * branch[k]
        stay *= 1.0 - p
    last = path[-1][0]
    for k in range(n_classes):
        out[k] += stay * post[last][k]
    return out


def forest_predict_proba(trees, X_train, y_index, n_classes, X, gamma, max_depth=None,
                         weights=None):
    """Average over ``trees`` (``NaiveTree``) of the class probabilities."""
    models = []
    for tree in trees:
        counts = leaf_class_counts(tree, X_train, y_index, n_classes, weights)
        ikn = ikn_counts(tree, counts)
        models.append((tree, ikn, posteriors(tree, ikn, gamma, n_classes)))
    out = []
    for x in X:
        total = [0.0] * n_classes
        for tree, ikn, post in models:
            p = predict_proba_tree(tree, ikn, post, x, gamma, n_classes, max_depth)
            total = [a + b / len(models) for a, b in zip(total, p)]
        out.append(total)
    return out


# ---------------------------------------------------------------------- regression
def node_moments(tree, X_train, y_train, weights=None):
    """Weighted mean and variance of the targets of every node (by routing)."""
    members = {node: [] for node in range(tree.n_nodes)}
    for i, x in enumerate(X_train):
        w = 1.0 if weights is None else float(weights[i])
        if w <= 0:
            continue
        for node in tree.route(x):
            members[node].append((w, float(y_train[i])))
    out = {}
    for node, rows in members.items():
        total = sum(w for w, _ in rows)
        if total <= 0:
            out[node] = (0.0, 0.0)
            continue
        mean = sum(w * y for w, y in rows) / total
        out[node] = (mean, sum(w * (y - mean) ** 2 for w, y in rows) / total)
    return out


def path_weights(tree, x, max_depth=None):
    """``{node: w_j}``: ``p_j prod_{i above j}(1 - p_i)``, the last node the rest."""
    path = branch_off_path(tree, x, max_depth)
    weights = {}
    stay = 1.0
    used = 0.0
    for m, (node, _, _, p) in enumerate(path):
        if m == len(path) - 1:
            weights[node] = 1.0 - used
        else:
            weights[node] = stay * p
            used += stay * p
            stay *= 1.0 - p
    return weights


def node_statistics(tree, X_train, y_train, weights=None):
    """``{node: (total weight, mean, sum of squared deviations)}`` by routing."""
    members = {node: [] for node in range(tree.n_nodes)}
    for i, x in enumerate(X_train):
        w = 1.0 if weights is None else float(weights[i])
        if w <= 0:
            continue
        for node in tree.route(x):
            members[node].append((w, float(y_train[i])))
    out = {}
    for node, rows in members.items():
        total = sum(w for w, _ in rows)
        mean = sum(w * y for w, y in rows) / total if total > 0 else 0.0
        out[node] = (total, mean, sum(w * (y - mean) ** 2 for w, y in rows))
    return out


def variance_decay(tree, stats):
    """``rho ** 2``, ``rho`` the geometric mean over the splits whose children hold
    at least 4 points each of the children's pooled (unbiased) variance over the
    parent's, splits with a zero sum of squares left out; 1 without such splits."""
    logs = []
    for node in range(tree.n_nodes):
        if tree.is_leaf(node):
            continue
        n, _, sq = stats[node]
        n_left, _, sq_left = stats[tree.left[node]]
        n_right, _, sq_right = stats[tree.right[node]]
        if n_left < 4 or n_right < 4 or sq_left + sq_right <= 0 or sq <= 0:
            continue
        pooled = (sq_left + sq_right) / (n_left + n_right - 2)
        logs.append(math.log(pooled / (sq / (n - 1))))
    if not logs:
        return 1.0
    return min(math.exp(sum(logs) / len(logs)), 1.0) ** 2


def predictive_variances(tree, stats, prior_weight=1.25):
    """``{node: variance}``: the node's sum of squares shrunk towards its parent's
    variance times the decay, with the weight of ``prior_weight`` points, the sum of
    squares of ``n`` targets counting as ``n - 1`` points (the root towards its own
    unbiased variance)."""
    decay = variance_decay(tree, stats)
    out = {}
    for node in reversed(tree.children_first()):  # parents first
        n, _, sq = stats[node]
        parent = tree.parent[node]
        if parent >= 0:
            prior = decay * out[parent]
        else:
            prior = sq / (n - 1) if n > 1 else (sq / n if n > 0 else 0.0)
        out[node] = (sq + prior_weight * prior) / (max(n - 1, 0) + prior_weight)
    return out


def noise_bound(tree, stats):
    """Mean over the splits into two leaves (with points) of ``(m_l - m_r)^2 / (1 /
    n_l + 1 / n_r)``; ``inf`` without such splits."""
    terms = []
    for node in range(tree.n_nodes):
        if tree.is_leaf(node):
            continue
        left, right = tree.left[node], tree.right[node]
        if not (tree.is_leaf(left) and tree.is_leaf(right)):
            continue
        (n_l, m_l, _), (n_r, m_r, _) = stats[left], stats[right]
        if n_l <= 0 or n_r <= 0:
            continue
        terms.append((m_l - m_r) ** 2 / (1 / n_l + 1 / n_r))
    return sum(terms) / len(terms) if terms else math.inf


def predict_tree_moments(tree, stats, variances, x, max_depth=None):
    """Mean, mean of the nodes' variances and variance of the nodes' means of one
    tree's predictive mixture at ``x``."""
    weights = path_weights(tree, x, max_depth)
    mean = sum(w * stats[node][1] for node, w in weights.items())
    within = sum(w * variances[node] for node, w in weights.items())
    spread = sum(w * (stats[node][1] - mean) ** 2 for node, w in weights.items())
    return mean, within, spread


def forest_predict_regression(trees, X_train, y_train, X, max_depth=None, weights=None):
    """Mean and standard deviation of the forest: the mean of the trees' means; the
    variance is the mean over the trees of their nodes' variance up to the tree's
    noise bound (the noise), plus the error of the forest's mean: the mean of the
    rest of the trees' variances less the variance of their means, at least that
    variance over the number of trees less one."""
    models = []
    for tree in trees:
        stats = node_statistics(tree, X_train, y_train, weights)
        models.append((tree, stats, predictive_variances(tree, stats),
                       noise_bound(tree, stats)))
    means, stds = [], []
    for x in X:
        parts = [(predict_tree_moments(tree, stats, variances, x, max_depth), bound)
                 for tree, stats, variances, bound in models]
        k = len(parts)
        mean = sum(m for (m, _, _), _ in parts) / k
        noise = sum(min(v, b) for (_, v, _), b in parts) / k
        rest = sum(v - min(v, b) + g for (_, v, g), b in parts) / k
        between = sum((m - mean) ** 2 for (m, _, _), _ in parts) / k
        means.append(mean)
        stds.append(math.sqrt(noise + max(rest - between, between / max(k - 1, 1))))
    return means, stds
