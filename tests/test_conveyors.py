"""The Conveyors model: topology choice, routes, buffers, and the real runs it explains."""

from __future__ import annotations

import itertools
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from actorprof.analyze.conveyors import (
    CHECK_COLUMNS,
    LAYOUT_COLUMNS,
    ROUTE_COLUMNS,
    Topology,
    compare_run,
    conveyors_topology,
    detect_topologies,
    logical_pairs,
    pair_table,
    physical_buffers,
    porter_links,
    predict_layouts,
    predict_links,
    predict_pes,
    route_pairs,
)
from actorprof.read import ReadReport, iter_logical, iter_physical
from actorprof.read.physical import SEND_TYPE_DTYPE

from ._real_runs import DATA, HISTO, HISTO_LOGICAL, IG, REAL, REAL_RUNS

#: name -> (logical folder, physical trace, PEs per node, topology kind)
RUNS = {name: run[:4] for name, run in REAL_RUNS.items()}


@cache
def _pairs(path: Path) -> pd.DataFrame:
    return logical_pairs(iter_logical(path, report=ReadReport()))


@cache
def _physical(path: Path) -> pd.DataFrame:
    return physical_buffers(iter_physical(path, report=ReadReport()))


def _pairs_of(rows: list[tuple[int, int, int]], size: int = 8) -> pd.DataFrame:
    src, dst, messages = (np.array(c, dtype=np.int64) for c in zip(*rows))
    return pd.DataFrame(
        {"src_pe": src, "dst_pe": dst, "messages": messages, "payload_bytes": messages * size}
    )


def _buffers_of(rows: list[tuple[str, int, int, int]]) -> pd.DataFrame:
    types, src, dst, size = zip(*rows)
    return pd.DataFrame(
        {
            "send_type": pd.Categorical(types, dtype=SEND_TYPE_DTYPE),
            "src_pe": np.array(src, dtype=np.int64),
            "dst_pe": np.array(dst, dtype=np.int64),
            "buffer_bytes": np.array(size, dtype=np.int64),
            "calls": np.ones(len(rows), dtype=np.int64),
        }
    )


# --- topology choice (convey_parameters, convey_new_tensor) --------------------


@pytest.mark.parametrize(
    ("num_pes", "k", "kind", "n_local", "grid"),
    [
        (16, 16, "1d", 16, (16,)),  # one node: vector, local_send
        (16, None, "1d", 16, (16,)),
        (16, 32, "1d", 16, (16,)),
        (16, 4, "2d", 4, (4, 4)),  # 16 // 16 = 1, 1 < 4: matrix
        (16, 2, "3d", 2, (2, 2, 4)),  # 16 // 4 = 4, 16 >= 2: tensor
        (8, 4, "2d", 4, (4, 2)),
        (48, 4, "3d", 4, (4, 4, 3)),
        (52, 4, "3d", 4, (4, 4, 4)),  # a partial last layer
        (64, 8, "2d", 8, (8, 8)),
        (16, 1, "1d", 1, (16,)),  # every PE alone: vector, nonblock_send
        (16, 3, "1d", 1, (16,)),  # 3 does not divide 16: n_local falls back to 1
    ],
)
def test_topology_is_chosen_as_conveyors_does(
    num_pes: int, k: int | None, kind: str, n_local: int, grid: tuple[int, ...]
) -> None:
    topology = conveyors_topology(num_pes, k)
    assert (topology.kind, topology.pes_per_node, topology.grid) == (kind, n_local, grid)


def test_hops_and_tags() -> None:
    hops = [(h.send_type, h.tag_bytes) for h in conveyors_topology(16, 2).hops]
    assert hops == [("local_send", 4), ("nonblock_send", 1), ("local_send", 4)]
    assert [h.tag_bytes for h in conveyors_topology(32 * 32 * 32, 32).hops] == [4, 2, 4]
    assert [h.tag_bytes for h in conveyors_topology(16, 4).hops] == [4, 1]
    assert [h.tag_bytes for h in conveyors_topology(64 * 257, 64).hops] == [4, 4]  # 257 rows
    assert conveyors_topology(16).hops[0].send_type == "local_send"
    assert conveyors_topology(16, 1).hops[0].send_type == "nonblock_send"
    # packets: the item rounded up to the tag, plus the tag
    t = conveyors_topology(16, 2)
    assert t.packet_bytes(0, np.array([8, 16, 6])).tolist() == [12, 20, 12]
    assert t.packet_bytes(1, np.array([8, 16, 6])).tolist() == [9, 17, 7]
    assert conveyors_topology(16).packet_bytes(0, np.array([8])).tolist() == [8]


