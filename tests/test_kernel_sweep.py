"""The lifetime sweep: incremental solutions equal direct solves, records are sane."""

import numpy as np
import pytest

from mondrianlearn.engine.random import spawn_states
from mondrianlearn.kernel._features import new_partition, pruned_copy, sample_partition
from mondrianlearn.kernel._ridge import OnlineRidge, chol_append, chol_delete
from mondrianlearn.kernel._sweep import FlatForest, RidgeSweep


def _forest(n=60, d=2, n_trees=4, lifetime=6.0, seed=0):
    X = np.random.RandomState(seed).uniform(size=(n, d))
    trees = []
    for state in spawn_states(seed, n_trees):
        tree = new_partition(d, state)
        sample_partition(tree, X, lifetime)
        tree.trim()
        trees.append(tree)
    return X, trees, FlatForest(trees, X)


def _features(forest, nodes):
    """Dense Phi for the given global nodes (rows: points in each node's range)."""
    Phi = np.zeros((forest.n_points, len(nodes)))
    for i, node in enumerate(nodes):
        Phi[forest.pts[forest.start[node]:forest.end[node]], i] = 1.0
    return Phi / np.sqrt(forest.n_trees)


def test_cholesky_delete_and_append_match_refactorisation():
    rng = np.random.RandomState(1)
    B = rng.randn(12, 9)
    A = B.T @ B + 0.5 * np.eye(9)
    U = np.zeros((10, 10))
    U[:9, :9] = np.linalg.cholesky(A).T
    work = np.zeros(10)
    chol_delete(U, 9, 3, work)
    keep = [i for i in range(9) if i != 3]
    np.testing.assert_allclose(U[:8, :8].T @ U[:8, :8], A[np.ix_(keep, keep)], atol=1e-12)
    assert np.all(np.tril(U[:8, :8], -1) == 0)
    # Append a column of a larger PD matrix.
    B2 = np.hstack([B[:, keep], rng.randn(12, 1)])
    A2 = B2.T @ B2 + 0.5 * np.eye(9)
    assert chol_append(U, 8, A2[:, 8].copy(), work)
    np.testing.assert_allclose(U[:9, :9].T @ U[:9, :9], A2, atol=1e-12)


@pytest.mark.parametrize("with_validation", [False, True])
def test_incremental_ridge_equals_direct_solve_after_every_cut(with_validation):
    X, trees, forest = _forest()
    rng = np.random.RandomState(3)
    y = np.sin(5 * X[:, 0]) + 0.1 * rng.randn(X.shape[0])
    w = rng.uniform(0.5, 2.0, X.shape[0])
    val = np.zeros(X.shape[0], bool)
    if with_validation:
        val[rng.permutation(X.shape[0])[:10]] = True
    w_fit, w_val = np.where(val, 0, w), np.where(val, w, 0)
    alpha = 0.3
    sweep = RidgeSweep(forest, y, w_fit, w_val, alpha, max_features=10**6)
    sweep._start()
    n_events = forest.events.shape[0]
    assert n_events > 20
    from mondrianlearn.kernel._sweep import ridge_sweep_events

    for k in range(n_events):
        done = ridge_sweep_events(
            forest.events, k, k + 1, forest.left, forest.right, forest.tree, forest.start,
            forest.end, forest.pts, sweep.size, sweep.max_features, sweep.U, sweep.b,
            sweep.pos, sweep.at, sweep.S, sweep.slot_of, sweep.b_slot, sweep.active,
            sweep.weight_fit, sweep.y, sweep.val_rows, sweep.weight_val, sweep.yWy,
            sweep.fit_w, sweep.scale, sweep.alpha, sweep.column, sweep.work,
            sweep.col_small, sweep.coef, sweep.record)
        assert done == k + 1
        nodes = sweep.features()
        Phi = _features(forest, nodes)
        A = Phi.T @ (w_fit[:, None] * Phi) + alpha * np.eye(len(nodes))
        direct = np.linalg.solve(A, Phi.T @ (w_fit * y))
        np.testing.assert_allclose(sweep.coefficients(), direct, rtol=0, atol=1e-8)
        pred = Phi @ direct
        mse_fit = np.sum(w_fit * (y - pred) ** 2) / w_fit.sum()
        np.testing.assert_allclose(sweep.record[k + 1, 1], mse_fit, rtol=1e-7, atol=1e-10)
        if with_validation:
            mse_val = np.sum(w_val * (y - pred) ** 2) / w_val.sum()
            np.testing.assert_allclose(sweep.record[k + 1, 2], mse_val, rtol=1e-9)
        # Log marginal likelihood of y ~ N(0, Phi Phi^T + alpha W^-1) for unit weights
        # differs by a constant; check it against the Woodbury form instead.
        sign, logdet = np.linalg.slogdet(A)
        n_fit = w_fit.sum()
        lml = (-np.sum(w_fit * (y - pred) ** 2) / (2 * alpha) - direct @ direct / 2
               - logdet / 2 - (n_fit - len(nodes)) / 2 * np.log(alpha)
               - n_fit / 2 * np.log(2 * np.pi))
        np.testing.assert_allclose(sweep.record[k + 1, 3], lml, rtol=1e-9)
    # Cuts were processed in time order, ending at the terminal partition.
    assert np.all(np.diff(forest.time[forest.events]) >= 0)
    assert sweep.size[0] == sum(int((t.arrays.left[:t.n_nodes] == -1).sum()) for t in trees)


