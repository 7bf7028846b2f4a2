"""actorprof report: discovery, report.json numbers, the HTML page (parsed, and in Chromium)."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from actorprof.cli import main
from actorprof.errors import NoTraceError, UsageError
from actorprof.report.html import FigureCollector, render_report
from actorprof.report.run import find_run_traces, run_report

from ._figure_builders import BuilderCollector
from ._synthetic import write_logical, write_overall
from .conftest import trace_heads

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PNG = b"\x89PNG\r\n\x1a\n"
SECTIONS = {"glance", "findings", "logical", "papi", "overall", "physical", "coverage", "rules"}


class Page(HTMLParser):
    """Section ids, images, text and tags of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.images: list[dict[str, str]] = []
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        if tag == "section":
            self.sections.append(values["id"])
        if tag == "img":
            self.images.append(values)

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    @property
    def all_text(self) -> str:
        return " ".join(" ".join(self.text).split())


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def run_cli(args: list[str]) -> Any:
    return CliRunner().invoke(main, args)


@pytest.fixture(scope="module")
def ig(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("report_ig")
    result = run_cli(["report", str(EXAMPLES / "ig_8pe_2nodes"), "-o", str(out), "--no-cache"])
    assert result.exit_code == 0, result.output
    return {
        "result": result,
        "out": out,
        "json": json.loads((out / "report.json").read_text()),
        "html": (out / "report.html").read_text(),
    }


@pytest.fixture(scope="module")
def histo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("report_histo")
    result = run_cli(["report", str(EXAMPLES / "histo_4pe"), "-o", str(out), "-q", "--no-cache"])
    assert result.exit_code == 0, result.output
    return {
        "result": result,
        "out": out,
        "json": json.loads((out / "report.json").read_text()),
        "html": (out / "report.html").read_text(),
    }


def texts(report: dict[str, Any]) -> list[str]:
    return [f["text"] for f in report["findings"]]


# ------------------------------------------------------------------ discovery


def test_finds_kinds_in_subfolders_and_flat(tmp_path: Path) -> None:
    traces = find_run_traces(EXAMPLES / "histo_4pe")
    assert traces.found == ["logical", "papi", "overall"]
    assert traces.absent == ["physical"]
    assert traces.location("overall") == "overall/overall.txt"
    assert traces.logical_phases == [""]
    flat = tmp_path / "run"
    write_logical(flat, np.ones((4, 4), dtype=int))
    write_logical(flat, 2 * np.ones((4, 4), dtype=int), phase="bfs")
    write_overall(flat, [(10, 80, 10)] * 4)
    (flat / "sub").mkdir()
    write_logical(flat / "sub", np.ones((2, 2), dtype=int))
    traces = find_run_traces(flat)
    assert traces.found == ["logical", "overall"]
    assert traces.logical == flat and traces.logical_phases == ["", "bfs"]
    assert traces.location("logical") == "."
    assert any("also in" in n and "sub" in n for n in traces.notes)


def test_a_command_looks_for_its_own_kind_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """`actorprof overall run/` finds overall/overall.txt without matching the
    names of the PE folders (65,536 each in a big run)."""
    import actorprof.report.traces as traces_module

    looked: list[tuple[str, str]] = []
    real = traces_module.pe_file_phases

    def spy(folder: Path, kind: str) -> list[str]:
        looked.append((Path(folder).name, kind))
        return real(folder, kind)

    monkeypatch.setattr(traces_module, "pe_file_phases", spy)
    traces = find_run_traces(EXAMPLES / "histo_4pe", kinds=("overall",))
    assert traces.found == ["overall"] and looked == []
    assert traces.location("overall") == "overall/overall.txt"
    traces = find_run_traces(EXAMPLES / "histo_4pe", kinds=("papi",))
    assert traces.found == ["papi"] and {kind for _, kind in looked} == {"papi"}
    assert traces.location("papi") == "papi"


def test_no_trace_and_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(NoTraceError, match="no trace of any kind"):
        run_report(tmp_path)
    with pytest.raises(UsageError, match="not a folder"):
        run_report(EXAMPLES / "histo_4pe" / "overall" / "overall.txt")


# ------------------------------------------------------------------ report.json: shipped examples


def test_ig_report_numbers(ig: dict[str, Any]) -> None:
    s = ig["json"]
    assert s["kind"] == "report"
    assert s["kinds_read"] == ["logical", "physical"]
    assert s["kinds_absent"] == ["papi", "overall"]
    assert s["locations"] == {"logical": "logical", "physical": "physical/physical.txt"}
    g = s["at_a_glance"]
    assert (g["num_pes"], g["num_nodes"], g["messages"], g["bytes"]) == (8, 2, 160_000, 2_560_000)
    assert g["duration_s"] == 0.339996  # exact: last send - first send (bins say 0.341)
    assert (g["physical_buffers"], g["physical_bytes"]) == (808, 5_934_784)
    phase = s["logical"]["phases"]["(unnamed)"]
    assert phase["per_pe"]["sent"] == [20015, 20000, 19904, 19980, 19934, 20172, 19931, 20064]
    assert phase["imbalance"]["count"]["sent"]["max_pe"] == 5
    assert phase["top_pairs"][0] == {
        "src_pe": 4,
        "dst_pe": 5,
        "messages": 2591,
        "bytes": 41456,
        "share": pytest.approx(2591 / 160_000),
    }
    assert phase["direction"]["diagonal"] == 19_908
    assert phase["direction"]["upper"] + phase["direction"]["lower"] == 160_000 - 19_908
    assert s["physical"]["pes_per_node"] == 4 and s["physical"]["mesh_fit"]["fits"] is True
    assert s["aggregation"]["totals"]["messages_per_buffer"] == pytest.approx(160_000 / 780)
    assert s["aggregation"]["verdict"] == "one run"
    assert s["timeline"]["messages_timed"] == 160_000
    assert [f["rule"] for f in s["findings"]] == ["balanced", "balanced", "aggregation", "balanced"]
    assert "sends are balanced: the busiest PE (PE 5) is at 1.01x the mean" in texts(s)


def test_ig_coverage(ig: dict[str, Any]) -> None:
    coverage = ig["json"]["coverage"]
    assert [c["kind"] for c in coverage] == ["logical"] * 8 + ["physical"]
    assert sum(c["lines_read"] for c in coverage if c["kind"] == "logical") == 160_000
    physical = coverage[-1]
    assert physical["lines_read"] == 1136
    assert physical["skipped_expected"] == {"program output": 7}
    assert physical["skipped_unexpected"] == {}
    assert not any(f["rule"] == "unread_lines" for f in ig["json"]["findings"])


def test_histo_report_numbers(histo: dict[str, Any]) -> None:
    s = histo["json"]
    assert s["kinds_read"] == ["logical", "papi", "overall"]
    assert s["kinds_absent"] == ["physical"]
    assert "DENABLE_TRACE_PHYSICAL" in s["how_to_get_absent"]["physical"]
    g = s["at_a_glance"]
    assert (g["num_pes"], g["num_nodes"], g["messages"], g["messages_handled"]) == (
        4,
        1,
        40_000,
        40_000,
    )
    assert g["t_total_max_cycles"] == 86_670_098
    group = s["overall"]["groups"][0]
    assert group["pe_fractions"]["comm"] == pytest.approx(
        [0.975488, 0.601981, 0.71923, 0.946259], abs=1e-6
    )
    assert all(type(v) is float for v in group["pe_fractions"]["comm"])  # plain JSON values
    assert s["papi"]["phases"]["(unnamed)"]["counters_all_zero"] is True
    overall_file = next(c for c in s["coverage"] if c["kind"] == "overall")
    assert overall_file["skipped_expected"] == {"program output": 6}
    by_rule = {f["rule"]: f for f in s["findings"]}
    assert by_rule["papi_zero"]["text"].startswith(
        "all PAPI counters are zero (PAPI_TOT_INS, PAPI_LST_INS): the tracing machine had no "
        "hardware counters"
    )
    assert "COMM is 60-98 % of time on every PE (81 % of all T_TOTAL)" in texts(s)
    assert any(t.startswith("POP load balance is 0.47") for t in texts(s))
    assert "unread_lines" not in by_rule
    assert [f["severity"] for f in s["findings"]] == ["warning"] * 4 + ["info"] * 3


def test_cli_stdout_stderr_quiet(ig: dict[str, Any], histo: dict[str, Any]) -> None:
    out = ig["out"]
    assert ig["result"].stdout.splitlines() == [str(out / "report.html"), str(out / "report.json")]
    stderr = ig["result"].stderr
    assert "read logical, physical; absent: papi, overall" in stderr
    assert "8 PEs, 2 node(s), 160,000 messages, 2,560,000 bytes, over 0.339996 s" in stderr
    assert histo["result"].stderr == ""
    assert len(histo["result"].stdout.splitlines()) == 2


# ------------------------------------------------------------------ the page, without a browser


def test_html_sections_images_numbers(ig: dict[str, Any]) -> None:
    page = parse(ig["html"])
    assert set(page.sections) >= SECTIONS | {"timeline", "aggregation"}
    # nothing to fetch: no link, inline scripts only (the lightbox, the matrix explorer
    # and its data), no src but data: images
    assert "link" not in page.tags and page.tags.count("script") == 3
    assert ig["html"].count('<script type="application/json" class="apm-data">') == 1
    assert 'class="apm"' in ig["html"] and "Explore the matrix" in page.all_text
    assert "<script src" not in ig["html"] and 'src="http' not in ig["html"]
    assert "http://" not in ig["html"] and "https://" not in ig["html"]
    figures = ig["json"]["figures"]
    names = [(f["section"], f["name"]) for f in figures]
    # the logical command's own figures, whatever they are (heatmap and violin first)
    assert names[:2] == [("logical", "heatmap"), ("logical", "violin")]
    assert [n for n in names if n[0] != "logical"] == [
        ("timeline", "rate"),
        ("physical", "heatmap"),
        ("physical", "violin"),
        ("aggregation", "heatmap"),
        ("aggregation", "bytes"),
    ]
    assert len(page.images) == len(figures)
    for image, figure in zip(page.images, figures):
        prefix = "data:image/png;base64,"
        assert image["src"].startswith(prefix)
        png = base64.b64decode(image["src"][len(prefix) :], validate=True)
        assert png[:8] == PNG and len(png) == figure["size_bytes"]
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        assert (width, height) == (figure["width_px"], figure["height_px"])
        assert image["alt"]
    text = page.all_text
    for shown in ("160,000", "2.6 MB", "0.339996 s", "808", "PE 5", "No papi trace in this run"):
        assert shown in text
    assert "sends are balanced: the busiest PE (PE 5) is at 1.01x the mean" in text


def test_html_of_histo_says_zero_counters(histo: dict[str, Any]) -> None:
    page = parse(histo["html"])
    assert set(page.sections) >= SECTIONS
    text = page.all_text
    assert "all PAPI counters are zero" in text
    assert "No physical trace in this run" in text
    assert "86.7 M" in text and "86,670,098" in text


# ------------------------------------------------------------------ partial and broken runs


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("broken_run")
    counts = np.array([[2, 9, 1, 1], [8, 2, 1, 1], [9, 1, 2, 1], [8, 1, 1, 2]])
    write_logical(run / "logical", counts, extra={1: "0, 1, 0, x, 8, 1.0\nnot a trace line\n"})
    (run / "overall").mkdir()
    (run / "overall" / "overall.txt").write_text("the program printed no profile\n")
    return run


def test_partial_report_exit_0_with_errors(broken: Path, tmp_path: Path) -> None:
    result = run_cli(["report", str(broken), "-o", str(tmp_path), "--no-cache", "--format", "svg"])
    assert result.exit_code == 0, result.output
    s = json.loads((tmp_path / "report.json").read_text())
    assert s["kinds_found"] == ["logical", "overall"]
    assert s["kinds_read"] == ["logical"]
    assert "overall.txt" in s["errors"]["overall"]
    rules = [f["rule"] for f in s["findings"]]
    assert rules[:2] == ["read_error", "unread_lines"]
    assert s["findings"][1]["text"].startswith(
        "2 logical trace line(s) could not be read in 1 file"
    )
    assert "PE1_send.csv:" in s["findings"][1]["text"]
    assert "overall trace not read" in result.stderr
    page = parse((tmp_path / "report.html").read_text())
    assert page.images and all(
        i["src"].startswith("data:image/svg+xml;base64,") for i in page.images
    )
    svg = base64.b64decode(page.images[0]["src"].split(",", 1)[1])
    assert b"<svg" in svg
    assert "could not be read" in page.all_text


def test_exit_1_without_traces_and_2_for_a_file(tmp_path: Path) -> None:
    result = run_cli(["report", str(tmp_path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "no trace of any kind found" in result.stderr
    result = run_cli(["report", str(EXAMPLES / "histo_4pe" / "overall" / "overall.txt")])
    assert result.exit_code == 2
    result = run_cli(
        ["report", str(EXAMPLES / "histo_4pe"), "--format", "pdf", "-o", str(tmp_path)]
    )
    # --format offers only what the report embeds
    assert result.exit_code == 2 and "'pdf' is not one of 'png', 'svg'" in result.stderr


def test_unreadable_everything_is_exit_1(tmp_path: Path) -> None:
    (tmp_path / "overall.txt").write_text("no profile here\n")
    result = run_cli(["report", str(tmp_path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "none could be read" in result.stderr


def test_empty_logical_trace_is_said(tmp_path: Path) -> None:
    for pe in range(3):
        (tmp_path / f"PE{pe}_send.csv").write_text("")
    s = run_report(tmp_path).summary()
    assert s["at_a_glance"]["messages"] == 0 and s["at_a_glance"]["num_pes"] == 3
    assert [f["rule"] for f in s["findings"]] == ["empty_trace"]
    assert s["timeline"]["messages_timed"] == 0


def test_phases_and_trend_in_the_python_api(tmp_path: Path) -> None:
    n = 8
    # PE i sends to PEs j <= i only: lower-triangular, receives fall with PE id
    counts = np.tril(np.full((n, n), 20, dtype=int))
    write_logical(tmp_path, counts, pes_per_node=4)
    write_logical(tmp_path, np.full((n, n), 3, dtype=int), pes_per_node=4, phase="setup")
    run = run_report(tmp_path)
    s = run.summary()
    assert list(s["logical"]["phases"]) == ["(unnamed)", "setup"]
    assert s["at_a_glance"]["messages"] == int(counts.sum()) + 3 * n * n
    assert all("other phases here" not in n for _, _, r in run.reports for n in r.notes)
    found = texts(s)
    assert (
        "the logical matrix is lower-triangular: 100.0 % of the messages between different "
        "PEs go to a lower PE id (phase (unnamed))"
    ) in found
    assert any(
        t.startswith("receives fall with PE id (Spearman rank correlation -1.00") for t in found
    )
    assert any(t.startswith("sends rise with PE id") for t in found)
    assert "sends are balanced: the busiest PE (PE 0) is at 1.00x the mean (phase setup)" in found
    html = render_report(s, FigureCollector().figures)  # renders without figures too
    assert "Phase setup" in html and "Phase (unnamed)" in html


# ------------------------------------------------------------------ in a real browser


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_chromium_renders_the_page(ig: dict[str, Any], tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    profile = tempfile.mkdtemp(prefix="chromium-")
    try:
        subprocess.run(
            [
                "chromium",
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                f"--screenshot={shot}",
                "--window-size=1280,2400",
                (ig["out"] / "report.html").as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    import matplotlib.image as mpimg

    # a click on a figure enlarges it: the lightbox shows that figure
    profile = tempfile.mkdtemp(prefix="chromium-")
    try:
        dom = subprocess.run(
            [
                "chromium",
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--dump-dom",
                (ig["out"] / "report.html").as_uri() + "#enlarge",
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    box = re.search(r'<div id="lightbox"([^>]*)><img src="([^"]+)"', dom)
    assert box is not None and "hidden" not in box.group(1)
    assert box.group(2) == parse(ig["html"]).images[0]["src"]
    pixels = mpimg.imread(shot)
    assert pixels.shape[:2] == (2400, 1280)
    # the dark header band on top, the page below, and the embedded heatmap's colours
    assert pixels[20, 640, :3].mean() < 0.3
    assert pixels[1200:2400, :, :3].std() > 0.1


def test_python_m_actorprof_report(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_logical(run, np.array([[1, 2], [3, 4]]))
    result = subprocess.run(
        [sys.executable, "-m", "actorprof", "report", str(run), "-o", str(tmp_path), "-q"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(tmp_path / "report.html"), str(tmp_path / "report.json")]
    s = json.loads((tmp_path / "report.json").read_text())
    assert s["kinds_read"] == ["logical"]
    assert s["kinds_absent"] == ["papi", "overall", "physical"]
    assert s["at_a_glance"]["messages"] == 10 and s["at_a_glance"]["num_pes"] == 2


def test_physical_only_run() -> None:
    s = run_report(EXAMPLES / "histo_16pe_4nodes").summary()
    assert s["kinds_read"] == ["physical"]
    assert s["at_a_glance"]["num_pes"] == 16 and s["at_a_glance"]["num_nodes"] is None
    assert s["at_a_glance"]["num_pes_from"] == "physical"
    assert s["physical"]["pes_per_node_candidates"] == [4]
    assert s["physical"]["mesh_fit"] is None  # K unknown without the logical node ids
    assert s["at_a_glance"]["physical_buffers"] == 448


def test_the_cli_way_gives_the_same_summary_and_figures() -> None:
    # the CLI makes the coverage after the figures and lets each view go once
    # drawn, drawing the biggest first: the same summary and the page's order
    from actorprof.report.figures import report_figures
    from actorprof.report.run import with_coverage

    run = run_report(EXAMPLES / "ig_8pe_2nodes")
    whole = run.summary()
    kept = BuilderCollector()
    assert report_figures(run, kept, top=10, warn=print) == {}
    light = run.summary(coverage=False)
    assert light["coverage"] == []
    released = BuilderCollector()
    assert report_figures(run, released, top=10, warn=print, release=True) == {}
    assert with_coverage(light, run) == whole
    assert [(f.section, f.scope, f.name) for f in released.figures] == [
        (f.section, f.scope, f.name) for f in kept.figures
    ]
    assert [f.data for f in released.figures] == [f.data for f in kept.figures]
    assert list(released.matrices) == list(kept.matrices)
    # every view let go; the reports (the coverage) stay
    assert not run.logical and not run.papi and run.kinds_read == []
    assert run.timeline is None and run.aggregation is None
    assert with_coverage(run.summary(coverage=False), run)["coverage"] == whole["coverage"]


def test_coverage_is_plain_json_whatever_the_counts_are(tmp_path: Path) -> None:
    """The coverage goes to the writer unwalked (a PlainList): counts a reader
    left as numpy integers are made plain first, so report.json is written."""
    from actorprof._text import PlainList
    from actorprof.read import FileReport, ReadReport
    from actorprof.report.run import RunReport
    from actorprof.write import OutputWriter

    write_logical(tmp_path / "run", np.ones((2, 2), dtype=int))
    run = run_report(tmp_path / "run")
    report = ReadReport(kind="overall", expected_reasons={"program output"})
    report.files.append(
        FileReport(
            "overall.txt",
            pe=np.int64(3),  # type: ignore[arg-type]
            lines_read=np.int64(7),  # type: ignore[arg-type]
            bytes_read=np.int32(90),  # type: ignore[arg-type]
            skipped={"program output": np.int64(2), "bad": np.int64(1)},  # type: ignore[dict-item]
        )
    )
    run = RunReport(run.traces, reports=[*run.reports, ("overall", None, report)])
    coverage = run.coverage()
    assert type(coverage) is PlainList
    assert len(coverage) == 3
    path = OutputWriter(tmp_path / "out", kind="report").json({"coverage": coverage}, "run")
    written = json.loads(path.read_text())["coverage"]
    assert written[-1] == {
        "kind": "overall",
        "scope": None,
        "path": "overall.txt",
        "pe": 3,
        "bytes": 90,
        "lines_read": 7,
        "lines_blank": 0,
        "lines_skipped": 3,
        "skipped_expected": {"program output": 2},
        "skipped_unexpected": {"bad": 1},
        "first_skipped": [],
    }


def test_embedded_png_has_the_pixels_savefig_draws() -> None:
    """The page's PNGs are drawn once (save_png), as the commands' figure
    files are: the same pixels as ``savefig``, whose second draw they skip."""
    import io

    import numpy as np
    from matplotlib.figure import Figure
    from PIL import Image

    def build() -> Figure:
        fig = Figure(figsize=(4, 3), layout="constrained")
        ax = fig.subplots()
        ax.plot([0, 1, 2], [2, 0, 1])
        ax.set_title("sent per PE")
        fig.suptitle("run x")
        return fig

    collector = FigureCollector(dpi=50)
    collector.figure(build(), "f")
    buffer = io.BytesIO()
    build().savefig(buffer, format="png", dpi=50)
    embedded = collector.figures[0]
    got = np.asarray(Image.open(io.BytesIO(embedded.data)).convert("RGB"))
    want = np.asarray(Image.open(buffer).convert("RGB"))
    assert got.shape == want.shape == (embedded.height_px, embedded.width_px, 3)
    assert np.array_equal(got, want)


@pytest.fixture(scope="module")
def heads(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The shipped runs of every kind, their logical and PAPI files cut to
    their first lines: for tests of which figures and tables are made, not
    of their numbers."""
    root = tmp_path_factory.mktemp("heads")
    return {run: trace_heads(EXAMPLES / run, root / run) for run in ("ig_8pe_2nodes", "histo_4pe")}


@pytest.mark.parametrize("let_go", [False, True])
@pytest.mark.parametrize("example", ["ig_8pe_2nodes", "histo_4pe"])
def test_figures_drawn_as_each_kind_is_read_are_the_same_page(
    example: str, let_go: bool, heads: dict[str, Path]
) -> None:
    """The CLI draws each kind's figures once it is read (``on_read``):
    the same figures, in the page's order, as drawn after every read, also
    when the views keep only their summaries after (the CLI's way)."""
    from actorprof.report.figures import ReportFigures, report_figures

    seen: list[tuple[str, int]] = []
    early = BuilderCollector()
    figures = ReportFigures(early, top=10, warn=print)

    def on_read(run: Any, kind: str) -> None:
        figures.draw(run, kind)
        seen.append((kind, len(early.figures)))

    run = run_report(heads[example], on_read=on_read, summaries_after_read=let_go)
    kinds = [kind for kind, _ in seen]
    if example == "ig_8pe_2nodes":
        assert kinds == ["logical", "timeline", "physical", "aggregation"]
    else:
        assert kinds == ["logical", "timeline", "overall", "papi"]
    drawn = [n for _, n in seen]
    assert drawn == sorted(drawn) and 0 < drawn[0] < drawn[-1]  # every kind drew some
    assert run.timeline is not None and (run.timeline.kept is not None) == let_go
    summary = run.summary()
    assert figures.finish(run, release=True) == {}
    late = BuilderCollector()
    assert report_figures(run_report(heads[example]), late, top=10, warn=print) == {}
    assert [(f.section, f.scope, f.name) for f in early.figures] == [
        (f.section, f.scope, f.name) for f in late.figures
    ]
    assert [f.data for f in early.figures] == [f.data for f in late.figures]
    assert list(early.matrices) == list(late.matrices)
    assert summary == run_report(heads[example]).summary()


@pytest.mark.parametrize("where", ["ig_8pe_2nodes", "histo_4pe", "bad files"])
def test_the_coverage_of_files_held_as_columns_is_that_of_their_reports(
    where: str, tmp_path: Path
) -> None:
    from actorprof.read import FileColumns

    if where == "bad files":  # clean files (columns) and damaged ones (reports) mixed
        folder = tmp_path / "run"
        shutil.copytree(EXAMPLES / "ig_8pe_2nodes" / "logical", folder)
        with (folder / "PE3_send.csv").open("a") as f:
            f.write("not a line\n0, 3, 0, 1\n")
    else:
        folder = EXAMPLES / where
    run = run_report(folder, jobs=1)
    columns = [
        f
        for _, _, report in run.reports
        for f in report.file_accounts()
        if isinstance(f, FileColumns)
    ]
    assert columns  # the route under test is taken
    coverage = run.coverage()
    for _, _, report in run.reports:  # a report made for each file, as before
        assert report.files is not None
    assert not any(isinstance(f, FileColumns) for _, _, r in run.reports for f in r.file_accounts())
    assert json.dumps(coverage) == json.dumps(run.coverage())
    if where == "bad files":
        assert any(entry["lines_skipped"] for entry in coverage)


@pytest.mark.parametrize("example", ["ig_8pe_2nodes", "histo_4pe"])
def test_a_sink_of_figures_only_is_given_no_table(example: str, heads: dict[str, Path]) -> None:
    """The writers make no table or summary for a sink that keeps figures only
    (the report's collector, ``tables = False``), and the same figures."""
    from actorprof.report.figures import report_figures
    from actorprof.write import keeps_tables

    class Recorded(BuilderCollector):
        kept: list[str]

        def csv(self, *args: Any, **kwargs: Any) -> str:
            self.kept.append("csv")
            return ""

        def csv_parts(self, *args: Any, **kwargs: Any) -> str:
            self.kept.append("csv_parts")
            return ""

        def json(self, *args: Any, **kwargs: Any) -> str:
            self.kept.append("json")
            return ""

    class Tables(Recorded):
        tables = True

    drawn = []
    for sink_type in (Recorded, Tables):
        sink = sink_type()
        sink.kept = []
        assert report_figures(run_report(heads[example]), sink, top=10, warn=print) == {}
        drawn.append([(f.section, f.scope, f.name, f.data) for f in sink.figures])
        assert keeps_tables(sink) is (sink_type is Tables)
        assert ("json" in sink.kept) is (sink_type is Tables)
        if sink_type is Recorded:
            assert sink.kept == []
    assert drawn[0] == drawn[1] and drawn[0]


def test_pe_fractions_not_finite_are_null() -> None:
    """A PE without cycles has no fraction: null in the JSON, not NaN."""
    from actorprof.report.run import _finite

    values = np.array([0.5, np.nan, np.inf, -np.inf, 0.0])
    assert _finite(values) == [0.5, None, None, None, 0.0]
    assert _finite(np.zeros(0)) == []


def test_the_coverage_table_sums_each_trace_wherever_its_files_are() -> None:
    """Totals per trace (and phase, when a kind has several), with the files
    of one trace not all together; program output apart from lines that
    could not be read; the first unreadable lines listed."""
    from actorprof.report.html import _coverage

    def entry(kind: str, scope: Any, read: int, blank: int = 0, **skipped: int) -> dict[str, Any]:
        expected = {"program output": skipped.pop("output")} if "output" in skipped else {}
        unexpected = {r.replace("_", " "): n for r, n in skipped.items()}
        return {
            "kind": kind,
            "scope": scope,
            "path": f"{kind}{scope}_{read}",
            "pe": 0,
            "bytes": 10,
            "lines_read": read,
            "lines_blank": blank,
            "lines_skipped": sum(expected.values()) + sum(unexpected.values()),
            "skipped_expected": expected,
            "skipped_unexpected": unexpected,
            "first_skipped": [
                {"line": 3, "reason": r, "text": "x"} for r in [*expected, *unexpected]
            ],
        }

    entries = [
        entry("logical", "a", 5, 1),
        entry("logical", "b", 7, not_a_number=2),
        entry("overall", None, 9, output=4),
        entry("logical", "a", 11, 2, cut_line=1),
    ]
    html = _coverage({"coverage": entries})
    rows = re.findall(r"<tr><td>([^<]*)</td>((?:<td[^>]*>[^<]*</td>)+)</tr>", html)
    totals = {name: re.findall(r">([^<]*)</td>", cells) for name, cells in rows}
    assert totals["logical, phase a"] == ["2", "16", "3", "0", "1"]
    assert totals["logical, phase b"] == ["1", "7", "0", "0", "2"]
    assert totals["overall"] == ["1", "9", "0", "4", "0"]
    assert "cut line" in html and "not a number" in html


def test_physical_links_let_go_after_read_same_summary() -> None:
    """The CLI's report lets the physical view's links go once its figures
    are drawn (on read): the summary is the one of the run holding them."""
    kinds: list[str] = []
    full = run_report(EXAMPLES / "ig_8pe_2nodes", top=4)
    slim = run_report(
        EXAMPLES / "ig_8pe_2nodes",
        top=4,
        on_read=lambda run, kind: kinds.append(kind),
        summaries_after_read=True,
    )
    assert "physical" in kinds
    assert full.physical is not None and slim.physical is not None
    assert slim.physical.kept is not None and full.physical.kept is None
    assert slim.summary() == full.summary()
    # without a reader of the figures the links stay
    assert run_report(EXAMPLES / "ig_8pe_2nodes", summaries_after_read=True).physical.kept is None  # type: ignore[union-attr]
