"""Test matrix: ``nox -l`` lists the sessions, ``nox -s NAME`` runs one.

``.ci/run`` runs the README's test command (``tests``' work, in the current
environment), ``lint`` and the fast engine tests with bounds checking; the other
sessions are one command away:

- ``tests``: the whole suite with every optional dependency.
- ``minimal``: the suite with the base dependencies only (numpy, scipy,
  scikit-learn, numba, joblib, tqdm): what needs an extra must skip, not fail.
- ``lowest``: the suite, slow tests excepted, with the lowest versions that
  ``pyproject.toml`` admits for numpy, scipy, scikit-learn and numba.
- ``boundscheck``: the engine and fast-path tests with numba's bounds checking on (a
  wrong capacity guess in compiled code raises instead of corrupting memory); it
  compiles into its own cache directory, so the usual cache is left alone.
- ``lint``: ruff (rules and import order in ``pyproject.toml``).
- ``docs``: the documentation site, warnings as errors.
"""

import tempfile

import nox

nox.options.sessions = ["lint", "tests"]

def lowest_versions():
    """The base dependencies pinned to the lowest versions ``pyproject.toml`` admits."""
    import tomllib

    with open("pyproject.toml", "rb") as f:
        dependencies = tomllib.load(f)["project"]["dependencies"]
    return [d.replace(">=", "==") for d in dependencies]


BOUNDSCHECK_TESTS = ["tests/test_engine_online_batch.py", "tests/test_engine_process.py",
                     "tests/test_engine_layout.py", "tests/test_engine_jit.py",
                     "tests/test_fast_path.py", "tests/test_fast_path_kernel.py",
                     "tests/test_memory_bound.py", "tests/test_stateful_fuzz.py",
                     "tests/test_structure_params.py", "tests/test_engine_sampling.py",
                     "tests/test_engine_reserved.py",
                     # the drift-adaptive regressors' combination of their trees
                     "tests/test_drift.py::test_combined_forecast_is_the_weighted_trimmed_mean",
                     "tests/test_drift.py::test_combination_reads_the_detectors_and_skips_absent_trees",
                     "tests/test_drift.py::test_regressor_predicts_its_trees_combined",
                     # the AMF regressor's linear correction
                     "tests/test_drift.py::"
                     "test_regressor_linear_correction_learns_what_the_trees_miss",
                     "tests/test_drift.py::"
                     "test_regressor_linear_correction_follows_new_feature_units",
                     "tests/test_drift_mf.py::test_regressor_predicts_its_trees_combined",
                     "tests/test_drift_mf.py::"
                     "test_regressor_linear_correction_follows_units_and_target_scale",
                     # the drift loops' prepared one-row calls
                     "tests/test_drift.py::"
                     "test_one_row_calls_prepared_for_drift_adaptation_change_nothing"]


@nox.session
def tests(session):
    session.install("-e", ".[test]")
    session.run("python", "-m", "pytest", "-q", *session.posargs)


@nox.session
def minimal(session):
    session.install("-e", ".", "pytest")
    session.run("python", "-m", "pytest", "-q", "-m", "not slow", *session.posargs)


@nox.session
def lowest(session):
    session.install(*lowest_versions())
    session.install("-e", ".", "pytest", *lowest_versions())
    with tempfile.TemporaryDirectory() as cache:  # another numba: its own cache
        session.run("python", "-m", "pytest", "-q", "-m", "not slow", *session.posargs,
                    env={"NUMBA_CACHE_DIR": cache})


@nox.session
def boundscheck(session):
    session.install("-e", ".[test]")
    with tempfile.TemporaryDirectory() as cache:
        session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    *BOUNDSCHECK_TESTS, *session.posargs,
                    env={"NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": cache})


@nox.session
def lint(session):
    session.install("ruff>=0.5")
    session.run("ruff", "check", "src", "tests", "benchmarks", "examples", "noxfile.py",
                "setup.py", "_build")


@nox.session
def docs(session):
    session.install("-e", ".[docs]")
    session.run("mkdocs", "build", "--strict")
