"""Communication matrices against hand counts and independent pandas counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actorprof import (
    CommAccumulator,
    comm_matrices,
    comm_matrix,
    filter_self_sends,
    iter_logical,
    locality,
    node_matrix,
    pe_totals,
    read_logical,
    top_pairs,
)

# tests/data/logical_small, counted by hand from the three files
COUNTS = np.array([[1, 2, 1], [1, 0, 3], [1, 0, 1]])
BYTES = np.array([[8, 16, 16], [8, 0, 24], [32, 0, 32]])


def test_hand_counted_matrices(data: Path) -> None:
    mats = comm_matrices(iter_logical(data / "logical_small"))
    np.testing.assert_array_equal(mats.counts.to_numpy(), COUNTS)
    np.testing.assert_array_equal(mats.bytes.to_numpy(), BYTES)
    assert mats.counts.index.name == "src_pe" and mats.counts.columns.name == "dst_pe"
    assert mats.pe_node.tolist() == [0, 0, 1]
    assert mats.messages == 10
    assert mats.time_min_s == pytest.approx(1.0)
    assert mats.time_max_s == pytest.approx(1.000013)
    assert mats.node_conflicts == {}


def test_pe_totals(data: Path) -> None:
    table = pe_totals(comm_matrices(read_logical(data / "logical_small")))
    expected = pd.DataFrame(
        {
            "node": [0, 0, 1],
            "sent": [4, 4, 2],
            "received": [3, 2, 5],
            "bytes_sent": [40, 32, 64],
            "bytes_received": [48, 16, 72],
            "self_sends": [1, 0, 1],
        },
        index=pd.RangeIndex(3, name="pe"),
    )
    pd.testing.assert_frame_equal(table, expected, check_dtype=False)
    excl = pe_totals(comm_matrices(read_logical(data / "logical_small")), self_sends="exclude")
    assert excl["sent"].tolist() == [3, 4, 1]
    assert excl["self_sends"].tolist() == [1, 0, 1]


def test_node_matrix_by_hand_and_by_pandas(data: Path) -> None:
    df = read_logical(data / "logical_small")
    mats = comm_matrices(df)
    nodes = node_matrix(mats.counts, mats.pe_node)
    np.testing.assert_array_equal(nodes.to_numpy(), [[4, 4], [1, 1]])
    independent = pd.crosstab(df["src_node"], df["dst_node"])
    np.testing.assert_array_equal(nodes.to_numpy(), independent.to_numpy())
    nbytes = node_matrix(mats.bytes, mats.pe_node)
    np.testing.assert_array_equal(nbytes.to_numpy(), [[32, 40], [32, 32]])


def test_real_trace_ground_truth(examples: Path) -> None:
    folder = examples / "ig_8pe_2nodes" / "logical"
    df = read_logical(folder)
    mats = comm_matrices(iter_logical(folder, block_bytes=100_000))
    counts = mats.counts.to_numpy()
    assert counts.sum() == 160_000
    lines = [(folder / f"PE{i}_send.csv").read_bytes().count(b"\n") for i in range(8)]
    assert counts.sum(axis=1).tolist() == lines
    assert counts.sum(axis=1).sum() == counts.sum(axis=0).sum()
    independent = pd.crosstab(df["src_pe"], df["dst_pe"]).to_numpy()
    np.testing.assert_array_equal(counts, independent)
    assert mats.pe_node.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    nodes = node_matrix(mats.counts, mats.pe_node).to_numpy()
    summed = counts.reshape(2, 4, 2, 4).sum(axis=(1, 3))
    np.testing.assert_array_equal(nodes, summed)
    np.testing.assert_array_equal(nodes, pd.crosstab(df["src_node"], df["dst_node"]).to_numpy())
    assert (mats.bytes.to_numpy() == counts * 16).all()


def test_histo_real_trace(examples: Path) -> None:
    mats = comm_matrices(iter_logical(examples / "histo_4pe" / "logical"))
    assert mats.counts.to_numpy().sum(axis=1).tolist() == [10_000] * 4
    assert mats.bytes.to_numpy().sum() == 40_000 * 8
    assert mats.pe_node.tolist() == [0, 0, 0, 0]


def test_sparse_and_dense_accumulation_agree(examples: Path) -> None:
    folder = examples / "ig_8pe_2nodes" / "logical"
    dense = comm_matrices(iter_logical(folder))
    sparse = comm_matrices(iter_logical(folder, block_bytes=30_000), num_pes=64)
    assert sparse.num_pes == 64
    np.testing.assert_array_equal(sparse.counts.to_numpy()[:8, :8], dense.counts.to_numpy())
    assert sparse.counts.to_numpy()[8:].sum() == 0


def test_accumulators_merge_like_one_pass(data: Path) -> None:
    frames = list(iter_logical(data / "logical_small", block_bytes=1))
    a, b = CommAccumulator(), CommAccumulator(5)
    for i, frame in enumerate(frames):
        (a if i % 2 else b).add(frame)
    b.merge(a)
    merged = b.result()
    one = comm_matrices(frames, num_pes=5)
    pd.testing.assert_frame_equal(merged.counts, one.counts)
    pd.testing.assert_frame_equal(merged.bytes, one.bytes)
    assert merged.messages == one.messages == 10
    assert merged.pe_node.tolist() == [0, 0, 1, -1, -1]


def test_mixed_sizes_bytes_exact() -> None:
    df = pd.DataFrame(
        {
            "src_node": [0, 0, 0],
            "src_pe": [0, 0, 1],
            "dst_node": [0, 0, 0],
            "dst_pe": [1, 1, 0],
            "msg_bytes": [2**40, 3, 5],
        }
    )
    mats = comm_matrices(df)
    assert mats.bytes.loc[0, 1] == 2**40 + 3
    assert mats.time_min_s is None


def test_node_conflicts_are_reported() -> None:
    df = pd.DataFrame(
        {
            "src_node": [0, 1],
            "src_pe": [0, 0],
            "dst_node": [0, 0],
            "dst_pe": [1, 1],
            "msg_bytes": [8, 8],
        }
    )
    assert comm_matrices(df).node_conflicts == {0: [0, 1]}


def test_filter_self_sends_never_mutates() -> None:
    m = pd.DataFrame(COUNTS)
    copy = m.copy()
    assert np.trace(filter_self_sends(m, "exclude").to_numpy()) == 0
    only = filter_self_sends(m, "only").to_numpy()
    assert only.sum() == 2 and np.trace(only) == 2
    pd.testing.assert_frame_equal(m, copy)
    with pytest.raises(ValueError, match="self_sends"):
        filter_self_sends(m, "some")  # type: ignore[arg-type]


def test_comm_matrix_options(data: Path) -> None:
    df = read_logical(data / "logical_small")
    before = df.copy()
    m = comm_matrix(df, metric="bytes", self_sends="exclude")
    np.testing.assert_array_equal(m.to_numpy(), BYTES * (1 - np.eye(3, dtype=int)))
    pd.testing.assert_frame_equal(df, before)
    with pytest.raises(ValueError, match="metric"):
        comm_matrix(df, metric="size")  # type: ignore[arg-type]


def test_top_pairs_and_locality(data: Path) -> None:
    mats = comm_matrices(read_logical(data / "logical_small"))
    pairs = top_pairs(mats.counts, 3)
    assert pairs[["src_pe", "dst_pe", "value"]].values.tolist() == [[1, 2, 3], [0, 1, 2], [0, 0, 1]]
    assert pairs["share"].tolist() == pytest.approx([0.3, 0.2, 0.1])
    loc = locality(mats.counts, mats.pe_node)
    assert loc == {
        "intra_node": 5,
        "inter_node": 5,
        "intra_node_share": 0.5,
        "inter_node_share": 0.5,
    }


def test_pairs_frame_and_accumulator_hold_one_copy() -> None:
    # at 65,536 PEs the pairs are millions of rows: int64 columns are used as
    # they are, and an accumulator of one part compacts it without a copy
    from actorprof.analyze.matrix import CommAccumulator, CommPartial, pairs_frame

    src, dst = np.array([0, 1, 2], dtype=np.int64), np.array([1, 2, 0], dtype=np.int64)
    counts, nbytes = np.array([3, 1, 2], dtype=np.int64), np.array([24, 8, 16], dtype=np.int64)
    frame = pairs_frame(src, dst, counts, nbytes)
    assert list(frame.dtypes) == [np.dtype(np.int64)] * 4
    for column, array in zip(frame.columns, (src, dst, counts, nbytes), strict=True):
        assert np.shares_memory(frame[column].to_numpy(), array)
    pes = np.array([0, 1, 2], dtype=np.int64)
    acc = CommAccumulator()
    acc.add_partial(CommPartial(src, dst, counts, nbytes, pes, pes // 2, messages=6))
    pairs = acc.result().pairs
    assert np.shares_memory(pairs["src_pe"].to_numpy(), src)
    assert pairs["messages"].tolist() == [3, 1, 2] and acc.max_pe == 2
    # a second part is summed as before
    acc.add_partial(CommPartial(src[:1], dst[:1], counts[:1], nbytes[:1], pes[:1], pes[:1]))
    assert acc.result().pairs["messages"].tolist() == [6, 1, 2]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(1, 3)),
            max_size=12,
        ),
        max_size=8,
    ),
    st.booleans(),
    st.data(),
)
def test_accumulator_runs_in_any_order_like_one_sum(
    parts: list[list[tuple[int, int, int]]], sizes: bool, data: st.DataObject
) -> None:
    # partials of disjoint sources (the engine's units of whole files) are
    # kept as runs and joined in order, those of shared pairs summed: any
    # order of adds, and compactions between them, give one pass's result
    from actorprof.analyze.matrix import CommAccumulator, CommPartial

    acc = CommAccumulator(sizes=sizes)
    rows = []
    for cells in parts:
        if data.draw(st.booleans(), label="disjoint"):  # sources of this part only
            base = 10 * (1 + len(rows))
            cells = [(base + s, d, size) for s, d, size in cells]
        columns = np.array([(s, d, 1, size) for s, d, size in cells], dtype=np.int64)
        columns = columns.reshape(-1, 4)
        part = CommPartial(*columns.T, messages=len(cells))
        if sizes:
            part = part.compact(sizes=True)
        elif data.draw(st.booleans(), label="compacted"):
            part = part.compact()
        acc.add_partial(part)
        rows += cells
        if data.draw(st.booleans(), label="compact now"):
            acc.max_pe  # noqa: B018 (compacts what is pending)
    got = acc.result().pairs
    want = (
        pd.DataFrame(rows, columns=["src_pe", "dst_pe", "bytes"], dtype=np.int64)
        .assign(messages=1)
        .groupby(["src_pe", "dst_pe"], as_index=False)[["messages", "bytes"]]
        .sum()
    )
    assert got["src_pe"].tolist() == want["src_pe"].tolist()
    assert got["dst_pe"].tolist() == want["dst_pe"].tolist()
    assert got["messages"].tolist() == want["messages"].tolist()
    assert got["bytes"].tolist() == want["bytes"].tolist()
    assert acc.messages == len(rows)
