"""Drift events on a progressive-metric plot (matplotlib axes given by the caller)."""

import numpy as np

REPLACEMENTS = ("drift", "swap")
"""Event kinds that replace a tree (see ``drift_events_``)."""


def drift_event_markers(events, kinds=REPLACEMENTS):
    """Rows at which the forest replaced trees, and how many it replaced there.

    Parameters
    ----------
    events : structured ndarray
        A model's ``drift_events_`` (fields ``row``, ``tree``, ``kind``).
    kinds : tuple of str, default=("drift", "swap")
        Event kinds to count (``"warning"`` and ``"challenge"`` start background
        trees; ``"drift"`` and ``"swap"`` replace a tree).

    Returns
    -------
    rows : ndarray of int64
        Sorted distinct rows with at least one such event.
    counts : ndarray of int64
        Number of events at each of those rows.
    """
    events = np.asarray(events)
    if events.shape[0] == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    rows = events["row"][np.isin(events["kind"], list(kinds))]
    rows, counts = np.unique(rows, return_counts=True)
    return rows.astype(np.int64), counts.astype(np.int64)


def mark_drift_events(ax, events, *, kinds=REPLACEMENTS, color="#d40920", label=None,
                      max_lines=200):
    """Mark the rows of a model's drift events on axes whose x axis is rows seen.

    Each row where trees were replaced gets a thin vertical line, darker where more
    trees were replaced at once; past ``max_lines`` rows, the marks are a rug of ticks
    along the bottom of the axes instead, so that a stream with many events stays
    readable.

    Parameters
    ----------
    ax : matplotlib Axes
        For instance the left panel of :func:`mondrianlearn.plotting.plot_progressive`
        (metric against samples seen).
    events : structured ndarray
        A model's ``drift_events_``.
    kinds : tuple of str, default=("drift", "swap")
    color : str, default="#d40920"
    label : str, default=None
        Legend entry for the marks (one entry, whatever their number).
    max_lines : int, default=200

    Returns
    -------
    rows : ndarray of int64
        The rows marked.
    """
    rows, counts = drift_event_markers(events, kinds)
    if rows.shape[0] == 0:
        return rows
    if rows.shape[0] <= max_lines:
        top = max(int(counts.max()), 1)
        for k, (row, count) in enumerate(zip(rows, counts)):
            ax.axvline(row, color=color, linewidth=0.8, alpha=0.25 + 0.6 * count / top,
                       label=label if k == 0 else None, zorder=0)
    else:
        transform = ax.get_xaxis_transform()  # x in data, y in axes fraction
        ax.plot(rows, np.zeros(rows.shape[0]), "|", color=color, markersize=8,
                transform=transform, label=label, clip_on=False)
    return rows
