"""Write a synthetic run of many PEs, fast: logical, PAPI, overall and physical traces.

For PE-count scaling: the same lines spread over N PEs. Writes, in FOLDER,

* ``logical/PE<i>_send.csv`` (FORMATS.md section 1): ``--lines-per-pe``
  messages per PE to uniform random destinations, increasing send times;
* ``papi/PE<i>_PAPI.csv`` (section 2): one line per message the PE handled
  (the receiver's view of the same messages) plus the MAIN line;
* ``overall/overall.txt`` (section 3): the profile lines of every PE;
* ``physical/physical.txt`` (section 4): Conveyors calls on a 2D mesh of
  ``--pes-per-node`` PEs per node.

The files are small and many, so the cost is the file creations, not the
formatting (65,536 PEs of 30 lines: about a minute).

Examples
--------
python benchmarks/make_pe_traces.py /tmp/run64k --pes 65536 --lines-per-pe 30
python benchmarks/make_pe_traces.py /tmp/run4k --pes 4096 --lines-per-pe 2 --pes-per-node 64
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

_T0 = 1_721_412_345.0


def _lines(columns: list[np.ndarray], formats: list[str]) -> list[str]:
    """One text line per row (comma-separated, printf-like formats)."""
    template = ", ".join(formats) + "\n"
    return [template % row for row in zip(*(c.tolist() for c in columns), strict=True)]


def write_run(
    folder: Path,
    *,
    pes: int,
    lines_per_pe: int,
    pes_per_node: int,
    seed: int = 0,
    kinds: tuple[str, ...] = ("logical", "papi", "overall", "physical"),
) -> dict[str, int]:
    """Write the traces of a synthetic run; returns the lines written per kind."""
    rng = np.random.default_rng(seed)
    n = pes * lines_per_pe
    src = np.repeat(np.arange(pes, dtype=np.int64), lines_per_pe)
    dst = rng.integers(0, pes, size=n)
    size = rng.choice(np.array([8, 16, 16, 32]), size=n)
    times = np.sort(np.round(rng.random((pes, lines_per_pe)) * 2.0, 6), axis=1).ravel() + _T0
    node = lambda pe: pe // pes_per_node  # noqa: E731
    written: dict[str, int] = {}
    if "logical" in kinds:
        out = folder / "logical"
        out.mkdir(parents=True, exist_ok=True)
        text = _lines(
            [node(src), src, node(dst), dst, size, times],
            ["%d", "%d", "%d", "%d", "%d", "%.6f"],
        )
        starts = np.arange(0, n + 1, lines_per_pe)
        for pe in range(pes):
            (out / f"PE{pe}_send.csv").write_text("".join(text[starts[pe] : starts[pe + 1]]))
        written["logical"] = n
    if "papi" in kinds:
        out = folder / "papi"
        out.mkdir(parents=True, exist_ok=True)
        order = np.argsort(dst, kind="stable")  # the receiver writes the line
        h_src, h_dst = src[order], dst[order]
        ins = rng.integers(100, 400, size=n)
        text = _lines(
            [
                node(h_src),
                h_src,
                node(h_dst),
                h_dst,
                size[order],
                np.zeros(n, np.int64),
                np.zeros(n, np.int64),
                ins,
                ins // 3,
                times[order] + 0.001,
            ],
            ["%d"] * 9 + ["%.6f"],
        )
        bounds = np.searchsorted(h_dst, np.arange(pes + 1))
        main_ins = rng.integers(10**6, 2 * 10**6, size=pes)
        for pe in range(pes):
            main = (
                f"{node(pe)}, {pe}, {node(pe)}, {pe}, 0, -1, {lines_per_pe}, "
                f"{main_ins[pe]}, {main_ins[pe] // 3}, {_T0 + 2.5:.6f}\n"
            )
            body = "".join(text[bounds[pe] : bounds[pe + 1]])
            (out / f"PE{pe}_PAPI.csv").write_text(body + main)
        written["papi"] = n + pes
    if "overall" in kinds:
        out = folder / "overall"
        out.mkdir(parents=True, exist_ok=True)
        t_main = rng.integers(10**6, 4 * 10**6, size=pes)
        t_comm = rng.integers(10**7, 3 * 10**7, size=pes)
        t_proc = rng.integers(10**5, 10**6, size=pes)
        total = t_main + t_comm + t_proc
        received = np.bincount(dst, minlength=pes)
        rows = []
        for pe, (m, c, p, t, r) in enumerate(
            zip(*(a.tolist() for a in (t_main, t_comm, t_proc, total, received)), strict=True)
        ):
            tag = f"synthetic [PE{pe}]"
            rows.append(
                f"{tag} T_inside_finish (start - done): {m + c // 2} cycles\n"
                f"{tag} T_wait (done - finish): {t - m - c // 2} cycles\n"
                f"{tag} T_outside_finish (start - finish): {t} cycles\n"
                f"{tag} T_sends (count={lines_per_pe}): {c // 2} cycles\n"
                f"{tag} T_send_in_process (count=0): 0 cycles\n"
                f"{tag} T_process (count={r}): {p} cycles\n"
                f"{tag} TCOMM_PROFILING (T_MAIN, T_COMM, T_PROC, T_TOTAL), {m}, {c}, {p}, {t}\n"
                f"{tag} TCOMM_PROFILING (T_MAIN/T_TOTAL, T_COMM/T_TOTAL, T_PROC/T_TOTAL), "
                f"{m / t:.6f}, {c / t:.6f}, {p / t:.6f}\n"
            )
        (out / "overall.txt").write_text(f"Running synthetic on {pes} PEs\n" + "".join(rows))
        written["overall"] = 8 * pes
    if "physical" in kinds:
        out = folder / "physical"
        out.mkdir(parents=True, exist_ok=True)
        k = pes_per_node
        # a 2D mesh: local_send along the node (row), nonblock_send along the column
        hop = (src // k) * k + dst % k  # the PE of the source's node in the target's column
        local = src != hop
        names = np.array(["local_send", "nonblock_send"])
        kind = np.r_[np.zeros(int(local.sum()), np.int64), np.ones(n, np.int64)]
        p_src = np.r_[src[local], hop]
        p_dst = np.r_[hop[local], dst]
        p_size = rng.choice(np.array([4096, 8192, 10048]), size=len(kind))
        text = [
            f"{names[t]}, {b}, {s}, {d}\n"
            for t, b, s, d in zip(
                kind.tolist(), p_size.tolist(), p_src.tolist(), p_dst.tolist(), strict=True
            )
        ]
        (out / "physical.txt").write_text(f"Running synthetic on {pes} PEs\n" + "".join(text))
        written["physical"] = len(text)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--pes", type=int, default=64)
    parser.add_argument("--lines-per-pe", type=int, default=30, help="messages sent per PE")
    parser.add_argument("--pes-per-node", type=int, default=128)
    parser.add_argument(
        "--kinds", default="logical,papi,overall,physical", help="comma-separated trace kinds"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    written = write_run(
        args.folder,
        pes=args.pes,
        lines_per_pe=args.lines_per_pe,
        pes_per_node=args.pes_per_node,
        seed=args.seed,
        kinds=tuple(args.kinds.split(",")),
    )
    lines = ", ".join(f"{k} {v:,} lines" for k, v in written.items())
    print(f"{args.folder}: {args.pes:,} PEs: {lines} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
