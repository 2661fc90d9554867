"""Drift adaptation of the forests: per-tree detectors, background trees, challengers.

The estimators' ``drift`` parameter switches this on (see :func:`drift_settings`
for its values). The mechanism, per tree slot of the forest:

- **Detection.** The foreground tree's loss on each row, in ``[0, 1]`` and taken
  before the tree learns the row (``drift._kernels``), feeds two ADWIN detectors
  (``drift._detectors``): a sensitive one (``warning_delta``) and a stricter one
  (``drift_delta``). A warning starts a background tree, which learns the rows
  that follow; a drift replaces the foreground tree by the background tree (by a
  new tree if there is none). This is the scheme of the adaptive random forest
  (Gomes et al., 2017), with the Mondrian trees' own online loss as input.
- **Challengers.** Each slot also starts a background tree on a schedule: when
  its foreground tree has learned ``first_challenge`` rows (staggered over the
  slots at the start), then each time the tree's age has grown by a factor
  ``challenge_growth`` (a background tree that has not won by then gives way to
  the new one: a challenger started at age ``a`` has ``(growth - 1) a`` rows to
  prove itself). Whatever started it, a background tree replaces the foreground
  tree as soon as it has been better on the rows both learned, by a margin that
  an empirical Bernstein bound at ``swap_delta`` makes significant (after at
  least ``swap_min`` rows). So a forest renews trees that gradual changes have
  left behind without waiting for a detector, and a better tree never waits for
  a drift to take over.
- **Linear correction (regressors).** Beside the trees, the forest keeps an
  online linear model of the error of its own forecast: once every slot has
  learned a row, the forest's forecast ``F`` of the row (its foreground trees'
  forecasts, made before they learned it, combined as in prediction) is known, and
  the linear model ``c`` takes a normalised least-mean-squares step towards ``y -
  F`` (``linear_rate``; features in units that follow their range, intercept
  included). A gate weighs it: exponential weights on the discounted losses of
  ``F`` and of ``F + c`` (about the last 200 rows), and the forecast is ``F +
  g c``, ``g`` the weight of the corrected forecast. The trees learn ``y`` as
  without it. Why: Mondrian trees forecast with constant cells, and a target with
  a linear part costs them many cells, which few rows (a stream's first rows, the
  rows after a change) do not give; river's ARFRegressor has linear models in its
  leaves for that reason. The gate keeps the correction from costing where it
  does not help (see ``linear_rate`` in :data:`DEFAULTS`).
- **Feature weights.** A new tree is grown in its own units: each feature
  multiplied by a weight, fixed when the tree starts, so that the Mondrian process
  cuts the useful features more often (it picks a feature with probability
  proportional to the box's side along it). The weight of a feature is the mean
  gain of the foreground trees' splits on it (how much the two children's
  forecasters beat their parent's in the aggregation's weights,
  ``drift._kernels.split_gains``), relative to the largest, and at least
  ``weight_floor`` so that every feature keeps being cut and a feature that
  becomes useful after a drift is found again.

**Mondrian forests.** The same slots, detectors, challengers and swap test drive
:class:`~mondrianlearn.MondrianForestClassifier` and
:class:`~mondrianlearn.MondrianForestRegressor` (``learn_points``). Their trees
keep their points in the forest's shared sample store (paused leaves are
re-sampled from them), so the choices differ:

- a tree grows point by point from its first point, in ``fit`` too (a background
  tree starts empty and learns the points that follow its start; by
  projectivity, without a node budget, a tree grown online has the law of one
  sampled in batch on the same points);
- no feature weights: every tree reads the rows as they are, so that the
  foreground trees are a plain Mondrian forest and predict through the
  estimators' own paths;
- points that no tree may need any more are dropped from the store
  (``_forget_points``): those older than every tree that keeps point lists, a
  tree full under ``max_nodes`` keeping none (it never re-samples a leaf). A
  replaced tree therefore releases its points, and under ``max_nodes`` the store
  holds the points since the oldest tree still growing;
- new feature units (``feature_scale="range"``) sample the trees afresh on the
  stored points, as without drift adaptation (in the forest's first
  ``utils.feature_scale.RESAMPLE_FREELY_BELOW`` rows), only while every tree holds
  every stored row (:func:`trees_hold_every_row`: before the first challenger
  starts); after that they rescale the trees in place, the background trees included
  (sampling trees started at different rows afresh on all stored points would undo
  the adaptation). Rescaling from the first rows on cost 0.50 points against the
  stationary forest on satimage's raw features (``benchmarks/bench_drift.py``);
- the forest's own ``bootstrap`` is its online bagging (the ``bagging`` setting
  is AMF's).
- the classifier's smoothing discount is the setting ``discount`` (0.3) unless its
  ``discount`` parameter is given, in place of the stationary ``10 * n_features``:
  its trees are young, and young leaves gain from leaning on their parents
  (:data:`DEFAULTS` gives the measurements).

The stationary models are unchanged when ``drift`` is ``None``: none of this code
runs. Slots are learned independently (each in its own compiled loop), so the
result does not depend on ``n_jobs``; events that change trees (a background
tree started, swapped in) are rare and handled in Python between compiled calls.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import is_regressor

from ..amf._forest_kernels import prediction_work
from ..engine._jit import compiled_entry
from ..engine.boxes import WALK_NODE
from ..engine.random import spawn_states
from ..engine.storage import must_grow
from ..engine.tree import META_MAX_LEAF_POINTS, UNBOUNDED, TreeState, own_point_boxes
from ..engine.tree_table import TreeTable
from ..utils.persistence import IncompatibleModelError
from . import _kernels as K
from ._detectors import ADWIN_SIZE

DRIFT_STATE_FORMAT = 1
"""Layout of :class:`DriftState`; a pickle of another layout is refused."""

DEFAULTS = {
    "warning_delta": 0.2,
    "drift_delta": 0.1,
    "swap_delta": 0.2,
    "swap_min": 100,
    "first_challenge": 100,
    "challenge_growth": 3.0,
    "feature_weights": True,
    "weight_floor": 0.1,
    "weight_half_life": 300,
    "bagging": 0.0,
    "upward": True,
    "discount": 0.3,
    "trim": 0.1,
    "loss_weighting": 15.0,
    "linear_rate": 0.05,
}
"""Settings of ``drift="adwin"`` (a dict given as ``drift`` overrides some of them).

Measured with ``benchmarks/bench_drift.py`` (one row at a time, 10 trees, mean over
seeds 0-2; ``results/bench_drift.md`` and ``results/targets.md``), against the
settings before (detectors 0.1 and 0.05, ``swap_delta=0.01``,
``first_challenge=200``):

- AMF, mean accuracy over the six drifting streams 0.8537 against 0.8458, better
  on every stream (Elec2 0.8896 against 0.8857); FriedmanDrift MAE (lea, gra,
  gsg) 2.008, 2.062, 2.062 against 2.058, 2.194, 2.154;
- the Mondrian forests: mean accuracy 0.8189 against 0.8133; FriedmanDrift MAE
  2.590, 2.461, 2.521 against 2.589, 2.507, 2.559;
- stationary streams (letter, satimage, Phishing; AMF): 0.8567, 0.8776, 0.9059
  against 0.8560, 0.8776, 0.9056, as without drift adaptation.

