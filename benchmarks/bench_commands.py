"""Time every actorprof command as a whole process, beside cat and the library ways.

What a user waits for is a whole process: interpreter start, imports, reading,
figures, files. Each row here is one fresh process (``subprocess`` and
``os.wait4``: wall clock and the process's peak RSS, ``ru_maxrss``; worker
processes are not included), run on the same files in one run:

* ``cat`` of the files a command reads (the disk and page-cache floor;
  ``xargs cat`` of a file list, so 65,536 files fit);
* for the CSV kinds (logical, PAPI) and the physical trace, the naive
  pandas way (``read_csv`` of every file, ``concat``, ``groupby``) and
  polars (``scan_csv`` + ``group_by``) when polars is importable: the same
  per-pair (logical), per-(PE, mailbox) (PAPI) or per-(send type, link)
  (physical) sums that the command computes, imports included;
* every command: ``logical`` and ``physical`` (no cache, ``physical`` with
  ``-j1`` and ``-j2``; then cold and warm with an empty cache folder of
  its own), ``papi`` (``-j1`` and ``-j2`` without cache, then warm;
  ``--baseline DIR``: also another tree's, e.g. main's), ``overall``,
  ``timeline``, ``export``, ``report``;
* the fixed cost: ``actorprof logical`` on the shipped 8-PE example.

Printed: seconds (median of ``--repeat`` runs, the rows alternating), MB/s
of the input, the ratio to ``cat`` of the same files and to the group's first
actorprof command (``x cmd``: above 1 is slower than it), and peak RSS.

Examples
--------
python benchmarks/make_pe_traces.py /tmp/run64 --pes 64 --lines-per-pe 20000 --pes-per-node 16
python benchmarks/bench_commands.py /tmp/run64
python benchmarks/make_trace.py /tmp/trace_1g --size 1GB --pes 64
python benchmarks/bench_commands.py /tmp/run64 --logical /tmp/trace_1g --only logical,fixed
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "ig_8pe_2nodes" / "logical"

LOGICAL_COLUMNS = ["src_node", "src_pe", "dst_node", "dst_pe", "msg_bytes", "time_s"]
PAPI_COLUMNS = [
    "src_node", "src_pe", "dst_node", "dst_pe", "msg_bytes", "mailbox", "num_sends",
    "PAPI_TOT_INS", "PAPI_LST_INS", "time_s",
]  # fmt: skip

NAIVE = """
import sys, pandas as pd
files = open(sys.argv[1], "rb").read().decode().split("\\0")
names, keys = sys.argv[2].split(","), sys.argv[3].split(",")
df = pd.concat([pd.read_csv(f, header=None, names=names, skipinitialspace=True) for f in files])
print(len(df.groupby(keys)[names[4]].agg(["size", "sum"])))
"""
# the physical trace: trace lines among program output (fewer fields: skipped)
NAIVE_PHYSICAL = """
import sys, pandas as pd
cols = ["send_type", "buffer_bytes", "src_pe", "dst_pe"]
df = pd.read_csv(sys.argv[1], header=None, names=cols, skipinitialspace=True,
                 on_bad_lines="skip", usecols=range(4))
df = df[df["send_type"].isin(["local_send", "nonblock_send", "nonblock_progress"])]
print(len(df.groupby(["send_type", "src_pe", "dst_pe"])["buffer_bytes"].agg(["size", "sum"])))
"""
POLARS_PHYSICAL = """
import sys, polars as pl
cols = ["send_type", "buffer_bytes", "src_pe", "dst_pe"]
print(len(
    pl.scan_csv(sys.argv[1], has_header=False, schema={c: pl.String for c in cols},
                truncate_ragged_lines=True, missing_columns="insert", quote_char=None)
    .filter(pl.col("send_type").is_in(["local_send", "nonblock_send", "nonblock_progress"]))
    .with_columns([pl.col(c).str.strip_chars().cast(pl.Int64) for c in cols[1:]])
    .group_by("send_type", "src_pe", "dst_pe").agg(pl.len(), pl.col("buffer_bytes").sum())
    .collect()
))
"""
POLARS = """
import sys, polars as pl
files = open(sys.argv[1], "rb").read().decode().split("\\0")
names, keys = sys.argv[2].split(","), sys.argv[3].split(",")
schema = {c: pl.Float64 if c == "time_s" else pl.Int64 for c in names}
frame = (
    pl.scan_csv(files, has_header=False, schema=schema)
    .group_by(keys)
    .agg(pl.len().alias("rows"), pl.col(names[4]).sum().alias("bytes"))
    .collect()
)
print(len(frame))
"""


@dataclass
class Row:
    name: str
    command: list[str]
    input_bytes: int
    env: dict[str, str] = field(default_factory=dict)
    # run once, untimed, before the timed runs (e.g. fill the cache)
    before: list[str] | None = None
    # run from this folder (python -m imports actorprof from it first)
    cwd: Path = ROOT
    seconds: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    failed: str = ""


def measure(
    command: list[str], env: dict[str, str], cwd: Path = ROOT
) -> tuple[float, float, int, str]:
    """Wall seconds, peak RSS (MB) and exit code of one whole process."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, **env}, cwd=cwd
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read().decode(errors="replace")[-300:]
    return wall, usage.ru_maxrss / 1024, process.returncode, tail


