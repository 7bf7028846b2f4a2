"""Every class of bad input, through every command: exact counts, exact messages.

The corpus is tests/data/bad/ (its README.md lists each case and the outcome
pinned here). Each row runs one command through click's CliRunner and checks
the exit code, substrings of stderr and, when files were written, the line
accounting of every file in the summary JSON: lines read, blank, and skipped
per reason. Whatever happens, stderr never holds a Python traceback (nor a
Python warning) unless -v was given; with -v, our errors show one.

Figures are stubbed here (``Figure.savefig`` writes a placeholder) to keep the
table fast; rendering is covered by each command's own tests and by
tests/test_outputs.py, which runs every command on the shipped examples.
"""

from __future__ import annotations

import builtins
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from actorprof.cli import main

BAD = Path(__file__).resolve().parent / "data" / "bad"

CUT = "last line cut (no line end; the job was probably killed)"
NUL = "NUL bytes (file blocks never written; the node probably crashed)"
OUT = "program output"
BROKEN = "broken trace line (expected: send type, bytes, src_pe, dst_pe)"
MALFORMED = "malformed profile line"
PE_HINT = "Pass the run's real PE count (or omit --num-pes to infer it)."


def fields(found: int, expected: str = "5 or 6") -> str:
    return f"wrong number of fields (expected {expected}, found {found})"


COMMANDS = ("logical", "timeline", "export", "papi", "overall", "physical")

#: file name -> (lines_read, lines_blank, {reason: lines skipped})
Counts = dict[str, tuple[int, int, dict[str, int]]]


@dataclass(frozen=True)
class Row:
    id: str
    argv: list[str]
    code: int
    stderr: list[str] = field(default_factory=list)
    counts: Counts | None = None
    #: substrings that must NOT be in stderr
    absent: list[str] = field(default_factory=list)


def argv(command: str, case: str, *extra: str) -> list[str]:
    path = str(BAD / case) if not case.startswith("/") else case
    # the commands that read through the engine: no cache (tests must read the files)
    engines = ("logical", "physical", "aggregation", "report")
    engine = ["-j", "1", "--no-cache"] if command in engines else []
    return [command, path, *extra, *engine]


def each_logical_command(
    case: str,
    counts: Counts | None,
    stderr: list[str],
    *extra: str,
    code: int = 0,
    absent: list[str] | None = None,
    inferred_missing: str | None = None,
) -> list[Row]:
    """The same outcome through logical, timeline and export (which writes no
    accounting). ``inferred_missing``: the warning of missing PE files that
    ``logical`` gives without --num-pes: it infers the run's PEs from the
    PE ids sent to as well (the timeline's PEs are the senders)."""
    rows = []
    for command in ("logical", "timeline", "export"):
        said, unsaid = stderr, absent or []
        if inferred_missing is not None and command == "logical":
            said, unsaid = [*stderr, inferred_missing], [a for a in unsaid if a != "warning"]
        rows.append(
            Row(
                f"{command}-{case}{'-' + '-'.join(extra) if extra else ''}",
                argv(command, case, *extra),
                code,
                said,
                None if command == "export" else counts,
                unsaid,
            )
        )
    return rows


