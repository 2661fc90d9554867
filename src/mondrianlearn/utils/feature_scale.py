"""Feature units: every feature is divided by a scale before the trees see it.

A Mondrian cut picks its dimension with probability proportional to the side of the
box along it, so the trees depend on the units of the features: a feature measured
in metres instead of kilometres is cut a thousand times more often. The estimators'
``feature_scale`` parameter removes that dependence. Rows are divided by the scale
at the boundary, right after validation (``utils.validation``) or in the fast path
(``utils.fast_path``), so the trees, the sample store and the running range of the
features (``_feature_range``) hold scaled values; whatever shows boxes or
thresholds to users maps them back (:func:`raw_coordinates`).

``feature_scale="range"`` measures each feature in a *unit* that follows its range
over the rows learned so far: the smallest power of two at least that range (1 for
a feature constant so far). Scaled, every feature spans more than half a unit and at
most one, at the root of every tree. A row that widens a feature's range past its
unit doubles the unit (as many times as needed) before the row is learned; the model
then moves to the new units, and learning goes on:

- AMF (its trees store no points): while it holds fewer than
  ``RESAMPLE_FREELY_BELOW`` rows, it keeps a copy of them, and new units restart its
  trees, empty, on the random streams they started from, and learn the kept rows
  again in the new units before the next row: every feature then has the weight of
  its range over these rows from the start. Once it holds that many rows it drops
  the copy, and new units rescale the trees in place, exactly (a multiplication by
  a power of two): boxes, thresholds and the running range of that feature are
  divided by the factor; the partition and every statistic stay as they are, only
  the rates of later cuts change. (A model that learned rows it did not keep, a
  merge of forests, rescales in place from then on.) Where units change depends on
  the rows only, not on the batches, so ``fit`` equals ``partial_fit`` over any
  mini-batches, bit for bit. Past its first rows, the model is the AMF of a
  Mondrian process whose rate along each feature is one over its unit at the time:
  the partition at any time depends on past rows only, and the aggregation over its
  prunings is exact as before, so AMF stays an online learner with the same
  guarantees given the partition.
- Mondrian forests (which store their points): while a forest holds fewer than
  ``RESAMPLE_FREELY_BELOW`` rows, the trees are sampled afresh, in batch, on the
  stored points in the new units, then extended with the new rows. By
  projectivity the forest then has exactly the law of a forest sampled in batch on
  all rows seen, in units that depend only on their range (not on their order or
  batches): ``partial_fit`` has the law of ``fit`` on the same rows, and so has a
  forest whose units stay as they are from then on (a feature of fixed range). A
  unit changes only when a range doubles: at most ``log2`` (final range / first
  non-zero range) times per feature, mostly early in a stream, but features with
  heavy tails or a trend keep reaching new powers of two as their extremes arrive.
  Past its first rows, new units therefore rescale the trees in place, as AMF's
  are: exactly, at a cost in proportion to the nodes of the feature that moved,
  not to a new sampling of every tree on every point (which made one call of one
  row take seconds on a long stream, see ``RESAMPLE_FREELY_BELOW``). The forest is
  then the Mondrian forest of a process whose rate along each feature is one over
  its unit at the time, extended online as always; where units change still
  depends on the rows only, so ``partial_fit`` over any mini-batches equals
  learning the rows one by one, bit for bit. Under a node budget (``max_nodes``),
  where trees grow point by point (in ``fit`` too), they are only rescaled in
  place, so that ``fit`` still equals ``partial_fit`` over any mini-batches.

``feature_scale=None`` leaves the features as they are (scales of 1); an array gives
fixed scales (rows divided by it, nothing rescaled later).

Whatever the scales, the trees also see every feature relative to an *origin*: its
value in the first row (of positive weight) that the model learned, fixed from then
on. The trees hold ``(x - origin) / scale``. Boxes are stored in float32
(``engine.boxes``), whose precision is relative to the magnitude of the values:
without the origin, a feature such as a time in epoch seconds (about ``1.7e9``)
would be known to within minutes, whatever its range. Relative to the origin, it is
known to within a few ten-millionths of its range. The Mondrian process is
translation invariant, so the origin changes the law of nothing; a unit change
leaves it where it is (rescaling stays exact). Features first seen later (river)
get their first value as their origin.

``feature_scale="supervised"`` gives fixed scales learned from the labels of the
first batch the model learns (the rows of ``fit``, or of the first ``partial_fit``;
at least ``SUPERVISED_MIN_ROWS`` of positive weight): each feature's range over those
rows divided by a weight, its impurity importance in ``ExtraTrees(SUPERVISED_TREES)``
fitted on them over the largest importance, floored at ``SUPERVISED_FLOOR``
(:func:`supervised_scales`). A Mondrian cut then picks a feature with probability
proportional to its weight times its side measured in its range, so the forest
spends its cuts on the features that predict the labels, and few on the others. The
scales are then held fixed: a Mondrian forest's ``partial_fit`` keeps the law of
``fit`` on the same rows with those scales. A model that learns one row at a time
(the river adapters) cannot learn them: its first batch is too small. On raw
features of 15 shared datasets, with 10 trees
(``benchmarks/results/bench_supervised_rates.md``), this weighting learned on 2,000
rows improved the
test accuracy or RMSE of Mondrian forests on 13 sets and of AMF on 12, and made it
worse by more than half a point (or per cent of RMSE) on none (dna: 0.68 to 0.90,
RandomForest 0.93); the option itself, learning on all training rows, lost 0.6
points on satimage for Mondrian forests, and for AMF 0.6 points on satimage, 0.5 on
Elec2 and 1.5% of RMSE on airfoil. Mutual information instead of importances failed
on kin40k (RMSE up by half); squared weights were worse on airfoil.
"""

