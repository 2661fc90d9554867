"""The package's PEP 517 build backend: setuptools', which also asks for the runtime
dependencies when it builds a wheel.

A wheel's build compiles the kernels of the common path into the package
(``setup.py``, ``mondrianlearn.precompile``), which needs numba, NumPy, scikit-learn
and the rest in the build environment. An editable install compiles nothing, and nor
does a build with ``MONDRIANLEARN_PRECOMPILE=0``: they get setuptools alone, as before.
"""

import os
import warnings

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 - every hook not redefined below


def _precompiling():
    return os.environ.get("MONDRIANLEARN_PRECOMPILE", "1").strip() != "0"


def _runtime_dependencies():
    """``[project] dependencies`` of ``pyproject.toml`` (one list to maintain)."""
    from setuptools.config.pyprojecttoml import read_configuration

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "[tool.setuptools] is still beta"
        return list(read_configuration("pyproject.toml")["project"]["dependencies"])


def get_requires_for_build_wheel(config_settings=None):
    requires = _setuptools.get_requires_for_build_wheel(config_settings)
    return requires + (_runtime_dependencies() if _precompiling() else [])
