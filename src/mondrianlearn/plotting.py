"""Plots for notebooks and the command line (matplotlib, an optional dependency).

Install with ``pip install "mondrian-learn[plot]"``. Every function takes fitted
models or computed results, returns the matplotlib figure (or draws into the axes it
is given), never calls ``show`` and never changes the matplotlib backend: choose one
as usual (``MPLBACKEND=Agg`` for files only).
"""

import numpy as np

MONDRIAN_COLORS = ("#d40920", "#1356a2", "#f7d842")
"""Red, blue and yellow of Piet Mondrian's compositions."""


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("Plotting needs matplotlib: pip install 'mondrian-learn[plot]'") from exc
    return plt


def _tree_state(model, tree_index):
    trees = getattr(model, "trees_", None)
    if trees is None:
        raise ValueError("The model is not fitted (it has no trees_).")
    return trees[tree_index]


def plot_mondrian_tree(model, X=None, y=None, *, tree_index=0, ax=None, show_times=True,
                       show_boxes=True, seed=0):
    """Draw the partition of a 2-D Mondrian tree as a Mondrian painting.

    The cells of the leaves (the tiling of the training range made by the cuts) are
    painted white or in Mondrian's red, blue and yellow; cuts are black lines across
    their node's cell, thicker when earlier (the time of a cut is written next to
    it); the bounding boxes of the training points in each leaf (the Mondrian
    process restricted to the data) are drawn as thin grey rectangles.

    Parameters
    ----------
    model : fitted estimator with ``trees_`` and two features
        A Mondrian tree or forest of this library (any model built on the engine).
    X, y : arrays, optional
        Points to scatter on top (coloured by label when ``y`` is given).
    tree_index : int, default=0
        Which tree of a forest to draw.
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure).
    show_times : bool, default=True
        Annotate each cut with its split time ``tau``.
    show_boxes : bool, default=True
        Draw the leaves' data boxes.
    seed : int, default=0
        Seeds the choice of colours.

    Returns
    -------
    ax : matplotlib Axes
        The axes drawn on.
    """
    plt = _pyplot()
    from matplotlib.patches import Rectangle

    from .utils.feature_scale import tree_in_raw_units

    tree = _tree_state(model, tree_index)
    a = tree_in_raw_units(model, tree)  # cuts and boxes in the units of X
    if a.lower.shape[1] != 2:
        raise ValueError("plot_mondrian_tree draws 2-D trees; this one has "
                         f"{a.lower.shape[1]} features.")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 6))
    n = tree.n_nodes
    rng = np.random.RandomState(seed)
    root = int(a.meta[1])
    times = a.time[:n][a.left[:n] != -1]
    finite = times[np.isfinite(times)]
    t_max = float(finite.max()) if finite.size else 1.0
    cells = {root: (a.lower[root].copy(), a.upper[root].copy())}
    stack = [root]
    while stack:
        j = stack.pop()
        lo, hi = cells[j]
        if a.left[j] == -1:
            color = MONDRIAN_COLORS[rng.randint(3)] if rng.rand() < 0.3 else "white"
            ax.add_patch(Rectangle(lo, *(hi - lo), facecolor=color, edgecolor="none", zorder=0))
            if show_boxes:
                box = a.upper[j] - a.lower[j]
                ax.add_patch(Rectangle(a.lower[j], *box, facecolor="none", edgecolor="0.45",
                                       linewidth=0.6, zorder=1))
            continue
        f, t = int(a.feature[j]), float(a.threshold[j])
        lw = 1.0 + 2.5 * (1.0 - min(a.time[j] / t_max, 1.0))
        if f == 0:
            ax.plot([t, t], [lo[1], hi[1]], color="black", linewidth=lw, zorder=2,
                    solid_capstyle="butt")
            where = (t, 0.5 * (lo[1] + hi[1]))
        else:
            ax.plot([lo[0], hi[0]], [t, t], color="black", linewidth=lw, zorder=2,
                    solid_capstyle="butt")
            where = (0.5 * (lo[0] + hi[0]), t)
        if show_times:
            ax.annotate(f"{a.time[j]:.2g}", where, fontsize=6, color="0.2", zorder=4,
                        xytext=(2, 2), textcoords="offset points")
        left_hi, right_lo = hi.copy(), lo.copy()
        left_hi[f] = t
        right_lo[f] = t
        cells[int(a.left[j])] = (lo, left_hi)
        cells[int(a.right[j])] = (right_lo, hi)
        stack.extend([int(a.left[j]), int(a.right[j])])
    lo, hi = a.lower[root], a.upper[root]
    ax.add_patch(Rectangle(lo, *(hi - lo), facecolor="none", edgecolor="black", linewidth=3.0,
                           zorder=2))
    if X is not None:
        X = np.asarray(X)
        c = None if y is None else np.unique(np.asarray(y), return_inverse=True)[1]
        ax.scatter(X[:, 0], X[:, 1], c=c, s=10, cmap="coolwarm", edgecolors="black",
                   linewidths=0.3, zorder=3)
    pad = 0.03 * max(float(np.max(hi - lo)), 1e-12)
    ax.set_xlim(lo[0] - pad, hi[0] + pad)
    ax.set_ylim(lo[1] - pad, hi[1] + pad)
    ax.set_aspect("equal", adjustable="box")
    ax.set_title(f"Mondrian tree: {int(np.sum(a.left[:n] == -1))} leaves")
    return ax


