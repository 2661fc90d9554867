"""Build hook: compile the common path's kernels into the package as it is built.

Everything else about the package is in ``pyproject.toml``, whose build backend
(``_build/backend.py``) puts the runtime dependencies into a wheel's build
environment. After the sources are copied into the build folder,
``python -m mondrianlearn.precompile`` runs on that copy, so numba's cache files
(``__pycache__/*.nbi``, ``*.nbc``, next to the sources) go into the wheel: the first use
after ``pip install .`` loads machine code instead of compiling it (see
``mondrianlearn.precompile``). Skipped for editable installs and with
``MONDRIANLEARN_PRECOMPILE=0``; a failure only warns, and the kernels then compile on
first use.
"""

import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PRECOMPILE_TIMEOUT = 900
"""Seconds after which the build goes on without the compiled kernels."""


class BuildWithKernels(build_py):
    """``build_py``, then the package's kernels compiled in the build folder."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False) or self.dry_run:
            return
        # Only this build's machine code goes into the wheel (a build folder left by
        # an earlier build may hold cache files of other sources).
        for pattern in ("*.nbi", "*.nbc"):
            for path in Path(self.build_lib, "mondrianlearn").rglob(pattern):
                path.unlink()
        if os.environ.get("MONDRIANLEARN_PRECOMPILE", "1").strip() == "0":
            return
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (os.path.abspath(self.build_lib), os.environ.get("PYTHONPATH")) if p)
        env.setdefault("OMP_NUM_THREADS", "1")
        try:
            subprocess.run([sys.executable, "-m", "mondrianlearn.precompile"], env=env,
                           check=True, timeout=PRECOMPILE_TIMEOUT)
        except (OSError, subprocess.SubprocessError) as exc:
            print(f"mondrian-learn: kernels not compiled ahead of use ({exc}); they will "
                  "compile on first use.", file=sys.stderr)


setup(cmdclass={"build_py": BuildWithKernels})
