"""Doctests of the package's optional integrations run only when their dependency is there."""

import importlib.util

collect_ignore = []
for module, needs in [("src/mondrianlearn/river.py", "river"),
                      ("src/mondrianlearn/dask.py", "distributed"),
                      ("src/mondrianlearn/plotting.py", "matplotlib"),
                      ("src/mondrianlearn/datasets/_files.py", "pandas")]:
    if importlib.util.find_spec(needs) is None:
        collect_ignore.append(module)
