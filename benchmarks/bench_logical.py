"""Time actorprof against other ways of reducing a logical trace, in one run.

Every way runs in its own fresh Python process on the same files (so peak
memory is measured per way: ``ru_maxrss`` of the process and of its worker
processes) and computes the same thing: messages and bytes per (source,
destination) pair. Printed: seconds, MB/s, ratios to naive pandas and to
polars, and peak RSS. Also timed: a 4,096-PE heatmap drawn and saved, and
``actorprof --help``.

Examples
--------
python benchmarks/make_trace.py /tmp/trace_1g --size 1GB --pes 64
python benchmarks/bench_logical.py /tmp/trace_1g
python benchmarks/bench_logical.py /tmp/trace_5g --skip naive-groupby,naive-crosstab
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

COLUMNS = ["src_node", "src_pe", "dst_node", "dst_pe", "msg_bytes", "time_s"]
WAYS = [
    "cat",
    "naive-groupby",
    "naive-crosstab",
    "polars",
    "pyarrow",
    "actorprof-cold-j1",
    "actorprof-cold-j2",
    "actorprof-warm-j1",
    "actorprof-warm-j2",
]


def trace_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("PE*_send.csv"), key=lambda p: int(p.name[2:].split("_")[0]))


# ---------------------------------------------------------------- the ways
# Each way imports what it needs, then returns the timed work (imports are
# not timed: they are the same on any trace size).
Work = Callable[[], int]


def way_cat(files: list[Path], _: dict[str, str]) -> Work:
    def work() -> int:
        with open(os.devnull, "wb") as null:
            subprocess.run(["cat", *map(str, files)], stdout=null, check=True)
        return 0

    return work


def way_naive(files: list[Path], opts: dict[str, str]) -> Work:
    import pandas as pd

    return lambda: _naive(pd, files, opts)


def _naive(pd: Any, files: list[Path], opts: dict[str, str]) -> int:
    df = pd.concat([pd.read_csv(f, header=None, names=COLUMNS) for f in files], ignore_index=True)
    if opts["kind"] == "crosstab":
        counts = pd.crosstab(df["src_pe"], df["dst_pe"])
        nbytes = pd.crosstab(df["src_pe"], df["dst_pe"], values=df["msg_bytes"], aggfunc="sum")
        return int(counts.to_numpy().sum()) + 0 * int(nbytes.fillna(0).to_numpy().sum())
    grouped = df.groupby(["src_pe", "dst_pe"])["msg_bytes"].agg(["size", "sum"])
    return int(grouped["size"].sum())


def way_polars(files: list[Path], _: dict[str, str]) -> Work:
    import polars as pl

    return lambda: _polars(pl, files)


def _polars(pl: Any, files: list[Path]) -> int:
    schema = {c: pl.Int64 for c in COLUMNS[:5]} | {"time_s": pl.Float64}
    frame = (
        pl.scan_csv([str(f) for f in files], has_header=False, schema=schema)
        .group_by(["src_pe", "dst_pe"])
        .agg(pl.len().alias("messages"), pl.col("msg_bytes").sum().alias("bytes"))
        .collect()
    )
    return int(frame["messages"].sum())


def way_pyarrow(files: list[Path], _: dict[str, str]) -> Work:
    import pyarrow as pa
    import pyarrow.compute
    import pyarrow.csv as pcsv

    return lambda: _pyarrow(pa, pcsv, files)


def _pyarrow(pa: Any, pcsv: Any, files: list[Path]) -> int:
    types = {c: pa.int64() for c in COLUMNS[:5]} | {"time_s": pa.float64()}
    total = 0
    for f in files:
        table = pcsv.read_csv(
            f,
            read_options=pcsv.ReadOptions(column_names=COLUMNS),
            convert_options=pcsv.ConvertOptions(column_types=types),
        )
        grouped = table.group_by(["src_pe", "dst_pe"]).aggregate(
            [("msg_bytes", "count"), ("msg_bytes", "sum")]
        )
        total += int(pa.compute.sum(grouped["msg_bytes_count"]).as_py())
    return total


def way_actorprof(files: list[Path], opts: dict[str, str]) -> Work:
    import actorprof.engine.cache
    from actorprof import ReadReport
    from actorprof.engine import Engine, reduce_logical

    del actorprof.engine.cache  # imported now, not in the timed part
    engine = Engine(
        jobs=int(opts["jobs"]), cache=opts["cache"] == "1", cache_dir=opts.get("cache_dir")
    )

    def work() -> int:
        acc = reduce_logical(files[0].parent, report=ReadReport(), engine=engine)
        return int(acc.result().counts.to_numpy().sum())

    return work


def way_heatmap(_: list[Path], opts: dict[str, str]) -> Work:
    import numpy as np
    import pandas as pd

    from actorprof.plot import plot_heatmap
    from actorprof.write import new_figure

    n = 4096
    rng = np.random.default_rng(1)
    matrix = pd.DataFrame(rng.zipf(1.6, size=(n, n)).astype(np.int64))

    def work() -> int:
        fig = new_figure(11.0, 9.5)
        plot_heatmap(matrix, ax=fig.axes[0], log=True, value_label="messages", title="4096 PEs")
        fig.savefig(opts["out"], dpi=100)
        return n

    return work


RUNNERS = {
    "cat": (way_cat, {}),
    "naive-groupby": (way_naive, {"kind": "groupby"}),
    "naive-crosstab": (way_naive, {"kind": "crosstab"}),
    "polars": (way_polars, {}),
    "pyarrow": (way_pyarrow, {}),
    "actorprof-cold-j1": (way_actorprof, {"jobs": "1", "cache": "0"}),
    "actorprof-cold-j2": (way_actorprof, {"jobs": "2", "cache": "0"}),
    "actorprof-warm-j1": (way_actorprof, {"jobs": "1", "cache": "1"}),
    "actorprof-warm-j2": (way_actorprof, {"jobs": "2", "cache": "1"}),
    "heatmap": (way_heatmap, {}),
}


def child(way: str, folder: Path, extra: dict[str, str]) -> None:
    """Run one way in this (fresh) process and print JSON: seconds, peak RSS."""
    func, opts = RUNNERS[way]
    opts = {**opts, **extra}
    work = func(trace_files(folder), opts)
    start = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - start
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "rss_mb": own, "workers_rss_mb": kids, "check": result}))


def run_way(way: str, folder: Path, extra: dict[str, str]) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--child", way, str(folder), "--extra", json.dumps(extra)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{way} failed:\n{out.stderr[-2000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def help_seconds() -> float:
    exe = shutil.which("actorprof")
    cmd = [exe, "--help"] if exe else [sys.executable, "-m", "actorprof", "--help"]
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        best = min(best, time.perf_counter() - start)
    return best


def _spin() -> None:
    import numpy as np

    a = np.random.default_rng(0).random(200_000)
    for _ in range(1500):
        a = np.sqrt(a * 1.0001 + 0.1)


def parallel_capacity() -> float:
    """Throughput of 2 identical numpy processes at once over 1 (2.0 = two real cores)."""
    cmd = [sys.executable, "-c", f"import runpy; runpy.run_path({__file__!r}, run_name='spin')"]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    one = time.perf_counter() - start
    start = time.perf_counter()
    procs = [subprocess.Popen(cmd) for _ in range(2)]
    for p in procs:
        p.wait()
    two = time.perf_counter() - start
    return 2 * one / two


def machine() -> str:
    model = platform.processor() or "?"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    load = os.getloadavg()[0]
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, load {load:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--skip", default="", help="comma-separated ways to skip")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--extra", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.folder, json.loads(args.extra))
        return 0
    files = trace_files(args.folder)
    size = sum(f.stat().st_size for f in files)
    skip = {s for s in args.skip.split(",") if s}
    try:
        import polars  # noqa: F401
    except ImportError:
        skip.add("polars")
    print(f"trace: {args.folder}, {len(files)} files, {size / 1e9:.2f} GB")
    print(f"machine: {machine()}, {time.strftime('%Y-%m-%d')}")
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="apbench-") as tmp:
        cache = str(Path(tmp) / "cache")
        subprocess.run(["cat", *map(str, files)], stdout=subprocess.DEVNULL, check=True)  # warm
        for way in WAYS:
            if way in skip:
                continue
            extra = {"cache_dir": cache} if way.startswith("actorprof") else {}
            if way == "actorprof-warm-j1":  # fill the cache, untimed
                run_way("actorprof-cold-j1", args.folder, {**extra, "cache": "1"})
            results[way] = run_way(way, args.folder, extra)
            r = results[way]
            print(f"  {way:<20} {r['seconds']:8.2f} s", file=sys.stderr)
        heat = run_way("heatmap", args.folder, {"out": str(Path(tmp) / "heatmap.png")})
    checks = {r["check"] for w, r in results.items() if w != "cat"}
    print(f"all ways agree on the message count: {len(checks) == 1} ({checks})")
    naive = results.get("naive-groupby", {}).get("seconds")
    polars_s = results.get("polars", {}).get("seconds")
    header = ("way", "s", "MB/s", "x naive", "x polars", "RSS MB", "workers")
    print(f"{header[0]:<20}" + "".join(f" {h:>8}" for h in header[1:]))
    for way, r in results.items():
        mbs = size / 1e6 / r["seconds"]
        vs_naive = f"{naive / r['seconds']:.1f}" if naive else "-"
        vs_polars = f"{polars_s / r['seconds']:.2f}" if polars_s else "-"
        kids = f"{r['workers_rss_mb']:.0f}" if r["workers_rss_mb"] > 1 else "-"
        print(
            f"{way:<20} {r['seconds']:8.2f} {mbs:8.0f} {vs_naive:>8} {vs_polars:>8} "
            f"{r['rss_mb']:8.0f} {kids:>8}"
        )
    cold = results.get("actorprof-cold-j2", results.get("actorprof-cold-j1"))
    warm = results.get("actorprof-warm-j2", results.get("actorprof-warm-j1"))
    if cold and warm:
        print(f"cache speed-up (cold/warm, same jobs): {cold['seconds'] / warm['seconds']:.0f}x")
    j1, j2 = results.get("actorprof-cold-j1"), results.get("actorprof-cold-j2")
    if j1 and j2:
        print(f"--jobs 2 vs --jobs 1: {j1['seconds'] / j2['seconds']:.2f}x")
    print(f"heatmap 4096 x 4096 drawn and saved: {heat['seconds']:.2f} s")
    print(f"actorprof --help: {help_seconds():.2f} s (best of 5)")
    print(
        f"machine parallel capacity: 2 numpy processes at once do {parallel_capacity():.2f}x "
        "the work of one (2.00 = two full cores)"
    )
    return 0


if __name__ == "spin":
    _spin()
elif __name__ == "__main__":
    sys.exit(main())
