"""Trace readers: one module per trace kind, streaming DataFrame chunks."""

from ._files import TraceFile
from ._report import FileReport, ReadReport, SkippedLine
from .logical import iter_logical, logical_files, read_logical
from .physical import iter_physical, physical_file, read_physical

__all__ = [
    "FileReport",
    "ReadReport",
    "SkippedLine",
    "TraceFile",
    "iter_logical",
    "iter_physical",
    "logical_files",
    "physical_file",
    "read_logical",
    "read_physical",
]