P0_OK = (2, 0, {})  # the two good lines of the logical corpus files
ROWS: list[Row] = [
    # --- logical trace (logical, timeline, export) ----------------------------------
    *each_logical_command(
        "logical_cut_last",
        {"PE0_send.csv": (3, 0, {CUT: 1}), "PE1_send.csv": P0_OK},
        [
            f"logical_cut_last/PE0_send.csv:4: {CUT}: '0, 0, 1, 2, 16, 17000'",
            "logical_cut_last/PE0_send.csv: skipped 1 line(s): 1 last line cut",
        ],
    ),
    *each_logical_command(
        "logical_nul",
        {"PE0_send.csv": (2, 0, {NUL: 3}), "PE1_send.csv": P0_OK},
        [
            f"logical_nul/PE0_send.csv:2: {NUL}: '0, 0, \\x00\\x00\\x00, 1, 16, 1700000000.000002'",
            f"logical_nul/PE0_send.csv:3: {NUL}: '" + "\\x00" * 32 + "'",
            # invalid UTF-8 is shown as U+FFFD, NUL and control bytes as \x00 (escaped once)
            f"logical_nul/PE0_send.csv:4: {NUL}: '\ufffd\ufffd\\x00\\x01garbage\\x7f'",
        ],
    ),
    *each_logical_command(
        "logical_all_nul",
        None,
        [
            f"Error: {BAD}/logical_all_nul/PE1_send.csv:1: no line of this file is a logical "
            f"trace line (first: {NUL}: '" + "\\x00" * 120 + "...')."
        ],
        code=1,
    ),
    *each_logical_command(
        "logical_empty",
        {"PE0_send.csv": P0_OK, "PE1_send.csv": (0, 0, {}), "PE2_send.csv": (0, 2, {})},
        [],
        absent=["warning"],
    ),
    *each_logical_command(
        "logical_empty",
        {"PE0_send.csv": P0_OK, "PE1_send.csv": (0, 0, {}), "PE2_send.csv": (0, 2, {})},
        ["warning: 1 of 4 PE files missing: PE 3 (counted as PEs that wrote nothing"],
        "--num-pes",
        "4",
    ),
    *each_logical_command(
        "logical_header",
        {"PE0_send.csv": (2, 0, {"not a number in src_node": 1}), "PE1_send.csv": P0_OK},
        [
            "logical_header/PE0_send.csv:1: not a number in src_node: "
            "'src_node,src_pe,dst_node,dst_pe,msg_bytes,time_s'"
        ],
    ),
    *each_logical_command(
        "logical_crlf",
        {"PE0_send.csv": (3, 1, {}), "PE1_send.csv": P0_OK},
        [],
        absent=["warning"],
        inferred_missing="warning: 2 of 4 PE files missing: PE 2-3 (counted as PEs that wrote "
        "nothing; the run's 4 PEs were inferred from the file names and PE ids: were files "
        "deleted?)",
    ),
    *each_logical_command(
        "logical_columns",
        {"PE0_send.csv": (2, 0, {fields(4): 1, fields(7): 2}), "PE1_send.csv": P0_OK},
        [
            f"logical_columns/PE0_send.csv:2: {fields(7)}: '0, 0, 0, 1, 16, 1700000000.000002, 7'",
            f"logical_columns/PE0_send.csv:3: {fields(4)}: '0, 0, 0, 1'",
            f"logical_columns/PE0_send.csv:5: {fields(7)}: '0, 0, 0, 3, 16, 1700000000.000003,'",
        ],
    ),
    *each_logical_command(
        "logical_values",
        {
            "PE0_send.csv": (
                2,
                0,
                {
                    "negative value in dst_pe": 1,
                    "not a number in dst_pe": 1,
                    "not a number in msg_bytes": 1,
                    "not a number in time_s": 1,
                },
            ),
            "PE1_send.csv": P0_OK,
        },
        [
            "logical_values/PE0_send.csv:2: negative value in dst_pe: "
            "'0, 0, 0, -1, 16, 1700000000.000002'",
            "logical_values/PE0_send.csv:3: not a number in msg_bytes: "
            "'0, 0, 0, 1, abc, 1700000000.000003'",
            "logical_values/PE0_send.csv:4: not a number in time_s: '0, 0, 0, 1, 16, nan'",
        ],
    ),
    *each_logical_command(
        "logical_too_big",
        {
            "PE0_send.csv": (
                2,
                0,
                {
                    "number too large for dst_pe (int32)": 1,
                    "number too large for msg_bytes (max 4294967296)": 1,
                    "number too large for time_s": 1,
                },
            ),
            "PE1_send.csv": P0_OK,
        },
        [
            "logical_too_big/PE0_send.csv:2: number too large for dst_pe (int32): "
            "'0, 0, 0, 2147483648, 16, 1700000000.000002'",
            "logical_too_big/PE0_send.csv:3: number too large for msg_bytes (max 4294967296)",
            "logical_too_big/PE0_send.csv:4: number too large for time_s: '0, 0, 0, 1, 16, 1e999'",
        ],
    ),
    *each_logical_command(
        "logical_pe_beyond",
        {"PE0_send.csv": P0_OK, "PE1_send.csv": P0_OK},
        [],
        absent=["warning"],
        inferred_missing="warning: 6 of 8 PE files missing: PE 2-7",
    ),
    # a PE id beyond --num-pes is a skipped line (file:line), not the end of the run
    *each_logical_command(
        "logical_pe_beyond",
        {"PE0_send.csv": (1, 0, {"PE id beyond --num-pes 4": 1}), "PE1_send.csv": P0_OK},
        [
            "logical_pe_beyond/PE0_send.csv: skipped 1 line(s): 1 PE id beyond --num-pes 4",
            "logical_pe_beyond/PE0_send.csv:2: PE id beyond --num-pes 4: '0, 0, 1, 7, 16, ...'",
        ],
        "--num-pes",
        "4",
    ),
    *each_logical_command(
        "logical_file_beyond",
        {
            "PE0_send.csv": P0_OK,
            "PE1_send.csv": P0_OK,
            "PE5_send.csv": (0, 0, {"PE id beyond --num-pes 4": 1}),
        },
        [
            f"warning: {BAD}/logical_file_beyond/PE5_send.csv: file of PE 5 but --num-pes is 4: "
            "its lines are read, and those naming PE ids beyond are skipped.",
            "logical_file_beyond/PE5_send.csv:1: PE id beyond --num-pes 4: '0, 5, 0, 0, 16, ...'",
        ],
        "--num-pes",
        "4",
    ),
    *each_logical_command(
        "logical_name_mismatch",
        {"PE0_send.csv": P0_OK, "PE1_send.csv": P0_OK},
        [
            "warning: " + str(BAD) + "/logical_name_mismatch/PE1_send.csv: 2 line(s) have "
            "src_pe != 1 (the PE in the file name); they are counted under the src_pe they carry"
        ],
    ),
    Row(
        "logical-logical_two_phases",
        argv("logical", "logical_two_phases"),
        0,
        ["read the unnamed files; other phases here: bfs (choose one with --phase NAME)"],
        {"PE0_send.csv": P0_OK, "PE1_send.csv": P0_OK},
    ),
    Row(
        "logical-logical_two_phases-bfs",
        argv("logical", "logical_two_phases", "--phase", "bfs"),
        0,
        ["logical trace (bfs phase): 3 messages"],
        {"PE0_bfs_send.csv": (1, 0, {}), "PE1_bfs_send.csv": P0_OK},
        ["other phases"],
    ),
    Row(
        "timeline-logical_two_phases",
        argv("timeline", "logical_two_phases", "--num-pes", "4"),
        0,
        [
            "phase (unnamed): 0.000001-0.000004 s, 4 messages",  # exact first/last sends
            "phase bfs: 0.000010-0.000012 s, 3 messages",
            "warning: 2 of 4 PE files missing: PE 2-3",
            "warning: phase bfs: 2 of 4 PE files missing: PE 2-3",
        ],
        {
            "PE0_send.csv": P0_OK,
            "PE1_send.csv": P0_OK,
            "PE0_bfs_send.csv": (1, 0, {}),
            "PE1_bfs_send.csv": P0_OK,
        },
    ),
    Row(
        "logical-logical_named_phases_only",
        argv("logical", "logical_named_phases_only"),
        2,
        [
            "Error: several phases and no unnamed files: a (1 PE files), b (1 PE files). "
            "Choose one with --phase NAME."
        ],
    ),
    Row(
        "timeline-logical_named_phases_only",
        argv("timeline", "logical_named_phases_only"),
        0,
        ["phase a: 0.000001-0.000002 s, 2 messages", "phase b: 0.000007-0.000007 s, 1 messages"],
        {"PE0_a_send.csv": P0_OK, "PE0_b_send.csv": (1, 0, {})},
    ),
    *each_logical_command(
        "logical_two_runs",
        {"PE0_send.csv": P0_OK, "PE1_send.csv": P0_OK, "PE2_send.dat": P0_OK},
        [
            "not read: PE0_send.dat (the PE0_send.csv of the same PE is read instead; "
            "files of an older runtime or another run?)",
            "warning: PE files of two namings are mixed here: PE 0-1 in *_send.csv files; "
            "PE 2 in *_send.dat files. They are all read as one run: are two runs (or two "
            "runtime versions) in one folder?",
        ],
    ),
    *each_logical_command(
        "logical_only_output",
        None,
        [
            f"Error: {BAD}/logical_only_output/PE1_send.csv:1: no line of this file is a logical "
            f"trace line (first: {fields(1)}: 'Running histo on 4 threads'). Is it really a "
            "trace file? Move it out of the folder or fix it."
        ],
        code=1,
    ),
    # --- issue 12: number grammar, harmless variations, compressed files -------------
    *each_logical_command(
        "logical_number_forms",
        {
            "PE0_send.csv": (4, 0, {"not a number in dst_pe": 1}),
            "PE1_send.csv": (4, 0, {"not a number in dst_pe": 4}),
            "PE2_send.csv": (4, 0, {"not a number in src_node": 1}),
            "PE3_send.csv": (4, 0, {"number too large for dst_pe (int32)": 1}),
        },
        [
            "logical_number_forms/PE0_send.csv:5: not a number in dst_pe: "
            "'0, 0, 0, 1e3, 8, 1795245597.031595'",
            "logical_number_forms/PE2_send.csv:3: not a number in src_node: "
            "'\\ufeff0, 2, 0, 1, 16, 1700000000.000004'",
            "logical_number_forms/PE3_send.csv:5: number too large for dst_pe (int32)",
        ],
        absent=["1001"],
    ),
    *each_logical_command(
        "logical_variations",
        {"PE0_send.csv": (8, 1, {}), "PE1_send.csv": (4, 0, {})},
        [],
        absent=["warning"],
        inferred_missing="warning: 2 of 4 PE files missing: PE 2-3",
    ),
    *each_logical_command(
        "logical_gzip",
        {"PE0_send.csv": (4, 0, {})},
        [
            f"warning: not read: 1 compressed PE file(s) in {BAD}/logical_gzip: PE1_send.csv.gz "
            "(actorprof reads plain text; decompress them, e.g. with gunzip, and rerun; their "
            "PEs count as PEs that wrote nothing)"
        ],
    ),
    # every line is read; four times are outliers: counted, named, never binned
    Row(
        "logical-logical_time_outliers",
        argv("logical", "logical_time_outliers"),
        0,
        [],
        {"PE0_send.csv": (6, 0, {}), "PE1_send.csv": (6, 0, {})},
    ),
    *[
        Row(
            f"{command}-logical_time_outliers",
            argv(command, "logical_time_outliers"),
            0,
            [
                "warning: 4 message(s) have an outlier time_s (negative, from 1e+10 s on, or "
                "far outside the others: kept are 1700000000.000000 to 1700000000.003000)",
                "logical_time_outliers/PE0_send.csv:3: 1700003000.001000; "
                f"{BAD}/logical_time_outliers/PE0_send.csv:5: 1e+300; "
                f"{BAD}/logical_time_outliers/PE1_send.csv:2: -1700000000.000200",
            ],
            None
            if command == "export"
            else {"PE0_send.csv": (6, 0, {}), "PE1_send.csv": (6, 0, {})},
        )
        for command in ("timeline", "export")
    ],
    # --- PAPI trace -----------------------------------------------------------------
    Row(
        "papi-papi_cut_last",
        argv("papi", "papi_cut_last"),
        0,
        [f"papi_cut_last/PE0_PAPI.csv:4: {CUT}: '0, 1, 0, 0, 8, 1, 0, 12'"],
        {"PE0_PAPI.csv": (3, 0, {CUT: 1}), "PE1_PAPI.csv": P0_OK},
    ),
    Row(
        "papi-papi_nul",
        argv("papi", "papi_nul"),
        0,
        [
            f"papi_nul/PE0_PAPI.csv:4: {NUL}: "
            "'0, 1, 0, 0, 8, 0, 0, \\x00\\x00, 40, 1700000001.000004'",
            f"papi_nul/PE0_PAPI.csv:5: {NUL}: '",
        ],
        {"PE0_PAPI.csv": (3, 0, {NUL: 2}), "PE1_PAPI.csv": P0_OK},
    ),
    Row(
        "papi-papi_all_nul",
        argv("papi", "papi_all_nul"),
        1,
        [
            f"Error: {BAD}/papi_all_nul/PE1_PAPI.csv:1: no line of this file is a PAPI trace "
            f"(10 fields) line (first: {NUL}: '"
        ],
    ),
    Row(
        "papi-papi_empty",
        argv("papi", "papi_empty"),
        0,
        ["2 messages handled on 2 PEs"],
        {"PE0_PAPI.csv": (3, 0, {}), "PE1_PAPI.csv": (0, 0, {})},
        ["skipped"],
    ),
    Row(
        "papi-papi_header",
        argv("papi", "papi_header"),
        0,
        ["papi_header/PE0_PAPI.csv:1: not a number in src_node: 'src_node,src_pe,dst_node,"],
        {"PE0_PAPI.csv": (3, 0, {"not a number in src_node": 1}), "PE1_PAPI.csv": P0_OK},
    ),
    Row(
        "papi-papi_crlf",
        argv("papi", "papi_crlf"),
        0,
        ["3 messages handled on 2 PEs"],
        {"PE0_PAPI.csv": (3, 1, {}), "PE1_PAPI.csv": P0_OK},
        ["warning: " + str(BAD)],
    ),
    Row(
        "papi-papi_columns",
        argv("papi", "papi_columns"),
        0,
        [
            "papi_columns/PE0_PAPI.csv:4: wrong number of fields (expected 10, found 11)",
            "papi_columns/PE0_PAPI.csv:5: wrong number of fields (expected 10, found 9)",
        ],
        {"PE0_PAPI.csv": (3, 0, {fields(11, "10"): 1, fields(9, "10"): 2}), "PE1_PAPI.csv": P0_OK},
    ),
    Row(
        "papi-papi_values",
        argv("papi", "papi_values"),
        0,
        [
            "papi_values/PE0_PAPI.csv:4: negative value in PAPI_TOT_INS",
            "papi_values/PE0_PAPI.csv:5: not a number in num_sends",
            "papi_values/PE0_PAPI.csv: 1 line(s) with a mailbox below -1; they are counted as "
            "PROC lines of that mailbox id",
        ],
        {
            "PE0_PAPI.csv": (
                4,
                0,
                {"negative value in PAPI_TOT_INS": 1, "not a number in num_sends": 1},
            ),
            "PE1_PAPI.csv": P0_OK,
        },
    ),
    Row(
        "papi-papi_too_big",
        argv("papi", "papi_too_big"),
        0,
        [
            "papi_too_big/PE0_PAPI.csv:4: number too large for PAPI_TOT_INS (int64)",
            "papi_too_big/PE0_PAPI.csv:5: number too large for dst_pe (int32)",
        ],
        {
            "PE0_PAPI.csv": (
                3,
                0,
                {
                    "number too large for PAPI_TOT_INS (int64)": 1,
                    "number too large for dst_pe (int32)": 1,
                },
            ),
            "PE1_PAPI.csv": P0_OK,
        },
    ),
    Row(
        "papi-papi_pe_beyond",
        argv("papi", "papi_pe_beyond", "--num-pes", "4"),
        1,
        [f"Error: {BAD}/papi_pe_beyond/PE0_PAPI.csv:2: src_pe 9 but --num-pes is 4. {PE_HINT}"],
    ),
    Row(
        "papi-papi_name_mismatch",
        argv("papi", "papi_name_mismatch"),
        0,
        [
            "papi_name_mismatch/PE1_PAPI.csv: 3 line(s) have dst_pe != 1 (the PE in the file "
            "name); they are counted under the dst_pe they carry"
        ],
        {"PE0_PAPI.csv": (3, 0, {}), "PE1_PAPI.csv": (3, 0, {})},
    ),
    Row(
        "papi-papi_two_phases",
        argv("papi", "papi_two_phases"),
        0,
        ["read the unnamed files; other phases here: bfs (choose one with --phase NAME)"],
        {"PE0_PAPI.csv": (3, 0, {}), "PE1_PAPI.csv": P0_OK},
    ),
    Row(
        "papi-papi_two_phases-bfs",
        argv("papi", "papi_two_phases", "--phase", "bfs"),
        0,
        ["PAPI trace (bfs phase): 0 messages handled"],
        {"PE0_bfs_PAPI.csv": (1, 0, {})},
    ),
    Row(
        "papi-papi_two_runs",
        argv("papi", "papi_two_runs"),
        0,
        [
            "not read: PE0_papi.csv (the PE0_PAPI.csv of the same PE is read instead",
            "warning: PE files of two namings are mixed here: PE 0 in *_PAPI.csv files; "
            "PE 1 in *_papi.csv files.",
            "papi_two_runs/PE0_PAPI.csv: 2 MAIN lines (mailbox -1), expected 1; they are summed",
        ],
        {"PE0_PAPI.csv": (6, 0, {}), "PE1_papi.csv": P0_OK},
    ),
    Row(
        "papi-papi_only_output",
        argv("papi", "papi_only_output"),
        1,
        [
            f"Error: {BAD}/papi_only_output/PE1_PAPI.csv:1: no line of this file is a PAPI trace "
            f"(10 fields) line (first: {fields(1, '10')}: 'PAPI_start failed')."
        ],
    ),
    Row(
        "papi-papi_number_forms",
        argv("papi", "papi_number_forms"),
        0,
        [
            "papi_number_forms/PE0_PAPI.csv:3: not a number in num_sends: "
            "'0, 0, 0, 0, 0, -1, 1e9, 1000, 400, 1700000001.000009'",
            "papi_number_forms/PE0_PAPI.csv: no MAIN line (mailbox -1)",
            # PE 0's MAIN line is lost: unknown (PE 1's 5 alone would be wrong), never 10^9
            "sends issued: unknown from MAIN",
            "MAIN UNKNOWN on 1 of 2 PEs (PE 0)",
        ],
        {
            "PE0_PAPI.csv": (2, 0, {"not a number in num_sends": 1}),
            "PE1_PAPI.csv": (3, 0, {}),
        },
        absent=["1,000,000,00"],
    ),
    Row(
        "papi-papi_no_main",
        argv("papi", "papi_no_main"),
        0,
        [
            "papi_no_main/PE1_PAPI.csv: no MAIN line (mailbox -1); the MAIN region of PE 1 is "
            "unknown",
            "sends issued: unknown from MAIN, 1 from handlers",
            "MAIN UNKNOWN on 1 of 2 PEs (PE 1): no MAIN line; MAIN values left empty, not 0",
            "PAPI_TOT_INS: PROC 460 (115.0 per message); MAIN and total unknown",
        ],
        {"PE0_PAPI.csv": (3, 0, {}), "PE1_PAPI.csv": (2, 0, {CUT: 1})},
    ),
    Row(
        "report-papi_no_main",
        argv("report", "papi_no_main"),
        0,
        [
            "[warning] the PAPI trace has no MAIN line on 1 of 2 PEs (PE 1)",
            "The logical trace sent 5 messages; the PAPI trace handled 4 (80.0 %): 1 "
            "message(s) left no PAPI line",
        ],
        absent=["messages handled are balanced", "stragglers in messages handled"],
    ),
    Row(
        "papi-papi_flipped_byte",
        argv("papi", "papi_flipped_byte"),
        0,
        [f"papi_flipped_byte/PE0_PAPI.csv:1: {fields(11, '10')}"],
        {"PE0_PAPI.csv": (2, 0, {fields(11, "10"): 1}), "PE1_PAPI.csv": (3, 0, {})},
    ),
    # --- overall profile ------------------------------------------------------------
    Row(
        "overall-overall_cut_last",
        argv("overall", "overall_cut_last"),
        0,
        [
            f"overall_cut_last/overall.txt:17: {CUT} skipped: 'histo [PE1] TCOMM_PROFILING "
            "(T_MAIN/T_TOTAL, T_COMM/T_TOTAL, T_PROC/T_TOTAL), 0.6000'",
            "'histo' PE 1: missing line(s) TCOMM_PROFILING (T_MAIN/T_TOTAL, ...)",
        ],
        {"overall.txt": (15, 0, {CUT: 1, OUT: 1})},
    ),
    Row(
        "overall-overall_nul",
        argv("overall", "overall_nul"),
        0,
        [
            f"overall_nul/overall.txt:6: {NUL} skipped: '" + "\\x00" * 24 + "'",
            f"overall_nul/overall.txt:19: {NUL} skipped: '" + "\\x00" * 120 + "...'",
            "14 of 14 checks agree",
        ],
        {"overall.txt": (16, 0, {NUL: 2, OUT: 1})},
    ),
    Row(
        "overall-overall_all_nul",
        argv("overall", "overall_all_nul"),
        1,
        [
            f"Error: {BAD}/overall_all_nul/overall.txt: only NUL bytes in this file (4,096 "
            "bytes): its data was never written (did the node crash, or the disk fill up?)."
        ],
    ),
    Row(
        "overall-overall_empty",
        argv("overall", "overall_empty"),
        1,
        [
            f"Error: {BAD}/overall_empty/overall.txt: no profile line in this file: it is empty "
            "(0 bytes); expected lines like",
            "Was the program built with -DENABLE_TCOMM_PROFILING, and is this its stdout?",
        ],
    ),
    Row(
        "overall-overall_crlf",
        argv("overall", "overall_crlf"),
        0,
        ["1 line(s) of program output (not profile lines) ignored", "14 of 14 checks agree"],
        {"overall.txt": (16, 1, {OUT: 1})},
        ["warning"],
    ),
    Row(
        "overall-overall_values",
        argv("overall", "overall_values"),
        0,
        [
            "overall_values/overall.txt:11: malformed profile line skipped: "
            "'histo [PE1] T_sends (count=abc): 400 cycles'",
            "overall_values/overall.txt:12: number too large for t_process_cycles (max 2^59) "
            "skipped: 'histo [PE1] T_process (count=2): 99999999999999999999 cycles'",
            "overall_values/overall.txt:13: number too large for tcomm_main_frac skipped",
        ],
        {
            "overall.txt": (
                10,
                0,
                {
                    MALFORMED: 1,
                    "number too large for t_process_cycles (max 2^59)": 1,
                    "number too large for tcomm_main_frac": 1,
                },
            )
        },
    ),
    Row(
        "overall-overall_truncated_blocks",
        argv("overall", "overall_truncated_blocks"),
        0,
        [
            "'histo' PE 1: missing line(s) T_sends, T_send_in_process, T_process, "
            "TCOMM_PROFILING (T_MAIN, ...), TCOMM_PROFILING (T_MAIN/T_TOTAL, ...) (values left "
            "empty; cut output or a PE that did not finish?)"
        ],
        {"overall.txt": (11, 0, {OUT: 1})},
    ),
    Row(
        "overall-overall_duplicated_pes",
        argv("overall", "overall_duplicated_pes"),
        0,
        [
            "warning: 'histo' #2: 1 of 2 PEs have no profile lines: PE 1 (not invented: left out)",
            "overall profile 'histo' #2: 1 PE(s)",
        ],
        {"overall.txt": (24, 0, {})},
    ),
    Row(
        "overall-overall_split",
        argv("overall", "overall_split"),
        0,
        ["3 line(s) of program output (not profile lines) ignored", "14 of 14 checks agree"],
        {"overall.txt": (16, 0, {OUT: 3})},
        ["warning"],
    ),
    Row(
        "overall-overall_pe_beyond",
        argv("overall", "overall_pe_beyond"),
        0,
        ["'histo': 6 of 8 PEs have no profile lines: PE 1-6"],
        {"overall.txt": (16, 0, {})},
    ),
    Row(
        "overall-overall_pe_beyond-num-pes",
        argv("overall", "overall_pe_beyond", "--num-pes", "4"),
        1,
        [f"Error: {BAD}/overall_pe_beyond/overall.txt:9: PE 7 but --num-pes is 4. {PE_HINT}"],
    ),
    Row(
        "overall-overall_two_runs",
        argv("overall", "overall_two_runs"),
        0,
        [
            "2 labels in the profile ('Run 0', 'Run 1'): each is analysed apart",
            "overall profile 'Run 1': 2 PE(s), longest T_TOTAL 1,510 cycles",
        ],
        {"overall.txt": (32, 0, {})},
    ),
    Row(
        "overall-overall_terminal",
        argv("overall", "overall_terminal"),
        0,
        ["overall profile 'histo': 2 PE(s)", "14 of 14 checks agree"],
        {"overall.txt": (16, 1, {OUT: 1})},
        ["warning", "labels in the profile"],
    ),
    Row(
        "overall-overall_huge_values",
        argv("overall", "overall_huge_values"),
        0,
        [
            "overall_huge_values/overall.txt:12: number too large for t_wait_cycles (max 2^59) "
            "skipped",
            "overall_huge_values/overall.txt:14: number too large for t_sends_cycles (max 2^59) "
            "skipped",
        ],
        {
            "overall.txt": (
                14,
                1,
                {
                    OUT: 1,
                    "number too large for t_wait_cycles (max 2^59)": 1,
                    "number too large for t_sends_cycles (max 2^59)": 1,
                },
            )
        },
        ["disagrees"],
    ),
    # --- physical trace -------------------------------------------------------------
    Row(
        "physical-physical_cut_last",
        argv("physical", "physical_cut_last"),
        0,
        [f"physical_cut_last/physical.txt:6: {CUT}: 'nonblock_send, 81'"],
        {"physical.txt": (4, 0, {CUT: 1, OUT: 1})},
    ),
    Row(
        "physical-physical_nul",
        argv("physical", "physical_nul"),
        0,
        [
            f"physical_nul/physical.txt:6: {NUL}: '" + "\\x00" * 16 + "'",
            f"physical_nul/physical.txt:8: {NUL}: '" + "\\x00" * 120 + "...'",
        ],
        {"physical.txt": (5, 0, {NUL: 2, OUT: 1})},
    ),
    Row(
        "physical-physical_all_nul",
        argv("physical", "physical_all_nul"),
        1,
        [
            f"Error: {BAD}/physical_all_nul/physical.txt: only NUL bytes in this file (4,096 "
            "bytes): its data was never written (did the node crash, or the disk fill up?)."
        ],
    ),
    Row(
        "physical-physical_empty",
        argv("physical", "physical_empty"),
        1,
        [
            f"Error: {BAD}/physical_empty/physical.txt: no trace line in this file: 0 line(s): "
            "the file is empty (0 bytes)."
        ],
    ),
    Row(
        "physical-physical_header",
        argv("physical", "physical_header"),
        0,
        ["physical_header/physical.txt: 2 other line(s) ignored: 2 program output"],
        {"physical.txt": (4, 0, {OUT: 2})},
        ["warning"],
    ),
    Row(
        "physical-physical_crlf",
        argv("physical", "physical_crlf"),
        0,
        ["physical trace: 4 calls on 4 PEs"],
        {"physical.txt": (4, 1, {OUT: 1})},
        ["warning"],
    ),
    Row(
        "physical-physical_columns",
        argv("physical", "physical_columns"),
        0,
        [
            f"physical_columns/physical.txt:7: {BROKEN}: 'nonblock_send, 64, 0'",
            f"physical_columns/physical.txt:8: {BROKEN}: 'local_send'",
            "physical trace: 5 calls on 4 PEs",
        ],
        {"physical.txt": (5, 0, {BROKEN: 2, OUT: 1})},
    ),
    Row(
        "physical-physical_values",
        argv("physical", "physical_values"),
        0,
        [
            "physical_values/physical.txt:6: negative value in src_pe: 'local_send, 64, -1, 2'",
            f"physical_values/physical.txt:7: {BROKEN}: 'local_send, 10x0, 2, 3'",
        ],
        {"physical.txt": (4, 0, {BROKEN: 2, "negative value in src_pe": 1, OUT: 1})},
    ),
    Row(
        "physical-physical_too_big",
        argv("physical", "physical_too_big"),
        0,
        [
            "physical_too_big/physical.txt:6: number too large for buffer_bytes",
            "physical_too_big/physical.txt:7: number too large for src_pe",
        ],
        {
            "physical.txt": (
                4,
                0,
                {"number too large for buffer_bytes": 1, "number too large for src_pe": 1, OUT: 1},
            )
        },
    ),
    Row(
        "physical-physical_pe_beyond",
        argv("physical", "physical_pe_beyond"),
        0,
        ["inferred --num-pes 10 from the largest PE id in the trace"],
        {"physical.txt": (5, 0, {OUT: 1})},
    ),
    Row(
        "physical-physical_pe_beyond-num-pes",
        argv("physical", "physical_pe_beyond", "--num-pes", "4"),
        1,
        [f"Error: {BAD}/physical_pe_beyond/physical.txt:6: dst_pe 9 but --num-pes is 4. {PE_HINT}"],
    ),
    Row(
        "physical-physical_only_output",
        argv("physical", "physical_only_output"),
        1,
        [
            f"Error: {BAD}/physical_only_output/physical.txt: no trace line in this file: 3 "
            "line(s), 3 of program output (first: 'Running ig on 4 PEs'). A physical trace has "
            "lines like 'nonblock_send, 8192, 3, 19'"
        ],
    ),
    # --- aggregation (both readers) -------------------------------------------------
    Row(
        "aggregation-aggregation_bad_lines",
        argv("aggregation", "aggregation_bad_lines"),
        0,
        [
            f"aggregation_bad_lines/physical.txt:6: {CUT}: 'local_send, 8, 0'",
            f"aggregation_bad_lines/PE1_send.csv:2: {CUT}: '0, 1, 0, 3, 1'",
            "aggregation_bad_lines/PE0_send.csv:1: not a number in src_node",
            "the physical trace has 1 unreadable line(s) (lost data)",
            "the logical trace has 2 unreadable line(s) (lost data)",
        ],
        {
            "physical.txt": (4, 0, {CUT: 1, OUT: 1}),
            "PE0_send.csv": (2, 0, {"not a number in src_node": 1}),
            "PE1_send.csv": (1, 0, {CUT: 1}),
        },
    ),
    Row(
        "aggregation-aggregation_two_runs",
        argv("aggregation", "aggregation_two_runs"),
        0,
        [
            "verdict: not one run",
            "the logical trace names PE 3 but the physical trace stops at PE 1",
        ],
        {
            "physical.txt": P0_OK,
            "PE0_send.csv": P0_OK,
            "PE1_send.csv": (1, 0, {}),
            "PE2_send.csv": (1, 0, {}),
            "PE3_send.csv": (1, 0, {}),
        },
    ),
    # --- a folder where a file is expected, and the reverse ---------------------------
    *[
        Row(
            f"{command}-folder_as_file",
            argv(command, "folder_as_file"),
            1,
            [
                f"Error: {BAD}/folder_as_file: no trace file found ({name} is a folder, not a "
                "file); looked for "
            ],
        )
        for command, name in (
            ("logical", "PE0_send.csv"),
            ("timeline", "PE0_send.csv"),
            ("export", "PE0_send.csv"),
            ("papi", "PE0_PAPI.csv"),
        )
    ],
    Row(
        "overall-folder_as_file",
        argv("overall", "folder_as_file"),
        1,
        [f"Error: {BAD}/folder_as_file/overall.txt is a folder, not a file."],
    ),
    Row(
        "physical-folder_as_file",
        argv("physical", "folder_as_file"),
        1,
        [f"Error: {BAD}/folder_as_file/physical.txt is a folder, not a file."],
    ),
    Row(
        "aggregation-folder_as_file",
        argv("aggregation", "folder_as_file"),
        1,
        [f"Error: {BAD}/folder_as_file: no physical trace; looked for "],
    ),
    *[
        Row(
            f"{command}-file_as_folder",
            argv(command, "folder_as_file/notes.txt"),
            1,
            [f"Error: {BAD}/folder_as_file/notes.txt: no trace file found; looked for "],
        )
        for command in ("logical", "timeline", "export", "papi")
    ],
    Row(
        "overall-file_as_folder",
        argv("overall", "folder_as_file/notes.txt"),
        1,
        [f"Error: {BAD}/folder_as_file/notes.txt: no profile line in this file: expected lines"],
    ),
    Row(
        "physical-file_as_folder",
        argv("physical", "folder_as_file/notes.txt"),
        1,
        [f"Error: {BAD}/folder_as_file/notes.txt: no trace line in this file: 1 line(s), 1 of"],
    ),
    # --- paths that are neither file nor folder, or not there -------------------------
    *[
        Row(
            f"{command}-device",
            argv(command, "/dev/null"),
            2,
            [
                "Error: /dev/null: neither a regular file nor a folder (a device, pipe or "
                "socket?). Pass the trace file itself, or the folder holding it."
            ],
        )
        for command in COMMANDS
    ],
    *[
        Row(
            f"{command}-missing",
            argv(command, "no_such_case"),
            2,
            ["no_such_case' does not exist."],
        )
        for command in (
            "logical",
            "timeline",
            "export",
            "papi",
            "overall",
            "physical",
            "aggregation",
        )
    ],
]


