"""A profile line naming an absurd PE id is skipped with its line, not a run
of that many PEs."""

from __future__ import annotations

from pathlib import Path

import pytest

import actorprof.read.overall as overall
from actorprof.read import ReadReport, read_overall


@pytest.mark.parametrize("pe", ["1000000000000", "1048576", "99999999999999999999999"])
def test_an_absurd_pe_id_is_skipped_with_its_line(tmp_path: Path, pe: str) -> None:
    """One corrupt id would make a run of that many PEs (it ran out of memory)."""
    path = tmp_path / "overall.txt"
    good = "h [PE0] T_wait (done - finish): 5 cycles\n"
    path.write_text(good + f"h [PE{pe}] T_wait (done - finish): 7 cycles\n" + good)
    report = ReadReport(kind="overall")
    frame = read_overall(path, report=report)
    assert frame["pe"].tolist() == [0, 0] and frame["run"].tolist() == [0, 1]
    (file,) = report.files
    assert file.skipped == {overall.PE_BEYOND: 1} and file.examples[0].line == 2
    assert any(f"{path}:2: PE id beyond 1,048,575" in w for w in report.warnings)
