"""Each plotting function draws a figure with the expected artists (Agg backend)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.patches import Rectangle

from mondrianlearn import (MondrianForestClassifier, MondrianForestRegressor,
                           MondrianTreeClassifier, MondrianTreeRegressor)
from mondrianlearn.evaluation import Trace
from mondrianlearn.plotting import (plot_decision_functions, plot_mondrian_tree,
                                    plot_path_weights, plot_predictive_band,
                                    plot_progressive, toy_datasets)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_mondrian_painting_has_one_cell_per_leaf_and_one_line_per_cut():
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(40, 2))
    y = (X[:, 0] > X[:, 1]).astype(int)
    tree = MondrianTreeClassifier(random_state=0).fit(X, y)
    ax = plot_mondrian_tree(tree, X, y)
    view = tree.tree_
    n_leaves = view.n_leaves
    n_cuts = view.node_count - n_leaves
    rectangles = [p for p in ax.patches if isinstance(p, Rectangle)]
    # leaf cells + leaf data boxes + the outer frame
    assert len(rectangles) == 2 * n_leaves + 1
    assert len(ax.lines) == n_cuts
    assert len(ax.texts) == n_cuts  # split times
    assert len(ax.collections) == 1  # the scattered points
    colors = {tuple(np.round(p.get_facecolor(), 3)) for p in rectangles}
    assert len(colors) >= 3


def test_painting_rejects_other_dimensions():
    tree = MondrianTreeClassifier(random_state=0).fit(np.random.rand(10, 3), np.arange(10) % 2)
    with pytest.raises(ValueError, match="2-D"):
        plot_mondrian_tree(tree)


def test_decision_functions_grid_and_aucs():
    from sklearn.ensemble import ExtraTreesClassifier

    models = {"MF": MondrianForestClassifier(n_estimators=3, random_state=0),
              "ET": ExtraTreesClassifier(n_estimators=3, random_state=0)}
    data = {k: v for k, v in toy_datasets(n_samples=80).items() if k != "linear"}
    fig = plot_decision_functions(models, data, resolution=20)
    assert len(fig.axes) == 4
    assert set(fig.aucs) == {(d, m) for d in data for m in models}
    assert all(0.5 < auc <= 1.0 for auc in fig.aucs.values())
    for ax in fig.axes:
        assert any(t.get_text().startswith("AUC") for t in ax.texts)


def test_path_weights_one_panel_per_depth_and_weights_sum_to_one():
    X = np.linspace(-np.pi, np.pi, 10)[:, None]
    reg = MondrianTreeRegressor(max_depth=2, random_state=1).fit(X, np.sin(X[:, 0]))
    grid = np.linspace(-6, 6, 50)[:, None]
    fig = plot_path_weights(reg, grid)
    assert len(fig.axes) == 3
    for ax in fig.axes:
        assert any(isinstance(c, PolyCollection) for c in ax.collections)
    np.testing.assert_allclose(reg.weighted_decision_path(grid).sum(axis=1), 1.0)


def test_predictive_band_draws_mean_band_and_points():
    X = np.linspace(-np.pi, np.pi, 10)[:, None]
    y = np.sin(X[:, 0])
    reg = MondrianForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    grid = np.linspace(-6, 6, 60)[:, None]
    ax = plot_predictive_band(reg, X, y, grid, y_true=np.sin(grid[:, 0]))
    assert any(isinstance(c, PolyCollection) for c in ax.collections)
    labels = [line.get_label() for line in ax.lines]
    assert "predictive mean" in labels and "training points" in labels and "truth" in labels


def test_progressive_two_panels_one_line_per_trace():
    traces = [Trace("a", [100, 200], [0.5, 0.6], [0.1, 0.2]),
              Trace("b", [100, 200], [0.55, 0.7], [0.3, 0.5])]
    fig = plot_progressive(traces, metric_name="accuracy")
    assert len(fig.axes) == 2
    assert all(len(ax.lines) == 2 for ax in fig.axes)
    assert fig.axes[1].get_xscale() == "log"