import math

import numpy as np

from ..engine._jit import kernel, shared_kernel
from ..engine.boxes import round_down, round_up

MIN_EXPONENT = -1000
"""Units are at least ``2 ** MIN_EXPONENT`` (their inverses stay finite)."""

MAX_EXPONENT = 1023
"""Units are at most ``2 ** MAX_EXPONENT``, the largest finite power of two."""

RESAMPLE_FREELY_BELOW = 256
"""While a model holds fewer rows, new units re-learn all of them: a Mondrian forest
re-samples its trees at once, AMF learns its rows again from its first random
states (it keeps them until then). Every feature then has the weight of its range
over these rows from the start, instead of that of the first few rows: in raw
units, letter, satimage and kin40k are already scaled, and AMF learning one row at
a time lost up to 0.4 points of accuracy (0.007 of normalised RMSE) to raw units
when it rescaled its first trees in place, none when it learns them again.

Past these rows, new units rescale the trees in place, for both. A Mondrian forest
used to re-sample its trees on all its stored points later too, each time its rows
had grown by a quarter: a cost in proportion to the rows held (an online call of
one row could take seconds on a long stream), which bought no accuracy. Learning
one row at a time, 10 trees, mean of seeds 0 and 1 (an ad-hoc run; raw features,
the shared datasets shuffled, first 20,000 rows), learning time per row and
progressive accuracy, late re-sampling against rescaling in place: Elec2 (45,312
rows, in time order) 33.2 against 13.1 µs, 0.833 against 0.841; spambase 130
against 68 µs, 0.919 against 0.916; bank 23.1 against 19.1 µs, 0.876 against
0.877; adult 37.0 against 35.5 µs, 0.804 against 0.805; electricity 16.9 against
15.6 µs, 0.772 against 0.793. In mini-batches of 100
(``benchmarks/results/bench_feature_scale.md``) usps, whose 256 pixels reach their
extremes late, lost 0.8 points (0.887 to 0.879) and Elec2 gained 1.0."""

NOT_DUE = 2**62
"""``_units_due`` when nothing is pending: rows learned from which learning must go
through ``_learn_in_units`` (0 while AMF keeps its first rows to learn them
again)."""

SUPERVISED_MIN_ROWS = 20
"""``feature_scale="supervised"``: rows of positive weight the first batch must hold."""

SUPERVISED_PILOT = 2000
"""``feature_scale="supervised"``: the ExtraTrees learn on at most this many rows of
the first batch, drawn at random (the range is that of all its rows)."""

SUPERVISED_TREES = 50
"""``feature_scale="supervised"``: trees of the ExtraTrees whose importances weigh the
features."""

SUPERVISED_FLOOR = 0.01
"""``feature_scale="supervised"``: the smallest weight, relative to the largest (a
feature the pilot found useless is still cut, a hundred times less often)."""

MAGNITUDE_BITS = 900
"""A unit is at least ``2 ** -MAGNITUDE_BITS`` times the largest magnitude of its
feature's range, so that scaled values stay far below overflow."""


# ------------------------------------------------------------------------ units
def units_of_range(low, high):
    """Unit of each feature for the range ``[low, high]`` (elementwise).

    The smallest power of two at least ``high - low`` (and at least
    ``2 ** -MAGNITUDE_BITS`` times the largest magnitude in the range), clipped to
    ``[2 ** MIN_EXPONENT, 2 ** MAX_EXPONENT]``; 1 where the range is empty
    (``high == low``), the unit of a feature constant so far; infinity where the
    width of the range overflows (such rows are refused, ``check_extent``).

    Parameters
    ----------
    low, high : array-like of the same shape
        Lower and upper ends of the ranges, ``low <= high``.

    Returns
    -------
    units : ndarray of that shape
    """
    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        spread = high - low
        floor = np.ldexp(np.maximum(np.abs(low), np.abs(high)), -MAGNITUDE_BITS)
    wide = np.maximum(np.where(spread > 0, spread, 1.0), floor)
    mantissa, exponent = np.frexp(wide)
    exponent = np.clip(exponent - (mantissa == 0.5), MIN_EXPONENT, MAX_EXPONENT)
    units = np.where(np.isfinite(wide), np.ldexp(1.0, exponent), np.inf)
    return np.where(spread > 0, units, 1.0)


