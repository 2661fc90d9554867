"""Every script of ``examples/`` runs to the end and prints what its page says.

Each runs in its own process, in a temporary folder (nothing is written to the
checkout), on bundled data only. The scripts take seconds each once the kernels are
compiled, more than ten seconds together: the test is marked slow.
"""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not EXAMPLES.is_dir(), reason="examples/ not found (not a source "
                                                     "checkout)"),
]


def _number(pattern, text):
    match = re.search(pattern, text)
    assert match, f"{pattern!r} not in the output:\n{text}"
    return float(match.group(1))


def _online_elec2(out):
    assert "| Mondrian forest |" in out and "| AMF |" in out
    by_hand = _number(r"AMF by hand: ([\d.]+)", out)
    table = _number(r"\| AMF \| ([\d.]+) \|", out)
    assert by_hand == pytest.approx(table, abs=5e-4)  # the same protocol, by hand
    assert by_hand > 0.7


def _regression_uncertainty(out):
    narrow = _number(r"min_samples_split= 2: .* within mean \+- 2 std ([\d.]+)", out)
    wide = _number(r"min_samples_split=20: .* within mean \+- 2 std ([\d.]+)", out)
    assert narrow < wide and 0.85 < wide < 0.99
    assert _number(r"x =  30.0: mean [+-][\d.]+, std ([\d.]+)", out) > _number(
        r"x =   0.0: mean [+-][\d.]+, std ([\d.]+)", out)


def _amf_paper_variant(out):
    defaults = _number(r"defaults\s+accuracy [\d.]+\s+log loss ([\d.]+)", out)
    paper = _number(r"paper\s+accuracy [\d.]+\s+log loss ([\d.]+)", out)
    assert defaults < paper
    assert _number(r"defaults\s+accuracy ([\d.]+)", out) > 0.85


def _kernel_lifetime_sweep(out):
    chosen = _number(r"test MSE: marginal likelihood ([\d.]+)", out)
    mean_only = _number(r"predicting the mean ([\d.]+)", out)
    assert chosen < 0.9 * mean_only
    assert _number(r"^(\d+) lifetimes scored", out) > 10


def _river_pipeline(out):
    assert out.count("LogLoss:") == 3 and out.count("Accuracy:") == 3
    assert _number(r"mondrianlearn AMF\s+LogLoss: ([\d.]+)", out) < 0.5
    assert "predicted probabilities {" in out


def _drift_adaptation(out):
    stationary = _number(r"stationary .* accuracy: .* the last 1,000 rows ([\d.]+)", out)
    adaptive = _number(r"drift='adwin' .* accuracy: .* the last 1,000 rows ([\d.]+)", out)
    assert adaptive > stationary + 0.1 and adaptive > 0.85
    assert _number(r"trees replaced: (\d+)", out) >= 1
    # the regressors: mean absolute errors over all rows
    stationary = _number(r"stationary +MAE: .* all rows ([\d.]+)", out)
    uncorrected = _number(r"drift, no correction MAE: .* all rows ([\d.]+)", out)
    corrected = _number(r"drift='adwin' +MAE: .* all rows ([\d.]+)", out)
    assert corrected < uncorrected < 0.5 * stationary


CHECKS = {"online_elec2.py": _online_elec2,
          "regression_uncertainty.py": _regression_uncertainty,
          "amf_paper_variant.py": _amf_paper_variant,
          "kernel_lifetime_sweep.py": _kernel_lifetime_sweep,
          "river_pipeline.py": _river_pipeline,
          "drift_adaptation.py": _drift_adaptation}
NEEDS = {"river_pipeline.py": "river"}


def test_every_example_is_checked():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(CHECKS)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_example_runs(name, tmp_path):
    needs = NEEDS.get(name)
    if needs and importlib.util.find_spec(needs) is None:
        pytest.skip(f"{name} needs {needs} (pip install 'mondrian-learn[{needs}]')")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    CHECKS[name](proc.stdout)
    assert list(tmp_path.iterdir()) == []  # an example writes no file