def test_log_marginal_likelihood_matches_gaussian_density_for_unit_weights():
    X, trees, forest = _forest(n=40, n_trees=3)
    y = np.random.RandomState(0).randn(40)
    alpha = 0.2
    sweep = RidgeSweep(forest, y, np.ones(40), np.zeros(40), alpha, 10**6)
    n_records, _ = sweep.run()
    Phi = _features(forest, sweep.features())
    K = Phi @ Phi.T + alpha * np.eye(40)
    sign, logdet = np.linalg.slogdet(K)
    expected = -0.5 * y @ np.linalg.solve(K, y) - 0.5 * logdet - 20 * np.log(2 * np.pi)
    np.testing.assert_allclose(sweep.record[n_records - 1, 3], expected, rtol=1e-9)


def test_pruned_partition_equals_sweep_features_at_that_lifetime():
    X, trees, forest = _forest(n=80, n_trees=3, lifetime=8.0)
    sweep = RidgeSweep(forest, np.zeros(80), np.ones(80), np.zeros(80), 1.0, 10**6)
    sweep._start()
    k = forest.events.shape[0] // 2
    from mondrianlearn.kernel._sweep import ridge_sweep_events

    ridge_sweep_events(forest.events, 0, k, forest.left, forest.right, forest.tree,
                       forest.start, forest.end, forest.pts, sweep.size, 10**6, sweep.U,
                       sweep.b, sweep.pos, sweep.at, sweep.S, sweep.slot_of, sweep.b_slot,
                       sweep.active, sweep.weight_fit, sweep.y, sweep.val_rows,
                       sweep.weight_val, sweep.yWy, sweep.fit_w, sweep.scale, sweep.alpha,
                       sweep.column, sweep.work, sweep.col_small, sweep.coef, sweep.record)
    lifetime = forest.time[forest.events[k]]
    n_leaves = 0
    for t, tree in enumerate(trees):
        pruned, old_to_new = pruned_copy(tree, lifetime)
        leaves = pruned.arrays.left[: pruned.n_nodes] == -1
        n_leaves += int(leaves.sum())
        kept = np.flatnonzero(old_to_new >= 0)
        leaf_nodes = set((kept[leaves[old_to_new[kept]]] + forest.offset[t]).tolist())
        active = {int(n) for n in sweep.features() if forest.tree[n] == t}
        assert leaf_nodes == active
    assert n_leaves == sweep.size[0]


