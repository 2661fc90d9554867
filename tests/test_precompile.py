"""Kernels compiled ahead of use (``mondrianlearn.precompile``, ``setup.py``): the
build puts numba's cache files into the package, and a new user's first session with
the common models then compiles nothing."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# A new user's first session: every model of the common path, fitted in batch and
# online (mini-batches and single rows, with and without weights), asked for
# predictions of a batch and of one row, on a bundled data set the build never saw;
# prints the kernels numba compiled.
NEWCOMER = textwrap.dedent("""
    import numpy as np
    from numba.core import event

    compiled = []

    class Compiled(event.Listener):
        def on_start(self, e):
            pass

        def on_end(self, e):
            function = e.data["dispatcher"].py_func
            compiled.append(function.__module__ + "." + function.__qualname__)

    event.register("numba:compile", Compiled())
    import mondrianlearn
    from mondrianlearn.datasets import load_electricity
    from mondrianlearn.precompile import COMMON_MODELS

    print("PACKAGE", mondrianlearn.__file__)
    X, labels = load_electricity(n_samples=300)
    for name, params in COMMON_MODELS:
        cls = getattr(mondrianlearn, name)
        if name.endswith("Regressor"):
            y, Xm = X[:, 3].copy(), np.delete(X, 3, axis=1)
        else:
            y, Xm = labels, X
        cls(random_state=0, **params).fit(Xm, y).predict(Xm)
        model = cls(random_state=1, **params)
        model.partial_fit(Xm[:150], y[:150])
        model.partial_fit(Xm[150:], y[150:], sample_weight=np.full(150, 2.0))
        for i in range(3):
            model.partial_fit(Xm[i:i + 1], y[i:i + 1])
        model.predict(Xm)
        model.predict(Xm[:1])
        if hasattr(model, "predict_proba"):
            model.predict_proba(Xm[:1])
    print("COMPILED", sorted(set(compiled)))
""")


def _newcomer(tmp_path, env):
    script = tmp_path / "newcomer.py"
    script.write_text(NEWCOMER)
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=600, check=True).stdout
    lines = dict(line.split(" ", 1) for line in out.splitlines()
                 if line.startswith(("PACKAGE", "COMPILED")))
    return lines["PACKAGE"], lines["COMPILED"]


def _local_build():
    """``_build/local_build.py``, the checkout's helper that builds the package as
    pip does (skips without a checkout)."""
    pytest.importorskip("setuptools")
    path = REPO / "_build" / "local_build.py"
    if not path.is_file() or not (REPO / "src" / "mondrianlearn").is_dir():
        pytest.skip("needs the repository's sources (_build/, setup.py, src/)")
    import importlib.util

    spec = importlib.util.spec_from_file_location("mondrian_local_build", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build_env(**extra):
    return _local_build().build_env(**extra)


def _build_py(tmp_path, env):
    """The package built from the checkout into ``tmp_path / "lib"``."""
    return _local_build().build_package(tmp_path, env)


def _cache_files(lib):
    return sorted(p.name for p in lib.rglob("*.nbi"))


@pytest.mark.slow
def test_build_compiles_the_common_path_into_the_package(tmp_path):
    """The build hook leaves numba's cache files next to the built sources, and a
    new user's first session run from those sources (as from the installed wheel,
    numba's per-folder cache) compiles no kernel at all."""
    lib = _build_py(tmp_path, _build_env())
    names = _cache_files(lib)
    assert any(n.startswith("_forest_kernels.learn_forest_rows") for n in names), names
    assert any(n.startswith("_forest_kernels.learn_classifier_forest") for n in names), names
    package, compiled = _newcomer(tmp_path, _build_env(PYTHONPATH=str(lib)))
    assert Path(package).resolve().is_relative_to(lib.resolve())
    assert compiled == "[]", compiled


def test_build_skips_the_kernels_when_asked(tmp_path):
    """``MONDRIANLEARN_PRECOMPILE=0``: no machine code in the package, not even what
    an earlier build left in the build folder."""
    stale = tmp_path / "lib" / "mondrianlearn" / "__pycache__" / "kernels.f-1.py311.nbi"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"left by an earlier build")
    lib = _build_py(tmp_path, _build_env(MONDRIANLEARN_PRECOMPILE="0"))
    assert (lib / "mondrianlearn" / "precompile.py").is_file()
    assert _cache_files(lib) == []


def test_common_calls_cover_fit_online_and_prediction(monkeypatch):
    """``common_calls`` makes every kind of call of the common path (the slow test
    above shows that they reach every kernel)."""
    from mondrianlearn.precompile import _data, common_calls

    calls = []

    class Recorder:
        def __init__(self, random_state=None, drift=None):
            calls.append(("new", random_state, drift))

        def fit(self, X, y):
            calls.append(("fit", len(X)))
            return self

        def partial_fit(self, X, y):
            calls.append(("partial_fit", len(X)))

        def predict(self, X, return_std=False):
            calls.append(("predict", len(X), return_std))

    X, _, y = _data(n_rows=20)
    common_calls(Recorder, X, y, {"drift": "adwin"})
    assert calls == [("new", 0, "adwin"), ("fit", 20), ("new", 0, "adwin"),
                     ("partial_fit", 10), ("partial_fit", 9), ("partial_fit", 1),
                     ("predict", 20, False), ("predict", 1, False), ("predict", 20, True),
                     ("predict", 1, True)]


@pytest.mark.filterwarnings("ignore:Support for `\\[tool.setuptools\\]`")
def test_backend_asks_for_the_dependencies_only_to_compile(monkeypatch):
    """A wheel's build environment gets the runtime dependencies (the build compiles
    the kernels); an editable install's, and a build told to skip them, do not."""
    pytest.importorskip("setuptools")
    if not (REPO / "_build" / "backend.py").is_file():
        pytest.skip("needs the repository's build files (_build/backend.py)")
    import importlib.util

    spec = importlib.util.spec_from_file_location("mondrian_build_backend",
                                                  REPO / "_build" / "backend.py")
    backend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backend)
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("MONDRIANLEARN_PRECOMPILE", raising=False)
    names = [r.split(">")[0].split("=")[0] for r in backend.get_requires_for_build_wheel()]
    assert {"numba", "numpy", "scikit-learn"} <= set(names)
    assert "numba" not in str(backend.get_requires_for_build_editable())
    monkeypatch.setenv("MONDRIANLEARN_PRECOMPILE", "0")
    assert "numba" not in str(backend.get_requires_for_build_wheel())
