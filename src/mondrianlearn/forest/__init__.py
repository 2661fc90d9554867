"""Mondrian forests: classification with hierarchical smoothing, regression with
predictive uncertainty, trained in batch (``fit``) or online (``partial_fit``)."""

from ._merge import merge_forests
from .classifier import MondrianForestClassifier, MondrianTreeClassifier
from .regressor import MondrianForestRegressor, MondrianTreeRegressor

__all__ = ["MondrianForestClassifier", "MondrianForestRegressor",
           "MondrianTreeClassifier", "MondrianTreeRegressor", "merge_forests"]
