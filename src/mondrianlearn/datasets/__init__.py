"""Datasets: a bundled stream, readers of the benchmark files, and of your own files.

- :func:`load_electricity` reads the Elec2 stream that ships with the package.
- :func:`load_benchmark` reads the benchmark datasets of the Mondrian papers from a
  local folder laid out as ``<data_home>/<name>/<files>`` (nothing is downloaded).
  ``data_home`` defaults to the ``MONDRIANLEARN_DATA`` environment variable, then
  to ``../shared/datasets`` next to the current directory or to the source tree.
- :func:`load_file` reads features and a target from a CSV, LIBSVM or Parquet file,
  one-hot encoding the text columns; :func:`detect_header` is how it tells whether
  the first line of a text file holds column names.
"""

from ._benchmarks import (
                          BENCHMARK_DATASETS,
                          DatasetNotFoundError,
                          benchmark_data_home,
                          load_benchmark,
)
from ._bundled import load_electricity
from ._files import DataFileError, DataFileInfo, detect_header, load_file

__all__ = ["BENCHMARK_DATASETS", "DatasetNotFoundError", "benchmark_data_home",
           "load_benchmark", "load_electricity", "DataFileError", "DataFileInfo",
           "detect_header", "load_file"]
