"""What the integrations may ask of an estimator: the library's internal protocols.

Three parts of the library work with estimators they did not build: the river
adapters (:mod:`mondrianlearn.river`) feed them checked rows one at a time, Dask
sharding (:mod:`mondrianlearn.dask`) trains sub-forests and weighs their
predictions, and :func:`mondrianlearn.forest.merge_forests` joins forests fitted
apart. Each asks for a few methods and class attributes, listed here as
:class:`typing.Protocol` classes, and nothing else: none of them looks for a
method with ``hasattr`` or compares methods to find out what a class can do.

Design. The protocols are declared twice, on purpose, for two readers:

- here, as ``typing.Protocol`` classes (``runtime_checkable``): one page that says
  what each integration relies on, which ``tests/test_protocols.py`` checks every
  estimator of the library against;
- on the shared base :class:`~mondrianlearn.utils.estimator.TreeModelMixin`
  (the base of every family: Mondrian forests, AMF, the Mondrian kernel models,
  boosting), as working defaults that go through the public methods
  (``partial_fit``, ``predict``, ``predict_proba``). The forests that learn rows
  in batches (Mondrian forests, boosting, AMF) replace them with versions that skip
  scikit-learn's validation of rows the caller has already checked:
  ``_partial_fit_validated`` once for all of them
  (:class:`~mondrianlearn.utils.estimator.ForestLearnerMixin`),
  ``_predict_proba_validated`` once for their classifiers
  (:class:`~mondrianlearn.utils.estimator.ForestClassifierMixin`) and
  ``_predict_validated`` in each regressor. So an integration calls the method on
  any estimator of the library, and gets the fast version when there is one.

Protocol classes rather than abstract base classes: an ABC would have to enter
every estimator's class hierarchy (a change to the method resolution order of
every estimator and to what their pickles name), while a protocol is a structural
description that costs nothing at run time. The names keep their leading
underscore: they are a contract between the library's modules, not user API
(as scikit-learn's ``_parameter_constraints`` or ``__sklearn_tags__``).

Capabilities that depend on the class, not on the instance, are class attributes:
``_mergeable`` says whether fitted estimators of exactly that class can be merged
(their trees are independent samples and their number is the ``n_estimators``
parameter), and the class's ``_merge_fitted`` does it.
"""

from typing import Protocol, runtime_checkable


@runtime_checkable
class FittedCheck(Protocol):
    """Whether a model has learned (scikit-learn's developer protocol).

    ``__sklearn_is_fitted__()`` is True once the model holds trees (``trees_``):
    after ``fit``, or after a ``partial_fit`` that learned or accepted rows. The
    river adapters and the Dask shards ask it instead of looking for fitted
    attributes.
    """

    def __sklearn_is_fitted__(self):
        ...


@runtime_checkable
class RiverBacking(FittedCheck, Protocol):
    """What a river adapter asks of its backing estimator.

    The adapter turns dict rows into C-contiguous, finite float64 arrays of the
    model's width and records their range itself; the ``*_validated`` methods take
    such arrays and skip the checks the adapter has made (their defaults call the
    public methods, which check again).

    - ``partial_fit(X, y)``: the first rows (the model sets itself up from them).
    - ``_partial_fit_validated(X, y)``: later rows of a fitted model; ``y`` may be
      a list.
    - ``_predict_proba_validated(X)`` (classifiers) and ``_predict_validated(X)``
      (regressors): predictions on checked rows.
    - ``_add_features(values)``: grow the input space by features first seen
      now, at ``values`` (every box and stored point gets them).
    - ``_raw_feature_range()``: the running range of the features (rows low,
      high) in the units of ``X``, or None.
    - ``_raw_range_in_place(n_features)``: that range as an array the adapter
      widens in place with the rows it checked, or None when the model records
      its range itself (``_in_feature_units()``: a model in feature units) or has
      none of that width yet.
    """

    def partial_fit(self, X, y):
        ...

    def _partial_fit_validated(self, X, y):
        ...

    def _predict_proba_validated(self, X):
        ...

    def _predict_validated(self, X):
        ...

    def _add_features(self, values):
        ...

    def _raw_feature_range(self):
        ...

    def _raw_range_in_place(self, n_features):
        ...

    def _in_feature_units(self):
        ...


@runtime_checkable
class ShardableForest(FittedCheck, Protocol):
    """What Dask sharding asks of a sub-forest (beyond ``fit``, ``partial_fit`` and
    the predictions).

    - ``_mergeable`` (class attribute): only forests that merge are sharded (the
      gathered forest is their merge).
    - ``_trained_trees()``: the trees the forest's predictions average over; their
      number is the forest's weight among the shards (Mondrian forests leave out
      trees that have seen no point, possible with ``bootstrap``).
    """

    _mergeable: bool

    def _trained_trees(self):
        ...


@runtime_checkable
class MergeableForest(ShardableForest, Protocol):
    """What :func:`mondrianlearn.forest.merge_forests` asks of a forest's class.

    - ``_mergeable`` (class attribute): True for a class whose fitted forests can
      be merged, that is whose trees are independent samples counted by the
      ``n_estimators`` parameter. Not inherited blindly: a subclass that fixes its
      number of trees (single trees) or whose trees depend on one another
      (boosting) says False.
    - ``_merge_fitted(forests, same_stream)`` (class method): the merge itself, of
      forests of that class already checked to share their parameters and
      features.
    """

    @classmethod
    def _merge_fitted(cls, forests, same_stream):
        ...
