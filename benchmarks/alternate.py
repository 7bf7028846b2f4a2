"""Whole processes of two actorprof trees, alternating: wall, peak RSS and CPU.

What a change did to what a user waits for, on a shared machine: the two
trees (e.g. a worktree of the commit before and this checkout) run the
same commands in turn, round after round, so a busy minute lands on both.
Each command is ``python -m actorprof <args> -q -o OUT``, run from its tree
(``PYTHONPATH`` is the tree, ``MPLBACKEND=Agg``).

CPU counts every process of the command: this script is the subreaper of
what the command leaves behind (Linux ``PR_SET_CHILD_SUBREAPER``), so the
map workers and the figure server and its children are waited for here
and their time is added; ``/usr/bin/time`` counts only the main process's
own. Peak RSS is the main process's (``ru_maxrss``).

Examples
--------
git worktree add --detach /tmp/base HEAD~3
python benchmarks/alternate.py /tmp/base . \\
    '{"pes64": ["logical", "/tmp/pesbench/pes64_lines2000000", "--no-cache", "-j", "2"]}' 5
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def run(tree: Path, args: list[str], out: Path) -> tuple[float, float, float, str]:
    """Wall seconds, peak RSS (MB), CPU seconds of every process, and the error's tail."""
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(tree), MPLBACKEND="Agg")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "actorprof", *args, "-q", "-o", str(out)],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    cpu = usage.ru_utime + usage.ru_stime
    while True:  # what the command left behind (the workers' fork server, its workers)
        try:
            _, _, left = os.wait4(-1, 0)
        except ChildProcessError:
            break
        cpu += left.ru_utime + left.ru_stime
    assert process.stderr is not None
    error = process.stderr.read().decode(errors="replace")[-300:] if status else ""
    return wall, usage.ru_maxrss / 1024, cpu, error


def main() -> None:
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    trees = {"before": Path(sys.argv[1]).resolve(), "after": Path(sys.argv[2]).resolve()}
    cases: dict[str, list[str]] = json.loads(sys.argv[3])
    rounds = int(sys.argv[4])
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    results: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="alternate-") as tmp:
        for r in range(rounds):
            for name, args in cases.items():
                for label, tree in trees.items():
                    wall, rss, cpu, error = run(tree, args, Path(tmp) / label)
                    if error:
                        print(f"FAILED {label} {name}: {error}", file=sys.stderr)
                    results.setdefault((name, label), []).append((wall, rss, cpu))
                    print(f"{r} {name:24s} {label:6s} {wall:6.2f} s {rss:6.0f} MB cpu {cpu:5.2f}")
    print(f"--- medians of {rounds} (load at the end {os.getloadavg()[0]:.1f})")
    for name in cases:
        for label in trees:
            runs = results[(name, label)]
            wall = statistics.median(x[0] for x in runs)
            cpu = statistics.median(x[2] for x in runs)
            rss = max(x[1] for x in runs)
            print(f"{name:24s} {label:6s} {wall:6.2f} s {rss:6.0f} MB cpu {cpu:5.2f}")


if __name__ == "__main__":
    main()
