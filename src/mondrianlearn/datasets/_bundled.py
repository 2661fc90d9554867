"""The dataset shipped inside the package."""

import gzip
from importlib import resources

import numpy as np

ELECTRICITY_FEATURES = ["date", "day", "period", "nswprice", "nswdemand", "vicprice",
                        "vicdemand", "transfer"]


def load_electricity(n_samples=None, *, as_frame=False):
    """The Elec2 stream (Harries, 1999): will the NSW electricity price go up?

    45,312 half-hourly records (May 1996 - December 1998) of the New South Wales
    market, 8 normalised features, label ``UP`` or ``DOWN`` relative to the moving
    average of the last 24 hours. The prices drift over time: keep the row order.

    Parameters
    ----------
    n_samples : int, default=None
        Return only the first ``n_samples`` rows of the stream.
    as_frame : bool, default=False
        Return a pandas DataFrame and Series (requires pandas).

    Returns
    -------
    X : ndarray of shape (n_samples, 8) or DataFrame
        The features, in the order of the stream (columns ``date``, ``day``, ``period``,
        ``nswprice``, ``nswdemand``, ``vicprice``, ``vicdemand``, ``transfer``).
    y : ndarray of shape (n_samples,) of str or Series
        The labels, ``"UP"`` or ``"DOWN"``.
    """
    path = resources.files(__package__).joinpath("data", "electricity.csv.gz")
    with path.open("rb") as raw, gzip.open(raw, "rt") as f:
        rows = [line.rstrip("\n").split(",") for line in f if line.strip()]
    if n_samples is not None:
        rows = rows[: int(n_samples)]
    X = np.array([[float(v) for v in r[:-1]] for r in rows], dtype=np.float64)
    y = np.array([r[-1] for r in rows])
    if as_frame:
        import pandas as pd

        return pd.DataFrame(X, columns=ELECTRICITY_FEATURES), pd.Series(y, name="class")
    return X, y