def test_topology_rejects_what_conveyors_rejects() -> None:
    with pytest.raises(ValueError, match="refuses"):
        conveyors_topology(257 * 257 * 17, 257)  # tensor_new: n_local > 256
    with pytest.raises(ValueError):
        conveyors_topology(0)
    with pytest.raises(ValueError):
        conveyors_topology(16, 0)
    with pytest.raises(ValueError):
        Topology("2d", 16, 3)
    with pytest.raises(ValueError):
        Topology("1d", 16, 4)


# --- routes --------------------------------------------------------------------


def _hops(topology: Topology, s: int, d: int) -> list[tuple[str, int, int]]:
    route = topology.route(np.array([s]), np.array([d]))
    return [(h.send_type, int(a[0]), int(b[0])) for h, (a, b) in zip(topology.hops, route)]


def test_routes_by_hand() -> None:
    # 2D, 2 nodes of 4: along the row to the destination's column, then down it
    mesh = conveyors_topology(8, 4)
    assert _hops(mesh, 1, 6) == [("local_send", 1, 2), ("nonblock_send", 2, 6)]
    assert _hops(mesh, 6, 0) == [("local_send", 6, 4), ("nonblock_send", 4, 0)]
    # 3D, 8 nodes of 2: s = (x, y, z) = (0, 0, 0), d = 15 = (1, 1, 3)
    cube = conveyors_topology(16, 2)
    assert _hops(cube, 0, 15) == [
        ("local_send", 0, 1),  # to (y', y, z) = (1, 0, 0): PE 1
        ("nonblock_send", 1, 14),  # to (y, y', z') = (0, 1, 3): PE 14
        ("local_send", 14, 15),
    ]
    assert _hops(cube, 5, 10) == [
        ("local_send", 5, 5),
        ("nonblock_send", 5, 10),
        ("local_send", 10, 10),
    ]


@pytest.mark.parametrize(("num_pes", "k"), [(16, 16), (16, 1), (16, 4), (16, 2), (52, 4), (96, 4)])
def test_every_hop_is_a_porter_link_and_routes_arrive(num_pes: int, k: int) -> None:
    topology = conveyors_topology(num_pes, k)
    src, dst = (a.ravel() for a in np.meshgrid(np.arange(num_pes), np.arange(num_pes)))
    route = topology.route(src, dst)
    assert len(route) == len(topology.hops)
    np.testing.assert_array_equal(route[0][0], src)
    np.testing.assert_array_equal(route[-1][1], dst)
    for hop, (a, b) in zip(topology.hops, route):
        assert porter_links(topology, hop.send_type, a, b).all()
    for (_, b), (a, _) in itertools.pairwise(route):
        np.testing.assert_array_equal(a, b)


def test_route_pairs_counts_items_packets_and_buffers() -> None:
    pairs = _pairs_of([(0, 3, 10), (1, 3, 1000), (0, 0, 2)])
    routes = route_pairs(pairs, conveyors_topology(4, 2))  # 2D, 2 nodes of 2
    assert list(routes.columns) == list(ROUTE_COLUMNS)
    hop0 = routes[routes["hop"] == 0].set_index(["src_pe", "dst_pe"])
    assert hop0.loc[(0, 1), "items"] == 10 and hop0.loc[(1, 1), "items"] == 1000
    assert hop0.loc[(0, 1), "packet_bytes"] == 12
    assert hop0.loc[(0, 1), "wire_bytes"] == 16 + 10 * 12  # 136, already a multiple of 8
    hop1 = routes[routes["hop"] == 1].set_index(["src_pe", "dst_pe"])
    # 1010 items of 9 B on 1 -> 3: a 10,000 B buffer holds (10048 - 16) // 9 = 1114
    assert hop1.loc[(1, 3), "items"] == 1010 and hop1.loc[(1, 3), "buffers_min"] == 1
    assert hop1.loc[(1, 3), "wire_bytes"] == 16 + 1010 * 9 + 6  # 9106 rounded up to 9112
    small = route_pairs(pairs, conveyors_topology(4, 2), buffer_bytes=1000)
    row = small[(small["hop"] == 1) & (small["src_pe"] == 1) & (small["dst_pe"] == 3)]
    # stride (16 + 1000) -> 1024: 112 items a buffer, 1010 items -> 9 full + 1 of 2
    assert row["buffers_min"].item() == 10
    assert row["wire_bytes"].item() == 9 * (16 + 112 * 9) + (16 + 2 * 9 + 6)


