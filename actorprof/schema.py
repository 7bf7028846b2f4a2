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
"""

from __future__ import annotations

from typing import Final

import numpy as np

__all__ = [
    "DEFAULT_PAPI_COUNTERS",
    "LOGICAL_COLUMNS",
    "LOGICAL_DTYPES",
    "LOGICAL_INT_COLUMNS",
    "MAIN_MAILBOX",
    "PAPI_BASE_COLUMNS",
    "PE_TABLE_COLUMNS",
    "papi_columns",
    "papi_dtypes",
]

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


def papi_dtypes(counters: tuple[str, ...] = DEFAULT_PAPI_COUNTERS) -> dict[str, np.dtype[np.generic]]:
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
