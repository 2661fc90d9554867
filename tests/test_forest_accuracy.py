"""Accuracy of Mondrian forests on the MF paper's datasets (letter, satimage, usps, dna).

Features are min-max scaled to [0, 1] with the training minimum and maximum (test
values clipped), as in the paper. The floors are for a modest number of trees and
sit a few points under what the forests reach, so the tests stay quick and stable;
the full-size targets (100 trees) are checked by ``benchmarks/``.
"""

import numpy as np
import pytest

from mondrianlearn import MondrianForestClassifier
from mondrianlearn.datasets import benchmark_data_home, load_benchmark

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(benchmark_data_home() is None,
                       reason="the shared benchmark datasets folder is absent"),
]

# dataset: (number of trees, accuracy floor); 20 trees reach about
# 0.948, 0.900, 0.902 and 0.695.
FLOORS = {
    "letter": (20, 0.92),
    "satimage": (20, 0.87),
    "usps": (10, 0.86),
    "dna": (20, 0.64),
}


def scaled(name):
    data = load_benchmark(name)
    X_train = np.asarray(data["X_train"], dtype=np.float64)
    X_test = np.asarray(data["X_test"], dtype=np.float64)
    lower, upper = X_train.min(axis=0), X_train.max(axis=0)
    span = np.where(upper > lower, upper - lower, 1.0)
    X_train = (X_train - lower) / span
    X_test = np.clip((X_test - lower) / span, 0.0, 1.0)
    return X_train, np.asarray(data["y_train"]), X_test, np.asarray(data["y_test"])


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_batch_accuracy_floor(name):
    n_trees, floor = FLOORS[name]
    X_train, y_train, X_test, y_test = scaled(name)
    clf = MondrianForestClassifier(n_estimators=n_trees, random_state=0, n_jobs=2)
    clf.fit(X_train, y_train)
    accuracy = clf.score(X_test, y_test)
    assert accuracy >= floor, f"{name}: {accuracy:.4f} < {floor}"


def test_online_accuracy_matches_batch_on_satimage():
    """Mini-batches in a fixed random order reach the accuracy of batch ``fit``."""
    X_train, y_train, X_test, y_test = scaled("satimage")
    batch = MondrianForestClassifier(n_estimators=20, random_state=0, n_jobs=2)
    batch.fit(X_train, y_train)
    online = MondrianForestClassifier(n_estimators=20, random_state=0, n_jobs=2)
    order = np.random.RandomState(0).permutation(len(y_train))
    for rows in np.array_split(order, 20):
        online.partial_fit(X_train[rows], y_train[rows])
    assert online.n_samples_seen_ == len(y_train)
    # The two forests are different samples from the same law: close, not equal.
    assert abs(online.score(X_test, y_test) - batch.score(X_test, y_test)) < 0.02
