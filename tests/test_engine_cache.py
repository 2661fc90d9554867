"""The compiled-code cache is stale when any module a kernel includes changes
(``engine._cache``), not only the kernel's own file."""

import os

import pytest

from mondrianlearn.engine import _cache


@pytest.fixture
def package(tmp_path):
    """A small package: ``a`` imports ``b`` (parenthesised, over two lines), ``b``
    imports a submodule of ``sub`` from inside a function; ``d`` is unrelated."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("")
    (root / "a.py").write_text("from .b import (f,\n                g)\n\nX = 1\n")
    (root / "b.py").write_text("def f():\n    from .sub import c  # noqa\n    return c\n\n"
                               "def g():\n    pass\n")
    (root / "sub" / "c.py").write_text("VALUE = 1\n")
    (root / "d.py").write_text("from .a import X\n")
    return root


def _rewrite(path, text):
    path.write_text(text)
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a new state for sure


def test_closure_follows_imports_transitively(package):
    closure = _cache.source_closure(package / "a.py", root=package)
    names = [str(p.relative_to(package.resolve())) for p in closure]
    assert names == ["a.py", "b.py", os.path.join("sub", "__init__.py"),
                     os.path.join("sub", "c.py")]


def test_stamp_changes_with_an_imported_module_only(package):
    before = _cache.source_stamp(package / "a.py", root=package)
    _rewrite(package / "d.py", "from .a import X\nY = 2\n")  # imports a, not imported by it
    assert _cache.source_stamp(package / "a.py", root=package) == before
    _rewrite(package / "sub" / "c.py", "VALUE = 2\n")  # two levels down
    after = _cache.source_stamp(package / "a.py", root=package)
    assert after != before
    _rewrite(package / "sub" / "c.py", "VALUE = 1\n")  # same content, new mtime
    assert _cache.source_stamp(package / "a.py", root=package) == before


def test_kernels_that_inline_other_modules_depend_on_them():
    """The boosting vote runs the forest's smoothing, compiled into its own code:
    a change to the smoothing must make its cached code stale."""
    root = _cache.PACKAGE_ROOT
    closure = _cache.source_closure(root / "ensemble" / "_forest_kernels.py")
    for needed in ("forest/_smoothing.py", "engine/tree.py", "engine/tree_table.py",
                   "engine/paths.py", "ensemble/_kernels.py"):
        assert root.joinpath(*needed.split("/")).resolve() in closure, needed
    assert root.joinpath("forest", "classifier.py").resolve() not in closure


def test_package_kernels_use_the_closure_stamp_and_others_do_not(tmp_path, monkeypatch):
    import importlib

    from mondrianlearn.ensemble._forest_kernels import vote_forest

    assert _cache.install()  # idempotent: already done when the engine was imported
    assert _cache.install()
    locator = vote_forest._cache._impl.locator
    assert getattr(type(locator), "_mondrianlearn", False)
    stamp = locator.get_source_stamp()
    assert stamp[1] == _cache.source_stamp(_cache.PACKAGE_ROOT / "ensemble" /
                                           "_forest_kernels.py")

    (tmp_path / "outside_module.py").write_text(
        "from numba import njit\n\n\n@njit(cache=True)\ndef double(x):\n    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    function = importlib.import_module("outside_module").double
    assert function(3) == 6
    assert not getattr(type(function._cache._impl.locator), "_mondrianlearn", False)
