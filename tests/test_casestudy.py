"""The case-study generator (examples/triangle_counting/generate.py) and its traces.

Tiny runs (R-MAT scale 8, 8 PEs on 2 nodes) checked for the paper's observations
as read back by actorprof, for the exact line counts, the PAPI MAIN line, the
TCOMM identities, the triangle count and byte-identical reruns.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import actorprof as ap

GENERATE = Path(__file__).resolve().parent.parent / "examples" / "triangle_counting" / "generate.py"
NUM_PES, PER_NODE, SCALE, SEED = 8, 4, 8, 1


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tc_generate", GENERATE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up
    spec.loader.exec_module(module)
    return module


gen = _load()


def _config(distribution: str, **kw: Any) -> Any:
    base = dict(
        scale=SCALE, num_pes=NUM_PES, pes_per_node=PER_NODE, distribution=distribution, seed=SEED
    )
    return gen.Config(**{**base, **kw})


def _generate(distribution: str, factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    out = factory.mktemp(distribution)
    res = gen.generate(_config(distribution), out)
    return out, res, ap.comm_matrices(ap.iter_logical(out, num_pes=NUM_PES))


@pytest.fixture(scope="module")
def cyclic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    return _generate("cyclic", tmp_path_factory)


@pytest.fixture(scope="module")
def range_(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    return _generate("range", tmp_path_factory)


@pytest.fixture(params=["cyclic", "range_"])
def run(request: pytest.FixtureRequest) -> tuple[Path, Any, Any]:
    """(trace folder, generator result, actorprof's matrices) of each distribution."""
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


# ------------------------------------------------------------------ the paper's observations


def test_range_matrix_is_lower_triangular(range_: Any) -> None:
    """(L): with contiguous row blocks a PE only sends to PEs with lower or equal ids."""
    counts = range_[2].counts.to_numpy()
    assert not np.triu(counts, k=1).any()
    assert counts[0, 0] > 0
    assert np.tril(counts, k=-1).sum() > counts.trace()  # mostly to lower PEs


def test_range_receives_fall_with_pe_id(range_: Any) -> None:
    counts = range_[2].counts.to_numpy()
    received, sent = counts.sum(axis=0), counts.sum(axis=1)
    # exact consequences of (L): the PEs >= t receive only from PEs >= t ...
    for t in range(NUM_PES):
        assert received[t:].sum() <= sent[t:].sum()
    assert received[-1] == counts[-1, -1]  # ... so the last PE only from itself
    # the trend (not strictly monotone: R-MAT degrees follow the bits of the block id)
    assert received.argmax() == 0 and received.argmin() == NUM_PES - 1
    ranks = np.argsort(np.argsort(received))
    assert np.corrcoef(np.arange(NUM_PES), ranks)[0, 1] <= -0.9
    assert received[: NUM_PES // 2].sum() > 4 * received[NUM_PES // 2 :].sum()


def test_cyclic_overloads_pe0(cyclic: Any) -> None:
    """Row i on PE i % N: PE 0 gets the rows whose low bits are 0, R-MAT's densest."""
    counts = cyclic[2].counts.to_numpy()
    received, sent = counts.sum(axis=0), counts.sum(axis=1)
    assert sent.argmax() == 0 and received.argmax() == 0
    assert sent[0] > 2 * sent.mean() and received[0] > 2 * received.mean()
    assert ap.imbalance(sent).stragglers == [0]
    assert np.triu(counts, k=1).any()  # no (L) shape here


# ------------------------------------------------------------------ the files


def test_logical_trace_has_the_lines_the_generator_wrote(run: Any) -> None:
    out, res, matrices = run
    df = ap.read_logical(out, num_pes=NUM_PES)
    assert len(df) == res.messages == sum(res.sent) == sum(res.received)
    assert [res.files[f"PE{p}_send.csv"] for p in range(NUM_PES)] == res.sent
    assert matrices.counts.sum(axis=1).tolist() == res.sent
    assert matrices.counts.sum(axis=0).tolist() == res.received
    assert (df["msg_bytes"] == 16).all()
    assert (df["src_node"] == df["src_pe"] // PER_NODE).all()
    assert (df["dst_node"] == df["dst_pe"] // PER_NODE).all()
    line = re.compile(rb"\d+, \d+, \d+, \d+, 16, \d{10}\.\d{6}\n")
    for p in range(NUM_PES):
        text = (out / f"PE{p}_send.csv").read_bytes()
        lines = text.splitlines(keepends=True)
        assert all(line.fullmatch(x) for x in lines)
        times = [float(x.rsplit(b", ", 1)[1]) for x in lines]
        assert times == sorted(times)


def _papi_rows(path: Path) -> np.ndarray:
    return np.array(
        [[float(v) for v in x.split(", ")] for x in path.read_text().splitlines()], ndmin=2
    )


def test_papi_files_have_one_main_line(run: Any) -> None:
    out, res, matrices = run
    for p in range(NUM_PES):
        rows = _papi_rows(out / f"PE{p}_PAPI.csv")
        main = rows[rows[:, 5] == -1]
        proc = rows[rows[:, 5] != -1]
        assert len(main) == 1
        assert main[0, :5].tolist() == [p // PER_NODE, p, p // PER_NODE, p, 0]
        assert main[0, 6] == res.sent[p] and (main[0, 7:9] > 0).all()
        assert len(proc) == res.received[p] == res.files[f"PE{p}_PAPI.csv"] - 1
        assert (proc[:, 3] == p).all() and (proc[:, 4] == 16).all() and (proc[:, 5] == 0).all()
        assert (proc[:, 7] > proc[:, 8]).all() and (proc[:, 8] > 0).all()
        senders = np.bincount(proc[:, 1].astype(int), minlength=NUM_PES)
        assert senders.tolist() == matrices.counts[p].tolist()  # as the logical trace says
        assert (np.diff(rows[:, 9]) >= 0).all()  # written in handling order


_PROFILE = re.compile(r"^Triangle counting \[PE(\d+)\] (.*)$")


def test_overall_identities(run: Any) -> None:
    out, res, _ = run
    text = (out / "overall.txt").read_text()
    blocks: dict[int, list[str]] = {}
    for line in text.splitlines():
        m = _PROFILE.match(line)
        if m:
            blocks.setdefault(int(m[1]), []).append(m[2])
    assert sorted(blocks) == list(range(NUM_PES))
    assert text.startswith(f"Running triangle on {NUM_PES} threads\n")
    assert text.endswith(" seconds") and f"Found {res.triangles} triangles" in text
    for p, lines in blocks.items():
        assert len(lines) == 8
        num = [[int(v) for v in re.findall(r"(?<![\w.])\d+(?![\w.])", x)] for x in lines]
        inside, wait, outside = num[0][0], num[1][0], num[2][0]
        (n_sends, sends), (n_sip, sip), (n_proc, proc) = num[3], num[4], num[5]
        t_main, t_comm, t_proc, t_total = num[6]
        assert (n_sends, n_sip, n_proc) == (res.sent[p], 0, res.received[p])
        assert t_main == inside - sends and t_proc == proc - sip
        assert t_comm == sends + wait - t_proc and t_total == t_main + t_comm + t_proc
        assert min(t_main, t_comm, t_proc) >= 0
        assert abs(t_total - outside) <= 0.01 * outside  # no warning line is due
        ratios = lines[7].split("), ")[1]
        assert ratios == ", ".join(f"{v / t_total:.6f}" for v in (t_main, t_comm, t_proc))
    first = [int(m[1]) for x in text.splitlines() if (m := _PROFILE.match(x))]
    assert first != sorted(first)  # PEs print in any order, lines interleave


def test_stdout_node_map(run: Any) -> None:
    out = run[0]
    expected = ["Logical actor message trace enabled"]
    expected += [f"PE:{p}, Node {p // PER_NODE}" for p in range(NUM_PES)]
    assert (out / "stdout.txt").read_text() == "\n".join(expected) + "\n"


def test_triangle_count_is_exact(run: Any) -> None:
    """The handlers' hits (from the message contents) count the graph's triangles."""
    res = run[1]
    keys, _ = gen.rmat_lower(SCALE, 16, np.random.default_rng(SEED))
    n = 1 << SCALE
    adj = np.zeros((n, n), np.int64)
    adj[keys // n, keys % n] = 1
    adj += adj.T
    assert res.triangles == np.trace(adj @ adj @ adj) // 6 > 0
    assert res.nonzeros == len(keys)


# ------------------------------------------------------------------ reproducibility, CLI


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.name != "generate.json"}


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    cfg = _config("cyclic", scale=7)
    gen.generate(cfg, tmp_path / "a")
    gen.generate(_config("cyclic", scale=7, chunk_lines=97), tmp_path / "b")  # chunking
    gen.generate(_config("cyclic", scale=7, seed=SEED + 1), tmp_path / "c")
    a, b, c = (_files(tmp_path / x) for x in "abc")
    assert len(a) == 2 * NUM_PES + 2
    assert a == b
    assert a["PE0_send.csv"] != c["PE0_send.csv"]


def test_strict_variant_sends_fewer(tmp_path: Path) -> None:
    bale = gen.generate(_config("range", scale=6), tmp_path / "bale")
    strict = gen.generate(_config("range", scale=6, variant="strict"), tmp_path / "strict")
    assert bale.messages - strict.messages == bale.nonzeros  # one w == j probe per nonzero
    assert bale.triangles == strict.triangles
    # rows with one nonzero send nothing: chunks without a line are skipped
    tiny = gen.generate(_config("range", scale=6, variant="strict", chunk_lines=1), tmp_path / "1")
    assert tiny.files == strict.files
    assert _files(tmp_path / "1") == _files(tmp_path / "strict")


def test_cli(tmp_path: Path) -> None:
    out = tmp_path / "trace"
    cmd = [sys.executable, str(GENERATE), "--scale", "6", "--num-pes", "4", "-q", "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    listed = done.stdout.split()
    assert str(out / "PE0_send.csv") in listed and str(out / "overall.txt") in listed
    assert all(Path(x).exists() for x in listed) and done.stderr == ""
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert again.returncode == 1 and "--overwrite" in again.stderr
    bad = subprocess.run([*cmd, "--distribution", "2d"], capture_output=True, text=True)
    assert bad.returncode == 2
