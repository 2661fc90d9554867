"""Shared machinery of the Mondrian forest estimators.

A forest is a list of :class:`~mondrianlearn.engine.tree.TreeState` (one random
stream each) and one :class:`~mondrianlearn.engine.tree.SampleStore` shared by all
trees. ``fit`` samples every tree in batch; ``partial_fit`` samples the first batch
in batch and extends the trees online afterwards. Both run one compiled loop per
tree, in threads when ``n_jobs`` allows; no Python code runs per point.

:class:`BaseMondrianForest` holds that machinery for the Mondrian forest regressor
and the classifiers; :class:`BaseMondrianForestClassifier` adds what the Mondrian
forest classifier and boosting share (classes, class counts, their smoothing, the
training entry points). Boosting is a sibling of the forest classifier, not a
subclass: it defines how its trees learn and vote, and has none of the forest's
parameters it does not use (``max_depth``, ``max_nodes``, ``bootstrap``,
``feature_scale``).
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from ..engine._jit import compiled_entry
from ..engine.growth import close_pending_blocks, start_root
from ..engine.saved_trees import restore_derived, without_derived
from ..engine.storage import (
    batch_nodes,
    grow_together,
    learn_rows,
    resampled_nodes,
    sample_with_growth,
)
from ..engine.tree import (
    UNBOUNDED,
    SampleStore,
    TreeState,
    own_point_boxes,
)
from ..engine.tree_table import NO_RANGE, one_tree_table
from ..utils.drift_param import DriftMixin, drift_module
from ..utils.estimator import ForestClassifierMixin, ForestLearnerMixin
from ..utils.fast_path import FAST_MAX_ROWS, NEW_UNITS, NO_UNITS, ONE, ONES, fast_call
from ..utils.parallel import fast_path_threads, map_trees, run_each, run_split
from ._additive import accumulate_new_nodes, draw_multiplicities, sample_tree
from ._forest_kernels import learn_forest_rows
from ._smoothing import ikn_posterior

_NO_TARGETS = np.empty(0)
"""``targets`` of the fast path's store kernel for classification (none)."""

_NO_KEYS = np.empty(0, dtype=np.int64)
"""``keys`` of ``learn_forest_rows`` when it stores no row (``_extend_tree_online``)."""

_MAX_SCALED_TARGET = 1e100
"""Regression targets are stored centred and scaled; a batch whose scaled targets
exceed this is rescaled first, so that their squares cannot overflow."""


