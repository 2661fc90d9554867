"""AMF's aggregation is exact: brute force over every pruning of small trees.

Everything is recomputed in plain Python from the fitted tree's structure alone:
the cumulative loss of every node by replaying the training stream down the final
tree (each node's forecaster scored as ``scoring`` says; regression losses in units
of the targets' running standard deviation, recomputed from each prefix), the
Mondrian branch-off probabilities of the test point, and, for every way the test
point can extend the tree, the average over all prunings ``T`` of the (extended)
tree of their predictions weighted by ``prior(T) * exp(-step * loss(T))``.

``prior(T) = 2^-|T|`` where ``|T|`` counts the nodes of ``T`` that are internal in
the full tree (a leaf of the full tree cannot be split further, so it carries no
factor): this is the branching-process prior of the paper once the infinite
Mondrian tree below each leaf, whose nodes all see the same points, is summed out.
"""

import math

import numpy as np
import pytest

from mondrianlearn import AMFClassifier, AMFRegressor
from mondrianlearn.engine.tree import node_boxes


class _Tree:
    """Plain-Python copy of a fitted tree's structure."""

    def __init__(self, arrays):
        n = int(arrays.meta[0])
        self.root = int(arrays.meta[1])
        self.left = [int(v) for v in arrays.left[:n]]
        self.right = [int(v) for v in arrays.right[:n]]
        self.parent = [int(v) for v in arrays.parent[:n]]
        self.feature = [int(v) for v in arrays.feature[:n]]
        self.threshold = [float(v) for v in arrays.threshold[:n]]
        self.time = [float(v) for v in arrays.time[:n]]
        lower, upper = node_boxes(arrays, None)  # AMF keeps no points: every box a row
        self.lower = lower.tolist()
        self.upper = upper.tolist()
        self.n_nodes = n

    def is_leaf(self, v):
        return self.left[v] == -1

    def path(self, x):
        v = self.root
        out = [v]
        while not self.is_leaf(v):
            v = self.left[v] if x[self.feature[v]] <= self.threshold[v] else self.right[v]
            out.append(v)
        return out

    def branch_probabilities(self, x):
        """``p_j`` of the Mondrian process for each node of ``x``'s path."""
        probs = []
        for v in self.path(x):
            eta = sum(max(lo - xi, 0.0) + max(xi - hi, 0.0)
                      for lo, hi, xi in zip(self.lower[v], self.upper[v], x))
            p = self.parent[v]
            delta = self.time[v] - (0.0 if p < 0 else self.time[p])
            if eta <= 0.0:
                probs.append(0.0)
            elif math.isinf(delta):
                probs.append(1.0)
            else:
                probs.append(1.0 - math.exp(-delta * eta))
        return probs


def _replay(tree, X, y, weights, loss, count_first=False):
    """Cumulative loss of every node, and the points ``(target, weight)`` of its cell
    in the order it saw them.

    ``loss(points, i)`` is the loss on row ``i`` of the forecaster of a node that has
    seen ``points``. With ``count_first`` a node is not charged for the first point of
    its cell (a leaf made for a point starts at weight 0, and a node inserted above
    another inherits its weight).
    """
    losses = [0.0] * tree.n_nodes
    points = [[] for _ in range(tree.n_nodes)]
    for i, (x, w) in enumerate(zip(X, weights)):
        for v in tree.path(x):
            if not (count_first and not points[v]):
                losses[v] += w * loss(points[v], i)
            points[v].append((y[i], w))
    return losses, points


def _class_forecast(points, n_classes, alpha, extra=0.0):
    """Dirichlet forecaster of a node's points (``extra``: weight added to the total,
    the row being scored under ``count_then_score``)."""
    counts = np.zeros(n_classes)
    for k, w in points:
        counts[k] += w
    return (counts + alpha) / (counts.sum() + extra + n_classes * alpha)


def _running_moments(z, weights):
    """Mean of the rows before each row, and standard deviation of the rows up to
    and including it, recomputed from scratch for every prefix."""
    prior, spread = [], []
    for i in range(len(z)):
        w = np.asarray(weights[:i], dtype=float)
        prior.append(float(np.dot(w, z[:i]) / w.sum()) if i else 0.0)
        w = np.asarray(weights[:i + 1], dtype=float)
        mean = np.dot(w, z[:i + 1]) / w.sum()
        spread.append(math.sqrt(np.dot(w, (np.asarray(z[:i + 1]) - mean) ** 2) / w.sum()))
    return prior, spread


