"""A command imports what it runs: no seaborn (it imports scipy.stats), no pyplot.

Their imports alone cost more than drawing a small run's figures
(docs/performance.md, "Fixed cost"). ``import actorprof`` itself importing
no heavy library is checked in test_public_api.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import fresh_python

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

CODE = """
import sys
from actorprof.cli import main
out = sys.argv[1]
for args in [
    ["logical", "{ex}/ig_8pe_2nodes/logical", "--num-pes", "8", "--no-cache"],
    ["papi", "{ex}/histo_4pe/papi", "--by-mailbox"],
    ["overall", "{ex}/histo_4pe/overall"],
    ["physical", "{ex}/ig_8pe_2nodes/physical", "--pes-per-node", "4"],
    ["timeline", "{ex}/ig_8pe_2nodes/logical"],
    ["aggregation", "{ex}/ig_8pe_2nodes", "--no-cache"],
]:
    try:
        main([*args, "-o", out, "-q"])
    except SystemExit as exc:
        assert exc.code == 0, (args, exc.code)
heavy = ("seaborn", "scipy", "matplotlib.pyplot")
print(sorted(m for m in heavy if m in sys.modules))
"""


def test_commands_import_no_seaborn_scipy_or_pyplot(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    code = CODE.replace("{ex}", EXAMPLES.as_posix())
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_a_kind_command_imports_only_its_kind(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from actorprof.cli import main\n"
        f"args = ['logical', {str(EXAMPLES / 'ig_8pe_2nodes' / 'logical')!r}, '--no-cache',"
        f" '-o', {str(tmp_path)!r}, '-q']\n"
        "try:\n    main(args)\nexcept SystemExit as exc:\n    assert exc.code == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith('actorprof.kinds.')))\n"
    )
    printed = fresh_python(code)
    # the kind and its figure builders (kinds.logical_figures), no other kind
    assert printed.strip().splitlines()[-1] == (
        "['actorprof.kinds.logical', 'actorprof.kinds.logical_figures']"
    )


def test_a_name_shared_with_its_module_stays_the_function() -> None:
    code = (
        "import actorprof as ap, actorprof.analyze.imbalance, actorprof.analyze as an\n"
        "print(callable(an.imbalance), callable(ap.imbalance))\n"
    )
    printed = fresh_python(code)
    assert printed.split() == ["True", "True"]


def test_the_logical_figures_are_drawn_without_pandas(tmp_path: Path) -> None:
    """A figure server unpickles the logical figures' builders and draws them
    with numpy and matplotlib alone (pandas: 0.15 s of its start)."""
    import pickle

    from actorprof.kinds import logical_view, write_logical
    from actorprof.read import ReadReport

    builders: dict[str, object] = {}

    class Builders:
        def draw(self, build: object, name: str) -> None:
            builders[name] = build

        def csv(self, *args: object, **kwargs: object) -> None:
            pass

        def csv_parts(self, *args: object, **kwargs: object) -> None:
            pass

        def json(self, *args: object) -> None:
            pass

    view = logical_view(EXAMPLES / "ig_8pe_2nodes" / "logical", report=ReadReport(kind="logical"))
    write_logical(view, Builders(), metric="count", level="pe", log_scale=None, top=3)  # type: ignore[arg-type]
    assert sorted(builders) == ["heatmap", "loads", "violin"]
    job = tmp_path / "figures.pickle"
    job.write_bytes(pickle.dumps(builders))
    code = (
        "import pickle, sys\n"
        "from actorprof.write import OutputWriter\n"
        f"out = OutputWriter({str(tmp_path)!r}, kind='logical')\n"
        f"for name, build in pickle.loads(open({str(job)!r}, 'rb').read()).items():\n"
        "    out.figure(build(), name)\n"
        "print(sorted(m for m in ('pandas', 'actorprof.kinds.logical', 'actorprof.engine')"
        " if m in sys.modules))\n"
    )
    printed = fresh_python(code)
    assert printed.strip().splitlines()[-1] == "[]"
    for name in builders:
        assert (tmp_path / f"logical_{name}.png").stat().st_size > 10_000


def test_the_cli_names_a_broken_process_pool_without_importing_it() -> None:
    """concurrent.futures.process (15 ms) is imported by the engine when it
    makes a pool, not by every command before its figure server starts."""
    code = (
        "import sys\n"
        "import actorprof.cli as cli\n"
        "print('concurrent.futures.process' in sys.modules, cli._broken_pool().__name__)\n"
        "from concurrent.futures.process import BrokenProcessPool\n"
        "print(cli._broken_pool() is BrokenProcessPool)\n"
    )
    printed = fresh_python(code)
    assert printed.split() == ["False", "_NeverRaised", "True"]


def test_the_logical_map_runs_without_pandas(tmp_path: Path) -> None:
    """A worker of the logical map (forked from a server that imports
    engine.run) reads canonical files and a range without pandas (0.27 s of
    each server's start); a block the fast path cannot take still reads,
    importing it then. SEND_TYPE_DTYPE is made on first use, the same dtype."""
    for pe in range(3):
        lines = f"0, {pe}, 0, 1, 8, 1721412345.000505\n0, {pe}, 0, 2, 8, 1721412345.000520\n"
        (tmp_path / f"PE{pe}_send.csv").write_text(lines)
    (tmp_path / "PE3_send.csv").write_text("0,3,0,1,8,2.5e-1\n0,3,0,x\n")  # not canonical
    code = (
        "import sys\n"
        "from actorprof.engine.run import Item, Unit, run_unit\n"
        "def unit(*pes):\n"
        f"    return Unit(tuple(Item(p, {str(tmp_path)!r} + f'/PE{{p}}_send.csv', 0, None, p,"
        " True) for p in pes), None, '')\n"
        "done = run_unit(unit(0, 1, 2))\n"
        "print(done.total.messages, 'pandas' in sys.modules)\n"
        "done = run_unit(unit(3))\n"
        "print(done.total.messages, 'pandas' in sys.modules)\n"
        "from actorprof.schema import SEND_TYPE_DTYPE\n"
        "import actorprof.schema as schema\n"
        "print(list(SEND_TYPE_DTYPE.categories) == list(schema.SEND_TYPES),"
        " schema.SEND_TYPE_DTYPE is SEND_TYPE_DTYPE)\n"
    )
    printed = fresh_python(code)
    assert printed.split() == ["6", "False", "1", "True", "True", "True"]


def test_the_physical_map_runs_without_pandas(tmp_path: Path) -> None:
    """A worker of the physical map reads printf's lines and program output
    without pandas (0.17 s of each worker's first unit); the frames of
    iter_physical still come, importing it then."""
    trace = tmp_path / "physical.txt"
    trace.write_text(
        "Running on 2 PEs\nlocal_send, 8, 0, 1\nnonblock_send, 16, 1, 0\nlocal_send, -1, 0, 1\n"
    )
    code = (
        "import sys\n"
        "from actorprof.engine.physical import PhysicalUnit, reduce_physical_range\n"
        f"unit = PhysicalUnit({str(trace)!r}, 0, None, None, True, 1 << 16)\n"
        "done = reduce_physical_range(unit)\n"
        "print(done.partial.lines, done.report.lines_skipped, 'pandas' in sys.modules)\n"
        "from actorprof.read.physical import SEND_TYPE_DTYPE\n"
        "from actorprof import iter_physical\n"
        f"frame = next(iter_physical({str(trace)!r}))\n"
        "print(len(frame), frame['send_type'].dtype == SEND_TYPE_DTYPE)\n"
    )
    printed = fresh_python(code)
    assert printed.split() == ["2", "2", "False", "2", "True"]


def test_workers_start_with_the_map_steps_asked_for(tmp_path: Path) -> None:
    """The fork server imports the map steps of the kinds a command will read
    (prepare_workers): its workers start with them, the PAPI one's pandas
    too, instead of importing them for their first unit."""
    code = (
        "import sys\n"
        "from actorprof.engine import Engine\n"
        "from actorprof.engine.run import prepare_workers, run_map\n"
        "def loaded(_):\n"
        "    return 'actorprof.engine.papi' in sys.modules, 'pandas' in sys.modules\n"
        "if __name__ == '__main__':\n"
        "    if sys.argv[1] == 'papi':\n"
        "        prepare_workers(['actorprof.engine.papi'])\n"
        "    found = [r for _, r in run_map(loaded, [0, 1], Engine(jobs=2))]\n"
        "    print(*(a and b for a, b in found))\n"
    )
    script = tmp_path / "preload.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    for asked, expected in (("papi", "True True"), ("none", "False False")):
        done = subprocess.run(
            [sys.executable, str(script), asked], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == expected
