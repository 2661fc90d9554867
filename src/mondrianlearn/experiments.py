"""The small experiments behind the documentation's figures.

Each function builds its data, fits its models and returns them with the table it
measured; drawing is left to :mod:`mondrianlearn.plotting`. ``mondrian bench NAME
--out DIR`` runs one and writes its figures and table:

- ``amf-toy``: :func:`fit_toy_models` on :func:`toy_datasets` (the AMF paper's
  figure 1), drawn by :class:`mondrianlearn.plotting.DecisionFunctionsDisplay`;
- ``mondrian-painting``: :func:`mondrian_painting`, a 2-D tree drawn by
  :func:`mondrianlearn.plotting.plot_mondrian_tree`;
- ``mf-regression-paths``: :func:`regression_paths`, drawn by
  :func:`mondrianlearn.plotting.plot_path_weights` and
  :func:`mondrianlearn.plotting.plot_predictive_band`.

They need scikit-learn only (no matplotlib) and take seconds. :func:`elec2_demo` is
the experiment of ``mondrian demo``.
"""

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ExperimentResult", "toy_datasets", "default_toy_models", "fit_toy_models",
           "mondrian_painting", "regression_paths", "elec2_demo"]


@dataclass
class ExperimentResult:
    """Fitted models, their data and the table an experiment measured.

    Attributes
    ----------
    models : dict
        The fitted models, by name (for ``fit_toy_models``: by dataset, then by name).
    data : dict
        The arrays the models were fitted on or are drawn over, by name.
    rows : list of dict
        The table's rows, one dict per row.
    columns : list of str
        The table's columns, in order.
    traces : list of mondrianlearn.evaluation.Trace
        For an experiment on a stream, each model's progressive evaluation (for
        :func:`mondrianlearn.plotting.plot_progressive`); else empty.
    """

    models: dict
    data: dict
    rows: list = field(default_factory=list)
    columns: list = field(default_factory=list)
    traces: list = field(default_factory=list)

    def table(self, floatfmt="{:.4f}"):
        """The table as markdown.

        Parameters
        ----------
        floatfmt : str, default="{:.4f}"
            Format of the floating-point cells.

        Returns
        -------
        table : str
            A markdown table with a header row.
        """
        from .evaluation import format_table

        return format_table(self.rows, self.columns, floatfmt=floatfmt)


def toy_datasets(n_samples=300, noise=0.2, random_state=0):
    """The three 2-D problems of the AMF paper's figure 1: moons, circles, linear.

    Parameters
    ----------
    n_samples : int, default=300
        Number of points of each dataset.
    noise : float, default=0.2
        Standard deviation of the Gaussian noise added to the moons and circles.
    random_state : int, default=0
        Seeds the three datasets.

    Returns
    -------
    datasets : dict of str to (X, y)
        ``"moons"``, ``"circles"`` and ``"linear"``: features of shape
        ``(n_samples, 2)`` scaled to ``[0, 1]`` and binary labels.
    """
    from sklearn.datasets import make_circles, make_classification, make_moons
    from sklearn.preprocessing import MinMaxScaler

    X_lin, y_lin = make_classification(n_samples=n_samples, n_features=2, n_redundant=0,
                                       n_informative=2, n_clusters_per_class=1,
                                       random_state=random_state)
    rng = np.random.RandomState(random_state)
    X_lin += 2 * rng.uniform(size=X_lin.shape)
    raw = {
        "moons": make_moons(n_samples=n_samples, noise=noise, random_state=random_state),
        "circles": make_circles(n_samples=n_samples, noise=noise, factor=0.5,
                                random_state=random_state),
        "linear": (X_lin, y_lin),
    }
    return {k: (MinMaxScaler().fit_transform(X), y) for k, (X, y) in raw.items()}


