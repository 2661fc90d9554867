"""The experiments behind the documentation's figures return fitted models and the
table they measured, without drawing anything."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from mondrianlearn import MondrianForestClassifier
from mondrianlearn.experiments import (
    elec2_demo,
    fit_toy_models,
    mondrian_painting,
    regression_paths,
    toy_datasets,
)


def test_toy_datasets_are_three_binary_problems_in_the_unit_square():
    data = toy_datasets(n_samples=60, random_state=1)
    assert list(data) == ["moons", "circles", "linear"]
    for X, y in data.values():
        assert X.shape == (60, 2) and set(np.unique(y)) == {0, 1}
        assert X.min() == pytest.approx(0.0) and X.max() == pytest.approx(1.0)


def test_fit_toy_models_table_is_the_test_auc_of_the_fitted_models():
    models = {"MF": MondrianForestClassifier(n_estimators=10, random_state=0)}
    data = {k: v for k, v in toy_datasets(n_samples=80).items() if k != "linear"}
    result = fit_toy_models(models, data, test_size=0.25)
    assert result.columns == ["dataset", "MF"]
    assert [row["dataset"] for row in result.rows] == ["moons", "circles"]
    assert not hasattr(models["MF"], "trees_")  # the given model is cloned, not fitted
    for row in result.rows:
        X_tr, y_tr, X_te, y_te = result.data[row["dataset"]]
        assert len(X_te) == 20 and len(X_tr) == 60
        fitted = result.models[row["dataset"]]["MF"]
        assert row["MF"] == roc_auc_score(y_te, fitted.predict_proba(X_te)[:, 1])
        assert row["MF"] > 0.75
    assert result.table().startswith("| dataset | MF |\n|---|---|\n| moons | ")


def test_mondrian_painting_table_describes_its_tree():
    result = mondrian_painting(n_samples=40)
    tree, view = result.models["tree"], result.models["tree"].tree_
    (row,) = result.rows
    assert row["nodes"] == view.node_count and row["leaves"] == view.n_leaves
    assert row["training accuracy"] == tree.score(result.data["X"], result.data["y"])


def test_regression_paths_band_widens_away_from_the_data():
    result = regression_paths(n_estimators=10)
    rows = {row["x"]: row for row in result.rows}
    assert rows[60.0]["std"] > rows[0.0]["std"] > 0
    assert result.data["grid"].shape == (400, 1)
    assert result.models["tree"].max_depth == 2


def test_elec2_demo_compares_the_online_models_with_the_retrained_forest():
    result = elec2_demo(1200, n_estimators=3, rf_trees=3, refit_every=400, progress=False)
    names = list(result.models)
    assert len(names) == 4 and names[-1].startswith("RandomForest")
    assert result.models[names[2]].drift == "adwin"
    assert [row["model"] for row in result.rows] == names == [t.name for t in result.traces]
    assert result.data["X"].shape == (1200, 8)
    for row in result.rows:
        assert 0.5 < row["accuracy"] <= 1.0 and row["seconds"] > 0
    assert result.traces[2].drift_events is not None and result.traces[0].drift_events is None
