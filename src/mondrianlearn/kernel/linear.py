"""Linear models on Mondrian kernel features, with the lifetime sweep.

:class:`MondrianKernelRegressor` solves ridge regression exactly (Cholesky factor of
``A = Phi^T W Phi + alpha I``); :class:`MondrianKernelClassifier` trains a linear
classifier by SGD. With ``lifetime="auto"`` both sample the partitions once with a
terminal lifetime and sweep every lifetime below it by replaying the cuts in time
order (kernel paper, section 4), choosing the lifetime on held-out rows (or by the
ridge log marginal likelihood); the sweep is recorded in ``lifetime_path_``. Online,
the regressor keeps at most ``max_features`` cells (cutting its partitions back to
an earlier lifetime past it) and selects its lifetime again as the rows double.
"""

import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if

from ..engine.storage import NODES_PER_ROW
from ..engine.tree import LEAF
from ..utils.estimator import TreeModelMixin
from ..utils.fast_path import FAST_MAX_ROWS, ONES, fast_call
from ..utils.feature_scale import SUPERVISED_MIN_ROWS, supervised_scales, units_of_range
from ..utils.parallel import map_trees
from ..utils.validation import (
    check_classifier_batch,
    check_classifier_fit,
    check_regressor_batch,
    check_X_y_batch,
    given_targets,
)
from ._features import (
    FastPartitionsMixin,
    assign_cells,
    assign_columns,
    assign_feature_columns,
    capped_lifetime,
    csr_rows,
    cut_times,
    extend_partition_rows,
    feature_matrix,
    leaves_of,
    new_partition,
    prune_in_place,
    pruned_copy,
    sample_partition,
)
from ._lbfgs import fit_weights
from ._ridge import (
    OnlineRidge,
    check_target_scale,
    gram_remove_rows,
    log_marginal_likelihood,
    lower_solve,
    one_blas_thread,
    ridge_cholesky,
)
from ._sweep import FlatForest, RidgeSweep, sgd_epochs, sgd_errors, sgd_sweep


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
"""Early stopping: the sweep ends when it has twice the features of the lifetime it
selects so far (and at least four per tree)."""

_PRUNE_TO = 0.9
"""Online, partitions that grow past ``max_features`` cells are cut back to this
share of it (the rest is room to grow before the next cut)."""

_RESELECT_FACTOR = 2.0
"""Online, ``lifetime="auto"`` selects the lifetime again each time the number of
rows seen has grown by this factor since the last selection."""

_CANDIDATE_RATIO = 1.25
"""Ratio of the numbers of features of two successive lifetimes scored online."""

_RESERVOIR_SIZE = 1000
"""Rows kept to score lifetimes online with ``selection="validation"``."""

_REGRESSOR_STATS = ("column", "cell")
"""Per-node statistics of the regressor's trees: the feature (at ``lifetime_``) and
the cell (leaf) of each node, both plus one."""


