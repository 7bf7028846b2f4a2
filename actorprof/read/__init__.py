"""Trace readers: one module per trace kind, streaming DataFrame chunks."""

from ._files import TraceFile
from ._report import FileReport, ReadReport, SkippedLine
from .logical import iter_logical, logical_files, read_logical

__all__ = [
    "FileReport",
    "ReadReport",
    "SkippedLine",
    "TraceFile",
    "iter_logical",
    "logical_files",
    "read_logical",
]
