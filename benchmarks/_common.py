"""Helpers shared by the benchmark scripts.

Dataset loading with the MF paper's preprocessing (every feature min-max scaled to
[0, 1] with the training minimum and maximum; test values clipped to [0, 1]),
timing, peak memory, and markdown tables that are printed and optionally saved to
``benchmarks/results/<name>.md``.
"""

import argparse
import os
import platform
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

PAPER_DATASETS = ("letter", "satimage", "usps", "dna")
"""The four datasets of the MF paper's figure 3."""

DNA_RELEVANT = "dna-61-120"
"""dna restricted to attributes 61-120, the paper's MF-dagger rows (the attributes
closest to the junction; the paper reports MF and ERT-1 on it too)."""

RESULTS_DIR = Path(__file__).resolve().parent / "results"

# Accuracy targets (100 trees) and the ExtraTrees(max_features=1)
# reference numbers quoted there.
ACCURACY_TARGETS = {"letter": 0.95, "satimage": 0.885, "usps": 0.91, "dna": 0.68}
ET1_REFERENCE = {"letter": 0.958, "satimage": 0.894, "usps": 0.920, "dna": 0.70}


def make_parser(description):
    """Command-line options common to every benchmark script."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true",
                        help="reduced version (fewer trees/batches), a minute or two")
    parser.add_argument("--datasets", nargs="+", choices=PAPER_DATASETS + (DNA_RELEVANT,),
                        default=None,
                        help="datasets to run (default: all four of the MF paper)")
    parser.add_argument("--n-jobs", type=int, default=2,
                        help="threads for the models when single-thread speed is not "
                             "what is measured (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-save", action="store_true",
                        help="do not write benchmarks/results/<name>.md")
    return parser


def minmax_scale(X_train, X_test):
    """Scale to [0, 1] with the training min/max; clip the test set to [0, 1].

    Constant training features map to 0.
    """
    low = X_train.min(axis=0)
    span = X_train.max(axis=0) - low
    span[span <= 0] = 1.0
    train = (X_train - low) / span
    test = np.clip((X_test - low) / span, 0.0, 1.0)
    return train, test


def load_scaled(name):
    """``(X_train, y_train, X_test, y_test)`` of a paper dataset, scaled to [0, 1].

    Exits with a message when the shared dataset folder is missing.
    """
    from mondrianlearn.datasets import benchmark_data_home, load_benchmark

    if benchmark_data_home() is None:
        sys.exit("The benchmark datasets were not found: set MONDRIANLEARN_DATA to the "
                 "folder holding letter/, satimage/, usps/ and dna/.")
    columns = slice(None)
    if name == DNA_RELEVANT:
        name, columns = "dna", slice(60, 120)
    data = load_benchmark(name)
    data["X_train"] = np.asarray(data["X_train"])[:, columns]
    data["X_test"] = np.asarray(data["X_test"])[:, columns]
    X_train, X_test = minmax_scale(np.asarray(data["X_train"], dtype=np.float64),
                                   np.asarray(data["X_test"], dtype=np.float64))
    return X_train, np.asarray(data["y_train"]), X_test, np.asarray(data["y_test"])


def timed(function, *args, **kwargs):
    """``(function(*args, **kwargs), seconds)`` with a monotonic clock."""
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def timed_cpu(function, *args, **kwargs):
    """``(result, wall seconds, CPU seconds of this process, all threads)``.

    CPU time is much less disturbed than wall time when other processes share the
    machine; for multi-threaded code it is the total work, not the latency.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def best_time(function, repeats):
    """Result of the last call and the smallest wall time over ``repeats`` calls.

    The minimum is the least disturbed by other processes sharing the machine.
    """
    best = np.inf
    result = None
    for _ in range(max(1, repeats)):
        result, seconds = timed(function)
        best = min(best, seconds)
    return result, best


def best_times(function, repeats):
    """Result of the last call, best wall time and best CPU time over ``repeats``."""
    wall = cpu = np.inf
    result = None
    for _ in range(max(1, repeats)):
        result, w, c = timed_cpu(function)
        wall, cpu = min(wall, w), min(cpu, c)
    return result, wall, cpu


def traced_peak(function):
    """``(function(), peak bytes)`` allocated through Python/NumPy during the call.

    Memory taken by numba's runtime inside kernels is not seen by tracemalloc;
    the kernels only allocate small scratch buffers, node storage is NumPy.
    """
    tracemalloc.start()
    try:
        result = function()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def max_rss_bytes():
    """Peak resident set size of this process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def fmt_bytes(n):
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024.0


def fmt_seconds(s):
    if s < 0.1:
        return f"{s * 1000:.1f} ms"
    if s < 100:
        return f"{s:.2f} s"
    return f"{s:.0f} s"


def fmt_ratio(r):
    return f"{r:.2f}x" if r < 10 else f"{r:.1f}x"


def verdict(ok):
    return "yes" if ok else "MISSED"


def markdown_table(headers, rows):
    """A markdown table; numbers are expected to be formatted already."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]
    lines = ["| " + " | ".join(str(h).ljust(w) for h, w in zip(headers, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")
    return "\n".join(lines)


def environment():
    """One line describing the machine and library versions."""
    import numba
    import sklearn

    return (f"Python {platform.python_version()}, numpy {np.__version__}, scikit-learn "
            f"{sklearn.__version__}, numba {numba.__version__}, {os.cpu_count()} CPUs, "
            f"{platform.machine()}, load average {os.getloadavg()[0]:.1f}")


class Report:
    """Sections of markdown printed as they come and saved together at the end."""

    def __init__(self, name, title, args, suffix=""):
        self.name = name + suffix + ("_quick" if getattr(args, "quick", False) else "")
        self.save = not getattr(args, "no_save", False)
        self.parts = [f"# {title}", "",
                      f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
                      f"{environment()}; command: `python benchmarks/"
                      f"{Path(sys.argv[0]).name} {' '.join(sys.argv[1:])}`".rstrip() + "", ""]
        print("\n".join(self.parts), flush=True)

    def section(self, heading, table=None, note=None):
        block = [f"## {heading}", ""]
        if table is not None:
            block += [table, ""]
        if note:
            block += [note, ""]
        print("\n".join(block), flush=True)
        self.parts += block

    def text(self, line):
        print(line, flush=True)
        self.parts += [line, ""]

    def finish(self):
        if not self.save:
            return None
        RESULTS_DIR.mkdir(exist_ok=True)
        path = RESULTS_DIR / f"{self.name}.md"
        path.write_text("\n".join(self.parts) + "\n")
        print(f"(saved to {path.relative_to(RESULTS_DIR.parent.parent)})", flush=True)
        return path


def progress(message):
    """A line on stderr so that stdout keeps only the tables."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def warm_up():
    """Load the compiled kernels (numba's cache) before anything is timed."""
    from mondrianlearn import MondrianForestClassifier

    rng = np.random.default_rng(0)
    X = rng.random((60, 3))
    y = (X[:, 0] > 0.5).astype(int)
    model = MondrianForestClassifier(n_estimators=2, random_state=0)
    model.fit(X, y).predict_proba(X)
    model.partial_fit(X[:30], y[:30]).partial_fit(X[30:], y[30:]).predict(X)
