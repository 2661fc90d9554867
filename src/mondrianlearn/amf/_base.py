"""Shared machinery of the AMF estimators.

A model is a list of :class:`~mondrianlearn.engine.tree.TreeState` whose
``node_stats`` hold the forecasters and the aggregation log-weights of every node.
Learning runs one compiled loop per tree over the whole batch (in threads when
``n_jobs`` allows); prediction reads the trees without changing them.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions

from ..engine._jit import compiled_entry
from ..engine.layout import RENUMBER_FROM_NODES
from ..engine.storage import learn_rows
from ..engine.tree import ID_DTYPE, TreeState
from ..engine.tree_table import NO_RANGE, one_tree_table
from ..utils.drift_param import DriftMixin, drift_module
from ..utils.estimator import ForestLearnerMixin
from ..utils.fast_path import NEW_UNITS, NO_UNITS, fast_call
from ..utils.feature_scale import rows_in_units, to_units
from ..utils.parallel import (
    fast_path_threads,
    map_trees,
    run_each,
    run_split,
    runs_sequentially,
)
from ._forest_kernels import prediction_work

SCORING_RENAMED = {"paper": "before_update", "onelearn": "count_then_score"}
"""Former values of ``scoring`` (deprecated, accepted with a FutureWarning for one
release) and the value each is now called."""


class BaseAMF(DriftMixin, ForestLearnerMixin, BaseEstimator):
    """Base class: subclasses define the node statistics (``_start``) and the
    learning kernel."""

    _structure_params = ("n_estimators", "feature_scale")
    """Parameters fixed once the forest has started learning (checked by a later
    ``partial_fit``: ``TreeModelMixin._check_structure``). ``bootstrap`` may change:
    AMF draws each row's weight as it learns it."""

    _fast_weighted = True  # sample_weight on the fast path (utils.fast_path)

    _parameter_constraints = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "step": [Interval(Real, 0, None, closed="neither")],
        "use_aggregation": ["boolean"],
        "split_pure": ["boolean"],
        "temporary_extension": ["boolean"],
        "scoring": [StrOptions({"count_then_score", "before_update", *SCORING_RENAMED},
                               deprecated=set(SCORING_RENAMED))],
        **ForestLearnerMixin._forest_constraints,
    }

    _mergeable = True  # independent trees (utils.protocols)

    @classmethod
    def _merge_fitted(cls, forests, same_stream):
        """Merge fitted forests of this class (``forest.merge_forests`` checks them)."""
        from ._merge import merge_amf_forests

        return merge_amf_forests(forests, same_stream)

    def _warn_deprecated_params(self):
        """FutureWarning for a former value of ``scoring`` (called by ``fit`` and
        ``partial_fit``, as scikit-learn warns about deprecated parameter values)."""
        new = SCORING_RENAMED.get(self.scoring)
        if new is not None:
            warnings.warn(
                f"scoring={self.scoring!r} was renamed to scoring={new!r} (what it does, "
                f"not a library's name); the old name will stop working in the next "
                f"release.", FutureWarning, stacklevel=3)

    def _count_first(self):
        """Whether nodes count a point before they are scored on it (``scoring=
        "count_then_score"``, or its former name ``"onelearn"``)."""
        return SCORING_RENAMED.get(self.scoring, self.scoring) == "count_then_score"

    # ------------------------------------------------------------------ learning
    def _start_model(self, n_features, node_stats):
        """Fresh empty trees with their own random streams."""
        self._start_units(n_features)
        self.__dict__.pop("_drift_state", None)  # drift adaptation starts afresh too
        states = self._spawn_tree_states(self.n_estimators)
        self.trees_ = [
            TreeState(n_features, states[t], {k: v.copy() for k, v in node_stats.items()},
                      keep_samples=False)
            for t in range(self.n_estimators)
        ]
        self.n_samples_seen_ = 0
        self._first_states = states  # for _restart_trees

    def _relearns_first_rows(self):
        """Its trees are the ones started from ``_first_states`` (not a merge)."""
        return len(self.__dict__.get("_first_states", ())) == len(self.trees_)

    def _restart_trees(self):
        """Empty trees on the random streams they started from, to learn the first
        rows again in new feature units (``utils.feature_scale``)."""
        # The new trees learn the same rows again: they start with the room the old
        # ones had, instead of growing to it step by step.
        self.trees_ = [
            TreeState(tree.arrays.lower.shape[1], state,
                      {k: np.zeros((16,) + v.shape[1:]) for k, v in tree.node_stats.items()},
                      keep_samples=False, capacity=tree.capacity)
            for tree, state in zip(self.trees_, self._first_states)
        ]
        self.n_samples_seen_ = 0

    def _learn(self, n_rows, run_kernel):
        """Teach ``n_rows`` rows to every tree; ``run_kernel(tree, start)`` learns
        from row ``start`` on and returns the first row it could not learn."""

        def learn_tree(tree):
            return self._learn_tree(tree, n_rows, run_kernel, 0, tree.n_nodes)

        # Trained trees come from the results (with joblib's Dask backend they are
        # trained on workers and come back as new objects).
        self.trees_ = map_trees(learn_tree, self.trees_, self.n_jobs)
        self.n_samples_seen_ += n_rows

    def _table_learner(self, learn_forest, X, data, args):
        """``run(tree, start)`` for ``_learn``: rows ``start:`` of ``X`` (checked, in
        the model's units) learned in one tree by ``learn_forest``, the kernel of
        ``_learn_fast``, on a table of that tree (``data`` and ``args``: its
        arguments after the rows and after the feature range). One learning kernel
        serves both paths, so it is compiled once (see ``_forest_kernels``)."""
        n_features = X.shape[1]
        stats_names = self._fast_stats

        def run(tree, start):
            table = one_tree_table(tree, stats_names)
            n_before = np.empty(1, dtype=np.int64)
            stops = np.empty(1, dtype=np.int64)
            starts = np.full(1, start, dtype=np.int64)
            learn_forest(table.addresses, table.sizes, X, NO_UNITS, False, X, *data, NO_RANGE,
                         *args, np.empty(n_features), np.empty(tree.capacity, dtype=np.int64),
                         _NO_SAMPLES, n_before, stops, starts, True)
            if stops[0] == start < X.shape[0]:
                # _learn_tree made the room the kernel checks for: no progress is a bug
                raise RuntimeError("an AMF tree could not learn a row (internal error)")
            return int(stops[0])

        return run

    def _learn_tree(self, tree, n_rows, run_kernel, position, n_before):
        """Learn rows ``position:`` in one tree, growing its storage as needed
        (``n_before``: its node count when the call started)."""
        # The kernel holds no node id across calls, so growth can also renumber the
        # nodes depth-first (engine.layout).
        learn_rows(tree, run_kernel, position, n_rows, limit=self._max_nodes_value(),
                   renumber=True)
        if 2 * (tree.n_nodes - n_before) >= tree.n_nodes >= RENUMBER_FROM_NODES:
            # The nodes made since the last growth sit at the end of the arrays,
            # out of depth-first order. A call that made at least half of the tree
            # is long beside one copy of it, so it renumbers for the predictions
            # that follow; smaller calls leave it to the next growth.
            tree.renumber()
        return tree

    # ----------------------------------------------------------------- fast path
    @fast_call
    def _learn_fast(self, learn_forest, rows, data):
        """Learn the rows in one compiled call over all trees:
        ``learn_forest(addresses, sizes, X, units, follow, scaled, *data,
        feature_range, *_fast_args, *work)``, ``rows = (X, units, follow)`` from
        ``_fast_input``. The trees it leaves (room to grow, renumbering) are finished
        by the full path's per-tree loop (``_tree_learner(X_in_units, *data)``).
        Returns False, with nothing changed, when the rows are refused, and
        ``NEW_UNITS`` when they are only because they change a feature unit."""
        X, units, follow = rows
        n_rows, n_features = X.shape
        state = self.__dict__
        scaled = self._fast_scaled(n_rows, n_features) if units.shape[1] else X
        if state.get("drift") is not None or state.get("_drift_state") is not None:
            self._adapts_to_drift()  # raises for drift=None set after drift adaptation
            if units.shape[1] and rows_in_units(X, units, follow, self._feature_range, scaled):
                return False
            done = drift_module().learn_fast(self, scaled, data)
            if done and n_rows == 1 and self._prepares_calls:
                state["_fast_scratch"].learn_plan = self._prepare_drift_learning(
                    X, units, follow, scaled, data)
            return done
        trees = state["trees_"]
        scratch = state["_fast_scratch"]
        scratch.learn_plan = None  # made again below if this call may be repeated
        table = self._fast_table()
        if table is None:
            return False
        work = scratch.work.get("learn")
        if work is None or work[0].shape[0] != n_features or work[3].shape[0] != len(trees):
            work = scratch.work["learn"] = _learn_work(n_features, trees)
        n_threads = fast_path_threads(self.n_jobs, n_rows, len(trees))
        if n_threads == 1:
            tail = (state["_feature_range"], *state["_fast_args"], *work, False)
            args = (table.addresses, table.sizes, X, units, follow, scaled, *data, *tail)
            left_over = learn_forest(*args)
            if left_over == 0 and n_rows == 1 and self._prepares_calls:
                scratch.learn_plan = self._prepare_learning(
                    X, trees, compiled_entry(learn_forest, args), table, units, follow,
                    scaled, tail, work)
        else:
            left_over = self._learn_in_threads(learn_forest, table, rows, scaled, data, work,
                                               n_threads)
        if left_over < 0:
            return NEW_UNITS if left_over == -2 else False
        if left_over:
            self._finish_trees(trees, scaled, data, work, n_threads)
        self.__dict__["n_samples_seen_"] += n_rows  # not a parameter: no __setattr__
        return True

    def _finish_trees(self, trees, X, data, work, n_threads):
        """Finish, with the full path's per-tree loop, the trees that the fast path's
        kernel left to Python (room to grow, renumbering: ``work`` holds where each
        stopped); ``X`` are the call's rows in units."""
        n_rows = X.shape[0]
        run_kernel = self._tree_learner(X, *data)
        n_before, stops = work[3], work[4]
        todo = [t for t, tree in enumerate(trees) if stops[t] < n_rows
                or 2 * (tree.n_nodes - n_before[t]) >= tree.n_nodes]
        run_each(lambda t: self._learn_tree(trees[t], n_rows, run_kernel, int(stops[t]),
                                            int(n_before[t])), todo, n_threads)
        if work[1].shape[0] < max(t.capacity for t in trees):
            self._fast_scratch.work["learn"] = _learn_work(X.shape[1], trees)

    def _prepare_learning(self, X, trees, entry, table, units, follow, scaled, tail, work):
        """The prepared call (``utils.fast_path.FastPathMixin._prepare``) of the
        one-row learning call just made: ``learn(model, X, data)`` with ``data`` the kernel's
        arguments after the rows (labels and weights, as ``_learn_fast`` takes them),
        true when it learned the row; false, with nothing changed, when the call must
        take the fast path: the feature range was replaced, the units have work
        pending, or the kernel refused the row (for the fast path to say why, or to
        move the units)."""
        addresses, sizes, feature_range = table.addresses, table.sizes, tail[0]
        in_units = units.shape[1] > 0

        def learn(model, state, X, data):
            if (state["_feature_range"] is not feature_range or "_first_rows" in state
                    or (follow and state["n_samples_seen_"] >= state["_units_due"])):
                return False
            left_over = entry(addresses, sizes, X, units, follow, scaled, *data, *tail)
            if left_over < 0:
                return False
            if left_over:
                model._finish_trees(state["trees_"], scaled if in_units else X, data, work, 1)
            state["n_samples_seen_"] += 1  # not a parameter: no __setattr__
            return True

        return self._prepare(X, trees, units, learn, entry)

    def _prepare_drift_learning(self, X, units, follow, scaled, data):
        """``_prepare_learning`` for a drift-adaptive forest: the prepared call puts
        the row in the model's units as ``_learn_fast`` does, then makes the drift
        loop's compiled call (``drift.prepare_learning``), which goes on in Python
        from any event the loop stops at."""
        learn_slots = drift_module().prepare_learning(self, scaled, data)
        if learn_slots is None:
            return None
        feature_range = self.__dict__["_feature_range"]
        in_units = units.shape[1] > 0

        def learn(model, state, X, data):
            if (state["_feature_range"] is not feature_range or "_first_rows" in state
                    or (follow and state["n_samples_seen_"] >= state["_units_due"])):
                return False
            if in_units:
                if rows_in_units(X, units, follow, feature_range, scaled):
                    return False
                X = scaled
            return learn_slots(model, X, data)

        return self._prepare(X, self.trees_, units, learn, learn_slots.kernel)

    def _prepare_drift_prediction(self, X, rows, units, n_outputs):
        """``_prepare_prediction`` for a drift-adaptive forest (``rows``: ``X`` in the
        model's units): the prepared call puts the row in units, then makes the
        drift prediction's compiled call (``drift.prepare_prediction``)."""
        predict_slots = drift_module().prepare_prediction(self, rows, n_outputs)
        if predict_slots is None:
            return None
        scaled = np.empty_like(rows) if units.shape[1] else None

        def run(model, state, X, _):
            if scaled is not None:
                to_units(X, units, scaled)
                X = scaled
            return predict_slots(model, X)

        return self._prepare(X, self.trees_, units, run, predict_slots.kernel)

    def _learn_in_threads(self, learn_forest, table, rows, scaled, data, work, n_threads):
        """``_learn_fast``'s compiled call with the trees split in ``n_threads``
        contiguous parts run at once (``utils.parallel.run_split``). The rows are
        first checked and put in units by the kernel on no tree (a regressor's
        target moments updated there, once); each part then learns them as checked
        rows, with work space of its own. Tree by tree, the same kernel as one
        thread: the model is the same, bit for bit. Returns what the kernel does."""
        X, units, follow = rows
        args = self._fast_args
        code = learn_forest(table.addresses[:0], table.sizes[:0], X, units, follow, scaled,
                            *data, self._feature_range, *args, *work, False)
        if code < 0:
            return code
        in_units = scaled if units.shape[1] else X
        excess, path, no_samples, n_before, stops, starts = work
        spaces = self._fast_scratch.work.get("learn_threads")
        if (spaces is None or len(spaces) < n_threads or spaces[0][0] is not excess
                or spaces[0][1] is not path):
            spaces = self._fast_scratch.work["learn_threads"] = [(excess, path)] + [
                (np.empty_like(excess), np.empty_like(path)) for _ in range(n_threads - 1)]

        def learn(a, b, k):
            return learn_forest(table.addresses[a:b], table.sizes[a:b], in_units, NO_UNITS,
                                False, in_units, *data, NO_RANGE, *args, *spaces[k], no_samples,
                                n_before[a:b], stops[a:b], starts[a:b], True)

        return run_split(learn, table.addresses.shape[0], n_threads)

    @fast_call
    def _predict_fast(self, predict_forest, X, n_outputs, units=NO_UNITS):
        """``predict_forest(addresses, sizes, X, units, scaled, *_fast_predict_args,
        out, *work)`` over all trees in one compiled call (``X`` in the caller's
        units, read in ``units``: see ``_fast_input``); None when the rows are
        refused (the full path then raises the usual error)."""
        n_rows, n_features = X.shape
        state = self.__dict__
        if state.get("_drift_state") is not None:
            rows = X
            if units.shape[1]:
                rows = np.empty_like(X)
                to_units(X, units, rows)
            out = drift_module().predict_fast(self, rows, n_outputs)
            if out is not None and n_rows == 1 and self._prepares_calls:
                state["_fast_scratch"].predict_plan = self._prepare_drift_prediction(
                    X, rows, units, n_outputs)
            return out
        scratch = state["_fast_scratch"]
        table = self._fast_table()
        if table is None:
            return None
        scaled = self._fast_scaled(n_rows, n_features) if units.shape[1] else X
        out = np.zeros((n_rows, n_outputs) if n_outputs else n_rows)
        work = scratch.work
        for _ in range(2):
            cached = work.get("predict")
            if cached is None or cached[0] != (n_features, n_outputs):
                cached = work["predict"] = (
                    (n_features, n_outputs),
                    prediction_work(_with_headroom(self.trees_), n_features,
                                    max(n_outputs, 1)))
            head, tail = state["_fast_predict_args"], (*cached[1], False)
            status = predict_forest(table.addresses, table.sizes, X, units, scaled, *head,
                                    out, *tail)
            if status == 1 and n_rows == 1 and self._prepares_calls:
                scratch.predict_plan = self._prepare_prediction(
                    X, predict_forest, (table.addresses, table.sizes, units, scaled), head,
                    tail, out.shape)
            if status >= 0:
                return out if status == 1 else None
            del work["predict"]  # a tree outgrew the work arrays
        return None

    def _table_predictor(self, predict_forest, args):
        """``run(tree, X, out)`` for ``_sum_over_trees``: ``predict_forest``, the
        kernel of ``_predict_fast``, on a table of that tree (``args``: its
        arguments between the rows and ``out``), with work arrays for that tree."""
        stats_names = self._fast_stats
        n_outputs = max(args[0], 1)

        def run(tree, X, out):
            table = one_tree_table(tree, stats_names)
            work = prediction_work(tree.capacity, X.shape[1], n_outputs)
            if predict_forest(table.addresses, table.sizes, X, NO_UNITS, X, *args, out,
                              *work, True) != 1:
                raise RuntimeError("an AMF tree could not predict (internal error)")

        return run

    def _trim(self):
        for tree in self.trees_:
            tree.trim(renumber=True)

    # ---------------------------------------------------------------- prediction
    def _sum_over_trees(self, X, shape, run_kernel):
        """``sum`` over trees of ``run_kernel(tree, X_rows, part)``, in row chunks.

        ``run_kernel`` adds each tree's prediction to ``part`` in one addition per
        entry, so adding the trees in place (one thread) or adding per-tree parts in
        tree order (several) gives identical results. With drift adaptation each
        tree reads the rows with its own feature weights (``drift.rows_for``).
        """
        rows_for = drift_module().rows_for
        out = np.zeros((X.shape[0],) + shape)
        for rows in self._row_chunks(X.shape[0], shape):
            Xc = X[rows]
            if runs_sequentially(len(self.trees_), self.n_jobs):
                target = out[rows]  # a view: the kernels add into it
                for tree in self.trees_:
                    run_kernel(tree, rows_for(self, tree, Xc), target)
                continue

            def one(tree):
                part = np.zeros((Xc.shape[0],) + shape)
                run_kernel(tree, rows_for(self, tree, Xc), part)
                return part

            for part in map_trees(one, self.trees_, self.n_jobs):
                out[rows] += part
        return out

    def _row_chunks(self, n_rows, shape):
        """Slices of the rows such that one array of ``shape`` per row and tree holds
        about 64 MiB a chunk (the per-tree parts of ``_sum_over_trees`` and
        ``_per_tree``)."""
        width = int(np.prod(shape)) if shape else 1
        step = max(1, (64 << 20) // (8 * width * max(len(self.trees_), 1)))
        for start in range(0, n_rows, step):
            yield slice(start, min(start + step, n_rows))

    def _per_tree(self, X, shape, run_kernel):
        """``run_kernel(tree, X_rows, part)`` of each tree, apart: an array of shape
        ``(n_trees, n_rows) + shape`` (``part`` zeros, each tree reading the rows
        with its drift feature weights), in row chunks."""
        rows_for = drift_module().rows_for
        trees = list(self.trees_)
        out = np.empty((len(trees), X.shape[0]) + shape)
        for rows in self._row_chunks(X.shape[0], shape):
            Xc = X[rows]

            def one(tree):
                part = np.zeros((Xc.shape[0],) + shape)
                run_kernel(tree, rows_for(self, tree, Xc), part)
                return part

            for t, part in enumerate(map_trees(one, trees, self.n_jobs)):
                out[t, rows] = part
        return out

    def weighted_depth(self, X):
        """Depth of each row's prediction, averaged over the aggregation weights.

        The aggregated prediction of a tree is a mixture of the forecasters of the
        nodes on the row's path (and of the prior, for the new leaf of the temporary
        extension); this is the mean depth (root = 0) under that mixture, averaged
        over the trees. Small values mean that aggregation favours coarse cells.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        depth : ndarray of shape (n_samples,)
            Mean depth of each row's prediction (root = 0).
        """
        from ._path_sums import predict_value_tree

        X = self._check_predict_input(X)
        scale = 1.0 / len(self.trees_)
        extend = bool(self.temporary_extension)

        def run(tree, Xc, part):
            stats = tree.node_stats
            depths = np.empty(max(tree.n_nodes, 1))  # work space
            predict_value_tree(tree.arrays, Xc, depths, 0.0, stats["log_weight"],
                               stats["log_weight_tree"], True, extend, depths,
                               scale, part)

        return self._sum_over_trees(X, (), run)


def _with_headroom(trees):
    """Nodes to size work arrays for: the largest tree's capacity and half more, so
    that they are not made again each time a tree grows (``engine.storage``)."""
    capacity = max(t.capacity for t in trees)
    return capacity + capacity // 2


def _learn_work(n_features, trees):
    """Work arrays of the learning kernels of ``_learn_fast``: ``(excess, path,
    no_samples, n_before, stops, starts)``; every tree starts at the first row."""
    n_trees = len(trees)
    return (np.empty(n_features), np.empty(_with_headroom(trees), dtype=np.int64),
            _NO_SAMPLES, np.empty(n_trees, dtype=np.int64),
            np.empty(n_trees, dtype=np.int64), np.zeros(n_trees, dtype=np.int64))


_NO_SAMPLES = np.empty(0, dtype=ID_DTYPE)
"""``no_samples`` of the learning kernels: AMF leaves keep no point ids."""