def size_of(paths: list[Path]) -> int:
    return sum(p.stat().st_size for p in paths)


def listed(files: list[Path], folder: Path) -> str:
    """A file naming ``files`` (NUL-separated), for commands that read many:
    65,536 names are more than one command line holds."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"files-{len(list(folder.iterdir()))}"
    path.write_bytes("\0".join(map(str, files)).encode())
    return str(path)


def pe_files(folder: Path, pattern: str) -> list[Path]:
    return sorted(folder.glob(pattern), key=lambda p: int(p.name[2:].split("_")[0]))


def actorprof(*args: str) -> list[str]:
    return [sys.executable, "-m", "actorprof", *args, "-q"]


def build_rows(
    run: Path, logical: Path, out: Path, cache: Path, only: set[str], baseline: Path | None = None
) -> list[Row]:
    """The rows to time, grouped by what they read (``baseline``: another
    actorprof tree, e.g. the main branch's, timed beside for the PAPI command)."""
    rows: list[Row] = []
    py = sys.executable
    have_polars = _importable("polars")
    lists = out.parent / "lists"

    def want(group: str) -> bool:
        return not only or group in only

    if want("fixed"):
        files = pe_files(EXAMPLE, "PE*_send.csv")
        rows.append(
            Row(
                "fixed: logical 8-PE example",
                actorprof("logical", str(EXAMPLE), "--num-pes", "8", "-o", str(out / "fixed")),
                size_of(files),
            )
        )
        rows.append(Row("actorprof --help", [py, "-m", "actorprof", "--help"], 0))

    sends = pe_files(logical, "PE*_send.csv")
    papi = pe_files(run / "papi", "PE*_PAPI.csv")
    overall = run / "overall" / "overall.txt"
    physical = run / "physical" / "physical.txt"
    groups: list[tuple[str, list[Path], list[Row]]] = []
    if want("logical") and sends:
        b = size_of(sends)
        names, keys = ",".join(LOGICAL_COLUMNS), "src_pe,dst_pe"
        extra = [
            Row("naive pandas", [py, "-c", NAIVE, listed(sends, lists), names, keys], b),
            *([Row("polars", [py, "-c", POLARS, listed(sends, lists), names, keys], b)]
              if have_polars else []),
            Row("actorprof logical --no-cache", actorprof(
                "logical", str(logical), "--no-cache", "-o", str(out / "logical")), b),
            Row("actorprof logical, cache cold", actorprof(
                "logical", str(logical), "-o", str(out / "logical")), b,
                env={"ACTORPROF_CACHE_DIR": str(cache)}, before=["clear-cache"]),
            Row("actorprof logical, cache warm", actorprof(
                "logical", str(logical), "-o", str(out / "logical")), b,
                env={"ACTORPROF_CACHE_DIR": str(cache)}, before=actorprof(
                    "logical", str(logical), "-o", str(out / "logical"))),
        ]  # fmt: skip
        groups.append(("logical", sends, extra))
    if want("papi") and papi:
        b = size_of(papi)
        names, keys = ",".join(PAPI_COLUMNS), "src_pe,mailbox"
        extra = [
            Row("naive pandas", [py, "-c", NAIVE, listed(papi, lists), names, keys], b),
            *([Row("polars", [py, "-c", POLARS, listed(papi, lists), names, keys], b)]
              if have_polars else []),
            Row("actorprof papi -j1 --no-cache", actorprof(
                "papi", str(run / "papi"), "-o", str(out / "p"), "-j1", "--no-cache"), b),
            Row("actorprof papi -j2 --no-cache", actorprof(
                "papi", str(run / "papi"), "-o", str(out / "p"), "-j2", "--no-cache"), b),
            Row("actorprof papi, cache warm", actorprof(
                "papi", str(run / "papi"), "-o", str(out / "p")), b,
                env={"ACTORPROF_CACHE_DIR": str(cache)}, before=actorprof(
                    "papi", str(run / "papi"), "-o", str(out / "p"))),
            *([Row("baseline: actorprof papi", actorprof(
                "papi", str(run / "papi"), "-o", str(out / "p")), b,
                env={"PYTHONPATH": str(baseline)}, cwd=baseline)] if baseline else []),
        ]  # fmt: skip
        groups.append(("papi", papi, extra))
    if want("overall") and overall.is_file():
        b = size_of([overall])
        groups.append(("overall", [overall], [
            Row("actorprof overall", actorprof("overall", str(overall), "-o", str(out / "o")), b)
        ]))  # fmt: skip
    if want("physical") and physical.is_file():
        b = size_of([physical])
        ph = ["physical", str(physical), "-o", str(out / "ph")]
        groups.append(("physical", [physical], [
            Row("naive pandas", [py, "-c", NAIVE_PHYSICAL, str(physical)], b),
            *([Row("polars", [py, "-c", POLARS_PHYSICAL, str(physical)], b)]
              if have_polars else []),
            Row("actorprof physical --no-cache -j1", actorprof(*ph, "--no-cache", "-j1"), b),
            Row("actorprof physical --no-cache -j2", actorprof(*ph, "--no-cache", "-j2"), b),
            Row("actorprof physical, cache cold", actorprof(*ph), b,
                env={"ACTORPROF_CACHE_DIR": str(cache)}, before=["clear-cache"]),
            Row("actorprof physical, cache warm", actorprof(*ph), b,
                env={"ACTORPROF_CACHE_DIR": str(cache)}, before=actorprof(*ph)),
        ]))  # fmt: skip
    if want("timeline") and sends:
        b = size_of(sends)
        groups.append(("timeline", sends, [
            Row("actorprof timeline", actorprof("timeline", str(logical), "-o", str(out / "t")), b),
            Row("actorprof export", actorprof("export", str(logical), "-o", str(out / "e")), b),
        ]))  # fmt: skip
    if want("report"):
        everything = [*pe_files(run / "logical", "PE*_send.csv"), *papi]
        everything += [p for p in (overall, physical) if p.is_file()]
        b = size_of(everything)
        groups.append(("report", everything, [
            Row("actorprof report --no-cache", actorprof(
                "report", str(run), "--no-cache", "-o", str(out / "r")), b)
        ]))  # fmt: skip
    for group, files, extra in groups:
        cat = ["xargs", "-0", "-a", listed(files, lists), "cat"]  # cat as often as needed
        rows.append(Row(f"[{group}] cat", cat, size_of(files)))
        rows.extend(Row(f"[{group}] {r.name}", r.command, r.input_bytes, r.env, r.before,
                        cwd=r.cwd) for r in extra)  # fmt: skip
    return rows


def _importable(module: str) -> bool:
    code = f"import {module}"
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="run folder: logical/ papi/ overall/ physical/")
    parser.add_argument("--logical", type=Path, help="logical trace folder (default RUN/logical)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row (median)")
    parser.add_argument(
        "--baseline", type=Path, help="another actorprof tree (PYTHONPATH) timed beside: papi"
    )  # its rows run from that tree: python -m imports the package of its folder first
    parser.add_argument(
        "--only", default="", help="comma-separated groups: fixed,logical,papi,overall,"
        "physical,timeline,report"
    )  # fmt: skip
    args = parser.parse_args()
    args.run = args.run.resolve()  # the commands run from the repository root
    logical = (args.logical or args.run / "logical").resolve()
    only = {g for g in args.only.split(",") if g}
    env = {"PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    with tempfile.TemporaryDirectory(prefix="bench-commands-") as tmp:
        out, cache = Path(tmp) / "out", Path(tmp) / "cache"
        baseline = args.baseline.resolve() if args.baseline else None
        rows = build_rows(args.run, logical, out, cache, only, baseline)
        print(f"run: {args.run}, logical: {logical}")
        print(
            f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}, load {os.getloadavg()[0]:.2f}, "
            f"{time.strftime('%Y-%m-%d %H:%M')}, median of {args.repeat}"
        )
        # rounds alternate the rows, so a busy minute on a shared machine
        # spreads over every row instead of landing on one
        for _ in range(args.repeat):
            for row in rows:
                if row.failed:
                    continue
                if row.before == ["clear-cache"]:
                    shutil.rmtree(cache, ignore_errors=True)
                elif row.before:
                    measure(row.before, {**env, **row.env})
                wall, rss, code, tail = measure(row.command, {**env, **row.env}, row.cwd)
                if code != 0:
                    row.failed = f"exit {code}: {tail.strip().splitlines()[-1] if tail else ''}"
                    continue
                row.seconds.append(wall)
                row.rss_mb.append(rss)
        print(f"load at the end {os.getloadavg()[0]:.2f}")
        report(rows)


