"""Where instructions and time go, per PE: the PAPI regions and the overall profile.

PAPI (one line per handled message + one MAIN line per PE):

- :func:`papi_regions`: sums per (PE, mailbox); mailbox -1 is MAIN (local
  computation and message construction), every other mailbox is PROC;
- :func:`papi_breakdown`: one row per PE: MAIN and PROC totals per counter,
  messages handled, sends issued, counter per handled message;
- :func:`papi_segments`: the stacks drawn by :func:`actorprof.plot_papi_bars`.

Overall profile (``TCOMM_PROFILING``):

- :func:`time_breakdown`: T_MAIN, T_COMM, T_PROC, T_TOTAL, useful work and
  fractions per (label, run, PE);
- :func:`time_checks`: whether the printed ``TCOMM_PROFILING`` values agree
  with the raw lines (T_MAIN = T_inside_finish - T_sends, ...);
- :func:`pop_efficiencies`: POP load balance, communication and parallel
  efficiency (POP Centre of Excellence methodology).

Nothing here modifies its input; everything is vectorized.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ActorProfError
from ..schema import (
    DEFAULT_PAPI_COUNTERS,
    MAIN_MAILBOX,
    OVERALL_KEY_COLUMNS,
    PAPI_REGION_COLUMNS,
    TIME_COLUMNS,
    papi_pe_columns,
)
from .imbalance import imbalance

__all__ = [
    "TIME_CHECKS",
    "PopEfficiencies",
    "add_shadows",
    "check_papi_totals",
    "counter_names",
    "exact_group_sums",
    "exact_sum",
    "main_unknown",
    "papi_breakdown",
    "papi_regions",
    "papi_regions_shadowed",
    "papi_segments",
    "pop_efficiencies",
    "sum_regions",
    "time_breakdown",
    "time_checks",
    "zero_counters",
]

_KEYS = ["dst_pe", "mailbox"]


def counter_names(frame: pd.DataFrame) -> tuple[str, ...]:
    """Counter columns of a PAPI frame or region table: after ``num_sends``, before ``time_s``."""
    columns = list(frame.columns)
    if "num_sends" not in columns:
        raise ValueError("not a PAPI frame: no num_sends column")
    after = columns[columns.index("num_sends") + 1 :]
    return tuple(c for c in after if c != "time_s")


def papi_regions(
    data: pd.DataFrame | Iterable[pd.DataFrame], *, counters: tuple[str, ...] | None = None
) -> pd.DataFrame:
    """Sum a PAPI trace per (PE, mailbox), in one pass over its chunks.

    Parameters
    ----------
    data
        A PAPI frame (:func:`actorprof.read_papi`) or its chunks
        (:func:`actorprof.iter_papi`). The PE of a line is its ``dst_pe``
        (the receiver wrote it). Not modified.
    counters
        Counter columns to sum; default: those of the data (or the default
        PAPI names when there is no chunk).

    Returns
    -------
    pandas.DataFrame
        Columns ``pe, mailbox, region, lines, num_sends, <counters...>``,
        one row per (PE, mailbox) seen, sorted. ``region`` is ``MAIN`` for
        mailbox -1, else ``PROC``; ``lines`` is the number of handled
        messages (PROC) or of MAIN lines (MAIN, normally 1).

    Raises
    ------
    ActorProfError
        A PE's sums could pass 64-bit integers (:func:`check_papi_totals`).

    Examples
    --------
    >>> frame = pd.DataFrame({"src_node": 0, "src_pe": [0, 1, 0], "dst_node": 0,
    ...     "dst_pe": 0, "msg_bytes": [0, 8, 8], "mailbox": [-1, 0, 0],
    ...     "num_sends": [5, 1, 0], "PAPI_TOT_INS": [100, 10, 12], "time_s": 0.0})
    >>> papi_regions(frame)[["mailbox", "lines", "PAPI_TOT_INS"]].to_numpy().tolist()
    [[-1, 1, 100], [0, 2, 22]]
    """
    return papi_regions_shadowed(data, counters=counters)[0]


def papi_regions_shadowed(
    data: pd.DataFrame | Iterable[pd.DataFrame],
    *,
    counters: tuple[str, ...] | None = None,
    shadow: dict[int, float] | None = None,
) -> tuple[pd.DataFrame, dict[int, float]]:
    """:func:`papi_regions`, and the float shadow of its integer sums per PE
    (see :func:`check_papi_totals`): what a reader of parts of a trace adds
    up (:func:`add_shadows`) to check the whole trace's totals.

    ``shadow`` (a new dict by default) is filled as the chunks are summed:
    when a chunk raises, it holds the shadow of the chunks before.
    """
    chunks = [data] if isinstance(data, pd.DataFrame) else data
    partials = []
    pending: list[pd.DataFrame] = []  # small chunks (one per file) grouped together
    pending_rows = 0
    summed: list[np.ndarray] = []  # rows of _one_key_rows, grouped at the end
    summed_rows = 0
    shadow = {} if shadow is None else shadow  # per PE: int64 sums wrap silently
    value_columns: list[str] = []
    for chunk in chunks:
        if counters is None:
            counters = counter_names(chunk)
        value_columns = ["num_sends", *counters]
        _shadow_chunk(shadow, chunk, value_columns)
        rows = _one_key_rows(chunk, value_columns)
        if rows is not None:
            summed.append(rows)
            summed_rows += len(rows)
            if summed_rows >= _GROUP_ROWS:
                partials.append(_summed_frame(summed, value_columns))
                summed, summed_rows = [], 0
            continue
        pending.append(chunk[[*_KEYS, *value_columns]])
        pending_rows += len(chunk)
        if pending_rows >= _GROUP_ROWS or len(pending) >= _GROUP_CHUNKS:
            partials.append(_region_sums(pending, value_columns))
            pending, pending_rows = [], 0
    if pending:
        partials.append(_region_sums(pending, value_columns))
    if summed:
        partials.append(_summed_frame(summed, value_columns))
    if counters is None:
        counters = tuple(DEFAULT_PAPI_COUNTERS)
    if not partials:
        return _empty_regions(counters), shadow
    return _region_table(pd.concat(partials), counters), shadow


def _region_table(sums: pd.DataFrame, counters: tuple[str, ...]) -> pd.DataFrame:
    """Sums indexed by (PE, mailbox), maybe repeated, as the sorted region table."""
    total = sums.groupby(level=[0, 1], sort=True).sum()
    total.index.names = ["pe", "mailbox"]
    table = total.reset_index()
    table.insert(2, "region", np.where(table["mailbox"] == MAIN_MAILBOX, "MAIN", "PROC"))
    columns = [*PAPI_REGION_COLUMNS, *counters]
    table = table[columns].astype({c: np.int64 for c in columns if c != "region"})
    table["region"] = table["region"].astype(object)
    return table


def sum_regions(tables: Iterable[pd.DataFrame], *, counters: tuple[str, ...]) -> pd.DataFrame:
    """The :func:`papi_regions` table of a trace from those of its parts.

    Parameters
    ----------
    tables
        :func:`papi_regions` tables of disjoint parts of the trace (e.g.
        groups of files read by different processes). Not modified.
    counters
        Counter columns of the tables.

    Returns
    -------
    pandas.DataFrame
        The table :func:`papi_regions` gives for all the parts' lines at once
        (integer sums: the same whatever the split).
    """
    value_columns = ["lines", "num_sends", *counters]
    parts = [t.set_index(["pe", "mailbox"])[value_columns] for t in tables if len(t)]
    if not parts:
        return _empty_regions(counters)
    return _region_table(pd.concat(parts), counters)


_INT64_SAFE = float(2**62)


def _shadow_chunk(shadow: dict[int, float], chunk: pd.DataFrame, value_columns: list[str]) -> None:
    """Add to each PE's shadow the largest column total of its lines in ``chunk``.

    Counter values are non-negative (the reader's grammar), so a PE's
    shadow bounds every sum of its lines: each (PE, mailbox) region's and
    the PE's own over its regions. A chunk is nearly always one PE's (a
    batch of small files holds several).
    """
    if not len(chunk):
        return
    values = chunk[value_columns].to_numpy(dtype=np.float64)
    pe = chunk[_KEYS[0]].to_numpy()
    starts = np.flatnonzero(np.r_[True, pe[1:] != pe[:-1]])  # runs of one PE: a file's lines
    largest = np.add.reduceat(values, starts, axis=0).max(axis=1, initial=0)
    keys = pe[starts]
    if len(keys) == 1 or bool((keys[1:] > keys[:-1]).all()):  # files in PE order
        totals = dict(zip(keys.tolist(), largest.tolist(), strict=True))
    else:  # a run's largest total bounds its sums: their sum bounds the PE's
        summed = pd.Series(largest).groupby(keys).sum()
        totals = dict(zip(summed.index.tolist(), summed.tolist(), strict=True))
    add_shadows(shadow, totals)


def add_shadows(total: dict[int, float], part: dict[int, float]) -> None:
    """Add a part's shadow (:func:`papi_regions_shadowed`) to ``total``, and
    check the sums (:func:`check_papi_totals`)."""
    for key, value in part.items():
        total[key] = total.get(key, 0.0) + value
    check_papi_totals({key: total[key] for key in part})


def check_papi_totals(shadow: dict[int, float]) -> None:
    """Raise when a PE's float shadow of its PAPI sums nears the int64 limit.

    ``shadow`` maps a PE to the sum, over the chunks of lines read so far
    that hold it, of each chunk's largest column total. It bounds the
    integer sums of that PE's regions, and of the PE's MAIN and PROC, which
    are int64 and would wrap silently. Sums over PEs are not bounded by it:
    they are exact integers (:func:`exact_sum`), whatever the PE count.

    Raises
    ------
    ActorProfError
        A PE's shadow is 2**62 or more (it names the lowest such PE).
    """
    over = [pe for pe, value in shadow.items() if value >= _INT64_SAFE]
    if over:
        pe = min(over)  # the first file's, as the plain reader (files in PE order) finds it
        raise ActorProfError(
            f"PAPI counter totals of PE {pe} exceed 64-bit integers: its lines hold "
            "implausible counter values (corrupted lines?). Check the counter columns of "
            f"PE {pe}'s PAPI file."
        )


def exact_sum(values: np.ndarray | pd.Series) -> int:
    """The exact sum of int64 values, as a Python int (a numpy sum wraps).

    Each value is split into its high and low 32 bits, which sum without
    wrapping for fewer than 2**31 values. A Series' missing values are
    skipped, as pandas' sum skips them.

    >>> exact_sum(np.array([2**62, 2**62, 2**62], dtype=np.int64)) == 3 * 2**62
    True
    """
    if isinstance(values, pd.Series):
        values = values.dropna()
    array = np.asarray(values, dtype=np.int64)
    high = int((array >> 32).sum())
    low = int((array & 0xFFFFFFFF).sum())
    return (high << 32) + low


def exact_group_sums(keys: pd.Series, values: pd.DataFrame) -> tuple[list[int], list[list[int]]]:
    """Exact sums of int64 ``values`` columns per key, as Python ints.

    Returns the sorted keys and, for each, its sums in column order (see
    :func:`exact_sum`).
    """
    array = values.to_numpy(dtype=np.int64)
    split = np.hstack([array >> 32, array & 0xFFFFFFFF])
    grouped = pd.DataFrame(split).groupby(keys.to_numpy(), sort=True).sum()
    width = array.shape[1]
    sums = [
        [(int(row[j]) << 32) + int(row[width + j]) for j in range(width)]
        for row in grouped.to_numpy(dtype=np.int64).tolist()
    ]
    return [int(k) for k in grouped.index], sums


#: Chunks are summed in groups of this many rows or chunks: a groupby costs
#: milliseconds however small its input, and a run has a file per PE.
_GROUP_ROWS = 1 << 18
_GROUP_CHUNKS = 1024


def _region_sums(chunks: list[pd.DataFrame], value_columns: list[str]) -> pd.DataFrame:
    """Lines and ``value_columns`` summed per (dst_pe, mailbox) over ``chunks``."""
    frame = chunks[0] if len(chunks) == 1 else pd.concat(chunks, ignore_index=True)
    grouped = frame.groupby(_KEYS, sort=False)
    part = grouped[value_columns].sum()
    part.insert(0, "lines", grouped.size())
    return part


#: Chunks of fewer lines go to the groupby (with the chunks around them).
_ONE_KEY_MIN_ROWS = 4096
#: A chunk whose lines but one in this many share its first line's (PE,
#: mailbox) is summed by :func:`_one_key_rows`.
_ONE_KEY_SHARE = 8


def _one_key_rows(chunk: pd.DataFrame, value_columns: list[str]) -> np.ndarray | None:
    """A chunk of one PAPI file summed without a groupby, or None.

    Nearly all the lines of a file's block are those of one (PE, mailbox):
    their sums are the column totals less the other lines' (int64
    arithmetic, which wraps as the groupby's sum does). Returns rows
    ``pe, mailbox, lines, <value_columns>``: that key's, then each other
    line as it is (``lines`` 1), for :func:`_summed_frame` to group. None
    for a small chunk, a column that is not integer (the groupby sums
    floats its own way) or a chunk of many keys.
    """
    if len(chunk) < _ONE_KEY_MIN_ROWS:
        return None
    pe, mailbox, *values = (chunk[name].to_numpy() for name in [*_KEYS, *value_columns])
    if any(column.dtype.kind != "i" for column in (pe, mailbox, *values)):
        return None
    other = np.flatnonzero((pe != pe[0]) | (mailbox != mailbox[0]))
    if other.size * _ONE_KEY_SHARE > len(chunk):
        return None
    rows = np.empty((1 + other.size, 3 + len(values)), dtype=np.int64)
    rows[0, :3] = (pe[0], mailbox[0], len(chunk) - other.size)
    rows[1:, 0] = pe[other]
    rows[1:, 1] = mailbox[other]
    rows[1:, 2] = 1
    for j, column in enumerate(values):
        column = column.astype(np.int64, copy=False)
        others = column[other]
        total = column.sum(keepdims=True)  # arrays: a wrapping sum raises no warning
        total -= others.sum(keepdims=True)
        rows[0, 3 + j] = total[0]
        rows[1:, 3 + j] = others
    return rows


def _summed_frame(summed: list[np.ndarray], value_columns: list[str]) -> pd.DataFrame:
    """The rows of :func:`_one_key_rows`, as a :func:`_region_sums` frame."""
    rows = np.concatenate(summed)
    index = pd.MultiIndex.from_arrays([rows[:, 0], rows[:, 1]], names=_KEYS)
    frame = pd.DataFrame(rows[:, 2:], index=index, columns=["lines", *value_columns])
    return frame.groupby(level=[0, 1], sort=False).sum() if len(rows) > 1 else frame


def _empty_regions(counters: tuple[str, ...]) -> pd.DataFrame:
    columns = [*PAPI_REGION_COLUMNS, *counters]
    return pd.DataFrame(
        {c: pd.Series([], dtype=object if c == "region" else np.int64) for c in columns}
    )


def papi_breakdown(regions: pd.DataFrame, *, num_pes: int | None = None) -> pd.DataFrame:
    """One row per PE: MAIN and PROC per counter, messages handled, sends issued.

    Parameters
    ----------
    regions
        :func:`papi_regions` output. Not modified.
    num_pes
        Rows for PEs 0..num_pes-1 (PEs without lines get zeros); default:
        up to the largest PE seen.

    Returns
    -------
    pandas.DataFrame
        Index ``pe``; columns :func:`actorprof.schema.papi_pe_columns`
        (without ``pe``): ``main_lines`` (MAIN lines, normally 1),
        ``messages`` (handled messages = PROC lines), ``main_sends`` and
        ``proc_sends`` (``num_sends`` of the MAIN line and summed over the
        handlers), and for each counter C: ``C_main``, ``C_proc``,
        ``C_total`` (= main + proc) and ``C_per_message`` (= proc / messages,
        NaN for a PE that handled none). The columns that need the MAIN
        line (``main_sends``, ``C_main``, ``C_total``) are nullable
        ``Int64``: ``<NA>`` for a PE without MAIN line (``main_lines`` 0: the
        job ended before ``done(0)``, or the PE left no file), whose MAIN
        region is unknown, never 0 (:func:`main_unknown` lists them).

    Raises
    ------
    ValueError
        ``num_pes`` smaller than a PE seen.
    """
    counters = counter_names(regions)
    n = _num_pes(regions["pe"], num_pes)
    pe = regions["pe"].to_numpy(dtype=np.int64)
    if not bool((pe[1:] >= pe[:-1]).all()):  # each PE's rows together (a copy)
        order = np.argsort(pe, kind="stable")
        regions, pe = regions.iloc[order], pe[order]
    main = regions["mailbox"].to_numpy() == MAIN_MAILBOX

    def per_pe(column: str, mask: np.ndarray) -> np.ndarray:
        # int64 sums of each PE's rows: exact (float weights round above 2**53)
        ids, values = pe[mask], regions[column].to_numpy(dtype=np.int64)[mask]
        sums = np.zeros(n, dtype=np.int64)
        if ids.size:
            starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
            sums[ids[starts]] = np.add.reduceat(values, starts)
        return sums

    table: dict[str, Any] = {
        "main_lines": per_pe("lines", main),
        "messages": per_pe("lines", ~main),
        "proc_sends": per_pe("num_sends", ~main),
    }
    # no MAIN line (the job ended before done(0)): the MAIN region is unknown, not 0
    unknown = table["main_lines"] == 0

    def known(values: np.ndarray) -> pd.arrays.IntegerArray:
        return pd.arrays.IntegerArray(values, unknown.copy())

    table["main_sends"] = known(per_pe("num_sends", main))
    messages = table["messages"].astype(np.float64)
    for name in counters:
        in_main = per_pe(name, main)
        in_proc = per_pe(name, ~main)
        table[f"{name}_main"] = known(in_main)
        table[f"{name}_proc"] = in_proc
        table[f"{name}_total"] = known(in_main + in_proc)
        with np.errstate(divide="ignore", invalid="ignore"):
            table[f"{name}_per_message"] = np.where(messages > 0, in_proc / messages, np.nan)
    frame = pd.DataFrame(table, index=pd.RangeIndex(n, name="pe"))
    return frame[list(papi_pe_columns(counters)[1:])]


def main_unknown(breakdown: pd.DataFrame) -> list[int]:
    """PEs of a :func:`papi_breakdown` table without MAIN line: their MAIN is unknown."""
    return [int(pe) for pe in breakdown.index[breakdown["main_lines"].to_numpy() == 0]]


def _num_pes(pe: pd.Series, num_pes: int | None) -> int:
    seen = int(pe.max()) + 1 if len(pe) else 0
    if num_pes is None:
        return max(seen, 1)
    if num_pes < seen:
        raise ValueError(f"num_pes is {num_pes} but PE {seen - 1} has PAPI lines")
    return num_pes


def papi_segments(
    regions: pd.DataFrame,
    value: str,
    *,
    by_mailbox: bool = False,
    num_pes: int | None = None,
) -> pd.DataFrame:
    """Stacks of one value per PE: MAIN and PROC (or one segment per mailbox).

    Parameters
    ----------
    regions
        :func:`papi_regions` output. Not modified.
    value
        A counter name, ``"num_sends"`` (sends issued) or ``"messages"``
        (handled messages; PROC only: the MAIN line is not a message).
    by_mailbox
        Split PROC into ``mailbox <m>`` segments.
    num_pes
        As :func:`papi_breakdown`.

    Returns
    -------
    pandas.DataFrame
        Index ``pe`` (0..N-1), columns ``MAIN``, ``PROC`` or ``MAIN``,
        ``mailbox 0``, ... (no ``MAIN`` for ``messages``), int64; when a PE
        has no MAIN line, ``MAIN`` is float64 with NaN (unknown) there.

    Raises
    ------
    ValueError
        ``value`` is not a column of ``regions``.
    """
    column = "lines" if value == "messages" else value
    if column not in regions.columns or column in ("pe", "mailbox", "region"):
        raise ValueError(
            f"value must be a counter ({', '.join(counter_names(regions))}), "
            f"'num_sends' or 'messages'; got {value!r}"
        )
    n = _num_pes(regions["pe"], num_pes)
    keys = np.where(
        regions["mailbox"].to_numpy() == MAIN_MAILBOX,
        "MAIN",
        ("mailbox " + regions["mailbox"].astype(str)).to_numpy() if by_mailbox else "PROC",
    )
    wide = (
        pd.DataFrame({"pe": regions["pe"].to_numpy(), "segment": keys, "v": regions[column]})
        .pivot_table(index="pe", columns="segment", values="v", aggfunc="sum", fill_value=0)
        .reindex(pd.RangeIndex(n, name="pe"), fill_value=0)
    )
    order = ["MAIN"] if value != "messages" else []
    if by_mailbox:
        mailboxes = sorted(int(m) for m in regions["mailbox"].unique() if m != MAIN_MAILBOX)
        order += [f"mailbox {m}" for m in mailboxes]
    else:
        order.append("PROC")
    wide = wide.reindex(columns=order, fill_value=0).astype(np.int64)
    if "MAIN" in order:
        has_main = np.zeros(n, dtype=bool)
        has_main[regions["pe"].to_numpy()[regions["mailbox"].to_numpy() == MAIN_MAILBOX]] = True
        if not has_main.all():  # unknown, not 0: NaN, which plots leave out
            wide["MAIN"] = wide["MAIN"].astype(np.float64).where(has_main)
    wide.columns = pd.Index(order, name="segment")
    return wide


def zero_counters(breakdown: pd.DataFrame) -> list[str]:
    """Counters of a :func:`papi_breakdown` table whose every value read is 0."""
    names = [c[: -len("_total")] for c in breakdown.columns if c.endswith("_total")]
    return [
        name
        for name in names
        if not breakdown[f"{name}_proc"].to_numpy().any()
        and not breakdown[f"{name}_main"].fillna(0).to_numpy(dtype=np.int64).any()
    ]


# --- overall profile --------------------------------------------------------

#: The consistency checks of :func:`time_checks`: name -> kind ("cycles"/"fraction").
TIME_CHECKS = {
    "T_MAIN = T_inside_finish - T_sends": "cycles",
    "T_PROC = T_process - T_send_in_process": "cycles",
    "T_COMM = T_sends + T_wait - T_PROC": "cycles",
    "T_TOTAL = T_MAIN + T_COMM + T_PROC": "cycles",
    "T_MAIN/T_TOTAL": "fraction",
    "T_COMM/T_TOTAL": "fraction",
    "T_PROC/T_TOTAL": "fraction",
}


def _derived(overall: pd.DataFrame) -> dict[str, pd.Series]:
    """T_MAIN, T_PROC, T_COMM, T_TOTAL from the raw lines (FORMATS.md section 3)."""
    main = overall["t_inside_finish_cycles"] - overall["t_sends_cycles"]
    proc = overall["t_process_cycles"] - overall["t_send_in_process_cycles"]
    comm = overall["t_sends_cycles"] + overall["t_wait_cycles"] - proc
    return {"main": main, "comm": comm, "proc": proc, "total": main + comm + proc}


def time_breakdown(overall: pd.DataFrame) -> pd.DataFrame:
    """T_MAIN, T_COMM, T_PROC, T_TOTAL, useful work and fractions per row.

    Parameters
    ----------
    overall
        :func:`actorprof.read_overall` output. Not modified.

    Returns
    -------
    pandas.DataFrame
        The key columns ``label, run, pe`` then
        :data:`actorprof.schema.TIME_COLUMNS`: the four times in cycles
        (nullable Int64) as printed on the ``TCOMM_PROFILING`` line, or
        derived from the raw lines when that line is missing (``source``
        says which: ``tcomm``, ``derived`` or ``missing``); ``useful_cycles``
        = T_MAIN + T_PROC; ``main_frac``, ``comm_frac``, ``proc_frac`` =
        time / T_TOTAL (NaN when unknown or T_TOTAL <= 0);
        ``total_vs_outside_pct`` = 100 (T_TOTAL - T_outside_finish) /
        T_outside_finish (what the runtime's warning line is about).
    """
    derived = _derived(overall)
    printed = {part: overall[f"tcomm_{part}_cycles"] for part in ("main", "comm", "proc", "total")}
    has_tcomm = pd.concat(printed.values(), axis=1).notna().all(axis=1).to_numpy()
    has_raw = pd.concat(derived.values(), axis=1).notna().all(axis=1).to_numpy()
    out = overall[list(OVERALL_KEY_COLUMNS)].copy()
    for part in ("main", "comm", "proc", "total"):
        chosen = printed[part].where(has_tcomm, derived[part])
        out[f"t_{part}_cycles"] = chosen.astype("Int64")
    out["useful_cycles"] = out["t_main_cycles"] + out["t_proc_cycles"]
    total = out["t_total_cycles"].astype("Float64")
    positive = (total > 0).fillna(False).to_numpy()
    for part in ("main", "comm", "proc"):
        frac = (out[f"t_{part}_cycles"].astype("Float64") / total).where(positive)
        out[f"{part}_frac"] = frac.to_numpy(dtype=np.float64, na_value=np.nan)
    outside = overall["t_outside_finish_cycles"].astype("Float64")
    pct = (100.0 * (total - outside) / outside).where((outside > 0).fillna(False))
    out["total_vs_outside_pct"] = pct.to_numpy(dtype=np.float64, na_value=np.nan)
    out["source"] = np.where(has_tcomm, "tcomm", np.where(has_raw, "derived", "missing"))
    out["source"] = out["source"].astype(object)
    return out[[*OVERALL_KEY_COLUMNS, *TIME_COLUMNS]]


def time_checks(overall: pd.DataFrame, *, frac_tol: float = 1e-6) -> pd.DataFrame:
    """Compare the printed ``TCOMM_PROFILING`` values with the raw lines.

    Parameters
    ----------
    overall
        :func:`actorprof.read_overall` output. Not modified.
    frac_tol
        Largest accepted difference of a printed fraction (6 decimals:
        rounding alone gives up to 5e-7).

    Returns
    -------
    pandas.DataFrame
        One row per (row of ``overall``, check of :data:`TIME_CHECKS`) whose
        both sides are known: ``label, run, pe, check, expected`` (computed),
        ``found`` (printed), ``difference`` (found - expected), ``agrees``
        (cycles: exactly equal; fractions: within ``frac_tol``).

    Raises
    ------
    ValueError
        Negative ``frac_tol``.
    """
    if frac_tol < 0:
        raise ValueError(f"frac_tol must be >= 0, got {frac_tol}")
    derived = _derived(overall)
    printed_total = overall["tcomm_total_cycles"].astype("Float64")
    sides: dict[str, tuple[pd.Series, pd.Series]] = {
        "T_MAIN = T_inside_finish - T_sends": (derived["main"], overall["tcomm_main_cycles"]),
        "T_PROC = T_process - T_send_in_process": (
            derived["proc"],
            overall["tcomm_proc_cycles"],
        ),
        "T_COMM = T_sends + T_wait - T_PROC": (derived["comm"], overall["tcomm_comm_cycles"]),
        "T_TOTAL = T_MAIN + T_COMM + T_PROC": (
            overall["tcomm_main_cycles"]
            + overall["tcomm_comm_cycles"]
            + overall["tcomm_proc_cycles"],
            overall["tcomm_total_cycles"],
        ),
    }
    for part in ("MAIN", "COMM", "PROC"):
        expected = overall[f"tcomm_{part.lower()}_cycles"].astype("Float64") / printed_total
        sides[f"T_{part}/T_TOTAL"] = (
            expected.where((printed_total > 0).fillna(False)),
            overall[f"tcomm_{part.lower()}_frac"],
        )
    pieces: list[pd.DataFrame] = []
    keys = overall[list(OVERALL_KEY_COLUMNS)]
    for name, (expected, found) in sides.items():
        exp = expected.astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)
        got = pd.Series(found).astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)
        known = ~(np.isnan(exp) | np.isnan(got))
        diff = got - exp
        tol = frac_tol if TIME_CHECKS[name] == "fraction" else 0.0
        piece = keys[known].copy()
        piece["check"] = name
        piece["expected"] = exp[known]
        piece["found"] = got[known]
        piece["difference"] = diff[known]
        piece["agrees"] = np.abs(diff[known]) <= tol
        pieces.append(piece)
    result = pd.concat(pieces, ignore_index=True)
    result["check"] = result["check"].astype(object)
    return result


@dataclass(frozen=True)
class PopEfficiencies:
    """POP efficiencies of one run; None where undefined (a zero maximum)."""

    n: int
    load_balance: float | None
    communication_efficiency: float | None
    parallel_efficiency: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pop_efficiencies(
    useful: pd.Series | np.ndarray, total: pd.Series | np.ndarray
) -> PopEfficiencies:
    """POP Centre of Excellence efficiencies from per-PE useful and total time.

    - load balance = mean(useful) / max(useful)
      (:attr:`Imbalance.pop_load_balance` of :func:`imbalance`);
    - communication efficiency = max(useful) / max(total);
    - parallel efficiency = load balance x communication efficiency.

    Useful time is T_MAIN + T_PROC (computation), total time T_TOTAL.

    Parameters
    ----------
    useful, total
        One value per PE, same length, finite and non-negative.

    Returns
    -------
    PopEfficiencies

    Raises
    ------
    ValueError
        Lengths differ, empty, negative or non-finite values.

    Examples
    --------
    >>> e = pop_efficiencies(np.array([5.0, 10.0]), np.array([20.0, 20.0]))
    >>> e.load_balance, e.communication_efficiency, e.parallel_efficiency
    (0.75, 0.5, 0.375)
    """
    u = np.asarray(useful, dtype=np.float64)
    t = np.asarray(total, dtype=np.float64)
    if u.shape != t.shape:
        raise ValueError(f"useful and total differ in length ({u.size} vs {t.size})")
    if not np.isfinite(t).all() or (t < 0).any():
        raise ValueError("total times must be finite and non-negative")
    balance = imbalance(u).pop_load_balance  # checks useful (non-empty, finite, >= 0)
    t_max = float(t.max())
    comm = float(u.max()) / t_max if t_max > 0 else None
    parallel = balance * comm if balance is not None and comm is not None else None
    return PopEfficiencies(int(u.size), balance, comm, parallel)
