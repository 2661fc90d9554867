"""Plots (matplotlib, an optional dependency: ``pip install mondrian-learn[plot]``)."""


def _pyplot():
    try:
        import matplotlib

        if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
            import os

            if not os.environ.get("DISPLAY"):
                matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("Plotting needs matplotlib: pip install 'mondrian-learn[plot]'") from exc
    return plt


def plot_progressive(traces, metric_name="metric"):
    """Progressive metric against samples seen and against time.

    Parameters
    ----------
    traces : list of mondrianlearn.evaluation.Trace
    metric_name : str
        Label of the y axis.

    Returns
    -------
    fig : matplotlib.figure.Figure
        Two panels: metric against samples seen, and against cumulative seconds.
    """
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for t in traces:
        left.plot(t.samples, t.metric, label=t.name)
        right.plot(t.seconds, t.metric, label=t.name)
    left.set_xlabel("samples seen")
    right.set_xlabel("cumulative time (s)")
    right.set_xscale("log")
    for ax in (left, right):
        ax.set_ylabel(metric_name)
        ax.grid(alpha=0.3)
    left.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig
