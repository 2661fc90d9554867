"""The compiled-code helpers of ``engine._jit``."""

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from mondrianlearn.engine._jit import borrowed
from mondrianlearn.engine.boxes import float32_above, float32_below, round_down, round_up
from mondrianlearn.engine.tree import borrowed_tree, empty_tree


@njit
def _scale_rows(X, factors, out):
    X, factors, out = borrowed(X), borrowed(factors), borrowed(out)
    for i in range(X.shape[0]):
        row = X[i]  # a view of a borrowed view
        for j in range(row.shape[0]):
            out[i, j] = row[j] * factors[i]
    return out.shape[0]


@njit
def _tree_fields(tree):
    tree = borrowed_tree(tree)
    tree.meta[0] = 7
    tree.lower[1, 2] = 3.5
    return tree.parent.shape[0] + tree.lower.shape[1]


def test_borrowed_views_read_and_write_the_same_memory():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    factors = rng.uniform(size=50)
    out = np.zeros_like(X)
    assert _scale_rows(X, factors, out) == 50
    np.testing.assert_array_equal(out, X * factors[:, None])


def test_borrowed_tree_is_the_same_tree():
    tree = empty_tree(n_features=3, capacity=5)
    assert _tree_fields(tree) == 5 + 3
    assert tree.meta[0] == 7 and tree.lower[1, 2] == 3.5


def test_borrowed_views_leave_reference_counts_alone():
    # Many calls: a missing or extra reference would free or leak the arrays.
    X = np.ones((3, 2))
    out = np.zeros((3, 2))
    for _ in range(1000):
        _scale_rows(X, np.ones(3), out)
    np.testing.assert_array_equal(out, X)


def test_borrowed_rejects_non_arrays():
    @njit
    def bad(v):
        return borrowed(v)

    with pytest.raises(TypingError):
        bad(1.0)


_LINKED_MODULE = '''
import numpy as np

from mondrianlearn.engine._jit import kernel


@kernel
def scaled(x, k):
    if k < 0.0:
        raise ValueError("negative scale")
    return x * k


@kernel
def sum_scaled(X, k):
    total = 0.0
    for i in range(X.shape[0]):
        total += scaled(X[i], k)
    return total
'''

_LINKED_RUN = '''
import numpy as np
import linked_kernels as m

print(m.sum_scaled(np.arange(5.0), 2.0), m.scaled(3.0, 2.0),
      m.sum_scaled.stats.cache_hits.get(m.sum_scaled.signatures[0], 0),
      "_nested_dispatcher" in m.scaled.__dict__)
try:
    m.sum_scaled(np.arange(5.0), -1.0)
except ValueError as error:
    print(error)
'''


def test_kernels_called_by_kernels_run_and_load_from_the_disk_cache(tmp_path):
    # A kernel compiled for other kernels has no machine code of its own: the
    # kernel that calls it carries it, in memory and in numba's disk cache.
    import os
    import subprocess
    import sys
    from pathlib import Path

    import mondrianlearn

    (tmp_path / "linked_kernels.py").write_text(_LINKED_MODULE)
    source = str(Path(mondrianlearn.__file__).resolve().parents[1])
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(tmp_path), source]))

    def run():
        return subprocess.run([sys.executable, "-c", _LINKED_RUN], env=env, cwd=tmp_path,
                              capture_output=True, text=True, check=True).stdout.split("\n")

    cold, warm = run(), run()
    assert cold[0] == "20.0 6.0 0 True" and cold[1] == "negative scale"
    # From the cache: the calling kernel is loaded, the called one not compiled.
    assert warm[0] == "20.0 6.0 1 False" and warm[1] == "negative scale"


@pytest.mark.parametrize("options", [{}, {"bootstrap": True}, {"max_nodes": 40}])
@pytest.mark.parametrize("name", ["MondrianForestClassifier", "MondrianForestRegressor",
                                  "AMFClassifier", "AMFRegressor",
                                  "MondrianBoostingClassifier", "MondrianKernelClassifier",
                                  "MondrianKernelRegressor", "MondrianKernel"])
def test_kernels_free_every_array_they_allocate(name, options):
    # Most kernels run without numba's reference counting (engine._jit.kernel); an
    # array made by a kernel that does count and handed to one that does not would
    # never be freed, and one freed twice would corrupt memory. Once the models are
    # gone, numba's runtime must have freed as many arrays as it allocated.
    import gc
    import inspect

    from numba.core.runtime import _nrt_python, rtsys

    import mondrianlearn

    model_class = getattr(mondrianlearn, name)
    if options and not all(p in model_class().get_params() for p in options):
        pytest.skip("option not offered by this model")
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(700, 4))
    y = (X[:, 0] + 0.3 * rng.normal(size=700) > 0.5).astype(int)
    if not hasattr(model_class, "predict_proba"):
        y = X[:, 0] + 0.1 * rng.normal(size=700)

    def use_models():
        model_class(random_state=0, **options).fit(X[:200], y[:200])
        model = model_class(random_state=0, **options)
        model.partial_fit(X[:100], y[:100])
        model.partial_fit(X[100:300], y[100:300])
        for i in range(300, 330):
            model.partial_fit(X[i:i + 1], y[i:i + 1])
        for rows in (X, X[:5]):
            if hasattr(model, "predict_proba"):
                model.predict_proba(rows)
            elif hasattr(model, "transform"):
                model.transform(rows)
            else:
                model.predict(rows)
                if "return_std" in inspect.signature(model.predict).parameters:
                    model.predict(rows, return_std=True)

    use_models()  # compiles (or loads) the kernels first
    gc.collect()
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        use_models()
        gc.collect()
        after = rtsys.get_allocation_stats()
    finally:
        _nrt_python.memsys_disable_stats()
    assert after.alloc - before.alloc == after.free - before.free
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free


@njit
def _neighbours(f, below, above, v, down, up):
    for i in range(f.shape[0]):
        below[i] = float32_below(f[i])
        above[i] = float32_above(f[i])
    for i in range(v.shape[0]):
        down[i] = round_down(v[i])
        up[i] = round_up(v[i])


def test_float32_neighbours_and_outward_rounding_equal_numpys_bit_for_bit():
    # The box bounds' rounding steps to a float32's neighbour on its bit pattern
    # (``engine.boxes``) instead of calling the C library's nextafterf.
    rng = np.random.default_rng(0)
    tiny = np.finfo(np.float32).smallest_subnormal
    edges = np.array([0.0, -0.0, tiny, -tiny, 2 * tiny, np.finfo(np.float32).tiny,
                      np.finfo(np.float32).max, -np.finfo(np.float32).max, 1.0, -1.0],
                     dtype=np.float32)
    v = np.concatenate([rng.normal(size=50_000) * 10.0 ** rng.integers(-46, 39, 50_000),
                        edges, [1e300, -1e300, 3.5e38, -3.5e38, 1.0 + 1e-12, -1.0 - 1e-12]])
    with np.errstate(over="ignore"):
        f = np.concatenate([v.astype(np.float32), edges])
    f = f[np.isfinite(f)]
    below, above = np.empty_like(f), np.empty_like(f)
    down, up = np.empty(v.shape, np.float32), np.empty(v.shape, np.float32)
    _neighbours(f, below, above, v, down, up)
    bits = lambda a: a.view(np.int32)  # noqa: E731
    with np.errstate(over="ignore"):  # max float32 to infinity
        assert np.array_equal(bits(below), bits(np.nextafter(f, np.float32(-np.inf))))
        assert np.array_equal(bits(above), bits(np.nextafter(f, np.float32(np.inf))))
        near = v.astype(np.float32)
        expect_down = np.where(near > v, np.nextafter(near, np.float32(-np.inf)), near)
        expect_up = np.where(near < v, np.nextafter(near, np.float32(np.inf)), near)
    assert np.array_equal(bits(down), bits(expect_down))
    assert np.array_equal(bits(up), bits(expect_up))
    assert (down <= v).all() and (up >= v).all()
