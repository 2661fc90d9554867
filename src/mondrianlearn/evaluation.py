"""Progressive (test-then-train) evaluation of learners on a stream.

Every learner sees the same stream in mini-batches: each batch is first predicted
with the model as it is, then learned. Online learners call ``partial_fit`` on the
batch; batch learners (such as scikit-learn's random forests) are refit from scratch
on the whole prefix every ``refit_every`` samples, which is what one has to do
without an online learner. All learners are scored on the same samples: those after
the first ``warmup`` samples.

Features may be scaled online (``scaler``): each batch is predicted with the
statistics of the rows seen before it, and only then added to them, so that no
prediction depends on rows that come later in the stream.
"""

import time
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Learner:
    """A model taking part in a progressive evaluation.

    Parameters
    ----------
    name : str
        Label of the learner in the results (traces, tables, plots).
    model : estimator
        A scikit-learn-style model: ``partial_fit`` for online learners, ``fit``
        for batch ones; ``predict_proba`` (classification) or ``predict``.
    refit_every : int or None
        ``None``: learn online with ``partial_fit``. An integer: refit with ``fit``
        on the whole prefix every that many samples (a batch baseline).
    """

    name: str
    model: object
    refit_every: int = None


@dataclass
class Trace:
    """What a learner did during the evaluation.

    Attributes
    ----------
    name : str
        The learner's name.
    samples : list of int
        Number of samples seen at each checkpoint.
    metric : list of float
        Progressive metric (accuracy or mean squared error) over the scored samples
        up to each checkpoint.
    seconds : list of float
        Cumulative time spent learning and predicting, at each checkpoint.
    train_seconds : float
        Total time spent learning.
    predict_seconds : float
        Total time spent predicting.
    summary : dict
        Final metrics over all scored samples (see :func:`progressive_evaluation`),
        with ``seconds``, ``samples_per_second`` and, when the model reports
        ``model_size_``, ``model_MB``.
    drift_events : structured ndarray or None
        The model's ``drift_events_`` at the end, for models with drift adaptation
        (see :mod:`mondrianlearn.drift`); else None.
    """

    name: str
    samples: list = field(default_factory=list)
    metric: list = field(default_factory=list)
    seconds: list = field(default_factory=list)
    train_seconds: float = 0.0
    predict_seconds: float = 0.0
    summary: dict = field(default_factory=dict)
    drift_events: object = None


def _is_classifier(model):
    return (getattr(model, "_estimator_type", None) == "classifier"
            or hasattr(model, "predict_proba"))


