"""Trace readers: one block loop per format, streaming DataFrame chunks.

Everything other layers use is exported here; the ``_``-modules are this
package's own.
"""

from ._fastscan import FAST_BLOCK_BYTES
from ._files import TraceFile, check_input_path, find_pe_files, list_folder, stdout_file
from ._report import FileReport, ReadReport, SkippedLine
from ._scan import require_trace_lines
from .logical import (
    LogicalBlock,
    canonical_lines,
    iter_logical,
    logical_blocks,
    logical_files,
    new_key_table,
    read_logical,
)
from .overall import read_overall
from .papi import iter_papi, papi_files, read_papi
from .physical import iter_physical, physical_file, read_physical

__all__ = [
    "FAST_BLOCK_BYTES",
    "FileReport",
    "LogicalBlock",
    "ReadReport",
    "SkippedLine",
    "TraceFile",
    "canonical_lines",
    "check_input_path",
    "find_pe_files",
    "iter_logical",
    "iter_papi",
    "iter_physical",
    "list_folder",
    "logical_blocks",
    "logical_files",
    "new_key_table",
    "papi_files",
    "physical_file",
    "read_logical",
    "read_overall",
    "read_papi",
    "read_physical",
    "require_trace_lines",
    "stdout_file",
]