def _cell_moments(points):
    """Weight, mean and sum of squared deviations of a cell's targets."""
    w = np.array([p[1] for p in points])
    z = np.array([p[0] for p in points])
    mean = np.dot(w, z) / w.sum()
    return w.sum(), mean, float(np.dot(w, (z - mean) ** 2))


def _variance_decay(tree, moments):
    """``rho ** 2``: ``rho`` the geometric mean, over the splits whose children hold
    at least 4 points each (and have positive sums of squares), of the children's
    pooled unbiased variance over the parent's; 1 when there is no such split."""
    logs = []
    for v in range(tree.n_nodes):
        if tree.is_leaf(v):
            continue
        n, _, sq = moments[v]
        n_left, _, sq_left = moments[tree.left[v]]
        n_right, _, sq_right = moments[tree.right[v]]
        if n_left < 4 or n_right < 4 or sq_left + sq_right <= 0 or sq <= 0:
            continue
        logs.append(math.log((sq_left + sq_right) / (n_left + n_right - 2) / (sq / (n - 1))))
    return min(math.exp(sum(logs) / len(logs)), 1.0) ** 2 if logs else 1.0


def _prunings(node, children, loss, pred, on_path, step):
    """``[(log weight, prediction)]`` over the prunings of the subtree of ``node``.

    ``children[node]`` is ``None`` at a leaf of the full tree; the prediction is that
    of the pruning's leaf on the test point's path (``None`` off the path).
    """
    own = pred[node] if on_path[node] else None
    if children[node] is None:
        return [(-step * loss[node], own)]
    out = [(-math.log(2.0) - step * loss[node], own)]
    a, b = children[node]
    for wa, pa in _prunings(a, children, loss, pred, on_path, step):
        for wb, pb in _prunings(b, children, loss, pred, on_path, step):
            out.append((-math.log(2.0) + wa + wb, pa if pa is not None else pb))
    return out


def _average(options):
    top = max(w for w, _ in options)
    num = sum(math.exp(w - top) * np.asarray(p, dtype=float) for w, p in options)
    den = sum(math.exp(w - top) for w, _ in options)
    return num / den


def _brute_force_prediction(tree, x, losses, preds, prior, step, extend=True):
    """Expected aggregated prediction of ``x`` over its temporary extension (or, if
    not ``extend``, the aggregated prediction of the tree as it is)."""
    path = tree.path(x)
    base_children = {v: None if tree.is_leaf(v) else (tree.left[v], tree.right[v])
                     for v in range(tree.n_nodes)}
    result = 0.0
    survive = 1.0
    for j, p in enumerate(tree.branch_probabilities(x) if extend else []):
        if p > 0.0:
            # x branches off above path[j]: a new node (same points, loss and
            # forecaster as path[j]) with children path[j] and a new empty leaf.
            children = dict(base_children)
            loss = dict(enumerate(losses))
            pred = dict(enumerate(preds))
            split, leaf = "split", "leaf"
            children[split] = (path[j], leaf)
            children[leaf] = None
            loss[split], pred[split] = losses[path[j]], preds[path[j]]
            loss[leaf], pred[leaf] = 0.0, prior
            root = tree.root
            if j == 0:
                root = split
            else:
                parent = path[j - 1]
                a, b = children[parent]
                children[parent] = (split, b) if a == path[j] else (a, split)
            on_path = {v: False for v in children}
            for v in path[:j]:
                on_path[v] = True
            on_path[split] = on_path[leaf] = True
            options = _prunings(root, children, loss, pred, on_path, step)
            result = result + survive * p * _average(options)
            survive *= 1.0 - p
    if survive > 0.0:
        on_path = {v: v in path for v in range(tree.n_nodes)}
        options = _prunings(tree.root, base_children, dict(enumerate(losses)),
                            dict(enumerate(preds)), on_path, step)
        result = result + survive * _average(options)
    return result


def _small_stream(seed, n, n_features=2):
    rng = np.random.RandomState(seed)
    return rng.uniform(0, 1, size=(n, n_features))


def _test_points(X, seed):
    """Training points (inside leaf boxes), points nearby and points far away."""
    rng = np.random.RandomState(seed + 100)
    near = X[:3] + rng.normal(scale=0.05, size=X[:3].shape)
    far = rng.uniform(-1.0, 2.0, size=(4, X.shape[1]))
    return np.vstack([X[:3], near, far])


