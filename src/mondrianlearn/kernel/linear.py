"""Linear models on Mondrian kernel features, with the lifetime sweep.

:class:`MondrianKernelRegressor` solves ridge regression exactly (Cholesky factor of
``A = Phi^T W Phi + alpha I``); :class:`MondrianKernelClassifier` trains a linear
classifier by SGD. With ``lifetime="auto"`` both sample the partitions once with a
terminal lifetime and sweep every lifetime below it by replaying the cuts in time
order (kernel paper, section 4), choosing the lifetime on held-out rows (or by the
ridge log marginal likelihood); the sweep is recorded in ``lifetime_path_``.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..engine.random import spawn_states
from ..engine.tree import LEAF
from ..utils.fast_path import FAST_MAX_ROWS, ONES, fast_call
from ..utils.parallel import map_trees
from ..utils.estimator import TreeModelMixin
from ..utils.validation import (check_classifier_batch, check_classifier_fit, check_X_predict,
                                check_X_y_batch)
from ._features import (FastPartitionsMixin, assign_columns, csr_rows,
                        extend_partition_rows, feature_matrix, leaves_of, new_partition,
                        pruned_copy, sample_partition)
from ._ridge import OnlineRidge
from ._sweep import FlatForest, RidgeSweep, sgd_epochs, sgd_sweep


def default_max_lifetime(X, random_state):
    """``10 / median L1 distance`` between rows (on at most 256 of them).

    At that lifetime the Laplace kernel of two typical rows is ``exp(-10)``: finer
    partitions than any sensible kernel width.
    """
    rng = check_random_state(random_state)
    n = X.shape[0]
    S = X[rng.choice(n, 256, replace=False)] if n > 256 else X
    dist = np.abs(S[:, None, :] - S[None, :, :]).sum(axis=-1)[np.triu_indices(S.shape[0], 1)]
    dist = dist[dist > 0]
    return 10.0 / float(np.median(dist)) if dist.size else 1.0


_STOP_FACTOR = 2.0
"""Early stopping: the sweep ends when it has twice the features of its best lifetime
(and at least four per tree)."""


class _BaseMondrianKernelModel(FastPartitionsMixin, TreeModelMixin, BaseEstimator):
    """Partitions, feature columns and the lifetime sweep shared by both models."""

    _parameter_constraints = {
        "n_trees": [Interval(Integral, 1, None, closed="left")],
        "lifetime": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "max_lifetime": [Interval(Real, 0, None, closed="neither"), None],
        "max_features": [Interval(Integral, 1, None, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "early_stopping": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def _seeds(self):
        rng = check_random_state(self.random_state)
        seed = rng.randint(np.iinfo(np.int32).max)
        return rng, spawn_states(seed, self.n_trees + 1)

    def _sample_trees(self, X, lifetime, states):
        trees = [new_partition(X.shape[1], states[t]) for t in range(self.n_trees)]

        def grow(tree):
            sample_partition(tree, X, lifetime)
            tree.trim()
            return tree  # with joblib's Dask backend, trees come back from workers

        return map_trees(grow, trees, self.n_jobs)

    def _set_trees(self, trees):
        self.trees_ = trees
        self.n_kernel_features_ = assign_columns(trees, 0)

    def _columns(self, X):
        """Sorted feature columns of every row, shape (n_rows, n_trees)."""
        out = np.empty((X.shape[0], self.n_trees), dtype=np.int64)
        cols = map_trees(lambda tree: tree.node_stats["column"][leaves_of(tree, X)] - 1,
                         self.trees_, self.n_jobs)
        for t, c in enumerate(cols):
            out[:, t] = c
        out.sort(axis=1)
        return out

    def _extend_columns(self, X):
        """Extend the partitions with the rows; return their sorted columns."""
        lifetime = float(self.lifetime_)
        results = map_trees(lambda tree: (tree, extend_partition_rows(tree, X, lifetime)),
                            self.trees_, self.n_jobs)
        self.trees_ = [tree for tree, _ in results]
        return self._columns_of_leaves([leaf for _, leaf in results])

    def _columns_of_leaves(self, leaves):
        """Give columns to the new leaves; return the sorted columns of the rows whose
        leaves (one array per tree) are ``leaves``, and the number of new columns."""
        old = self.n_kernel_features_
        self.n_kernel_features_ = assign_columns(self.trees_, old)
        out = np.empty((len(leaves[0]), len(self.trees_)), dtype=np.int64)
        for t, (tree, leaf) in enumerate(zip(self.trees_, leaves)):
            out[:, t] = tree.node_stats["column"][leaf] - 1
        out.sort(axis=1)
        return out, self.n_kernel_features_ - old

    @fast_call
    def _fast_scores(self, X, W, intercept, add_intercept):
        """``(intercept +) feature_map(X) @ W`` for a 2-D ``W`` in one compiled call
        over all trees (see ``utils.fast_path``), or None for the full path."""
        from ._forest_kernels import predict_linear

        table = self._fast_table()
        if table is None:
            return None
        work = self._fast_scratch.work
        columns = work.get("predict")
        if columns is None or columns.shape[1] != len(self.trees_):
            columns = work["predict"] = np.empty((FAST_MAX_ROWS, len(self.trees_)),
                                                 dtype=np.int64)
        out = np.empty((X.shape[0], W.shape[1]))
        if not predict_linear(table.addresses, table.sizes, X, W, self._fast_map_scale,
                              intercept, add_intercept, out, columns):
            return None
        return out

    def _remember_fast_state(self):
        super()._remember_fast_state()
        # feature_matrix's value of the features (one per tree)
        self._fast_map_scale = float(1.0 / np.sqrt(len(self.trees_)))

    def _split_rows(self, n, rng):
        """Boolean mask of the validation rows (at least one row on each side)."""
        n_val = int(round(self.validation_fraction * n))
        n_val = min(max(n_val, 1), n - 1)
        mask = np.zeros(n, dtype=bool)
        if n_val > 0:
            mask[rng.permutation(n)[:n_val]] = True
        return mask

    def _path(self, forest, record, n_records, stamps):
        times = np.concatenate([[0.0], forest.time[forest.events[: n_records - 1]]])
        return {
            "lifetimes": times,
            "n_features": record[:n_records, 0].astype(np.int64),
            "train_error": record[:n_records, 1],
            "validation_error": record[:n_records, 2],
            "log_marginal_likelihood": record[:n_records, 3],
            "time": stamps,
        }

    def _stop_factor(self):
        return _STOP_FACTOR if self.early_stopping else None

    def _lifetime_after(self, forest, k):
        """A lifetime whose partition is the one recorded at ``k`` (next cut's time)."""
        if k < forest.events.shape[0]:
            return float(forest.time[forest.events[k]])
        return float(self.max_lifetime_)

    def _check_predict_input(self, X):
        check_is_fitted(self, "trees_")
        return check_X_predict(self, X)

    def feature_map(self, X):
        """Sparse Mondrian features of the rows at the fitted lifetime (CSR).

        The model's prediction is ``feature_map(X) @ coef_`` (plus ``intercept_``).
        """
        fast = self._fast_X(X)
        if fast is not None:
            columns = self._fast_leaf_columns(fast)
            if columns is not None:
                return csr_rows(columns, self.n_kernel_features_)
        X = self._check_predict_input(X)
        return feature_matrix(self.trees_, X, self.n_kernel_features_, self.n_jobs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


def _drop_zero_weights(X, y, sample_weight):
    keep = sample_weight > 0
    if keep.all():
        return X, y, sample_weight
    if not keep.any():
        raise ValueError("All sample weights are zero.")
    return X[keep], y[keep], sample_weight[keep]


class MondrianKernelRegressor(RegressorMixin, _BaseMondrianKernelModel):
    """Ridge regression on Mondrian kernel features, with fast lifetime selection.

    The targets are centred; the weights solve ``(Phi^T W Phi + alpha I) w =
    Phi^T W (y - mean)`` exactly through a Cholesky factor. With
    ``lifetime="auto"``, the partitions are sampled once with ``max_lifetime`` and
    every smaller lifetime is evaluated by replaying the cuts in time order: at a cut
    the factor loses the split feature's row and column and gains its children's, in
    ``O(C^2)`` (no refit). The lifetime with the smallest validation error (or the
    largest log marginal likelihood) is kept and the model is refitted on all rows
    with the partitions cut back to it. ``partial_fit`` extends the partitions with
    new rows (conditional Mondrian) and updates the factor by rank-1 updates.

    Parameters
    ----------
    n_trees : int, default=100
        Number ``M`` of Mondrian partitions.
    lifetime : float or "auto", default="auto"
        Lifetime (inverse kernel width); ``"auto"`` selects it by the sweep.
    alpha : float, default=1e-4
        Ridge regularisation ``delta^2`` (noise variance with unit prior variance).
    selection : {"marginal_likelihood", "validation"}, default="marginal_likelihood"
        Criterion of the sweep. The log marginal likelihood of the Bayesian linear
        model (unit prior variance on the weights, noise variance ``alpha``) is
        computed for the standardised targets, on all rows; ``"validation"`` holds
        out ``validation_fraction`` of the rows and minimises their squared error.
    max_lifetime : float, default=None
        Terminal lifetime of the sweep; ``None`` uses ``10 / median L1 distance``
        between training rows.
    max_features : int, default=2000
        The sweep stops before the number of features exceeds this (the factor is
        dense: ``O(C^2)`` memory, ``O(C^2)`` time per cut).
    validation_fraction : float, default=0.1
        Share of the rows held out by the sweep (``selection="validation"``).
    early_stopping : bool, default=True
        End the sweep once it has twice as many features as at the best lifetime so
        far (the validation error is then well past its minimum); ``False`` sweeps
        up to ``max_lifetime`` (or ``max_features``).
    n_jobs : int, default=None
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    trees_ : list of TreeState
        Partitions at ``lifetime_``.
    lifetime_ : float
    max_lifetime_ : float
        Terminal lifetime of the sweep (``lifetime="auto"`` only).
    lifetime_path_ : dict of ndarray
        The sweep, one entry per cut: ``lifetimes`` (start of each partition's
        interval), ``n_features``, ``train_error`` and ``validation_error`` (mean
        squared errors), ``log_marginal_likelihood`` (of the standardised targets of
        the fitting rows) and ``time`` (seconds since the sweep started). ``None``
        for a fixed lifetime.
    coef_ : ndarray of shape (n_kernel_features_,)
    intercept_ : float
    n_kernel_features_ : int

    Notes
    -----
    Like the Laplace kernel it approximates, the feature map weighs each feature by
    its range: a cut falls on a feature with probability proportional to the width of
    the cell along it. Features on very different scales should be standardised
    first (``make_pipeline(StandardScaler(), MondrianKernelRegressor())``). On the CPU
    data, whose three widest columns hold 99% of the summed ranges and draw 98% of
    the cuts, standardising takes the test error at ``n_trees=350`` (lifetime chosen
    by the sweep) from 5.5% to 2.9-3.0%, against 2.5% for the exact Laplace kernel
    (``benchmarks/bench_kernel.py``). ``alpha`` is worth tuning as well, e.g. with
    ``GridSearchCV``: the sweep selects the lifetime for a given ``alpha``.

    Examples
    --------
    >>> import numpy as np
    >>> from mondrianlearn import MondrianKernelRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(size=(300, 2))
    >>> y = np.sin(6 * X[:, 0]) + X[:, 1] + 0.05 * rng.randn(300)
    >>> reg = MondrianKernelRegressor(n_trees=30, alpha=1e-2, random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.9), reg.lifetime_path_["lifetimes"][0]
    (True, np.float64(0.0))
    """

    _parameter_constraints = {
        **_BaseMondrianKernelModel._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "selection": [StrOptions({"validation", "marginal_likelihood"})],
    }

    def __init__(self, n_trees=100, *, lifetime="auto", alpha=1e-4,
                 selection="marginal_likelihood",
                 max_lifetime=None, max_features=2000, validation_fraction=0.1,
                 early_stopping=True, n_jobs=None, random_state=None):
        self.n_trees = n_trees
        self.lifetime = lifetime
        self.alpha = alpha
        self.selection = selection
        self.max_lifetime = max_lifetime
        self.max_features = max_features
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.n_jobs = n_jobs
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Sample the partitions, select the lifetime (if ``"auto"``) and solve.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Rows of weight zero are ignored (also by the partitions).

        Returns
        -------
        self
        """
        X, y, sample_weight = check_X_y_batch(self, X, y, sample_weight, reset=True,
                                              y_numeric=True)
        self._fit(X, np.asarray(y, dtype=np.float64), sample_weight)
        self._remember_fast_state()
        return self

    def _fit(self, X, y, sample_weight):
        X, y, sample_weight = _drop_zero_weights(X, y, sample_weight)
        rng, states = self._seeds()
        self.intercept_ = float(np.average(y, weights=sample_weight))
        yc = y - self.intercept_
        self.lifetime_path_ = None
        if self.lifetime == "auto":
            self._sweep(X, yc, sample_weight, rng, states)
        else:
            self.lifetime_ = float(self.lifetime)
            self._set_trees(self._sample_trees(X, self.lifetime_, states))
        self._solve(X, yc, sample_weight)
        self.n_samples_seen_ = X.shape[0]

    def _sweep(self, X, yc, sample_weight, rng, states):
        self.max_lifetime_ = (float(self.max_lifetime) if self.max_lifetime is not None
                              else default_max_lifetime(X, rng))
        trees = self._sample_trees(X, self.max_lifetime_, states)
        use_validation = self.selection == "validation" and X.shape[0] >= 2
        val = self._split_rows(X.shape[0], rng) if use_validation else np.zeros(X.shape[0], bool)
        weight_fit = np.where(val, 0.0, sample_weight)
        weight_val = np.where(val, sample_weight, 0.0)
        forest = FlatForest(trees, X)
        # The marginal likelihood is scale dependent: sweep on standardised targets.
        spread = float(np.sqrt(np.average(yc ** 2, weights=sample_weight)))
        spread = spread if spread > 0 else 1.0
        sweep = RidgeSweep(forest, yc / spread, weight_fit, weight_val, self.alpha,
                           self.max_features)
        n_records, stamps = sweep.run(criterion=2 if use_validation else -3,
                                      stop_factor=self._stop_factor())
        sweep.record[:, 1:3] *= spread ** 2
        self.lifetime_path_ = self._path(forest, sweep.record, n_records, stamps)
        if use_validation:
            best = int(np.nanargmin(self.lifetime_path_["validation_error"]))
        else:
            best = int(np.nanargmax(self.lifetime_path_["log_marginal_likelihood"]))
        self.lifetime_ = self._lifetime_after(forest, best)
        self._set_trees([pruned_copy(tree, self.lifetime_)[0] for tree in trees])

    def _solve(self, X, yc, sample_weight):
        Phi = feature_matrix(self.trees_, X, self.n_kernel_features_, self.n_jobs)
        weighted = Phi.multiply(sample_weight[:, None]).tocsr()
        A = (Phi.T @ weighted).toarray()
        A[np.diag_indices_from(A)] += self.alpha
        self._ridge = OnlineRidge(self.alpha, 1.0 / np.sqrt(self.n_trees))
        self._ridge.fit_dense(A, weighted.T @ yc)
        self.coef_ = self._ridge.coef_

    def partial_fit(self, X, y, sample_weight=None):
        """Learn a mini-batch online: extend the partitions, rank-1 update the factor.

        The first call fits on the batch (selecting the lifetime if ``"auto"``);
        the intercept stays the weighted mean of that first batch. Later rows
        create new cells (new features, zero for earlier rows) and each row is a
        rank-1 update of ``A``: the solution equals a batch solve on all rows seen.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self

        Notes
        -----
        A call of a few rows (``utils.fast_path``) after the first one skips
        scikit-learn's validation when nothing it checks can have changed, and
        extends the partitions and updates the solution in one compiled call: same
        model, same errors.
        """
        if sample_weight is None and self._partial_fit_fast(X, y):
            return self
        return self._partial_fit_full(X, y, sample_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    def _partial_fit_full(self, X, y, sample_weight):
        first = not hasattr(self, "trees_")
        X, y, sample_weight = check_X_y_batch(self, X, y, sample_weight, reset=first,
                                              y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        if first:
            self._fit(X, y, sample_weight)
        else:
            keep = sample_weight > 0
            X, y, sample_weight = X[keep], y[keep], sample_weight[keep]
            if X.shape[0] > 0:
                columns, n_new = self._extend_columns(X)
                self._learn_rows(columns, n_new, y, sample_weight)
        self._remember_fast_state()
        return self

    def _learn_rows(self, columns, n_new, y, sample_weight):
        """Add ``n_new`` features and the rows (their sorted columns) to the factor,
        and solve."""
        self._ridge.add_features(n_new)
        self._ridge.add_rows(columns, y - self.intercept_, sample_weight)
        self.coef_ = self._ridge.solve()
        self.n_samples_seen_ += columns.shape[0]

    @fast_call
    def _partial_fit_fast(self, X, y):
        """The fast path of ``partial_fit`` (see ``utils.fast_path``); False when the
        call must take the full path (nothing has changed then)."""
        from ._forest_kernels import learn_ridge

        rows = self._fast_rows(X, y)
        if rows is None:
            return False
        X, y = rows
        table = self._fast_table()
        if table is None:
            return False
        n = X.shape[0]
        work = self._fast_learn_work(X.shape[1])
        ridge = self._ridge
        extra = self._fast_scratch.work.get("ridge")
        if extra is None or extra[1].shape[0] != ridge.U.shape[0]:
            extra = self._fast_scratch.work["ridge"] = (np.empty(FAST_MAX_ROWS),
                                                        np.empty(ridge.U.shape[0]))
        lifetime, root = self._fast_args
        old = self.n_kernel_features_
        status, n_columns, coef = learn_ridge(
            table.addresses, table.sizes, X, y, ONES[:n], self.intercept_,
            self._feature_range, lifetime, old, ridge.U, ridge.b, ridge.size, root,
            ridge.scale, *work, *extra)
        if status == -1:
            return False
        if status == 0:
            ridge.size += n_columns - old
            ridge.coef_ = self.coef_ = coef
            self.n_kernel_features_ = n_columns
            self.n_samples_seen_ += n
            return True
        if status > 0:  # trees left to the full path's loop
            leaves = self._fast_finish_trees(X, work, lifetime)
            columns, n_new = self._columns_of_leaves(leaves)
        else:  # the factor must grow first
            columns, n_new = work[6][:n], n_columns - old
            self.n_kernel_features_ = n_columns
        self._learn_rows(columns, n_new, y, ONES[:n])
        return True

    def _remember_fast_state(self):
        super()._remember_fast_state()
        self._fast_args = (float(self.lifetime_), float(np.sqrt(self._ridge.alpha)))

    def predict(self, X):
        """Predicted targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        fast = self._fast_X(X)
        if fast is not None:
            out = self._fast_scores(fast, self.coef_.reshape(-1, 1), self.intercept_, True)
            if out is not None:
                return out.reshape(-1)
        Phi = self.feature_map(X)
        return self.intercept_ + Phi @ self.coef_


_LOSSES = {"log_loss": 0, "squared_hinge": 1}


class MondrianKernelClassifier(ClassifierMixin, _BaseMondrianKernelModel):
    """Linear classifier on Mondrian kernel features, trained by SGD.

    Scores are ``Phi(x) W`` (one column for two classes, one per class otherwise);
    the loss is the logistic loss (softmax cross-entropy for several classes) or the
    squared hinge (one-vs-rest). With ``lifetime="auto"`` the partitions are sampled
    once with ``max_lifetime`` and the cuts are replayed in time order: at a cut the
    two new features inherit the weight of the split one (predictions unchanged),
    then ``sweep_epochs`` epochs of SGD run; the weights with the best validation
    accuracy are kept and trained ``max_iter`` more epochs on all rows.

    Parameters
    ----------
    n_trees : int, default=100
    lifetime : float or "auto", default="auto"
    loss : {"log_loss", "squared_hinge"}, default="log_loss"
    alpha : float, default=1e-6
        L2 penalty, applied (sparsely) to the weights each row touches.
    eta0 : float, default=0.5
        Constant learning rate (every row's features have unit norm).
    max_iter : int, default=10
        Epochs on all rows after the lifetime is fixed.
    sweep_epochs : int, default=1
        Epochs after each cut of the sweep.
    max_lifetime : float, default=None
        Terminal lifetime of the sweep (``None``: ``10 / median L1 distance``).
    max_features : int, default=20000
        The sweep stops before the number of features exceeds this.
    validation_fraction : float, default=0.1
    early_stopping : bool, default=True
        End the sweep once it has twice as many features as at the best lifetime.
    n_jobs : int, default=None
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    classes_ : ndarray
    coef_ : ndarray of shape (n_kernel_features_, n_outputs)
    n_iter_ : int
        Epochs run on all rows after the lifetime was fixed (``max_iter``).
    lifetime_, max_lifetime_, lifetime_path_, trees_, n_kernel_features_
        As in :class:`MondrianKernelRegressor` (errors are misclassification
        rates; no marginal likelihood).

    Examples
    --------
    >>> import numpy as np
    >>> from mondrianlearn import MondrianKernelClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-1, 1, size=(400, 2))
    >>> y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> clf = MondrianKernelClassifier(n_trees=30, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    _parameter_constraints = {
        **_BaseMondrianKernelModel._parameter_constraints,
        "loss": [StrOptions(set(_LOSSES))],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "sweep_epochs": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_trees=100, *, lifetime="auto", loss="log_loss", alpha=1e-6,
                 eta0=0.5, max_iter=10, sweep_epochs=1, max_lifetime=None,
                 max_features=20000, validation_fraction=0.1, early_stopping=True,
                 n_jobs=None, random_state=None):
        self.n_trees = n_trees
        self.lifetime = lifetime
        self.loss = loss
        self.alpha = alpha
        self.eta0 = eta0
        self.max_iter = max_iter
        self.sweep_epochs = sweep_epochs
        self.max_lifetime = max_lifetime
        self.max_features = max_features
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.n_jobs = n_jobs
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Sample the partitions, select the lifetime (if ``"auto"``) and train.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        X, y, sample_weight = check_classifier_fit(self, X, y, sample_weight)
        self._fit(X, y, sample_weight)
        self._remember_fast_state()
        return self

    def _n_outputs(self):
        return 1 if len(self.classes_) <= 2 else len(self.classes_)

    def _labels(self, y):
        labels = np.searchsorted(self.classes_, y)
        labels = np.minimum(labels, len(self.classes_) - 1)
        if not np.array_equal(self.classes_[labels], y):
            unseen = np.setdiff1d(np.unique(y), self.classes_)
            raise ValueError(f"y contains labels not in classes_: {unseen!r}.")
        return labels.astype(np.int64)

    def _fit(self, X, y, sample_weight):
        labels = self._labels(y)
        X, labels, sample_weight = _drop_zero_weights(X, labels, sample_weight)
        rng, states = self._seeds()
        self._rng = states[-1].copy()
        self.lifetime_path_ = None
        loss = _LOSSES[self.loss]
        if self.lifetime == "auto" and X.shape[0] >= 2:
            coef = self._sweep(X, labels, sample_weight, rng, states, loss)
        else:
            self.lifetime_ = (float(self.lifetime) if self.lifetime != "auto"
                              else float(self.max_lifetime or 1.0))
            self._set_trees(self._sample_trees(X, self.lifetime_, states))
            coef = np.zeros((self.n_kernel_features_, self._n_outputs()))
        columns = self._columns(X)
        order = np.arange(X.shape[0], dtype=np.int64)
        sgd_epochs(coef, columns, labels, sample_weight, order, self.max_iter,
                   float(self.eta0), float(self.alpha), loss, 1.0 / np.sqrt(self.n_trees),
                   self._rng)
        self.coef_ = coef
        self.n_iter_ = int(self.max_iter)
        self.n_samples_seen_ = X.shape[0]

    def _sweep(self, X, labels, sample_weight, rng, states, loss):
        self.max_lifetime_ = (float(self.max_lifetime) if self.max_lifetime is not None
                              else default_max_lifetime(X, rng))
        trees = self._sample_trees(X, self.max_lifetime_, states)
        val = self._split_rows(X.shape[0], rng)
        weight_fit = np.where(val, 0.0, sample_weight)
        weight_val = np.where(val, sample_weight, 0.0)
        forest = FlatForest(trees, X)
        record, stamps, n_records, best, W_best = sgd_sweep(
            forest, labels, self._n_outputs(), weight_fit, weight_val, self.sweep_epochs,
            float(self.eta0), float(self.alpha), loss, self._rng, self.max_features,
            self._stop_factor())
        self.lifetime_path_ = self._path(forest, record, n_records, stamps)
        self.lifetime_ = self._lifetime_after(forest, best)
        pruned = [pruned_copy(tree, self.lifetime_) for tree in trees]
        self._set_trees([p[0] for p in pruned])
        coef = np.zeros((self.n_kernel_features_, self._n_outputs()))
        for t, (tree, old_to_new) in enumerate(pruned):
            kept = np.flatnonzero(old_to_new >= 0)
            new = old_to_new[kept]
            leaf = tree.arrays.left[new] == LEAF
            column = tree.node_stats["column"][new[leaf]] - 1
            coef[column] = W_best[forest.offset[t] + kept[leaf]]
        return coef

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Learn a mini-batch online: extend the partitions, one SGD epoch on it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, default=None
            All labels the stream will contain (first call). Optional: without it,
            labels join the model as they appear (a new class starts with zero
            weights); with it, any other label is an error.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self

        Notes
        -----
        A call of a few rows (``utils.fast_path``) after the first one skips
        scikit-learn's validation when nothing it checks can have changed, and
        extends the partitions and runs the epoch in one compiled call: same model,
        same errors.
        """
        if classes is None and sample_weight is None and self._partial_fit_fast(X, y):
            return self
        return self._partial_fit_full(X, y, classes, sample_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    def _partial_fit_full(self, X, y, classes, sample_weight):
        checked = check_classifier_batch(self, X, y, sample_weight, classes)
        if checked is None:
            return self
        X, y, sample_weight, first = checked
        if first:
            self._fit(X, y, sample_weight)
        else:
            self._add_new_classes(y)  # a row of weight zero teaches nothing but its label
            labels = self._labels(y)
            keep = sample_weight > 0
            X, labels, sample_weight = X[keep], labels[keep], sample_weight[keep]
            if X.shape[0] > 0:
                columns, n_new = self._extend_columns(X)
                if n_new:
                    self.coef_ = np.vstack([self.coef_,
                                            np.zeros((n_new, self.coef_.shape[1]))])
                self._sgd_epoch(columns, labels, sample_weight)
        self._remember_fast_state()
        return self

    def _sgd_epoch(self, columns, labels, sample_weight):
        """One SGD epoch on rows (their sorted columns) in shuffled order."""
        order = np.arange(columns.shape[0], dtype=np.int64)
        sgd_epochs(self.coef_, columns, labels, sample_weight, order, 1, float(self.eta0),
                   float(self.alpha), _LOSSES[self.loss], 1.0 / np.sqrt(self.n_trees),
                   self._rng)
        self.n_samples_seen_ += columns.shape[0]

    @fast_call
    def _partial_fit_fast(self, X, y):
        """The fast path of ``partial_fit`` (see ``utils.fast_path``); False when the
        call must take the full path (nothing has changed then).

        The weights live in the first rows of a larger array (``coef_`` is a view of
        it), so that new features cost no copy of the others.
        """
        from ._forest_kernels import learn_sgd

        rows = self._fast_rows(X, y)
        if rows is None:
            return False
        X, keys = rows
        n = X.shape[0]
        table = self._fast_table()
        if table is None:
            return False
        work = self._fast_learn_work(X.shape[1])
        W = self._fast_weights(self.n_kernel_features_)
        n_out = W.shape[1]
        sgd = self._fast_scratch.work.get("sgd")
        if sgd is None or sgd[1].shape[0] != n_out:
            sgd = self._fast_scratch.work["sgd"] = (
                np.empty(FAST_MAX_ROWS, dtype=np.int64), np.empty(n_out), np.empty(n_out))
        lifetime, eta, alpha, loss, scale = self._fast_args
        old = self.n_kernel_features_
        status, n_columns = learn_sgd(
            table.addresses, table.sizes, X, keys, ONES[:n], self._feature_range, lifetime,
            old, W, eta, alpha, loss, scale, self._rng, *sgd, *work)
        if status == -1:
            return False
        if status == 0:
            self._fast_use_weights(W, n_columns)
            self.n_kernel_features_ = n_columns
            self.n_samples_seen_ += n
            return True
        if status > 0:  # trees left to the full path's loop
            leaves = self._fast_finish_trees(X, work, lifetime)
            columns, _ = self._columns_of_leaves(leaves)
        else:  # the weights need more rows first
            columns = work[6][:n]
            self.n_kernel_features_ = n_columns
        self._fast_use_weights(self._fast_weights(self.n_kernel_features_),
                               self.n_kernel_features_)
        self._sgd_epoch(columns, keys, ONES[:n])
        return True

    def _fast_weights(self, n_rows):
        """An array of at least ``n_rows`` rows whose first rows are ``coef_`` and the
        others zero (the fast path's storage of the weights)."""
        coef = self.coef_
        stored = self._fast_scratch.work.get("coef")
        if stored is not None and stored[1] is coef and stored[0].shape[0] >= n_rows:
            return stored[0]
        W = np.zeros((max(n_rows, 2 * coef.shape[0], 64), coef.shape[1]))
        W[: coef.shape[0]] = coef
        self._fast_scratch.work["coef"] = (W, None)
        return W

    def _fast_use_weights(self, W, n_rows):
        """Make ``coef_`` the first ``n_rows`` rows of ``W`` (from ``_fast_weights``)."""
        stored = self._fast_scratch.work["coef"]
        if stored[0] is not W or stored[1] is None or stored[1].shape[0] != n_rows:
            stored = self._fast_scratch.work["coef"] = (W, W[:n_rows])
        self.coef_ = stored[1]

    def _remember_fast_state(self):
        super()._remember_fast_state()
        self._fast_args = (float(self.lifetime_), float(self.eta0), float(self.alpha),
                           _LOSSES[self.loss], float(1.0 / np.sqrt(self.n_trees)))

    def _add_new_classes(self, y):
        """Make room for labels first seen now, keeping every existing score.

        The weights are read as one score per class (with two classes the single
        column ``w`` scores class 1 and ``-w`` class 0), moved to the positions of
        the merged sorted classes (new classes score 0), and written back in the
        binary or one-vs-rest layout of the new number of classes.
        """
        new = np.setdiff1d(np.unique(y), self.classes_)
        if new.size == 0:
            return
        merged = np.unique(np.concatenate([self.classes_, new]))
        coef = self.coef_
        if len(self.classes_) <= 2:
            per_class = np.column_stack([-coef[:, 0], coef[:, 0]])[:, :len(self.classes_)]
        else:
            per_class = coef
        scores = np.zeros((coef.shape[0], len(merged)))
        scores[:, np.searchsorted(merged, self.classes_)] = per_class
        if len(merged) <= 2:
            self.coef_ = ((scores[:, 1] - scores[:, 0]) / 2.0)[:, None]
        else:
            self.coef_ = scores
        self.classes_ = merged

    def decision_function(self, X):
        """Scores: shape (n_samples,) for two classes, (n_samples, n_classes) otherwise."""
        scores = None
        fast = self._fast_X(X)
        if fast is not None:
            scores = self._fast_scores(fast, self.coef_, 0.0, False)
        if scores is None:
            scores = self.feature_map(X) @ self.coef_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted classes."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            index = (scores > 0).astype(np.int64)
            index = np.minimum(index, len(self.classes_) - 1)
        else:
            index = scores.argmax(axis=1)
        return self.classes_[index]

    def _has_proba(self):
        return self.loss == "log_loss"

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities (logistic loss only)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            if len(self.classes_) < 2:
                return np.ones((len(scores), 1))
            proba = np.empty((len(scores), 2))  # columns 1 - p, p
            p = np.divide(1.0, 1.0 + np.exp(-scores), out=proba[:, 1])
            np.subtract(1.0, p, out=proba[:, 0])
            return proba
        scores = scores - scores.max(axis=1, keepdims=True)
        e = np.exp(scores)
        return e / e.sum(axis=1, keepdims=True)

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
