"""Pickled size of Mondrian forests: derived arrays left out against saved.

Mondrian forests save their trees without the boxes and class counts that the
stored points give back (``mondrianlearn.engine.saved_trees``). This script fits a 10-tree
``MondrianForestClassifier`` (defaults) on each dataset and reports the pickle's
size as saved now and as it would be with every array saved (the previous format,
obtained by turning the leaving-out off), the time to save and to load, whether the
loaded forest predicts exactly as the fitted one, and the pickle of scikit-learn's
``RandomForestClassifier(100)`` on the same rows for scale.

Target (engine memory): pickled size at most half of the size with every array saved,
predictions unchanged.
"""

import pickle
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Report, fmt_bytes, make_parser, markdown_table, progress  # noqa: E402

SETS = ("synthetic 11,000 x 28", "letter", "satimage", "usps", "dna", "adult")


def load(name, quick):
    """``(X_train, y_train, X_test)`` of a set (raw features)."""
    if name.startswith("synthetic"):
        from sklearn.datasets import make_classification

        n = 3000 if quick else 11000
        X, y = make_classification(n, 28, n_informative=12, random_state=0)
        cut = int(0.8 * n)
        return X[:cut], y[:cut], X[cut:]
    from mondrianlearn.datasets import benchmark_data_home, load_benchmark

    if benchmark_data_home() is None:
        return None
    data = load_benchmark(name)
    if "X_train" in data:
        X, y, X_test = data["X_train"], data["y_train"], data["X_test"]
    else:
        X, y = data["X"], data["y"]
        cut = int(0.8 * len(X))
        X, y, X_test = X[:cut], y[:cut], X[cut:]
    X, X_test = np.asarray(X, float), np.asarray(X_test, float)
    if quick:
        X, y = X[:3000], np.asarray(y)[:3000]
    return X, np.asarray(y), X_test[:2000]


def saved_sizes(model):
    """``(size now, size with every box, dump seconds, load seconds, same)``."""
    import mondrianlearn.forest._base as base

    start = time.perf_counter()
    now = pickle.dumps(model, protocol=5)
    dump = time.perf_counter() - start
    start = time.perf_counter()
    loaded = pickle.loads(now)
    load_time = time.perf_counter() - start
    keep = base.without_derived
    base.without_derived = lambda tree, *args: tree  # every array saved
    try:
        every_box = pickle.dumps(model, protocol=5)
    finally:
        base.without_derived = keep
    return len(now), len(every_box), dump, load_time, loaded


def main():
    parser = make_parser(__doc__.splitlines()[0])
    args = parser.parse_args()
    from sklearn.ensemble import RandomForestClassifier

    from mondrianlearn import MondrianForestClassifier

    report = Report("bench_pickle_size", "Pickled size of Mondrian forests", args)
    rows, verdicts = [], []
    for name in SETS:
        progress(name)
        data = load(name, args.quick)
        if data is None:
            report.text(f"{name}: skipped (the shared datasets were not found)")
            continue
        X, y, X_test = data
        model = MondrianForestClassifier(n_estimators=10, random_state=args.seed).fit(X, y)
        now, every_box, dump, load_time, loaded = saved_sizes(model)
        same = np.array_equal(model.predict_proba(X_test), loaded.predict_proba(X_test))
        forest = RandomForestClassifier(100, random_state=args.seed, n_jobs=args.n_jobs)
        rf = len(pickle.dumps(forest.fit(X, y), protocol=5))
        ratio = now / every_box
        verdicts.append((name, ratio, same))
        rows.append([name, f"{X.shape[0]:,} x {X.shape[1]}", fmt_bytes(every_box),
                     fmt_bytes(now), f"{ratio:.2f}", f"{dump:.2f} s", f"{load_time:.2f} s",
                     "yes" if same else "NO", fmt_bytes(rf)])
    report.section(
        "10-tree MondrianForestClassifier (defaults), pickled",
        markdown_table(["dataset", "training rows", "every array saved", "saved now",
                        "now / before", "dump", "load", "same predictions",
                        "RandomForest(100)"], rows),
        "'every array saved' is the previous format (the leaving-out turned off); "
        "'dump' and 'load' are the times of the current format (load computes the "
        "boxes again). Same predictions: predict_proba of the loaded forest equals the "
        "fitted one's, bit for bit, on up to 2,000 held-out rows. Raw features.")
    target = [["pickled size at most half of the every-array size, predictions unchanged",
               ", ".join(f"{n}: {r:.2f}" for n, r, _ in verdicts),
               "yes" if all(r <= 0.5 and s for _, r, s in verdicts) else "MISSED"]]
    report.section("Target", markdown_table(["target", "measured (now / before)", "met"],
                                            target))
    report.finish()


if __name__ == "__main__":
    main()
