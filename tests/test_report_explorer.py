"""The report's interactive matrix: the pyramid (exact numbers) and the page in Chromium."""

from __future__ import annotations

import base64
import itertools
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from actorprof.analyze.matrix import pool_block, pool_pairs
from actorprof.analyze.pyramid import PyramidLevel, compact_uint, matrix_pyramid
from actorprof.cli import main
from actorprof.report._matrix import MatrixExplorer
from actorprof.report.figures import matrix_explorer
from actorprof.report.html import FigureCollector, render_report
from actorprof.report.run import run_report


def random_pairs(num_pes: int, count: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, num_pes, count)
    dst = rng.integers(0, num_pes, count)
    msgs = rng.integers(1, 50, count) ** 2
    frame = pd.DataFrame({"src_pe": src, "dst_pe": dst, "messages": msgs, "bytes": 8 * msgs})
    return frame.groupby(["src_pe", "dst_pe"], as_index=False).sum()


def level_frame(lv: PyramidLevel, num_pes: int) -> pd.DataFrame:
    """Cells of a level with their absolute first PEs (src, dst)."""
    tile = np.repeat(np.arange(lv.tiles), lv.tile_cells.astype(np.int64))
    rows = lv.tile_row.astype(np.int64)[tile] * lv.span + lv.row.astype(np.int64) * lv.block
    cols = lv.tile_col.astype(np.int64)[tile] * lv.span + lv.col.astype(np.int64) * lv.block
    frame = pd.DataFrame(
        {
            "src": rows,
            "dst": cols,
            "messages": lv.messages.astype(np.int64),
            "bytes": lv.bytes.astype(np.int64),
        }
    )
    assert (frame[["src", "dst"]] < num_pes).all().all()
    return frame


# ------------------------------------------------------------------ the pyramid


def test_level_0_is_the_figures_pooling() -> None:
    n, k = 4096, 128
    pairs = random_pairs(n, 20_000)
    p = matrix_pyramid(pairs, n, pes_per_node=k)
    block = pool_block(n, max_cells=256, pes_per_node=k)
    assert [lv.block for lv in p.levels] == [block, 1] and block == 16
    pooled = pool_pairs(pairs, n, block, "messages")
    top = p.levels[0]
    assert top.tiles == 1 and top.span == n
    dense_sum = np.zeros((256, 256), dtype=np.int64)
    dense_max = np.zeros((256, 256), dtype=np.int64)
    dense_sum[top.row, top.col] = top.messages
    dense_max[top.row, top.col] = top.max_messages
    np.testing.assert_array_equal(dense_sum, pooled.sum.to_numpy())
    np.testing.assert_array_equal(dense_max, pooled.max.to_numpy())
    # the largest pair of each block is a real pair with that many messages
    keyed = pairs.set_index(["src_pe", "dst_pe"])["messages"]
    src = top.row.astype(np.int64) * block + top.max_src
    dst = top.col.astype(np.int64) * block + top.max_dst
    np.testing.assert_array_equal(keyed.loc[list(zip(src, dst))].to_numpy(), top.max_messages)


def test_every_level_sums_to_the_pairs_when_everything_fits() -> None:
    n = 1000  # blocks of 8 (125 per side) with max_cells=128, then 4... down to 1
    pairs = random_pairs(n, 30_000, seed=1)
    p = matrix_pyramid(pairs, n, max_cells=16, pes_per_node=None, max_bytes=10**9)
    blocks = [lv.block for lv in p.levels]
    assert blocks[-1] == 1 and len(blocks) >= 3
    assert all(a % b == 0 for a, b in itertools.pairwise(blocks))  # cells lie in one tile
    for lv in p.levels:
        assert lv.complete
        cells = level_frame(lv, n)
        assert cells["messages"].sum() == pairs["messages"].sum()
        assert cells["bytes"].sum() == pairs["bytes"].sum()
        # each cell is the sum of the pairs in its block
        expect = (
            pairs.assign(
                src=pairs.src_pe // lv.block * lv.block, dst=pairs.dst_pe // lv.block * lv.block
            )
            .groupby(["src", "dst"])[["messages", "bytes"]]
            .sum()
        )
        got = cells.groupby(["src", "dst"])[["messages", "bytes"]].sum()
        pd.testing.assert_frame_equal(got.sort_index(), expect.sort_index())
    finest = level_frame(p.levels[-1], n).sort_values(["src", "dst"], ignore_index=True)
    np.testing.assert_array_equal(finest["messages"], pairs["messages"])