def default_toy_models(random_state=0):
    """The models compared in the AMF paper's figure 1 (those available).

    Parameters
    ----------
    random_state : int, default=0
        ``random_state`` of every model.

    Returns
    -------
    models : dict of str to estimator
        Unfitted classifiers of 10 trees each, by name: AMF with and without
        aggregation, a Mondrian forest, scikit-learn's random forest and extra trees.
    """
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

    from .amf import AMFClassifier
    from .forest import MondrianForestClassifier

    return {
        "AMF": AMFClassifier(n_estimators=10, random_state=random_state),
        "AMF (no aggregation)": AMFClassifier(n_estimators=10, use_aggregation=False,
                                              random_state=random_state),
        "Mondrian forest": MondrianForestClassifier(n_estimators=10,
                                                    random_state=random_state),
        "RandomForest": RandomForestClassifier(n_estimators=10, random_state=random_state),
        "ExtraTrees": ExtraTreesClassifier(n_estimators=10, random_state=random_state),
    }


def fit_toy_models(models=None, datasets=None, *, test_size=0.3, random_state=0):
    """The AMF paper's figure 1 experiment: every model fitted on every toy dataset.

    Each dataset is split in a stratified way; each model is cloned and fitted on the
    training part; the table holds the test ROC AUC of each model on each dataset.

    Parameters
    ----------
    models : dict of str to estimator, default=None
        Unfitted binary classifiers with ``predict_proba``, by name (default:
        :func:`default_toy_models`).
    datasets : dict of str to (X, y), default=None
        Two-feature datasets, by name (default: :func:`toy_datasets`).
    test_size : float, default=0.3
        Share of each dataset held out for the AUC.
    random_state : int, default=0
        Seeds the splits and the default models and datasets.

    Returns
    -------
    result : ExperimentResult
        ``models[dataset][name]`` the fitted models; ``data[dataset]`` the tuple
        ``(X_train, y_train, X_test, y_test)``; one row per dataset, one column of test
        ROC AUC per model.
    """
    from sklearn.base import clone
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split

    models = default_toy_models(random_state) if models is None else models
    datasets = toy_datasets(random_state=random_state) if datasets is None else datasets
    fitted, splits, rows = {}, {}, []
    for data_name, (X, y) in datasets.items():
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_size,
                                                  random_state=random_state, stratify=y)
        splits[data_name] = (X_tr, y_tr, X_te, y_te)
        fitted[data_name] = {m: clone(model).fit(X_tr, y_tr) for m, model in models.items()}
        rows.append({"dataset": data_name,
                     **{m: float(roc_auc_score(y_te, est.predict_proba(X_te)[:, 1]))
                        for m, est in fitted[data_name].items()}})
    return ExperimentResult(fitted, splits, rows, ["dataset", *models])


def mondrian_painting(n_samples=80, random_state=3):
    """A Mondrian tree on two moons, for :func:`mondrianlearn.plotting.plot_mondrian_tree`.

    Parameters
    ----------
    n_samples : int, default=80
        Points of the two moons (noise 0.2, seed 0).
    random_state : int, default=3
        Seed of the tree.

    Returns
    -------
    result : ExperimentResult
        ``models["tree"]`` a fitted ``MondrianTreeClassifier``; ``data["X"]``,
        ``data["y"]`` its training points; one row: nodes, leaves, depth, the first
        split time and the training accuracy.
    """
    from sklearn.datasets import make_moons

    from .forest import MondrianTreeClassifier

    X, y = make_moons(n_samples=n_samples, noise=0.2, random_state=0)
    tree = MondrianTreeClassifier(random_state=random_state).fit(X, y)
    view = tree.tree_
    rows = [{"nodes": view.node_count, "leaves": view.n_leaves, "depth": view.max_depth,
             "first split time": float(view.split_time[view.root]),
             "training accuracy": float(tree.score(X, y))}]
    return ExperimentResult({"tree": tree}, {"X": X, "y": y}, rows, list(rows[0]))