class BaseMondrianForest(DriftMixin, ForestLearnerMixin, BaseEstimator):
    """Base of the Mondrian forest estimators and of boosting: trees, the shared
    sample store, batch sampling and online extension, the fast path.

    Subclasses define how a first batch starts the model (``_start``), how rows
    become statistics (``_learn_weighted_rows``) and the predictions; they may
    redefine ``_learn`` (how the trees learn stored rows), ``_bootstrap()`` and
    ``_max_nodes_value()`` (read from the parameters ``bootstrap`` and ``max_nodes``
    by default).
    """

    _structure_params = ("n_estimators", "bootstrap", "feature_scale", "lifetime")
    """Parameters fixed once the forest has started learning (checked by a later
    ``partial_fit``: ``TreeModelMixin._check_structure``). The trees are Mondrian
    processes restricted to ``lifetime``: extending them under a lower one gave
    probabilities far outside [0, 1] (``tests/test_structure_params.py``)."""

    _parameter_constraints = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "lifetime": [Interval(Real, 0, None, closed="right")],
        "min_samples_split": [Interval(Integral, 2, None, closed="left")],
        "max_depth": [Interval(Integral, 0, None, closed="left"), None],
        **ForestLearnerMixin._forest_constraints,
    }

    _fast_stats = ("stats",)  # per-node arrays in the fast path's tree table
    _fast_weighted = True  # sample_weight on the fast path (utils.fast_path)

    # Set by subclasses: pause blocks of one label (classification), and whether
    # each point's statistics row is one-hot at its label key (class counts).
    _pause_pure = False
    _one_hot_stats = False

    _mergeable = True  # independent trees (utils.protocols); False for single trees

    @classmethod
    def _merge_fitted(cls, forests, same_stream):
        """Merge fitted forests of this class (``forest.merge_forests`` checks them)."""
        from ._merge import merge_mondrian_forests

        return merge_mondrian_forests(forests, same_stream)

    # ------------------------------------------------------------------ learning
    def _n_trees(self):
        return self.n_estimators

    def _bootstrap(self):
        """Whether trees count per-point multiplicities (online bagging)."""
        return bool(self.bootstrap)

    def _trained_trees(self):
        """Trees that have seen at least one point (with bootstrap, a tree may not)."""
        return [t for t in self.trees_ if t.n_nodes > 0]

    def _start_model(self, n_features, n_stats):
        """Fresh trees with their own random streams, and an empty sample store."""
        self._start_units(n_features)
        self.__dict__.pop("_drift_state", None)  # drift adaptation starts afresh too
        states = self._spawn_tree_states(self._n_trees())
        self._store = SampleStore(n_features, n_stats)
        self.trees_ = [
            TreeState(n_features, states[t], {"stats": np.zeros((16, n_stats))},
                      count_multiplicity=self._bootstrap())
            for t in range(self._n_trees())
        ]
        self.n_samples_seen_ = 0

    def _trim(self):
        for tree in self.trees_:
            tree.trim()

    def _learn(self, X, keys, point_stats):
        """Add the rows to the store and teach them to every tree (with drift
        adaptation: :func:`mondrianlearn.drift.learn_points`)."""
        adapts = self._adapts_to_drift()
        ids = self._store.append(X, keys, point_stats)
        if adapts:
            drift_module().learn_points(self, ids)
            return
        self.n_samples_seen_ += X.shape[0]
        store = self._store
        settings = self._learning_settings()
        if X.shape[0] <= FAST_MAX_ROWS and self._extend_stored(ids, settings):
            self._release_store_if_full()
            return

        sizes = self.__dict__.get("_fit_sizes")  # in fit: trees reserve alike

        def learn_tree(tree):
            return _learn_tree(tree, store, ids, settings, sizes=sizes)

        # The trained trees are taken from the results: with joblib's Dask backend
        # each tree is trained on a worker and comes back as a new object.
        self.trees_ = map_trees(learn_tree, self.trees_, self.n_jobs)
        self._release_store_if_full()

    def _resamples_on_new_units(self):
        """New feature units (``utils.feature_scale``) re-sample the trees on the
        stored points, except under a node budget, where trees grow point by point
        (in ``fit`` too) and are rescaled in place, so that ``fit`` still equals
        ``partial_fit`` over any mini-batches. With drift adaptation, only while
        every tree holds every stored point (``_can_resample``): trees that started
        at different rows are rescaled in place (see :mod:`mondrianlearn.drift`)."""
        return self._max_nodes_value() >= UNBOUNDED

    def _check_structure(self):
        """Also refuse a node budget that would let a tree grow again after the
        forest released its stored points (``_release_store_if_full``): growing
        re-samples paused leaves from their points, which are gone. Lowering the
        budget, or raising it while the points are kept, is fine."""
        super()._check_structure()
        budget = self._max_nodes_value()
        stuck = [t.n_nodes for t in self.__dict__.get("trees_", ())
                 if not t.keep_samples and t.n_nodes + 2 <= budget]
        if stuck:
            raise ValueError(
                f"max_nodes={self.max_nodes!r} would let the trees grow again, but they "
                "reached the former budget and the forest released its stored points "
                "(memory stays bounded), which growing needs. Keep max_nodes at most "
                f"{min(stuck) + 1}, or call fit to start anew with the new budget.")

    def _can_resample(self):
        """Whether the store holds every point the trees learned (not released), and
        every tree every stored point (with drift adaptation, until a tree starts
        later than the others: ``drift.trees_hold_every_row``)."""
        if not all(t.keep_samples for t in self.trees_):
            return False
        return not self._adapts_to_drift() or drift_module().trees_hold_every_row(self)

    def _resample_trees(self):
        """Sample every tree afresh, in batch, on the stored points (each tree goes on
        with its own random stream): the forest then has the law of ``fit`` on them."""
        store = self._store
        ids = np.arange(store.n, dtype=np.int64)
        settings = self._learning_settings()
        n_stats = store.stats.shape[1]
        fresh = [TreeState(store.X.shape[1], tree.rng_state, {"stats": np.zeros((16, n_stats))},
                           count_multiplicity=self._bootstrap()) for tree in self.trees_]
        max_nodes = settings[4]

        def learn_tree(tree):
            # Online learning goes on at once: room for it, in nodes and in point
            # links up to the store's capacity (capacity changes no result).
            tree.reserve(resampled_nodes(store.n, tree.row_nbytes),
                         limit=max_nodes if max_nodes < UNBOUNDED else None)
            tree.ensure_sample_capacity(store.X.shape[0])
            return _learn_tree(tree, store, ids, settings)

        self.trees_ = map_trees(learn_tree, fresh, self.n_jobs) if store.n else fresh

    # ---------------------------------------------------------------- pickles
    def __getstate__(self):
        # Boxes and class counts or moments that the stored points give back
        # exactly are not saved (``engine.saved_trees``): most of a forest's size.
        state = super().__getstate__()
        store = state.get("_store")
        if store is not None and state.get("trees_"):
            X, point_stats = store.X[: store.n], store.stats[: store.n]
            state["trees_"] = [without_derived(tree, X, point_stats, "stats")
                               for tree in state["trees_"]]
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        store = self.__dict__.get("_store")
        if store is not None:
            X, point_stats = store.X[: store.n], store.stats[: store.n]
            for tree in self.__dict__.get("trees_", ()):
                restore_derived(tree, X, point_stats, "stats")

    def _release_store_if_full(self):
        max_nodes = self._max_nodes_value()
        store = self._store
        bootstrap = self._bootstrap()
        if max_nodes < UNBOUNDED and all(t.n_nodes + 2 > max_nodes for t in self.trees_):
            # Every tree is full: no paused leaf will be re-sampled again, so the
            # points are no longer needed (memory stays bounded). Leaves of one point
            # take their boxes from their points first.
            for tree in self.trees_:
                own_point_boxes(tree.arrays, store.X)
            store.clear()
            for tree in self.trees_:
                tree.sample_next = tree.sample_next[:0]
                tree.keep_samples = False
                tree.sample_mult = tree.sample_mult[:0] if not bootstrap else np.zeros(1)

    # ----------------------------------------------------------------- fast path
    @fast_call
    def _learn_fast(self, rows, keys, targets, weights=None):
        """Store the rows and extend every tree in one compiled call
        (``learn_forest_rows``; ``rows = (X, units, follow)`` from ``_fast_input``,
        ``weights`` from ``_fast_weights``, None for ones);
        trees that need room or a paused leaf re-sampled are finished by the full
        path. Returns False, with nothing changed, when the rows are refused, and
        ``NEW_UNITS`` when they are only because they change a feature unit."""
        X, units, follow = rows
        m, n_features = X.shape
        state = self.__dict__
        adapts = state.get("drift") is not None or state.get("_drift_state") is not None
        if adapts:
            self._adapts_to_drift()  # raises for drift=None set after drift adaptation
        trees = state["trees_"]
        store = state["_store"]
        state["_fast_scratch"].learn_plan = None  # made again below if it may be
        full = store.n + m > store.X.shape[0]
        if full:  # grown as the full path's ``SampleStore.append`` would
            arrays = store.X, store.keys, store.stats
            links = [(tree.sample_next, tree.sample_mult) for tree in trees]
            store.reserve(store.n + m)
            # The trees' point links follow, here rather than tree by tree in
            # Python after the kernel turns them down (capacity changes no result;
            # before the table, which then has the new arrays).
            for tree in trees:
                tree.ensure_sample_capacity(store.X.shape[0])
        table = self._fast_table()
        if table is None:
            if full:
                _give_back(store, arrays, trees, links)
            return False
        work = self._fast_extend_work(table, trees, n_features)
        # the ids of the new points: kept by drift adaptation, else used in this call
        ids = work[5] if m == 1 and not adapts else np.empty(m, dtype=np.int64)
        scaled = self._fast_scaled(m, n_features) if units.shape[1] else X
        settings = state["_fast_args"]
        lifetime, pause_pure, mss, bootstrap, max_nodes, one_hot = settings
        n_threads = 1 if adapts else fast_path_threads(self.n_jobs, m, len(trees))
        # With several threads, the rows are stored first and the trees extended
        # after, in parts (``_extend_in_threads``).
        tail = (_MAX_SCALED_TARGET, not adapts and n_threads == 1, ids, work[6], work[7],
                store.stats.shape[1], bootstrap, lifetime, pause_pure, mss, max_nodes,
                one_hot, *work[:5])
        # (The prepared call, ``_prepare_learning``, passes ``_NO_TARGETS``, of the type
        # of a classifier's ``targets``: no regressor's call is prepared.)
        args = (table.addresses, table.sizes, X, units, follow, scaled, keys,
                (ONE if m == 1 else ONES[:m]) if weights is None else weights, targets,
                store.X, store.keys, store.stats, store.n, state["_feature_range"], *tail)
        left_over = learn_forest_rows(*args)
        if left_over == 0 and m == 1 and n_threads == 1 and not adapts and self._prepares_calls:
            state["_fast_scratch"].learn_plan = self._prepare_learning(
                X, trees, compiled_entry(learn_forest_rows, args), table, units, follow,
                scaled, store, tail, work, settings)
        if left_over == 0 and n_threads > 1:
            left_over = self._extend_in_threads(table, store, ids, work, settings, n_threads)
        if left_over < 0:
            if full:  # nothing changed: not even the capacity of the store or links
                _give_back(store, arrays, trees, links)
            return NEW_UNITS if left_over == -2 else False
        store.n += m
        if adapts:
            drift_module().learn_points(self, ids, fast=True)
            slots = (drift_module().prepare_point_learning(self, ids)
                     if m == 1 and self._prepares_calls else None)
            if slots is not None:
                state["_fast_scratch"].learn_plan = self._prepare_learning(
                    X, trees, compiled_entry(learn_forest_rows, args), table, units, follow,
                    scaled, store, tail, work, settings, slots)
            return True
        state["n_samples_seen_"] += m  # not a parameter: no __setattr__
        if left_over:
            self._finish_trees(trees, store, ids, settings, work, n_threads)
        if left_over or max_nodes < UNBOUNDED:
            self._release_store_if_full()
        return True

    def _prepare_learning(self, X, trees, entry, table, units, follow, scaled, store, tail,
                          work, settings, drift_slots=None):
        """The prepared call (``utils.fast_path.FastPathMixin._prepare``) of the
        one-row learning call just made: ``learn(model, X, (keys, weights))`` (a one-row key
        array and weight array), true when it learned the row; false, with nothing
        changed, when the call must take the fast path: the feature range or the
        sample store was replaced, the units have work pending, or the kernel refused
        the row (the store full among others). A store's arrays are replaced only
        through setters that give a new stamp, which the prepared call checks (and
        then is not run). With drift adaptation, the compiled
        call stores the row and extends no tree, and ``drift_slots``
        (``drift.prepare_point_learning``) learns it in the slots."""
        addresses, sizes = table.addresses, table.sizes
        feature_range = self.__dict__["_feature_range"]
        store_X, store_keys, store_stats = store.X, store.keys, store.stats
        ids, bounded = tail[2], settings[4] < UNBOUNDED  # max_nodes

        def learn(model, state, X, data):
            if (state["_feature_range"] is not feature_range or state["_store"] is not store
                    or (follow and state["n_samples_seen_"] >= state["_units_due"])):
                return False
            keys, weights = data
            left_over = entry(addresses, sizes, X, units, follow, scaled, keys, weights,
                              _NO_TARGETS, store_X, store_keys, store_stats, store.n,
                              feature_range, *tail)
            if left_over < 0:
                return False
            store.n += 1
            if drift_slots is not None:  # the call stored the row, extended no tree
                drift_slots(model)
                return True
            state["n_samples_seen_"] += 1  # not a parameter: no __setattr__
            if left_over:
                model._finish_trees(state["trees_"], store, ids, settings, work, 1)
            if left_over or bounded:
                model._release_store_if_full()
            return True

        return self._prepare(X, trees, units, learn, entry)

    @fast_call
    def _extend_stored(self, ids, settings):
        """Extend every tree with the points ``ids``, just added to the store (the
        full path's small batches), in the fast path's compiled call over all trees
        (no new row: ``_extend_in_threads``), the trees it leaves finished tree by
        tree. The same kernel as ``_learn_tree`` for each tree, so the same model;
        one compiled call instead of a Python call per tree. Returns True, or None
        when the scratch state is in use or the trees cannot share a table (the
        caller then goes tree by tree)."""
        trees = self.trees_
        store = self._store
        for tree in trees:  # as _learn_tree does first (nothing when they have room)
            tree.ensure_sample_capacity(store.X.shape[0])
        table = self._fast_table()
        if table is None:
            return None
        work = self._fast_extend_work(table, trees, store.X.shape[1])
        n_threads = fast_path_threads(self.n_jobs, ids.shape[0], len(trees))
        if self._extend_in_threads(table, store, ids, work, settings, n_threads):
            self._finish_trees(trees, store, ids, settings, work, n_threads)
        return True

    def _fast_extend_work(self, table, trees, n_features):
        """The fast path's work arrays (``_extend_work``), kept in the scratch state
        and made again when the trees outgrow them."""
        work = self._fast_scratch.work.get("extend")
        if (work is None or work[0].shape[0] != n_features or work[3].shape[0] != len(trees)
                or work[1].shape[0] < table.largest):  # trees re-sampled larger
            work = self._fast_scratch.work["extend"] = _extend_work(n_features, trees)
        return work

    def _finish_trees(self, trees, store, ids, settings, work, n_threads):
        """Finish, tree by tree, the trees that the compiled call left to Python
        (``stops`` and ``leaves`` in ``work``: the first point not learned and a
        paused leaf to re-sample), in ``n_threads`` threads."""
        stops, leaves = work[3], work[4]
        n = ids.shape[0]
        todo = [t for t in range(len(trees)) if stops[t] < n or leaves[t] >= 0]
        capacities = [trees[t].capacity for t in todo]
        run_each(lambda t: _learn_tree(trees[t], store, ids, settings, int(stops[t]),
                                       int(leaves[t])), todo, n_threads)
        if any(trees[t].capacity != c for t, c in zip(todo, capacities)):
            grow_together(trees, settings[4])  # max_nodes
        if work[1].shape[0] < max(t.capacity for t in trees):
            self._fast_scratch.work["extend"] = _extend_work(store.X.shape[1], trees)

    def _extend_in_threads(self, table, store, ids, work, settings, n_threads):
        """Extend every tree of the fast path's ``table`` with the stored points
        ``ids``, the trees split in ``n_threads`` contiguous parts run at once
        (``utils.parallel.run_split``), each with work space of its own: the same
        kernel as one thread, tree by tree, so the model is the same bit for bit.
        Returns the number of trees left to Python, as ``learn_forest_rows``."""
        lifetime, pause_pure, mss, bootstrap, max_nodes, one_hot = settings
        excess, path, pending, stops, leaves, _, starts, regrow = work
        spaces = self._fast_scratch.work.get("extend_threads")
        if (spaces is None or len(spaces) < n_threads or spaces[0][0] is not excess
                or spaces[0][1] is not path):
            spaces = self._fast_scratch.work["extend_threads"] = [(excess, path, pending)] + [
                (np.empty_like(excess), np.empty_like(path), np.full(1, -1, dtype=np.int64))
                for _ in range(n_threads - 1)]
        no_rows = np.empty((0, store.X.shape[1]))

        def extend(a, b, k):
            return learn_forest_rows(
                table.addresses[a:b], table.sizes[a:b], no_rows, NO_UNITS, False, no_rows,
                _NO_KEYS, _NO_TARGETS, _NO_TARGETS, store.X, store.keys, store.stats, store.n,
                NO_RANGE, _MAX_SCALED_TARGET, True, ids, starts[a:b], regrow[a:b],
                store.stats.shape[1], bootstrap, lifetime, pause_pure, mss, max_nodes, one_hot,
                *spaces[k], stops[a:b], leaves[a:b])

        return run_split(extend, table.addresses.shape[0], n_threads)

    def _learning_settings(self):
        """``(lifetime, pause_pure, min_samples_split, bootstrap, max_nodes, one_hot)``
        as the kernels take them."""
        return (float(self.lifetime), bool(self._pause_pure), int(self.min_samples_split),
                self._bootstrap(), self._max_nodes_value(), bool(self._one_hot_stats))

    def _remember_fast_state(self):
        super()._remember_fast_state()
        self._fast_args = self._learning_settings()

    def _predict_work(self, n_features, n_outputs, fresh=False):
        """Work arrays of the prediction kernels, sized for the largest tree and half
        more (``fresh``: made again, after a kernel found a tree too large for them)."""
        cached = self._fast_scratch.work.get("predict")
        if fresh or cached is None or cached[0] != (n_features, n_outputs):
            capacity = max(t.capacity for t in self.trees_) + 1
            n = capacity + capacity // 2
            cached = self._fast_scratch.work["predict"] = (
                (n_features, n_outputs),
                (np.empty(n, dtype=np.int64), np.empty((3, n)),
                 np.empty((3, max(n_outputs, 1))), np.empty(n_features)))
        return cached[1]

    def _max_depth_value(self):
        return UNBOUNDED if self.max_depth is None else int(self.max_depth)

    def apply(self, X):
        """Leaf of every tree that each sample falls into.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to drop down the trees.

        Returns
        -------
        leaves : ndarray of shape (n_samples, n_estimators)
            Node ids (into each tree's arrays) of the leaf cells containing the rows
            (-1 for a tree that has seen no point, possible with ``bootstrap``).
        """
        from ..engine.paths import apply_tree

        X = self._check_predict_input(X)

        def one(tree):
            out = np.full(X.shape[0], -1, dtype=np.int64)
            if tree.n_nodes > 0:
                apply_tree(tree.arrays, X, out)
            return out

        return np.column_stack(map_trees(one, self.trees_, self.n_jobs))

    def _chunks(self, n_rows, n_columns):
        """Row slices such that one buffer per tree stays under ~64 MB."""
        per_row = 8 * max(n_columns, 1) * len(self.trees_)
        step = max(1, min(n_rows, (64 << 20) // per_row))
        return [slice(i, min(i + step, n_rows)) for i in range(0, n_rows, step)]


class BaseMondrianForestClassifier(ForestClassifierMixin, BaseMondrianForest):
    """What the classifiers made of Mondrian trees with class counts share: the
    Mondrian forest classifier and boosting (siblings, each with its own learning
    and prediction).

    Classes are learned as they appear (or declared to the first ``partial_fit``);
    each tree keeps per-node class counts (``node_stats["stats"]``), smoothed with
    the discount ``gamma`` (``discount``, or ``10 * n_features``). Subclasses define
    the predictions (``_predict_proba_fast``, ``_predict_proba_trees``) and may
    redefine ``_learn`` (how the trees learn stored rows) and ``_partial_fit_fast``.
    """

    _pause_pure = True
    _one_hot_stats = True
    _class_counts = "stats"

    # ------------------------------------------------------------------ training
    def fit(self, X, y, sample_weight=None):
        """Train on ``(X, y)`` from scratch, discarding earlier training.

        A Mondrian forest samples its trees in batch on the rows; boosting makes
        one online pass over them, in order.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : array-like of shape (n_samples,)
            Class labels of the rows.
        sample_weight : array-like of shape (n_samples,), default=None
            A weight ``w`` counts as ``w`` copies of the row in the class counts;
            rows of weight zero are not learned, but their labels are classes
            (in ``classes_``, as in scikit-learn).

        Returns
        -------
        self
        """
        return self._fit(X, y, sample_weight)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Extend the forest online with a mini-batch.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows of the mini-batch.
        y : array-like of shape (n_samples,)
            Class labels of the rows.
        classes : array-like, default=None
            All labels the stream will contain. Optional: without it, labels are
            added as they appear; with it, any other label is an error.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each row, as in ``fit`` (``None``: all 1).

        Returns
        -------
        self

        Notes
        -----
        A call of a few rows (``utils.fast_path``) after the first one skips
        scikit-learn's validation when nothing it checks can have changed, and
        extends all trees in one compiled call: same model, same errors.
        """
        if classes is None and self._learn_one_express(X, y, sample_weight):
            return self
        return self._partial_fit(X, y, sample_weight, classes)

    def _start(self, X, y, sample_weight):
        self._start_model(X.shape[1], len(self.classes_))

    def _partial_fit_fast(self, X, y, weights=None):
        """The fast path of ``partial_fit`` (see ``utils.fast_path``; ``weights``
        from ``_fast_weights``, None for ones); False when the call must take the
        full path (nothing has changed then)."""
        if self._learn_one_express(X, y, weights):
            return True
        rows = self._fast_input(X, learning=True)
        if rows is None:
            return False
        keys = self._fast_keys(y, rows[0].shape[0])
        if keys is None:
            return False
        done = self._learn_fast(rows, keys, _NO_TARGETS, weights)
        if done is NEW_UNITS and self._move_units_for_row(rows[0]):
            done = self._learn_fast((rows[0], self._units, True), keys, _NO_TARGETS, weights)
        if done is NEW_UNITS:
            return self._learn_new_units(rows[0], self.classes_[keys], weights)
        return bool(done)

    def _learn_weighted_rows(self, X, y, sample_weight):
        keys = np.searchsorted(self.classes_, y).astype(np.int64)
        point_stats = np.zeros((X.shape[0], len(self.classes_)))
        point_stats[np.arange(X.shape[0]), keys] = sample_weight
        self._learn(X, keys, point_stats)

    def _gamma(self):
        """The smoothing discount ``gamma``: the ``discount`` parameter, or when it
        is None ``10 * n_features`` (the MF paper's), or with drift adaptation the
        drift setting ``discount`` (``drift.DEFAULTS``, which says why)."""
        if self.discount is not None:
            return float(self.discount)
        drift = self.__dict__.get("_drift_state")
        if drift is not None:
            settings = drift.settings  # a model saved before the setting: the default
            return float(settings.get("discount", drift_module().DEFAULTS["discount"]))
        return 10.0 * self.n_features_in_

    def node_posteriors(self, tree_index=0):
        """Smoothed class probabilities ``G_j`` of every node of one tree.

        Parameters
        ----------
        tree_index : int, default=0
            Index of the tree in ``trees_``.

        Returns
        -------
        posterior : ndarray of shape (n_nodes, n_classes)
            Row ``j``: smoothed class probabilities of node ``j`` (columns follow
            ``classes_``).
        """
        check_is_fitted(self, "trees_")
        tree = self.trees_[tree_index]
        counts = tree.node_stats["stats"]
        posterior = np.zeros((tree.n_nodes, counts.shape[1]))
        ikn_posterior(tree.arrays, counts, self._gamma(), posterior)
        return posterior


def _learn_tree(tree, store, ids, settings, position=0, leaf=-1, sizes=None):
    """Teach the stored points ``ids[position:]`` to one tree: sampled in batch if it
    has no node yet, else extended online (after re-sampling the paused ``leaf``, if
    not -1). ``settings``: ``BaseMondrianForest._learning_settings()``; ``sizes``: the
    call's :class:`~mondrianlearn.engine.storage.BatchSizes`, if any."""
    lifetime, pause_pure, mss, bootstrap, max_nodes, one_hot = settings
    tree.ensure_sample_capacity(store.n)
    if tree.n_nodes == 0:
        # The spare room of batch sampling is kept: online learning (partial_fit,
        # trees re-sampled on new units) goes on into it; fit trims at its end.
        _sample_tree_batch(tree, store, ids, lifetime, pause_pure, mss, bootstrap,
                           max_nodes, one_hot, sizes)
    else:
        _extend_tree_online(tree, store, ids, lifetime, pause_pure, mss, bootstrap,
                            max_nodes, one_hot, position, leaf)
    return tree


def _sample_tree_batch(tree, store, ids, lifetime, pause_pure, mss, bootstrap,
                       max_nodes=UNBOUNDED, one_hot=False, sizes=None):
    """Sample a tree from scratch on the points ``ids`` (root is node 0).

    With ``bootstrap``, each point first gets a Poisson(1) multiplicity; the tree is
    sampled on the points drawn at least once (none: the tree stays empty).
    ``sizes`` (:class:`~mondrianlearn.engine.storage.BatchSizes`): how much room the
    tree reserves and grows by, from the trees sampled before it in the same call.
    """
    if bootstrap:
        ids = draw_multiplicities(ids, tree.sample_mult, tree.rng_state)
        if ids.shape[0] == 0:
            return
    if max_nodes < UNBOUNDED and ids.shape[0] > 1:
        # Under a node budget, depth-first sampling would spend the budget on the
        # first blocks; growing point by point (same distribution without a budget)
        # spreads it over the whole tree.
        _sample_tree_batch(tree, store, ids[:1], lifetime, pause_pure, mss, False, max_nodes,
                           one_hot)
        _extend_tree_online(tree, store, ids[1:], lifetime, pause_pure, mss, False, max_nodes,
                            one_hot)
        return
    n = ids.shape[0]
    arrays = tree.arrays
    start_root(arrays)
    indices = ids.copy()
    stack = np.empty((n + 1, 3), dtype=np.int64)
    stack[0] = (0, 0, n)
    size = [1]

    def run_sampler(tree):
        size[0] = sample_tree(tree.arrays, store.X, store.keys, store.stats,
                              tree.node_stats["stats"], tree.sample_next, tree.sample_mult,
                              indices, stack, size[0], lifetime, True, pause_pure, mss,
                              tree.rng_state)
        return size[0]

    def room_needed(tree):
        pending = int(np.sum(stack[:size[0], 2] - stack[:size[0], 1]))
        return sizes.still_needed(pending)

    first = batch_nodes(n) if sizes is None else sizes.first(n)
    measured = sizes is not None and sizes.measured
    if sample_with_growth(tree, run_sampler, first, limit=max_nodes,
                          still_needed=room_needed if measured else None):
        # Node budget reached: pause what is left.
        close_pending_blocks(tree.arrays, store.X, store.keys, tree.sample_next,
                             indices, stack, size[0], lifetime)
        accumulate_new_nodes(tree.arrays, tree.node_stats["stats"], store.stats,
                             tree.sample_next, tree.sample_mult, 0)
    elif sizes is not None:
        sizes.record(tree.n_nodes, n)


def _extend_tree_online(tree, store, ids, lifetime, pause_pure, mss, bootstrap,
                        max_nodes=UNBOUNDED, one_hot=False, position=0, leaf=-1):
    """Extend a tree point by point with ``ids[position:]``, growing storage as
    needed (``leaf``: a paused leaf to re-sample first, or -1).

    The kernel is the fast path's, ``learn_forest_rows``, on a table of this one
    tree and no new row: one compiled kernel learns online (see there).
    """
    n_features = store.X.shape[1]
    no_rows = np.empty((0, n_features))
    excess = np.empty(n_features)
    pending = np.full(1, -1, dtype=np.int64)
    starts, regrow = np.zeros(1, dtype=np.int64), np.full(1, leaf, dtype=np.int64)
    stops, leaves = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)

    def regrowth(tree):  # re-sampling the pending leaf makes two nodes per point
        leaf = int(regrow[0])
        return 0 if leaf < 0 else 2 * int(tree.arrays.n_points[leaf]) + 2

    def run_kernel(tree, position):
        table = one_tree_table(tree, ("stats",))
        starts[0] = position
        left = learn_forest_rows(
            table.addresses, table.sizes, no_rows, NO_UNITS, False, no_rows, _NO_KEYS,
            _NO_TARGETS, _NO_TARGETS, store.X, store.keys, store.stats, store.n, NO_RANGE,
            _MAX_SCALED_TARGET, True, ids, starts, regrow, store.stats.shape[1], bootstrap,
            lifetime, pause_pure, mss, max_nodes, one_hot, excess,
            np.empty(tree.capacity, dtype=np.int64), pending, stops, leaves)
        if left and stops[0] == position and leaves[0] == regrow[0]:
            # learn_rows made the room the kernel checks for: no progress is a bug
            raise RuntimeError("a Mondrian tree could not be extended (internal error)")
        regrow[0] = leaves[0]
        return int(stops[0])

    learn_rows(tree, run_kernel, position, ids.shape[0], limit=max_nodes, pending=regrowth)


def _give_back(store, arrays, trees, links):
    """Put back the store's arrays and the trees' point links that a refused fast-path
    call grew (a refused call leaves the model byte for byte as it was)."""
    store.X, store.keys, store.stats = arrays
    for tree, (sample_next, sample_mult) in zip(trees, links):
        if tree.sample_next is not sample_next:
            tree.sample_next = sample_next
        if tree.sample_mult is not sample_mult:
            tree.sample_mult = sample_mult


def _extend_work(n_features, trees):
    """Work arrays of ``BaseMondrianForest._learn_fast``: ``(excess, path, pending,
    stops, leaves, ids, starts, regrow)``, ``path`` for the largest tree and half
    more; every tree starts at the first point and has no leaf to re-sample."""
    n_trees = len(trees)
    capacity = max(t.capacity for t in trees)
    return (np.empty(n_features), np.empty(capacity + capacity // 2, dtype=np.int64),
            np.full(1, -1, dtype=np.int64), np.empty(n_trees, dtype=np.int64),
            np.empty(n_trees, dtype=np.int64), np.empty(1, dtype=np.int64),
            np.zeros(n_trees, dtype=np.int64), np.full(n_trees, -1, dtype=np.int64))