def report(rows: list[Row]) -> None:
    """One line per row; ratios within a group: to its ``cat`` and to its first command."""
    print(f"{'what (whole process)':40s} {'MB':>7s} {'s':>7s} {'MB/s':>7s} {'x cat':>6s} "
          f"{'x cmd':>6s} {'RSS MB':>7s}")  # fmt: skip
    medians = {row.name: statistics.median(row.seconds) for row in rows if row.seconds}
    for row in rows:
        if row.failed:
            print(f"{row.name:40s} failed: {row.failed}")
            continue
        s = medians[row.name]
        mb = row.input_bytes / 1e6
        group = row.name[: row.name.index("]") + 1] if row.name.startswith("[") else ""
        cat = medians.get(f"{group} cat") if group else None
        command = next(
            (medians[r.name] for r in rows if r.name.startswith(f"{group} actorprof")
             and r.name in medians), None,
        ) if group else None  # fmt: skip
        rate = f"{mb / s:7.0f}" if mb and s else "      -"
        x_cat = f"{s / cat:6.1f}" if cat else "     -"
        x_cmd = f"{s / command:6.2f}" if command else "     -"
        print(f"{row.name:40s} {mb:7.1f} {s:7.2f} {rate} {x_cat} {x_cmd} {max(row.rss_mb):7.0f}")


if __name__ == "__main__":
    main()