def regression_paths(n_estimators=50):
    """A Mondrian tree and forest on ten points of ``sin x``, and the forest's
    predictive distribution far from and near the data.

    Parameters
    ----------
    n_estimators : int, default=50
        Trees of the forest.

    Returns
    -------
    result : ExperimentResult
        ``models["tree"]`` a ``MondrianTreeRegressor`` of depth at most 2 (for
        :func:`mondrianlearn.plotting.plot_path_weights`) and ``models["forest"]`` a
        ``MondrianForestRegressor`` (for
        :func:`mondrianlearn.plotting.plot_predictive_band`), both fitted on
        ``data["X"]``, ``data["y"]``; ``data["grid"]`` the points from -6 to 6 to draw
        them over; rows: the forest's mean and standard deviation at 0, 3, 6 and 60,
        then those of the training targets (the unbiased standard deviation, on
        which the forest falls back far from the data).
    """
    from .forest import MondrianForestRegressor, MondrianTreeRegressor

    X = np.linspace(-np.pi, np.pi, 10)[:, None]
    y = np.sin(X[:, 0])
    grid = np.linspace(-6, 6, 400)[:, None]
    tree = MondrianTreeRegressor(max_depth=2, random_state=1).fit(X, y)
    forest = MondrianForestRegressor(n_estimators=n_estimators, random_state=0).fit(X, y)
    probe = np.array([[0.0], [3.0], [6.0], [60.0]])
    mean, std = forest.predict(probe, return_std=True)
    rows = [{"x": float(p[0]), "mean": float(m), "std": float(s)}
            for p, m, s in zip(probe, mean, std)]
    rows.append({"x": "training data", "mean": float(y.mean()),
                 "std": float(y.std(ddof=1))})
    return ExperimentResult({"tree": tree, "forest": forest}, {"X": X, "y": y, "grid": grid},
                            rows, ["x", "mean", "std"])


def elec2_demo(n_samples=20000, *, batch_size=100, n_estimators=10, rf_trees=50,
               refit_every=2000, n_jobs=None, random_state=0, progress=True):
    """The experiment of ``mondrian demo``: online forests on the bundled Elec2 stream.

    A Mondrian forest, AMF and the drift-adaptive AMF (``drift="adwin"``; Elec2 drifts,
    its prices and demand follow seasons and market rules) learn the stream online in
    mini-batches, test-then-train, against scikit-learn's random forest refitted on
    the whole prefix every ``refit_every`` rows
    (:func:`mondrianlearn.evaluation.progressive_evaluation`, which compiles the
    kernels before its clock starts).

    Parameters
    ----------
    n_samples : int, default=20000
        Length of the stream (the first rows of Elec2; 45312 for all of it).
    batch_size : int, default=100
        Rows per mini-batch.
    n_estimators : int, default=10
        Trees of the Mondrian forest and of both AMFs.
    rf_trees : int, default=50
        Trees of the random forest.
    refit_every : int, default=2000
        Rows between two refits of the random forest.
    n_jobs : int, default=None
        Threads of every model.
    random_state : int, default=0
        Seed of every model.
    progress : bool, default=True
        Show a progress bar.

    Returns
    -------
    result : ExperimentResult
        ``models`` the four models by name (the online ones first, the random
        forest last); ``data["X"]``, ``data["y"]`` the stream; one row per model:
        accuracy, log loss, ROC AUC, seconds, samples per second; ``traces`` the
        curves.
    """
    from sklearn.ensemble import RandomForestClassifier

    from .amf import AMFClassifier
    from .datasets import load_electricity
    from .evaluation import Learner, progressive_evaluation
    from .forest import MondrianForestClassifier

    X, y = load_electricity(n_samples=n_samples)
    common = {"n_estimators": n_estimators, "n_jobs": n_jobs, "random_state": random_state}
    learners = [
        Learner(f"MondrianForest ({n_estimators} trees, online)",
                MondrianForestClassifier(**common)),
        Learner(f"AMF ({n_estimators} trees, online)", AMFClassifier(**common)),
        Learner(f"AMF drift-adaptive ({n_estimators} trees, online, drift='adwin')",
                AMFClassifier(**common, drift="adwin")),
        Learner(f"RandomForest ({rf_trees} trees, refit every {refit_every})",
                RandomForestClassifier(n_estimators=rf_trees, n_jobs=n_jobs,
                                       random_state=random_state),
                refit_every=refit_every),
    ]
    traces = progressive_evaluation(learners, X, y, batch_size=batch_size,
                                    progress=progress, description="demo")
    rows = [{"model": t.name, **t.summary} for t in traces]
    columns = ["model", "accuracy", "log_loss", "roc_auc", "seconds", "samples_per_second"]
    return ExperimentResult({lr.name: lr.model for lr in learners}, {"X": X, "y": y}, rows,
                            columns, traces)