SCORINGS = ["before_update", "count_then_score"]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("step", [1.0, 0.3])
@pytest.mark.parametrize("scoring", SCORINGS)
@pytest.mark.parametrize("extend", [True, False])
def test_classifier_matches_brute_force_over_prunings(seed, step, scoring, extend):
    n_classes = 3
    X = _small_stream(seed, 7)
    y = np.random.RandomState(seed).randint(n_classes, size=7)
    weights = np.random.RandomState(seed + 1).uniform(0.5, 2.0, size=7)
    alpha = 0.2
    clf = AMFClassifier(n_estimators=1, step=step, dirichlet=alpha, split_pure=True,
                        feature_scale=None, scoring=scoring, temporary_extension=extend,
                        random_state=seed)
    for start in range(0, 7, 3):  # mini-batches: the stream order is what counts
        clf.partial_fit(X[start:start + 3], y[start:start + 3],
                        classes=np.arange(n_classes) if start == 0 else None,
                        sample_weight=weights[start:start + 3])
    state = clf.trees_[0]
    tree = _Tree(state.arrays)
    assert sum(tree.is_leaf(v) for v in range(tree.n_nodes)) <= 8

    count_first = scoring == "count_then_score"

    def loss(points, i):
        extra = weights[i] if count_first else 0.0
        return -math.log(_class_forecast(points, n_classes, alpha, extra)[y[i]])

    losses, points = _replay(tree, clf._in_units(X), y, weights, loss, count_first)
    preds = [_class_forecast(p, n_classes, alpha) for p in points]
    log_weight = state.node_stats["log_weight"][:tree.n_nodes]
    np.testing.assert_allclose(log_weight, -step * np.array(losses), rtol=0, atol=1e-10)

    prior = np.full(n_classes, 1.0 / n_classes)
    T = _test_points(X, seed)
    expected = np.array([_brute_force_prediction(tree, x, losses, preds, prior, step, extend)
                         for x in clf._in_units(T).tolist()])
    np.testing.assert_allclose(clf.predict_proba(T), expected, rtol=0, atol=1e-10)


def _regression_stream(seed, n=8):
    """A small stream with targets far from 0 and weights, learned in two batches."""
    X = _small_stream(seed, n, n_features=3)
    y = 50.0 + 10.0 * np.random.RandomState(seed).normal(size=n)
    weights = np.ones(n)
    weights[2] = 2.5
    return X, y, weights


def _fit_regressor(seed, X, y, weights, **params):
    reg = AMFRegressor(random_state=seed, feature_scale=None, **params)
    half = len(X) // 2
    reg.partial_fit(X[:half], y[:half], sample_weight=weights[:half])
    reg.partial_fit(X[half:], y[half:], sample_weight=weights[half:])
    return reg


