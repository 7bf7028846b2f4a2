"""Write a synthetic ActorProf logical trace, fast, for benchmarks.

Real format (``"%d, %ld, %d, %ld, %ld, %lf\\n"``, one ``PE<i>_send.csv`` per
PE), skewed destinations (Zipf over a random permutation of the PEs, so a
few PEs receive most messages, as in R-MAT graph kernels), a few message
sizes, and increasing send times. Lines are formatted with numpy, not
Python, so a gigabyte takes seconds.

Examples
--------
python benchmarks/make_trace.py /tmp/trace_1g --size 1GB --pes 64
python benchmarks/make_trace.py /tmp/trace_5g --size 5GB --pes 64 --pes-per-node 16
python benchmarks/make_trace.py /tmp/t --lines 1000000 --pes 4096 --zipf 1.3
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

#: Mean bytes per line of the generated text (measured; used to size by bytes).
_BYTES_PER_LINE = 35.5
_SIZES = np.array([8, 16, 16, 16, 24, 32, 64], dtype=np.int64)
_BATCH = 1 << 20


def parse_size(text: str) -> int:
    """``"1GB"`` -> 10**9 bytes, ``"512MB"``, ``"5G"``, ``"123"`` (bytes)."""
    units = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
    t = text.strip().lower().removesuffix("b").removesuffix("i")
    if t and t[-1] in units:
        return int(float(t[:-1]) * units[t[-1]])
    return int(float(t))


def _digits(values: np.ndarray, width: int) -> np.ndarray:
    """(n, width) ASCII digits of non-negative ints, right-aligned, 0-padded left."""
    out = np.zeros((len(values), width), dtype=np.uint8)
    v = values.astype(np.int64).copy()
    for col in range(width - 1, -1, -1):
        out[:, col] = 48 + v % 10
        v //= 10
    return out


def _text_table(values: np.ndarray, suffix: bytes, *, prefix: int = 0) -> np.ndarray:
    """Row i: ``str(values[i]) + suffix`` as bytes, right-padded with zeros.

    With ``prefix`` (PEs per node), rows read ``"<node>, <value>" + suffix``.
    """
    texts = [
        (f"{int(v) // prefix}, " if prefix else "").encode() + str(int(v)).encode() + suffix
        for v in values
    ]
    width = max(len(t) for t in texts)
    table = np.zeros((len(texts), width), dtype=np.uint8)
    for i, t in enumerate(texts):
        table[i, : len(t)] = np.frombuffer(t, dtype=np.uint8)
    return table


def destinations(rng: np.random.Generator, n: int, pes: int, zipf: float) -> np.ndarray:
    """Zipf-skewed PE ids over a fixed random permutation (seeded by the caller)."""
    ranks = rng.zipf(zipf, size=n) - 1
    ranks %= pes
    return ranks


def write_pe_file(
    path: Path,
    *,
    pe: int,
    lines: int,
    pes: int,
    pes_per_node: int,
    zipf: float,
    seed: int,
    t0_us: int,
    tables: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> int:
    """Write one PE file of ``lines`` lines; returns the bytes written.

    ``tables`` (from :func:`run_tables`) are the same for every PE of a run:
    built once, a 65,536-PE trace takes minutes instead of hours.
    """
    rng = np.random.default_rng([seed, pe])
    perm, dst_table, size_table = tables or run_tables(pes, pes_per_node, seed)
    prefix = np.frombuffer(f"{pe // pes_per_node}, {pe}, ".encode(), dtype=np.uint8)
    written = 0
    t_us = t0_us + int(rng.integers(0, 1000))
    with open(path, "wb") as out:
        done = 0
        while done < lines:
            n = min(_BATCH, lines - done)
            dst = perm[destinations(rng, n, pes, zipf)]
            size_idx = rng.integers(0, len(_SIZES), size=n)
            steps = rng.integers(1, 40, size=n).cumsum()
            micro = t_us + steps
            t_us = int(micro[-1])
            secs, frac = np.divmod(micro, 1_000_000)
            time_text = np.concatenate(
                [
                    _digits(secs, 10),
                    np.full((n, 1), ord("."), dtype=np.uint8),
                    _digits(frac, 6),
                    np.full((n, 1), ord("\n"), dtype=np.uint8),
                ],
                axis=1,
            )
            rows = np.concatenate(
                [
                    np.broadcast_to(prefix, (n, len(prefix))),
                    dst_table[dst],
                    size_table[size_idx],
                    time_text,
                ],
                axis=1,
            )
            data = rows[rows != 0].tobytes()
            out.write(data)
            written += len(data)
            done += n
    return written


def run_tables(pes: int, pes_per_node: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The destination permutation and the text tables shared by every PE file."""
    perm = np.random.default_rng(seed).permutation(pes)
    dst_table = _text_table(np.arange(pes), b", ", prefix=pes_per_node)
    return perm, dst_table, _text_table(_SIZES, b", ")


def make_trace(
    folder: Path,
    *,
    total_bytes: int | None = None,
    lines: int | None = None,
    pes: int = 64,
    pes_per_node: int = 16,
    zipf: float = 1.5,
    seed: int = 1,
) -> int:
    """Write ``PE<i>_send.csv`` for ``pes`` PEs; returns total bytes written."""
    if lines is None:
        if total_bytes is None:
            raise ValueError("give total_bytes or lines")
        lines = int(total_bytes / _BYTES_PER_LINE)
    folder.mkdir(parents=True, exist_ok=True)
    per_pe = np.full(pes, lines // pes, dtype=np.int64)
    per_pe[: lines % pes] += 1
    total = 0
    tables = run_tables(pes, pes_per_node, seed)
    for pe in range(pes):
        total += write_pe_file(
            folder / f"PE{pe}_send.csv",
            pe=pe,
            lines=int(per_pe[pe]),
            pes=pes,
            pes_per_node=pes_per_node,
            zipf=zipf,
            seed=seed,
            t0_us=1_721_412_345_000_000,
            tables=tables,
        )
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--size", help="total size, e.g. 1GB, 5GB, 200MB")
    size.add_argument("--lines", type=int, help="total number of lines")
    parser.add_argument("--pes", type=int, default=64)
    parser.add_argument("--pes-per-node", type=int, default=16)
    parser.add_argument("--zipf", type=float, default=1.5, help="Zipf exponent (> 1)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    total = make_trace(
        args.folder,
        total_bytes=None if args.size is None else parse_size(args.size),
        lines=args.lines,
        pes=args.pes,
        pes_per_node=args.pes_per_node,
        zipf=args.zipf,
        seed=args.seed,
    )
    elapsed = time.perf_counter() - start
    print(
        f"wrote {total / 1e9:.2f} GB in {args.pes} files to {args.folder} "
        f"in {elapsed:.1f} s ({total / 1e6 / elapsed:.0f} MB/s)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