def test_route_pairs_keeps_sizes_apart_and_checks_pes() -> None:
    pairs = pd.DataFrame(
        {
            "src_pe": [0, 0],
            "dst_pe": [1, 1],
            "msg_bytes": [8, 16],
            "messages": [3, 2],
            "payload_bytes": [24, 32],
        }
    )
    routes = route_pairs(pairs, conveyors_topology(2))
    assert routes["packet_bytes"].tolist() == [8, 16]
    assert routes["buffers_min"].tolist() == [1, 1]  # one conveyor per message size
    links = predict_links(routes)
    assert links[["items", "payload_bytes", "packet_bytes"]].values.tolist() == [[5, 56, 0]]
    with pytest.raises(ValueError, match="beyond"):
        route_pairs(pairs, conveyors_topology(1))
    with pytest.raises(ValueError, match="does not fit"):
        route_pairs(pairs, conveyors_topology(2), buffer_bytes=8)


def test_pair_table_checks_its_input() -> None:
    with pytest.raises(ValueError, match="missing"):
        pair_table(pd.DataFrame({"src_pe": [0]}))
    mixed = pd.DataFrame({"src_pe": [0], "dst_pe": [1], "messages": [2], "payload_bytes": [25]})
    with pytest.raises(ValueError, match="msg_bytes"):
        pair_table(mixed)
    zero = _pairs_of([(0, 1, 0), (1, 0, 2)])
    assert pair_table(zero)["messages"].tolist() == [2]


# --- reductions of the traces ----------------------------------------------------


def test_reductions_do_not_depend_on_chunks() -> None:
    whole = _pairs(IG / "logical")
    chunked = logical_pairs(iter_logical(IG / "logical", report=ReadReport(), block_bytes=50_000))
    pd.testing.assert_frame_equal(whole, chunked)
    assert whole["messages"].sum() == 160_000
    physical = _physical(IG / "physical")
    small = physical_buffers(iter_physical(IG / "physical", report=ReadReport(), block_bytes=2000))
    pd.testing.assert_frame_equal(physical, small)
    assert physical["calls"].sum() == 367 + 328 + 441  # nonblock, progress, local lines


# --- the real runs ----------------------------------------------------------------


@pytest.mark.parametrize("run", list(RUNS))
def test_real_runs_are_explained_exactly(run: str) -> None:
    logical, physical, k, kind = RUNS[run]
    result = compare_run(_pairs(logical), _physical(physical), pes_per_node=k)
    assert result.verdict == "one run", result.reasons
    assert result.topology == result.layout and result.topology.kind == kind
    assert result.detected == (result.topology,)
    links = result.links
    assert list(links.columns) == list(CHECK_COLUMNS)
    assert (links["status"] == "explained").all()
    data = links[links["send_type"] != "nonblock_progress"]
    # items and payload: exact on every link (items decoded from every buffer size)
    assert (data["items"] > 0).all() and (data["buffers"] > 0).all()
    np.testing.assert_array_equal(data["items_seen"], data["items"])
    # wire bytes: items x packet + 16 per buffer + 0..7 bytes of rounding per buffer
    assert (data["padding_bytes"] >= 0).all()
    assert (data["padding_bytes"] <= 7 * data["buffers"]).all()
    assert (data["buffers"] >= data["buffers_min"]).all()
    headers = 16 * data["buffers_min"]
    assert (data["wire_bytes"] >= data["packed_bytes"] + headers).all()
    extra = 16 * (data["buffers"] - data["buffers_min"]) + 7 * data["buffers"]
    assert ((data["wire_bytes"] - data["predicted_wire_bytes"]).abs() <= extra).all()
    # progress calls only on the remote porter's links
    progress = links[links["send_type"] == "nonblock_progress"]
    assert (progress["reason"] == "progress").all()
    assert (kind == "1d") == progress.empty


