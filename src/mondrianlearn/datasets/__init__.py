"""Datasets: one bundled stream, and readers for the standard benchmark files.

- :func:`load_electricity` reads the Elec2 stream that ships with the package.
- :func:`load_benchmark` reads the benchmark datasets of the Mondrian papers from a
  local folder laid out as ``<data_home>/<name>/<files>`` (nothing is downloaded).
  ``data_home`` defaults to the ``MONDRIANLEARN_DATA`` environment variable, then
  to ``../shared/datasets`` next to the current directory or to the source tree.
"""

from ._benchmarks import (BENCHMARK_DATASETS, DatasetNotFoundError, benchmark_data_home,
                          load_benchmark)
from ._bundled import load_electricity
from ._files import DataFileError, load_file

__all__ = ["BENCHMARK_DATASETS", "DatasetNotFoundError", "benchmark_data_home",
           "load_benchmark", "load_electricity", "DataFileError", "load_file"]