def warm_up(learners, X, y, task):
    """Compile the library's kernels (or load them from numba's disk cache) on copies
    of the learners' models, so that timing them does not time the compiler.

    Each model of this library is cloned and trained on the first rows as the
    evaluation will train it (a batch, then online mini-batches and one row) and
    asked to predict a batch and one row; other models are left alone.

    Parameters
    ----------
    learners : list of Learner
        The learners whose models are compiled; they are not changed.
    X : ndarray of shape (n_samples, n_features)
        The stream's features (the first 40 rows are used).
    y : ndarray of shape (n_samples,)
        The stream's targets.
    task : {"classification", "regression"}
        What the models learn (classification declares the classes of ``y``).
    """
    from sklearn.base import clone

    classification = task == "classification"
    classes = np.unique(y) if classification else None
    n = min(X.shape[0], 40)
    half = max(n // 2, 1)
    for lr in learners:
        if (not type(lr.model).__module__.startswith("mondrianlearn.")
                or not hasattr(lr.model, "get_params")):
            continue
        model = clone(lr.model)
        if lr.refit_every is not None:
            model.fit(X[:n], y[:n])
        else:
            extra = {"classes": classes} if classification else {}
            model.partial_fit(X[:half], y[:half], **extra)
            model.partial_fit(X[half:n], y[half:n])
            model.partial_fit(X[n - 1:n], y[n - 1:n])
        predict = model.predict_proba if classification else model.predict
        predict(X[:n])
        predict(X[:1])


def progressive_evaluation(learners, X, y, *, batch_size=100, warmup=None, task=None,
                           n_checkpoints=50, progress=True, description="stream",
                           compile_first=True, scaler=None):
    """Evaluate learners test-then-train on the stream ``(X, y)``.

    Parameters
    ----------
    learners : list of Learner
        The learners to compare; each sees the same batches.
    X : ndarray of shape (n_samples, n_features)
        The stream's features, in stream order.
    y : ndarray of shape (n_samples,)
        The stream's targets.
    batch_size : int, default=100
        Size of the mini-batches (a batch is predicted, then learned).
    warmup : int, default=None
        Samples before scoring starts; default: the largest ``refit_every`` or one
        batch, so that every learner has a model when scoring starts.
    task : {"classification", "regression"}, default=None
        Inferred from the first learner when ``None``.
    n_checkpoints : int, default=50
        Points recorded on each learner's curve.
    progress : bool, default=True
        Show a progress bar (tqdm) with the running metrics.
    description : str
        Label of the progress bar.
    compile_first : bool, default=True
        Run :func:`warm_up` first, so that the times (and samples per second) do not
        include compiling the kernels on a first run.
    scaler : transformer with ``partial_fit`` and ``transform``, default=None
        Scale the features online, for instance with
        :class:`sklearn.preprocessing.MinMaxScaler` (a clone is used). Each batch
        is predicted with the scaler as fitted on the rows before it; the batch is
        then added to the scaler with ``partial_fit`` and learned scaled with the
        updated statistics. Batch learners are refit on the prefix scaled with the
        statistics of that prefix. ``None``: the features are used as they are.

    Returns
    -------
    traces : list of Trace
        One per learner, with curves and a ``summary`` dict of final metrics
        (accuracy, log loss and ROC AUC, one-vs-rest macro-averaged when there are
        more than two classes; or MSE and MAE), samples per second and model size
        when the model reports ``model_size_``.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    n = X.shape[0]
    batch_size = int(batch_size)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}.")
    if scaler is not None:
        from sklearn.base import clone

        scaler = clone(scaler)
    if task is None:
        task = "classification" if _is_classifier(learners[0].model) else "regression"
    classification = task == "classification"
    classes = np.unique(y) if classification else None
    if warmup is None:
        warmup = max([batch_size] + [lr.refit_every or 0 for lr in learners])
    warmup = min(int(warmup), n)
    if compile_first:
        warm_up(learners, X, y, task)
    traces = [Trace(lr.name) for lr in learners]
    scored = {lr.name: _Scores(classes) for lr in learners}
    checkpoint_every = max(batch_size, (n // max(n_checkpoints, 1)) // batch_size * batch_size)
    fitted = [False] * len(learners)
    last_refit = [0] * len(learners)

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=n, desc=description, unit="samples", dynamic_ncols=True)
    start = 0
    while start < n:
        stop = min(start + batch_size, n)
        Xb, yb = X[start:stop], y[start:stop]
        # The batch is tested with the scaling of the rows before it (start > 0
        # whenever a learner is fitted), then learned with the batch included.
        X_test = scaler.transform(Xb) if scaler is not None and start > 0 else Xb
        if scaler is not None:
            scaler.partial_fit(Xb)
        X_train = scaler.transform(Xb) if scaler is not None else Xb
        for k, (lr, trace) in enumerate(zip(learners, traces)):
            # Test on the part of the batch past the warm-up, then train.
            if fitted[k] and stop > warmup:
                lo = max(start, warmup) - start
                tic = time.perf_counter()
                scored[lr.name].add(lr.model, X_test[lo:], yb[lo:], classification)
                trace.predict_seconds += time.perf_counter() - tic
            tic = time.perf_counter()
            if lr.refit_every is None:
                if classification and not fitted[k]:
                    lr.model.partial_fit(X_train, yb, classes=classes)
                else:
                    lr.model.partial_fit(X_train, yb)
                fitted[k] = True
            elif stop - last_refit[k] >= lr.refit_every or not fitted[k] and stop >= lr.refit_every:
                prefix = scaler.transform(X[:stop]) if scaler is not None else X[:stop]
                lr.model.fit(prefix, y[:stop])
                fitted[k] = True
                last_refit[k] = stop
            trace.train_seconds += time.perf_counter() - tic
            if stop % checkpoint_every == 0 or stop == n:
                trace.samples.append(stop)
                trace.metric.append(scored[lr.name].main_metric(classification))
                trace.seconds.append(trace.train_seconds + trace.predict_seconds)
        if bar is not None:
            bar.update(stop - start)
            bar.set_postfix(_progress_postfix(learners, scored, classification), refresh=False)
        start = stop
    if bar is not None:
        bar.close()
    for lr, trace in zip(learners, traces):
        trace.summary = scored[lr.name].summary(classification)
        total = trace.train_seconds + trace.predict_seconds
        trace.summary["seconds"] = total
        trace.summary["samples_per_second"] = n / total if total > 0 else float("inf")
        trace.drift_events = getattr(lr.model, "drift_events_", None)
        size = getattr(lr.model, "model_size_", None)
        if size is not None:
            trace.summary["model_MB"] = size / 2**20
    return traces


def _progress_postfix(learners, scored, classification):
    """The running metric of each learner for the progress bar, under its full name;
    a dash while the learner has no scored sample yet (during the warm-up)."""
    postfix = {}
    for lr in learners:
        value = scored[lr.name].main_metric(classification)
        postfix[lr.name] = "-" if np.isnan(value) else f"{value:.4f}"
    return postfix


def ordered_target_message(y, task):
    """Say whether the target sequence is too ordered for progressive metrics.

    Files sorted by class (common in UCI files) or by target make a progressive
    evaluation measure the order of the rows rather than the model. A classification
    target is called ordered when its label changes from one row to the next fewer
    than a tenth as often as in a random order of the same labels (the expected
    number of changes in a random order is ``(n - 1) (1 - sum_k n_k (n_k - 1) /
    (n (n - 1)))`` for class counts ``n_k``); a regression target when its Spearman
    rank correlation with the row index is at least 0.9 in absolute value. Real
    streams (such as Elec2, with about a third of the random order's changes) are
    not flagged.

    Parameters
    ----------
    y : array of shape (n_samples,)
        The target sequence, in stream order.
    task : {"classification", "regression"}
        How the target is read.

    Returns
    -------
    message : str or None
        One sentence describing the order, or ``None`` when the order looks fine.

    Examples
    --------
    >>> import numpy as np
    >>> print(ordered_target_message(np.repeat([0, 1, 2], 100), "classification"))
    the target is sorted or grouped: 2 label changes between consecutive rows,
    where a random order gives about 200
    >>> rng = np.random.RandomState(0)
    >>> print(ordered_target_message(rng.randint(3, size=300), "classification"))
    None
    """
    y = np.asarray(y)
    n = y.shape[0]
    if n < 3:
        return None
    if task == "classification":
        _, counts = np.unique(y, return_counts=True)
        expected = (n - 1) * (1.0 - np.sum(counts * (counts - 1.0)) / (n * (n - 1.0)))
        changes = int(np.sum(y[1:] != y[:-1]))
        if expected >= 10 and changes < 0.1 * expected:
            return (f"the target is sorted or grouped: {changes} label changes between "
                    f"consecutive rows, where a random order gives about {expected:.0f}")
        return None
    from scipy.stats import spearmanr

    y = np.asarray(y, dtype=np.float64)
    if np.ptp(y) == 0:
        return None
    rho = float(spearmanr(np.arange(n), y)[0])
    if abs(rho) >= 0.9:
        return (f"the target is sorted: its rank correlation with the row number is "
                f"{rho:+.2f}")
    return None


class _Scores:
    """Running metrics over the scored samples."""

    def __init__(self, classes):
        self.classes = classes
        self.n = 0
        self.correct = 0
        self.log_loss = 0.0
        self.sq = 0.0
        self.abs = 0.0
        self.probas = []
        self.truth = []

    def add(self, model, X, y, classification):
        if X.shape[0] == 0:
            return
        self.n += X.shape[0]
        if not classification:
            pred = np.asarray(model.predict(X), dtype=np.float64)
            self.sq += float(np.sum((pred - y) ** 2))
            self.abs += float(np.sum(np.abs(pred - y)))
            return
        if hasattr(model, "predict_proba"):
            proba = _align_proba(model, X, self.classes)
            pred = self.classes[np.argmax(proba, axis=1)]
            idx = np.searchsorted(self.classes, y)
            p_true = np.clip(proba[np.arange(len(y)), idx], 1e-15, 1.0)
            self.log_loss += float(-np.sum(np.log(p_true)))
            self.probas.append(proba)
            self.truth.append(idx)
        else:
            pred = model.predict(X)
            self.log_loss = float("nan")
        self.correct += int(np.sum(pred == y))

    def main_metric(self, classification):
        if self.n == 0:
            return float("nan")
        return self.correct / self.n if classification else self.sq / self.n

    def summary(self, classification):
        if self.n == 0:
            return {}
        if not classification:
            return {"mse": self.sq / self.n, "mae": self.abs / self.n}
        out = {"accuracy": self.correct / self.n, "log_loss": self.log_loss / self.n}
        if self.probas:
            auc = _roc_auc(np.concatenate(self.truth), np.vstack(self.probas))
            if auc is not None:
                out["roc_auc"] = auc
        return out


def _roc_auc(truth, proba):
    """ROC AUC of probabilities ``proba`` (one column per class) for class indices
    ``truth``; one-vs-rest and macro-averaged when there are more than two classes.

    The average runs over the classes that occur in ``truth``: a class with no
    scored sample (seen only in the warm-up, or not at all) has no ROC curve. A
    class that the models had not met yet when they predicted has probability zero
    there (see :func:`_align_proba`), which counts against them. With every class
    present this is ``roc_auc_score(truth, proba, multi_class="ovr",
    average="macro")``. ``None`` when fewer than two classes occur.
    """
    from sklearn.metrics import roc_auc_score

    present = np.unique(truth)
    if present.size < 2:
        return None
    if proba.shape[1] == 2:
        return float(roc_auc_score(truth, proba[:, 1]))
    return float(np.mean([roc_auc_score(truth == k, proba[:, k]) for k in present]))


def _align_proba(model, X, classes):
    """Probabilities over ``classes`` even when the model has seen fewer of them."""
    proba = np.asarray(model.predict_proba(X), dtype=np.float64)
    model_classes = np.asarray(model.classes_)
    if model_classes.shape[0] == classes.shape[0] and np.array_equal(model_classes, classes):
        return proba
    out = np.zeros((X.shape[0], classes.shape[0]))
    out[:, np.searchsorted(classes, model_classes)] = proba
    return out


def format_table(rows, columns, floatfmt="{:.4f}"):
    """A markdown table from a list of dicts.

    Parameters
    ----------
    rows : list of dict
        One dict per table row, keyed by column name; a missing key gives an empty
        cell.
    columns : list of str
        The columns shown, in order (also the header).
    floatfmt : str, default="{:.4f}"
        Format of float cells (``str.format``); other values are shown with
        ``str``.

    Returns
    -------
    table : str
        The table in markdown, one line per row after the header and separator.
    """
    def cell(v):
        if isinstance(v, float):
            return floatfmt.format(v)
        return str(v)

    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(cell(row.get(c, "")) for c in columns) + " |")
    return "\n".join(lines)


class RiverModel:
    """A river model seen through the scikit-learn methods the evaluation uses.

    ``partial_fit`` loops ``learn_one`` over the rows (river learns one sample at a
    time); ``predict_proba``/``predict`` loop ``predict_proba_one``/``predict_one``.

    Parameters
    ----------
    model : river estimator
        A river classifier or regressor (``learn_one``, ``predict_one`` and, for
        classifiers, ``predict_proba_one``).
    feature_names : list of str, default=None
        The keys of the features in river's rows, in column order; ``None``: the
        column index ``j``. River orders some of its choices by key (its forests
        sort the features), so the names can change the model.
    """

    def __init__(self, model, feature_names=None):
        self.model = model
        self.feature_names = feature_names
        self.classes_ = np.array([])

    def _rows(self, X):
        names = self.feature_names
        if names is None:
            return ({j: float(v) for j, v in enumerate(row)} for row in X)
        return ({name: float(v) for name, v in zip(names, row)} for row in X)

    def partial_fit(self, X, y, classes=None):
        """Learn the rows one by one, in order (``learn_one``).

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Rows; feature ``j`` is passed to river under the key ``j``, or
            ``feature_names[j]``.
        y : ndarray of shape (n_samples,)
            Targets of the rows.
        classes : array-like, default=None
            Labels to add to ``classes_`` (classification; the columns of
            ``predict_proba``).

        Returns
        -------
        self
        """
        if classes is not None:
            self.classes_ = np.unique(np.concatenate([self.classes_, classes])) \
                if self.classes_.size else np.unique(classes)
        for x, target in zip(self._rows(X), y):
            self.model.learn_one(x, target.item() if hasattr(target, "item") else target)
        return self

    def predict_proba(self, X):
        """Class probabilities of each row (``predict_proba_one``).

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        proba : ndarray of shape (n_samples, len(classes_))
            Columns follow ``classes_`` (labels outside it are dropped); rows sum to
            one, uniform when the model gives no probability.
        """
        out = np.zeros((X.shape[0], len(self.classes_)))
        for i, x in enumerate(self._rows(X)):
            for label, p in self.model.predict_proba_one(x).items():
                k = np.searchsorted(self.classes_, label)
                if k < len(self.classes_) and self.classes_[k] == label:
                    out[i, k] = p
        total = out.sum(axis=1, keepdims=True)
        out[total[:, 0] == 0] = 1.0 / max(len(self.classes_), 1)
        total[total == 0] = 1.0
        return out / total

    def predict(self, X):
        """Most probable class of each row, or the regression prediction.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            With ``classes_`` declared, the most probable class of each row;
            otherwise ``predict_one`` of each row as a float (``None`` gives 0).
        """
        if self.classes_.size:
            return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
        return np.array([self.model.predict_one(x) or 0.0 for x in self._rows(X)], dtype=float)