def test_real_run_numbers() -> None:
    """The figures docs/aggregation.md quotes per shipped run."""
    got = {}
    for run, (logical, physical, k, _) in RUNS.items():
        s = compare_run(_pairs(logical), _physical(physical), pes_per_node=k).summary()
        got[run] = (
            s["links"],
            s["items_routed"],
            s["buffers"],
            s["empty_buffers"],
            s["wire_bytes"],
            s["padding_bytes"],
        )
    assert got == {
        "histo 1 node of 16": (256, 160_000, 256, 0, 1_284_096, 0),
        "histo 4 nodes of 4": (192, 320_000, 448, 0, 3_368_192, 1_024),
        "histo 8 nodes of 2": (160, 480_000, 825, 5, 5_294_952, 1_752),
        "ig 2 nodes of 4": (64, 320_000, 780, 28, 5_934_784, 2_304),
    }


def test_layout_that_disagrees_with_the_trace_is_said_not_blamed() -> None:
    # the 8-node run compared as if it were 4 nodes of 4
    result = compare_run(
        _pairs(HISTO_LOGICAL), _physical(HISTO / "physical_8nodes"), pes_per_node=4
    )
    assert result.layout.kind == "2d" and result.topology.kind == "3d"
    assert result.verdict == "one run"
    assert any("layout implies 2d" in note for note in result.notes)
    # and the other way round: a 2D trace compared as 8 nodes of 2
    other = compare_run(
        _pairs(HISTO_LOGICAL), _physical(REAL / "histo_16pe_4nodes" / "physical"), pes_per_node=2
    )
    assert other.topology.kind == "2d" and other.verdict == "one run"


def test_detected_topologies_of_the_real_traces() -> None:
    for _, physical, k, _ in RUNS.values():
        n = 8 if IG in physical.parents else 16  # not "ig" in str(): a checkout's path may hold it
        buffers = _physical(physical)
        assert detect_topologies(buffers, n) == [conveyors_topology(n, k)]
        # a send type's rows a slice when sorted; found by mask otherwise, or as text
        shuffled = buffers.sample(frac=1.0, random_state=0).reset_index(drop=True)
        assert detect_topologies(shuffled, n) == [conveyors_topology(n, k)]
        as_text = shuffled.assign(send_type=shuffled["send_type"].astype(str))
        assert detect_topologies(as_text, n) == [conveyors_topology(n, k)]
        # a link no porter has (to a PE beyond n) in the last row of the first
        # send type, and in its first: its slice has both ends
        first = np.flatnonzero(buffers["send_type"].cat.codes.to_numpy() == 0)
        for row in (int(first[0]), int(first[-1])):
            stray = buffers.copy()
            stray.loc[row, "dst_pe"] = n
            assert detect_topologies(stray, n) == []


@pytest.mark.parametrize(
    ("logical", "physical", "k"),
    [
        (HISTO_LOGICAL, IG / "physical", 4),  # histo's messages, ig's buffers
        (IG / "logical", REAL / "histo_16pe_4nodes" / "physical", 4),
        (DATA / "bad" / "aggregation_two_runs", DATA / "bad" / "aggregation_two_runs", None),
    ],
)
def test_traces_of_two_runs_are_not_one_run(logical: Path, physical: Path, k: int | None) -> None:
    result = compare_run(_pairs(logical), _physical(physical), pes_per_node=k)
    assert result.verdict == "not one run"
    assert result.reasons and not result.unexplained().empty


def test_same_program_other_size_is_not_one_run() -> None:
    """Half of each PE's messages (as a run with -n 5000) against the full run's buffers."""
    frames = [
        f[f.groupby("src_pe").cumcount() < 5000]
        for f in iter_logical(HISTO_LOGICAL, report=ReadReport())
    ]
    result = compare_run(
        logical_pairs(frames), _physical(REAL / "histo_16pe_4nodes" / "physical"), pes_per_node=4
    )
    assert result.verdict == "not one run"
    assert set(result.unexplained()["reason"].astype(str)) <= {
        "items differ",
        "bytes beyond headers and rounding",
    }
    assert not result.notes  # the link sets agree: only the data differ


