"""Each plotting function draws a figure with the expected artists (Agg backend)."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib", reason="matplotlib is not installed "
                                 "(the plot extra)")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from mondrianlearn import (
    MondrianForestClassifier,
    MondrianForestRegressor,
    MondrianTreeClassifier,
    MondrianTreeRegressor,
)
from mondrianlearn.evaluation import Trace
from mondrianlearn.experiments import toy_datasets
from mondrianlearn.plotting import (
    DecisionFunctionsDisplay,
    plot_mondrian_tree,
    plot_path_weights,
    plot_predictive_band,
    plot_progressive,
)


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


def test_decision_functions_draw_fitted_models_without_refitting():
    from sklearn.ensemble import ExtraTreesClassifier
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split

    data = {k: v for k, v in toy_datasets(n_samples=80).items() if k != "linear"}
    splits, fitted = {}, {}
    for name, (X, y) in data.items():
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, random_state=0, stratify=y)
        splits[name] = (X_tr, y_tr, X_te, y_te)
        fitted[name] = {
            "MF": MondrianForestClassifier(n_estimators=3, random_state=0).fit(X_tr, y_tr),
            "ET": ExtraTreesClassifier(n_estimators=3, random_state=0).fit(X_tr, y_tr)}
    before = {(d, m): est.predict_proba(splits[d][2]) for d in fitted
              for m, est in fitted[d].items()}
    display = DecisionFunctionsDisplay.from_estimators(fitted, splits, resolution=20)
    fig = display.figure_
    assert len(fig.axes) == 4 and display.axes_.shape == (2, 2)
    assert set(display.aucs) == {(d, m) for d in data for m in ("MF", "ET")}
    for (d, m), auc in display.aucs.items():
        assert auc == roc_auc_score(splits[d][3], before[(d, m)][:, 1])
        np.testing.assert_array_equal(fitted[d][m].predict_proba(splits[d][2]), before[(d, m)])
        assert 0.5 < auc <= 1.0
        assert display.probabilities[d][m].shape == (20, 20)
    for ax in fig.axes:
        assert any(t.get_text().startswith("AUC") for t in ax.texts)
    assert not hasattr(fig, "aucs")  # results live on the display, not on the figure


def test_decision_functions_display_draws_precomputed_values_without_models():
    grid = np.linspace(0, 1, 5)
    zz = np.tile(grid, (5, 1))
    points = (np.array([[0.2, 0.3], [0.8, 0.7]]), np.array([0, 1]))
    display = DecisionFunctionsDisplay(grid, {"toy": {"a": zz, "b": 1 - zz}}, {"toy": points},
                                       aucs={("toy", "a"): 0.75})
    assert not hasattr(display, "figure_")
    assert display.plot() is display
    a, b = display.axes_[0]
    assert [t.get_text() for t in a.texts] == ["AUC 0.750"]
    assert len(b.texts) == 0  # no AUC given for b: none written
    assert a.get_title() == "a" and b.get_title() == "b" and a.get_ylabel() == "toy"
    only_scores = DecisionFunctionsDisplay.from_estimators({}, {}, plot=False)
    assert only_scores.aucs == {} and not hasattr(only_scores, "figure_")


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


def _visible_labels(ticks):
    return [t.label1 for t in ticks if t.label1.get_visible() and t.label1.get_text()]


@pytest.mark.parametrize("seconds, min_labels", [
    ([0.31, 0.45, 0.62, 0.88], 2),          # less than half a decade
    ([0.05, 0.2, 0.9, 3.0], 3),             # under two decades
    ([0.001, 0.1, 10.0, 400.0], 4),         # many decades
    ([1e-6, 0.2, 3.0, 9.0], 3),             # a warm-up point without a metric
])
def test_progressive_time_axis_labels_do_not_overlap(seconds, min_labels):
    warm_up = seconds[0] < 1e-3 and seconds[1] > 0.1
    first = np.nan if warm_up else 0.6
    traces = [Trace("online", [100, 200, 300, 400], [first, 0.7, 0.75, 0.8], seconds),
              Trace("refit", [100, 200, 300, 400], [first, 0.6, 0.7, 0.8],
                    [2 * s for s in seconds])]
    fig = plot_progressive(traces, metric_name="accuracy")
    fig.canvas.draw()
    axis = fig.axes[1].xaxis
    assert _visible_labels(axis.get_minor_ticks()) == []
    lo, hi = fig.axes[1].get_xlim()
    majors = [label for label in _visible_labels(axis.get_major_ticks())
              if lo <= label.get_position()[0] <= hi]
    assert min_labels <= len(majors) <= 8
    boxes = sorted((label.get_window_extent() for label in majors), key=lambda b: b.x0)
    assert all(left.x1 < right.x0 for left, right in zip(boxes, boxes[1:]))
    assert all("$" not in label.get_text() for label in majors)  # plain numbers


def test_progressive_has_a_title():
    traces = [Trace("a", [100, 200], [0.5, 0.6], [0.1, 0.2])]
    assert plot_progressive(traces, "accuracy").get_suptitle() != ""
    fig = plot_progressive(traces, "accuracy", title="Elec2: test-then-train")
    assert fig.get_suptitle() == "Elec2: test-then-train"


def test_plotting_never_changes_the_backend(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    previous = matplotlib.get_backend()
    matplotlib.use("pdf")
    try:
        traces = [Trace("a", [100, 200], [0.5, 0.6], [0.1, 0.2])]
        plot_progressive(traces, metric_name="accuracy")
        X = np.linspace(-1, 1, 8)[:, None]
        reg = MondrianForestRegressor(n_estimators=2, random_state=0).fit(X, X[:, 0])
        plot_predictive_band(reg, X, X[:, 0], X)
        assert matplotlib.get_backend().lower() == "pdf"
    finally:
        matplotlib.use(previous)
