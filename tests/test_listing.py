"""Finding PE files by name in bulk: the same files, phases and errors as
matching each name on its own."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from actorprof.errors import NoTraceError
from actorprof.read import (
    FileColumns,
    ReadReport,
    _files,
    _kept,
    find_pe_files,
    has_pe_files,
    listings_kept,
    pe_file_phases,
)
from actorprof.report.traces import find_run_traces, holds_trace

NAMES = [
    "PE0_send.csv",
    "PE1_send.csv",
    "PE10_send.csv",
    "PE2_send.csv",
    "PE007_send.csv",  # PE 7, spelled with zeros
    "PE3_bfs_send.csv",
    "PE0_bfs_send.csv",
    "PE1_a_b_send.csv",  # phase "a_b"
    "PE11_send.dat",  # another PE than the .csv ones: not shadowed
    "PE0_PAPI.csv",
    "PE1_papi.csv",
    "PE2_x_PAPI.csv",
    "PEx_send.csv",
    "PE1_send.csv.gz",
    "notes.txt",
    "PE5_send.csvx",
    "xPE5_send.csv",
]


def _touch(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text("0,0,0\n")
    return folder


def _one_by_one(folder: Path, kind: str) -> dict[str, list[_files.TraceFile]]:
    names, _ = _files.list_folder(folder)
    return _files._grouped_one_by_one(names, folder, kind)


@pytest.mark.parametrize("kind", ["send", "papi"])
def test_bulk_grouping_gives_the_files_of_one_by_one(tmp_path: Path, kind: str) -> None:
    folder = _touch(tmp_path / "run", NAMES)
    names, _ = _files.list_folder(folder)
    bulk = _files._grouped(names, folder, kind)
    assert bulk is not None
    assert bulk == _one_by_one(folder, kind)
    assert find_pe_files(folder, kind) == bulk
    if kind == "send":
        assert list(bulk) == ["", "a_b", "bfs"]
        assert [f.pe for f in bulk[""]] == [0, 1, 2, 7, 10, 11]
        assert [f.path.name for f in bulk[""]] == [
            "PE0_send.csv",
            "PE1_send.csv",
            "PE2_send.csv",
            "PE007_send.csv",
            "PE10_send.csv",
            "PE11_send.dat",
        ]
        assert [f.phase for f in bulk["bfs"]] == ["bfs", "bfs"]
        assert [f.pe for f in bulk["bfs"]] == [0, 3]
        assert bulk["a_b"][0].pe == 1
    else:
        assert list(bulk) == ["", "x"]
        assert [f.path.name for f in bulk[""]] == ["PE0_PAPI.csv", "PE1_papi.csv"]
    assert pe_file_phases(folder, kind) == list(bulk)


def test_paths_have_their_text_and_compare_equal(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder = _touch(tmp_path / "run", ["PE0_send.csv", "PE12_send.csv"])
    for given in (folder, Path(os.path.relpath(folder)), Path(f"{folder}/")):
        files = find_pe_files(given, "send")[""]
        for f in files:
            assert str(f.path) == str(given / f.path.name)
            assert f.path == given / f.path.name
            assert hash(f.path) == hash(given / f.path.name)
            assert f.path.parent == given
    monkeypatch.chdir(folder)
    for given in (Path("."), Path("")):
        files = find_pe_files(given, "send")[""]
        assert [str(f.path) for f in files] == ["PE0_send.csv", "PE12_send.csv"]


def test_a_shadowed_file_is_chosen_one_by_one(tmp_path: Path) -> None:
    folder = _touch(tmp_path / "run", ["PE0_send.csv", "PE0_send.dat", "PE1_send.dat"])
    names, _ = _files.list_folder(folder)
    assert _files._grouped(names, folder, "send") is None
    files = find_pe_files(folder, "send")[""]
    assert [f.path.name for f in files] == ["PE0_send.csv", "PE1_send.dat"]
    assert files[0].shadowed == (folder / "PE0_send.dat",)
    report = ReadReport()
    _files.select_phase({"": files}, None, report)
    assert any("PE0_send.dat" in note for note in report.notes)
    assert report.warnings == [
        "PE files of two namings are mixed here: PE 0 in *_send.csv files; PE 1 in "
        "*_send.dat files. They are all read as one run: are two runs (or two runtime "
        "versions) in one folder?"
    ]


def test_one_naming_warns_nothing(tmp_path: Path) -> None:
    folder = _touch(tmp_path / "run", [f"PE{i}_send.csv" for i in range(5)])
    report = ReadReport()
    _files.select_phase(find_pe_files(folder, "send"), None, report)
    assert report.warnings == [] and report.notes == []


def test_a_name_with_a_line_end_is_matched_on_its_own(tmp_path: Path) -> None:
    # "PE9_send.csv" is a line of the joined names, but no file is named so
    folder = _touch(tmp_path / "run", ["PE0_send.csv", "x\nPE9_send.csv"])
    names, _ = _files.list_folder(folder)
    assert _files._matched_names(names, "send") is None
    files = find_pe_files(folder, "send")[""]
    assert [f.pe for f in files] == [0]
    assert pe_file_phases(folder, "send") == [""]


def test_phases_not_utf8_spelled_as_one_by_one(tmp_path: Path) -> None:
    raw = os.fsdecode(b"PE0_ph\xff_send.csv")
    folder = _touch(tmp_path / "run", [raw, "PE1_ph\\xff_send.csv"])
    found = find_pe_files(folder, "send")
    assert found == _one_by_one(folder, "send")
    assert list(found) == ["ph\\xff"]
    assert [f.pe for f in found["ph\\xff"]] == [0, 1]
    assert pe_file_phases(folder, "send") == ["ph\\xff"]


def test_phases_and_presence_without_trace_files(tmp_path: Path) -> None:
    folder = _touch(tmp_path / "run", ["PE1_send.csv.gz", "notes.txt"])
    (folder / "PE3_send.csv").mkdir()
    with pytest.raises(NoTraceError) as bulk:
        pe_file_phases(folder, "send")
    with pytest.raises(NoTraceError) as full:
        find_pe_files(folder, "send")
    assert str(bulk.value) == str(full.value)
    assert "compressed" in str(full.value)
    assert not has_pe_files(folder, "send")
    assert not holds_trace(folder, "logical")
    (folder / "PE1_send.csv.gz").unlink()
    with pytest.raises(NoTraceError, match=r"PE3_send\.csv is a folder"):
        pe_file_phases(folder, "send")
    _touch(folder, ["PE2_send.csv"])
    assert has_pe_files(folder, "send") and holds_trace(folder, "logical")
    assert has_pe_files(folder / "PE2_send.csv", "send")
    assert not has_pe_files(folder / "notes.txt", "send")
    assert not holds_trace(tmp_path / "absent", "logical")


def test_run_traces_phases(tmp_path: Path) -> None:
    _touch(tmp_path / "logical", ["PE0_send.csv", "PE0_bfs_send.csv", "PE1_bfs_send.csv"])
    _touch(tmp_path / "papi", ["PE0_PAPI.csv"])
    traces = find_run_traces(tmp_path)
    assert traces.logical == tmp_path / "logical"
    assert traces.logical_phases == ["", "bfs"]
    assert traces.papi_phases == [""]


def test_file_columns_json_as_json_dumps_writes_it() -> None:
    paths = ["/r/PE0_send.csv", 'r/"q"\\PE1.csv', "r/é\tPE2.csv", os.fsdecode(b"r/\xffPE3.csv")]
    columns = FileColumns(
        paths,
        [0, None, 2, 3],
        [None] * 4,
        np.array([5, 6, 7, 8]),
        np.array([1, 0, 0, 2]),
        np.array([50, 60, 70, 80]),
    )
    for k in range(len(paths)):
        part = FileColumns(
            paths[k : k + 1],
            columns.pes[k : k + 1],
            columns.phases[k : k + 1],
            columns.lines_read[k : k + 1],
            columns.lines_blank[k : k + 1],
            columns.bytes_read[k : k + 1],
        )
        texts = part.to_json()
        assert texts == [json.dumps(d) for d in part.to_dicts()]
    assert columns.to_json() == [json.dumps(d) for d in columns.to_dicts()]
    assert columns.to_json()[0] == (
        '{"path": "/r/PE0_send.csv", "pe": 0, "bytes": 50, "lines_read": 5, "lines_blank": 1, '
        '"lines_skipped": 0, "skipped_by_reason": {}, "first_skipped": []}'
    )


def _count_listings(monkeypatch, folder: Path) -> list[str]:  # type: ignore[no-untyped-def]
    """The listings of ``folder`` made from now on (each ``os.scandir`` of it)."""
    seen: list[str] = []
    scandir = os.scandir

    def counting(path):  # type: ignore[no-untyped-def]
        if Path(path) == folder:
            seen.append(str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    return seen


def test_a_command_lists_a_fresh_trace_folder_once(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from actorprof.cli import main
    from tests._synthetic import write_logical

    folder = tmp_path / "run"
    write_logical(folder, np.array([[0, 2, 1], [1, 0, 0], [3, 1, 1]]))
    seen = _count_listings(monkeypatch, folder)
    args = ["logical", str(folder), "-q", "-o", str(tmp_path / "out"), "--no-cache", "-j", "1"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert len(seen) == 1  # found, read and looked at for compressed files: one listing
    assert _kept.current() is None  # dropped with the command
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert len(seen) == 2  # the next command lists it anew (it is not settled)


def test_listings_kept_within_the_block_only(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder = _touch(tmp_path / "run", ["PE0_send.csv", "PE1_send.csv"])
    seen = _count_listings(monkeypatch, folder)
    with listings_kept():
        assert [f.pe for f in find_pe_files(folder, "send")[""]] == [0, 1]
        assert has_pe_files(folder, "send") and pe_file_phases(folder, "send") == [""]
        assert len(seen) == 1
        with listings_kept():  # nested: the same listings
            find_pe_files(folder, "send")
        assert len(seen) == 1
        # a folder changed meanwhile has another mtime: listed again
        _touch(folder, ["PE2_send.csv"])
        info = folder.stat()
        os.utime(folder, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))
        assert [f.pe for f in find_pe_files(folder, "send")[""]] == [0, 1, 2]
        assert len(seen) == 2
        assert _kept.current() is not None
    assert _kept.current() is None
    find_pe_files(folder, "send")
    assert len(seen) == 3  # not settled: listed anew outside the block


TRICKY = [
    "PE1_send.csv",
    "PE2_send_send.csv",  # phase "send"
    "PE3_a_b_send.dat",
    "PE4_send.csv_send.csv",  # phase "send.csv"
    "PE5__send.csv",  # an empty phase: not a trace file
    "PE6_send.csvx",
    "PE7_PAPI.csv",
    "PE8_x_papi.csv",
    "PE9_papi.csv_PAPI.csv",  # phase "papi.csv"
    "PE10_PAPI_PAPI.csv",  # phase "PAPI"
    "PE11__PAPI.csv",
    "PE12_send.csv.gz",
    "PE13_send.dat",
    "PE_send.csv",
    "PE14_ _send.csv",  # phase " "
]


@pytest.mark.parametrize("kind", ["send", "papi"])
def test_bulk_matching_gives_each_names_match(kind: str) -> None:
    pattern = _files._PATTERNS[kind]
    expected = _each_match(TRICKY, kind)
    assert _files._matched_names(TRICKY, kind) == expected
    # a folder of the other kind's files (and near misses): nothing, found so
    # by the names' endings before any search
    others = [name for name in TRICKY if not any(e in name for e in _files._ENDINGS[kind])]
    assert others and not [n for n in others if pattern.fullmatch(n)]
    assert _files._matched_names(others, kind) == ([], [], [])
    phases = {
        "send": ["", "send", "a_b", "send.csv", "", " "],
        "papi": ["", "x", "papi.csv", "PAPI"],
    }
    assert expected[2] == phases[kind]


def _each_match(names: list[str], kind: str) -> tuple[list[str], list[str], list[str]]:
    """The names of ``kind`` among ``names``, their PE digits and phases:
    each name matched on its own."""
    pattern = _files._PATTERNS[kind]
    found = [(n, m["pe"], m["phase"] or "") for n in names if (m := pattern.fullmatch(n))]
    return [r[0] for r in found], [r[1] for r in found], [r[2] for r in found]


# names of a run's folder, and near misses of the plain names
_PIECES = {
    "head": ["PE", "PE", "PE", "pe", "xPE", "P", ""],
    "digits": ["0", "7", "12", "007", "65535", "", "x", "1a", "\u0661", "\u00b2", "1 ", "1\n2"],
    "middle": ["", "", "", "_bfs", "_a_b", "_", "_send", "_PAPI", "_send.csv"],
    "ending": [
        "_send.csv",
        "_send.csv",
        "_PAPI.csv",
        "_PAPI.csv",
        "_send.dat",
        "_papi.csv",
        "_send.csvx",
        "_send.csv.gz",
        ".csv",
        "_send.",
        "",
    ],
}


@pytest.mark.parametrize("kind", ["send", "papi"])
@pytest.mark.parametrize("seed", range(40))
def test_bulk_matching_of_a_folder_is_each_names_match(kind: str, seed: int) -> None:
    """Folders mostly of plain names (``PE17_send.csv``: found by their own
    search) with a few near misses mixed in (then by the full search): the
    same columns as each name matched on its own, in order."""
    rng = np.random.default_rng(seed)
    plain = [f"PE{pe}{_files._PLAIN_ENDING[kind]}" for pe in rng.permutation(300)[:200]]
    odd = [
        "".join(str(rng.choice(_PIECES[part])) for part in ("head", "digits", "middle", "ending"))
        for _ in range(int(rng.integers(0, 4)))
    ]
    names = sorted(set(plain + odd))
    expected = _each_match(names, kind)
    if "\n" not in "".join(names):  # (else each name is matched on its own)
        assert _files._matched_names(names, kind) == expected
        # decided without the full search, or left to it
        assert _files._plain_names(names, "\n".join(names), kind) in (None, expected)
    plain.sort()
    assert _files._plain_names(plain, "\n".join(plain), kind) == _each_match(plain, kind)


def test_plain_names_are_matched_without_the_full_search(monkeypatch: pytest.MonkeyPatch) -> None:
    names = sorted([f"PE{pe}_send.csv" for pe in range(1000)] + ["PE3_PAPI.csv", "overall.txt"])

    class NoSearch:
        def findall(self, text: str) -> list[tuple[str, str, str]]:
            raise AssertionError("searched")

    monkeypatch.setitem(_files._LINES, "send", NoSearch())
    monkeypatch.setitem(_files._LINES, "papi", NoSearch())
    assert _files._matched_names(names, "send") == _each_match(names, "send")
    assert _files._matched_names(names, "papi") == (["PE3_PAPI.csv"], ["3"], [""])
    with pytest.raises(AssertionError, match="searched"):  # a phase: searched
        _files._matched_names([*names, "PE1_bfs_send.csv"], "send")


def test_listed_files_make_their_path_when_asked(tmp_path: Path) -> None:
    import pickle

    folder = _touch(tmp_path / "run", ["PE0_send.csv", "PE3_send.csv"])
    files = find_pe_files(folder, "send")[""]
    listed = files[1]
    assert listed._path is None  # not made by the listing
    assert (listed.path_text, listed.name) == (str(folder / "PE3_send.csv"), "PE3_send.csv")
    made = _files.TraceFile(folder / "PE3_send.csv", 3, None)
    assert listed == made and hash(listed) == hash(made)
    assert _files.TraceFile(str(folder / "PE3_send.csv"), 3, None) == made  # a str path too
    assert listed != _files.TraceFile(folder / "PE3_send.csv", 3, "x")
    assert listed._path is not None and listed.path == folder / "PE3_send.csv"
    assert repr(made) == (
        f"TraceFile(path={folder / 'PE3_send.csv'!r}, pe=3, phase=None, shadowed=())"
    )
    again = pickle.loads(pickle.dumps(files[0]))
    assert again == files[0] and again.path_text == files[0].path_text
    with pytest.raises(AttributeError):
        listed.pe = 4  # type: ignore[misc]
    assert listed.pe == 3


def test_compressed_names_found_among_many() -> None:
    names = [f"PE{i}_send.csv" for i in range(3000)]
    assert _files.compressed_pe_names(names, "send") == []
    among = [*names[:5], "PE1_send.csv.zst", *names[5:]]
    assert _files.compressed_pe_names(among, "send") == ["PE1_send.csv.zst"]
    odd = ["PE1_send.csv.gz\nx", "PE2_send.csv.xz", "PE3_send.csv.bz2", "PE3.gz", "PE4_PAPI.csv.gz"]
    assert _files.compressed_pe_names(odd, "send") == ["PE2_send.csv.xz", "PE3_send.csv.bz2"]
    assert _files.compressed_pe_names(odd, "papi") == ["PE4_PAPI.csv.gz"]


def test_missing_pe_files_are_said_when_the_pe_count_is_inferred(
    tmp_path: Path, examples: Path
) -> None:
    """Without --num-pes, a PE below the inferred count without a file (a
    gap in the names, a PE others sent to) is warned as below a given count;
    what stands where its file would be (a folder, a dangling link) is
    named: the listing reads regular files only."""
    from click.testing import CliRunner

    from actorprof import papi_view
    from actorprof.cli import main

    run = tmp_path / "run"
    run.mkdir()
    for pe in (0, 2):
        lines = (examples / "histo_4pe/logical" / f"PE{pe}_send.csv").read_text().splitlines()
        (run / f"PE{pe}_send.csv").write_text("\n".join(lines[:50]) + "\n")
    (run / "PE1_send.csv").mkdir()
    (run / "PE3_send.csv").symlink_to(tmp_path / "gone")
    done = CliRunner().invoke(main, ["logical", str(run), "-o", str(tmp_path / "o"), "-j", "1"])
    assert done.exit_code == 0, done.output
    assert (
        "warning: 2 of 4 PE files missing: PE 1, 3 (counted as PEs that wrote nothing; the "
        "run's 4 PEs were inferred from the file names and PE ids: were files deleted?); "
        "PE1_send.csv is a folder, not a file: not read; PE3_send.csv is a dangling symbolic "
        "link, not a file: not read"
    ) in done.stderr
    summary = json.loads((tmp_path / "o" / "logical_summary.json").read_text())
    assert summary["missing_pes"] == [1, 3]
    papi = tmp_path / "papi"
    papi.mkdir()
    for pe in (0, 2, 3):
        shutil.copy(examples / "histo_4pe/papi" / f"PE{pe}_PAPI.csv", papi)
    report = ReadReport()
    papi_view(papi, report=report)
    assert report.missing_pes == [1]
    assert any("1 of 4 PE files missing: PE 1 " in w for w in report.warnings)


def test_files_named_like_pe_files_but_not_read_are_said(tmp_path: Path) -> None:
    """``PE0__send.csv`` (an empty phase name) and ``PE5_send.csvx`` are not
    trace files: not read, but said, with the names a trace file has;
    compressed files are said apart, other names not at all."""
    from actorprof.read import logical_files

    folder = _touch(
        tmp_path / "run",
        [
            "PE0_send.csv",
            "PE1_send.csv",
            "PE0__send.csv",
            "PE5_send.csvx",
            "PE1_send.csv.gz",
            "PE0_PAPI.csv",
            "notes_send.txt",
        ],
    )
    report = ReadReport()
    files = logical_files(folder, report=report)
    assert [f.name for f in files] == ["PE0_send.csv", "PE1_send.csv"]
    said = [w for w in report.warnings if "named like PE files" in w]
    assert said == [
        f"not read: 2 file(s) in {folder} named like PE files but not as PE<i>_send.csv (or "
        "PE<i>_<phase>_send.csv, PE<i>_send.dat): PE0__send.csv, PE5_send.csvx"
    ]
    assert any("compressed PE file(s)" in w for w in report.warnings)
    plain = _touch(tmp_path / "plain", [f"PE{i}_send.csv" for i in range(5)] + ["PE0_PAPI.csv"])
    report = ReadReport()
    logical_files(plain, report=report)
    assert report.warnings == []
