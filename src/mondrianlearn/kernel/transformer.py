"""The Mondrian kernel feature map as a scikit-learn transformer."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import validate_data

from ..utils.estimator import TreeModelMixin
from ..utils.fast_path import fast_call
from ..utils.parallel import map_trees
from ..utils.validation import check_empty_batch, is_empty_batch
from ._features import (
    FastPartitionsMixin,
    assign_columns,
    csr_rows,
    extend_partition_rows,
    feature_matrix,
    new_partition,
    sample_partition,
)


def _check_X_fit(estimator, X, reset):
    if not reset:
        estimator._check_structure()
    X = validate_data(estimator, X, reset=reset, dtype=np.float64, ensure_min_samples=1)
    if reset:
        estimator._record_structure()
    return np.ascontiguousarray(X)


class MondrianKernel(FastPartitionsMixin, TreeModelMixin, ClassNamePrefixFeaturesOutMixin,
                     TransformerMixin, BaseEstimator):
    """Random features of the Laplace kernel from Mondrian partitions.

    ``fit`` samples ``n_trees`` independent Mondrian partitions of the data with the
    given lifetime (Mondrian trees of the shared engine, without pausing). A row is
    mapped to the indicator of the leaf (cell) that contains it in every tree, scaled
    by ``1/sqrt(n_trees)``: exactly ``n_trees`` non-zeros per row. The inner product
    of two rows' features is the fraction of trees in which they share a cell, an
    unbiased estimate of the Laplace kernel ``exp(-lifetime * ||x - x'||_1)`` whose
    error decays exponentially with ``n_trees`` (Balog et al., 2016).

    Rows outside the boxes of the training data still fall in exactly one leaf per
    tree: they follow the split thresholds, i.e. they are mapped as if the partition
    had no further cut outside the data (unlike ``partial_fit``, which samples the
    cuts that separate them). For rows far from the data the approximation of the
    Laplace kernel is therefore optimistic.

    The kernel, like the Laplace kernel, measures distances in the units of the
    features: a cut falls on a feature with probability proportional to the cell's
    width along it. Standardise features on very different scales first (see
    :class:`MondrianKernelRegressor`).

    Parameters
    ----------
    n_trees : int, default=100
        Number ``M`` of Mondrian partitions (non-zero features per row).
    lifetime : float, default=1.0
        Lifetime ``lambda`` of the Mondrian process, the inverse width of the
        Laplace kernel approximated.
    n_jobs : int, default=None
        Threads over trees.
    random_state : int, RandomState instance or None, default=None
        Seeds the partitions' random streams.

    Attributes
    ----------
    trees_ : list of TreeState
        The partitions; a leaf's column is ``trees_[t].node_stats["column"][leaf] - 1``.
    n_features_out_ : int
        Number of columns (leaves of all trees); grows with ``partial_fit``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of str
        Only when ``X`` had string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from mondrianlearn import MondrianKernel
    >>> X = np.random.RandomState(0).uniform(size=(50, 2))
    >>> mk = MondrianKernel(n_trees=500, lifetime=2.0, random_state=0).fit(X)
    >>> Z = mk.transform(X)
    >>> Z.shape[0], int(Z.getnnz(axis=1).max())
    (50, 500)
    >>> exact = np.exp(-2.0 * np.abs(X[:, None] - X[None]).sum(-1))
    >>> bool(np.abs(mk.kernel(X) - exact).max() < 0.15)
    True
    """

    _structure_params = ("n_trees",)
    """Parameters fixed once the partitions are sampled (checked by a later
    ``partial_fit``: ``TreeModelMixin._check_structure``)."""

    _parameter_constraints = {
        "n_trees": [Interval(Integral, 1, None, closed="left")],
        "lifetime": [Interval(Real, 0, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(self, n_trees=100, lifetime=1.0, *, n_jobs=None, random_state=None):
        self.n_trees = n_trees
        self.lifetime = lifetime
        self.n_jobs = n_jobs
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Sample the partitions on the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows on which the partitions are sampled.
        y : ignored
            Not used; present for the scikit-learn API.

        Returns
        -------
        self
        """
        X = self._start_origin(_check_X_fit(self, X, reset=True))
        self._sample(X, float(self.lifetime))
        self._remember_fast_state()
        return self

    def _sample(self, X, lifetime):
        states = self._spawn_tree_states(self.n_trees)
        self.trees_ = [new_partition(X.shape[1], states[t]) for t in range(self.n_trees)]

        def grow(tree):
            sample_partition(tree, X, lifetime)
            tree.trim()
            return tree  # with joblib's Dask backend, trees come back from workers

        self.trees_ = map_trees(grow, self.trees_, self.n_jobs)
        self.n_features_out_ = assign_columns(self.trees_, 0)
        self.n_samples_seen_ = X.shape[0]

    def partial_fit(self, X, y=None):
        """Extend the partitions with new rows (conditional Mondrian, online).

        New cells become new columns, appended after the existing ones; the columns
        of existing cells never change, so earlier outputs of ``transform`` stay
        valid (they are zero on the new columns). Training rows stay in their cells.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows of the mini-batch.
        y : ignored
            Not used; present for the scikit-learn API.

        Returns
        -------
        self

        Notes
        -----
        A call of a few rows (``utils.fast_path``) after the first one skips
        scikit-learn's validation when nothing it checks can have changed, and
        extends all partitions in one compiled call: same model, same errors.
        """
        if self._partial_fit_fast(X):
            return self
        return self._partial_fit_full(X)

    @_fit_context(prefer_skip_nested_validation=True)
    def _partial_fit_full(self, X):
        self._own_arrays()  # loaded from read-only memory maps (utils.persistence)
        first = not self.__sklearn_is_fitted__()
        if not first and is_empty_batch(X):  # a no-op, as for the forests
            check_empty_batch(self, X)
            return self
        X = _check_X_fit(self, X, reset=first)
        if first:  # projectivity: batch sampling of the first batch is exact
            self._sample(self._start_origin(X), float(self.lifetime))
        else:
            self._extend(self._later_rows_in_units(X))
        self._remember_fast_state()
        return self

    @fast_call
    def _partial_fit_fast(self, X):
        """The fast path of ``partial_fit`` (see ``utils.fast_path``); False when the
        call must take the full path (nothing has changed then)."""
        from ._forest_kernels import learn_partitions

        X = self._fast_X(X)
        if X is None:
            return False
        table = self._fast_table()
        if table is None:
            return False
        work = self._fast_learn_work(X.shape[1])
        lifetime = self._fast_lifetime
        n_columns = learn_partitions(table.addresses, table.sizes, X, lifetime,
                                     self.n_features_out_, *work[:6])
        if n_columns == -1:
            return False
        if n_columns == -2:  # trees left to the full path's loop
            self._fast_finish_trees(X, work, lifetime)
            n_columns = assign_columns(self.trees_, self.n_features_out_)
        self.n_features_out_ = n_columns
        self.n_samples_seen_ += X.shape[0]
        return True

    def _remember_fast_state(self):
        super()._remember_fast_state()
        self._fast_lifetime = float(self.lifetime)

    def _extend(self, X):
        """Extend every tree with the rows; return the new columns of the rows."""
        lifetime = float(self.lifetime)
        results = map_trees(lambda tree: (tree, extend_partition_rows(tree, X, lifetime)),
                            self.trees_, self.n_jobs)
        self.trees_ = [tree for tree, _ in results]
        leaves = [leaf for _, leaf in results]
        self.n_features_out_ = assign_columns(self.trees_, self.n_features_out_)
        self.n_samples_seen_ += X.shape[0]
        return leaves

    def transform(self, X):
        """Sparse Mondrian features of the rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to map.

        Returns
        -------
        Z : scipy.sparse.csr_matrix of shape (n_samples, n_features_out_)
            ``n_trees`` entries equal to ``1/sqrt(n_trees)`` per row.
        """
        fast = self._fast_X(X)
        if fast is not None:
            columns = self._fast_leaf_columns(fast)
            if columns is not None:
                return csr_rows(columns, self.n_features_out_)
        X = self._check_predict_input(X)
        return feature_matrix(self.trees_, X, self.n_features_out_, self.n_jobs)

    def kernel(self, X, Y=None):
        """Approximate Gram matrix ``k_M(x, y)``: fraction of trees sharing a cell.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
            Rows of the Gram matrix.
        Y : array-like of shape (n_samples_Y, n_features), default=None
            ``X`` when omitted.

        Returns
        -------
        K : ndarray of shape (n_samples_X, n_samples_Y)
            ``K[i, j]``: fraction of the partitions in which ``X[i]`` and ``Y[j]`` fall
            in the same cell.
        """
        ZX = self.transform(X)
        ZY = ZX if Y is None else self.transform(Y)
        return (ZX @ ZY.T).toarray()

    @property
    def _n_features_out(self):
        return self.n_features_out_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []
        return tags
