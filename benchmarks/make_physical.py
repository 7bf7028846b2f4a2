"""Write a synthetic physical trace (``physical.txt``), fast, for benchmarks.

Real format (``"%s, %d, %d, %d\\n"`` per Conveyors call, FORMATS.md section 4)
with program output mixed in, as a program's stdout has: a banner, lines
every so often, and a summary at the end. Send types and sizes are drawn like
a Conveyors run: ``local_send`` of a few buffer sizes, ``nonblock_send`` of
many sizes, ``nonblock_progress`` of 0 bytes.

Examples
--------
python benchmarks/make_physical.py /tmp/physical.txt --lines 10000000
python benchmarks/make_physical.py /tmp/p.txt --lines 1000000 --pes 4096 --output-every 500
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

_BATCH = 1 << 18
_TYPES = ("local_send", "nonblock_send", "nonblock_progress")


def batch_text(rng: np.random.Generator, n: int, pes: int, output_every: int, first: int) -> str:
    """``n`` trace lines, with one program output line every ``output_every`` lines."""
    kind = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    size = np.where(
        kind == 0,
        rng.choice(np.array([10048, 9280, 8192, 4096]), size=n),
        np.where(kind == 1, rng.integers(0, 16384, size=n), 0),
    )
    src = rng.integers(0, pes, size=n)
    dst = rng.integers(0, pes, size=n)
    lines = [
        f"{_TYPES[k]}, {b}, {s}, {d}\n"
        for k, b, s, d in zip(kind.tolist(), size.tolist(), src.tolist(), dst.tolist(), strict=True)
    ]
    if output_every:
        for i in range(-first % output_every, n, output_every):
            lines[i] += f"[PE {src[i]}] progress: phase {(first + i) // output_every} done\n"
    return "".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--lines", type=int, default=10_000_000, help="trace lines")
    parser.add_argument("--pes", type=int, default=64)
    parser.add_argument("--output-every", type=int, default=1000, help="0: no program output")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    with open(args.path, "w") as out:
        out.write(f"Running synthetic on {args.pes} PEs\nbuf_cnt (-b)= 1024\n")
        for first in range(0, args.lines, _BATCH):
            n = min(_BATCH, args.lines - first)
            out.write(batch_text(rng, n, args.pes, args.output_every, first))
        out.write("Validated\nrun time: 12.5 s\n")
    size = args.path.stat().st_size
    print(
        f"{args.path}: {args.lines:,} trace lines, {size / 1e6:.0f} MB "
        f"in {time.perf_counter() - start:.1f} s"
    )


if __name__ == "__main__":
    main()