def supervised_scales(X, y, regression, sample_weight=None, random_state=None):
    """Fixed scales learned from labelled rows: ``range / weight`` per feature.

    The weight of a feature is its impurity importance in an ExtraTrees of
    ``SUPERVISED_TREES`` trees (``max_features="sqrt"``, or a third of the features
    for regression) fitted on the rows (at most ``SUPERVISED_PILOT`` of them, drawn
    at random), over the largest importance, and at least
    ``SUPERVISED_FLOOR`` (1 for every feature when no tree splits); its range over
    the rows is 1 where it is 0. Dividing the features by these scales makes a
    Mondrian cut pick a feature at a rate proportional to its weight per unit of
    its range.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Rows, finite.
    y : ndarray of shape (n_samples,)
        Their labels (classification) or targets (regression).
    regression : bool
        Whether ``y`` holds targets rather than labels.
    sample_weight : ndarray of shape (n_samples,), default=None
        Weights of the rows for the ExtraTrees; rows of weight 0 are left out.
    random_state : int, RandomState instance or None, default=None
        Seed of the draw of the rows and of the ExtraTrees.

    Returns
    -------
    scales : ndarray of shape (n_features,)
        Within ``[2 ** MIN_EXPONENT, 2 ** MAX_EXPONENT]``, so that their inverses
        are finite too; a range is taken as at least ``2 ** -MAGNITUDE_BITS`` times
        its feature's largest magnitude, as by :func:`units_of_range`.
    """
    from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor
    from sklearn.utils import check_random_state

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if sample_weight is not None:
        keep = np.asarray(sample_weight) > 0
        X, y, sample_weight = X[keep], y[keep], np.asarray(sample_weight)[keep]
    with np.errstate(over="ignore"):
        spread = X.max(axis=0) - X.min(axis=0)
    magnitude = np.max(np.abs(X), axis=0) if X.shape[0] else np.zeros(X.shape[1])
    span = np.where((spread > 0) & np.isfinite(spread), spread, 1.0)
    # as units_of_range: not below 2**-MAGNITUDE_BITS of the values' magnitude, and
    # within [2**MIN_EXPONENT, 2**MAX_EXPONENT] once divided by a weight, so that
    # every scale and its inverse are finite (ranges of subnormal numbers, of 1e300)
    span = np.maximum(span, np.ldexp(magnitude, -MAGNITUDE_BITS))
    # ExtraTrees' importances do not depend on each feature's unit (a cut is drawn
    # uniformly between the extremes of its node), and scikit-learn's trees read
    # float32: the pilot learns each feature divided by its largest magnitude
    X = X / np.where(magnitude > 0, magnitude, 1.0)
    random_state = check_random_state(random_state)
    if X.shape[0] > SUPERVISED_PILOT:
        rows = np.sort(random_state.choice(X.shape[0], SUPERVISED_PILOT, replace=False))
        X, y = X[rows], y[rows]
        sample_weight = None if sample_weight is None else sample_weight[rows]
    if regression:
        # Importances do not depend on the unit of the target, but scikit-learn's
        # trees do not split a node whose impurity is below about 1e-16: targets of
        # a standard deviation under 1e-8 would get no split, hence no weights.
        y = np.asarray(y, dtype=np.float64)
        spread = np.std(y)
        if spread > 0 and np.isfinite(spread):
            y = (y - np.mean(y)) / spread
    cls = ExtraTreesRegressor if regression else ExtraTreesClassifier
    trees = cls(n_estimators=SUPERVISED_TREES, max_features=1 / 3 if regression else "sqrt",
                random_state=random_state, n_jobs=1)
    importance = trees.fit(X, y, sample_weight=sample_weight).feature_importances_
    importance = np.where(np.isfinite(importance), np.maximum(importance, 0.0), 0.0)
    top = importance.max()
    weight = np.maximum(importance / top, SUPERVISED_FLOOR) if top > 0 else 1.0
    return np.clip(span / weight, np.ldexp(1.0, MIN_EXPONENT), np.ldexp(1.0, MAX_EXPONENT))


@kernel
def _unit(low, high):
    """``units_of_range`` of one feature (compiled)."""
    spread = high - low
    if not spread > 0.0:
        return 1.0
    floor = math.ldexp(max(abs(low), abs(high)), -MAGNITUDE_BITS)
    wide = max(spread, floor)
    if not np.isfinite(wide):
        return np.inf  # a range that overflows: refused by the general path
    mantissa, exponent = math.frexp(wide)
    if mantissa == 0.5:
        exponent -= 1
    exponent = min(max(exponent, MIN_EXPONENT), MAX_EXPONENT)
    return math.ldexp(1.0, exponent)


@shared_kernel
def scale_rows(X, units, feature_range, out):
    """Rows to learn, in units: ``out = (X - units[2]) * units[1]`` if they change no
    unit.

    ``units``: rows (unit, 1 / unit, origin); ``feature_range``: the model's running
    range (rows low, high), in units, only read. Returns 0 on success, 1 when a value is
    not finite, 2 when a row widens a feature's range past its unit (the caller
    then takes the general path, which rescales the model first).
    """
    n, d = X.shape
    for j in range(d):
        unit = units[0, j]
        inverse = units[1, j]
        origin = units[2, j]
        low = feature_range[0, j]
        high = feature_range[1, j]
        for i in range(n):
            v = X[i, j]
            if not np.isfinite(v):
                return 1
            s = (v - origin) * inverse
            out[i, j] = s
            if s < low or s > high:
                low = min(low, s)
                high = max(high, s)
                if _unit(low * unit, high * unit) != unit:
                    return 2
    return 0


@shared_kernel
def to_units(X, units, out):
    """``out = (X - units[2]) * units[1]``: rows in the model's units (prediction,
    fixed scales)."""
    n, d = X.shape
    for i in range(n):
        for j in range(d):
            out[i, j] = (X[i, j] - units[2, j]) * units[1, j]


