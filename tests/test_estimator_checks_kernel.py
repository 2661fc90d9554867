"""scikit-learn conventions for the Mondrian kernel estimators."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from mondrianlearn import MondrianKernel, MondrianKernelClassifier, MondrianKernelRegressor

_SGD_ORDER = ("SGD visits the rows in a random order: a duplicated row is two steps "
              "at different times, not one step of twice the size")


_RANDOM_SPLIT = ("selection='validation' holds out a random split of the rows, which "
                 "duplicating rows changes")


_PILOT = ("feature_scale='auto' (the default) learns the scales from an ExtraTrees of "
          "the first batch, whose random draws differ between a row of weight 2 and the "
          "row twice (sklearn's splitter draws at a node of two equal rows, not at a "
          "leaf of one); the check holds with feature_scale='range'")


def _expected_failed_checks(estimator):
    if isinstance(estimator, MondrianKernelClassifier):
        return {"check_sample_weight_equivalence_on_dense_data": _SGD_ORDER}
    if getattr(estimator, "selection", None) == "validation":
        # check_regressors_train failed here in range units (the lifetime picked on 20
        # held-out rows of 200 underfit the training rows it scores); it passes with
        # the supervised scales of feature_scale="auto"
        return {"check_sample_weight_equivalence_on_dense_data": _RANDOM_SPLIT}
    if getattr(estimator, "feature_scale", None) in ("auto", "supervised"):
        return {"check_sample_weight_equivalence_on_dense_data": _PILOT}
    return {}


@parametrize_with_checks(
    [
        MondrianKernel(n_trees=5, random_state=0),
        MondrianKernelRegressor(n_trees=10, alpha=1e-2, random_state=0),
        MondrianKernelRegressor(n_trees=10, alpha=1e-2, feature_scale="range",
                                random_state=0),
        MondrianKernelRegressor(n_trees=10, alpha=1e-2, selection="validation",
                                random_state=0),
        MondrianKernelRegressor(n_trees=10, lifetime=2.0, alpha=1e-2, random_state=0),
        MondrianKernelClassifier(n_trees=10, random_state=0),
        MondrianKernelClassifier(n_trees=10, lifetime=20.0, loss="squared_hinge",
                                 random_state=0),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_conventions(estimator, check):
    check(estimator)