``discount`` is the smoothing discount ``gamma`` of
:class:`~mondrianlearn.MondrianForestClassifier` with drift adaptation when its own
``discount`` parameter is None (the stationary forest's ``10 * n_features``); AMF and
the regressors do not read it. Its trees are young (replaced often, and a
background tree predicts from its first rows in the paired test), and a young tree
gains from leaves that lean on their parents: one row at a time, 10 trees, the
Mondrian forest's mean accuracy over the six drifting streams was 0.8362 with 0.3
against 0.8199 with ``10 * n_features`` (seeds 0-2; 0.1: 0.8340, 0.5: 0.8347, 1:
0.8337, 3: 0.8290, 10: 0.8246), and 0.8304 against 0.8134 on seeds 3-5, which took
no part in the choice (0.5: 0.8291, 1: 0.8286). Every stream gained or held (LED
0.6104 to 0.6725, hyperplane 0.8254 to 0.8465, RBF 0.7936 to 0.8041); on the
stationary streams (letter, satimage, Phishing) the forest with drift adaptation
gave 0.8577, 0.8808, 0.8997 against 0.8536, 0.8814, 0.8944 for the stationary forest.

Each of the four changes helped on its own in ad-hoc runs of the same streams,
and the four together also on seeds 3-5, which did not take part in the choice.
So trees are replaced readily: the detector confidences are far larger than ARF's
(0.01 and 0.001), and a background tree takes over as soon as the paired test is
fairly sure it is better. A false alarm costs little: a replaced tree's background
tree, or the next challenger, takes over again when it is better. Challengers
start early (``first_challenge``) and then at ages growing by
``challenge_growth`` (3 against 1.5 and 2, FriedmanDrift seed 0: MAE 2.067,
2.148, 2.099 with 3; 2.137, 2.256, 2.155 with 1.5; 2.065, 2.238, 2.131 with 2).
The detectors react only to a loss that goes up (``upward``): a tree whose loss
falls as it learns is not replaced. Detecting both ways replaced trees that were
still learning on stationary streams (the stationary AMF, then two-sided, then
upward-only detection: letter 0.850, 0.705, 0.850; satimage 0.879, 0.868, 0.879;
Phishing 0.882, 0.890, 0.882). New trees' feature weights matter most on
FriedmanDrift. Online bagging, a lower ``weight_floor``, other half-lives and
other AMF ``step`` values measured worse or no better.

``trim`` and ``loss_weighting`` are read by the regressors only: a regressor's
forecast is the mean of its foreground trees' forecasts without the ``trim``
fraction at each end, weighted by ``exp(-loss_weighting * L_t)``, ``L_t`` a tree's
mean loss since its last change (:func:`combine_tree_forecasts`). FriedmanDrift MAE
(lea, gra, gsg), seeds 0-2, against the plain mean (2.008, 2.062, 2.062): trimmed
only 1.980, 2.046, 2.042; weighted only 1.991, 2.038, 2.051; both 1.972, 2.033,
2.038 (``loss_weighting`` 10: 1.973, 2.035, 2.037; 25: 1.977, 2.035, 2.044; ``trim``
0.2: 1.977, 2.042, 2.041; the median of the trees: 2.021, 2.096, 2.087). On seeds
3-5, which took no part in the choice: 2.025, 2.109, 2.091 with the plain mean,
1.988, 2.076, 2.068 with both (trimmed only 1.996, 2.094, 2.074; weighted only
2.004, 2.074, 2.075); river's ARFRegressor there: 1.946, 2.010, 2.073. The Mondrian
forest regressor, with the same settings: 2.512, 2.438, 2.487 to 2.469, 2.405, 2.461
(seeds 3-5: 2.520, 2.473, 2.469 to 2.473, 2.439, 2.441). The values of both
settings are the benchmark's rows (seeds 3-5: ``--first-seed 3``); the others, ad-hoc
runs of its protocol.
The classifiers keep the plain mean of the trees' probabilities (their targets were
met without it, and a trimmed mean of probabilities per class would not sum to one).