class _BaseMondrianKernelModel(FastPartitionsMixin, TreeModelMixin, BaseEstimator):
    """Partitions, feature columns and the lifetime sweep shared by both models."""

    _structure_params = ("n_trees", "feature_scale")
    """Parameters fixed once the model has started learning (checked by a later
    ``partial_fit``: ``TreeModelMixin._check_structure``)."""

    _parameter_constraints = {
        "n_trees": [Interval(Integral, 1, None, closed="left")],
        "lifetime": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "max_lifetime": [Interval(Real, 0, None, closed="neither"), None],
        "max_features": [Interval(Integral, 1, None, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "early_stopping": ["boolean"],
        "feature_scale": [StrOptions({"auto", "supervised", "range"}), None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def _start_units(self, X, y, sample_weight=None):
        """The first checked batch ``X`` (labels or targets ``y``) in the model's
        units, which are set here and then held fixed (later rows are put in the
        same units): the origin at its first row of positive weight and the scales
        of ``feature_scale``. ``"range"``: each feature divided by its range over
        those rows rounded up to a power of two (``units_of_range``, the forests'
        units), 1 for a feature constant there, as in a batch of one row.
        ``"supervised"``: the scales of ``utils.feature_scale.supervised_scales``,
        learned from ``y``; a first batch of fewer than ``SUPERVISED_MIN_ROWS`` rows
        of positive weight raises ValueError (no model is started: the next call is
        a first batch again). ``"auto"``: supervised for such a batch, ``"range"``
        for a smaller one. Every path puts a row in these units by the same
        arithmetic (``to_units``), bit for bit."""
        scales = None
        rows = X if sample_weight is None else X[sample_weight > 0]
        setting = self.feature_scale
        if setting in ("auto", "supervised"):
            if rows.shape[0] >= SUPERVISED_MIN_ROWS:
                scales = supervised_scales(X, y, isinstance(self, RegressorMixin),
                                           sample_weight, self.random_state)
            elif setting == "supervised":
                raise ValueError(
                    f"feature_scale='supervised' learns its scales from the first batch, "
                    f"which must hold at least {SUPERVISED_MIN_ROWS} rows of positive "
                    f"weight; got {rows.shape[0]}. Learn a larger first batch, or use "
                    "feature_scale='auto' (range units for a smaller one).")
        if scales is None and setting in ("auto", "range") and rows.shape[0]:
            scales = units_of_range(rows.min(axis=0), rows.max(axis=0))
            scales = np.where(np.isfinite(scales), scales, 1.0)
        return self._start_origin(X, sample_weight, scales)

    def _seeds(self):
        """The generator of ``random_state`` and the streams of the trees (one more
        for the model's own draws), spawned from its first draw."""
        rng = check_random_state(self.random_state)
        return rng, self._spawn_tree_states(self.n_trees + 1, rng)

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
        # Row k: the partition after k cuts (lifetimes from the k-th cut's time on).
        # Rows of cuts after which the sweep did not evaluate are left out.
        times = np.concatenate([[0.0], forest.time[forest.events[: n_records - 1]]])
        rows = np.flatnonzero(~np.isnan(record[:n_records, 0]))
        return {
            "lifetimes": times[rows],
            "n_features": record[rows, 0].astype(np.int64),
            "train_error": record[rows, 1],
            "validation_error": record[rows, 2],
            "log_marginal_likelihood": record[rows, 3],
            "time": stamps,
        }

    def _stop_factor(self):
        return _STOP_FACTOR if self.early_stopping else None

    def _lifetime_after(self, forest, k):
        """A lifetime whose partition is the one recorded at ``k`` (next cut's time)."""
        if k < forest.events.shape[0]:
            return float(forest.time[forest.events[k]])
        return float(self.max_lifetime_)

    def feature_map(self, X):
        """Sparse Mondrian features of the rows at the fitted lifetime (CSR).

        The model's prediction is ``feature_map(X) @ coef_`` (plus ``intercept_``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to map.

        Returns
        -------
        Z : scipy.sparse.csr_matrix of shape (n_samples, n_kernel_features_)
            One entry per tree and row, in the column of the row's cell, equal to
            ``1/sqrt(n_trees)``.
        """
        fast = self._fast_X(X)
        if fast is not None:
            columns = self._fast_leaf_columns(fast)
            if columns is not None:
                return csr_rows(columns, self.n_kernel_features_)
        X = self._check_predict_input(X)
        return feature_matrix(self.trees_, X, self.n_kernel_features_, self.n_jobs)


def _check_first_targets(y, sample_weight):
    """``check_target_scale`` on the targets of a first batch as the caller gave them,
    before scikit-learn's checks record anything (a refused first call leaves no
    trace); targets and weights those checks refuse anyway are left to them."""
    given = given_targets(y, sample_weight)
    if given is None or not given[0].size:
        return
    y, weights = given
    with np.errstate(invalid="ignore", over="ignore"):
        total, top = float(np.sum(weights)), float(np.abs(y).max())
    if np.isfinite(total) and np.isfinite(top) and total > 0:
        check_target_scale(total, top)


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
    largest log marginal likelihood) is kept and the model is refitted on all rows.

    The partitions are kept up to a *growth lifetime* ``growth_lifetime_`` at least
    ``lifetime_``: their leaves (cells) are the finest features the model can use,
    and its features are the cells of the partitions at ``lifetime_`` (unions of
    cells). The rows seen are summarised on the cells (Gram matrix, ``Phi^T W y``),
    so that any coarser lifetime can be solved exactly without the data.
    ``partial_fit`` extends the partitions with new rows (conditional Mondrian, up
    to ``growth_lifetime_``) and updates the factor; the cells never number more
    than ``max_features``: past it, the partitions are cut back to an earlier
    lifetime (the Mondrian process stopped sooner), keeping 90% of it. With
    ``lifetime="auto"``, each time the number of rows seen has doubled the
    lifetime is selected again among the cut times up to ``growth_lifetime_``, on
    all rows seen (by the log marginal likelihood; with ``"validation"``, on rows
    of a uniform reservoir of at most 1,000 held out of the fit).

    Parameters
    ----------
    n_trees : int, default=100
        Number ``M`` of Mondrian partitions.
    lifetime : float or "auto", default="auto"
        Lifetime (inverse kernel width); ``"auto"`` selects it by the sweep (and
        again online). A fixed lifetime is lowered (``lifetime_``) when the
        partitions would otherwise have more than ``max_features`` cells.
    alpha : float, default=3e-3
        Ridge regularisation ``delta^2`` (noise variance with unit prior variance).
        Default 3e-3: on the seven shared regression sets, with the default units,
        it gave a lower test RMSE than the former 1e-4 on six and an equal one on
        energy (concrete 5.88 to 4.05, airfoil 2.32 to 2.07, housing 3.42 to 3.24;
        ``benchmarks/bench_kernel_defaults.py`` before and after the change); the
        best value differs from set to set (sweeps of it: ``targets.md``). The
        ridge's predictions do not depend on the unit of the target, the lifetime
        the marginal likelihood selects does. Sample weights scale the squared
        errors and ``alpha`` does not: rows whose weights add up to about
        ``alpha * n_trees / 1.8e-15`` (2e14 with the defaults) would lose it in
        floating point and are refused with a ``FloatingPointError`` (by ``fit``
        and ``partial_fit`` alike), as are targets whose magnitude times the total
        weight reaches 1e150 (a ``ValueError``: rescale ``y``), before anything
        changes.
    selection : {"marginal_likelihood", "validation"}, default="marginal_likelihood"
        Criterion of the sweep. The log marginal likelihood of the Bayesian linear
        model (unit prior variance on the weights, noise variance ``alpha``) is
        computed for the standardised targets, on all rows; ``"validation"`` holds
        out ``validation_fraction`` of the rows and minimises their squared error.
    max_lifetime : float, default=None
        Terminal lifetime of the sweep; ``None`` uses ``10 / median L1 distance``
        between training rows.
    max_features : int, default=2000
        Largest number of cells (leaves of all partitions, at least one per tree),
        hence of features: the sweep stops before it and online learning cuts the
        partitions back past it. The model is dense in it: memory
        ``O(max_features^2)``, time ``O(max_features^2)`` per cut of the sweep and
        per row learned online.
    validation_fraction : float, default=0.1
        Share of the rows held out by the sweep (``selection="validation"``).
    early_stopping : bool, default=True
        End the sweep once it has twice as many features as at the best lifetime so
        far (the validation error is then well past its minimum); ``False`` sweeps
        up to ``max_lifetime`` (or ``max_features``).
    feature_scale : {"auto", "supervised", "range"} or None, default="auto"
        Units of the features, set by the first batch (``fit``, or the first
        ``partial_fit``) and then held fixed; the kernel is the Laplace kernel of the
        L1 distance in these units. ``"range"`` divides each feature by its range
        over that batch, rounded up to a power of two (1 for a feature constant in
        it), so that the partitions cut every feature in proportion to its spread,
        not to its raw unit. ``"supervised"`` divides it by its range over a weight
        learned from that batch's targets (its importance in an ExtraTrees fitted on
        at most 2,000 of its rows, ``utils.feature_scale.supervised_scales``), so
        that the partitions cut the features that predict the target more often; a
        first batch needs at least 20 rows of positive weight. ``"auto"``:
        ``"supervised"`` for a first batch of at least 20 such rows, ``"range"``
        for a smaller one. ``None`` keeps the raw units. ``lifetime`` and
        ``max_lifetime`` are in these units. Default ``"auto"``: on the seven
        shared regression sets the supervised scales cut the test RMSE of range
        units on six (airfoil 2.59 to 2.07, yacht 0.386 to 0.314, concrete 4.88 to
        4.05) and raised it 3.5% on housing; range units, in turn, leave fewer
        features uncut than raw
        ones where raw ranges differ by orders of magnitude
        (``benchmarks/bench_kernel_defaults.py``). The weights cost a fit of 50
        ExtraTrees on the first batch.
    n_jobs : int, default=None
        Threads over the partitions (results do not depend on it).
    random_state : int, RandomState instance or None, default=None
        Seeds the partitions and the held-out rows.

    Attributes
    ----------
    trees_ : list of TreeState
        Partitions at ``growth_lifetime_``.
    lifetime_ : float
        Lifetime of the features (cells of the partitions cut back to it).
    growth_lifetime_ : float
        Lifetime up to which the partitions grow; at least ``lifetime_``.
    max_lifetime_ : float
        Terminal lifetime of the sweep (``lifetime="auto"`` only).
    lifetime_path_ : dict of ndarray
        The sweep of ``fit``, one entry per cut: ``lifetimes`` (start of each
        partition's interval), ``n_features``, ``train_error`` and
        ``validation_error`` (mean squared errors), ``log_marginal_likelihood`` (of
        the standardised targets of the fitting rows) and ``time`` (seconds since
        the sweep started). After ``partial_fit``, the latest selection online, one
        entry per lifetime scored (the first call scores the same geometric grid of
        cut times, from one feature per tree to every cell, as the later ones).
        ``None`` for a fixed lifetime.
    coef_ : ndarray of shape (n_kernel_features_,)
        Ridge weights of the features.
    intercept_ : float
        Weighted mean of the targets of the rows of ``fit`` (or of the first
        ``partial_fit`` batch).
    n_kernel_features_ : int
        Number of features (cells of the partitions at ``lifetime_``).

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

    Online, a mini-batch costs ``O(max_features^2)`` per row (the factor's update),
    plus a refactor (``O(C^3)``) when the partitions are cut back below
    ``lifetime_`` and a few when the lifetime is selected again (``log2`` of the
    stream's length times). With the defaults, a 15,000-row stream of 26 features
    in mini-batches of 100 keeps at most 2,000 cells, two dense 2,000 x 2,000
    matrices (64 MB) and a pickle of about 30 MB, learned in about 15 s of CPU
    (``benchmarks/bench_kernel_online.py``).

    Examples
    --------
    >>> import numpy as np
    >>> from mondrianlearn import MondrianKernelRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(size=(300, 2))
    >>> y = np.sin(6 * X[:, 0]) + X[:, 1] + 0.05 * rng.randn(300)
    >>> reg = MondrianKernelRegressor(n_trees=30, alpha=1e-2, random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.9), float(reg.lifetime_path_["lifetimes"][0])
    (True, 0.0)
    """

    _parameter_constraints = {
        **_BaseMondrianKernelModel._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "selection": [StrOptions({"validation", "marginal_likelihood"})],
    }

    _fast_stats = _REGRESSOR_STATS

    def __init__(self, n_trees=100, *, lifetime="auto", alpha=3e-3,
                 selection="marginal_likelihood",
                 max_lifetime=None, max_features=2000, validation_fraction=0.1,
                 early_stopping=True, feature_scale="auto", n_jobs=None,
                 random_state=None):
        self.n_trees = n_trees
        self.lifetime = lifetime
        self.alpha = alpha
        self.selection = selection
        self.max_lifetime = max_lifetime
        self.max_features = max_features
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.feature_scale = feature_scale
        self.n_jobs = n_jobs
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Sample the partitions, select the lifetime (if ``"auto"``) and solve.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Targets of the rows.
        sample_weight : array-like of shape (n_samples,), default=None
            Rows of weight zero are ignored (also by the partitions).

        Returns
        -------
        self
        """
        _check_first_targets(y, sample_weight)
        X, y, sample_weight = check_X_y_batch(self, X, y, sample_weight, reset=True,
                                              y_numeric=True)
        X = self._start_units(X, y, sample_weight)
        self._fit(X, y, sample_weight)
        self._remember_fast_state()
        return self

    def _fit(self, X, y, sample_weight, online=False):
        """Fit on a batch; ``online`` (the first ``partial_fit``): with
        ``lifetime="auto"``, select the lifetime as ``partial_fit`` does later (a
        geometric grid of the partitions' cut times, scored from the cells'
        statistics) instead of the sweep over every cut."""
        X, y, sample_weight = _drop_zero_weights(X, y, sample_weight)
        rng, states = self._seeds()
        self.intercept_ = float(np.average(y, weights=sample_weight))
        yc = y - self.intercept_
        self.lifetime_path_ = None
        cap = self._max_cells()
        if self.lifetime == "auto" and online:
            self.max_lifetime_ = (float(self.max_lifetime) if self.max_lifetime is not None
                                  else default_max_lifetime(X, rng))
            top = self.max_lifetime_
            trees = self._sample_trees(X, top, states)
            growth = capped_lifetime(trees, top, self._pruned_cells())
            self.lifetime_ = growth  # every cell a feature until _reselect below
        elif self.lifetime == "auto":
            trees = self._sweep(X, yc, sample_weight, rng, states)
            top = float(self.max_lifetime_)
            growth = max(self.lifetime_, capped_lifetime(trees, top, self._pruned_cells()))
        else:
            top = float(self.lifetime)
            trees = self._sample_trees(X, top, states)
            growth = capped_lifetime(trees, top, cap)
            if growth < top:  # too many cells: cut back further, to leave room to grow
                growth = capped_lifetime(trees, top, self._pruned_cells())
            self.lifetime_ = growth
        if growth < top:
            trees = [pruned_copy(tree, growth)[0] for tree in trees]
        self.trees_ = trees
        self.growth_lifetime_ = float(growth)
        n_cells, n_columns = self._assign_trees(np.zeros(len(trees), dtype=np.int64), 0, 0)
        self.n_kernel_features_ = n_columns
        cells, columns = self._rows_of_leaves([leaves_of(tree, X) for tree in trees])
        ridge = self._ridge = OnlineRidge(self.alpha, 1.0 / np.sqrt(self.n_trees), cap)
        ridge.add_cells(_cell_columns(trees, n_cells))
        ridge.add_rows(cells, columns, yc, sample_weight, update_factor=False)
        with one_blas_thread():
            ridge.set_features(ridge.cell_column, n_columns)
        self.coef_ = ridge.solve()
        self.n_samples_seen_ = X.shape[0]
        self._next_selection = _RESELECT_FACTOR * X.shape[0]
        self._reservoir = None
        if self.lifetime == "auto" and self.selection == "validation":
            self._reservoir = _Reservoir(X.shape[1], rng.randint(np.iinfo(np.int32).max))
            self._reservoir.offer(X, yc, sample_weight)
        if self.lifetime == "auto" and online:
            with one_blas_thread():
                self._reselect()
            self.coef_ = ridge.solve()

    def _max_cells(self):
        """The bound on the number of cells (at least one per tree)."""
        return max(int(self.max_features), int(self.n_trees))

    def _pruned_cells(self):
        """Cells left when the partitions are cut back (room to grow online)."""
        return max(int(self.n_trees), int(_PRUNE_TO * self._max_cells()))

    def _sample_trees(self, X, lifetime, states):
        trees = [new_partition(X.shape[1], states[t], _REGRESSOR_STATS)
                 for t in range(self.n_trees)]

        def grow(tree):
            sample_partition(tree, X, lifetime)
            tree.trim()
            return tree  # with joblib's Dask backend, trees come back from workers

        return map_trees(grow, trees, self.n_jobs)

    def _sweep(self, X, yc, sample_weight, rng, states):
        """Select ``lifetime_`` by the sweep; return the partitions it swept (sampled
        with ``max_lifetime_``)."""
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
                           self._max_cells())
        n_records, stamps = sweep.run(criterion=2 if use_validation else -3,
                                      stop_factor=self._stop_factor())
        sweep.record[:, 1:3] *= spread ** 2
        self.lifetime_path_ = self._path(forest, sweep.record, n_records, stamps)
        if use_validation:
            best = int(np.nanargmin(self.lifetime_path_["validation_error"]))
        else:
            best = int(np.nanargmax(self.lifetime_path_["log_marginal_likelihood"]))
        self.lifetime_ = self._lifetime_after(forest, best)
        return trees

    # ------------------------------------------------------- cells and features
    def _assign_trees(self, n_before, n_cells, n_columns):
        """Cells for the leaves made since ``n_before`` (nodes of each tree), and the
        features at ``lifetime_`` of the trees that changed; return the new numbers
        of cells and features (``_forest_kernels.assign_forest`` over a tree
        table)."""
        lifetime = float(self.lifetime_)
        for t, tree in enumerate(self.trees_):
            if tree.n_nodes == n_before[t]:
                continue
            n_cells = assign_cells(tree.arrays, tree.node_stats["cell"], int(n_before[t]),
                                   n_cells)
            n_columns = assign_feature_columns(tree.arrays, tree.node_stats["column"],
                                               lifetime, n_columns)
        return n_cells, n_columns

    def _rows_of_leaves(self, leaves):
        """Cells and features, both (n_rows, n_trees), of the rows whose leaves (one
        array per tree) are ``leaves`` (features in tree order, not sorted)."""
        n = len(leaves[0])
        cells = np.empty((n, len(self.trees_)), dtype=np.int64)
        columns = np.empty((n, len(self.trees_)), dtype=np.int64)
        for t, (tree, leaf) in enumerate(zip(self.trees_, leaves)):
            cells[:, t] = tree.node_stats["cell"][leaf] - 1
            columns[:, t] = tree.node_stats["column"][leaf] - 1
        return cells, columns

    def _prune(self, growth, n_cells):
        """Cut the partitions back to the lifetime ``growth``. Returns the new cell
        of each of the ``n_cells`` old ones, the new number of cells and whether the
        features changed.

        The features stay when ``lifetime_ <= growth`` (cells merge inside them);
        otherwise ``lifetime_`` becomes ``growth`` and the features are the cells,
        numbered afresh.
        """
        keep_features = self.lifetime_ <= growth
        group = np.empty(n_cells, dtype=np.int64)
        n_new = 0
        for tree in self.trees_:
            n = tree.n_nodes
            leaves = np.flatnonzero(tree.arrays.left[:n] == LEAF)
            old_cells = tree.node_stats["cell"][leaves] - 1
            holder = prune_in_place(tree, growth,
                                    carry=("column",) if keep_features else ())[1]
            n_new = assign_cells(tree.arrays, tree.node_stats["cell"], 0, n_new)
            group[old_cells] = tree.node_stats["cell"][holder[leaves]] - 1
        self.growth_lifetime_ = float(growth)
        if not keep_features:
            self.lifetime_ = float(growth)
            self.n_kernel_features_ = self._renumber_features()
        return group, n_new, not keep_features

    def _renumber_features(self):
        """The features at ``lifetime_``, numbered afresh (as ``_feature_map_at``);
        returns their number."""
        n_columns = 0
        for tree in self.trees_:
            column = tree.node_stats["column"]
            column[:] = 0
            n_columns = assign_feature_columns(tree.arrays, column, float(self.lifetime_),
                                               n_columns)
        return n_columns

    def _learn_assigned(self, X, cells, columns, n_cells, n_columns, y, sample_weight):
        """Learn rows the partitions were just extended with.

        ``cells`` and ``columns`` (n_rows, n_trees; features in tree order) are the
        rows' cells and features, ``n_cells`` and ``n_columns`` the numbers of cells
        and features now. Past ``max_features`` cells, the partitions are cut back
        first; every ``_RESELECT_FACTOR`` times more rows, ``lifetime="auto"``
        selects the lifetime again.
        """
        ridge = self._ridge
        refactor = False
        if n_cells > self._max_cells():
            n_old = ridge.n_cells
            growth = capped_lifetime(self.trees_, self.growth_lifetime_, self._pruned_cells())
            group, n_cells, refactor = self._prune(growth, n_cells)
            ridge.merge_cells(group[:n_old], n_cells)
            cells = group[cells]
            cell_column = _cell_columns(self.trees_, n_cells)
            columns = cell_column[cells]
            if refactor:
                n_columns = self.n_kernel_features_
            else:
                ridge.cell_column[:] = cell_column
                ridge.add_features(n_columns - ridge.size)
        else:
            new = cells >= ridge.n_cells
            cell_column = np.empty(n_cells - ridge.n_cells, dtype=np.int64)
            cell_column[cells[new] - ridge.n_cells] = columns[new]
            ridge.add_cells(cell_column)
            ridge.add_features(n_columns - ridge.size)
        targets = y - self.intercept_
        ridge.add_rows(cells, np.sort(columns, axis=1), targets, sample_weight,
                       update_factor=not refactor)
        if refactor:
            ridge.set_features(cell_column, n_columns)
        self.n_kernel_features_ = n_columns
        self.n_samples_seen_ += cells.shape[0]
        if self._reservoir is not None:
            self._reservoir.offer(X, targets, sample_weight)
        if self.lifetime == "auto" and self.n_samples_seen_ >= self._next_selection:
            self._reselect()
        self.coef_ = ridge.solve()

    def _reselect(self):
        """Select ``lifetime_`` again among the cut times of the partitions, on every
        row seen (their statistics on the cells): by the log marginal likelihood, or
        by the error on rows of the reservoir held out of the fit. The scores go to
        ``lifetime_path_``."""
        start = time.perf_counter()
        ridge = self._ridge
        trees = self.trees_
        times = cut_times(trees)
        n_trees = len(trees)
        held = None
        spread = ridge.target_spread()  # the likelihood of the standardised targets
        yy, weight = ridge.weight, ridge.weight  # sum w (y / spread)^2 and sum w
        if self._reservoir is not None:
            n_held = int(round(self.validation_fraction * self.n_samples_seen_))
            Xv, yv, wv = self._reservoir.sample(max(n_held, 1))
            cells_v, _ = self._rows_of_leaves([leaves_of(tree, Xv) for tree in trees])
            held = (cells_v, yv, wv)
            yy -= float(np.dot(wv, (yv / spread) ** 2))
            weight -= float(wv.sum())
        scale = ridge.scale
        # The current features are one of the partitions: the likelihood, which
        # scores the system of all rows, needs no refactor for them.
        current = int(np.searchsorted(times, self.lifetime_))
        candidates = _candidate_cuts(n_trees, times.shape[0])
        if held is None:
            candidates = sorted(set(candidates) | {current})
        best = None
        record = []
        for k in candidates:
            lifetime = float(times[k]) if k < times.shape[0] else self.growth_lifetime_
            if held is None and k == current:
                n, L, b = ridge.size, ridge.L, ridge.b
            else:
                cell_column, n = _feature_map_at(trees, ridge.n_cells, lifetime)
                A, b = ridge.system(cell_column, n)
                if held is not None:
                    columns_v = cell_column[held[0]]
                    gram_remove_rows(A, b, columns_v, held[2], held[1], scale)
                L = ridge_cholesky(A, ridge.alpha)
            coef = np.empty(n)
            lower_solve(L, n, b, coef)
            bs, coef_s = b[:n] / spread, coef / spread
            fit_sq = max(yy - float(bs @ coef_s) - ridge.alpha * float(coef_s @ coef_s), 0.0)
            val, lml = np.nan, np.nan
            if held is not None:
                errors = held[1] - scale * coef[columns_v].sum(axis=1)
                val = score = float(np.average(errors ** 2, weights=held[2]))
            else:
                lml = log_marginal_likelihood(L, n, bs, coef_s, yy, weight, ridge.alpha)
                score = -lml
            record.append((float(times[k - 1]) if k > 0 else 0.0, n,
                           fit_sq * spread ** 2 / weight if weight > 0 else np.nan, val, lml,
                           time.perf_counter() - start))
            if best is None or score < best[0]:
                best = (score, k, lifetime, n, (L, b) if held is None else None)
            if self.early_stopping and n > max(_STOP_FACTOR * best[3], 4 * n_trees):
                break
        _, k, lifetime, n_columns, factor = best
        if held is not None or k != current:
            self.lifetime_ = lifetime
            n_columns = self._renumber_features()
            ridge.set_features(_cell_columns(trees, ridge.n_cells), n_columns, factor)
            self.n_kernel_features_ = n_columns
        self._next_selection = _RESELECT_FACTOR * self.n_samples_seen_
        columns = np.array(record).T
        self.lifetime_path_ = {
            "lifetimes": columns[0], "n_features": columns[1].astype(np.int64),
            "train_error": columns[2], "validation_error": columns[3],
            "log_marginal_likelihood": columns[4], "time": columns[5]}

    # ------------------------------------------------------------------ online
    def partial_fit(self, X, y, sample_weight=None):
        """Learn a mini-batch online: extend the partitions, update the solution.

        The first call fits on the batch (selecting the lifetime if ``"auto"``);
        the intercept stays the weighted mean of that first batch. Later rows
        extend the partitions (up to their growth lifetime): new cells are new
        features, zero for earlier rows. The solution is the exact ridge solution
        on all rows seen for the current features. Past ``max_features`` cells the
        partitions are cut back to an earlier lifetime; with ``lifetime="auto"`` the
        lifetime is selected again each time the number of rows has doubled.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows of the mini-batch.
        y : array-like of shape (n_samples,)
            Targets of the rows.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each row, as in ``fit`` (``None``: all 1).

        Returns
        -------
        self

        Notes
        -----
        A call of a few rows (``utils.fast_path``) after the first one skips
        scikit-learn's validation when nothing it checks can have changed, and
        extends the partitions and finds the rows' cells in one compiled call: same
        model, same errors.
        """
        if sample_weight is None and self._partial_fit_fast(X, y):
            return self
        return self._partial_fit_full(X, y, sample_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    def _partial_fit_full(self, X, y, sample_weight):
        self._own_arrays()  # loaded from read-only memory maps (utils.persistence)
        if not self.__sklearn_is_fitted__():
            _check_first_targets(y, sample_weight)
        checked = check_regressor_batch(self, X, y, sample_weight)
        if checked is None:  # an empty mini-batch of a fitted model: a no-op
            return self
        X, y, sample_weight, first = checked
        y = np.asarray(y, dtype=np.float64)
        if first:
            self._fit(self._start_units(X, y, sample_weight), y, sample_weight, online=True)
        else:
            self._ridge.check_rows(y - self.intercept_, sample_weight)
            X = self._later_rows_in_units(X, sample_weight)
            keep = sample_weight > 0
            X, y, sample_weight = X[keep], y[keep], sample_weight[keep]
            if X.shape[0] > 0:
                from ..engine.tree_table import TreeTable

                self._learn_rows(X, y, sample_weight, TreeTable(self._fast_stats),
                                 self._ridge_work(X.shape[0], X.shape[1]))
        self._remember_fast_state()
        return self

    @fast_call
    def _partial_fit_fast(self, X, y):
        """The fast path of ``partial_fit`` (see ``utils.fast_path``); False when the
        call must take the full path (nothing has changed then)."""
        from ._forest_kernels import accept_batch

        rows = self._fast_rows(X, y)
        if rows is None:
            return False
        X, y = rows
        table = self._fast_table()
        if table is None:
            return False
        self._ridge.check_rows(y - self.intercept_, ONES[: X.shape[0]])
        if not accept_batch(X, y, self._feature_range):
            return False
        work = self._fast_scratch.work.get("ridge")
        if work is None or work[0].shape[0] != X.shape[1] or work[3].shape[0] != self.n_trees:
            work = self._fast_scratch.work["ridge"] = self._ridge_work(FAST_MAX_ROWS,
                                                                      X.shape[1])
        self._learn_rows(X, y, ONES[: X.shape[0]], table, work)
        return True

    def _ridge_work(self, n_rows, n_features):
        """Work arrays of ``_learn_rows`` for up to ``n_rows`` rows: ``(excess, path,
        no_samples, leaves, n_before, cells, columns)``."""
        n_trees = len(self.trees_)
        return [np.empty(n_features), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64),
                np.empty((n_trees, n_rows), dtype=np.int64), np.empty(n_trees, dtype=np.int64),
                np.empty((n_rows, n_trees), dtype=np.int64),
                np.empty((n_rows, n_trees), dtype=np.int64)]

    def _learn_rows(self, X, y, sample_weight, table, work):
        """Learn the rows in order (``_forest_kernels.learn_cells``, then
        ``_learn_assigned``), in pieces that end where the partitions are cut back
        or the lifetime is selected again: the same model as one row at a time."""
        with one_blas_thread():
            self._learn_pieces(X, y, sample_weight, table, work)

    def _learn_pieces(self, X, y, sample_weight, table, work):
        from ._forest_kernels import learn_cells

        n = X.shape[0]
        start = 0
        while start < n:
            stop = n
            if self.lifetime == "auto":
                due = int(np.ceil(self._next_selection - self.n_samples_seen_))
                stop = min(n, start + max(due, 1))
            for tree in self.trees_:  # learn_cells cannot stop in one tree: room for all
                tree.reserve(tree.n_nodes + NODES_PER_ROW * (stop - start))
            capacity = max(tree.capacity for tree in self.trees_)
            if work[1].shape[0] < capacity:
                work[1] = np.empty(2 * capacity, dtype=np.int64)
            if not table.refresh(self.trees_):  # pragma: no cover - trees always share one
                raise RuntimeError("The partitions cannot share a tree table.")
            end, n_cells, n_columns = learn_cells(
                table.addresses, table.sizes, X, start, stop, self.growth_lifetime_,
                float(self.lifetime_), self._ridge.n_cells, self.n_kernel_features_,
                self._max_cells(), *work)
            rows = slice(start, end)
            self._learn_assigned(X[rows], work[5][: end - start], work[6][: end - start],
                                 n_cells, n_columns, y[rows], sample_weight[rows])
            start = end

    def _add_features(self, values):
        values = super()._add_features(values)
        if self._reservoir is not None:
            self._reservoir.add_features(values)

    def __setstate__(self, state):
        super().__setstate__(state)
        # Saved before ``feature_scale`` existed: fitted in raw units.
        self.__dict__.setdefault("feature_scale", None)
        if "trees_" in self.__dict__ and "growth_lifetime_" not in self.__dict__:
            # Saved before the cells were kept apart from the features: each
            # feature is one cell, and the trees grow at the fitted lifetime.
            for tree in self.trees_:
                tree.node_stats["cell"] = tree.node_stats["column"].copy()
            self.growth_lifetime_ = float(self.lifetime_)
            self._next_selection = np.inf  # no statistics of the targets to select on
            self._reservoir = None
            self._ridge.max_cells = max(self._max_cells(), self._ridge.n_cells)

    def predict(self, X):
        """Predicted targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Ridge prediction on the Mondrian features:
            ``feature_map(X) @ coef_ + intercept_``.
        """
        fast = self._fast_X(X)
        if fast is not None:
            out = self._fast_scores(fast, self.coef_.reshape(-1, 1), self.intercept_, True)
            if out is not None:
                return out.reshape(-1)
        Phi = self.feature_map(X)
        return self.intercept_ + Phi @ self.coef_


def _cell_columns(trees, n_cells):
    """The feature of every cell, from the trees' statistics."""
    out = np.zeros(n_cells, dtype=np.int64)
    for tree in trees:
        n = tree.n_nodes
        leaves = np.flatnonzero(tree.arrays.left[:n] == LEAF)
        out[tree.node_stats["cell"][leaves] - 1] = tree.node_stats["column"][leaves] - 1
    return out


def _feature_map_at(trees, n_cells, lifetime):
    """The feature of every cell at ``lifetime`` (numbered as ``_renumber_features``
    would) and the number of features; the trees are left as they are."""
    out = np.zeros(n_cells, dtype=np.int64)
    n_columns = 0
    for tree in trees:
        n = tree.n_nodes
        column = np.zeros(n, dtype=np.int64)
        n_columns = assign_feature_columns(tree.arrays, column, float(lifetime), n_columns)
        leaves = np.flatnonzero(tree.arrays.left[:n] == LEAF)
        out[tree.node_stats["cell"][leaves] - 1] = column[leaves] - 1
    return out, n_columns


def _candidate_cuts(n_trees, n_cuts):
    """Numbers of cuts at which ``_reselect`` scores the partitions: features in a
    geometric progression from one per tree to all cells."""
    counts = {0, n_cuts}
    size = float(n_trees)
    while size - n_trees < n_cuts:
        counts.add(min(int(round(size)) - n_trees, n_cuts))
        size *= _CANDIDATE_RATIO
    return sorted(counts)


class _Reservoir:
    """A uniform sample of the stream's rows (at most ``_RESERVOIR_SIZE``; Vitter's
    algorithm R) for ``selection="validation"`` online.

    Parameters
    ----------
    n_features : int
    seed : int
    """

    def __init__(self, n_features, seed):
        self.X = np.zeros((0, n_features))
        self.y = np.zeros(0)
        self.w = np.zeros(0)
        self.n_offered = 0
        self.rng = np.random.RandomState(seed)

    def offer(self, X, y, w):
        """Offer rows (targets centred, weights positive) in order."""
        room = max(min(_RESERVOIR_SIZE - self.X.shape[0], X.shape[0]), 0)
        if room:
            self.X = np.vstack([self.X, X[:room]])
            self.y = np.concatenate([self.y, y[:room]])
            self.w = np.concatenate([self.w, w[:room]])
        self.n_offered += room
        for i in range(room, X.shape[0]):
            self.n_offered += 1
            j = self.rng.randint(self.n_offered)
            if j < _RESERVOIR_SIZE:
                self.X[j], self.y[j], self.w[j] = X[i], y[i], w[i]

    def sample(self, n):
        """``n`` rows at random (all rows when there are fewer)."""
        n = min(n, self.X.shape[0])
        rows = np.sort(self.rng.choice(self.X.shape[0], n, replace=False))
        return np.ascontiguousarray(self.X[rows]), self.y[rows], self.w[rows]

    def add_features(self, values):
        """Every row gets value ``v`` in each new feature (see ``_add_features``)."""
        self.X = np.hstack([self.X, np.broadcast_to(values, (self.X.shape[0], len(values)))])


_LOSSES = {"log_loss": 0, "squared_hinge": 1}

_DEFAULT_ITERATIONS = {"sgd": 10, "lbfgs": 100}
"""``max_iter=None``: epochs of SGD, iterations of L-BFGS."""


class MondrianKernelClassifier(ClassifierMixin, _BaseMondrianKernelModel):
    """Linear classifier on Mondrian kernel features, trained by SGD or L-BFGS.

    Scores are ``Phi(x) W`` (one column for two classes, one per class otherwise);
    the loss is the logistic loss (softmax cross-entropy for several classes) or the
    squared hinge (one-vs-rest). With ``lifetime="auto"`` the partitions are sampled
    once with ``max_lifetime`` and the cuts are replayed in time order: at a cut the
    two new features inherit the weight of the split one (predictions unchanged).
    Once the features have grown by ``sweep_step`` (5%) since the last evaluation,
    ``sweep_epochs`` epochs of SGD run and the validation accuracy is recorded; the
    lifetime selected is kept, and the weights are then fitted on all rows from the
    sweep's, by SGD or L-BFGS (``solver``). ``partial_fit`` learns online by SGD: one
    epoch per mini-batch.

    Parameters
    ----------
    n_trees : int, default=100
        Number ``M`` of Mondrian partitions.
    lifetime : float or "auto", default="auto"
        Lifetime (inverse kernel width); ``"auto"`` selects it by the sweep, on the
        misclassification rate of held-out rows: the longest lifetime evaluated whose
        rate is within one standard error of the lowest (the rates of long lifetimes
        are level within their noise, and the longer ones generalise better once
        trained on all rows; ``kernel._sweep.sgd_sweep``). A fixed lifetime is lowered
        (``lifetime_``) when the partitions would otherwise have more than
        ``max_features`` cells.
    loss : {"log_loss", "squared_hinge"}, default="log_loss"
        ``"log_loss"``: logistic regression (with ``predict_proba``);
        ``"squared_hinge"``: a linear SVM (no probabilities).
    alpha : float, default=1e-6
        L2 penalty: ``fit`` minimises the mean loss of the rows plus ``alpha / 2``
        times the squared norm of the weights; SGD (the sweep, ``partial_fit``,
        ``solver="sgd"``) applies it, in the same proportion per row, to the
        weights each row touches.
    eta0 : float, default=0.5
        Constant learning rate of SGD (every row's features have unit norm).
    solver : {"auto", "lbfgs", "sgd"}, default="auto"
        How ``fit`` trains the weights once the lifetime is fixed, from those of
        the sweep. ``"sgd"``: ``max_iter`` epochs of SGD (10), as earlier releases
        did; they stop short of the minimum of the objective, which regularises.
        ``"lbfgs"``: L-BFGS towards that minimum (at most ``max_iter`` iterations,
        100; ``kernel._lbfgs``). ``"auto"``: L-BFGS fits the sweep's fitting rows
        first, and is kept if its weights make fewer errors on the sweep's
        validation rows than the sweep's SGD weights (``validation_errors_``); SGD
        otherwise, and always with a fixed lifetime (no validation rows). Default
        ``"auto"``: against ``"sgd"`` on the eight shared classification sets, 1.1
        points of test accuracy more on letter, 0.9 on usps, 0.7 on satimage, 0.3 on
        Elec2 (L-BFGS chosen), 0.8 less on spambase (L-BFGS chosen too), the same on
        the other three (SGD chosen: on dna, the epochs' early stop regularises
        better than the minimum), for 1.2x to
        2.0x the fit time (letter 12.8 to 23.4 s of CPU)
        (``benchmarks/bench_kernel_defaults.py``). ``partial_fit`` learns by SGD
        whatever the solver.
    max_iter : int, default=None
        Epochs of SGD or iterations of L-BFGS on all rows after the lifetime is
        fixed (``None``: 10 epochs, 100 iterations).
    sweep_epochs : int, default=1
        Epochs at each evaluation of the sweep.
    sweep_step : float, default=0.05
        Growth of the number of features between two evaluations of the sweep: the
        cuts are replayed until the features have grown by this share (at least one
        cut), then ``sweep_epochs`` epochs run and the validation error is recorded.
        The lifetimes are thus evaluated on a geometric grid of kernel widths, each
        evaluation costing ``sweep_epochs`` epochs, about ``log(max_features /
        n_trees) / log(1 + sweep_step)`` of them (at most 145 on the shared sets).
        ``0`` evaluates after every cut (the finest grid, an epoch per cut: minutes
        on tens of thousands of rows where the default takes seconds, and no more
        accurate on the shared sets: ``benchmarks/bench_kernel_defaults.py``).
    max_lifetime : float, default=None
        Terminal lifetime of the sweep (``None``: ``10 / median L1 distance``).
    max_features : int, default=100000
        Largest number of cells (leaves of all partitions, at least one per tree),
        hence of features: the sweep stops before it, and past it the partitions
        are cut back to an earlier lifetime (``lifetime_``), keeping 90% of it, a
        merged cell taking the mean weight of its cells (weighted by their rows).
        The weights take ``8 * max_features`` bytes per output at most (one output
        for two classes, one per class otherwise: 21 MB for 26 classes). The cap
        of earlier releases, 20,000, stopped the sweep of spambase, letter, Elec2
        and satimage before the lifetime it selects now: 0.3-1.1 points of test
        accuracy (``benchmarks/bench_kernel_defaults.py``).
    validation_fraction : float, default=0.1
        Share of the rows held out to score the lifetimes of the sweep
        (``lifetime="auto"``).
    early_stopping : bool, default=True
        End the sweep once it has twice as many features as at the lifetime
        selected so far.
    feature_scale : {"auto", "supervised", "range"} or None, default="auto"
        Units of the features, fixed by the first batch, as in
        :class:`MondrianKernelRegressor` (``"supervised"``: each feature's range
        over a weight learned from the labels, its importance in an ExtraTrees;
        ``"range"``: its range, rounded up to a power of two; ``"auto"``: supervised
        for a first batch of at least 20 rows of positive weight, range units for a
        smaller one; ``None``: raw units). Default ``"auto"``: on the eight shared
        classification sets the supervised scales raised the test accuracy of range
        units by up to 1.9 points (dna 0.927 to 0.946, adult 0.826 to 0.840)
        (``benchmarks/bench_kernel_defaults.py``).
    n_jobs : int, default=None
        Threads over the partitions (results do not depend on it).
    random_state : int, RandomState instance or None, default=None
        Seeds the partitions, the held-out rows and the order of the SGD epochs.

    Attributes
    ----------
    classes_ : ndarray
        Sorted class labels; ``partial_fit`` adds labels as they appear.
    coef_ : ndarray of shape (n_kernel_features_, n_outputs)
        Weights of the features: one column for two classes (the score of
        ``classes_[1]``), one per class otherwise.
    n_iter_ : int
        Iterations of L-BFGS, or epochs of SGD, run on all rows after the lifetime
        was fixed.
    solver_ : str
        The solver that trained them (``"sgd"`` or ``"lbfgs"``).
    validation_errors_ : dict
        ``solver="auto"`` after a sweep: the validation error of each solver's
        weights fitted on the sweep's fitting rows.
    lifetime_, max_lifetime_, lifetime_path_, trees_, n_kernel_features_
        As in :class:`MondrianKernelRegressor` (errors are misclassification
        rates; no marginal likelihood; ``lifetime_path_`` has one entry per
        evaluation of the sweep, see ``sweep_step``).

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
        "solver": [StrOptions({"auto", "lbfgs", "sgd"})],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "sweep_epochs": [Interval(Integral, 1, None, closed="left")],
        "sweep_step": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, n_trees=100, *, lifetime="auto", loss="log_loss", alpha=1e-6,
                 eta0=0.5, solver="auto", max_iter=None, sweep_epochs=1, sweep_step=0.05,
                 max_lifetime=None, max_features=100000, validation_fraction=0.1,
                 early_stopping=True, feature_scale="auto", n_jobs=None,
                 random_state=None):
        self.n_trees = n_trees
        self.lifetime = lifetime
        self.loss = loss
        self.alpha = alpha
        self.eta0 = eta0
        self.solver = solver
        self.max_iter = max_iter
        self.sweep_epochs = sweep_epochs
        self.sweep_step = sweep_step
        self.max_lifetime = max_lifetime
        self.max_features = max_features
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.feature_scale = feature_scale
        self.n_jobs = n_jobs
        self.random_state = random_state

    def __setstate__(self, state):
        super().__setstate__(state)
        # Saved before ``sweep_step`` existed (it swept with an epoch per cut): the
        # parameter takes its default, which describes the next fit.
        self.__dict__.setdefault("sweep_step", 0.05)
        # Saved before ``feature_scale`` existed: fitted in raw units.
        self.__dict__.setdefault("feature_scale", None)
        # Saved before ``solver`` existed: trained by ``max_iter`` epochs of SGD.
        self.__dict__.setdefault("solver", "sgd")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Sample the partitions, select the lifetime (if ``"auto"``) and train.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Class labels of the rows.
        sample_weight : array-like of shape (n_samples,), default=None
            A row's weight multiplies the gradient of its loss in the SGD steps;
            rows of weight zero are not learned.

        Returns
        -------
        self
        """
        X, y, sample_weight = check_classifier_fit(self, X, y, sample_weight)
        self._fit(self._start_units(X, y, sample_weight), y, sample_weight)
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
        self.__dict__.pop("validation_errors_", None)  # set again by solver="auto"
        loss = _LOSSES[self.loss]
        split = None  # the sweep's fitting and validation weights
        if self.lifetime == "auto" and X.shape[0] >= 2:
            coef, split = self._sweep(X, labels, sample_weight, rng, states, loss)
        else:
            self.lifetime_ = (float(self.lifetime) if self.lifetime != "auto"
                              else float(self.max_lifetime or 1.0))
            trees = self._sample_trees(X, self.lifetime_, states)
            cap = max(int(self.max_features), int(self.n_trees))
            lifetime = capped_lifetime(trees, self.lifetime_, cap)
            if lifetime < self.lifetime_:  # too many cells: leave room to grow, as online
                self.lifetime_ = capped_lifetime(trees, self.lifetime_,
                                                 max(int(self.n_trees), int(_PRUNE_TO * cap)))
                trees = [pruned_copy(tree, self.lifetime_)[0] for tree in trees]
            self._set_trees(trees)
            coef = np.zeros((self.n_kernel_features_, self._n_outputs()))
        columns = self._columns(X)
        scale = 1.0 / np.sqrt(self.n_trees)
        solver = self.solver
        if solver == "auto":
            solver, coef = (("sgd", coef) if split is None else
                            self._choose_solver(coef, columns, labels, *split, loss, scale))
        if solver == "lbfgs":
            coef, self.n_iter_ = fit_weights(coef, columns, labels, sample_weight,
                                             float(self.alpha), loss, scale,
                                             self._iterations("lbfgs"))
        else:
            order = np.arange(X.shape[0], dtype=np.int64)
            self.n_iter_ = self._iterations("sgd")
            sgd_epochs(coef, columns, labels, sample_weight, order, self.n_iter_,
                       float(self.eta0), float(self.alpha), loss, scale, self._rng)
        self.solver_ = solver
        self.coef_ = coef
        self.n_samples_seen_ = X.shape[0]

    def _iterations(self, solver):
        """``max_iter``, or its default for ``solver``."""
        if self.max_iter is not None:
            return int(self.max_iter)
        return _DEFAULT_ITERATIONS[solver]

    def _choose_solver(self, coef, columns, labels, weight_fit, weight_val, loss, scale):
        """``solver="auto"``: ``("lbfgs", W)`` when the weights ``W`` that L-BFGS fits
        on the sweep's fitting rows, from the sweep's, make fewer errors on its
        validation rows than the sweep's SGD weights ``coef``; else ``("sgd", coef)``.
        """
        errors = np.empty(2)
        sgd_errors(coef, columns, labels, weight_fit, weight_val, scale, errors)
        sgd_error = errors[1]
        W = fit_weights(coef, columns, labels, weight_fit, float(self.alpha), loss, scale,
                        self._iterations("lbfgs"))[0]
        sgd_errors(W, columns, labels, weight_fit, weight_val, scale, errors)
        self.validation_errors_ = {"sgd": float(sgd_error), "lbfgs": float(errors[1])}
        return ("lbfgs", W) if errors[1] < sgd_error else ("sgd", coef)

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
            self._stop_factor(), float(self.sweep_step))
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
        return coef, (weight_fit, weight_val)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Learn a mini-batch online: extend the partitions, one SGD epoch on it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows of the mini-batch.
        y : array-like of shape (n_samples,)
            Class labels of the rows.
        classes : array-like, default=None
            All labels the stream will contain (first call). Optional: without it,
            labels join the model as they appear (a new class starts with zero
            weights); with it, any other label is an error.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each row, as in ``fit`` (``None``: all 1).

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
        self._own_arrays()  # loaded from read-only memory maps (utils.persistence)
        checked = check_classifier_batch(self, X, y, sample_weight, classes)
        if checked is None:
            return self
        X, y, sample_weight, first = checked
        if first:
            self._fit(self._start_units(X, y, sample_weight), y, sample_weight)
        else:
            X = self._later_rows_in_units(X, sample_weight)
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
                self._cap_cells()
        self._remember_fast_state()
        return self

    def _cap_cells(self):
        """Past ``max_features`` cells, cut the partitions back to an earlier
        lifetime (``lifetime_``), keeping 90% of them; a merged cell's weight is
        the mean of its cells' weights, weighted by their numbers of rows."""
        cap = max(int(self.max_features), int(self.n_trees))
        if self.n_kernel_features_ <= cap:
            return
        lifetime = capped_lifetime(self.trees_, float(self.lifetime_),
                                   max(int(self.n_trees), int(_PRUNE_TO * cap)))
        old_columns, new_columns, counts = [], [], []
        n_columns = 0
        for tree in self.trees_:
            n = tree.n_nodes
            leaves = np.flatnonzero(tree.arrays.left[:n] == LEAF)
            old_columns.append(tree.node_stats["column"][leaves] - 1)
            counts.append(tree.arrays.n_points[leaves].astype(np.float64))
            holder = prune_in_place(tree, lifetime)[1]
            n_columns = assign_columns([tree], n_columns)
            new_columns.append(tree.node_stats["column"][holder[leaves]] - 1)
        old_columns, new_columns, counts = map(np.concatenate,
                                               (old_columns, new_columns, counts))
        coef = np.zeros((n_columns, self.coef_.shape[1]))
        total = np.zeros(n_columns)
        np.add.at(coef, new_columns, counts[:, None] * self.coef_[old_columns])
        np.add.at(total, new_columns, counts)
        self.coef_ = coef / np.maximum(total, 1.0)[:, None]
        self.lifetime_ = float(lifetime)
        self.n_kernel_features_ = n_columns
        if "_fast_args" in self.__dict__:  # not pickled: a loaded model sets it later
            self._fast_args = (float(self.lifetime_),) + tuple(self._fast_args[1:])

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
            self._cap_cells()
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
        self._cap_cells()
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
        """Scores of the linear model on the Mondrian features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            One score per row for two classes (positive favours ``classes_[1]``),
            one per row and class (columns follow ``classes_``) otherwise.
        """
        scores = None
        fast = self._fast_X(X)
        if fast is not None:
            scores = self._fast_scores(fast, self.coef_, 0.0, False)
        if scores is None:
            scores = self.feature_map(X) @ self.coef_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            The class of highest score of each row.
        """
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
        """Class probabilities (logistic loss only).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; rows sum to one (the logistic function of
            the score for two classes, the softmax of the scores otherwise).
        """
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
        """Logarithm of :meth:`predict_proba` (logistic loss only).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