@kernel
def rows_in_units(X, units, follow, feature_range, scaled):
    """The compiled part of ``FastPathMixin._fast_X`` for a fast-path kernel: put
    ``X`` in units into ``scaled`` (nothing when ``units`` has no column: the rows
    are read as they are). Returns 0; with ``follow``, the code of
    :func:`scale_rows` (1: a value is not finite, 2: a row would change a unit)."""
    if units.shape[1] == 0:
        return 0
    if follow:
        return scale_rows(X, units, feature_range, scaled)
    to_units(X, units, scaled)
    return 0


@kernel
def rescale_boxes(lower, upper, n_boxes, threshold, feature, n_nodes, factors, shifts):
    """Map dimension ``d`` of the first ``n_boxes`` box rows, and the thresholds of
    the cuts along ``d`` of the first ``n_nodes`` nodes, by ``v * factors[d] +
    shifts[d]`` (boxes rounded outward again; the boxes of leaves of one point are
    their points', which the caller moves in the sample store). Exact for the powers
    of two that units change by, with no shift; a shift (a new origin, see
    :class:`FeatureScaleMixin`) rounds thresholds to the nearest float64 and keeps
    every box around its points.

    Only the dimensions that move (a factor other than 1 or a shift) are visited:
    a unit changes for one feature at a time, and a float32 bound times 1 plus 0
    is the same bound. Learning one row at a time with 10 trees (alternating
    ad-hoc runs), visiting every dimension cost spambase (57 features) 88-97 µs a
    row against 73-80 for the Mondrian forest, 77-83 against 64-73 for AMF, and
    Elec2 5-8%."""
    d = lower.shape[1]
    for k in range(d):
        if factors[k] == 1.0 and shifts[k] == 0.0:
            continue
        for j in range(n_boxes):
            lower[j, k] = round_down(lower[j, k] * factors[k] + shifts[k])
            upper[j, k] = round_up(upper[j, k] * factors[k] + shifts[k])
    for j in range(n_nodes):
        f = feature[j]
        if f >= 0:
            threshold[j] = threshold[j] * factors[f] + shifts[f]


def raw_coordinates(lower, upper, threshold, feature, units):
    """Boxes and thresholds of a tree in the units of ``X`` (new arrays): ``units``
    is the model's ``_units`` (rows unit, 1 / unit, origin), or None for a tree
    whose coordinates are those of ``X``."""
    if units is None:
        return lower, upper, threshold
    scale, origin = units[0], units[2]
    where = np.maximum(feature, 0)
    threshold = np.where(feature >= 0, threshold * scale[where] + origin[where], threshold)
    return lower * scale + origin, upper * scale + origin, threshold


def tree_in_raw_units(model, tree):
    """``tree.arrays`` of a tree of ``model``, the nodes' rows only, with boxes (by node:
    ``box_row`` is each node's own id) and thresholds in the units of ``X`` (copies
    of those arrays; the others are views), for plots and views. The rows past the
    nodes are left out: they hold no node (and are not initialised, see
    ``engine.reserved.uninitialized_rows``)."""
    from ..engine.tree import node_boxes

    n = tree.n_nodes
    a = tree.arrays._replace(**{name: array[:n] for name, array
                                in tree.arrays._asdict().items() if name != "meta"})
    store = model.__dict__.get("_store")
    lower, upper = node_boxes(tree.arrays, None if store is None else store.X, n)
    units = model.__dict__.get("_units") if isinstance(model, FeatureScaleMixin) else None
    lower, upper, threshold = raw_coordinates(lower, upper, a.threshold, a.feature, units)
    # boxes by node: every node is its own box row
    return a._replace(lower=lower, upper=upper, threshold=threshold,
                      box_row=np.arange(n, dtype=a.box_row.dtype))


def units_array(scales, origin):
    """``_units`` of :class:`FeatureScaleMixin`: rows (unit, 1 / unit, origin)."""
    scales = np.asarray(scales, dtype=np.float64)
    return np.ascontiguousarray(np.vstack([scales, 1.0 / scales, origin]))


def common_units(models):
    """The units of the union of the models' ranges: what forests fitted apart in
    ``"range"`` units are rescaled to before they are merged (``rescale_to``)."""
    ranges = [m._raw_feature_range() for m in models]
    low = np.min([r[0] for r in ranges], axis=0)
    high = np.max([r[1] for r in ranges], axis=0)
    return units_of_range(low, high)