``linear_rate`` is the step of the regressors' linear correction (0: none; the
classifiers have none). ``benchmarks/bench_drift.py``, FriedmanDrift MAE (lea, gra,
gsg): AMF, seeds 0-2, 1.972, 2.033, 2.038 without it, 1.863, 1.800, 1.847 with it; seeds
3-5, which took no part in the choice, 1.988, 2.076, 2.068 to 1.875, 1.827, 1.860
(river's ARFRegressor: 1.979, 2.062, 2.119 and 1.946, 2.010, 2.073); the Mondrian forest
regressor, 2.469, 2.405, 2.461 to 2.127, 1.981, 2.031 (seeds 0-2) and 2.473, 2.439,
2.441 to 2.133, 1.994, 2.012 (seeds 3-5). On the Elec2 stream with ``nswprice`` as the
target (``benchmarks/bench_linear_residuals.py``), AMF 0.006498 without it, 0.006273
with it (the Mondrian forest, ad hoc: 0.008086 to 0.007588). The design comes from the
variants of that script: a linear model whose residuals the trees learn beat ARF by
more, but made Elec2's prices worse (0.00693 at best), and so did the linear model on
the forest's errors without a gate (NLMS with step 0.05, the step kept here: 0.007046).
The gate: exponential weights on the discounted losses, chosen in ad-hoc runs against a
switch to the better of the two (alike on FriedmanDrift; Elec2's prices 0.006386 against
0.006430, both with discount 0.999); its discount 0.995 (``GATE_DECAY``) against 0.999
and 0.99, ad-hoc runs: FriedmanDrift mean over the kinds, seeds 0-2, 1.837 against 1.839
and 1.840, seeds 3-5 1.854 against 1.861 and 1.855; Elec2's prices 0.006271 against
0.006343 and 0.006263; the example of ``examples/drift_adaptation.py`` 0.532 against
0.534 and 0.527. A gate that forgets sooner follows a change sooner, but on stationary
sets fitted in batch (the seven shared regression sets, test RMSE,
``bench_linear_residuals.py``) the correction with 0.995 is as good or better than none
on four and worse on three (california_housing +0.2%, housing +2.0%, energy +0.6%),
where with 0.999 it was worse on energy only (+0.2%); the Mondrian forest regressor's,
ad hoc: better on three, within 0.3% on the others. Other steps, with discount 0.999
(FriedmanDrift on seeds 0-2; Elec2's prices): 0.02 gave 1.865, 1.822, 1.854 and
0.006411; 0.1 gave 1.886, 1.809, 1.865 and 0.006334; 0.2 gave 1.920, 1.852, 1.913 (0.05:
1.871, 1.800, 1.848 and 0.006343).

A model saved with other settings (or before these defaults) goes on with the
current ones, keeping its detectors, background trees and events
(:meth:`DriftState.adopt`)."""

EVENT_NAMES = {K.EVENT_WARNING: "warning", K.EVENT_DRIFT: "drift", K.EVENT_SWAP: "swap",
               K.EVENT_CHALLENGE: "challenge"}
"""Names of the events recorded in ``drift_events_``."""

_NO_TARGETS = np.empty(0)
"""``y``, ``prior`` and ``spread`` of the AMF loop for a classifier (not read)."""

_NO_WALK = np.empty(0, dtype=WALK_NODE)
"""The walk table of the AMF loop's forecasts (one row: no packed table)."""

EVENTS_DTYPE = np.dtype([("row", np.int64), ("tree", np.int64), ("kind", "U9")])


def drift_settings(drift):
    """The settings of a ``drift`` parameter value, or None when it is off.

    Parameters
    ----------
    drift : None, "adwin" or dict
        ``None``: no drift adaptation. ``"adwin"``: the mechanism of this module
        with :data:`DEFAULTS`. A dict: ``"adwin"`` with some settings replaced
        (keys of :data:`DEFAULTS`).

    Returns
    -------
    settings : dict or None
    """
    if drift is None:
        return None
    if isinstance(drift, str):
        if drift != "adwin":
            raise ValueError(f"drift={drift!r}: expected None, 'adwin' or a dict of settings.")
        return dict(DEFAULTS)
    unknown = set(drift) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"Unknown drift settings {sorted(unknown)}; known: {sorted(DEFAULTS)}.")
    settings = dict(DEFAULTS, **drift)
    for name in ("warning_delta", "drift_delta", "swap_delta"):
        value = settings[name]
        if not (isinstance(value, Real) and 0.0 < value < 1.0):
            raise ValueError(f"drift setting {name} must be in (0, 1), got {value!r}.")
    for name in ("swap_min", "first_challenge"):
        value = settings[name]
        if not (isinstance(value, Integral) and value >= -1):
            raise ValueError(f"drift setting {name} must be an integer (-1: never), got {value!r}.")
    if not (isinstance(settings["challenge_growth"], Real) and settings["challenge_growth"] > 1.0):
        raise ValueError("drift setting challenge_growth must be a number > 1.")
    if not (isinstance(settings["weight_floor"], Real) and 0.0 < settings["weight_floor"] <= 1.0):
        raise ValueError("drift setting weight_floor must be in (0, 1].")
    if not (isinstance(settings["weight_half_life"], Real) and settings["weight_half_life"] > 0):
        raise ValueError("drift setting weight_half_life must be a number of rows > 0.")
    if not (isinstance(settings["bagging"], Real) and settings["bagging"] >= 0.0):
        raise ValueError("drift setting bagging must be >= 0 (0: no online bagging).")
    if not (isinstance(settings["discount"], Real) and 0.0 <= settings["discount"] < np.inf):
        raise ValueError("drift setting discount must be a finite number >= 0.")
    if not (isinstance(settings["trim"], Real) and 0.0 <= settings["trim"] < 0.5):
        raise ValueError("drift setting trim must be in [0, 0.5).")
    if not (isinstance(settings["loss_weighting"], Real)
            and 0.0 <= settings["loss_weighting"] < np.inf):
        raise ValueError("drift setting loss_weighting must be a finite number >= 0.")
    if not (isinstance(settings["linear_rate"], Real) and 0.0 <= settings["linear_rate"] <= 1.0):
        raise ValueError("drift setting linear_rate must be in [0, 1] (0: no linear correction).")
    return settings


class DriftState:
    """What a drift-adaptive forest keeps beside its foreground trees (``trees_``).

    Parameters
    ----------
    settings : dict
        From :func:`drift_settings`.
    n_trees, n_features : int
    seed : int
        Seed of the stream from which the trees started later draw theirs.
    uses_weights : bool
        Whether new trees get feature weights (AMF; not the Mondrian forests,
        whose trees share a store of points).
    stores_points : bool
        Whether the trees keep lists of points of the model's sample store
        (Mondrian forests).

    Attributes
    ----------
    background : list of TreeState
        One per slot; learning only while ``active`` is set.
    active : ndarray of shape (n_trees,), int64
    detectors : ndarray of shape (n_trees, 2, ADWIN_SIZE)
        Warning and drift detectors of each slot's foreground tree.
    pair : ndarray of shape (n_trees, 3)
        Paired comparison of the background with the foreground tree.
    next_challenge : ndarray of shape (n_trees,), int64
        Row at which each slot starts its next challenger (-1: never).
    scale : ndarray of shape (2 * n_trees, n_features)
        Feature weights of the foreground trees, then of the background trees.
    born : ndarray of shape (2 * n_trees,), int64
        Row at which each tree started (the first row it learned).
    store_offset : int
        Stream row of the first point of the model's sample store (points before
        it were dropped, ``_forget_points``).
    moments : ndarray of shape (3,)
        Running moments of the scaled targets (Mondrian forest regressors: the
        unit of the trees' losses).
    correction : ndarray of shape (4, n_features + 1)
        A regressor's linear correction (``drift._kernels.learn_correction``:
        coefficients, intercept first; origin, low and high of each feature), or of
        shape ``(4, 0)``: none (:func:`_keep_correction`).
    gate : ndarray of shape (2,)
        Discounted losses of the forest's forecast alone and with the correction.
    forecasts : ndarray of shape (n_trees, 1)
        Each foreground tree's forecast of the row being learned (kept between
        calls of the loop, which may stop within a row).
    events : ndarray of shape (capacity, 3), int64
        ``(row, slot, event code)`` of the first ``n_events`` events (the array
        doubles when full: recording an event costs O(1) amortised).
    n_events : int
    """

    def __init__(self, settings, n_trees, n_features, seed, uses_weights, stores_points=False):
        self.format = DRIFT_STATE_FORMAT
        self.stores_points = bool(stores_points)
        self.store_offset = 0
        self.moments = np.zeros(3)
        self.settings = dict(settings)
        self.uses_weights = bool(uses_weights) and bool(settings["feature_weights"])
        self.rng = spawn_states(int(seed), 1)[0]
        self.n_trees = int(n_trees)
        self.background = []
        self.active = np.zeros(n_trees, dtype=np.int64)
        self.detectors = np.zeros((n_trees, 2, ADWIN_SIZE))
        self.pair = np.zeros((n_trees, K.N_PAIR))
        first = int(settings["first_challenge"])
        if first >= 0:
            stagger = max(1, first // max(n_trees, 1))
            self.next_challenge = first + stagger * np.arange(n_trees, dtype=np.int64)
        else:
            self.next_challenge = np.full(n_trees, -1, dtype=np.int64)
        self.scale = np.ones((2 * n_trees, n_features))
        self.born = np.zeros(2 * n_trees, dtype=np.int64)
        self.events = np.zeros((16, 3), dtype=np.int64)
        self.n_events = 0
        self.correction = np.zeros((K.N_CORRECTION, 0))
        self.gate = np.zeros(2)
        self.forecasts = np.full((n_trees, 1), np.nan)
        self.settings_array = _settings_array(settings)
        self.units = None
        self.classes = None
        # Split gains of the foreground trees when weights were last computed, and
        # the discounted sums of the gains made since (see ``_feature_weights``).
        self.gain_seen = np.zeros((n_trees, 2, n_features))
        self.recent_gains = np.zeros((2, n_features))
        self.weights_row = 0
        self._reset_scratch()

    def adopt(self, settings, weights_possible, row):
        """Go on with other settings (``set_params(drift=...)``, or a model saved
        when the defaults were others) without forgetting what was learned: the
        detectors, background trees, feature weights and events stay; the new
        settings apply from the next row (a challenge schedule switched on starts
        at ``row``; the kernels read the settings when they next run)."""
        was_off = int(self.settings["first_challenge"]) < 0
        self.settings = dict(settings)
        self.uses_weights = bool(weights_possible) and bool(settings["feature_weights"])
        self.settings_array = _settings_array(settings)
        first = int(settings["first_challenge"])
        if first < 0:
            self.next_challenge[:] = -1
        elif was_off:
            stagger = max(1, first // max(self.n_trees, 1))
            self.next_challenge = row + first + stagger * np.arange(self.n_trees, dtype=np.int64)
        self._reset_scratch()  # the kernels' arguments are made again

    def _reset_scratch(self):
        self._table = None
        self._work = {}
        self._slot_of = None
        self._slots_for = None
        self._combined = None
        self._combined_for = None
        self._learn_work = None
        self._args = None
        # What _sync and _forget_points last saw (each looks again only on a change)
        self._synced_classes = None
        self._synced_units = None
        self._first_point = None

    # ------------------------------------------------------------------- pickling
    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    def __setstate__(self, state):
        if state.get("format") != DRIFT_STATE_FORMAT:
            raise IncompatibleModelError(
                f"This model's drift state has format {state.get('format')}; this "
                f"mondrian-learn reads format {DRIFT_STATE_FORMAT}. Refit the model.")
        state.setdefault("stores_points", False)  # saved by AMF before the forests had it
        state.setdefault("store_offset", 0)
        state.setdefault("moments", np.zeros(3))
        if "correction" not in state:  # saved before the linear correction: it had none
            state["settings"] = dict(state["settings"], linear_rate=0.0)
            state["settings_array"] = _settings_array(state["settings"])
            state["correction"] = np.zeros((K.N_CORRECTION, 0))
            state["gate"] = np.zeros(2)
            state["forecasts"] = np.full((state["n_trees"], 1), np.nan)
        self.__dict__.update(state)
        self._reset_scratch()

    # ---------------------------------------------------------------- new trees
    def new_tree(self, template, n_features, max_nodes):
        """An empty tree with the node statistics of ``template``, room for as many
        nodes as it has (a tree that takes over grows to about that size; room for a
        quarter cost one more copy of each such tree as it grew, and the unused rows
        are zeros, which take memory only once written), and a random stream drawn
        from the state's own."""
        capacity = int(min(max_nodes, max(64, template.n_nodes)))
        # no rows: the tree makes its arrays of ``capacity`` rows (zeros) itself
        stats = {name: np.zeros((0,) + array.shape[1:])
                 for name, array in template.node_stats.items()}
        return TreeState(n_features, K.child_stream(self.rng), stats,
                         keep_samples=self.stores_points or template.keep_samples,
                         capacity=capacity,
                         count_multiplicity=template.sample_mult.shape[0] > 0)

    def record(self, row, slot, event):
        """Record an event of slot ``slot`` at stream row ``row``."""
        if self.n_events == self.events.shape[0]:
            self.events = np.vstack([self.events, np.zeros_like(self.events)])
        self.events[self.n_events] = (row, slot, event)
        self.n_events += 1

    def events_array(self):
        """The events as a structured array (fields ``row``, ``tree``, ``kind``)."""
        events = self.events[: self.n_events]
        out = np.empty(self.n_events, dtype=EVENTS_DTYPE)
        out["row"] = events[:, 0]
        out["tree"] = events[:, 1]
        names = np.array([EVENT_NAMES.get(k, "") for k in range(max(EVENT_NAMES) + 1)],
                         dtype=EVENTS_DTYPE["kind"])
        out["kind"] = names[events[:, 2]]
        return out

    def rows_for(self, tree, X, trees):
        """``X`` as the foreground tree ``tree`` of ``trees`` sees it (its feature
        weights)."""
        if self._slots_for is not trees:
            self._slot_of = {id(tree): t for t, tree in enumerate(trees)}
            self._slots_for = trees
        slot = self._slot_of.get(id(tree))
        if slot is None:
            return X
        weights = self.scale[slot]
        if np.all(weights == 1.0):
            return X
        return np.ascontiguousarray(X * weights)


def _settings_array(settings):
    """The settings the compiled loops read (see ``drift._kernels``, ``S_*``)."""
    return np.array([settings["warning_delta"], settings["drift_delta"],
                     settings["swap_delta"], settings["swap_min"],
                     settings["bagging"], float(settings["upward"]), settings["trim"],
                     settings["loss_weighting"], settings["linear_rate"]], dtype=np.float64)


# ------------------------------------------------------------------ the driver
def adopt_settings(model):
    """The model's drift state, going on with the settings of its ``drift``
    parameter if they changed (``set_params``; :meth:`DriftState.adopt`). Called by
    the validated calls (learning, and prediction, which reads ``trim`` and
    ``loss_weighting``); a ``drift`` of None leaves the state as it is (learning
    then refuses it)."""
    state = model.__dict__["_drift_state"]
    settings = drift_settings(model.drift)
    if settings is not None and state.settings != settings:
        weights_possible = "log_weight" in model.trees_[0].node_stats  # AMF
        state.adopt(settings, weights_possible, int(model.n_samples_seen_))
        _keep_correction(model, state, state.scale.shape[1])
    return state


def _state(model, new_points=0, fast=False):
    """The model's drift state, made (or made again) for its current trees
    (``new_points``: points just added to a Mondrian forest's store, not learned
    yet; ``fast``: a fast-path call, whose parameters are those of the last
    validated call, so the drift settings are not compared again)."""
    state = model.__dict__.get("_drift_state")
    n_trees = len(model.trees_)
    n_features = model.trees_[0].arrays.lower.shape[1]
    weights_possible = "log_weight" in model.trees_[0].node_stats  # AMF
    if (state is not None and not fast and model.n_samples_seen_ > 0
            and state.n_trees == n_trees):
        adopt_settings(model)
    if state is None or model.n_samples_seen_ == 0 or state.n_trees != n_trees:
        seed = int(model.trees_[0].rng_state[0] % np.uint64(2**31 - 1))
        stores_points = "_store" in model.__dict__
        state = DriftState(drift_settings(model.drift), n_trees, n_features, seed,
                           uses_weights=weights_possible, stores_points=stores_points)
        state.background = [state.new_tree(model.trees_[0], n_features, model._max_nodes_value())
                            for _ in range(n_trees)]
        state.born[:] = model.n_samples_seen_
        if stores_points:
            # The trees of a Mondrian forest may hold every point in the store,
            # the latest rows learned (all of them unless it was released).
            state.store_offset = int(model.n_samples_seen_) - (model._store.n - new_points)
            state.born[:] = state.store_offset
        model.__dict__["_drift_state"] = state
    _sync(model, state, n_features)
    _keep_correction(model, state, n_features)
    return state


def _keep_correction(model, state, n_features):
    """Give ``state`` a linear correction (empty: none yet learned) when it is a
    regressor's and ``linear_rate`` is positive, and none otherwise (a setting
    switched off drops it)."""
    wanted = is_regressor(model) and state.settings["linear_rate"] > 0.0
    if state.forecasts.shape[0] != state.n_trees:
        state.forecasts = np.full((state.n_trees, 1), np.nan)
    if wanted == (state.correction.shape[1] > 0):
        return
    if wanted:
        correction = np.zeros((K.N_CORRECTION, n_features + 1))
        correction[K.C_ORIGIN:, 1:] = np.nan
        state.correction, state.gate = correction, np.zeros(2)
    else:
        state.correction = np.zeros((K.N_CORRECTION, 0))


def _sync(model, state, n_features):
    """Bring the background trees and the feature weights in line with changes the
    estimator made to its foreground trees: new features (river), new classes,
    new units of the features (``feature_scale``)."""
    if state.scale.shape[1] != n_features:
        extra = n_features - state.scale.shape[1]
        state.scale = np.hstack([state.scale, np.ones((state.scale.shape[0], extra))])
        state.gain_seen = np.concatenate(
            [state.gain_seen, np.zeros(state.gain_seen.shape[:2] + (extra,))], axis=2)
        state.recent_gains = np.hstack([state.recent_gains, np.zeros((2, extra))])
        if state.correction.shape[1]:  # a new feature: no coefficient, no range yet
            new = np.zeros((K.N_CORRECTION, extra))
            new[K.C_ORIGIN:] = np.nan
            state.correction = np.hstack([state.correction, new])
        # A background tree cannot take features it never saw: start it afresh.
        for t in range(state.n_trees):
            state.background[t] = state.new_tree(model.trees_[t], n_features,
                                                 model._max_nodes_value())
            state.active[t] = K.BG_OFF
            state.pair[t] = 0.0
        state.units = None
        state._reset_scratch()
        state._args = _learning_args(model)
    # The estimators replace ``classes_`` and ``_units`` when they change them, never
    # edit them in place: the arrays last synced need no second look.
    classes = model.__dict__.get("classes_")
    if classes is not None and classes is not state._synced_classes:
        if state.classes is not None and not np.array_equal(state.classes, classes):
            where = np.searchsorted(classes, state.classes)
            name = "stats" if state.stores_points else "counts"
            for tree in state.background:
                old = tree.node_stats[name]
                new = np.zeros((old.shape[0], len(classes)))
                new[:, where] = old[:, : len(where)]
                tree.node_stats[name] = new
                label = tree.arrays.label[: tree.n_nodes]  # spare rows hold no node
                known = label >= 0
                label[known] = where[label[known]]
            args = state._args
            state._reset_scratch()
            state._args = args and _learning_args(model)
        state.classes = np.array(classes, copy=True)
        state._synced_classes = classes
    units = model.__dict__.get("_units")
    if units is not None and units is not state._synced_units:
        current = np.asarray(units, dtype=np.float64)[0].copy()
        if state.units is not None and state.units.shape == current.shape:
            ratio = current / state.units
            if not np.all(ratio == 1.0) and state.stores_points:
                # The estimator rescaled its foreground trees and its store to the
                # new units: the background trees follow.
                from ..utils.feature_scale import rescale_boxes

                factors = np.ascontiguousarray(1.0 / ratio)
                for tree in state.background:
                    a = tree.arrays
                    rescale_boxes(a.lower, a.upper, tree.n_boxes, a.threshold, a.feature,
                                  tree.n_nodes, factors, np.zeros_like(factors))
            elif not np.all(ratio == 1.0):
                # The estimator rescaled its foreground trees to the new units; a
                # background tree keeps its coordinates through its weights.
                state.scale[state.n_trees:] *= ratio
        state.units = current
        state._synced_units = units


def trees_hold_every_row(model):
    """Whether every tree of a drift-adaptive Mondrian forest holds every point of
    its store, as a stationary forest's do: no drift state yet, or every
    foreground tree learned from the first row on, no background tree holds a
    node and the store has dropped no point. New feature units may then re-sample
    the trees on the stored points, as they do without drift adaptation
    (``utils.feature_scale``; before the first challenger starts, about the first
    ``first_challenge`` rows)."""
    state = model.__dict__.get("_drift_state")
    if state is None:
        return True
    return (state.store_offset == 0 and not state.born[: state.n_trees].any()
            and all(tree.n_nodes == 0 for tree in state.background))


def foreground_weights(state, n_features):
    """The feature weights of the foreground trees, shape ``(n_trees, n_features)``:
    those of ``state`` and 1 for features it has not seen yet (river's new
    features, which ``_sync`` adds with weight 1)."""
    weights = np.ones((state.n_trees, n_features))
    known = min(n_features, state.scale.shape[1])
    weights[:, :known] = state.scale[: state.n_trees, :known]
    return weights


def move_background_origin(state, shifts, new_units):
    """Move the background trees to a new origin of the features: ``shifts`` (in
    ``new_units``) is what the estimator added to its rows in units
    (``utils.feature_scale``'s ``_change_units``).

    A unit change is followed lazily (``_sync``, by the ratio of the units to
    ``state.units``, those last seen); the shift is made now, in the coordinates
    the trees have until then: divided by that ratio for a Mondrian forest's
    background tree (which ``_sync`` rescales), and for an AMF background tree
    (whose coordinates are features times weights, which ``_sync`` divides by the
    ratio instead) times its weights after ``_sync``.
    """
    from ..utils.feature_scale import rescale_boxes

    if state.scale.shape[1] != shifts.shape[0]:
        return  # new features: ``_sync`` starts every background tree afresh
    pending = 1.0 if state.units is None else np.asarray(new_units) / state.units
    ones = np.ones(shifts.shape[0])
    for k, tree in enumerate(state.background):
        if tree.n_nodes == 0:
            continue
        a = tree.arrays
        moved = shifts * pending * state.scale[state.n_trees + k]
        rescale_boxes(a.lower, a.upper, tree.n_boxes, a.threshold, a.feature, tree.n_nodes,
                      ones, np.ascontiguousarray(moved))


def scale_correction(state, factor):
    """A Mondrian forest regressor's scaled targets were multiplied by ``factor``
    (``_rescale_targets``, a merge's frame): so are its correction's forecasts (the
    gate's losses are in units of the targets' spread, which moves alike)."""
    state.correction[K.C_COEFFICIENTS] *= factor


def move_correction(state, factors, shifts):
    """Follow new units of the features (``utils.feature_scale``'s
    ``_change_units``: a row in units becomes ``row * factors + shifts``) in a
    regressor's linear correction: its origins and ranges move alike, so that it
    reads every row as before and its forecasts stay as they were."""
    correction = state.correction
    n = min(correction.shape[1] - 1, factors.shape[0])
    if n > 0:
        correction[K.C_ORIGIN:, 1:n + 1] = (correction[K.C_ORIGIN:, 1:n + 1] * factors[:n]
                                           + shifts[:n])


def _table(model, state):
    """The table of the foreground trees, then the background trees."""
    if state._table is None:
        state._table = TreeTable(model._fast_stats)
    if state._combined is None or state._combined_for is not model.trees_:
        state._combined = model.trees_ + state.background
        state._combined_for = model.trees_
    if not state._table.refresh(state._combined):
        raise RuntimeError("The trees of a drift-adaptive forest must share one layout.")
    return state._table


def _learn_work(state, n_features, capacity):
    """Work arrays of the AMF learning loops: ``(row, weight, key, target (4
    floats), excess, path, no_samples, forecast work, combination work)`` for trees
    of up to ``capacity`` nodes (the forecast work:
    ``amf._forest_kernels.prediction_work``, used by the regressors; the
    combination's: ``losses``, ``order``, ``combine_weights`` and ``combined`` of
    ``drift._kernels.learn_correction``)."""
    n_nodes = max(capacity, 1024)
    forecast_work = prediction_work(n_nodes, n_features, 1)
    n_trees = state.n_trees
    combine_work = (np.empty(n_trees), np.empty(2 * n_trees, dtype=np.int64),
                    np.empty(n_trees), np.empty(1))
    state._learn_work = (
        np.empty((1, n_features)), np.empty(1), np.empty(1, dtype=np.int64), np.empty(4),
        np.empty(n_features), np.empty(n_nodes, dtype=np.int64), np.empty(0, dtype=np.int64),
        forecast_work, combine_work)
    return state._learn_work


def _forest_work(state, n_features, n_outputs, capacity):
    """Work arrays of the Mondrian forests' loop: ``(excess, path, pending, nodes,
    reals, classes, forecast, combination work)`` for trees of up to ``capacity``
    nodes and ``n_outputs`` classes (0: regression; the combination work as in
    :func:`_learn_work`)."""
    n_nodes = max(capacity, 1024) + 1
    n_trees = state.n_trees
    state._learn_work = (
        np.empty(n_features), np.empty(n_nodes, dtype=np.int64),
        np.full(1, -1, dtype=np.int64), np.empty(n_nodes, dtype=np.int64),
        np.empty((3, n_nodes)), np.empty((3, max(n_outputs, 1))),
        np.zeros((1, max(n_outputs, 1))),
        (np.empty(n_trees), np.empty(2 * n_trees, dtype=np.int64), np.empty(n_trees),
         np.empty(1)))
    return state._learn_work


def _learning_args(model):
    """The arguments of the per-tree kernels, as the model's parameters give them
    (the node budget last). Also sets the online-bagging rate."""
    max_nodes = model._max_nodes_value()
    state = model._drift_state
    if state.stores_points:
        lifetime, pause_pure, mss, bootstrap, _, one_hot = model._learning_settings()
        classes = model.__dict__.get("classes_")
        return ("forest", 0 if classes is None else len(classes), bool(bootstrap),
                float(lifetime), bool(pause_pure), int(mss), bool(one_hot),
                float(model._gamma()) if classes is not None else 0.0,
                int(model._max_depth_value()), max_nodes)
    step = float(model.step)
    split_pure = bool(model.split_pure)
    count_first = model._count_first()
    state.settings_array[K.S_BAGGING] = (1.0 if getattr(model, "bootstrap", False)
                                         else state.settings["bagging"])
    if "counts" in model.trees_[0].node_stats:
        return ("classifier", step, model._dirichlet(), split_pure, count_first,
                len(model.classes_), max_nodes)
    return ("regressor", step, split_pure, count_first, bool(model.use_aggregation),
            bool(model.temporary_extension), max_nodes)


def learn(model, X, data):
    """Learn checked rows (in the model's units) with drift adaptation (AMF).

    ``data``: ``(keys, weights)`` for a classifier, ``(keys, z, weights, prior,
    spread)`` for a regressor (``prior`` and ``spread`` from ``target_moments``),
    as the estimator's own learning loops take them. Called by the estimators'
    full path; updates ``n_samples_seen_``.
    """
    state = _state(model)
    state._args = _learning_args(model)
    _run(model, state, X.shape[0], _amf_loop(model, state, X, data))


def learn_fast(model, X, data):
    """The fast path's :func:`learn`: the rows are checked here (finite, range)
    and, for a regressor, the running moments of the target updated. Returns
    False, with nothing changed, when the rows are refused."""
    state = model.__dict__.get("_drift_state")
    if state is None or state._args is None or state.stores_points:
        return False
    if state._args[0] == "regressor":
        keys, z, weights, prior, spread = data
        if not K.check_targets(z) or not K.check_rows(X, model._feature_range):
            return False
        K.running_target_moments(z, weights, model._y_moments, prior, spread)
    elif not K.check_rows(X, model._feature_range):
        return False
    if X.shape[1] != state.scale.shape[1]:
        # Classes and units change only in the full path; features may be added
        # between calls (river).
        _sync(model, state, X.shape[1])
    _run(model, state, X.shape[0], _amf_loop(model, state, X, data))
    return True


def prepare_learning(model, X, data):
    """The compiled call of :func:`learn_fast` that just learned the one row ``X``
    (``data`` as there), prepared to learn the next row (``utils.fast_path``'s
    prepared calls): ``learn(model, X, data)``, with arguments of the same types,
    returns :func:`learn_fast`'s result, or None when the call may not be prepared.

    What the loop's arguments are made from is held: the trees' table and work
    arrays, the slots' arrays and the kernels' settings. When any of them was
    replaced since, the call returns False with nothing changed (the fast path then
    learns the row, and prepares a new call); otherwise it goes on in Python
    (:func:`_run`) from the first event the loop stops at. The caller makes sure
    that nothing else changed (``FastPathMixin._prepare``: the trees' arrays, their
    list, the parameters).
    """
    state = model.__dict__.get("_drift_state")
    if (state is None or state.stores_points or state._args is None
            or state._table is None or state._learn_work is None
            or state._combined_for is not model.trees_):
        return None
    table, work, args = state._table, state._learn_work, state._args
    feature_range = model._feature_range
    regression = args[0] == "regressor"
    if regression:
        keys, y, weights, prior, spread = data
        _, step, split_pure, count_first, aggregate, extend, max_nodes = args
        dirichlet, n_classes = 0.0, 0
        moments = model._y_moments
    else:
        (keys, weights), (y, prior, spread) = data, (_NO_TARGETS,) * 3
        _, step, dirichlet, split_pure, count_first, n_classes, max_nodes = args
        aggregate = extend = False
    row, weight, key, target, excess, path, no_samples, forecast_work, combine_work = work
    floats, ints, done, _, tree_weights, _, _, prefix = forecast_work
    position = np.zeros(2, dtype=np.int64)
    addresses, sizes = table.addresses, table.sizes
    correction, gate, forecasts = state.correction, state.gate, state.forecasts
    tail = (state.active, state.detectors, state.pair, state.next_challenge, state.scale,
            state.settings_array, regression, step, dirichlet, split_pure, max_nodes,
            count_first, n_classes, aggregate, extend, row, weight, key, target, excess,
            path, no_samples, floats, ints, done, tree_weights, prefix, _NO_WALK,
            correction, gate, forecasts, *combine_work)
    entry = compiled_entry(K.learn_amf_slots, (addresses, sizes, X, keys, y, weights, prior,
                                               spread, 0, position, *tail))
    check_rows = compiled_entry(K.check_rows, (X, feature_range))
    if regression:
        check_targets = compiled_entry(K.check_targets, (y,))
        moments_of = compiled_entry(K.running_target_moments,
                                    (y, weights, moments, prior, spread))
    active, detectors, pair, next_challenge, scale, settings = tail[:6]

    def learn(model, X, data):
        if (model.__dict__.get("_drift_state") is not state or state._table is not table
                or state._learn_work is not work or state._args is not args
                or model._feature_range is not feature_range or state.active is not active
                or state.detectors is not detectors or state.pair is not pair
                or state.next_challenge is not next_challenge or state.scale is not scale
                or state.settings_array is not settings or state.correction is not correction
                or state.gate is not gate or state.forecasts is not forecasts):
            return False
        if regression:
            keys, y, weights, prior, spread = data
            if not check_targets(y) or not check_rows(X, feature_range):
                return False
            moments_of(y, weights, moments, prior, spread)
        else:
            keys, weights = data
            y = prior = spread = _NO_TARGETS
            if not check_rows(X, feature_range):
                return False
        position[0] = position[1] = 0
        event = entry(addresses, sizes, X, keys, y, weights, prior, spread,
                      int(model.n_samples_seen_), position, *tail)
        if event == K.NO_EVENT:
            model.__dict__["n_samples_seen_"] += 1
        else:
            _run(model, state, 1, _amf_loop(model, state, X, data), position, event)
        return True

    learn.kernel = entry
    return learn


def prepare_point_learning(model, ids):
    """:func:`prepare_learning` for a Mondrian forest classifier: after
    :func:`learn_points` of the one point ``ids`` (a one-element array that the
    forest's prepared call writes the id of its next stored point into), a function
    ``learn(model)`` that learns that point as :func:`learn_points` does, through the
    compiled call of the slots' loop made with the arguments it holds when none was
    replaced since (else through :func:`learn_points` itself); None when the call
    may not be prepared (regression: a call of one row is not prepared)."""
    state = model.__dict__.get("_drift_state")
    if (state is None or not state.stores_points or state._args is None
            or state._args[1] == 0 or state._table is None or state._learn_work is None
            or state._combined_for is not model.trees_):
        return None
    store = model._store
    table, work, args = state._table, state._learn_work, state._args
    (_, _, bootstrap, lifetime, pause_pure, mss, one_hot, gamma, max_depth, max_nodes) = args
    spread = np.zeros(1)  # read by regression only
    position = np.zeros(2, dtype=np.int64)
    arrays = (store.X, store.keys, store.stats)
    slots = (state.active, state.detectors, state.pair, state.next_challenge,
             state.settings_array)
    correction, gate, forecasts = state.correction, state.gate, state.forecasts
    tail = (store.stats.shape[1], False, bootstrap, lifetime, pause_pure, mss, max_nodes,
            one_hot, gamma, max_depth, *work[:7], correction, gate, forecasts, *work[7])
    addresses, sizes = table.addresses, table.sizes
    entry = compiled_entry(K.learn_forest_slots, (addresses, sizes, *arrays, ids, spread, 0,
                                                  position, *slots, *tail))

    def learn(model):
        if (model.__dict__.get("_drift_state") is not state or state._table is not table
                or state._learn_work is not work or state._args is not args
                or model._store is not store or store.X is not arrays[0]
                or store.keys is not arrays[1] or store.stats is not arrays[2]
                or state.active is not slots[0] or state.detectors is not slots[1]
                or state.pair is not slots[2] or state.next_challenge is not slots[3]
                or state.settings_array is not slots[4] or state.correction is not correction
                or state.gate is not gate or state.forecasts is not forecasts):
            learn_points(model, ids, fast=True)
            return
        position[0] = position[1] = 0
        event = entry(addresses, sizes, *arrays, ids, spread, int(model.n_samples_seen_),
                      position, *slots, *tail)
        if event == K.NO_EVENT:
            model.__dict__["n_samples_seen_"] += 1
        else:
            _run(model, state, 1, _forest_loop(model, state, ids, spread), position, event)
        _forget_points(model, state)

    learn.kernel = entry
    return learn


def learn_points(model, ids, fast=False):
    """Learn the points ``ids`` of a Mondrian forest's sample store (just added, in
    the model's units) with drift adaptation; updates ``n_samples_seen_`` and drops
    the points no tree may need any more. Called by the full path and the fast
    path (``fast``: the parameters are those of the last validated call, so the
    kernels' arguments made then still hold)."""
    state = _state(model, ids.shape[0], fast)
    if not fast or state._args is None:
        state._args = _learning_args(model)
    store = model._store
    n = ids.shape[0]
    spread = np.zeros(n)
    if state._args[1] == 0:  # regression: the running spread of the scaled targets
        weights = store.stats[ids, 0]
        z = store.stats[ids, 1] / weights
        K.running_target_moments(z, weights, state.moments, np.empty(n), spread)
    _run(model, state, n, _forest_loop(model, state, ids, spread))
    _forget_points(model, state)


def _amf_loop(model, state, X, data):
    """``call(table, position, resize)`` running the AMF slots' loop from
    ``position`` (``resize``: the work arrays must grow first); returns its
    event."""
    args = state._args

    def call(table, position, resize):
        work = state._learn_work
        if resize or work is None or work[0].shape[1] != X.shape[1]:
            work = _learn_work(state, X.shape[1],
                               int(table.sizes[:, 0].max()) if resize else 0)
        row, weight, key, target, excess, path, no_samples, forecast_work, combine_work = work
        floats, ints, done, _, tree_weights, _, _, prefix = forecast_work
        if args[0] == "classifier":
            (keys, weights), (y, prior, spread) = data, (_NO_TARGETS,) * 3
            _, step, dirichlet, split_pure, count_first, n_classes, max_nodes = args
            aggregate = extend = False
        else:
            keys, y, weights, prior, spread = data
            _, step, split_pure, count_first, aggregate, extend, max_nodes = args
            dirichlet, n_classes = 0.0, 0
        return K.learn_amf_slots(
            table.addresses, table.sizes, X, keys, y, weights, prior, spread,
            int(model.n_samples_seen_), position, state.active, state.detectors, state.pair,
            state.next_challenge, state.scale, state.settings_array, args[0] == "regressor",
            step, dirichlet, split_pure, max_nodes, count_first, n_classes, aggregate, extend,
            row, weight, key, target, excess, path, no_samples, floats, ints, done,
            tree_weights, prefix, _NO_WALK, state.correction, state.gate, state.forecasts,
            *combine_work)

    return call


def _forest_loop(model, state, ids, spread):
    """``_amf_loop`` for the Mondrian forests (the rows: the stored points
    ``ids``)."""
    store = model._store
    (_, n_classes, bootstrap, lifetime, pause_pure, mss, one_hot, gamma, max_depth,
     max_nodes) = state._args
    n_features = store.X.shape[1]

    def call(table, position, resize):
        work = state._learn_work
        if (resize or work is None or work[0].shape[0] != n_features
                or work[6].shape[1] != max(n_classes, 1)):
            work = _forest_work(state, n_features, n_classes,
                                int(table.sizes[:, 0].max()) if resize else 0)
        return K.learn_forest_slots(
            table.addresses, table.sizes, store.X, store.keys, store.stats, ids, spread,
            int(model.n_samples_seen_), position, state.active, state.detectors, state.pair,
            state.next_challenge, state.settings_array, store.stats.shape[1], n_classes == 0,
            bootstrap, lifetime, pause_pure, mss, max_nodes, one_hot, gamma, max_depth,
            *work[:7], state.correction, state.gate, state.forecasts, *work[7])

    return call


def _run(model, state, n_rows, call, position=None, event=None):
    """Run a slots' loop over ``n_rows`` rows (``call``, from ``_amf_loop`` or
    ``_forest_loop``), handling the events it stops at. A caller that already ran
    the loop (a prepared call, see :func:`prepare_learning`) passes the ``event`` it
    stopped at and its ``position``: the loop goes on from there."""
    if n_rows == 0:
        return
    row0 = int(model.n_samples_seen_)
    max_nodes = state._args[-1]
    if position is None:
        position = np.zeros(2, dtype=np.int64)
    resize = False
    while True:
        if event is None:
            event = call(_table(model, state), position, resize)
        resize = event == K.EVENT_WORK
        if event == K.NO_EVENT:
            break
        if not resize:
            _handle(model, state, int(position[1]), event, row0 + int(position[0]),
                    max_nodes)
            if event != K.EVENT_GROW and event != K.EVENT_CHALLENGE:
                # the row is learned in this slot: on to the next slot (past the last
                # one, the loop finishes the row: a regressor's correction learns it)
                position[1] += 1
        event = None
    model.__dict__["n_samples_seen_"] = row0 + n_rows


def _grow(model, state, tree, max_nodes):
    if state.stores_points:
        # Room for the stored points' links and for one point with the
        # re-sampling of the largest paused leaf (``drift._kernels``).
        tree.ensure_sample_capacity(model._store.n)
        needed = tree.n_nodes + 2 * int(tree.arrays.meta[META_MAX_LEAF_POINTS]) + 6
        tree.reserve(needed, limit=max_nodes, renumber=True, factor=2)
        return
    n_nodes = tree.n_nodes
    if must_grow(n_nodes, tree.capacity):
        # Doubling: the trees started during a stream are many and start small.
        # The new capacity (hence when nodes are renumbered) depends on the tree
        # only, not on how many rows the call holds, so that any cut of the stream
        # into calls gives the same forest.
        tree.reserve(n_nodes + 66, limit=max_nodes, renumber=True, factor=2)


def _forget_points(model, state):
    """Drop the stored points that no tree may need any more (see the module
    docstring): the points before the first one of the oldest tree that keeps
    point lists, once they are at least half of the store (so that the copies
    cost O(1) per point). A tree full under ``max_nodes`` stops keeping lists."""
    store = model._store
    first = _first_point_needed(model, state)
    if first <= 0 or 2 * first < store.n:
        return
    trees = list(model.trees_) + state.background
    keep = store.n - first
    capacity = max(16, 2 * keep)
    for name in ("X", "keys", "stats"):
        old = getattr(store, name)
        new = np.zeros((capacity,) + old.shape[1:], dtype=old.dtype)
        new[:keep] = old[first:store.n]
        setattr(store, name, new)
    store.n = keep
    state.store_offset += first
    for tree in trees:
        if tree.sample_next.shape[0] or tree.sample_mult.shape[0]:
            K.shift_sample_ids(tree.arrays.leaf_head, tree.n_nodes, tree.sample_next,
                               tree.sample_mult, first)


def _first_point_needed(model, state):
    """Position in the store of the first point that a tree keeping point lists may
    need (the store's size if none), for ``_forget_points``; a tree full under
    ``max_nodes`` stops keeping lists here.

    Without a node budget the answer changes only when a tree starts, stops or is
    replaced (an event, or a background tree stopped by ``_sync``) or the store
    drops points: it is kept with what it was computed from, so that a call of
    one row costs a comparison.
    """
    max_nodes = model._max_nodes_value()
    n_stored = model._store.n
    key = None
    if max_nodes >= UNBOUNDED:
        key = (state.n_events, state.store_offset, state.active.tobytes())
        cached = state._first_point
        if cached is not None and cached[0] is model.trees_ and cached[1] == key:
            return min(cached[2], n_stored)
    n = state.n_trees
    least = _NO_POINT  # over the trees alone (the cache holds it)
    for k, tree in enumerate(list(model.trees_) + state.background):
        if not tree.keep_samples:
            continue
        if max_nodes < UNBOUNDED and tree.n_nodes + 2 > max_nodes:
            # it never re-samples a leaf again: its leaves of one point take their
            # boxes from the store before it lets go of their points
            own_point_boxes(tree.arrays, model._store.X)
            tree.sample_next = tree.sample_next[:0]
            tree.keep_samples = False
            continue
        if k >= n and state.active[k - n] == K.BG_OFF:
            continue  # an idle background tree: empty
        least = min(least, int(state.born[k]) - state.store_offset)
    if key is not None:
        state._first_point = (model.trees_, key, least)
    return min(least, n_stored)


_NO_POINT = np.iinfo(np.int64).max
"""No tree keeps a point list: ``_first_point_needed`` is then the store's size."""


def _feature_weights(model, state, row):
    """Weights for the features of a tree started at ``row`` (see the module
    docstring): the mean split gain of each feature, from the gains the foreground
    trees made recently (discounted with a half-life of ``weight_half_life`` rows,
    so that after a drift the features useful now take over), relative to the
    largest, floored at ``weight_floor``."""
    n_features = state.scale.shape[1]
    if not state.uses_weights:
        return np.ones(n_features)
    now = np.zeros((2, n_features))
    for t, tree in enumerate(model.trees_):
        gains = np.zeros((2, n_features))
        a = tree.arrays
        K.split_gains(a.left, a.right, a.feature, tree.node_stats["log_weight"],
                      tree.n_nodes, gains[0], gains[1])
        now += gains - state.gain_seen[t]
        state.gain_seen[t] = gains
    decay = 0.5 ** ((row - state.weights_row) / float(state.settings["weight_half_life"]))
    state.recent_gains = decay * state.recent_gains + now
    state.weights_row = row
    mean_gain = state.recent_gains[0] / (state.recent_gains[1] + 1.0)
    top = mean_gain.max()
    if not top > 0.0:
        return np.ones(n_features)
    return np.maximum(mean_gain / top, state.settings["weight_floor"])


def _start_background(model, state, t, row):
    n_features = state.scale.shape[1]
    state.background[t] = state.new_tree(model.trees_[t], n_features,
                                         model._max_nodes_value())
    state.scale[state.n_trees + t] = _feature_weights(model, state, row)
    state.born[state.n_trees + t] = row
    state.active[t] = K.BG_ON
    state.pair[t] = 0.0
    state._combined = None


def _replace_foreground(model, state, t, row):
    n = state.n_trees
    n_features = state.scale.shape[1]
    trees = list(model.trees_)
    if state.active[t] != K.BG_OFF:
        trees[t] = state.background[t]
        state.scale[t] = state.scale[n + t]
        state.born[t] = state.born[n + t]
    else:
        trees[t] = state.new_tree(model.trees_[t], n_features, model._max_nodes_value())
        state.scale[t] = _feature_weights(model, state, row)
        state.born[t] = row
    state.background[t] = state.new_tree(trees[t], n_features, model._max_nodes_value())
    if state.next_challenge[t] >= 0:
        state.next_challenge[t] = row + int(state.settings["first_challenge"])
    state.active[t] = K.BG_OFF
    state.pair[t] = 0.0
    state.detectors[t] = 0.0
    state.gain_seen[t] = 0.0  # the new foreground tree's gains are all recent
    state._combined = None
    model.trees_ = trees  # a new list: tables keyed on it refresh


def _handle(model, state, t, event, row, max_nodes):
    """Act on the event of slot ``t`` at stream row ``row`` (see ``drift._kernels``)."""
    if event == K.EVENT_GROW:
        _grow(model, state, model.trees_[t], max_nodes)
        if state.active[t] != K.BG_OFF:
            _grow(model, state, state.background[t], max_nodes)
        return
    if event == K.EVENT_CHALLENGE:
        age = row - int(state.born[t])
        growth = float(state.settings["challenge_growth"])
        state.next_challenge[t] = state.born[t] + max(int(np.ceil(age * growth)), age + 1)
        _start_background(model, state, t, row)
    elif event == K.EVENT_WARNING:
        _start_background(model, state, t, row + 1)
    else:  # EVENT_DRIFT, EVENT_SWAP
        _replace_foreground(model, state, t, row + 1)
    state.record(row, t, event)


# ----------------------------------------------------------------- prediction
def predict_fast(model, X, n_outputs):
    """The foreground trees' forecast of the rows ``X`` (in the model's units),
    each tree reading them with its feature weights, in one compiled call: the mean
    class probabilities (``n_outputs`` classes), or regression means relative to
    the model's offset (``n_outputs`` 0) combined by :func:`combine_forecasts`.
    None when the rows are refused (not finite)."""
    state = model.__dict__.get("_drift_state")
    if state is None:
        return None
    table = _table(model, state)
    n_trees = state.n_trees
    row = np.empty((1, X.shape[1]))
    for _ in range(2):
        key = (X.shape[1], n_outputs)
        cached = state._work.get("predict")
        if cached is None or cached[0] != key:
            capacity = int(table.sizes[:n_trees, 0].max())
            cached = state._work["predict"] = (
                key, prediction_work(capacity, X.shape[1], max(n_outputs, 1)))
        if n_outputs:
            out = np.zeros((X.shape[0], n_outputs))
            status = K.predict_proba_slots(
                table.addresses, table.sizes, X, n_outputs, model._dirichlet(),
                bool(model.use_aggregation), bool(model.temporary_extension),
                np.full(n_trees, 1.0 / n_trees), state.scale, row, out, *cached[1])
        else:
            values = np.zeros((n_trees, X.shape[0]))
            status = K.predict_value_slots(
                table.addresses, table.sizes, X, model._y_moments[1],
                bool(model.use_aggregation), bool(model.temporary_extension), state.scale,
                row, values, *cached[1])
            if status == 1:
                out = add_correction(state, X, combine_forecasts(state, values))
        if status >= 0:
            return out if status == 1 else None
        del state._work["predict"]  # a tree outgrew the work arrays
    return None


def prepare_prediction(model, X, n_outputs):
    """The compiled call of :func:`predict_fast` that just forecast the one row ``X``
    (in the model's units), prepared to forecast the next (``utils.fast_path``'s
    prepared calls): ``predict(model, X)``, with ``X`` of the same type, returns what
    :func:`predict_fast` does, or None with nothing computed when the trees' table,
    the work arrays or the feature weights were replaced since (the fast path then
    decides); None instead of a call when there is nothing to prepare from."""
    state = model.__dict__.get("_drift_state")
    cached = None if state is None else state._work.get("predict")
    if state is None or state._table is None or cached is None:
        return None
    table, scale, work = state._table, state.scale, cached[1]
    addresses, sizes = table.addresses, table.sizes
    n_trees = state.n_trees
    row = np.empty((1, X.shape[1]))
    flags = (bool(model.use_aggregation), bool(model.temporary_extension))
    if n_outputs:
        head = (n_outputs, model._dirichlet(), *flags, np.full(n_trees, 1.0 / n_trees),
                scale, row)
        entry = compiled_entry(K.predict_proba_slots, (addresses, sizes, X, *head,
                                                       np.zeros((1, n_outputs)), *work))
    else:
        moments = model._y_moments
        entry = compiled_entry(K.predict_value_slots, (addresses, sizes, X, moments[1], *flags,
                                                       scale, row, np.zeros((n_trees, 1)),
                                                       *work))

    def predict(model, X):
        if (model.__dict__.get("_drift_state") is not state or state._table is not table
                or state._work.get("predict") is not cached or state.scale is not scale):
            return None
        if n_outputs:
            out = np.zeros((1, n_outputs))
            status = entry(addresses, sizes, X, *head, out, *work)
        else:
            values = np.zeros((n_trees, 1))
            status = entry(addresses, sizes, X, moments[1], *flags, scale, row, values, *work)
            if status == 1:
                out = add_correction(state, X, combine_forecasts(state, values))
        return out if status == 1 else None

    predict.kernel = entry
    return predict


def combine_forecasts(state, values, slots=None):
    """A drift-adaptive regressor's forecast of each row from its foreground trees'
    forecasts ``values`` (shape ``(n_trees, n_rows)``; a row of NaN: a tree that
    has seen no point), weighted by the trees' recent losses (their warning
    detectors' windows): :func:`combine_tree_forecasts` in one compiled call. With
    ``slots`` (a boolean mask or indices of the slots), ``values`` holds the
    forecasts of those trees only."""
    if slots is not None:
        return combine_tree_forecasts(values, tree_losses(state)[slots], state.settings)
    n_trees = values.shape[0]
    work = state._work.get("combine")
    if work is None or work[0].shape[0] != n_trees:
        work = state._work["combine"] = (np.empty(n_trees), np.empty(2 * n_trees, np.int64),
                                         np.empty(n_trees))
    losses, order, weights = work
    out = np.empty(values.shape[1])
    settings = state.settings
    K.combine_forecasts(values, state.detectors, losses, float(settings["trim"]),
                        float(settings["loss_weighting"]), order, weights, out)
    return out


def add_correction(state, X, out):
    """Add a regressor's gated linear correction of the rows ``X`` (in the
    model's units) to its forest's forecasts ``out`` (relative to its offset), in
    place; nothing without one. Returns ``out``."""
    if state.correction.shape[1]:
        K.add_correction(X, state.correction, K.correction_weight(state.gate), out)
    return out


def correction_terms(state, X):
    """``(weight, forecasts)``: the gate's weight and the linear correction's
    forecast of each row of ``X`` (in the model's units), or None without one (for
    the parts of a sharded forest's prediction, ``amf._merge.regression_parts``)."""
    if not state.correction.shape[1]:
        return None
    values = np.zeros(X.shape[0])
    K.add_correction(X, state.correction, 1.0, values)
    return K.correction_weight(state.gate), values


def tree_losses(state):
    """Mean loss of each foreground tree over its warning detector's window (the
    rows since its last change; losses in ``[0, 1]``), NaN for an empty window (a
    tree just swapped in)."""
    window = state.detectors[:, 0]
    width = window[:, 0]
    losses = np.full(width.shape[0], np.nan)
    known = width > 0.0
    losses[known] = window[known, 1] / width[known]
    return losses


_NO_DETECTORS = np.empty((0, 2, ADWIN_SIZE))
"""``detectors`` of the combination when the losses are given."""


def combine_tree_forecasts(values, losses, settings):
    """The trimmed mean of the trees' forecasts, weighted by their recent losses.

    The ``trim`` fraction of the trees (rounded down, leaving at least one) is
    dropped at each end, and each remaining tree weighs ``exp(-loss_weighting *
    L_t)``, ``L_t`` its recent loss (:func:`tree_losses`; a tree without one
    weighs as a tree of the mean loss of the others). Why: the foreground trees
    are of different ages, and some have just met a change of the stream or just
    been swapped in; the plain mean of their forecasts is pulled by the worst of
    them. The settings' docstring (:data:`DEFAULTS`) gives the measurements.

    Parameters
    ----------
    values : ndarray of shape (n_trees, n_rows)
    losses : ndarray of shape (n_trees,)
    settings : dict
        With ``trim`` and ``loss_weighting`` (:func:`drift_settings`).

    Returns
    -------
    forecast : ndarray of shape (n_rows,)
    """
    n_trees = values.shape[0]
    out = np.empty(values.shape[1])
    K.combine_forecasts(np.ascontiguousarray(values, dtype=np.float64), _NO_DETECTORS,
                        np.array(losses, dtype=np.float64), float(settings["trim"]),
                        float(settings["loss_weighting"]), np.empty(2 * n_trees, np.int64),
                        np.empty(n_trees), out)
    return out


def rows_for(model, tree, X):
    """``X`` as the foreground tree ``tree`` of ``model`` reads it (its feature
    weights); ``X`` itself for a model without drift adaptation."""
    state = model.__dict__.get("_drift_state")
    if state is None:
        return X
    return state.rows_for(tree, X, model.trees_)
