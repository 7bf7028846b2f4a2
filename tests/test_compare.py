"""actorprof compare: ratios B/A, shared scales, refusals; plot_heatmap(vmax=...)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from matplotlib.figure import Figure

from actorprof.cli import main
from actorprof.plot import plot_heatmap
from actorprof.report.compare import compare_runs, ratio, run_names, write_compare

from ._synthetic import write_logical, write_overall

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GENERATE = ROOT / "examples" / "triangle_counting" / "generate.py"
OUTPUTS = ["compare_heatmap.png", "compare_violin.png", "compare_overall.png"]


def run_cli(args: list[str]) -> Any:
    return CliRunner().invoke(main, [*args, "--no-cache"])


# ------------------------------------------------------------------ plot_heatmap(vmax=...)


def test_heatmap_vmax_shares_a_scale() -> None:
    m = pd.DataFrame([[0, 5], [3, 1]])
    _, ax = plt.subplots(layout="constrained")
    plot_heatmap(m, ax=ax)
    # default unchanged: each scale up to its own maximum (totals: received 6 by PE 1)
    assert ax.images[0].norm.vmax == 5 and ax.images[1].norm.vmax == 6
    _, ax = plt.subplots(layout="constrained")
    plot_heatmap(m, ax=ax, vmax=20)
    assert (ax.images[0].norm.vmin, ax.images[0].norm.vmax) == (0, 20)
    assert ax.images[1].norm.vmax == 6  # a number sets the cells only
    _, ax = plt.subplots(layout="constrained")
    plot_heatmap(m, ax=ax, vmax=(20, 100))
    assert ax.images[0].norm.vmax == 20 and ax.images[2].norm.vmax == 100
    # the colour of 5 on a 0-20 scale is a quarter up the colormap
    rgba = ax.images[0].to_rgba(np.array([[5.0]]))[0, 0]
    assert np.allclose(rgba, plt.get_cmap("viridis")(0.25))
    _, ax = plt.subplots(layout="constrained")
    plot_heatmap(m, ax=ax, log=True, vmax=(50, 500))
    assert (ax.images[0].norm.vmin, ax.images[0].norm.vmax) == (1, 50)
    assert ax.images[1].norm.vmax == 500
    _, ax = plt.subplots(layout="constrained")
    plot_heatmap(pd.DataFrame([[0, 0], [0, 0]]), ax=ax, log=True, vmax=40)
    assert (ax.images[0].norm.vmin, ax.images[0].norm.vmax) == (4, 40)


# ------------------------------------------------------------------ helpers


def test_ratio_and_names(tmp_path: Path) -> None:
    assert ratio(2, 3) == 1.5
    assert ratio(0, 3) is None and ratio(None, 3) is None and ratio(2, None) is None
    assert run_names(tmp_path / "cyc", tmp_path / "rng", None) == ["cyc", "rng"]
    assert run_names(tmp_path / "x" / "run", tmp_path / "y" / "run", None) == ["A", "B"]
    assert run_names("a", "b", " cyclic , range ") == ["cyclic", "range"]
    for bad in ("cyclic", "a,a", "a,", "a,b,c"):
        with pytest.raises(Exception, match="--names needs two different names"):
            run_names("a", "b", bad)


# ------------------------------------------------------------------ a run against itself


@pytest.fixture(scope="module")
def itself(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("compare_itself")
    run = str(EXAMPLES / "histo_4pe")
    result = run_cli(["compare", run, run, "-o", str(out)])
    assert result.exit_code == 0, result.output
    return {"out": out, "result": result, "json": json.loads((out / "compare.json").read_text())}


def test_histo_against_itself_gives_ratios_of_one(itself: dict[str, Any]) -> None:
    s = itself["json"]
    assert s["names"] == ["A", "B"] and s["compared"] == ["logical", "overall"]
    logical, overall = s["ratios"]["logical"], s["ratios"]["overall"]
    assert logical["messages"] == {"a": 40_000, "b": 40_000, "b_over_a": 1.0}
    assert logical["received_max"]["a"] == 10_112
    assert logical["sent_max_over_mean"]["a"] == 1.0
    assert overall["t_total_max_cycles"] == {"a": 86_670_098, "b": 86_670_098, "b_over_a": 1.0}
    assert overall["comm_share"]["a"] == pytest.approx(279_053_147 / 344_007_196)
    assert overall["pop_load_balance"]["a"] == pytest.approx(0.4749903793935443)
    for kind in ("logical", "overall"):
        for metric, v in s["ratios"][kind].items():
            if v["a"]:
                assert v["b_over_a"] == 1.0, metric
            else:
                assert v["b_over_a"] is None, metric  # 0 / 0: undefined, not 1
    assert s["runs"]["A"]["num_pes"] == 4


def test_files_stdout_and_quiet(itself: dict[str, Any], tmp_path: Path) -> None:
    out = itself["out"]
    names = [*OUTPUTS, "compare_ratios.csv", "compare.json"]
    assert itself["result"].stdout.splitlines() == [str(out / n) for n in names]
    assert "received max/mean:" in itself["result"].stderr
    table = pd.read_csv(out / "compare_ratios.csv")
    assert list(table.columns) == ["kind", "metric", "a", "b", "b_over_a"]
    assert table.set_index("metric").loc["messages", "b_over_a"] == 1.0
    run = EXAMPLES / "histo_4pe" / "overall"  # overall only: no logical figures
    result = run_cli(["compare", str(run), str(run), "-o", str(tmp_path), "-q"])
    assert result.exit_code == 0 and result.stderr == ""
    written = [Path(p).name for p in result.stdout.splitlines()]
    assert written == ["compare_overall.png", "compare_ratios.csv", "compare.json"]


# ------------------------------------------------------------------ the case study: cyclic vs range


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tc_generate_compare", GENERATE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def case_study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not GENERATE.exists():  # pragma: no cover
        pytest.skip("examples/triangle_counting/generate.py is not here")
    gen = _generator()
    runs, results = {}, {}
    for dist in ("cyclic", "range"):
        runs[dist] = tmp_path_factory.mktemp(f"tc_{dist}")
        cfg = gen.Config(scale=8, num_pes=8, pes_per_node=4, distribution=dist, seed=1)
        results[dist] = gen.generate(cfg, runs[dist])
    out = tmp_path_factory.mktemp("compare_tc")
    result = run_cli(
        [
            "compare",
            str(runs["cyclic"]),
            str(runs["range"]),
            "--names",
            "cyclic,range",
            "-o",
            str(out),
        ]
    )
    assert result.exit_code == 0, result.output
    return {
        "runs": runs,
        "results": results,
        "out": out,
        "result": result,
        "json": json.loads((out / "compare.json").read_text()),
    }


def test_cyclic_vs_range_ratios(case_study: dict[str, Any]) -> None:
    s = case_study["json"]
    cyc, rng = case_study["results"]["cyclic"], case_study["results"]["range"]
    assert s["names"] == ["cyclic", "range"] and s["a"] == "cyclic"
    r = s["ratios"]["logical"]
    assert r["messages"] == {"a": cyc.messages, "b": rng.messages, "b_over_a": 1.0}
    assert cyc.messages == rng.messages  # same graph, same messages, other owners
    for side in ("sent", "received"):
        a, b = getattr(cyc, side), getattr(rng, side)
        assert r[f"{side}_max"] == {"a": max(a), "b": max(b), "b_over_a": max(b) / max(a)}
        assert r[f"{side}_mean"]["b_over_a"] == 1.0
        assert r[f"{side}_max_over_mean"]["a"] == pytest.approx(max(a) / np.mean(a))
    assert r["sent_max"]["a"] == cyc.sent[0]  # cyclic: PE 0 is the hot sender
    o = s["ratios"]["overall"]
    assert o["t_total_max_cycles"]["b_over_a"] == pytest.approx(
        o["t_total_max_cycles"]["b"] / o["t_total_max_cycles"]["a"]
    )
    assert 0 < o["comm_share"]["a"] < 1 and 0 < o["comm_share"]["b"] < 1
    assert s["runs"]["cyclic"]["logical"]["stragglers_sent"] == [0]
    stderr = case_study["result"].stderr
    assert "compare cyclic (A) vs range (B): logical, overall" in stderr


class Keep:
    """A sink that keeps the figures (compare's writer draws into it)."""

    def __init__(self) -> None:
        self.figures: dict[str, Figure] = {}

    def figure(self, fig: Figure, name: str) -> None:
        self.figures[name] = fig

    def csv(self, *args: Any, **kw: Any) -> None:
        pass

    def json(self, *args: Any) -> None:
        pass


def test_figures_share_their_scales(case_study: dict[str, Any]) -> None:
    view = compare_runs(*case_study["runs"].values(), names="cyclic,range")

    keep = Keep()
    write_compare(view, keep)
    assert list(keep.figures) == ["heatmap", "violin", "overall"]
    heat = [ax for ax in keep.figures["heatmap"].axes if "logical messages" in ax.get_title()]
    assert [ax.get_title() for ax in heat] == [
        "cyclic: logical messages PE x PE",
        "range: logical messages PE x PE",
    ]
    counts = [view.a.logical.counts.to_numpy(), view.b.logical.counts.to_numpy()]
    top_cell = max(float(c.max()) for c in counts)
    top_total = max(float(max(c.sum(axis=0).max(), c.sum(axis=1).max())) for c in counts)
    for ax in heat:
        assert ax.images[0].norm.vmax == top_cell
        assert ax.images[1].norm.vmax == top_total and ax.images[2].norm.vmax == top_total
    (violin,) = keep.figures["violin"].axes
    labels = [t.get_text() for t in violin.get_xticklabels()]
    assert labels == ["cyclic\nsent", "range\nsent", "cyclic\nreceived", "range\nreceived"]
    bars = keep.figures["overall"].axes
    assert bars[0].get_ylim() == bars[1].get_ylim()


# ------------------------------------------------------------------ refusals


@pytest.fixture(scope="module")
def small_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("small_runs")
    write_logical(root / "four", np.full((4, 4), 2, dtype=int))
    write_logical(root / "eight", np.full((8, 8), 1, dtype=int))
    write_overall(root / "profile_only", [(10, 80, 10)] * 4)
    return {p.name: p for p in root.iterdir()}


def test_different_pe_counts_refused_then_allowed(
    small_runs: dict[str, Path], tmp_path: Path
) -> None:
    a, b = str(small_runs["four"]), str(small_runs["eight"])
    result = run_cli(["compare", a, b, "-o", str(tmp_path)])
    assert result.exit_code == 1
    assert "the runs have different PE counts: four has 4 PEs, eight has 8 PEs" in result.stderr
    assert "--allow-different-pes" in result.stderr
    assert not (tmp_path / "compare.json").exists()
    result = run_cli(["compare", a, b, "-o", str(tmp_path), "--allow-different-pes"])
    assert result.exit_code == 0, result.output
    s = json.loads((tmp_path / "compare.json").read_text())
    assert s["ratios"]["logical"]["messages"] == {"a": 32, "b": 64, "b_over_a": 2.0}
    assert s["ratios"]["logical"]["sent_max"]["b_over_a"] == 1.0
    assert any("compared anyway" in n for n in s["notes"])


def test_nothing_in_common_and_bad_names(small_runs: dict[str, Path], tmp_path: Path) -> None:
    a, b = str(small_runs["four"]), str(small_runs["profile_only"])
    result = run_cli(["compare", a, b, "-o", str(tmp_path)])
    assert result.exit_code == 1
    assert "no trace kind in common: four: logical; profile_only: overall" in result.stderr
    result = run_cli(["compare", a, a, "--names", "same,same", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "--names" in result.stderr
    result = run_cli(["compare", a, str(tmp_path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and "nothing to compare" in result.stderr


def test_pooled_heatmaps_say_their_blocks(tmp_path: Path) -> None:
    """Beyond 1,024 PEs a cell is a block of PEs: each panel says so, as
    logical's own heatmap does."""
    runs = []
    for name, step in (("a", 1), ("b", 7)):
        folder = tmp_path / name / "logical"
        folder.mkdir(parents=True)
        n = 1100
        for pe in range(n):
            dst = (pe + step) % n
            line = f"{pe // 100}, {pe}, {dst // 100}, {dst}, 8, 1721412345.{pe:06d}\n"
            (folder / f"PE{pe}_send.csv").write_text(line)
        runs.append(folder.parent)
    view = compare_runs(*runs)

    keep = Keep()
    write_compare(view, keep)
    titles = [ax.get_title() for ax in keep.figures["heatmap"].axes if ax.get_title()]
    caption = view.a.logical.heatmap_panels()[0][1]
    assert caption.startswith("blocks of ") and caption.endswith(" PEs: sum")
    assert titles == [
        f"a: logical messages PE x PE\n{caption}",
        f"b: logical messages PE x PE\n{caption}",
    ]
