"""Small hand-made runs for the report and compare tests (trace files of exact counts)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_logical(
    folder: Path,
    counts: np.ndarray,
    *,
    pes_per_node: int = 2,
    phase: str | None = None,
    start_s: float = 1_721_412_345.0,
    extra: dict[int, str] | None = None,
) -> None:
    """``PE<i>_send.csv`` with ``counts[i, j]`` 8-byte messages from PE i to PE j.

    Messages are 1 ms apart per sender; ``extra[i]`` is appended verbatim to
    PE i's file (broken lines).
    """
    folder.mkdir(parents=True, exist_ok=True)
    n = counts.shape[0]
    infix = "" if phase is None else f"_{phase}"
    for src in range(n):
        lines = []
        k = 0
        for dst in range(n):
            for _ in range(int(counts[src, dst])):
                lines.append(
                    f"{src // pes_per_node}, {src}, {dst // pes_per_node}, {dst}, 8, "
                    f"{start_s + 1e-3 * k:.6f}\n"
                )
                k += 1
        text = "".join(lines) + (extra or {}).get(src, "")
        (folder / f"PE{src}{infix}_send.csv").write_text(text)


def write_overall(folder: Path, parts: list[tuple[int, int, int]], *, label: str = "histo") -> None:
    """``overall.txt`` with per-PE (T_MAIN, T_COMM, T_PROC) cycles, consistent raw lines."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["Running synthetic on PEs\n"]
    for pe, (main, comm, proc) in enumerate(parts):
        sends = (comm + proc) // 2
        wait = comm + proc - sends
        inside = main + sends
        total = main + comm + proc
        p = f"{label} [PE{pe}]"
        lines += [
            f"{p} T_inside_finish (start - done): {inside} cycles\n",
            f"{p} T_wait (done - finish): {wait} cycles\n",
            f"{p} T_outside_finish (start - finish): {total} cycles\n",
            f"{p} T_sends (count=10): {sends} cycles\n",
            f"{p} T_send_in_process (count=0): 0 cycles\n",
            f"{p} T_process (count=10): {proc} cycles\n",
            f"{p} TCOMM_PROFILING (T_MAIN, T_COMM, T_PROC, T_TOTAL), {main}, {comm}, {proc}, "
            f"{total}\n",
            f"{p} TCOMM_PROFILING (T_MAIN/T_TOTAL, T_COMM/T_TOTAL, T_PROC/T_TOTAL), "
            f"{main / total:.6f}, {comm / total:.6f}, {proc / total:.6f}\n",
        ]
    (folder / "overall.txt").write_text("".join(lines))
