"""4,096 PEs: every kind is reduced without a PE x PE structure, and its per-PE
totals equal a plain pandas groupby of the same lines.

A dense 4,096 x 4,096 int64 matrix is 134 MB; the reductions below must
stay far under it (tracemalloc measures the Python and numpy allocations).
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from actorprof import ReadReport, logical_view, overall_view, papi_view, physical_view
from actorprof.analyze.physical import physical_pairs
from actorprof.cli import main
from actorprof.errors import ActorProfError
from actorprof.kinds.timeline import timeline_view

N = 4096
K = 64  # PEs per node
FILES = 64  # logical and PAPI files (PEs 0..63); the others are destinations/senders
DENSE_BYTES = N * N * 8
T0 = 1_721_412_345.0


def _peak(build: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = build()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A run of 4,096 PEs: 64 logical and PAPI files reaching all PEs, an
    overall profile and a physical trace of every PE."""
    root = tmp_path_factory.mktemp("run4096")
    rng = np.random.default_rng(7)
    per_file = 64
    src = np.repeat(np.arange(FILES), per_file)
    dst = rng.integers(0, N, size=src.size)
    dst[-1] = N - 1
    size = rng.choice([8, 16], size=src.size)
    times = T0 + np.arange(src.size) * 1e-4
    logical = pd.DataFrame(
        {"src_node": src // K, "src_pe": src, "dst_node": dst // K, "dst_pe": dst}
    )
    logical["msg_bytes"], logical["time_s"] = size, times
    (root / "logical").mkdir()
    for pe, part in logical.groupby("src_pe"):
        lines = [
            f"{a}, {b}, {c}, {d}, {e}, {t:.6f}\n"
            for a, b, c, d, e, t in part.itertuples(index=False)
        ]
        (root / "logical" / f"PE{pe}_send.csv").write_text("".join(lines))
    # PAPI: PE p (< 64) handled messages from senders anywhere in 0..N-1
    (root / "papi").mkdir()
    senders = rng.integers(0, N, size=src.size)
    senders[0] = N - 1
    papi = pd.DataFrame({"pe": src, "sender": senders, "ins": rng.integers(1, 500, src.size)})
    for pe, part in papi.groupby("pe"):
        lines = [
            f"{s // K}, {s}, {pe // K}, {pe}, 16, 0, 0, {i}, {i // 3}, {T0:.6f}\n"
            for _, s, i in part.itertuples(index=False)
        ]
        lines.append(f"{pe // K}, {pe}, {pe // K}, {pe}, 0, -1, 7, 1000, 300, {T0 + 1:.6f}\n")
        (root / "papi" / f"PE{pe}_PAPI.csv").write_text("".join(lines))
    # overall: every PE
    (root / "overall").mkdir()
    main_c = rng.integers(100, 1000, N)
    comm, proc = main_c * 3, main_c // 2
    total = main_c + comm + proc
    rows = [
        f"x [PE{p}] TCOMM_PROFILING (T_MAIN, T_COMM, T_PROC, T_TOTAL), {m}, {c}, {q}, {t}\n"
        for p, (m, c, q, t) in enumerate(zip(main_c, comm, proc, total, strict=True))
    ]
    (root / "overall" / "overall.txt").write_text("".join(rows))
    # physical: two calls per PE, on a 2D mesh of K PEs per node
    (root / "physical").mkdir()
    p_src = np.arange(2 * N) % N
    p_dst = np.where(np.arange(2 * N) < N, (p_src // K) * K + rng.integers(0, K, 2 * N), 0)
    p_dst[N:] = (rng.integers(0, N // K, N) * K) + p_src[N:] % K
    p_type = np.where(np.arange(2 * N) < N, "local_send", "nonblock_send")
    p_bytes = rng.choice([4096, 8192], size=2 * N)
    physical = pd.DataFrame({"send_type": p_type, "b": p_bytes, "src": p_src, "dst": p_dst})
    (root / "physical" / "physical.txt").write_text(
        "".join(f"{t}, {b}, {s}, {d}\n" for t, b, s, d in physical.itertuples(index=False))
    )
    return {"root": root, "logical": logical, "papi": papi, "physical": physical, "main": main_c}


def _sum_by(frame: pd.DataFrame, key: str, value: str | None = None) -> np.ndarray:
    grouped = frame.groupby(key).size() if value is None else frame.groupby(key)[value].sum()
    return grouped.reindex(range(N), fill_value=0).to_numpy()


def test_physical_4096_pes_pairs_only(run: dict[str, Any]) -> None:
    view, peak = _peak(lambda: physical_view(run["root"] / "physical", pes_per_node=K))
    assert view.num_pes == N and peak < DENSE_BYTES / 8, peak
    frame = run["physical"]
    np.testing.assert_array_equal(view.pes["buffers_sent"], _sum_by(frame, "src"))
    np.testing.assert_array_equal(view.pes["buffers_received"], _sum_by(frame, "dst"))
    np.testing.assert_array_equal(view.pes["bytes_sent"], _sum_by(frame, "src", "b"))
    assert view.fit is not None and view.fit.fits
    links = physical_pairs(view.matrices)
    expected = frame.groupby(["send_type", "src", "dst"]).size()
    assert len(links) == len(expected) and links["buffers"].sum() == 2 * N
    with pytest.raises(ActorProfError, match="too many for a dense"):
        view.matrix("local_send")
    panels = view.heatmap_panels("local_send")
    assert [caption for _, caption in panels] == [
        "blocks of 8 PEs: sum",  # 512 blocks a side, each within a node
        "blocks of 8 PEs: largest link",
    ]
    assert panels[0][0].shape == (512, 512) and int(panels[0][0].to_numpy().sum()) == N
    window = view.heatmap_panels("local_send", pes=(0, 63))[0][0]
    assert int(window.to_numpy().sum()) == int(((frame.src < 64) & (frame.dst < 64))[:N].sum())


def test_logical_and_timeline_4096_pes(run: dict[str, Any]) -> None:
    view, peak = _peak(lambda: logical_view(run["root"] / "logical", num_pes=N))
    assert view.num_pes == N and view.counts is None and peak < DENSE_BYTES / 8, peak
    frame = run["logical"]
    np.testing.assert_array_equal(view.pes["sent"], _sum_by(frame, "src_pe"))
    np.testing.assert_array_equal(view.pes["received"], _sum_by(frame, "dst_pe"))
    np.testing.assert_array_equal(view.pes["bytes_received"], _sum_by(frame, "dst_pe", "msg_bytes"))
    timeline, peak = _peak(lambda: timeline_view(run["root"] / "logical", num_pes=N))
    assert peak < DENSE_BYTES / 2, peak  # PEs x time bins, at most MAX_CELLS
    np.testing.assert_array_equal(
        timeline.timeline.counts.sum(axis=0).to_numpy()[:FILES], _sum_by(frame, "src_pe")[:FILES]
    )


def test_papi_and_overall_4096_pes(run: dict[str, Any]) -> None:
    view, peak = _peak(lambda: papi_view(run["root"] / "papi", num_pes=N))
    assert len(view.pes) == N and peak < DENSE_BYTES / 4, peak
    np.testing.assert_array_equal(view.pes["messages"], _sum_by(run["papi"], "pe"))
    report = ReadReport(kind="overall")  # every PE misses the raw lines: warnings
    overall, peak = _peak(lambda: overall_view(run["root"] / "overall", report=report))
    # overall.txt streams in 16 MB blocks: one block is most of this peak
    assert overall.num_pes == N and peak < DENSE_BYTES / 4, peak
    times = overall.times.sort_values("pe")
    np.testing.assert_array_equal(times["pe"], np.arange(N))
    np.testing.assert_array_equal(times["t_main_cycles"], run["main"])


def test_physical_cli_4096_pes_writes_links_not_dense(run: dict[str, Any], tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "physical",
            str(run["root"] / "physical"),
            "--pes-per-node",
            str(K),
            "--send-type",
            "local_send",
            "-o",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    names = [Path(p).name for p in result.stdout.splitlines()]
    assert "physical_counts.csv" not in names and "physical_pairs.csv" in names
    links = pd.read_csv(tmp_path / "physical_pairs.csv")
    assert links["buffers"].sum() == 2 * N
    summary = json.loads((tmp_path / "physical_summary.json").read_text())
    assert summary["totals"]["all"]["buffers"] == 2 * N and summary["mesh_fit"]["fits"]