def test_pruning_in_place_gives_the_partition_of_the_pruned_copy():
    from mondrianlearn.kernel._features import (
        extend_partition_rows,
        leaves_of,
        prune_in_place,
    )

    rng = np.random.RandomState(3)
    X = rng.uniform(size=(300, 3))
    tree = new_partition(3, spawn_states(5, 1)[0], stats=("column", "cell"))
    sample_partition(tree, X[:40], 4.0)
    extend_partition_rows(tree, X[40:], 9.0)  # nodes inserted above others: ids not depth-first
    n = tree.n_nodes
    tree.node_stats["cell"][:n] = np.arange(1, n + 1)
    tree.node_stats["column"][:n] = 7
    lifetime = float(np.median(tree.arrays.time[:n][tree.arrays.left[:n] != -1]))
    copy, copy_ids = pruned_copy(tree, lifetime)
    old = {f: getattr(tree.arrays, f)[:n].copy() for f in ("feature", "threshold", "time")}
    cells = tree.node_stats["cell"][:n].copy()

    old_to_new, holder = prune_in_place(tree, lifetime, carry=("cell",))

    assert tree.n_nodes == copy.n_nodes < n
    np.testing.assert_array_equal(old_to_new >= 0, copy_ids >= 0)
    kept = np.flatnonzero(old_to_new >= 0)
    np.testing.assert_array_equal(old_to_new[kept], np.arange(kept.size))  # former order
    assert np.any(copy_ids[kept] != old_to_new[kept])  # the copy's differs (depth-first)
    for f in ("feature", "threshold", "time", "lower", "upper", "n_points"):
        np.testing.assert_array_equal(getattr(tree.arrays, f)[old_to_new[kept]],
                                      getattr(copy.arrays, f)[copy_ids[kept]])
    split = tree.arrays.left[old_to_new[kept]] != -1
    np.testing.assert_array_equal(split, old["time"][kept] < lifetime)
    np.testing.assert_array_equal(tree.node_stats["cell"][old_to_new[kept]], cells[kept])
    assert not tree.node_stats["column"][:n].any()  # not carried: reset
    assert not tree.node_stats["cell"][tree.n_nodes:n].any()
    # the same cells hold the same rows, and each former node's block is its holder's
    Z = rng.uniform(-0.2, 1.2, size=(500, 3))
    former = np.empty(kept.size, dtype=np.int64)
    former[copy_ids[kept]] = kept
    np.testing.assert_array_equal(leaves_of(tree, Z), old_to_new[former[leaves_of(copy, Z)]])
    dropped = np.flatnonzero(old_to_new < 0)
    assert dropped.size > 0
    np.testing.assert_array_equal(holder[kept], old_to_new[kept])
    assert np.all(tree.arrays.left[holder[dropped]] == -1)  # dropped nodes: held by leaves
    # both go on alike: the same random stream, the same new cuts
    W = rng.uniform(size=(100, 3))
    extend_partition_rows(tree, W, 9.0)
    extend_partition_rows(copy, W, 9.0)
    assert tree.n_nodes == copy.n_nodes
    np.testing.assert_array_equal(np.sort(tree.arrays.threshold[:tree.n_nodes]),
                                  np.sort(copy.arrays.threshold[:copy.n_nodes]))


def _direct(Phi, y, w, alpha):
    A = Phi.T @ (w[:, None] * Phi) + alpha * np.eye(Phi.shape[1])
    return np.linalg.solve(A, Phi.T @ (w * y))


