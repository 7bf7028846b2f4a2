"""The vectorised route of the overall reader against the line-by-line one.

``overall._FAST = False`` reads every line with the line-by-line reader and
its row table (the reference); the default reads blocks of canonical lines
with numpy. Both must give the same frame, line accounting, warnings and
errors, on profiles with noise, several labels, repeated runs, warning lines,
CRLF, cut last lines and lines that send a block back to the reference.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import actorprof.read.overall as overall
from actorprof import ActorProfError, ReadReport, read_overall

BODIES = [
    "T_inside_finish (start - done): {a} cycles",
    "T_wait (done - finish): {a} cycles",
    "T_outside_finish (start - finish): {a} cycles",
    "T_sends (count={b}): {a} cycles",
    "T_send_in_process (count={b}): {a} cycles",
    "T_process (count={b}): {a} cycles",
    "TCOMM_PROFILING (T_MAIN, T_COMM, T_PROC, T_TOTAL), {a}, {c}, {b}, {a}",
    "TCOMM_PROFILING (T_MAIN/T_TOTAL, T_COMM/T_TOTAL, T_PROC/T_TOTAL), {f}, {g}, 0.000000",
]
WARNING = "T_TOTAL would be much bigger/smaller than T_finish"
NOISE = [
    "Running histo on 4 PEs",
    "",
    "   ",
    "[INFO] done",
    "x [PE1] T_wait (done - finish): 12",  # no "cycles": the reference reads it
    "y  [PE2]  T_wait (done - finish): 3 cycles",  # two blanks
    "z [PE3] T_bogus: 1 cycles",  # program output naming a PE
    "w [PE4] T_wait (done - finish): 99999999999999999999 cycles",  # too large
    "v [PE1048576] T_wait (done - finish): 1 cycles",  # beyond the PE cap
    "\x1b[32mc [PE0] T_wait (done - finish): 4 cycles\x1b[0m",
    "bar 50%\rr [PE1] T_wait (done - finish): 5 cycles",
    "t\t[PE0] T_wait (done - finish): 6 cycles",
    "u [PE0] T_process (count=1) : 2 cycles",
    "caf\u00e9 [PE0] T_wait (done - finish): 7 cycles",
    "a[b [PE0] T_wait (done - finish): 8 cycles",
    "d [PE00] TCOMM_PROFILING (T_MAIN/T_TOTAL, T_COMM/T_TOTAL, T_PROC/T_TOTAL), 1., .5, -0.25",
    "nul\x00here",
    "e [pe1] T_wait (done - finish): 9 cycles",  # a malformed PE tag without "[PE"
    "f [PE-2] T_process (count=1): 2 cycles",
    "[INFO] T_wait (done - finish): 9 cycles",  # program output: not a PE tag
    "g ] T_sends went fine",
]


def profile(rng: random.Random, *, noise: float, labels: int, pes: int) -> str:
    """A profile as a program prints it: labels, repeats, warnings, noise."""
    names = ["histo", "Run 0", "", " phase two ", "p"][:labels]
    lines = []
    for _ in range(rng.randint(1, 3)):
        for label in rng.sample(names, len(names)):
            order = list(range(pes))
            rng.shuffle(order)
            for pe in order:
                a, b, c = rng.randint(0, 10**9), rng.randint(0, 99), rng.randint(-(10**6), 10**6)
                f, g = f"{rng.random():.6f}", f"{-rng.random():.6f}"
                bodies = [body.format(a=a, b=b, c=c, f=f, g=g) for body in BODIES]
                if rng.random() < 0.3:
                    bodies.insert(6, WARNING)
                if rng.random() < 0.1:
                    del bodies[rng.randrange(len(bodies))]
                prefix = f"{label} " if label else ""
                lines += [f"{prefix}[PE{pe}] {body}" for body in bodies]
    out = []
    for line in lines:
        while rng.random() < noise:
            out.append(rng.choice(NOISE))
        out.append(line)
    return "\n".join(out) + "\n"


def both(path: Path, monkeypatch: pytest.MonkeyPatch, **kws: Any) -> list[Any]:
    """What each route gives: (frame, accounting, warnings) or the error."""
    results = []
    monkeypatch.setattr(overall, "_FAST_MIN_BYTES", 0)  # small blocks too
    for fast in (True, False):
        monkeypatch.setattr(overall, "_FAST", fast)
        report = ReadReport()
        try:
            frame = read_overall(path, report=report, **kws)
        except ActorProfError as exc:
            results.append(("error", str(exc), report.files[0].lines_total))
            continue
        (file,) = report.files
        accounting = (file.lines_read, file.lines_blank, file.bytes_read, file.skipped)
        results.append((frame, accounting, file.examples, report.warnings))
    return results


def assert_same(path: Path, monkeypatch: pytest.MonkeyPatch, **kws: Any) -> None:
    fast, exact = both(path, monkeypatch, **kws)
    if isinstance(fast[0], pd.DataFrame) and isinstance(exact[0], pd.DataFrame):
        pd.testing.assert_frame_equal(fast[0], exact[0], check_exact=True)
        assert fast[1:] == exact[1:]
    else:
        assert fast[:2] == exact[:2]


@pytest.mark.parametrize("seed", range(40))
def test_routes_agree_on_noisy_profiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    text = profile(rng, noise=rng.choice([0.0, 0.01, 0.2]), labels=rng.randint(1, 5), pes=9)
    if seed % 4 == 1:
        text = text.replace("\n", "\r\n")
    if seed % 5 == 2:
        text = text[: rng.randrange(len(text) // 2, len(text))]  # cut anywhere
    path = tmp_path / "overall.txt"
    path.write_bytes(text.encode())
    block = rng.choice([64, 256, 4096, 1 << 20])
    assert_same(path, monkeypatch, block_bytes=block)
    assert_same(path, monkeypatch, block_bytes=block, num_pes=rng.choice([5, 9, 100]))


PROFILE_LINES = st.tuples(
    st.sampled_from(["", "h ", "Run 1 ", " ", "h\t"]),
    st.integers(0, 3),
    st.sampled_from([*BODIES, WARNING]).map(lambda b: b.format(a=7, b=2, c=-3, f=0.5, g=1)),
).map(lambda t: f"{t[0]}[PE{t[1]}] {t[2]}")
OTHER_LINES = st.one_of(
    st.sampled_from(NOISE), st.text(st.sampled_from("[PE]0123 T_waitcyles:.,-\r\t"), max_size=30)
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(PROFILE_LINES, PROFILE_LINES, OTHER_LINES), max_size=40),
    st.sampled_from([32, 200, 1 << 16]),
    st.booleans(),
)
def test_routes_agree_on_any_mix(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], block: int, ended: bool
) -> None:
    path = tmp_path_factory.mktemp("mix") / "overall.txt"
    path.write_bytes(("\n".join(lines) + ("\n" if ended else "")).encode())
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert_same(path, monkeypatch, block_bytes=block)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300), st.sampled_from([16, 64, 1 << 16]))
def test_routes_agree_on_any_bytes(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, block: int
) -> None:
    good = b"h [PE1] T_wait (done - finish): 5 cycles\n"
    path = tmp_path_factory.mktemp("bytes") / "overall.txt"
    path.write_bytes(good + data + b"\n" + good)
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert_same(path, monkeypatch, block_bytes=block)


ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(
    [
        *(ROOT / "tests" / "data").glob("**/overall*/overall.txt"),
        *(ROOT / "examples").glob("*/overall/overall.txt"),
    ]
)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parent.name)
@pytest.mark.parametrize("block", [32, 1 << 20])
def test_routes_agree_on_the_fixtures(
    path: Path, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if path.is_file():
        assert_same(path, monkeypatch, block_bytes=block)
        assert_same(path, monkeypatch, block_bytes=block, num_pes=3)


def test_canonical_blocks_take_the_fast_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Profile lines, program output, blank lines and CRLF: no line read one by one."""
    text = profile(random.Random(3), noise=0.0, labels=3, pes=40)
    text = "Running histo on 40 PEs\n\n" + text + "done\n  \n"
    path = tmp_path / "overall.txt"
    path.write_bytes(text.replace("\n", "\r\n").encode())
    fast, exact = both(path, monkeypatch, block_bytes=1024)
    pd.testing.assert_frame_equal(fast[0], exact[0], check_exact=True)
    assert fast[1:] == exact[1:] and fast[1][3] == {overall.PROGRAM_OUTPUT: 2}

    def refuse(*args: Any) -> None:
        raise AssertionError("a line was read one by one")

    monkeypatch.setattr(overall, "_FAST", True)
    monkeypatch.setattr(overall, "_scan_line", refuse)
    report = ReadReport()
    frame = read_overall(path, report=report, block_bytes=1024)
    assert len(frame) == len(exact[0]) and report.files[0].lines_blank == 2
    with pytest.raises(AssertionError, match="one by one"):
        read_overall(path, block_bytes=1024, num_pes=39)  # the reference raises


