"""scikit-learn conventions for the AMF estimators (``check_estimator``)."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from mondrianlearn import AMFClassifier, AMFRegressor

# AMF learns the rows in their order (an online algorithm): a repeated row, learned
# again after the rows between the copies, is not the same as one row of weight 2.
_ORDER_DEPENDENT = {
    "check_sample_weight_equivalence_on_dense_data":
        "online model: repeating a row elsewhere in the stream differs from weighting it",
}


def _expected_failed_checks(estimator):
    return _ORDER_DEPENDENT


@parametrize_with_checks(
    [AMFClassifier(random_state=0), AMFRegressor(random_state=0)],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_conventions(estimator, check):
    check(estimator)
