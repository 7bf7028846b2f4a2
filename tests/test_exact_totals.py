"""Sums are exact at any PE count: a PE's PAPI sums are int64, checked
against 64 bits PE by PE; sums over PEs (PAPI and overall) are Python
integers.

65,536 PEs of 8-hour MAIN regions add up to more than 2**62 cycles (and to
more than 2**63 instructions at two per cycle): a true total, not damage.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from actorprof import ReadReport, overall_view, papi_breakdown, papi_regions, papi_view
from actorprof.analyze.breakdown import exact_group_sums, exact_sum
from actorprof.engine import Engine

from .test_papi_engine import BY_COUNT_SPLIT, SERIAL, SPLIT, assert_same, view_outcome
from .test_regressions import run

#: Each PE's MAIN region: 2**61 + PE instructions, so the four sum beyond int64.
MAIN_INS = 2**61


def _huge_run(folder: Path, num_pes: int = 4) -> Path:
    folder.mkdir()
    for pe in range(num_pes):
        lines = [
            f"0, {(pe + 1) % num_pes}, 0, {pe}, 8, 0, 1, {2**40 + 1}, 3, 1.000000",
            f"0, {(pe + 2) % num_pes}, 0, {pe}, 8, 0, 0, {2**40 + pe}, 4, 1.000001",
            f"0, {pe}, 0, {pe}, 8, 1, 2, 7, 1, 1.000002",
            f"0, {pe}, 0, {pe}, 0, -1, 5, {MAIN_INS + pe}, {2**52 + 1}, 1.000003",
        ]
        (folder / f"PE{pe}_PAPI.csv").write_text("\n".join(lines) + "\n")
    return folder


def test_totals_over_pes_beyond_64_bits_are_exact(tmp_path: Path) -> None:
    folder = _huge_run(tmp_path / "run")
    plain = view_outcome(folder, None)
    assert "error" not in plain, plain.get("error")
    ins = plain["summary"]["totals"]["counters"]["PAPI_TOT_INS"]
    proc = sum(2 * 2**40 + 1 + pe + 7 for pe in range(4))
    main = sum(MAIN_INS + pe for pe in range(4))
    assert (ins["main"], ins["proc"], ins["total"]) == (main, proc, main + proc)
    assert ins["total"] > 2**63  # beyond int64: a numpy sum would wrap
    assert plain["summary"]["mailboxes"] == [
        {
            "mailbox": 0,
            "messages": 8,
            "num_sends": 4,
            "PAPI_TOT_INS": sum(2 * 2**40 + 1 + pe for pe in range(4)),
            "PAPI_LST_INS": 28,
        },
        {"mailbox": 1, "messages": 4, "num_sends": 8, "PAPI_TOT_INS": 28, "PAPI_LST_INS": 4},
    ]
    # per PE: exact int64 (float weights would round 2**52 + 1 and 2**61 + 1)
    pes = plain["pes"]
    assert pes["PAPI_TOT_INS_main"].tolist() == [MAIN_INS + pe for pe in range(4)]
    assert pes["PAPI_LST_INS_total"].tolist() == [2**52 + 1 + 8] * 4
    for way in (SERIAL, SPLIT, BY_COUNT_SPLIT):
        assert_same(plain, view_outcome(folder, way))


def test_the_command_writes_totals_beyond_64_bits(tmp_path: Path) -> None:
    folder = _huge_run(tmp_path / "run")
    code, _, err = run("papi", str(folder), "-o", str(tmp_path / "out"), "-q")
    assert code == 0, err
    summary = json.loads((tmp_path / "out" / "papi_summary.json").read_text())
    main = summary["totals"]["counters"]["PAPI_TOT_INS"]["main"]
    assert main == sum(MAIN_INS + pe for pe in range(4))


@pytest.mark.parametrize("way", ["plain", "serial", "split", "by count"])
def test_one_pes_sums_beyond_64_bits_name_the_pe(tmp_path: Path, way: str) -> None:
    folder = _huge_run(tmp_path / "run")
    with (folder / "PE2_PAPI.csv").open("a") as f:
        f.write(f"0, 2, 0, 2, 8, 1, 0, {2**62}, 1, 1.000004\n")
    engines = {"plain": None, "serial": SERIAL, "split": SPLIT, "by count": BY_COUNT_SPLIT}
    outcome = view_outcome(folder, engines[way])
    kind, message, *_ = outcome["error"]
    assert kind == "ActorProfError"
    assert message.startswith("PAPI counter totals of PE 2 exceed 64-bit integers")


def test_a_pes_regions_together_are_bounded(tmp_path: Path) -> None:
    """Two mailboxes of one PE, each below 2**62, together beyond: the PE's
    MAIN + PROC would wrap, so it is an error, at the first line that says so."""
    folder = tmp_path / "run"
    folder.mkdir()
    half = 2**61 + 2**60
    (folder / "PE0_PAPI.csv").write_text(
        f"0, 0, 0, 0, 8, 0, 0, {half}, 1, 1.000000\n0, 0, 0, 0, 0, -1, 0, {half}, 1, 1.000001\n"
    )
    outcome = view_outcome(folder, None)
    assert outcome["error"][1].startswith("PAPI counter totals of PE 0 exceed")


def test_papi_breakdown_is_exact_per_pe() -> None:
    frame = pd.DataFrame(
        {
            "src_node": 0,
            "src_pe": 0,
            "dst_node": 0,
            "dst_pe": [0, 0, 1],
            "msg_bytes": 8,
            "mailbox": [-1, 0, 0],
            "num_sends": [1, 0, 0],
            "PAPI_TOT_INS": [2**60 + 1, 2**55 + 3, 5],
            "time_s": 0.0,
        }
    )
    table = papi_breakdown(papi_regions(frame))
    assert table["PAPI_TOT_INS_total"].tolist() == [2**60 + 1 + 2**55 + 3, pd.NA]
    assert table["PAPI_TOT_INS_proc"].tolist() == [2**55 + 3, 5]


def test_exact_sums() -> None:
    rng = np.random.default_rng(3)
    values = rng.integers(-(2**63), 2**63 - 1, size=1000, dtype=np.int64)
    assert exact_sum(values) == sum(int(v) for v in values)
    keys = pd.Series(rng.integers(0, 5, size=1000))
    frame = pd.DataFrame({"a": values, "b": values[::-1].copy()})
    boxes, sums = exact_group_sums(keys, frame)
    assert boxes == sorted(set(keys.tolist()))
    for box, row in zip(boxes, sums, strict=True):
        mask = (keys == box).to_numpy()
        assert row == [sum(int(v) for v in frame[c].to_numpy()[mask]) for c in "ab"]


def test_overall_totals_over_pes_beyond_64_bits_are_exact(tmp_path: Path) -> None:
    """PE 0 of the shipped 4-PE profile, every cycle count times 2**32 (near
    the reader's 2**59 per value), as 64 PEs: their sum is beyond 2**63."""
    text = (Path(__file__).parents[1] / "examples/histo_4pe/overall/overall.txt").read_text()
    block = [line for line in text.splitlines() if line.startswith("histo [PE0]")]
    scale = 2**32
    block_text = re.sub(r"(\d+) cycles", lambda m: f"{int(m[1]) * scale} cycles", "\n".join(block))
    block_text = re.sub(
        r"(T_TOTAL\)), (\d+), (\d+), (\d+), (\d+)$",
        lambda m: m[1] + "".join(f", {int(v) * scale}" for v in m.groups()[1:]),
        block_text,
        flags=re.M,
    )
    profile = "".join(block_text.replace("[PE0]", f"[PE{pe}]") + "\n" for pe in range(64))
    (tmp_path / "overall.txt").write_text(profile)
    view = overall_view(tmp_path / "overall.txt")
    label, number = view.groups[0]
    times = view.group_times(label, number)
    assert times["t_total_cycles"].notna().all() and len(times) == 64
    totals = view.group_summary(label, number)["totals"]
    for part in ("main", "comm", "proc", "total"):
        column = times[f"t_{part}_cycles"]
        assert totals[f"t_{part}_cycles"] == sum(int(v) for v in column)
    assert totals["t_total_cycles"] > 2**63
    assert totals["useful_cycles"] == sum(int(v) for v in times["useful_cycles"])
    assert totals["sends"] == 64 * 10000


def test_a_cache_entry_whose_pe_sums_exceed_64_bits_is_damaged(tmp_path: Path) -> None:
    """Each region below 2**62, a PE's together beyond: no read gives that."""
    folder = _huge_run(tmp_path / "run")
    cached = Engine(jobs=1, cache=True, cache_dir=tmp_path / "cache")
    want = papi_view(folder, engine=cached).summary(files=False)
    (entry,) = (tmp_path / "cache" / "papi").glob("*.npz")
    with np.load(entry) as npz:
        arrays = {name: npz[name] for name in npz.files}
    table = arrays["regions"]  # pe, mailbox, lines, num_sends, counters...
    assert (table[:, 0] == 0).sum() == 3  # MAIN and two mailboxes
    table[table[:, 0] == 0, 4] = 2**61 + 2**60
    with entry.open("wb") as handle:
        np.savez(handle, **arrays)
    report = ReadReport(kind="papi")
    got = papi_view(folder, engine=cached, report=report).summary(files=False)
    assert any("is damaged (ValueError: a PE's counts beyond" in note for note in report.notes)
    assert got["totals"] == want["totals"]


def test_papi_breakdown_of_rows_in_any_order() -> None:
    frame = pd.DataFrame(
        {
            "src_node": 0,
            "src_pe": 0,
            "dst_node": 0,
            "dst_pe": [2, 0, 1, 0, 2, 1],
            "msg_bytes": 8,
            "mailbox": [0, -1, 0, 0, -1, 1],
            "num_sends": [1, 2, 3, 4, 5, 6],
            "PAPI_TOT_INS": [10, 20, 30, 40, 50, 60],
            "time_s": 0.0,
        }
    )
    regions = papi_regions(frame)
    shuffled = regions.iloc[[4, 0, 3, 1, 5, 2]].reset_index(drop=True)
    before = shuffled.copy()
    pd.testing.assert_frame_equal(papi_breakdown(shuffled), papi_breakdown(regions))
    pd.testing.assert_frame_equal(shuffled, before)  # not modified
    assert papi_breakdown(regions)["PAPI_TOT_INS_proc"].tolist() == [40, 90, 10]


def test_each_pes_shadow_bounds_its_sums() -> None:
    """Runs of one PE's lines (a batch of files, a stray line between):
    each PE gets the largest column total of each of its runs."""
    from actorprof.analyze.breakdown import _shadow_chunk

    chunk = pd.DataFrame(
        {
            "dst_pe": [0, 0, 1, 1, 0, 2],
            "num_sends": [1, 2, 0, 0, 9, 1],
            "A": [10, 20, 5, 6, 1, 0],
        }
    )
    for order in ([0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 5]):  # PEs out of order, then in order
        shadow: dict[int, float] = {2: 1.0}
        _shadow_chunk(shadow, chunk.iloc[order], ["num_sends", "A"])
        want = {0: 30.0 + 9.0, 1: 11.0, 2: 2.0} if len(order) == 6 else {0: 30.0, 1: 11.0, 2: 2.0}
        assert shadow == want
