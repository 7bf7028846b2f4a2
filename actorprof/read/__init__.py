"""Trace readers: one module per trace kind, streaming DataFrame chunks."""

from ._files import TraceFile
from ._report import FileReport, ReadReport, SkippedLine
from .logical import iter_logical, logical_files, read_logical
from .overall import read_overall
from .papi import iter_papi, papi_files, read_papi
from .physical import iter_physical, physical_file, read_physical

__all__ = [
    "FileReport",
    "ReadReport",
    "SkippedLine",
    "TraceFile",
    "iter_logical",
    "iter_papi",
    "iter_physical",
    "logical_files",
    "papi_files",
    "physical_file",
    "read_logical",
    "read_overall",
    "read_papi",
    "read_physical",
]