@pytest.fixture
def fast_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Figures are built but not rendered (a placeholder is written)."""
    from matplotlib.figure import Figure

    import actorprof.write

    def placeholder(figure: Any, handle: Any, **kws: Any) -> None:
        handle.write(b"figure")

    monkeypatch.setattr(Figure, "savefig", placeholder)
    monkeypatch.setattr(actorprof.write, "save_png", placeholder)


def invoke(args: list[str], out: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "-o", str(out)])
    return result.exit_code, result.stdout, result.stderr


def file_counts(summary: dict[str, Any]) -> Counts:
    files = summary["files"]
    if isinstance(files, dict):  # timeline: per phase
        files = [f for per_phase in files.values() for f in per_phase]
    return {
        Path(f["path"]).name: (f["lines_read"], f["lines_blank"], f["skipped_by_reason"])
        for f in files
    }


def assert_clean(stderr: str) -> None:
    assert "Traceback" not in stderr
    assert not re.search(r"\b\w*Warning: ", stderr), stderr  # no Python warning leaked
    assert "internal error" not in stderr
    said = [line for line in stderr.splitlines() if line.startswith("warning: ")]
    assert len(said) == len(set(said)), stderr  # each warning once


@pytest.mark.usefixtures("fast_figures")
@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_bad_input(row: Row, tmp_path: Path) -> None:
    code, out, err = invoke(row.argv, tmp_path)
    assert code == row.code, err
    assert_clean(err)
    for text in row.stderr:
        assert text in err, f"{text!r} not in:\n{err}"
    for text in row.absent:
        assert text not in err, err
    if code != 0:
        assert out == ""  # no file listed, none half-written
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
        return
    written = [Path(p) for p in out.splitlines()]
    assert written and all(p.is_file() for p in written)
    if row.counts is None:
        return
    summary = json.loads(next(p for p in written if p.name.endswith("_summary.json")).read_text())
    assert file_counts(summary) == row.counts
    if "lines_read" in summary:
        assert summary["lines_read"] == sum(c[0] for c in row.counts.values())
        assert summary["lines_skipped"] == sum(sum(c[2].values()) for c in row.counts.values())


ERRORS = [r for r in ROWS if r.code != 0 and not r.id.endswith("-missing")]


@pytest.mark.parametrize("row", ERRORS, ids=[r.id for r in ERRORS])
def test_verbose_shows_the_traceback_of_our_errors(row: Row, tmp_path: Path) -> None:
    code, _, err = invoke([*row.argv, "-v"], tmp_path)
    assert code == row.code
    assert "Traceback (most recent call last)" in err
    assert re.search(r"actorprof\.errors\.\w+Error: ", err) or "UsageError: " in err
    assert row.stderr[0].removeprefix("Error: ") in err


def test_missing_path_is_clicks_usage_error_without_traceback(tmp_path: Path) -> None:
    code, _, err = invoke([*argv("logical", "no_such_case"), "-v"], tmp_path)
    assert code == 2 and "does not exist" in err and "Traceback" not in err


# --- names that are not UTF-8 -------------------------------------------------------


@pytest.mark.usefixtures("fast_figures")
def test_phase_names_that_are_not_utf8(tmp_path: Path) -> None:
    """``PE0_ph<ff><fe>_send.csv``: the phase is read as ``ph\\xff\\xfe`` and every
    command works with it (figure titles, JSON, the report's HTML crashed)."""
    run = tmp_path / "run"
    run.mkdir()
    for pe in range(2):
        for phase in (b"ph\xff\xfe", b"bfs"):
            name = os.fsdecode(b"PE%d_%s_send.csv" % (pe, phase))
            (run / name).write_bytes(
                b"0, %d, 0, %d, 16, 1700000000.000001\n0, %d, 0, 0, 8, 1700000000.000002\n"
                % (pe, 1 - pe, pe)
            )
        (run / os.fsdecode(b"PE%d_ph\xff_PAPI.csv" % pe)).write_bytes(
            b"0, %d, 0, %d, 8, 0, 0, 5, 3, 1700000000.000001\n"
            b"0, %d, 0, %d, 0, -1, 1, 50, 30, 1700000000.000002\n" % (1 - pe, pe, pe, pe)
        )
    escaped = "ph\\xff\\xfe"
    runs = [
        (["logical", str(run), "--no-cache", "--phase", os.fsdecode(b"ph\xff\xfe")], "phase"),
        (["logical", str(run), "--no-cache", "--phase", escaped], "phase"),
        (["timeline", str(run)], "phases"),
        (["papi", str(run)], "phase"),
        (["report", str(run), "--no-cache", "-j", "1"], None),
    ]
    for args, key in runs:
        out = tmp_path / f"out_{len(list(tmp_path.iterdir()))}"
        code, stdout, err = invoke(args, out)
        assert code == 0, err
        assert_clean(err)
        for written in map(Path, stdout.splitlines()):
            written.read_bytes().decode("utf-8")  # valid UTF-8, whatever the names
        summary = json.loads(next(p for p in out.glob("*.json")).read_text())
        if key == "phase":
            assert summary["phase"] in (escaped, "ph\\xff")
        elif key == "phases":
            assert escaped in [p["name"] for p in summary["phases"]]
        else:
            assert set(summary["logical"]["phases"]) == {"bfs", escaped}
            assert set(summary["papi"]["phases"]) == {"ph\\xff"}
    code, _, err = invoke(["logical", str(run), "--no-cache"], tmp_path / "o")
    assert code == 2 and f"bfs (2 PE files), {escaped} (2 PE files)" in err


# --- unreadable files and folders ----------------------------------------------------


def deny(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    """Make ``open`` (and ``os.open``) of ``denied`` fail as a file without read permission does."""
    real_open = builtins.open

    def guarded(file: Any, *args: Any, **kws: Any) -> Any:
        if isinstance(file, (str, os.PathLike)) and Path(file) == denied:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kws)

    real_os_open = os.open

    def guarded_os(file: Any, *args: Any, **kws: Any) -> Any:
        if isinstance(file, (str, os.PathLike)) and Path(file) == denied:
            raise PermissionError(13, "Permission denied", str(file))
        return real_os_open(file, *args, **kws)

    monkeypatch.setattr(builtins, "open", guarded)
    monkeypatch.setattr(os, "open", guarded_os)  # small files are read with os.open


UNREADABLE = [
    ("logical", "logical_crlf", "PE1_send.csv", "cannot open: Permission denied"),
    ("timeline", "logical_crlf", "PE1_send.csv", "cannot open: Permission denied"),
    ("papi", "papi_crlf", "PE1_PAPI.csv", "cannot open: Permission denied"),
    ("overall", "overall_crlf", "overall.txt", "cannot read: Permission denied"),
    ("physical", "physical_crlf", "physical.txt", "cannot open: Permission denied"),
    ("aggregation", "aggregation_two_runs", "PE1_send.csv", "cannot open: Permission denied"),
]


@pytest.mark.usefixtures("fast_figures")
@pytest.mark.parametrize(("command", "case", "name", "message"), UNREADABLE)
def test_unreadable_file_is_a_data_error_naming_it(
    command: str,
    case: str,
    name: str,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = BAD / case / name
    deny(monkeypatch, target)
    code, out, err = invoke(argv(command, case), tmp_path / "out")
    assert code == 1 and out == ""
    assert f"Error: {target}: {message}" in err
    assert_clean(err)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
@pytest.mark.usefixtures("fast_figures")
def test_unreadable_file_for_real(tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    trace.mkdir()
    (trace / "PE0_send.csv").write_text("0, 0, 0, 1, 8, 1.000000\n")
    (trace / "PE0_send.csv").chmod(0)
    code, _, err = invoke(argv("logical", str(trace)), tmp_path / "out")
    assert code == 1 and "PE0_send.csv: cannot open: Permission denied" in err


def test_chmod_000_file_in_tmp(tmp_path: Path) -> None:
    """As root a mode-000 file stays readable: the error path is tested above instead."""
    path = tmp_path / "PE0_send.csv"
    path.write_text("0, 0, 0, 1, 8, 1.000000\n")
    path.chmod(0)
    try:
        readable = os.access(path, os.R_OK)
    finally:
        path.chmod(0o644)
    assert readable == (os.geteuid() == 0)


@pytest.mark.parametrize("command", ["logical", "papi", "overall", "physical", "timeline"])
def test_unlistable_folder_is_a_data_error(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    real_iterdir = Path.iterdir
    real_is_file = Path.is_file

    def iterdir(self: Path) -> Any:
        if self == folder:
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    def is_file(self: Path) -> bool:
        if self.parent == folder:  # as pathlib does on a folder without x permission
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_file(self)

    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if Path(path) == folder:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    monkeypatch.setattr(Path, "is_file", is_file)
    monkeypatch.setattr(os, "scandir", scandir)
    code, out, err = invoke(argv(command, str(folder)), tmp_path / "out")
    assert code == 1 and out == ""
    assert_clean(err)
    assert f"Error: {folder}: cannot " in err and "(Permission denied)" in err


# --- documentation -------------------------------------------------------------------


def test_every_skip_reason_and_exit_code_is_documented() -> None:
    from actorprof.read import _scan, overall, physical

    text = (Path(__file__).resolve().parent.parent / "docs" / "errors.md").read_text()
    reasons = [
        _scan.CUT_LINE,
        _scan.NUL_BYTES,
        _scan.BAD_FIELDS,
        _scan.NOT_A_NUMBER,
        _scan.NEGATIVE,
        _scan.TOO_LARGE,
        overall.PROGRAM_OUTPUT,
        overall.MALFORMED,
        physical.PROGRAM_OUTPUT,
        physical.BROKEN_LINE,
    ]
    for reason in reasons:
        assert f"`{reason}" in text, reason
    for row in ROWS:
        for reason in (row.counts or {}).values():
            for name in reason[2]:
                stem = re.sub(r" (for|in) \w+.*| \(expected.*", "", name)
                assert stem in text, name
    for code in ("| 0 |", "| 1 |", "| 2 |"):
        assert code in text


def test_long_garbage_is_cut_in_messages(tmp_path: Path) -> None:
    trace = tmp_path / "physical.txt"
    trace.write_text("x" * 5000 + "\n")
    code, _, err = invoke(["physical", str(trace)], tmp_path / "out")
    assert code == 1 and f"(first: '{'x' * 120}...')" in err and len(err) < 800


def test_system_errors_are_not_called_bugs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import actorprof.kinds.overall as overall

    def refuse(*args: Any, **kws: Any) -> Any:
        raise OSError(24, "Too many open files", "/proc/self/fd")

    monkeypatch.setattr(overall, "read_overall", refuse)
    code, out, err = invoke(["overall", str(BAD / "overall_split")], tmp_path)
    assert code == 1 and out == ""
    assert (
        "Error: /proc/self/fd: Too many open files (the operating system refused; rerun with "
        "-v for the traceback)" in err
    )
    assert "bug" not in err and "Traceback" not in err
    code, _, err = invoke(["overall", str(BAD / "overall_split"), "-v"], tmp_path)
    assert code == 1 and "Traceback" in err and "OSError: [Errno 24]" in err


def test_closed_stdout_is_said_plainly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from actorprof.cli import Console

    def closed(self: Console, paths: list[Path]) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(Console, "wrote", closed)
    code, _, err = invoke(["overall", str(BAD / "overall_split")], tmp_path)
    assert code == 1 and "Traceback" not in err
    assert "stdout was closed before every written file could be listed (broken pipe)" in err
