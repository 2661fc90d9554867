"""Aggregated Mondrian forests (AMF): online random forests with exact aggregation.

:class:`AMFClassifier` and :class:`AMFRegressor` share the Mondrian engine of
:mod:`mondrianlearn.engine` (partition storage and online extension) and keep, in
every node, a forecaster and the log-weights of the context-tree-weighting recursion
(:mod:`._kernels`).
"""

from .classifier import AMFClassifier
from .regressor import AMFRegressor

__all__ = ["AMFClassifier", "AMFRegressor"]
