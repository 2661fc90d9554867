"""scikit-learn conventions for the Mondrian kernel estimators."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from mondrianlearn import MondrianKernel, MondrianKernelClassifier, MondrianKernelRegressor

_SGD_ORDER = ("SGD visits the rows in a random order: a duplicated row is two steps "
              "at different times, not one step of twice the size")


_RANDOM_SPLIT = ("selection='validation' holds out a random split of the rows, which "
                 "duplicating rows changes")
_SMALL_SPLIT = ("selection='validation' picks the lifetime on 20 held-out rows of 200; "
                "the check scores the training rows, which a short lifetime underfits")


def _expected_failed_checks(estimator):
    if isinstance(estimator, MondrianKernelClassifier):
        return {"check_sample_weight_equivalence_on_dense_data": _SGD_ORDER}
    if getattr(estimator, "selection", None) == "validation":
        return {"check_sample_weight_equivalence_on_dense_data": _RANDOM_SPLIT,
                "check_regressors_train": _SMALL_SPLIT}
    return {}


@parametrize_with_checks(
    [
        MondrianKernel(n_trees=5, random_state=0),
        MondrianKernelRegressor(n_trees=10, alpha=1e-2, random_state=0),
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
