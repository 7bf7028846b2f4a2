"""Trace readers: one block loop per format, streaming DataFrame chunks.

Everything other layers use is exported here; the ``_``-modules are this
package's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = [
    "DEFAULT_BLOCK_BYTES",
    "FAST_BLOCK_BYTES",
    "CsvSpec",
    "FileColumns",
    "FileReport",
    "FileStat",
    "JoinedFiles",
    "LogicalBlock",
    "PhysicalBlock",
    "PhysicalScan",
    "ReadReport",
    "SkippedLine",
    "StrayPes",
    "TraceFile",
    "begin_physical_read",
    "canonical_lines",
    "check_input_path",
    "file_columns",
    "file_stat",
    "files_and_bytes",
    "files_and_bytes_of",
    "find_pe_files",
    "has_pe_files",
    "iter_logical",
    "iter_papi",
    "iter_physical",
    "joined_small_files",
    "list_folder",
    "listings_kept",
    "logical_blocks",
    "logical_file_frames",
    "logical_files",
    "new_key_table",
    "no_trace_error",
    "note_missing_pe_files",
    "papi_files",
    "pe_file_phases",
    "physical_file",
    "read_logical",
    "read_overall",
    "read_papi",
    "read_physical",
    "require_trace_lines",
    "small_file_text",
    "stat_planned",
    "stdout_file",
    "stray_pes",
    "trace_file_columns",
]

# Imported on first use, so that a command loads only the modules it runs
# (docs/performance.md, "Fixed cost"); type checkers read the imports below.
_EXPORTS = {
    "CsvSpec": "_scan",
    "DEFAULT_BLOCK_BYTES": "_scan",
    "FAST_BLOCK_BYTES": "_fastscan",
    "FileColumns": "_report",
    "FileReport": "_report",
    "FileStat": "_files",
    "JoinedFiles": "_joined",
    "LogicalBlock": "logical",
    "PhysicalBlock": "physical",
    "PhysicalScan": "physical",
    "ReadReport": "_report",
    "SkippedLine": "_report",
    "StrayPes": "physical",
    "TraceFile": "_files",
    "begin_physical_read": "physical",
    "canonical_lines": "logical",
    "check_input_path": "_files",
    "file_columns": "_files",
    "file_stat": "_files",
    "files_and_bytes": "_report",
    "files_and_bytes_of": "_report",
    "find_pe_files": "_files",
    "has_pe_files": "_files",
    "pe_file_phases": "_files",
    "iter_logical": "logical",
    "iter_papi": "papi",
    "iter_physical": "physical",
    "joined_small_files": "_joined",
    "list_folder": "_files",
    "note_missing_pe_files": "_files",
    "listings_kept": "_kept",
    "logical_blocks": "logical",
    "logical_file_frames": "logical",
    "logical_files": "logical",
    "new_key_table": "logical",
    "no_trace_error": "physical",
    "papi_files": "papi",
    "physical_file": "physical",
    "read_logical": "logical",
    "read_overall": "overall",
    "read_papi": "papi",
    "read_physical": "physical",
    "require_trace_lines": "_scan",
    "small_file_text": "_files",
    "stat_planned": "_files",
    "stdout_file": "_files",
    "stray_pes": "physical",
    "trace_file_columns": "_files",
}

if TYPE_CHECKING:
    from ._fastscan import FAST_BLOCK_BYTES
    from ._files import (
        FileStat,
        TraceFile,
        check_input_path,
        file_columns,
        file_stat,
        find_pe_files,
        has_pe_files,
        list_folder,
        note_missing_pe_files,
        pe_file_phases,
        small_file_text,
        stat_planned,
        stdout_file,
        trace_file_columns,
    )
    from ._joined import JoinedFiles, joined_small_files
    from ._kept import listings_kept
    from ._report import (
        FileColumns,
        FileReport,
        ReadReport,
        SkippedLine,
        files_and_bytes,
        files_and_bytes_of,
    )
    from ._scan import DEFAULT_BLOCK_BYTES, CsvSpec, require_trace_lines
    from .logical import (
        LogicalBlock,
        canonical_lines,
        iter_logical,
        logical_blocks,
        logical_file_frames,
        logical_files,
        new_key_table,
        read_logical,
    )
    from .overall import read_overall
    from .papi import iter_papi, papi_files, read_papi
    from .physical import (
        PhysicalBlock,
        PhysicalScan,
        StrayPes,
        begin_physical_read,
        iter_physical,
        no_trace_error,
        physical_file,
        read_physical,
        stray_pes,
    )
else:
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