def _regression_replay(reg, tree, X, y, weights, scoring):
    """Node losses (squared errors in units of the running standard deviation) and
    the cells' points, in targets relative to the model's offset."""
    z = y - reg._y_offset  # the model learns targets relative to the first one
    prior, spread = _running_moments(z, weights)

    def loss(points, i):
        mean = _cell_moments(points)[1] if points else prior[i]  # empty: the prior
        return 0.0 if spread[i] == 0 else 0.5 * ((mean - z[i]) / spread[i]) ** 2

    losses, points = _replay(tree, reg._in_units(X), z, weights, loss,
                             scoring == "count_then_score")
    return z, losses, points


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("step", [1.0, 64.0])
@pytest.mark.parametrize("scoring", SCORINGS)
@pytest.mark.parametrize("extend", [True, False])
def test_regressor_matches_brute_force_over_prunings(seed, step, scoring, extend):
    X, y, weights = _regression_stream(seed)
    reg = _fit_regressor(seed, X, y, weights, n_estimators=1, step=step, scoring=scoring,
                         temporary_extension=extend)
    state = reg.trees_[0]
    tree = _Tree(state.arrays)
    assert sum(tree.is_leaf(v) for v in range(tree.n_nodes)) <= 8
    z, losses, points = _regression_replay(reg, tree, X, y, weights, scoring)
    log_weight = state.node_stats["log_weight"][:tree.n_nodes]
    np.testing.assert_allclose(log_weight, -step * np.array(losses), rtol=0, atol=1e-10)
    moments = [_cell_moments(p) for p in points]
    for name, k in (("total", 0), ("mean", 1), ("sq_dev", 2)):
        np.testing.assert_allclose(state.node_stats[name][:tree.n_nodes],
                                   [m[k] for m in moments], rtol=1e-12, atol=1e-9)

    # An empty leaf forecasts the running mean of all the targets seen.
    prior = float(np.dot(weights, z) / weights.sum())
    T = _test_points(X, seed)
    expected = np.array([_brute_force_prediction(tree, x, losses, [m[1] for m in moments],
                                                 prior, step, extend)
                         for x in reg._in_units(T).tolist()])
    np.testing.assert_allclose(reg.predict(T), reg._y_offset + expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_one_row_leaf_cell_predictions_match_brute_force(seed):
    """A row predicted alone from the leaf cell (``temporary_extension=False``), in a
    tree of more than 12 nodes, takes one pass down the tree with no memo
    (``_path_sums.leaf_cell_classes``, ``leaf_cell_value``): the same brute force
    over prunings as a batch, and the batch's prediction bit for bit."""
    n_classes, step, alpha = 3, 1.0, 0.2
    X = _small_stream(seed, 12)
    y = np.random.RandomState(seed).randint(n_classes, size=12)
    clf = AMFClassifier(n_estimators=1, step=step, dirichlet=alpha, split_pure=True,
                        feature_scale=None, random_state=seed)
    clf.partial_fit(X[:6], y[:6], classes=np.arange(n_classes))
    clf.partial_fit(X[6:], y[6:])
    tree = _Tree(clf.trees_[0].arrays)
    assert tree.n_nodes > 12  # a row alone does not take the whole-tree pass

    def loss(points, i):
        return -math.log(_class_forecast(points, n_classes, alpha, 1.0)[y[i]])

    losses, points = _replay(tree, clf._in_units(X), y, np.ones(12), loss, True)
    preds = [_class_forecast(p, n_classes, alpha) for p in points]
    T = _test_points(X, seed)
    expected = np.array([_brute_force_prediction(tree, x, losses, preds,
                                                 np.full(n_classes, 1.0 / n_classes), step,
                                                 False)
                         for x in clf._in_units(T).tolist()])
    alone = np.vstack([clf.predict_proba(T[i:i + 1]) for i in range(len(T))])
    np.testing.assert_allclose(alone, expected, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(alone, clf.predict_proba(T))

    X, y, weights = _regression_stream(seed, n=12)
    reg = _fit_regressor(seed, X, y, weights, n_estimators=1, step=step)
    tree = _Tree(reg.trees_[0].arrays)
    assert tree.n_nodes > 12
    z, losses, points = _regression_replay(reg, tree, X, y, weights, "count_then_score")
    prior = float(np.dot(weights, z) / weights.sum())
    T = _test_points(X, seed)
    expected = np.array([_brute_force_prediction(tree, x, losses,
                                                 [_cell_moments(p)[1] for p in points],
                                                 prior, step, False)
                         for x in reg._in_units(T).tolist()])
    alone = np.concatenate([reg.predict(T[i:i + 1]) for i in range(len(T))])
    np.testing.assert_allclose(alone, reg._y_offset + expected, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(alone, reg.predict(T))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("extend", [True, False])
def test_regressor_std_is_that_of_the_aggregated_mixture(seed, extend):
    """``return_std``: per tree, the brute-force mixture over prunings of the node
    forecasters (mean, shrunk variance: the prior of a node's variance is its
    parent's times the tree's decay, worth 4 points) on the path; over trees, the
    mean of the trees' variances plus the variance of their means over the number
    of trees."""
    X, y, weights = _regression_stream(seed)
    step = 4.0
    reg = _fit_regressor(seed, X, y, weights, n_estimators=3, step=step,
                         temporary_extension=extend)
    total = weights.sum()
    z = y - reg._y_offset
    prior_mean = float(np.dot(weights, z) / total)
    prior_variance = float(np.dot(weights, (z - prior_mean) ** 2) / total)
    T = _test_points(X, seed)
    first, second = [], []
    for state in reg.trees_:
        tree = _Tree(state.arrays)
        _, losses, points = _regression_replay(reg, tree, X, y, weights, "count_then_score")
        moments = [_cell_moments(p) for p in points]
        decay = _variance_decay(tree, moments)
        variance = [0.0] * tree.n_nodes
        for v in range(tree.n_nodes):  # parents first: walk down from the root
            chain = []
            u = v
            while u >= 0:
                chain.append(u)
                u = tree.parent[u]
            above = prior_variance
            for u in reversed(chain):
                n, _, sq = moments[u]
                prior = above if u == tree.root else decay * above
                above = (sq + 4.0 * prior) / (n + 4.0)
            variance[v] = above
        preds = [np.array([m[1], variance[v] + m[1] ** 2]) for v, m in enumerate(moments)]
        empty = np.array([prior_mean, prior_variance + prior_mean ** 2])
        both = np.array([_brute_force_prediction(tree, x, losses, preds, empty, step, extend)
                         for x in reg._in_units(T).tolist()])
        first.append(both[:, 0])
        second.append(both[:, 1])
    first, second = np.array(first), np.array(second)
    within = np.mean(second - first ** 2, axis=0)
    between = np.var(first, axis=0)
    mean, std = reg.predict(T, return_std=True)
    np.testing.assert_allclose(mean, reg._y_offset + first.mean(axis=0), rtol=0, atol=1e-9)
    np.testing.assert_allclose(std, np.sqrt(within + between / 3), rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(mean, reg.predict(T))


def test_without_aggregation_predicts_with_the_leaf_forecaster():
    rng = np.random.RandomState(3)
    X = rng.uniform(size=(60, 2))
    y = (X[:, 0] > 0.5).astype(int) + (X[:, 1] > 0.5)
    alpha = 0.3
    clf = AMFClassifier(n_estimators=1, dirichlet=alpha, use_aggregation=False,
                        feature_scale=None,
                        random_state=0).fit(X, y)
    tree = _Tree(clf.trees_[0].arrays)
    counts = clf.trees_[0].node_stats["counts"]
    T = rng.uniform(-0.5, 1.5, size=(20, 2))
    leaves = [tree.path(x)[-1] for x in clf._in_units(T).tolist()]
    expected = (counts[leaves] + alpha) / (counts[leaves].sum(axis=1, keepdims=True)
                                           + 3 * alpha)
    np.testing.assert_allclose(clf.predict_proba(T), expected, rtol=0, atol=1e-12)

    reg = AMFRegressor(n_estimators=1, use_aggregation=False, random_state=0,
                       feature_scale=None)
    reg.fit(X, X[:, 0] * 2)
    tree = _Tree(reg.trees_[0].arrays)
    leaves = [tree.path(x)[-1] for x in reg._in_units(T).tolist()]
    np.testing.assert_allclose(reg.predict(T),
                               reg._y_offset + reg.trees_[0].node_stats["mean"][leaves],
                               rtol=0, atol=1e-12)


def test_one_point_gives_the_updated_prior_and_the_prior_far_away():
    x0 = np.array([[0.2, 0.7]])
    alpha = 0.5
    clf = AMFClassifier(n_estimators=3, dirichlet=alpha, temporary_extension=True,
                        feature_scale=None,
                        scoring="before_update", random_state=0)
    clf.partial_fit(x0, [1], classes=[0, 1, 2])
    posterior = (np.array([0.0, 1.0, 0.0]) + alpha) / (1.0 + 3 * alpha)
    np.testing.assert_allclose(clf.predict_proba(x0)[0], posterior, atol=1e-12)
    # Away from the point, the temporary extension cuts it off with probability one:
    # half of the weight goes to the new empty leaf, i.e. to the uniform prior.
    far = np.array([[5.0, -3.0]])
    np.testing.assert_allclose(clf.predict_proba(far)[0], 0.5 * posterior + 0.5 / 3,
                               atol=1e-12)
    np.testing.assert_allclose(clf.weighted_depth(far), [0.5], atol=1e-12)

    reg = AMFRegressor(n_estimators=2, temporary_extension=True, random_state=0,
                       feature_scale=None)
    reg.fit(x0, [3.0])
    np.testing.assert_allclose(reg.predict(x0), [3.0], atol=1e-12)
    # The empty leaf predicts the running mean of the targets.
    np.testing.assert_allclose(reg.predict(far), [3.0], atol=1e-12)
    reg = AMFRegressor(n_estimators=2, temporary_extension=True, random_state=0,
                       feature_scale=None)
    reg.fit(np.vstack([x0, x0, x0 + 1.0]), [3.0, 5.0, 7.0])
    leaf = reg.trees_[0].node_stats["mean"][reg.trees_[0].arrays.meta[1]]  # the root
    assert reg._y_offset + leaf == 5.0
    # Far from every point, half of the weight goes to the empty leaf: the mean 5.
    np.testing.assert_allclose(reg.predict(np.array([[50.0, 50.0]])), [5.0], atol=1e-12)

    # Before any split, a fresh node predicts the prior: the loss of the first point
    # is that of the uniform distribution.
    np.testing.assert_allclose(clf.trees_[0].node_stats["log_weight"][0], -math.log(3),
                               atol=1e-12)
