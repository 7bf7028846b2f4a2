"""Options every command shares: -n/--num-pes, --dpi; shell completion; report --figures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from matplotlib.image import imread

from actorprof import cli
from actorprof.cli import main
from actorprof.report import html as report_html
from actorprof.report.html import FigureFiles
from actorprof.write import FIGURE_DPI

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

#: The figures of the original ``actorprof.py DIR -n N -l -lp -p -s`` (one per flag),
#: under the names ``actorprof report --figures`` gives them.
ORIGINAL_FIGURES = {
    "-l": "logical_heatmap.png",
    "-lp": "papi_bars.png",
    "-p": "physical_heatmap.png",
    "-s": "overall_stacked.png",
}


def commands() -> dict[str, click.Command]:
    assert isinstance(main, click.Group)
    return dict(main.commands)


#: Commands that read no trace (so take no PE count).
NOT_TRACE_COMMANDS = {"cache"}


@pytest.mark.parametrize("name", sorted(set(commands()) - NOT_TRACE_COMMANDS))
def test_every_command_takes_n_and_figure_commands_dpi(name: str) -> None:
    command = commands()[name]
    opts = {o for p in command.params if isinstance(p, click.Option) for o in p.opts}
    assert {"-n", "--num-pes"} <= opts
    assert ("--dpi" in opts) == ("--format" in opts)


def test_dpi_defaults_are_the_writers() -> None:
    assert cli.FIGURE_DPI == FIGURE_DPI
    assert cli.EMBED_DPI == report_html.EMBED_DPI


def test_n_is_num_pes(tmp_path: Path) -> None:
    trace = EXAMPLES / "histo_4pe" / "logical"
    out = tmp_path / "out"
    ok = CliRunner().invoke(main, ["logical", str(trace), "-n", "4", "-o", str(out), "-q"])
    assert ok.exit_code == 0, ok.output
    # -n 8 says the run had 8 PEs: the missing PE files are said, as with --num-pes 8
    short = CliRunner().invoke(main, ["logical", str(trace), "-n", "8", "-o", str(out)])
    long = CliRunner().invoke(main, ["logical", str(trace), "--num-pes", "8", "-o", str(out)])
    assert short.exit_code == long.exit_code
    assert short.stderr == long.stderr and "4-7" in short.stderr


def test_dpi_sets_the_png_size(tmp_path: Path) -> None:
    trace = EXAMPLES / "histo_4pe" / "overall"
    sizes = {}
    for dpi in (None, 40):
        out = tmp_path / str(dpi)
        args = ["overall", str(trace), "-o", str(out), "-q"]
        result = CliRunner().invoke(main, args + ([] if dpi is None else ["--dpi", str(dpi)]))
        assert result.exit_code == 0, result.output
        sizes[dpi] = imread(out / "overall_stacked.png").shape[:2]
    assert sizes[None][0] == pytest.approx(sizes[40][0] * FIGURE_DPI / 40, abs=2)
    assert sizes[None][1] == pytest.approx(sizes[40][1] * FIGURE_DPI / 40, abs=2)


def test_dpi_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    trace = EXAMPLES / "histo_4pe" / "overall"
    result = CliRunner().invoke(main, ["overall", str(trace), "--dpi", "0", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "--dpi" in result.output


@pytest.mark.parametrize(
    ("shell", "marker"),
    [("bash", "_actorprof_completion"), ("zsh", "#compdef actorprof"), ("fish", "complete")],
)
def test_completion_script_is_produced(shell: str, marker: str) -> None:
    """What README's completion lines evaluate: ``_ACTORPROF_COMPLETE=<shell>_source``."""
    result = CliRunner().invoke(
        main, [], prog_name="actorprof", env={"_ACTORPROF_COMPLETE": f"{shell}_source"}
    )
    assert result.exit_code == 0, result.output
    assert marker in result.stdout and "_ACTORPROF_COMPLETE" in result.stdout


def test_completion_completes_commands_and_options() -> None:
    env = {"_ACTORPROF_COMPLETE": "bash_complete", "COMP_WORDS": "actorprof rep", "COMP_CWORD": "1"}
    result = CliRunner().invoke(main, [], prog_name="actorprof", env=env)
    assert "plain,report" in result.stdout.split()
    env = {**env, "COMP_WORDS": "actorprof logical --num", "COMP_CWORD": "2"}
    result = CliRunner().invoke(main, [], prog_name="actorprof", env=env)
    assert "plain,--num-pes" in result.stdout.split()