@pytest.mark.parametrize("shuffled", [False, True])
def test_a_cell_s_largest_pair_is_the_first_of_the_ties_in_any_order(shuffled: bool) -> None:
    """Each pooled cell names its largest pair; of equal ones the lowest source,
    then destination, whatever order the pairs come in."""
    n = 256
    pairs = random_pairs(n, 20_000, seed=3)
    pairs["messages"] = 1 + (pairs["messages"] > 900)  # mostly ties
    pairs["bytes"] = 8 * pairs["messages"]
    given = pairs.sample(frac=1.0, random_state=7, ignore_index=True) if shuffled else pairs
    p = matrix_pyramid(given, n, max_cells=16, pes_per_node=None, max_bytes=10**9)
    for lv in p.levels[:-1]:  # the pooled levels
        cells = level_frame(lv, n)
        got = pd.DataFrame(
            {
                "src": cells["src"].to_numpy() + lv.max_src.astype(np.int64),
                "dst": cells["dst"].to_numpy() + lv.max_dst.astype(np.int64),
                "max": lv.max_messages.astype(np.int64),
            },
            index=pd.MultiIndex.from_arrays([cells["src"], cells["dst"]]),
        ).sort_index()
        first = (
            pairs.assign(
                cell_src=pairs.src_pe // lv.block * lv.block,
                cell_dst=pairs.dst_pe // lv.block * lv.block,
            )
            .sort_values(["messages", "src_pe", "dst_pe"], ascending=[False, True, True])
            .groupby(["cell_src", "cell_dst"])
            .head(1)
            .set_index(["cell_src", "cell_dst"])
            .sort_index()
        )
        np.testing.assert_array_equal(got["src"], first["src_pe"])
        np.testing.assert_array_equal(got["dst"], first["dst_pe"])
        np.testing.assert_array_equal(got["max"], first["messages"])


