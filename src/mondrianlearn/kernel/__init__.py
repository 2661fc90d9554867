"""The Mondrian kernel (Balog et al., 2016): random features of the Laplace kernel.

- :class:`MondrianKernel`: the sparse feature map, a scikit-learn transformer;
- :class:`MondrianKernelRegressor`: exact ridge regression on the features, with a
  sweep over all lifetimes (Cholesky updates) and online rank-1 updates;
- :class:`MondrianKernelClassifier`: a linear classifier trained by SGD, with the
  same lifetime sweep (split weights are inherited).
"""

from .linear import MondrianKernelClassifier, MondrianKernelRegressor
from .transformer import MondrianKernel

__all__ = ["MondrianKernel", "MondrianKernelClassifier", "MondrianKernelRegressor"]
