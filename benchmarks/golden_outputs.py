"""Run every command on every shipped example and fingerprint what it writes.

Used to prove that a refactoring changed no output: run it before and after,
then compare the two fingerprint files.

    python benchmarks/golden_outputs.py snapshot before.json
    ... change the code ...
    python benchmarks/golden_outputs.py snapshot after.json
    python benchmarks/golden_outputs.py compare before.json after.json

Each command runs as a subprocess (``python -m actorprof ...``) from the
repository root with ``--no-cache`` where the command has it, so the inputs,
paths and options are the same in both runs. Every file written is hashed
(sha256 of its bytes); stdout and stderr are hashed too (stderr without the
progress line, which only shows on a terminal).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: (name, arguments); the output folder is appended as ``-o DIR``.
RUNS: list[tuple[str, list[str]]] = [
    ("logical_ig", ["logical", "examples/ig_8pe_2nodes/logical", "--num-pes", "8", "--no-cache"]),
    (
        "logical_ig_node_bytes_log",
        [
            "logical",
            "examples/ig_8pe_2nodes/logical",
            "--level",
            "node",
            "--metric",
            "bytes",
            "--log",
            "--no-cache",
        ],
    ),
    (
        "logical_histo_excl",
        [
            "logical",
            "examples/histo_4pe/logical",
            "--self-sends",
            "exclude",
            "--no-cache",
            "-j",
            "1",
        ],
    ),
    ("papi_histo", ["papi", "examples/histo_4pe/papi", "--num-pes", "4"]),
    ("papi_histo_mailbox", ["papi", "examples/histo_4pe/papi", "--by-mailbox", "--sort", "total"]),
    ("overall_histo", ["overall", "examples/histo_4pe/overall/overall.txt", "--num-pes", "4"]),
    (
        "overall_histo_ghz",
        ["overall", "examples/histo_4pe/overall", "--cpu-ghz", "2.5", "--sort", "total"],
    ),
    ("physical_ig", ["physical", "examples/ig_8pe_2nodes/physical", "--pes-per-node", "4"]),
    (
        "physical_histo16",
        ["physical", "examples/histo_16pe_4nodes/physical", "--metric", "bytes", "--log"],
    ),
    ("aggregation_ig", ["aggregation", "examples/ig_8pe_2nodes", "--no-cache"]),
    ("timeline_ig", ["timeline", "examples/ig_8pe_2nodes/logical"]),
    ("export_histo", ["export", "examples/histo_4pe/papi", "--to", "perfetto"]),
    ("report_ig", ["report", "examples/ig_8pe_2nodes", "--no-cache"]),
    ("report_histo", ["report", "examples/histo_4pe", "--no-cache"]),
    (
        "compare_histo",
        [
            "compare",
            "examples/histo_4pe",
            "examples/histo_4pe",
            "--names",
            "before,after",
            "--no-cache",
        ],
    ),
]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def snapshot(target: Path, only: set[str] | None = None) -> dict[str, dict[str, str]]:
    """Run every command; map run -> {file name or stream: sha256}."""
    result: dict[str, dict[str, str]] = {}
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}
    for name, args in RUNS:
        if only and name not in only:
            continue
        with tempfile.TemporaryDirectory() as out:
            # a fixed output path, so that file names printed on stdout compare
            fixed = Path(tempfile.gettempdir()) / "actorprof-golden" / name
            if fixed.exists():
                for f in fixed.iterdir():
                    f.unlink()
            fixed.mkdir(parents=True, exist_ok=True)
            proc = subprocess.run(
                [sys.executable, "-m", "actorprof", *args, "-o", str(fixed)],
                cwd=ROOT,
                env=env,
                capture_output=True,
                check=False,
            )
            del out
            entry = {
                "exit": str(proc.returncode),
                "stdout": _sha(proc.stdout),
                "stderr": _sha(proc.stderr),
            }
            for f in sorted(fixed.iterdir()):
                entry[f.name] = _sha(f.read_bytes())
            result[name] = entry
            print(f"{name}: exit {proc.returncode}, {len(entry) - 3} files", file=sys.stderr)
    target.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    return result


def compare(a: Path, b: Path) -> int:
    """Print every difference; exit status 1 when there is one."""
    old, new = json.loads(a.read_text()), json.loads(b.read_text())
    differences = 0
    for run in sorted(set(old) | set(new)):
        left, right = old.get(run, {}), new.get(run, {})
        for key in sorted(set(left) | set(right)):
            if left.get(key) != right.get(key):
                differences += 1
                print(
                    f"{run}: {key} differs ({left.get(key, 'absent')[:12]} -> "
                    f"{right.get(key, 'absent')[:12]})"
                )
    files = sum(len(v) for v in old.values())
    print(f"{differences} difference(s) in {files} fingerprints of {len(old)} runs")
    return 1 if differences else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "snapshot":
        snapshot(Path(sys.argv[2]), set(sys.argv[3:]) or None)
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
