"""mondrian-learn: learning with the Mondrian process.

Estimators are imported lazily, so ``import mondrianlearn`` stays fast; the first
use of an estimator loads scikit-learn and the compiled kernels (cached on disk).
"""

__version__ = "0.1.0"

_EXPORTS = {
    "MondrianForestClassifier": "mondrianlearn.forest",
    "MondrianForestRegressor": "mondrianlearn.forest",
    "MondrianTreeClassifier": "mondrianlearn.forest",
    "MondrianTreeRegressor": "mondrianlearn.forest",
    "merge_forests": "mondrianlearn.forest",
    "DaskShardedForest": "mondrianlearn.dask",
    "MondrianBoostingClassifier": "mondrianlearn.ensemble",
    "AMFClassifier": "mondrianlearn.amf",
    "AMFRegressor": "mondrianlearn.amf",
    "MondrianKernel": "mondrianlearn.kernel",
    "MondrianKernelClassifier": "mondrianlearn.kernel",
    "MondrianKernelRegressor": "mondrianlearn.kernel",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mondrianlearn' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