@pytest.mark.parametrize("tag", ["[pe3]", "[PE-3]", "[PE 3]", "[PE\u0663]", "[ Pe3 ]"])
@pytest.mark.parametrize("block", [256, 1 << 20])
def test_routes_agree_on_malformed_pe_tags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tag: str, block: int
) -> None:
    """A block of canonical lines holding one with a damaged tag (even one
    without ``[PE``) goes to the reference, which skips the line by name."""
    text = profile(random.Random(11), noise=0.0, labels=2, pes=4)
    path = tmp_path / "overall.txt"
    path.write_text("out [INFO] x\n" + text.replace("[PE3]", tag), encoding="utf-8")
    fast, exact = both(path, monkeypatch, block_bytes=block)
    pd.testing.assert_frame_equal(fast[0], exact[0], check_exact=True)
    assert fast[1:] == exact[1:]
    assert set(fast[0]["pe"]) == {0, 1, 2}
    assert fast[1][3] == {overall.PROGRAM_OUTPUT: 1, overall.BAD_PE_TAG: text.count("[PE3]")}


@pytest.mark.parametrize("block", [16, 256, 1 << 20])
def test_routes_ignore_a_bom_at_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    text = profile(random.Random(13), noise=0.0, labels=1, pes=4)
    path = tmp_path / "overall.txt"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    fast, exact = both(path, monkeypatch, block_bytes=block)
    pd.testing.assert_frame_equal(fast[0], exact[0], check_exact=True)
    assert fast[1:] == exact[1:] and fast[3] == []
    assert set(fast[0]["label"]) == {"histo"} and fast[1][3] == {}


def test_first_output_lines_keep_their_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = "h [PE{}] T_wait (done - finish): 5 cycles\n"
    text = "".join(body.format(i) if i % 7 else f"out {i}\n" for i in range(100))
    path = tmp_path / "overall.txt"
    path.write_text(text)
    fast, exact = both(path, monkeypatch, block_bytes=128)
    assert fast[1:] == exact[1:]
    assert [(e.line, e.text) for e in fast[2]] == [(1, "out 0"), (8, "out 7"), (15, "out 14")]


def test_a_large_profile_takes_the_fast_route_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any) -> None:
        raise AssertionError("a line was read one by one")

    path = tmp_path / "overall.txt"
    path.write_text(
        "Running histo on 300 PEs\n" + profile(random.Random(5), noise=0, labels=2, pes=300)
    )
    assert path.stat().st_size > overall._FAST_MIN_BYTES
    monkeypatch.setattr(overall, "_scan_line", refuse)
    report = ReadReport()
    frame = read_overall(path, report=report)
    assert set(frame["pe"]) == set(range(300)) and report.files[0].skipped == {
        overall.PROGRAM_OUTPUT: 1
    }
