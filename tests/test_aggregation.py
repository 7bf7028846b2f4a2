"""Logical vs physical: routing over the mesh, link explanation, per-PE table, CLI, plot."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from actorprof import (
    AggregationView,
    NoTraceError,
    ReadReport,
    aggregation_view,
    plot_bytes_bars,
    route_messages,
)
from actorprof.analyze.aggregation import aggregation_factor, pad_matrix
from actorprof.cli import main
from actorprof.kinds.aggregation import aggregation_inputs, pes_per_node_from_nodes

REAL = Path(__file__).resolve().parent / "data" / "real"
IG = REAL / "ig_8pe_2nodes"


def _matrix(cells: dict[tuple[int, int], int], n: int) -> pd.DataFrame:
    values = np.zeros((n, n), dtype=np.int64)
    for (i, j), v in cells.items():
        values[i, j] = v
    return pd.DataFrame(
        values, index=pd.RangeIndex(n, name="src_pe"), columns=pd.RangeIndex(n, name="dst_pe")
    )


def _view(path: Path, **kw: Any) -> AggregationView:
    return aggregation_view(path, physical_report=ReadReport(), logical_report=ReadReport(), **kw)


# --- routing ------------------------------------------------------------------

# aggregation_2d: 4 PEs as 2 nodes of 2 (node = pe // 2), 8-byte messages
LOGICAL_2D = {(0, 3): 4, (0, 1): 2, (1, 2): 3, (2, 2): 1, (3, 0): 2}


def test_route_2d_by_hand() -> None:
    routes = route_messages(
        _matrix(LOGICAL_2D, 4),
        payload_bytes=_matrix({k: 8 * v for k, v in LOGICAL_2D.items()}, 4),
        pes_per_node=2,
    )
    assert routes.topology == "2d" and routes.pes_per_node == 2
    # hop 1, local_send s -> node(s)*2 + d%2:
    # 0->3 via 1 (4), 0->1 via 1 (2), 1->2 via 0 (3), 2->2 via 2 (1), 3->0 via 2 (2)
    pd.testing.assert_frame_equal(
        routes.messages["local_send"], _matrix({(0, 1): 6, (1, 0): 3, (2, 2): 1, (3, 2): 2}, 4)
    )
    # hop 2, nonblock_send m -> d (self hops when s and d share a node)
    pd.testing.assert_frame_equal(
        routes.messages["nonblock_send"],
        _matrix({(1, 3): 4, (1, 1): 2, (0, 2): 3, (2, 2): 1, (2, 0): 2}, 4),
    )
    assert routes.payload_bytes["nonblock_send"].loc[1, 3] == 32
    assert routes.items_sent().tolist() == [9, 9, 4, 2]


def test_route_1d_goes_straight() -> None:
    counts = _matrix({(0, 1): 5, (0, 0): 1, (1, 0): 3}, 2)
    for k in (None, 2, 8):  # no K, or one node
        routes = route_messages(counts, pes_per_node=k)
        assert routes.topology == "1d"
        pd.testing.assert_frame_equal(routes.messages["local_send"], counts)
        assert not routes.messages["nonblock_send"].to_numpy().any()


def test_route_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match="multiple of 3"):
        route_messages(_matrix({(0, 1): 1}, 8), pes_per_node=3)
    with pytest.raises(ValueError, match="at least 1"):
        route_messages(_matrix({(0, 1): 1}, 8), pes_per_node=0)


def test_pad_matrix_never_cuts() -> None:
    m = _matrix({(1, 1): 2}, 2)
    padded = pad_matrix(m, 4)
    assert padded.shape == (4, 4) and padded.loc[1, 1] == 2 and padded.index.name == "src_pe"
    assert pad_matrix(m, 1) is m


def test_pes_per_node_from_nodes() -> None:
    def nodes(values: list[int]) -> pd.Series:
        return pd.Series(values, index=pd.RangeIndex(len(values), name="pe"))

    assert pes_per_node_from_nodes(nodes([0, 0, 0, 0, 1, 1, 1, 1])) == 4
    assert pes_per_node_from_nodes(nodes([0, 0, 1, 1, -1, -1])) == 2  # silent PEs
    assert pes_per_node_from_nodes(nodes([0, 0, 0, 0])) is None  # one node: 1D
    assert pes_per_node_from_nodes(nodes([0, 1, 0, 1])) is None  # not pe // K


# --- hand-made fixtures -------------------------------------------------------


def test_2d_fixture_links_and_pes(data: Path) -> None:
    view = _view(data / "aggregation_2d")
    assert view.pes_per_node == 2 and view.pes_per_node_source == "logical node ids"
    assert not view.approximate and view.approximate_reasons == []
    ex = view.explanation
    assert (ex.links_seen, ex.links_explained) == (9, 9)
    assert ex.by_type["local_send"]["links_seen"] == 4
    assert ex.by_type["nonblock_send"]["links_seen"] == 5
    assert ex.by_type["nonblock_progress"]["links_explained"] == 5
    links = view.links.set_index(["send_type", "src_pe", "dst_pe"])
    assert links.loc[("local_send", 0, 1), "buffers"] == 2
    assert links.loc[("local_send", 0, 1), "buffer_bytes"] == 88
    assert links.loc[("local_send", 0, 1), "routed_messages"] == 6
    assert links.loc[("local_send", 0, 1), "messages_per_buffer"] == 3.0
    assert set(view.links["status"].astype(str)) == {"explained"}

    pes = view.pes
    assert pes["messages_sent"].tolist() == [6, 3, 1, 2]
    assert pes["payload_bytes_sent"].tolist() == [48, 24, 8, 16]
    assert pes["routed_items_sent"].tolist() == [9, 9, 4, 2]
    assert pes["buffers_sent"].tolist() == [3, 3, 3, 1]
    assert pes["wire_bytes_sent"].tolist() == [128, 124, 76, 32]
    np.testing.assert_allclose(pes["messages_per_buffer"], [2, 1, 1 / 3, 2])
    np.testing.assert_allclose(pes["items_per_buffer"], [3, 3, 4 / 3, 2])
    np.testing.assert_allclose(pes["avg_buffer_bytes"], [128 / 3, 124 / 3, 76 / 3, 32])
    np.testing.assert_allclose(pes["avg_buffer_fill"], pes["avg_buffer_bytes"] / 56)
    np.testing.assert_allclose(pes["wire_over_payload"], [128 / 48, 124 / 24, 76 / 8, 2])
    assert pes["node"].tolist() == [0, 0, 1, 1]

    factor = view.factor
    assert factor.loc[0, 1] == 3.0 and factor.loc[2, 2] == 1.0  # (1 local + 1 nonblock) / 2
    assert np.isnan(factor.loc[0, 0])

    t = view.totals()
    assert (t["messages"], t["payload_bytes"], t["buffers"], t["wire_bytes"]) == (12, 96, 10, 360)
    assert t["by_type"]["local_send"]["bytes"] == 184
    assert t["by_type"]["nonblock_send"]["overhead_bytes_per_buffer"] == (176 - 96) / 5


def test_1d_fixture_overhead_is_16_bytes_per_buffer(data: Path) -> None:
    # the real-traces README: one node, bytes = messages x size + 16 per buffer
    view = _view(data / "aggregation_1d")
    assert view.routes.topology == "1d" and view.pes_per_node_source == "one node"
    local = view.totals()["by_type"]["local_send"]
    assert (local["buffers"], local["bytes"], local["routed_messages"]) == (4, 208, 9)
    assert local["overhead_bytes_per_buffer"] == 16.0
    # one node: the routed messages per link are the logical counts
    pd.testing.assert_frame_equal(view.routes.messages["local_send"], view.logical.matrices.counts)
    assert (view.explanation.links_seen, view.explanation.links_explained) == (3, 3)
    assert view.pes["messages_per_buffer"].tolist() == [2.0, 3.0]


def test_different_runs_are_flagged_approximate(data: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(data / "aggregation_2d", run)
    text = (run / "physical.txt").read_text()
    text = text.replace("nonblock_send, 32, 2, 0\n", "nonblock_send, 32, 3, 1\n")
    text = text.replace("local_send, 20, 2, 2\n", "local_send, 4, 2, 2\n")
    (run / "physical.txt").write_text(text)
    view = _view(run)
    assert view.approximate
    ex = view.explanation.to_dict()
    assert ex["unexplained_total"] == 1
    assert ex["unexplained"][0] == {
        "send_type": "nonblock_send",
        "src_pe": 3,
        "dst_pe": 1,
        "buffers": 1,
        "buffer_bytes": 32,
        "routed_messages": 0,
        "routed_payload_bytes": 0,
    }
    assert ex["without_buffers_total"] == 1
    assert (ex["without_buffers"][0]["src_pe"], ex["without_buffers"][0]["dst_pe"]) == (2, 0)
    assert ex["payload_exceeds_bytes_total"] == 1  # 1 message of 8 B in a 4-byte buffer
    assert len(view.approximate_reasons) == 3
    summary = view.summary()
    assert summary["comparison"]["approximate"] is True
    assert summary["links"]["all_explained"] is False


def test_pe_count_mismatch_is_approximate(data: Path) -> None:
    view = _view(
        REAL / "histo_16pe_4nodes" / "physical", logical=data / "aggregation_2d" / "logical"
    )
    assert view.num_pes == 16
    assert any("16 PEs, the logical trace 4" in r for r in view.approximate_reasons)


def test_inputs_are_found(data: Path, tmp_path: Path) -> None:
    assert aggregation_inputs(data / "aggregation_2d") == (
        data / "aggregation_2d" / "physical.txt",
        data / "aggregation_2d" / "logical",
    )
    assert aggregation_inputs(IG) == (IG / "physical" / "physical.txt", IG / "logical")
    flat = tmp_path / "flat"
    shutil.copytree(data / "aggregation_1d" / "logical", flat)
    shutil.copy(data / "aggregation_1d" / "physical.txt", flat)
    assert aggregation_inputs(flat) == (flat / "physical.txt", flat)
    assert aggregation_inputs(flat / "physical.txt", logical=IG) == (flat / "physical.txt", IG)
    with pytest.raises(NoTraceError, match="--logical DIR"):
        aggregation_inputs(data / "physical_small")
    with pytest.raises(NoTraceError, match="no physical trace"):
        aggregation_inputs(data / "logical_small")


# --- the real 2-node ig example: the acceptance test -------------------


def test_real_ig_routes_explain_every_link() -> None:
    view = _view(IG, pes_per_node=4)
    assert view.routes.topology == "2d"
    assert int(view.logical.matrices.counts.to_numpy().sum()) == 160_000
    ex = view.explanation
    assert ex.by_type["local_send"]["links_seen"] == 32
    assert ex.by_type["local_send"]["links_explained"] == 32
    assert ex.by_type["nonblock_send"]["links_seen"] == 16
    assert ex.by_type["nonblock_send"]["links_explained"] == 16
    assert ex.by_type["nonblock_progress"]["links_explained"] == 16
    assert (ex.links_seen, ex.links_explained) == (48, 48)
    assert ex.all_explained  # no link carries buffers that no route explains
    assert ex.to_dict()["without_buffers_total"] == 0  # and every route carries buffers
    assert ex.to_dict()["payload_exceeds_bytes_total"] == 0
    assert not view.approximate

    t = view.totals()
    assert (t["messages"], t["payload_bytes"]) == (160_000, 2_560_000)
    assert (t["buffers"], t["wire_bytes"], t["routed_items"]) == (808, 5_934_784, 320_000)
    local, nonblock = t["by_type"]["local_send"], t["by_type"]["nonblock_send"]
    assert (local["buffers"], local["bytes"], local["routed_messages"]) == (441, 3_208_072, 160_000)
    assert (nonblock["buffers"], nonblock["bytes"], nonblock["routed_messages"]) == (
        367,
        2_726_712,
        160_000,
    )
    assert t["by_type"]["nonblock_progress"] == {"buffers": 328, "bytes": 0}
    # hop 1 items carry about 4 bytes more than sizeof(T), hop 2 items about 1
    assert local["overhead_bytes_per_message"] == pytest.approx(4.05045)
    assert nonblock["overhead_bytes_per_message"] == pytest.approx(1.04195)
    assert t["wire_over_payload"] == pytest.approx(5_934_784 / 2_560_000)
    assert view.pes["messages_sent"].sum() == 160_000
    # awk: local_send + nonblock_send lines per src_pe
    assert view.pes["buffers_sent"].tolist() == [107, 93, 102, 100, 105, 105, 95, 101]


def test_real_ig_k_from_the_logical_node_ids() -> None:
    view = _view(IG)
    assert view.pes_per_node == 4 and view.pes_per_node_source == "logical node ids"
    assert view.explanation.all_explained
    assert view.physical.fit is not None and view.physical.fit.fits


def test_wrong_k_does_not_explain_the_links() -> None:
    view = _view(IG, pes_per_node=2)
    assert view.approximate
    assert view.explanation.to_dict()["unexplained_total"] > 0
    assert any("node ids say 4" in w for w in view.physical.report.warnings)


def test_factor_matrix_on_real_ig() -> None:
    view = _view(IG, pes_per_node=4)
    factor = aggregation_factor(view.physical.matrices, view.routes)
    # 0 -> 0 carries local_send and nonblock_send self hops: (4969 + 9968) / (16 + 30)
    assert factor.loc[0, 0] == pytest.approx((4969 + 9968) / 46)
    assert np.isnan(factor.loc[0, 5])  # different node and column: no link


# --- plot ---------------------------------------------------------------------


def test_plot_bytes_bars_draws_two_series() -> None:
    table = pd.DataFrame(
        {"payload_bytes_sent": [160, 96, 0], "wire_bytes_sent": [208, 128, 16]},
        index=pd.Index([0, 1, 2], name="pe"),
    )
    ax = plot_bytes_bars(table, title="bytes")
    assert len(ax.containers) == 2
    assert [b.get_height() for b in ax.containers[0]] == [160.0, 96.0, 0.0]
    assert [b.get_height() for b in ax.containers[1]] == [208.0, 128.0, 16.0]
    assert [t.get_text() for t in ax.texts] == ["x1.30", "x1.33"]  # no ratio over 0 payload
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2"]
    assert ax.get_title() == "bytes" and ax.get_xlabel() == "PE"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "logical payload",
        "physical (on the wire)",
    ]
    with pytest.raises(ValueError, match="no column"):
        plot_bytes_bars(table.drop(columns="wire_bytes_sent"))


def test_plot_bytes_bars_scales_to_many_pes() -> None:
    n = 4096
    table = pd.DataFrame(
        {"payload_bytes_sent": np.full(n, 100), "wire_bytes_sent": np.arange(n) + 100},
        index=pd.RangeIndex(n, name="pe"),
    )
    _fig, ax = plt.subplots()
    assert plot_bytes_bars(table, ax=ax) is ax
    assert len(ax.containers) == 0 and len(ax.patches) == 2
    assert len(ax.get_xticks()) <= 16 and len(ax.texts) == 0


# --- CLI ----------------------------------------------------------------------


def test_cli_aggregation_on_the_real_example(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["aggregation", str(IG), "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    names = [Path(line).name for line in result.stdout.splitlines()]
    assert names == [
        "aggregation_heatmap.png",
        "aggregation_bytes.png",
        "aggregation_pes.csv",
        "aggregation_links.csv",
        "aggregation_summary.json",
    ]
    assert "48 seen with buffers, 48 explained" in result.stderr
    summary = json.loads((tmp_path / "aggregation_summary.json").read_text())
    assert summary["kind"] == "aggregation"
    assert summary["pes_per_node"] == 4 and summary["topology"] == "2d"
    assert summary["links"]["links_seen"] == summary["links"]["links_explained"] == 48
    assert summary["links"]["unexplained"] == []
    assert summary["comparison"]["approximate"] is False
    assert summary["totals"]["messages"] == 160_000
    assert summary["lines_read"] == 160_000 + 1136
    links = pd.read_csv(tmp_path / "aggregation_links.csv")
    assert list(links.columns[:3]) == ["send_type", "src_pe", "dst_pe"]
    assert len(links) == 64 and set(links["status"]) == {"explained"}
    pes = pd.read_csv(tmp_path / "aggregation_pes.csv", index_col="pe")
    assert pes["messages_sent"].sum() == 160_000


def test_cli_aggregation_quiet_with_logical_option(data: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "aggregation",
            str(data / "aggregation_1d" / "physical.txt"),
            "--logical",
            str(data / "aggregation_1d" / "logical"),
            "-q",
            "--format",
            "svg",
            "-o",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert (tmp_path / "aggregation_heatmap.svg").is_file()
    summary = json.loads((tmp_path / "aggregation_summary.json").read_text())
    assert summary["topology"] == "1d"
    assert summary["totals"]["by_type"]["local_send"]["overhead_bytes_per_buffer"] == 16.0


def test_cli_aggregation_errors(data: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["aggregation", str(data / "physical_small"), "-o", str(tmp_path)])
    assert result.exit_code == 1 and "--logical DIR" in result.stderr
    result = runner.invoke(
        main, ["aggregation", str(IG), "--pes-per-node", "3", "-o", str(tmp_path)]
    )
    assert result.exit_code == 2 and "multiple of 3" in result.stderr


def test_readme_commands_work_on_the_shipped_examples(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    commands = [
        line.split()[1:]
        for line in readme.splitlines()
        if line.startswith(("actorprof physical ", "actorprof aggregation "))
    ]
    assert [c[0] for c in commands] == ["physical", "aggregation"]
    for argv in commands:
        argv = [str(root / a) if a.startswith("examples/") else a for a in argv]
        argv = [str(tmp_path) if a == "plots/" else a for a in argv]
        result = CliRunner().invoke(main, argv)
        assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "aggregation_summary.json").read_text())
    assert summary["links"]["links_seen"] == summary["links"]["links_explained"] == 48
    assert json.loads((tmp_path / "physical_summary.json").read_text())["mesh_fit"]["fits"]
