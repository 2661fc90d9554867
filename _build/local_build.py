"""Build the package from this checkout into a folder, as pip's build does.

``build_package`` copies the build files (``src/``, without compiled caches,
``setup.py``, ``pyproject.toml``, ``README.md``) into ``folder / "source"`` and runs
``setup.py build_py`` there into ``folder / "lib"``: the hook of ``setup.py`` then
compiles the common path's kernels into the built package, as in a wheel. Used by
``tests/test_precompile.py`` and ``benchmarks/bench_cold_start.py --installed``.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD_FILES = ("setup.py", "pyproject.toml", "README.md")


def build_env(**extra):
    """This process's environment without ``NUMBA_CACHE_DIR`` (so that numba's
    cache goes next to the built sources), with ``extra`` set."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(extra)
    return env


def build_package(folder, env=None, timeout=900):
    """Build the package into ``folder / "lib"`` (see the module docstring) with the
    environment ``env`` (default :func:`build_env`); returns that folder."""
    folder = Path(folder)
    source = folder / "source"
    shutil.copytree(REPO / "src", source / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "*.pyc"))
    for name in BUILD_FILES:
        shutil.copy(REPO / name, source / name)
    lib = folder / "lib"
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)],
                   cwd=source, env=build_env() if env is None else env,
                   capture_output=True, text=True, timeout=timeout, check=True)
    return lib
