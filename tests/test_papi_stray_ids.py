"""Without --num-pes, a PAPI line naming a PE id far beyond the PE files is
skipped with its file and line, on every reading path, as in the logical
trace; a stray file of such a PE does not make the run that big."""

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
