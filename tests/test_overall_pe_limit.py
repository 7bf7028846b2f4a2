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


def _run(pes: int, stray: dict[int, int]) -> str:
    """A profile of ``pes`` PEs (three lines each) with ``stray[line] = id``
    profile lines inserted before the given line indexes."""
    bodies = ("T_inside_finish (start - done)", "T_wait (done - finish)", "T_process (count=3)")
    lines = [f"h [PE{pe}] {body}: {pe + 5} cycles" for pe in range(pes) for body in bodies]
    for at, pe in sorted(stray.items(), reverse=True):
        lines.insert(at, f"h [PE{pe}] T_wait (done - finish): 7 cycles")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("fast", [True, False])
def test_pe_ids_far_beyond_the_others_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool
) -> None:
    """Without --num-pes, one flipped digit (PE 1,000,000 in a 100-PE
    profile) made a run of 1,000,001 PEs: 999,900 of them "missing" and a
    27 MB summary. Its lines are skipped as physical.txt's are (the same
    rule: docs/physical.md), on both routes; random ids too."""
    monkeypatch.setattr(overall, "_FAST", fast)
    monkeypatch.setattr(overall, "_FAST_MIN_BYTES", 0)
    path = tmp_path / "overall.txt"
    stray = {50: 1_000_000, 120: 4_000, 121: 77_777, 200: 1_000_000}
    path.write_text(_run(100, stray))
    report = ReadReport(kind="overall")
    frame = read_overall(path, report=report, block_bytes=2048)
    assert sorted(set(frame["pe"])) == list(range(100))
    (file,) = report.files
    reason = (
        "PE id far beyond the other PE ids, 0-99 (ids from 200 on; "
        "pass --num-pes N if the run really had more PEs)"
    )
    assert file.skipped == {reason: 4} and file.lines_read == 300
    assert [e.line for e in file.examples] == [51, 122, 124]  # 3 examples per reason
    assert report.warnings[0].startswith(f"{path}:51: {reason} skipped: 'h [PE1000000]")
    with pytest.raises(Exception, match="PE 1000000 but --num-pes is 100"):
        read_overall(path, num_pes=100, report=ReadReport(kind="overall"))
