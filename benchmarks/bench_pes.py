"""The PE axis: the same number of lines at 64 ... 65,536 PEs, whole processes.

A user grows along two axes, bytes and PEs. This benchmark holds the bytes
(the lines) fixed and varies the PE count, one file per PE as the runtime
writes them, and times what the user waits for: whole processes of
``actorprof logical`` and ``actorprof report`` (wall time and peak RSS from
``/usr/bin/time -v``), beside ``cat`` of the same files (the floor: opening
and reading every file). Every process is cold (``--no-cache``).

Examples
--------
python benchmarks/bench_pes.py                      # 64, 1024, 8192, 65536 PEs x 2M lines
python benchmarks/bench_pes.py --pes 64,65536 --repeat 3 --lines 13107200
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_trace import make_trace  # noqa: E402


def timed(argv: list[str], *, shell: bool = False) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one process (and its children)."""
    command = ["/usr/bin/time", "-v", *(["sh", "-c", argv[0]] if shell else argv)]
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{argv}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return wall, (int(rss.group(1)) / 1024 if rss else float("nan"))


def _ways(trace: Path, commands: list[str], jobs: int, out: Path) -> dict[str, list[str]]:
    """``cat`` of the trace's files and each command on it, by name."""
    return {
        "cat": [f"find {trace}/ -name '*.csv' -print0 | xargs -0 cat > /dev/null"],
        **{
            name: [
                sys.executable,
                "-m",
                "actorprof",
                name,
                str(trace),
                "--no-cache",
                "-j",
                str(jobs),
                "-q",
                "-o",
                str(out / name),
            ]
            for name in commands
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pes", default="64,1024,8192,65536")
    parser.add_argument("--lines", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=1, help="runs per way (median)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="folder to keep traces in")
    parser.add_argument("--skip-report", action="store_true")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="actorprof-pes-"))
    counts = [int(p) for p in args.pes.split(",")]
    traces = {pes: root / f"pes{pes}_lines{args.lines}" for pes in counts}
    for pes, trace in traces.items():
        if not trace.exists():
            t = time.perf_counter()
            make_trace(trace, lines=args.lines, pes=pes, pes_per_node=min(128, pes))
            print(f"generated {trace} in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    out = Path(tempfile.mkdtemp(prefix="actorprof-out-"))
    commands = ["logical"] if args.skip_report else ["logical", "report"]
    ways = {pes: _ways(trace, commands, args.jobs, out / str(pes)) for pes, trace in traces.items()}
    runs = {pes: {name: [] for name in ways[pes]} for pes in counts}
    # round after round over every PE count and way: the rows' medians come
    # from the same minutes, so their ratios hold on a machine whose speed
    # drifts (runs of the same command vary by tens of percent by the minute)
    for k in range(args.repeat):
        for pes in counts:
            for name, argv in ways[pes].items():
                runs[pes][name].append(timed(argv, shell=name == "cat"))
        print(f"round {k + 1} of {args.repeat} done", file=sys.stderr)
    rows = []
    for pes in counts:
        row: dict[str, object] = {
            "pes": pes,
            "bytes": sum(f.stat().st_size for f in traces[pes].iterdir()),
        }
        for name, got in runs[pes].items():
            row[name] = (statistics.median(w for w, _ in got), max(r for _, r in got))
        outputs = sum(f.stat().st_size for f in (out / str(pes) / "logical").iterdir())
        row["logical_output_mb"] = outputs / 1e6
        rows.append(row)
        print(row, file=sys.stderr)
    shutil.rmtree(out)
    base = rows[0]
    print(
        f"\n{args.lines:,} lines, -j {args.jobs}, medians of {args.repeat} rounds over "
        f"every PE count; ratios to the {base['pes']}-PE run\n"
    )
    names = [n for n in ("cat", "logical", "report") if n in base]
    header = "| PEs | MB | " + " | ".join(f"{n} s | {n} peak MB | {n} x" for n in names)
    print(header + " | logical outputs MB |")
    print("|" + "---|" * (3 * len(names) + 3))
    for row in rows:
        cells = [f"{row['pes']:,}", f"{row['bytes'] / 1e6:.0f}"]
        for n in names:
            wall, rss = row[n]
            cells += [f"{wall:.2f}", f"{rss:.0f}", f"{wall / base[n][0]:.2f}"]
        cells.append(f"{row['logical_output_mb']:.1f}")
        print("| " + " | ".join(cells) + " |")
    if args.keep is None:
        shutil.rmtree(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