def test_another_build_is_the_model_not_the_run() -> None:
    """Buffers of 4-byte tags (convey_opt_STANDARD) where the model expects none."""
    pairs = _pairs(HISTO_LOGICAL)
    links = predict_links(route_pairs(pairs, conveyors_topology(16)))
    size = -(-(16 + links["items"] * 12) // 8) * 8
    physical = pd.DataFrame(
        {
            "send_type": links["send_type"],
            "src_pe": links["src_pe"],
            "dst_pe": links["dst_pe"],
            "buffer_bytes": size,
            "calls": 1,
        }
    )
    result = compare_run(pairs, physical, pes_per_node=16)
    assert result.verdict == "model does not fit"
    assert not result.reasons
    assert any("+4 byte(s)" in note for note in result.notes)


def test_flushes_are_explained_on_porter_links_only() -> None:
    pairs = _pairs_of([(0, 1, 5)])
    physical = _buffers_of(
        [("local_send", 0, 1, 56), ("local_send", 1, 0, 0), ("local_send", 1, 1, 0)]
    )
    result = compare_run(pairs, physical, num_pes=2)
    assert result.verdict == "one run"
    reasons = result.links.set_index(["src_pe", "dst_pe"])["reason"].astype(str)
    assert reasons.to_dict() == {(0, 1): "items carried", (1, 0): "flush", (1, 1): "flush"}
    # a 0-byte nonblock_send where one node has no remote porter: no topology has both
    odd = pd.concat([physical, _buffers_of([("nonblock_send", 0, 1, 0)])], ignore_index=True)
    result = compare_run(pairs, odd, num_pes=2)
    assert result.verdict == "model does not fit" and not result.reasons
    assert result.unexplained()["reason"].astype(str).tolist() == ["not a porter link"]


def test_logical_pe_missing_from_the_physical_trace_is_not_one_run() -> None:
    pairs = _pairs_of([(0, 1, 5), (3, 0, 1)])
    physical = _buffers_of([("local_send", 0, 1, 56)])
    result = compare_run(pairs, physical)
    assert result.verdict == "not one run"
    assert "stops at PE 1" in result.reasons[0]


def test_too_small_num_pes_is_an_error() -> None:
    with pytest.raises(ValueError, match="num_pes"):
        compare_run(_pairs_of([(0, 3, 1)]), _buffers_of([("local_send", 0, 1, 24)]), num_pes=2)


# --- prediction -------------------------------------------------------------------


def test_predict_pes_and_layouts_on_histo() -> None:
    pairs = _pairs(HISTO_LOGICAL)
    links = predict_links(route_pairs(pairs, conveyors_topology(16, 4)))
    pes = predict_pes(links, 16)
    assert pes.index.tolist() == list(range(16))
    assert pes["items"].sum() == 2 * 160_000 and pes["payload_bytes"].sum() == 2 * 1_280_000
    table = predict_layouts(pairs, [(16, 1), (4, 4), (2, 8)])
    assert list(table.columns) == list(LAYOUT_COLUMNS)
    assert table["topology"].tolist() == ["1d", "2d", "3d"]
    assert table["items"].tolist() == [160_000, 320_000, 480_000]
    assert table["inter_node_bytes"].iloc[0] == 0
    assert table["payload_bytes"].tolist() == [1_280_000] * 3
    # the prediction is a lower bound of what each real layout put on the wire
    for (_, row), (_, physical, k, _) in zip(table.iterrows(), list(RUNS.values())[:3]):
        seen = compare_run(pairs, _physical(physical), pes_per_node=k).summary()
        assert row["wire_bytes"] == seen["predicted_wire_bytes_min"] <= seen["wire_bytes"]
        assert row["buffers_min"] == seen["buffers_min"] <= seen["buffers"]
    with pytest.raises(ValueError):
        predict_layouts(pairs, [(0, 4)])
    with pytest.raises(ValueError, match="beyond"):
        predict_layouts(pairs, [(4, 2)])


def test_prediction_scales_to_65536_pes() -> None:
    rng = np.random.default_rng(1)
    n = 65_536
    src = np.repeat(np.arange(n), 2)
    pairs = pd.DataFrame({"src_pe": src, "dst_pe": rng.integers(0, n, src.size), "messages": 3})
    pairs["payload_bytes"] = pairs["messages"] * 8
    table = predict_layouts(pairs, [(16, 4096), (256, 256)])
    assert table["topology"].tolist() == ["3d", "2d"]
    assert (table["items"] == [3 * 3 * src.size, 2 * 3 * src.size]).all()


# --- the layouts figure --------------------------------------------------------------


def test_plot_layouts_draws_what_the_table_says() -> None:
    import matplotlib.pyplot as plt

    from actorprof.plot.layouts import plot_layouts

    table = predict_layouts(_pairs(HISTO_LOGICAL), [(16, 1), (4, 4), (2, 8)])
    fig, ax = plt.subplots()
    assert plot_layouts(table, ax=ax, alpha=0.5) is ax
    assert fig.axes == [ax]
    wire, inter = ax.containers
    assert [b.get_height() for b in wire] == table["wire_bytes"].tolist()
    assert [b.get_height() for b in inter] == table["inter_node_bytes"].tolist()
    assert wire.patches[0].get_alpha() == 0.5
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["1 x 16\n1d", "4 x 4\n2d", "8 x 2\n3d"]
    assert [t.get_text() for t in ax.texts] == [
        ">= 256 buffers",
        ">= 408 buffers",
        ">= 599 buffers",
    ]
    with pytest.raises(ValueError, match="columns"):
        plot_layouts(table.drop(columns="buffers_min"), ax=ax)


def test_plot_layouts_uses_the_current_axes_when_none_is_given() -> None:
    import matplotlib.pyplot as plt

    from actorprof.plot.layouts import plot_layouts

    table = predict_layouts(_pairs_of([(0, 3, 10)]), [(4, 1), (2, 2)])
    ax = plot_layouts(table, annotate=False)
    assert ax is plt.gca() and not ax.texts


@pytest.mark.parametrize("seed", range(30))
def test_logical_pairs_count_as_a_pandas_groupby(seed: int) -> None:
    """Folded keys counted with numpy, or pandas where the ranges are too
    wide: the pairs of every chunk as ``groupby(...).size()`` gives them."""
    from actorprof.analyze.conveyors.model import logical_pairs

    rng = np.random.default_rng(seed)
    chunks = []
    for _ in range(int(rng.integers(1, 4))):
        n = int(rng.integers(0, 300))
        top = [int(rng.choice([4, 65_536, 2**31 - 1])) for _ in range(2)]
        chunks.append(
            pd.DataFrame(
                {
                    "src_pe": rng.integers(0, top[0], n, endpoint=True).astype(np.int32),
                    "dst_pe": rng.integers(0, top[1], n, endpoint=True).astype(np.int32),
                    "msg_bytes": rng.choice([8, 16, 2**32], n).astype(np.int64),
                }
            )
        )
    keys = ["src_pe", "dst_pe", "msg_bytes"]
    got = logical_pairs(iter(chunks))
    frames = [c for c in chunks if len(c)]
    if not frames:
        assert got.empty
        return
    want = pd.concat(frames).groupby(keys).size().rename("messages").reset_index()
    want = want.astype(np.int64)
    want["payload_bytes"] = want["messages"] * want["msg_bytes"]
    pd.testing.assert_frame_equal(got, want[got.columns.tolist()])


@pytest.mark.parametrize("last", ["fits", "local_send", "nonblock_send"])
def test_a_link_past_the_first_ones_rules_a_topology_out(last: str) -> None:
    """Thousands of links of a 2D mesh of 64 PEs (8 per node), their last one
    off the mesh (or not): detect_topologies checks a candidate's first
    links first, and still every link."""
    n, k = 64, 8
    rng = np.random.default_rng(2)
    src, hop = rng.integers(0, n, 12_000), rng.integers(0, k, 12_000)
    rows = [("local_send", int(s), int(s // k * k + h), 4096) for s, h in zip(src, hop[:6000])]
    rows += [
        ("nonblock_send", int(s), int((s + k * h) % n), 4096)
        for s, h in zip(src[6000:], hop[6000:], strict=True)
    ]
    if last == "local_send":
        rows.append(("local_send", 0, k, 4096))  # to another node
    elif last == "nonblock_send":
        rows.append(("nonblock_send", 0, 1, 4096))  # along the row
    found = detect_topologies(_buffers_of(rows), n)
    assert (conveyors_topology(n, k) in found) == (last == "fits")


@pytest.mark.parametrize("top", [0, 5, 70_000, 2**40])
def test_coded_sizes_are_np_unique_with_inverse(top: int) -> None:
    from actorprof.analyze.matrix import unique_ints

    rng = np.random.default_rng(top % 97)
    for n in (0, 1, 50, 5000):
        values = rng.integers(0, top + 1, n, dtype=np.int64)
        distinct, code = unique_ints(values, inverse=True)
        want, inverse = np.unique(values, return_inverse=True)
        np.testing.assert_array_equal(distinct, want)
        np.testing.assert_array_equal(code, inverse.reshape(-1))
        assert distinct.dtype == want.dtype and code.dtype == np.int64
