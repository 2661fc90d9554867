"""The documentation site builds with warnings as errors (``mkdocs build --strict``).

Needs the ``docs`` extra (mkdocs, mkdocs-material, mkdocstrings[python]); skips,
saying so, without it. The build reads the docstrings statically (griffe) and runs no
library code, so it takes seconds.
"""

import html
import importlib.util
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "mkdocs.yml"
TOOLS = {"mkdocs": "mkdocs", "material": "mkdocs-material", "mkdocstrings": "mkdocstrings",
         "mkdocstrings_handlers.python": "mkdocstrings-python"}


def _missing_tools():
    missing = []
    for module, package in TOOLS.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ImportError:  # the parent package of a submodule is absent
            found = False
        if not found:
            missing.append(package)
    return missing


_MISSING = _missing_tools()

pytestmark = [
    pytest.mark.skipif(bool(_MISSING), reason=(
        f"the documentation tools are not installed ({', '.join(_MISSING)}): "
        "pip install -e '.[docs]'")),
    pytest.mark.skipif(not CONFIG.exists(), reason="mkdocs.yml not found (not a source checkout)"),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Build the site once, strictly, into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
         "--config-file", str(CONFIG), "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, (
        "mkdocs build --strict failed:\n" + proc.stdout[-4000:] + proc.stderr[-4000:])
    yield out
    shutil.rmtree(out, ignore_errors=True)


def _page(site, path):
    page = site / path / "index.html"
    assert page.exists(), f"{path} was not built"
    return page.read_text(encoding="utf-8")


def test_api_pages_show_the_estimators_parameters(site):
    html = _page(site, "api/forest")
    assert 'id="mondrianlearn.forest.MondrianForestClassifier"' in html
    for parameter in ("n_estimators", "lifetime", "discount", "min_samples_split",
                      "max_nodes", "bootstrap", "feature_scale"):
        assert f"<code>{parameter}</code>" in html, parameter
    assert 'id="mondrianlearn.forest.MondrianForestClassifier.partial_fit"' in html
    amf = _page(site, "api/amf")
    assert 'id="mondrianlearn.amf.AMFRegressor"' in amf and "<code>step</code>" in amf


@pytest.mark.parametrize("path, name", [
    ("api/kernel", "mondrianlearn.kernel.MondrianKernelRegressor"),
    ("api/ensemble", "mondrianlearn.ensemble.MondrianBoostingClassifier"),
    ("api/river", "mondrianlearn.river.AMFClassifier"),
    ("api/dask", "mondrianlearn.dask.DaskShardedForest"),
    ("api/plotting", "mondrianlearn.plotting.plot_mondrian_tree"),
    ("api/datasets", "mondrianlearn.datasets.load_file"),
    ("api/evaluation", "mondrianlearn.evaluation.progressive_evaluation"),
])
def test_every_public_module_has_its_api_page(site, path, name):
    assert f'id="{name}"' in _page(site, path)


def test_sphinx_roles_are_shown_as_code(site):
    html = _page(site, "api/kernel")
    assert ":class:`" not in html and ":func:`" not in html


def test_benchmark_pages_include_the_results_files(site):
    results = ROOT / "benchmarks/results"
    title = (results / "bench_stream_memory.md").read_text().splitlines()[0].lstrip("# ")
    assert html.escape(title, quote=False) in _page(site, "benchmarks/bench_stream_memory")
    pages = "".join(p.read_text() for p in (ROOT / "docs/benchmarks").glob("*.md"))
    missing = sorted(f.name for f in results.glob("*.md")
                     if not f.stem.endswith("_quick")
                     and f"benchmarks/results/{f.name}" not in pages)
    if missing:
        warnings.warn(f"results files not on the benchmarks pages of the docs: {missing} "
                      f"(add a page in docs/benchmarks/ and to the nav of mkdocs.yml)",
                      stacklevel=1)