@pytest.mark.parametrize("rows_per_call", [1, 3, 40])  # Givens rotations, then dtpqrt
def test_online_ridge_updates_equal_batch_solve(rows_per_call):
    rng = np.random.RandomState(0)
    n_trees, alpha = 3, 0.1
    scale = 1 / np.sqrt(n_trees)
    ridge = OnlineRidge(alpha, scale, max_cells=10**6)
    # cells 0..5 make features 0..2 (two cells each); features are unions of cells
    ridge.add_cells(np.array([0, 0, 1, 1, 2, 2]))
    ridge.add_features(3)
    all_cells, ys, ws = [], [], []
    for _ in range(6):
        n_new = rng.randint(0, 3)
        first = ridge.size
        ridge.add_cells(first + np.arange(n_new))  # new cells, one feature each
        ridge.add_features(n_new)
        # a row has one cell in each tree: cells of distinct features
        cell_column = ridge.cell_column[:ridge.n_cells]
        cells = np.array([[rng.choice(np.flatnonzero(cell_column == f))
                           for f in rng.choice(ridge.size, n_trees, replace=False)]
                          for _ in range(rows_per_call)])
        columns = np.sort(cell_column[cells], axis=1)
        y, w = rng.randn(rows_per_call), rng.uniform(0.5, 2, rows_per_call)
        ridge.add_rows(cells, columns, y, w)
        all_cells.append(cells), ys.append(y), ws.append(w)
    cells, y, w = np.vstack(all_cells), np.concatenate(ys), np.concatenate(ws)
    Phi_cells = np.zeros((len(y), ridge.n_cells))
    Phi_cells[np.repeat(np.arange(len(y)), n_trees), cells.ravel()] = scale
    S = np.zeros((ridge.n_cells, ridge.size))
    S[np.arange(ridge.n_cells), ridge.cell_column[:ridge.n_cells]] = 1
    Phi = Phi_cells @ S
    np.testing.assert_allclose(ridge.solve(), _direct(Phi, y, w, alpha), atol=1e-10)
    np.testing.assert_allclose(ridge.G[:ridge.n_cells, :ridge.n_cells],
                               Phi_cells.T @ (w[:, None] * Phi_cells), atol=1e-12)
    assert ridge.weight == pytest.approx(w.sum())
    assert ridge.target_spread() == pytest.approx(np.sqrt(np.sum(w * y ** 2) / w.sum()))
    # Coarser features from the cells' statistics alone (a refactor, no rows).
    coarse = ridge.cell_column[:ridge.n_cells] % 2
    ridge.set_features(coarse, 2)
    np.testing.assert_allclose(ridge.solve(), _direct(Phi_cells @ np.eye(2)[coarse], y, w, alpha),
                               atol=1e-10)
    # Merging cells: the Gram matrix of the unions.
    group = np.arange(ridge.n_cells) // 2
    ridge.merge_cells(group, group.max() + 1)
    ridge.set_features(np.arange(group.max() + 1), group.max() + 1)
    merged = Phi_cells @ np.eye(group.max() + 1)[group]
    np.testing.assert_allclose(ridge.solve(), _direct(merged, y, w, alpha), atol=1e-10)


def test_online_ridge_pickle_keeps_no_spare_capacity_and_learns_on():
    import pickle

    rng = np.random.RandomState(1)
    ridge = OnlineRidge(0.5, 0.5, max_cells=100)
    for n in (12, 8):
        ridge.add_cells(ridge.size + np.arange(n))
        ridge.add_features(n)
    cells = np.sort(np.array([rng.choice(20, 4, replace=False) for _ in range(30)]), axis=1)
    ridge.add_rows(cells, cells, rng.randn(30), np.ones(30))
    assert ridge.G.shape[0] > 20 and ridge.L.shape[0] > 20  # room to grow
    copy = pickle.loads(pickle.dumps(ridge))
    assert copy.G.shape == (20, 20) and copy.L.shape == (20, 20)
    np.testing.assert_array_equal(copy.solve(), ridge.solve())
    more = np.sort(np.array([rng.choice(20, 4, replace=False) for _ in range(3)]), axis=1)
    for r in (ridge, copy):
        r.add_cells(np.array([20]))
        r.add_features(1)
        r.add_rows(more, more, np.ones(3), np.ones(3))
    np.testing.assert_array_equal(copy.solve(), ridge.solve())


def test_online_ridge_storage_never_exceeds_its_bound():
    ridge = OnlineRidge(1.0, 1.0, max_cells=50)
    for _ in range(49):
        ridge.add_cells(np.array([ridge.size]))
        ridge.add_features(1)
        assert ridge.G.shape[0] <= 50 and ridge.L.shape[0] <= 50
