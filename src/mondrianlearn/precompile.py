"""Compile the kernels of the common path ahead of their first use.

An estimator's first use in a process with an empty compiled-code cache compiles its
kernels: about 10 s of CPU time for a forest's ``fit``, ``partial_fit`` and
``predict_proba`` on the project's 2-core machine (``benchmarks/bench_cold_start.py``).
numba keeps the machine code on disk, next to the sources, so this is paid once per
installation; this module pays it before a user is waiting.

:func:`precompile` runs, on a small synthetic data set, what a new user's session
runs on each model of the common path (the Mondrian forests and AMF, classifier and
regressor, with default parameters, and the drift-adaptive AMF classifier that
``mondrian demo`` shows): ``fit``, ``partial_fit`` of a first batch, of
a mini-batch and of one row, and prediction of a batch and of one row
(``predict_proba`` for the classifiers, ``predict`` with and without ``return_std``
for the regressors). Every kernel those calls reach is compiled, or loaded if it is
cached already, and left in numba's cache.

``pip install .`` runs it while it builds the package (``setup.py``), so that the
wheel carries the machine code for the machine that builds it and the first use
after installing loads it instead of compiling. It is skipped for editable installs,
when ``MONDRIANLEARN_PRECOMPILE=0`` is set, and when it fails (the kernels then
compile on first use, as before). numba reuses the stored code only for the same
numba version, processor and sources; anything else compiles again, silently. Run it
by hand after an editable install or where the package's folder is not writable (the
cache then goes to numba's per-user folder): ``mondrian precompile`` or
``python -m mondrianlearn.precompile``.
"""

import sys
import time

import numpy as np

COMMON_MODELS = (("MondrianForestClassifier", {}), ("AMFClassifier", {}),
                 ("MondrianForestRegressor", {}), ("AMFRegressor", {}),
                 ("AMFClassifier", {"drift": "adwin"}))
"""``(estimator name, parameters)`` of the models whose common path :func:`precompile`
compiles (other parameters at their defaults)."""


def _data(n_rows=200, n_features=6, seed=0):
    """A small data set on which every model splits and predicts."""
    rng = np.random.default_rng(seed)
    X = rng.random((n_rows, n_features))
    y_class = (X[:, 0] + X[:, 1] > 1.0).astype(np.int64)
    y_value = 3.0 * X[:, 0] - X[:, 2] + 0.1 * rng.standard_normal(n_rows)
    return X, y_class, y_value


def common_calls(model_class, X, y, params=None):
    """Make, on ``X`` and ``y``, the calls of a new user's session with a model of
    ``model_class`` with ``params`` (see the module docstring)."""
    params = {"random_state": 0, **(params or {})}
    model_class(**params).fit(X, y)
    model = model_class(**params)
    half = X.shape[0] // 2
    model.partial_fit(X[:half], y[:half])
    model.partial_fit(X[half:-1], y[half:-1])
    model.partial_fit(X[-1:], y[-1:])
    if hasattr(model, "predict_proba"):
        model.predict_proba(X)
        model.predict_proba(X[:1])
    else:
        model.predict(X)
        model.predict(X[:1])
        model.predict(X, return_std=True)
        model.predict(X[:1], return_std=True)


def precompile(models=COMMON_MODELS, verbose=False):
    """Compile (or load from numba's cache) the kernels of the common path.

    Parameters
    ----------
    models : sequence of (str, dict), default=COMMON_MODELS
        Estimators of :mod:`mondrianlearn` by name, with parameters (classifiers
        learn a binary label, regressors a real target).
    verbose : bool, default=False
        Print each model and the seconds it took.

    Returns
    -------
    seconds : dict
        Wall seconds per model, keyed by its description (``"AMFClassifier"``,
        ``"AMFClassifier(drift='adwin')"``).
    """
    import mondrianlearn

    X, y_class, y_value = _data()
    seconds = {}
    for name, params in models:
        model_class = getattr(mondrianlearn, name)
        label = name + (f"({', '.join(f'{k}={v!r}' for k, v in params.items())})"
                        if params else "")
        start = time.perf_counter()
        common_calls(model_class, X, y_value if "Regressor" in name else y_class, params)
        seconds[label] = time.perf_counter() - start
        if verbose:
            print(f"{label}: {seconds[label]:.1f} s", flush=True)
    return seconds


def main():
    """``python -m mondrianlearn.precompile``: :func:`precompile`, verbosely."""
    start = time.perf_counter()
    precompile(verbose=True)
    print(f"compiled kernels of the common path in {time.perf_counter() - start:.1f} s",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
