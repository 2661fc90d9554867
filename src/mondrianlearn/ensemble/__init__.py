"""Online ensembles of Mondrian trees beyond plain averaging.

Online bagging is the ``bootstrap`` option of every forest; rolling-weight boosting
(Oza and Russell's online boosting) is :class:`MondrianBoostingClassifier`.
"""

from .boosting import MondrianBoostingClassifier

__all__ = ["MondrianBoostingClassifier"]