class DecisionFunctionsDisplay:
    """Decision functions of binary classifiers side by side on 2-D data.

    The layout of the AMF paper's figure 1: one row per dataset, one column per
    model, each panel showing ``P(y = 1 | x)`` over the square with the training
    points, and the test ROC AUC in its corner when it is known. As scikit-learn's
    ``*Display`` objects: :meth:`from_estimators` computes what is drawn from fitted
    models (it never fits one), the constructor takes it already computed, and
    :meth:`plot` draws it.

    Parameters
    ----------
    grid : array of shape (resolution,)
        Coordinates of the grid along each axis.
    probabilities : dict of str to dict of str to array of shape (resolution, resolution)
        ``probabilities[dataset][model]``: ``P(y = 1 | x)`` on the grid (rows follow
        the second feature, columns the first).
    training_points : dict of str to tuple (X_train, y_train)
        The points drawn on each dataset's row.
    aucs : dict of (str, str) to float, default=None
        Test ROC AUC of each (dataset, model), written in the panels' corners.

    Attributes
    ----------
    figure_ : matplotlib Figure
        The figure drawn by :meth:`plot`.
    axes_ : array of matplotlib Axes of shape (n_datasets, n_models)
        Its panels.

    Examples
    --------
    >>> from sklearn.model_selection import train_test_split
    >>> from mondrianlearn import MondrianForestClassifier
    >>> from mondrianlearn.experiments import toy_datasets
    >>> X, y = toy_datasets(n_samples=100)["moons"]
    >>> X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    >>> forest = MondrianForestClassifier(n_estimators=5, random_state=0).fit(X_train, y_train)
    >>> display = DecisionFunctionsDisplay.from_estimators(
    ...     {"moons": {"MF": forest}}, {"moons": (X_train, y_train, X_test, y_test)})
    >>> display.aucs[("moons", "MF")] > 0.8
    True
    """

    def __init__(self, grid, probabilities, training_points, aucs=None):
        self.grid = np.asarray(grid, dtype=float)
        self.probabilities = probabilities
        self.training_points = training_points
        self.aucs = {} if aucs is None else dict(aucs)

    @classmethod
    def from_estimators(cls, models, datasets, *, resolution=100, plot=True):
        """Compute the decision functions and test AUCs of fitted classifiers.

        Parameters
        ----------
        models : dict of str to dict of str to classifier
            ``models[dataset][name]`` is a binary classifier with ``predict_proba``,
            fitted on the training part of that dataset (it is not refitted).
        datasets : dict of str to tuple (X_train, y_train, X_test, y_test)
            Two features scaled to [0, 1]; the training points are drawn, the test
            points give the AUCs.
        resolution : int, default=100
            Grid points per axis.
        plot : bool, default=True
            Draw the figure (``False``: only compute, e.g. for the AUCs).

        Returns
        -------
        display : DecisionFunctionsDisplay
            With ``aucs`` filled in, and ``figure_`` and ``axes_`` when ``plot``.
        """
        from sklearn.metrics import roc_auc_score

        grid = np.linspace(-0.05, 1.05, int(resolution))
        xx, yy = np.meshgrid(grid, grid)
        points = np.column_stack([xx.ravel(), yy.ravel()])
        probabilities, training, aucs = {}, {}, {}
        for data_name, (X_tr, y_tr, X_te, y_te) in datasets.items():
            training[data_name] = (np.asarray(X_tr), np.asarray(y_tr))
            probabilities[data_name] = {}
            for model_name, est in models.get(data_name, {}).items():
                aucs[(data_name, model_name)] = float(
                    roc_auc_score(y_te, est.predict_proba(X_te)[:, 1]))
                probabilities[data_name][model_name] = (
                    est.predict_proba(points)[:, 1].reshape(xx.shape))
        display = cls(grid, probabilities, training, aucs)
        return display.plot() if plot else display

    def plot(self):
        """Draw the panels on a new figure.

        Returns
        -------
        display : DecisionFunctionsDisplay
            ``self``, with ``figure_`` and ``axes_`` set.
        """
        plt = _pyplot()
        model_names = list(dict.fromkeys(m for per_data in self.probabilities.values()
                                         for m in per_data))
        n_rows, n_cols = len(self.training_points), max(len(model_names), 1)
        fig, axes = plt.subplots(n_rows, n_cols, figsize=(2.6 * n_cols, 2.6 * n_rows),
                                 squeeze=False)
        xx, yy = np.meshgrid(self.grid, self.grid)
        for r, (data_name, (X_tr, y_tr)) in enumerate(self.training_points.items()):
            for c, model_name in enumerate(model_names):
                ax = axes[r, c]
                ax.set_xticks([])
                ax.set_yticks([])
                if r == 0:
                    ax.set_title(model_name, fontsize=9)
                if c == 0:
                    ax.set_ylabel(data_name)
                zz = self.probabilities.get(data_name, {}).get(model_name)
                if zz is None:
                    continue
                ax.contourf(xx, yy, zz, levels=np.linspace(0, 1, 11), cmap="RdBu_r",
                            alpha=0.8)
                ax.scatter(X_tr[:, 0], X_tr[:, 1], c=y_tr, cmap="RdBu_r", s=6,
                           edgecolors="black", linewidths=0.2)
                auc = self.aucs.get((data_name, model_name))
                if auc is not None:
                    ax.text(0.97, 0.03, f"AUC {auc:.3f}", transform=ax.transAxes,
                            ha="right", va="bottom", fontsize=8,
                            bbox={"facecolor": "white", "alpha": 0.8})
        fig.tight_layout()
        self.figure_, self.axes_ = fig, axes
        return self