# ------------------------------------------------------------------------ mixin
class FeatureScaleMixin:
    """Rows in units for the estimators with a ``feature_scale`` parameter.

    State: ``_units`` is None (features used as they are: a model that does not
    start its units, or one saved before origins existed) or an array of rows (unit,
    1 / unit, origin), one column per feature (:func:`units_array`; units of 1 for
    ``feature_scale=None``); ``_units_follow_range`` tells whether units follow the
    range (``"range"``) or are fixed. Trees, the sample store and
    ``_feature_range`` are always in the current units, relative to the origin;
    ``_origin_pending`` marks a model whose origin the first rows it learns set.

    An estimator calls :meth:`_start_units` when it starts a model, learns its
    checked rows with :meth:`_learn_in_units` (which calls its ``_learn_batch(X, y,
    sample_weight)`` on rows in units), and predicts on ``_in_units(X)``
    (``_check_predict_input`` and the fast path do it). A class that re-samples its
    trees on stored points when units change defines ``_resamples_on_new_units()``,
    ``_can_resample()`` and ``_resample_trees()``.
    """

    # ----------------------------------------------------------------- state
    def _feature_scale_setting(self):
        """The ``feature_scale`` parameter; None (features as they are) for a class
        that does not declare it among its parameters."""
        return self.feature_scale if "feature_scale" in self._get_param_names() else None

    def _start_units(self, n_features):
        """Units of a new model, before any row is learned (from ``_start_model``).

        Raises ValueError for fixed scales of the wrong shape or not positive and
        finite.
        """
        setting = self._feature_scale_setting()
        self.__dict__.pop("_units_follow_range", None)
        self.__dict__.pop("_scales_pending", None)
        if setting is None:
            units = np.ones(n_features)
            follow = False
        elif isinstance(setting, str) and setting == "supervised":
            units = np.ones(n_features)  # learned with the first batch
            follow = False
            self._scales_pending = True
        elif isinstance(setting, str):  # "range" (checked by the parameter constraints)
            units = np.ones(n_features)
            follow = True
        else:
            units = np.asarray(setting, dtype=np.float64)
            if units.shape != (n_features,) or not np.all(np.isfinite(units) & (units > 0)):
                raise ValueError(
                    f"feature_scale must be 'range', 'supervised', None or {n_features} "
                    "positive finite "
                    f"scales (one per feature); got an array of shape {units.shape}"
                    + ("." if units.shape != (n_features,) else " with other values."))
            follow = False
        self._units = units_array(units, np.zeros(n_features))
        self._origin_pending = True  # set by the first rows learned (_learn_in_units)
        self._units_follow_range = follow
        self._resampled_at = 0  # rows learned at the last re-sampling (Mondrian forests)
        self._units_due = NOT_DUE
        self.__dict__.pop("_first_rows", None)
        # Rows are recorded in units when they are learned (``_learn_in_units``).
        self.__dict__.pop("_feature_range", None)

    @property
    def feature_scale_(self):
        """Scale of each feature: the trees hold ``(X - origin) / feature_scale_``
        (ones when the features are used as they are; the origin is the first row
        learned, see the module docstring)."""
        units = self.__dict__.get("_units")
        if units is None:
            return np.ones(self.n_features_in_)
        return units[0].copy()

    def _raw_feature_range(self):
        """Running range of the features (rows low, high) in the units of ``X``."""
        known = self._shifted_range()
        units = self.__dict__.get("_units")
        return known if known is None or units is None else known + units[2]

    def _shifted_range(self):
        """``_raw_feature_range()`` relative to the origin."""
        known = self.__dict__.get("_feature_range")
        units = self.__dict__.get("_units")
        if known is None or units is None:
            return known
        return known * units[0]

    def _shifted(self, X):
        """Rows ``X`` (units of ``X``) relative to the origin (float64, new array)."""
        units = self.__dict__.get("_units")
        return np.array(X, dtype=np.float64) if units is None else X - units[2]

    def _start_origin(self, X, sample_weight=None, scales=None):
        """For a model that does not learn through ``_learn_in_units`` (the Mondrian
        kernel's): fixed units, ``scales`` (default 1), and the origin at the first
        row of positive weight of its first checked batch ``X``. Returns ``X`` in
        units; a recorded ``_feature_range`` moves there too."""
        first = 0 if sample_weight is None else int(np.argmax(sample_weight > 0))
        self._units = units_array(np.ones(X.shape[1]) if scales is None else scales, X[first])
        self._units_follow_range = False
        known = self.__dict__.get("_feature_range")
        if known is not None:
            self._feature_range = (known - self._units[2]) * self._units[1]
        return self._in_units(X)

    def _later_rows_in_units(self, X, sample_weight=None):
        """Checked rows of a later batch of such a model, in units; with
        ``sample_weight``, the range of its rows of positive weight is recorded
        (``_feature_range``)."""
        units = self.__dict__.get("_units")
        if units is None:  # a model saved before origins: rows as they are
            return X
        if sample_weight is not None:
            self._record_range((X - units[2])[sample_weight > 0], units)
        return self._in_units(X)

    def _set_units(self, scales):
        """Make ``scales`` the units (the origin stays)."""
        self._units = units_array(scales, self._units[2])

    def _in_feature_units(self):
        """Whether the model divides its features by units (``_units`` is set)."""
        return self.__dict__.get("_units") is not None

    def _raw_range_in_place(self, n_features):
        """The running range of the features (rows low, high), for a caller that
        checks rows itself and widens the range in place (the river adapters), or
        None: no range of ``n_features`` columns yet, or a model in units (which
        records its range, in units, when it learns)."""
        self._own_arrays()  # the caller writes into the range (utils.persistence)
        if self.__dict__.get("_units") is not None:
            return None
        known = self.__dict__.get("_feature_range")
        if (type(known) is not np.ndarray or known.shape != (2, n_features)
                or known.dtype != np.float64 or not known.flags.c_contiguous):
            return None
        if not known.flags.writeable:
            known = self._feature_range = known.copy()
        return known

    def _extend_units(self, values):
        """Unit 1 and origin ``values`` for features first seen now at ``values``
        (``_add_features``): the unit of a feature constant so far; it follows the
        feature's range from its next value. Returns the values of the new features
        in units (0, or ``values`` for a model without units). Rows kept to be
        learned again (relative to the origin) get them too."""
        units = self.__dict__.get("_units")
        if units is None:
            return values
        new = np.ones((3, values.shape[0]))
        new[2] = values
        self._units = np.ascontiguousarray(np.hstack([units, new]))
        kept = self.__dict__.get("_first_rows")
        if kept is not None:
            kept[0][:] = [np.hstack([rows, np.zeros((rows.shape[0], values.shape[0]))])
                          for rows in kept[0]]
        return np.zeros_like(values)

    # -------------------------------------------------------------- rows in
    def _in_units(self, X):
        """Checked rows (C-contiguous float64) in the model's units, in a writable
        array (the compiled fast paths take one array type for rows in units and
        rows they scale themselves). The first kernel call of every full-path
        prediction: a model loaded from read-only memory maps copies its arrays here
        first (``utils.persistence``)."""
        self._own_arrays()
        units = self.__dict__.get("_units")
        if units is None:
            return X if X.flags.writeable else X.copy()
        out = np.empty_like(X)
        to_units(X, units, out)
        return out

    def _finite_in_range(self, X):
        """Whether rows ``X`` (units of ``X``, width checked) are finite and keep the
        total width of the features' range within float64: what the full path
        checks of their values before it learns them."""
        if not np.isfinite(X).all():
            return False
        try:
            self._check_units_range(X)
        except ValueError:
            return False
        return True

    def _check_units_range(self, X):
        """For callers that checked the values of ``X`` but not its range
        (``_partial_fit_validated``): refuse a range that overflows (the model
        records it when it learns the rows). Nothing to do in raw units, where the
        caller recorded the range."""
        if self.__dict__.get("_units") is not None:
            from .validation import check_extent

            check_extent(self, X, reset=False)

    def _learn_in_units(self, X, y, sample_weight):
        """Learn checked rows (raw units) with ``_learn_batch``, in units.

        With units that follow the range, a row is learned in the units of the
        range of the rows up to and including it: the rows are cut where a unit
        changes, and the model is moved to the new units before each piece
        (``_change_units``). A first batch of a model that re-samples
        (``_resamples_on_new_units()``: sampled in batch, in no order) is learned in
        the units of all its rows; later, new units re-sample its trees while it
        holds fewer than ``RESAMPLE_FREELY_BELOW`` rows, and rescale them in place
        after that. ``_feature_range`` then covers the rows learned.
        """
        units = self.__dict__.get("_units")
        if units is None:
            return self._learn_batch(X, y, sample_weight)
        if self.__dict__.pop("_origin_pending", False):
            units[2] = X[np.argmax(sample_weight > 0)]
        X = X - units[2]
        if not self._units_follow_range:
            if self.__dict__.get("_scales_pending"):
                units = self._learn_scales(X, y, sample_weight)
            self._record_range(X[sample_weight > 0], units)
            return self._learn_batch(X * units[1], y, sample_weight)
        keep = sample_weight > 0
        if not keep.all():
            X, y, sample_weight = X[keep], np.asarray(y)[keep], sample_weight[keep]
        if X.shape[0] == 0:
            return None
        low = np.minimum.accumulate(X, axis=0)
        high = np.maximum.accumulate(X, axis=0)
        known = self._shifted_range()
        if known is not None and known.shape[1] == X.shape[1]:
            np.minimum(low, known[0], out=low)
            np.maximum(high, known[1], out=high)
        n = X.shape[0]
        resample = self._resamples_on_new_units()
        if resample and not self.n_samples_seen_:
            self._change_units(units_of_range(low[-1], high[-1]))  # nothing to rescale yet
            self._feature_range = np.vstack([low[-1], high[-1]]) * self._units[1]
            self._learn_batch(X * self._units[1], y, sample_weight)
            self._resampled_at = self.n_samples_seen_
            return None
        per_row = units_of_range(low, high)
        starts = np.flatnonzero(np.any(per_row[1:] != per_row[:-1], axis=1)) + 1
        if not resample:
            return self._learn_pieces(X, y, sample_weight, low, high, per_row, starts)
        resample = self._can_resample()
        first_seen = self.n_samples_seen_
        position = 0
        while position < n:
            seen = first_seen + position
            new = per_row[position]
            if not np.array_equal(new, self._units[0]):
                now = resample and seen < RESAMPLE_FREELY_BELOW
                self._change_units(new, resample=now)
                if now:
                    self._resampled_at = seen
            end = n
            later = np.searchsorted(starts, position, side="right")
            if later < starts.shape[0]:
                end = int(starts[later])
            inverse = self._units[1]
            self._feature_range = np.vstack([low[end - 1], high[end - 1]]) * inverse
            self._learn_batch(X[position:end] * inverse, y[position:end],
                              sample_weight[position:end])
            position = end
        return None

    def _move_units_for_row(self, X):
        """Move the model to the units of its range widened by the one row ``X``
        (units of ``X``, refused by a fast-path kernel only because it changes a
        unit), as ``_learn_in_units`` does before it learns that row, when the move
        rescales the trees in place (AMF past its first rows; a Mondrian forest
        between re-samplings). Returns True then: the fast path's kernel learns the
        row in the new units, which completes what ``_learn_in_units`` does (no
        per-tree call of the full path for a unit change). Returns False, with
        nothing changed, when the move re-learns or re-samples, or the row is
        refused (a value not finite, a range that overflows): the full path's
        work."""
        state = self.__dict__
        if (X.shape[0] != 1 or not state.get("_units_follow_range")
                or "_first_rows" in state or "_origin_pending" in state
                or not state.get("n_samples_seen_")
                # drift adaptation moves its background trees in its full path
                or state.get("drift") is not None or state.get("_drift_state") is not None):
            return False
        units = state.get("_units")
        known = self._shifted_range()
        if (units is None or known is None or known.shape[1] != X.shape[1]
                or not self._finite_in_range(X)):
            return False
        row = X[0] - units[2]
        new = units_of_range(np.minimum(known[0], row), np.maximum(known[1], row))
        if np.array_equal(new, units[0]):
            return False
        resample = self._resamples_on_new_units() and self._can_resample()
        if resample and self.n_samples_seen_ < RESAMPLE_FREELY_BELOW:
            return False  # new units re-sample the trees now
        self._change_units(new)
        return True

    def _learn_scales(self, X, y, sample_weight):
        """``feature_scale="supervised"``: fixed scales from the first batch
        (:func:`supervised_scales`); returns the new ``_units``. Raises ValueError,
        the model unchanged, for a batch of fewer than ``SUPERVISED_MIN_ROWS`` rows
        of positive weight."""
        n = int(np.count_nonzero(sample_weight > 0))
        if n < SUPERVISED_MIN_ROWS:
            raise ValueError(
                f"feature_scale='supervised' learns its scales from the first batch, "
                f"which must hold at least {SUPERVISED_MIN_ROWS} rows of positive "
                f"weight; got {n}. Learn a larger first batch.")
        from sklearn.base import is_regressor

        scales = supervised_scales(X, y, is_regressor(self), sample_weight,
                                   getattr(self, "random_state", None))
        self._set_units(scales)
        del self._scales_pending
        return self._units

    def _learn_pieces(self, X, y, sample_weight, low, high, per_row, starts):
        """``_learn_in_units`` without re-sampling: pieces between unit changes.

        While the model holds fewer than ``RESAMPLE_FREELY_BELOW`` rows (and
        ``_relearns_first_rows()``), it keeps them (``_first_rows``) and new units
        restart its trees and learn them again; later, new units rescale the trees
        in place.
        """
        if not self.n_samples_seen_ and self._relearns_first_rows():
            self._first_rows = ([], [], [])
            self._units_due = 0  # learning takes this path until the rows are kept
        kept = self.__dict__.get("_first_rows")
        if kept is not None and (sum(map(len, kept[1])) != self.n_samples_seen_
                                 or not self._relearns_first_rows()):
            # The model learned rows it did not keep (a merge of forests): it can no
            # longer learn them again, and rescales in place from now on.
            del self._first_rows
            self._units_due = NOT_DUE
        n = X.shape[0]
        bounds = [0, *starts.tolist(), n]
        # Kept rows are learned again after a restart only when the trees are next
        # used: a piece followed, in this call, by another restart while every row
        # is still kept would be learned and then thrown away (a batch such as
        # ``fit``'s meets many unit changes in its first rows). Drift adaptation
        # keeps state beside the trees that learning changes: it learns each piece.
        defer = (self.__dict__.get("drift") is None
                 and self.__dict__.get("_drift_state") is None)
        relearn = False  # trees restarted, the kept rows not yet learned again
        for a, b in zip(bounds[:-1], bounds[1:]):
            new = per_row[a]
            kept = self.__dict__.get("_first_rows")
            if not np.array_equal(new, self._units[0]):
                if kept is None:
                    self._change_units(new)
                else:
                    self._restart_trees()
                    self._set_units(new)
                    relearn = bool(kept[0])
            inverse = self._units[1]
            self._feature_range = np.vstack([low[b - 1], high[b - 1]]) * inverse
            room = 0 if kept is None else RESAMPLE_FREELY_BELOW - sum(map(len, kept[1]))
            if defer and kept is not None and b < n and b - a < room:
                # the next piece restarts the trees and learns these rows with the kept ones
                for part, rows in zip(kept, (X[a:b], y[a:b], sample_weight[a:b])):
                    part.append(np.array(rows))
                continue
            if relearn:
                self._learn_batch(np.vstack(kept[0]) * inverse, np.concatenate(kept[1]),
                                  np.concatenate(kept[2]))
                relearn = False
            self._learn_batch(X[a:b] * inverse, y[a:b], sample_weight[a:b])
            if kept is not None:
                for part, rows in zip(kept, (X[a:b], y[a:b], sample_weight[a:b])):
                    part.append(np.array(rows[:room]))
                if b - a >= room:
                    del self._first_rows  # the model holds enough rows: rescale in place
                    self._units_due = NOT_DUE
        return None

    def _keep_first_rows(self, X, y, weights=None):
        """After the fast path learned ``X`` (units of ``X``) and ``y`` with
        ``weights`` (None: 1): keep them as ``_learn_pieces`` keeps the rows it
        learns (relative to the origin), while the model keeps its first rows."""
        kept = self.__dict__.get("_first_rows")
        if kept is None:
            return
        room = RESAMPLE_FREELY_BELOW - sum(map(len, kept[1]))
        n = X.shape[0]
        weights = np.ones(n) if weights is None else weights
        for part, rows in zip(kept, (self._shifted(X), np.asarray(y), weights)):
            part.append(np.array(rows[:room]))
        if n >= room:
            del self._first_rows  # the model holds enough rows: rescale in place
            self._units_due = NOT_DUE

    def _relearns_first_rows(self):
        """Whether new units restart the trees and learn the first rows again
        (``_restart_trees()``), while the model holds few rows."""
        return False

    def _record_range(self, X, units):
        """Widen ``_feature_range`` (in ``units``, the model's) by rows ``X`` (units
        of ``X``, relative to the origin).

        The rows' extremes are put in units and compared there, as the fast paths
        widen the range of rows in units (a product by a positive inverse keeps the
        order, so the extremes are those of the rows in units, bit for bit): the
        recorded range is not taken back to the units of ``X`` and out again, a
        round trip that is exact for units that are powers of two, not for
        supervised scales."""
        if X.shape[0] == 0:
            return
        low, high = X.min(axis=0) * units[1], X.max(axis=0) * units[1]
        known = self.__dict__.get("_feature_range")
        if known is not None and known.shape[1] == X.shape[1]:
            low, high = np.minimum(low, known[0]), np.maximum(high, known[1])
        self._feature_range = np.vstack([low, high])

    # ------------------------------------------------------------ rescaling
    def _change_units(self, new_units, resample=False, origin=None):
        """Move the model to ``new_units`` (and ``origin``, if given): rescale its
        coordinates in place, or (``resample``) rescale the stored points and sample
        the trees afresh."""
        new_units = np.asarray(new_units, dtype=np.float64)
        old = self._units
        origin = old[2] if origin is None else np.asarray(origin, dtype=np.float64)
        factors = np.ascontiguousarray(old[0] / new_units)
        shifts = np.ascontiguousarray((old[2] - origin) / new_units)
        self._units = units_array(new_units, origin)
        known = self.__dict__.get("_feature_range")
        if known is not None:
            self._feature_range = known * factors + shifts
        store = self._store
        if store is not None and store.n:
            moved = np.flatnonzero((factors != 1.0) | (shifts != 0.0))  # see rescale_boxes
            store.X[: store.n, moved] = store.X[: store.n, moved] * factors[moved] + shifts[moved]
        drift = self.__dict__.get("_drift_state")
        if drift is not None and drift.correction.shape[1]:
            from ..drift import move_correction

            move_correction(drift, factors, shifts)
        if resample:
            self._resample_trees()
            return
        weights = None
        if drift is not None and shifts.any():
            from ..drift import foreground_weights, move_background_origin

            # a drift-adaptive AMF tree reads each feature times its weight: so is
            # a move of the origin (a unit change alone is a factor, the same)
            weights = foreground_weights(drift, shifts.shape[0])
            move_background_origin(drift, shifts, new_units)
        for t, tree in enumerate(self.trees_):
            a = tree.arrays
            rescale_boxes(a.lower, a.upper, tree.n_boxes, a.threshold, a.feature,
                          tree.n_nodes, factors,
                          shifts if weights is None else np.ascontiguousarray(
                              shifts * weights[t]))

    def _resamples_on_new_units(self):
        """Whether new units re-sample the trees (else they are rescaled in place)."""
        return False

    def _can_resample(self):
        return False

    def _resample_trees(self):  # pragma: no cover - defined by resampling classes
        raise NotImplementedError

    def rescale_to(self, units, origin=None):
        """Express a fitted model in other units (``"range"`` units that are powers
        of two), exactly; for merging models fitted apart (``common_units``).

        Parameters
        ----------
        units : array-like of shape (n_features_in_,)
            New units, powers of two no smaller than the model's current ones.
        origin : array-like of shape (n_features_in_,), default=None
            New origin of the features (see the module docstring); None keeps it.
            A new origin moves every coordinate, rounded to the nearest float64
            (boxes outward): exact but for that rounding.
        """
        if self.__dict__.get("_units") is None:
            raise ValueError("This model uses its features as they are (no units).")
        self._change_units(units, resample=False, origin=origin)

    def _at_origin(self, origin):
        """This fitted model, or a copy of it moved to ``origin`` (``rescale_to``):
        models fitted apart start from different rows, and are merged at one
        origin."""
        units = self.__dict__.get("_units")
        if units is None or origin is None or np.array_equal(units[2], origin):
            return self
        import copy

        moved = copy.deepcopy(self)
        moved.rescale_to(units[0], origin)
        return moved

    # --------------------------------------------------------------- pickles
    def __setstate__(self, state):
        super().__setstate__(state)
        # Models saved before feature units existed were trained on raw features.
        if "feature_scale" in self._get_param_names() and "feature_scale" not in self.__dict__:
            object.__setattr__(self, "feature_scale", None)
        units = self.__dict__.get("_units")
        if units is not None and units.shape[0] == 2:  # saved before origins: origin 0
            self._units = units_array(units[0], np.zeros(units.shape[1]))
        if self._resamples_on_new_units() and "_units_due" in self.__dict__:
            # Saved when a Mondrian forest re-sampled later on (RESAMPLE_FREELY_BELOW):
            # a re-sampling it had put off is dropped, its trees are rescaled.
            self._units_due = NOT_DUE
