"""Column names and dtypes of every frame actorprof produces, defined once.

Readers yield frames with exactly these columns, in this order, with these
dtypes; analyses and plots rely on them and on nothing else.

Logical trace (``PE<i>_send.csv``), one row per message sent:

============  =========  ====================================================
column        dtype      meaning
============  =========  ====================================================
src_node      int32      node of the sender
src_pe        int32      sending PE
dst_node      int32      node of the receiver
dst_pe        int32      receiving PE
msg_bytes     int64      ``sizeof(T)`` of the message type (not the wire size)
time_s        float64    send time, seconds since the epoch (NaN: 5-column line)
============  =========  ====================================================

PAPI trace (``PE<i>_PAPI.csv``), one row per handled message plus one MAIN row:
the logical columns (``time_s`` = end of the region) plus ``mailbox`` (int32,
-1 on the MAIN row), ``num_sends`` (int64) and one int64 column per counter
(default ``PAPI_TOT_INS``, ``PAPI_LST_INS``).

Physical trace (``physical.txt``), one row per traced Conveyors call, in file
order (see docs/physical.md for the line grammar):

============  ========  =====================================================
column        dtype     meaning
============  ========  =====================================================
send_type     category  ``local_send``, ``nonblock_send`` or
                        ``nonblock_progress`` (:data:`SEND_TYPES`, in this
                        order: a pandas Categorical with exactly these
                        categories; ``.cat.codes`` are 0, 1, 2)
buffer_bytes  int64     size of the buffer the call sent (0 for most
                        ``nonblock_progress`` calls)
src_pe        int32     PE that made the call
dst_pe        int32     PE the buffer went to
============  ========  =====================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

from ._text import PlainList  # its home before; here for old imports

__all__ = [
    "AGGREGATION_LINK_COLUMNS",
    "AGGREGATION_PE_TABLE_COLUMNS",
    "BUFFER_SEND_TYPES",
    "DEFAULT_PAPI_COUNTERS",
    "LOGICAL_COLUMNS",
    "LOGICAL_DTYPES",
    "LOGICAL_INT_COLUMNS",
    "MAIN_MAILBOX",
    "MAX_MSG_BYTES",
    "MAX_OVERALL_VALUE",
    "MAX_PAPI_COUNTERS",
    "OVERALL_COLUMNS",
    "OVERALL_COUNT_COLUMNS",
    "OVERALL_CYCLE_COLUMNS",
    "OVERALL_FILE_NAME",
    "OVERALL_FRAC_COLUMNS",
    "OVERALL_KEY_COLUMNS",
    "OVERALL_RAW_COLUMNS",
    "OVERALL_TCOMM_COLUMNS",
    "PAPI_BASE_COLUMNS",
    "PAPI_REGION_COLUMNS",
    "PAPI_RESERVED_NAMES",
    "PE_TABLE_COLUMNS",
    "PHYSICAL_COLUMNS",
    "PHYSICAL_FILE_NAME",
    "PHYSICAL_INT_DTYPES",
    "PHYSICAL_PE_TABLE_COLUMNS",
    "SEND_TYPES",
    "TIME_COLUMNS",
    "PlainList",
    "papi_columns",
    "papi_dtypes",
    "papi_pe_columns",
]

#: The file names of the two traces that are one file per run.
OVERALL_FILE_NAME: Final = "overall.txt"
PHYSICAL_FILE_NAME: Final = "physical.txt"

LOGICAL_COLUMNS: Final = ("src_node", "src_pe", "dst_node", "dst_pe", "msg_bytes", "time_s")
LOGICAL_INT_COLUMNS: Final = LOGICAL_COLUMNS[:5]
LOGICAL_DTYPES: Final[dict[str, np.dtype[np.generic]]] = {
    "src_node": np.dtype(np.int32),
    "src_pe": np.dtype(np.int32),
    "dst_node": np.dtype(np.int32),
    "dst_pe": np.dtype(np.int32),
    "msg_bytes": np.dtype(np.int64),
    "time_s": np.dtype(np.float64),
}

#: Largest ``msg_bytes`` read as real: ``sizeof(T)`` of a message type. A
#: larger value is corruption (skipped as "number too large"), and such values
#: would overflow 64-bit byte totals.
MAX_MSG_BYTES: Final = 2**32

#: PE ids a line may name without ``--num-pes`` when nothing else in the
#: trace bounds them (a single trace file, ``overall.txt``, ``physical.txt``):
#: 2^20 PEs is 16 times the largest machines HClib-Actor runs on, and the
#: largest ``--num-pes`` (``cli.MAX_PES``). Per-PE tables cost O(N), so one
#: corrupt id must not set N.
PE_ID_CAP: Final = 1 << 20

#: Per-PE table of the logical view (``logical_pes.csv``).
PE_TABLE_COLUMNS: Final = (
    "pe",
    "node",
    "sent",
    "received",
    "bytes_sent",
    "bytes_received",
    "self_sends",
)

#: The mailbox id written on the MAIN-region line of a PAPI trace.
MAIN_MAILBOX: Final = -1
DEFAULT_PAPI_COUNTERS: Final = ("PAPI_TOT_INS", "PAPI_LST_INS")
PAPI_BASE_COLUMNS: Final = (
    "src_node",
    "src_pe",
    "dst_node",
    "dst_pe",
    "msg_bytes",
    "mailbox",
    "num_sends",
)


def papi_columns(counters: tuple[str, ...] = DEFAULT_PAPI_COUNTERS) -> tuple[str, ...]:
    """Columns of a PAPI frame for the given counter names, in file order."""
    return (*PAPI_BASE_COLUMNS, *counters, "time_s")


def papi_dtypes(
    counters: tuple[str, ...] = DEFAULT_PAPI_COUNTERS,
) -> dict[str, np.dtype[np.generic]]:
    """Dtypes of a PAPI frame for the given counter names."""
    dtypes: dict[str, np.dtype[np.generic]] = {
        "src_node": np.dtype(np.int32),
        "src_pe": np.dtype(np.int32),
        "dst_node": np.dtype(np.int32),
        "dst_pe": np.dtype(np.int32),
        "msg_bytes": np.dtype(np.int64),
        "mailbox": np.dtype(np.int32),
        "num_sends": np.dtype(np.int64),
    }
    for name in counters:
        dtypes[name] = np.dtype(np.int64)
    dtypes["time_s"] = np.dtype(np.float64)
    return dtypes


# --- PAPI per-PE tables and the overall profile (issue 3) --------------------

#: PAPI can count at most this many events at once (the paper's limit).
MAX_PAPI_COUNTERS: Final = 4
#: Names a counter may not take: they are columns of the PAPI tables.
PAPI_RESERVED_NAMES: Final = (
    *PAPI_BASE_COLUMNS,
    "time_s",
    "pe",
    "region",
    "lines",
    "messages",
    "main_lines",
    "main_sends",
    "proc_sends",
    "sends",
)
#: Per-(PE, mailbox) sums of a PAPI trace, before the counter columns
#: (``papi_mailboxes.csv``; mailbox -1 is the MAIN region).
PAPI_REGION_COLUMNS: Final = ("pe", "mailbox", "region", "lines", "num_sends")


def papi_pe_columns(counters: tuple[str, ...] = DEFAULT_PAPI_COUNTERS) -> tuple[str, ...]:
    """Columns of the per-PE PAPI table (``papi_pes.csv``), ``pe`` first."""
    per_counter = tuple(
        f"{name}_{part}" for name in counters for part in ("main", "proc", "total", "per_message")
    )
    return ("pe", "main_lines", "messages", "main_sends", "proc_sends", *per_counter)


#: Largest magnitude of a cycle count or count read from ``overall.txt``:
#: 2^59 cycles is over 3 years at 5 GHz, so a larger value is corruption; the
#: bound keeps T_COMM = T_sends + T_wait - T_PROC, T_TOTAL and the consistency
#: checks within int64 (two 1.8e19-scale values used to overflow them).
MAX_OVERALL_VALUE: Final = 2**59

#: Overall profile (``overall.txt``), one row per (label, run, PE).
OVERALL_KEY_COLUMNS: Final = ("label", "run", "pe")
#: The six raw lines: cycles (rdtsc) and the counts in ``(count=N)``.
OVERALL_RAW_COLUMNS: Final = (
    "t_inside_finish_cycles",
    "t_wait_cycles",
    "t_outside_finish_cycles",
    "t_sends_cycles",
    "sends_count",
    "t_send_in_process_cycles",
    "send_in_process_count",
    "t_process_cycles",
    "process_count",
)
#: The two ``TCOMM_PROFILING`` lines, as printed by the runtime.
OVERALL_TCOMM_COLUMNS: Final = (
    "tcomm_main_cycles",
    "tcomm_comm_cycles",
    "tcomm_proc_cycles",
    "tcomm_total_cycles",
    "tcomm_main_frac",
    "tcomm_comm_frac",
    "tcomm_proc_frac",
)
OVERALL_COLUMNS: Final = (
    *OVERALL_KEY_COLUMNS,
    *OVERALL_RAW_COLUMNS,
    *OVERALL_TCOMM_COLUMNS,
    "total_warning",
    "profile_lines",
)
#: Integer columns of the overall frame (nullable ``Int64``: a line can be missing).
OVERALL_CYCLE_COLUMNS: Final = tuple(
    c for c in (*OVERALL_RAW_COLUMNS, *OVERALL_TCOMM_COLUMNS) if c.endswith("_cycles")
)
OVERALL_COUNT_COLUMNS: Final = ("sends_count", "send_in_process_count", "process_count")
OVERALL_FRAC_COLUMNS: Final = ("tcomm_main_frac", "tcomm_comm_frac", "tcomm_proc_frac")
#: What :func:`actorprof.time_breakdown` adds per row, after the key columns.
TIME_COLUMNS: Final = (
    "t_main_cycles",
    "t_comm_cycles",
    "t_proc_cycles",
    "t_total_cycles",
    "useful_cycles",
    "main_frac",
    "comm_frac",
    "proc_frac",
    "total_vs_outside_pct",
    "source",
)


# --- Physical trace and aggregation (issue 4) ---------------------------------

#: Send types of the physical trace (FORMATS.md section 4), in this order; the
#: ``send_type`` column is a pandas Categorical with exactly these categories.
SEND_TYPES: Final = ("local_send", "nonblock_send", "nonblock_progress")
#: The types that put a buffer on the wire; ``nonblock_progress`` completes
#: earlier non-blocking sends and is counted apart.
BUFFER_SEND_TYPES: Final = ("local_send", "nonblock_send")
if TYPE_CHECKING:
    import pandas as pd

    #: dtype of the ``send_type`` column.
    SEND_TYPE_DTYPE: pd.CategoricalDtype


def __getattr__(name: str) -> Any:
    # SEND_TYPE_DTYPE made on first use: the logical map's workers import
    # this module and never pandas (0.27 s of CPU per process)
    if name != "SEND_TYPE_DTYPE":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import pandas as pd

    dtype = pd.CategoricalDtype(list(SEND_TYPES), ordered=False)
    globals()[name] = dtype
    return dtype


PHYSICAL_COLUMNS: Final = ("send_type", "buffer_bytes", "src_pe", "dst_pe")
#: Dtypes of the integer physical columns (``send_type`` is categorical).
PHYSICAL_INT_DTYPES: Final[dict[str, np.dtype[np.generic]]] = {
    "buffer_bytes": np.dtype(np.int64),
    "src_pe": np.dtype(np.int32),
    "dst_pe": np.dtype(np.int32),
}
#: Per-PE table of the physical view (``physical_pes.csv``): totals over the
#: buffer types (``bytes_*`` over all three types), then per send type
#: ``<type>_buffers_sent``, ``<type>_buffers_received``, ``<type>_bytes_sent``,
#: ``<type>_bytes_received``.
PHYSICAL_PE_TABLE_COLUMNS: Final = (
    "pe",
    "node",
    "buffers_sent",
    "buffers_received",
    "bytes_sent",
    "bytes_received",
    "self_buffers",
    *(
        f"{send_type}_{what}"
        for send_type in SEND_TYPES
        for what in ("buffers_sent", "buffers_received", "bytes_sent", "bytes_received")
    ),
)
#: Per-PE table of the aggregation view (``aggregation_pes.csv``).
AGGREGATION_PE_TABLE_COLUMNS: Final = (
    "pe",
    "node",
    "messages_sent",
    "payload_bytes_sent",
    "routed_items_sent",
    "buffers_sent",
    "empty_buffers_sent",
    "wire_bytes_sent",
    "predicted_wire_bytes_sent",
    "messages_per_buffer",
    "items_per_buffer",
    "avg_buffer_bytes",
    "avg_buffer_fill",
    "wire_over_payload",
)
#: One row per (send type, link) predicted or seen (``aggregation_links.csv``):
#: the Conveyors model's comparison (``actorprof.analyze.conveyors.CHECK_COLUMNS``)
#: and the error of the prediction.
#: Columns of the Conveyors model's link comparison
#: (:func:`actorprof.analyze.conveyors.compare_links`).
CONVEYORS_CHECK_COLUMNS: Final = (
    "send_type",
    "src_pe",
    "dst_pe",
    "items",
    "payload_bytes",
    "packet_bytes",
    "packed_bytes",
    "buffers_min",
    "predicted_wire_bytes",
    "calls",
    "buffers",
    "empty_buffers",
    "wire_bytes",
    "items_seen",
    "padding_bytes",
    "status",
    "reason",
)
AGGREGATION_LINK_COLUMNS: Final = (*CONVEYORS_CHECK_COLUMNS, "items_error", "wire_bytes_error")
