"""Without --num-pes, a PAPI line naming a PE id far beyond the PE files is
skipped with its file and line, on every reading path, as in the logical
trace; a stray file of such a PE does not make the run that big. A mailbox
id far beyond the others is warned about with its file and line (and still
counted) on every path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from actorprof.engine import Engine
from actorprof.kinds.papi import papi_view
from actorprof.read import ReadReport, read_papi

HISTO = Path(__file__).resolve().parent.parent / "examples" / "histo_4pe" / "papi"
REASON = (
    "PE id far beyond the 4 PE files (ids from 64 on; pass --num-pes N if the run really "
    "had more PEs)"
)


@pytest.fixture
def corrupt(tmp_path: Path) -> Path:
    folder = shutil.copytree(HISTO, tmp_path / "papi")
    path = folder / "PE1_PAPI.csv"
    lines = path.read_text().splitlines(keepends=True)
    lines[7] = "0, 1, 0, 2000000000, 8, 0, 0, 0, 0, 1795245601.433321\n"  # took 23 GB
    path.write_text("".join(lines))
    return folder


WAYS = {
    "plain": None,
    "engine, one process": Engine(jobs=1),
    "engine, processes": Engine(jobs=2, parallel_min_bytes=0, split_bytes=20_000),
    "engine, planned by count": Engine(jobs=2, count_plan_files=1),
}


@pytest.mark.parametrize("way", list(WAYS))
def test_a_corrupt_pe_id_is_a_skipped_line(corrupt: Path, way: str) -> None:
    view = papi_view(corrupt, engine=WAYS[way])
    assert view.num_pes == 4
    (file,) = [f for f in view.report.files if f.path.endswith("PE1_PAPI.csv")]
    assert file.skipped == {REASON: 1}
    assert (file.examples[0].line, file.examples[0].reason) == (8, REASON)
    clean = papi_view(HISTO)
    assert int(view.pes["messages"].sum()) == int(clean.pes["messages"].sum()) - 1


def test_read_papi_skips_it_too(corrupt: Path) -> None:
    report = ReadReport()
    frame = read_papi(corrupt, report=report)
    assert int(frame["dst_pe"].max()) == 3
    assert report.lines_skipped == 1


def test_with_num_pes_it_is_still_an_error(corrupt: Path) -> None:
    from actorprof.errors import TraceFormatError

    with pytest.raises(TraceFormatError, match="dst_pe 2000000000 but --num-pes is 4"):
        papi_view(corrupt, num_pes=4)


def test_a_stray_file_is_warned_about_not_a_run_of_5001_pes(tmp_path: Path) -> None:
    folder = shutil.copytree(HISTO, tmp_path / "papi")
    (folder / "PE5000_PAPI.csv").write_text("")
    view = papi_view(folder)
    assert view.num_pes == 4 and not view.main_unknown
    assert any(
        "PE 5000 is far beyond the other PE files (PE 0-3)" in w for w in view.report.warnings
    )


def _with_mailboxes(tmp_path: Path, changes: dict[tuple[str, int], int]) -> Path:
    """histo_4pe's PAPI trace with the mailbox of line ``k`` (from 1) of
    ``PE<i>_PAPI.csv`` set, for each ``(file, k): mailbox``."""
    folder = shutil.copytree(HISTO, tmp_path / "papi")
    for (name, k), mailbox in changes.items():
        path = folder / name
        lines = path.read_text().splitlines(keepends=True)
        fields = lines[k - 1].split(",")
        fields[5] = f" {mailbox}"
        lines[k - 1] = ",".join(fields)
        path.write_text("".join(lines))
    return folder


def _far(view: object) -> list[str]:
    return [w for w in view.report.warnings if "far beyond" in w and "mailbox" in w]  # type: ignore[attr-defined]


@pytest.mark.parametrize("way", list(WAYS))
def test_a_corrupt_mailbox_is_warned_about_with_its_file_and_line(tmp_path: Path, way: str) -> None:
    folder = _with_mailboxes(tmp_path, {("PE1_PAPI.csv", 8): 1999999999})
    view = papi_view(folder, engine=WAYS[way])
    (warning,) = _far(view)
    assert warning == (
        f"{folder / 'PE1_PAPI.csv'}:8: mailbox 1,999,999,999 is far beyond mailbox 0: a "
        "corrupt line? Its 1 line(s) on 1 PE(s) are counted as the PROC lines of mailbox "
        "1,999,999,999"
    )
    # still counted: every line is in the totals
    assert view.mailboxes == [0, 1999999999]
    assert int(view.pes["messages"].sum()) == int(papi_view(HISTO).pes["messages"].sum())


def test_mailboxes_of_a_run_are_not_far(tmp_path: Path) -> None:
    # 200 mailboxes spread evenly, or one numbered 100 with thousands of lines: not damage
    spread = {(f"PE{p}_PAPI.csv", k): (k * 7 + p) % 200 for p in range(4) for k in range(1, 400)}
    assert not _far(papi_view(_with_mailboxes(tmp_path / "a", spread)))
    few = {("PE0_PAPI.csv", k): 100 for k in range(1, 3000)}
    assert not _far(papi_view(_with_mailboxes(tmp_path / "b", few)))


def test_many_far_mailboxes_are_summed_up(tmp_path: Path) -> None:
    changes = {("PE2_PAPI.csv", 10 + k): 10**6 + 7 * k for k in range(8)}
    view = papi_view(_with_mailboxes(tmp_path, changes))
    warnings = _far(view)
    assert len(warnings) == 6
    assert ":10: mailbox 1,000,000 is far beyond mailbox 0" in warnings[0]
    assert warnings[-1].startswith("3 more mailbox id(s) far beyond the others, up to 1,000,049")