def _node_depths(tree):
    a = tree.arrays
    n = tree.n_nodes
    depth = np.full(n, -1)
    root = int(a.meta[1])
    depth[root] = 0
    stack = [root]
    while stack:
        j = stack.pop()
        if a.left[j] != -1:
            for child in (a.left[j], a.right[j]):
                depth[child] = depth[j] + 1
                stack.append(int(child))
    return depth


def plot_path_weights(regressor, X_grid, *, max_depth=None, tree_index=0):
    """Weight of the nodes at each depth along the prediction path (1-D inputs).

    The root's weight is zero inside the training range and grows away from it;
    deeper nodes share the rest; the leaf takes what remains.

    Parameters
    ----------
    regressor : fitted MondrianTreeRegressor or MondrianForestRegressor
        The model whose prediction paths are drawn.
    X_grid : array of shape (n_points, 1)
        Points of the x axis.
    max_depth : int, default=None
        Deepest level drawn (default: the regressor's ``max_depth`` or the tree's).
    tree_index : int, default=0
        Which tree of a forest to draw.

    Returns
    -------
    fig : matplotlib Figure
        One panel per depth, from the root down: the weight of the path's node at
        that depth along ``X_grid``.
    """
    plt = _pyplot()
    X_grid = np.asarray(X_grid, dtype=float).reshape(-1, 1)
    weights, ptr = _forest_path(regressor, X_grid)
    weights = weights[:, ptr[tree_index]:ptr[tree_index + 1]].toarray()
    depth = _node_depths(_tree_state(regressor, tree_index))
    deepest = int(depth.max())
    if max_depth is not None:
        deepest = min(deepest, int(max_depth))
    elif getattr(regressor, "max_depth", None) is not None:
        deepest = min(deepest, int(regressor.max_depth))
    fig, axes = plt.subplots(deepest + 1, 1, figsize=(7, 1.6 * (deepest + 1)), sharex=True,
                             squeeze=False)
    x = X_grid[:, 0]
    for d in range(deepest + 1):
        ax = axes[d, 0]
        w = weights[:, depth == d].max(axis=1) if np.any(depth == d) else np.zeros_like(x)
        ax.fill_between(x, 0.0, w, color=MONDRIAN_COLORS[1], alpha=0.8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(f"depth {d}")
    axes[-1, 0].set_xlabel("x")
    axes[0, 0].set_title("weight of the path's node at each depth")
    fig.tight_layout()
    return fig


def _forest_path(regressor, X):
    out = regressor.weighted_decision_path(X)
    if isinstance(out, tuple):
        return out
    return out, np.array([0, out.shape[1]])


def plot_predictive_band(regressor, X_train, y_train, X_grid, *, ax=None, y_true=None):
    """Predictive mean with a band of two standard deviations (1-D regression).

    Parameters
    ----------
    regressor : fitted regressor with ``predict(X, return_std=True)``
        The model whose predictive distribution is drawn.
    X_train, y_train : arrays
        Training points, drawn as dots.
    X_grid : array of shape (n_points, 1)
        Points at which the mean and the band are drawn.
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure).
    y_true : array, optional
        The true function on ``X_grid``, drawn dashed.

    Returns
    -------
    ax : matplotlib Axes
        The axes drawn on.
    """
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    X_grid = np.asarray(X_grid, dtype=float).reshape(-1, 1)
    mean, std = regressor.predict(X_grid, return_std=True)
    x = X_grid[:, 0]
    ax.fill_between(x, mean - 2 * std, mean + 2 * std, color=MONDRIAN_COLORS[2], alpha=0.5,
                    label="mean ± 2 std")
    ax.plot(x, mean, color=MONDRIAN_COLORS[1], label="predictive mean")
    if y_true is not None:
        ax.plot(x, y_true, color="0.3", linestyle="--", label="truth")
    ax.plot(np.asarray(X_train).ravel(), y_train, "o", color=MONDRIAN_COLORS[0], ms=4,
            label="training points")
    ax.legend(fontsize=8, loc="upper left")
    ax.set_xlabel("x")
    return ax


def plot_progressive(traces, metric_name="metric", *, title=None):
    """Progressive metric against samples seen and against time.

    Parameters
    ----------
    traces : list of mondrianlearn.evaluation.Trace
        Results of :func:`mondrianlearn.evaluation.progressive_evaluation`, one
        curve each.
    metric_name : str
        Label of the y axis.
    title : str, default=None
        Title of the figure; default ``"Test-then-train evaluation: <metric_name>"``.

    Returns
    -------
    fig : matplotlib Figure
        Two panels: metric against samples seen, and against cumulative seconds on a
        logarithmic axis labelled with plain numbers. A trace of a model with drift
        adaptation (``Trace.drift_events``) has the rows where it replaced trees
        marked on the left panel, in its colour
        (:func:`mondrianlearn.drift.mark_drift_events`).
    """
    from .drift import mark_drift_events

    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for t in traces:
        (line,) = left.plot(t.samples, t.metric, label=t.name)
        right.plot(t.seconds, t.metric, label=t.name)
        if getattr(t, "drift_events", None) is not None:
            mark_drift_events(left, t.drift_events, color=line.get_color(),
                              label=f"{t.name}: trees replaced")
    left.set_xlabel("samples seen")
    right.set_xlabel("cumulative time (s)")
    right.set_xscale("log")
    # The times of the points drawn: those with a metric (none during the warm-up).
    drawn = [np.asarray(t.seconds, dtype=float)[np.isfinite(np.asarray(t.metric, dtype=float))]
             for t in traces]
    seconds = np.concatenate(drawn or [np.empty(0)])
    _label_log_time_axis(right.xaxis, seconds[np.isfinite(seconds) & (seconds > 0)])
    for ax in (left, right):
        ax.set_ylabel(metric_name)
        ax.grid(alpha=0.3)
    left.legend(loc="best", fontsize=8)
    fig.suptitle(f"Test-then-train evaluation: {metric_name}" if title is None else title)
    fig.tight_layout()
    return fig


def _label_log_time_axis(axis, seconds):
    """Major ticks only, as plain numbers, spaced for the decades the times span:
    evenly spaced round numbers within half a decade; 1, 2 and 5 times a power of ten
    up to two and a half decades; 1 and 3 up to four; one tick per decade beyond."""
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    if seconds.size:
        decades = float(np.log10(seconds.max() / seconds.min()))
        if decades < 0.5:
            axis.set_major_locator(MaxNLocator(nbins=4))
        elif decades < 2.5:
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        elif decades < 4:
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 3.0)))
        else:
            axis.set_major_locator(LogLocator(base=10))
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())
