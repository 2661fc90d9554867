"""scikit-learn's estimator conventions (``check_estimator``) for the Mondrian forests.

Every check applies and passes: no ``expected_failed_checks`` are needed. The
estimators declare through their tags that they do not accept NaN.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from mondrianlearn import (
    MondrianForestClassifier,
    MondrianForestRegressor,
    MondrianTreeClassifier,
    MondrianTreeRegressor,
)

ESTIMATORS = [
    MondrianForestClassifier(n_estimators=3, random_state=0),
    MondrianForestRegressor(n_estimators=3, random_state=0),
    MondrianTreeClassifier(random_state=0),
    MondrianTreeRegressor(random_state=0),
]


@parametrize_with_checks(ESTIMATORS)
def test_scikit_learn_conventions(estimator, check):
    check(estimator)


def test_tags_declare_no_nan_support():
    for estimator in ESTIMATORS:
        tags = estimator.__sklearn_tags__()
        assert tags.input_tags.allow_nan is False
        assert tags.requires_fit is True
