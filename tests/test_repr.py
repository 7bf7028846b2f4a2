"""Notebook-friendly objects: one-line reprs and small HTML tables, whatever the PE count."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import actorprof as ap
from actorprof.analyze.matrix import DENSE_MAX_PES
from actorprof.report.compare import RunSide

from ._synthetic import write_overall

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
#: Longest repr and HTML summary allowed, at any PE count.
MAX_REPR = 200
MAX_HTML = 2_000
PAPI_PES = 64


def write_big_run(run: Path, n: int) -> None:
    """Every trace kind of an ``n``-PE ring run (PE i sends 3 messages to PE i+1).

    PAPI files for the first 64 PEs only (the reader takes ~10 ms a file).
    """
    logical, papi = run / "logical", run / "papi"
    logical.mkdir(parents=True)
    papi.mkdir()
    t0 = 1_721_412_345.0
    for pe in range(n):
        dst, src = (pe + 1) % n, (pe - 1) % n
        (logical / f"PE{pe}_send.csv").write_text(
            "".join(
                f"{pe // 4}, {pe}, {dst // 4}, {dst}, 8, {t0 + k * 1e-3:.6f}\n" for k in range(3)
            )
        )
        if pe >= PAPI_PES:
            continue
        (papi / f"PE{pe}_PAPI.csv").write_text(
            f"{src // 4}, {src}, {pe // 4}, {pe}, 8, 0, 0, 120, 40, {t0 + 0.01:.6f}\n"
            f"{pe // 4}, {pe}, {pe // 4}, {pe}, 0, -1, 3, 9000, 3000, {t0 + 0.02:.6f}\n"
        )
    write_overall(run / "overall", [(100 + pe, 50, 10) for pe in range(n)])


def write_physical(folder: Path, n: int) -> None:
    folder.mkdir()
    lines = [f"local_send, 32, {pe}, {(pe + 1) % n}\n" for pe in range(n)]
    (folder / "physical.txt").write_text("".join(lines))


def objects(run: ap.RunReport, compare: ap.CompareView, folder: Path) -> dict[str, Any]:
    logical = next(iter(run.logical.values()))
    assert run.timeline is not None
    n = logical.num_pes
    # the physical view is dense (PE x PE per send type) up to DENSE_MAX_PES PEs only
    write_physical(folder / "physical", min(n, DENSE_MAX_PES))
    found = {
        "RunReport": run,
        "LogicalView": logical,
        "PapiView": ap.papi_view(folder / "papi", num_pes=n, report=ap.ReadReport()),
        "OverallView": run.overall,
        "PhysicalView": ap.physical_view(folder / "physical"),
        "AggregationView": ap.aggregation_view(
            folder / "logical", logical=folder / "logical", layouts=f"{n // 4}x4"
        ),
        "TimelineView": run.timeline,
        "Timeline": run.timeline.timeline,
        "ReadReport": logical.report,
        "CompareView": compare,
    }
    assert all(v is not None for v in found.values()), found
    return found


@pytest.fixture(scope="module", params=[8, 4096], ids=lambda n: f"{n}pe")
def views(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    n = request.param
    run = tmp_path_factory.mktemp(f"ring{n}") / f"ring_{n}pe"
    write_big_run(run, n)
    report = ap.run_report(run, cache=False, jobs=1)
    if n <= 8:
        compare = ap.compare_runs(run, run, names="before,after")
    else:  # the same views, without reading the run twice more
        logical = next(iter(report.logical.values()))
        sides = [
            RunSide(name, str(run), logical, report.overall, report.overall.groups[0])
            for name in ("before", "after")
            if report.overall is not None
        ]
        compare = ap.CompareView(*sides)
    return n, objects(report, compare, run)


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def test_reprs_are_one_short_line(views: Any) -> None:
    n, found = views
    for name, obj in found.items():
        text = repr(obj)
        assert text.startswith(f"<{name} ") and text.endswith(">"), text
        assert "\n" not in text and len(text) <= MAX_REPR, text
    assert f"{n:,} PEs" in repr(found["LogicalView"])
    assert f"{n:,} PEs, 4 PEs per node" in repr(found["AggregationView"])
    assert f"{3 * n:,} messages" in repr(found["LogicalView"])
    assert repr(found["ReadReport"]).startswith(
        f"<ReadReport logical: {n:,} files, {3 * n:,} lines"
    )
    assert f"{n:,} PEs in before, {n:,} PEs in after" in repr(found["CompareView"])
    assert f"ring_{n}pe" in repr(found["RunReport"])


def test_html_summaries_are_small_tables(views: Any) -> None:
    n, found = views
    for name, obj in found.items():
        page = obj._repr_html_()
        assert len(page) <= MAX_HTML, (name, len(page))
        tags = Tags()
        tags.feed(page)
        assert tags.tags[0] == "table" and "img" not in tags.tags, name
        assert name in page
        assert name == "PhysicalView" or f"{n:,}" in page


def test_repr_of_a_long_folder_name_is_cut(tmp_path: Path) -> None:
    run = tmp_path / ("x" * 150) / "logical"
    write_big_run(tmp_path / "src", 4)
    run.parent.mkdir()
    (tmp_path / "src" / "logical").rename(run)
    text = repr(ap.logical_view(run))
    assert len(text) <= MAX_REPR and "..." in text


def test_singular_facts() -> None:
    view = ap.overall_view(EXAMPLES / "histo_4pe" / "overall")
    assert "1 profile," in repr(view) and "4 PEs" in repr(view)