# ----------------------------------------------------------- report --figures


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """histo_4pe (logical, PAPI, overall) and a 4-PE physical trace: every kind."""
    run = tmp_path_factory.mktemp("full_run") / "run"
    shutil.copytree(EXAMPLES / "histo_4pe", run)
    (run / "physical").mkdir()
    lines = [f"local_send, 4096, {s}, {d}\n" for s in range(4) for d in range(4) if s != d]
    (run / "physical" / "physical.txt").write_text("program output\n" + "".join(lines))
    return run


@pytest.fixture(scope="module")
def figures(full_run: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("figures") / "out"
    args = ["report", str(full_run), "-o", str(out), "--figures", "-q", "--no-cache"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return out, result.stdout


def test_report_figures_writes_every_original_png(figures: tuple[Path, str]) -> None:
    out, stdout = figures
    listed = stdout.split()
    assert listed[-2:] == [str(out / "report.html"), str(out / "report.json")]
    figures = [Path(p) for p in listed[:-2]]
    assert {p.name for p in figures} >= set(ORIGINAL_FIGURES.values())
    assert sorted(p.name for p in out.iterdir()) == sorted(Path(p).name for p in listed)
    for path in figures:
        assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    # one file per figure of the page
    summary = json.loads((out / "report.json").read_text())
    assert len(summary["figures"]) == len(figures)


def test_report_figures_dpi_and_without_flag(
    full_run: Path, figures: tuple[Path, str], tmp_path: Path
) -> None:
    plain = CliRunner().invoke(main, ["report", str(full_run), "-o", str(tmp_path / "a"), "-q"])
    assert plain.exit_code == 0 and len(plain.stdout.split()) == 2  # html and json only
    out = tmp_path / "b"
    args = ["report", str(full_run), "-o", str(out), "--figures", "--dpi", "30", "-q"]
    assert CliRunner().invoke(main, args).exit_code == 0
    big = figures[0]
    small_h = imread(out / "overall_stacked.png").shape[0]
    big_h = imread(big / "overall_stacked.png").shape[0]
    assert big_h == pytest.approx(small_h * FIGURE_DPI / 30, abs=2)


def test_figure_file_names_keep_phases_apart() -> None:
    assert FigureFiles.stem("logical", "(unnamed)", "heatmap") == "logical_heatmap"
    assert FigureFiles.stem("logical", None, "heatmap") == "logical_heatmap"
    assert FigureFiles.stem("papi", "bfs", "bars") == "papi_bfs_bars"
    assert FigureFiles.stem("logical", "a b/c", "violin") == "logical_a_b_c_violin"


def test_pes_window_draws_its_pes_and_a_window_beyond_them_is_a_usage_error(
    tmp_path: Path,
) -> None:
    """``--pes A-B`` draws PEs A to B (the README's zoom into a block); a
    window beyond the trace's PEs is an option that does not fit the data:
    exit 2, the PEs there are named. The physical view's windows (API) too."""
    from actorprof import physical_view
    from actorprof.errors import UsageError

    runner = CliRunner()
    base = ["logical", str(EXAMPLES / "ig_8pe_2nodes/logical"), "--no-cache", "-j", "1"]
    done = runner.invoke(main, [*base, "--pes", "2-5", "-o", str(tmp_path / "w")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "w" / "logical_heatmap_2_5.png").is_file()
    for window, why in (("2-9", "beyond the trace's 8 PEs (0-7)"), ("5-2", "B must be >= A")):
        done = runner.invoke(main, [*base, "--pes", window, "-o", str(tmp_path / "x")])
        assert done.exit_code == 2, done.output
        assert why in done.stderr and "Traceback" not in done.stderr
    view = physical_view(EXAMPLES / "ig_8pe_2nodes/physical", pes_per_node=4)
    assert len(view.heatmap_panels("nonblock_send", pes=(2, 5))) == 1
    with pytest.raises(UsageError, match="beyond the trace's 8 PEs"):
        view.heatmap_panels("nonblock_send", pes=(2, 9))