def test_budget_keeps_the_busiest_blocks() -> None:
    n = 2048
    pairs = random_pairs(n, 40_000, seed=2)
    hot = pd.DataFrame({"src_pe": [1000], "dst_pe": [1001], "messages": [10**6], "bytes": [8]})
    pairs = pd.concat([pairs, hot]).groupby(["src_pe", "dst_pe"], as_index=False).sum()
    whole = matrix_pyramid(pairs, n, max_bytes=10**9)
    small = matrix_pyramid(pairs, n, max_bytes=4_000)
    assert whole.levels[1].complete and not small.levels[1].complete
    assert small.levels[1].nbytes <= 4_000 < whole.levels[1].nbytes
    assert small.levels[1].tiles_total == whole.levels[1].tiles_total == whole.levels[1].tiles
    # the busiest block (the hot pair's) is kept first
    lv = small.levels[1]
    first = (int(lv.tile_row[0]) * lv.span, int(lv.tile_col[0]) * lv.span)
    kept = {(int(r) * lv.span, int(c) * lv.span) for r, c in zip(lv.tile_row, lv.tile_col)}
    assert (1000 // 8 * 8, 1001 // 8 * 8) in kept and first[0] <= 1000
    # nothing at all below level 0
    none = matrix_pyramid(pairs, n, max_bytes=0)
    assert none.levels[1].tiles == 0 and none.levels[0].tiles == 1


def test_compact_types_and_empty() -> None:
    assert compact_uint(np.array([255])).dtype == np.uint8
    assert compact_uint(np.array([256])).dtype == np.uint16
    assert compact_uint(np.array([2**32 - 1])).dtype == np.uint32
    big = compact_uint(np.array([2**40 + 1]))
    assert big.dtype == np.float64 and int(big[0]) == 2**40 + 1
    with pytest.raises(ValueError):
        compact_uint(np.array([-1]))
    empty = pd.DataFrame({"src_pe": [], "dst_pe": [], "messages": [], "bytes": []})
    p = matrix_pyramid(empty, 10)
    assert [lv.tiles for lv in p.levels] == [0]
    with pytest.raises(ValueError, match="beyond"):
        matrix_pyramid(random_pairs(10, 5), 5)


def test_page_embeds_the_pyramid_exactly() -> None:
    pairs = random_pairs(600, 3_000, seed=3)
    p = matrix_pyramid(pairs, 600)
    html = MatrixExplorer(p, "run/logical", 1000).html("m")
    data = json.loads(re.search(r'class="apm-data">(.*?)</script>', html).group(1))  # type: ignore[union-attr]
    assert data["n"] == 600 and len(data["levels"]) == len(p.levels)
    types = {"u1": "<u1", "u2": "<u2", "u4": "<u4", "f8": "<f8"}
    for got, lv in zip(data["levels"], p.levels):
        assert (got["b"], got["s"], got["tiles"], got["total"]) == (
            lv.block,
            lv.span,
            lv.tiles,
            lv.tiles_total,
        )
        for name, array in lv.arrays().items():
            kind, text = got["a"][name]
            decoded = np.frombuffer(base64.b64decode(text), dtype=types[kind])
            np.testing.assert_array_equal(decoded, array)


# ------------------------------------------------------------------ in headless Chromium


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def dump_dom(url: str) -> str:
    browser = chromium()
    assert browser is not None
    profile = tempfile.mkdtemp(prefix="chromium-")
    try:
        done = subprocess.run(
            [
                browser,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--window-size=1280,2000",
                "--dump-dom",
                url,
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return done.stdout


def probes(dom: str) -> dict[str, dict[str, str]]:
    found = {}
    for attrs, text in re.findall(r'<output class="apm-probe"([^>]*)>([^<]*)</output>', dom):
        fields = dict(re.findall(r'data-([a-z]+)="([^"]*)"', attrs))
        fields["text"] = text.replace("&gt;", ">").replace("&amp;", "&")
        found[fields["pair"]] = fields
    return found


def numbers(text: str) -> list[int]:
    return [int(x.replace(",", "")) for x in re.findall(r"\d[\d,]*", text)]


def write_run(folder: Path, pairs: pd.DataFrame, pes_per_node: int) -> None:
    """One PE<i>_send.csv per PE holding ``pairs`` as 8-byte messages."""
    folder.mkdir(parents=True)
    n = int(pairs["src_pe"].max()) + 1
    by_src = dict(list(pairs.groupby("src_pe")))
    for pe in range(n):
        rows = by_src.get(pe)
        lines = []
        if rows is not None:
            for dst, count in zip(rows["dst_pe"], rows["messages"]):
                node = dst // pes_per_node
                line = f"{pe // pes_per_node}, {pe}, {node}, {dst}, 8, 1721412345.000000\n"
                lines.append(line * int(count))
        (folder / f"PE{pe}_send.csv").write_text("".join(lines))


@pytest.mark.skipif(chromium() is None, reason="no Chromium here (.ci/run installs it)")
def test_hover_in_chromium_equals_logical_pairs_csv(tmp_path: Path) -> None:
    n, k = 601, 4  # pooled in blocks of 3; the last block holds one PE
    rng = np.random.default_rng(5)
    pairs = pd.DataFrame(
        {
            "src_pe": np.r_[rng.integers(0, n, 3000), 24, 25, n - 1],
            "dst_pe": np.r_[rng.integers(0, n, 3000), 590, 591, n - 1],
            "messages": np.r_[rng.integers(1, 4, 3000), 300, 200, 250],
        }
    )
    pairs = pairs.groupby(["src_pe", "dst_pe"], as_index=False).sum()
    run = tmp_path / "run"
    write_run(run, pairs, k)
    # the CSV the page must agree with, written by actorprof logical
    result = CliRunner().invoke(main, ["logical", str(run), "-o", str(tmp_path / "l"), "-q"])
    assert result.exit_code == 0, result.output
    csv = pd.read_csv(tmp_path / "l" / "logical_pairs.csv")
    # the report's page (its matrix; figures are tested in test_report.py), with a
    # budget that leaves most blocks out
    report = run_report(run, num_pes=n, jobs=1, cache=False)
    out = FigureCollector()
    view = report.logical["(unnamed)"]
    out.matrices["(unnamed)"] = matrix_explorer(view, budget_bytes=600)
    summary = report.summary()
    page = tmp_path / "report.html"
    page.write_text(render_report(summary, out.figures, out.matrices))
    level1 = out.matrices["(unnamed)"].pyramid.levels[1]
    b = level1.span
    assert b == 3 and 0 < level1.tiles < level1.tiles_total  # some blocks zoom, most not

    keyed = csv.set_index(["src_pe", "dst_pe"])
    # a pair in a block the page holds no finer view of
    kept = set(zip(level1.tile_row.tolist(), level1.tile_col.tolist()))
    left_out = csv[[(s // b, d // b) not in kept for s, d in zip(csv.src_pe, csv.dst_pe)]]
    far_src, far_dst = (int(v) for v in left_out.iloc[len(left_out) // 2][["src_pe", "dst_pe"]])
    far_pair = f"{far_src},{far_dst}"
    asked = ["24,590", "25,591", "24,591", "600,600", far_pair]
    dom = dump_dom(page.as_uri() + "#probe=" + ";".join(asked))
    got = probes(dom)
    assert set(got) == set(asked)
    # a pair of the busiest block: single PEs, the CSV's numbers
    for pair in ("24,590", "25,591"):
        src, dst = map(int, pair.split(","))
        row = keyed.loc[(src, dst)]
        assert got[pair]["block"] == "1"
        assert got[pair]["text"] == (
            f"PE {src} → PE {dst}: {row['messages']:,} messages, {row['bytes']:,} bytes"
        )
    assert got["24,591"]["text"] == "PE 24 → PE 591: no message"
    # the last block holds one PE: zoomed in all the same
    assert got["600,600"]["text"] == (
        f"PE 600 → PE 600: {keyed.loc[(600, 600)]['messages']:,} messages, "
        f"{keyed.loc[(600, 600)]['bytes']:,} bytes"
    )
    # a block with no finer view: pooled, the CSV's sum and largest pair over the block
    far = got[far_pair]
    assert far["block"] == str(b)
    r, c = far_src // b * b, far_dst // b * b
    inside = csv[csv.src_pe.between(r, r + b - 1) & csv.dst_pe.between(c, c + b - 1)]
    text = far["text"]
    assert text.startswith(
        f"PEs {r}-{r + b - 1} → PEs {c}-{c + b - 1}: {inside.messages.sum():,} messages, "
        f"{inside.bytes.sum():,} bytes (sum over the block); largest pair "
    )
    top = inside.sort_values(["messages", "src_pe", "dst_pe"], ascending=[False, True, True])
    best = top.iloc[0]
    assert f"largest pair {best.src_pe} → {best.dst_pe}: {best.messages:,} messages" in text
    assert "no finer view in this page" in text
    # and a click on it says how to get its pairs
    assert (
        f"logical_pairs.csv (written by actorprof logical {run}) with src_pe in "
        f"{r}-{r + b - 1} and dst_pe in {c}-{c + b - 1}"
    ) in far["note"]
    assert got["24,590"]["note"] == ""
    assert float(far["ready"]) < 3000


@pytest.mark.parametrize(
    ("n", "cells", "most"),
    [(0, 1, 1), (1, 5, 5), (2_000, 40, 3), (50_000, 1 << 30, 1_000), (500, 1 << 61, 1 << 20)],
)
def test_the_cells_order_is_lexsorts(n: int, cells: int, most: int) -> None:
    """By cell, the most messages first, ties in the pairs' order (as the
    pyramid orders its cells): packed in one key, or (too wide: the last
    case; a negative key) by ``lexsort`` itself."""
    from actorprof.analyze.matrix import stable_order

    rng = np.random.default_rng(n)
    key = rng.integers(0, cells, n, dtype=np.int64)
    msgs = rng.integers(1, most + 1, n, dtype=np.int64)
    expected = np.lexsort((-msgs, key))
    assert np.array_equal(stable_order(key, msgs.max(initial=0) - msgs), expected)
    assert np.array_equal(stable_order(key - 1, msgs), np.lexsort((msgs, key - 1)))
