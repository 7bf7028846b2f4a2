"""Outputs: atomic writes, unwritable folders, replacement, and inputs never touched.

- a write that fails (disk full, a crash in savefig, Ctrl-C) leaves neither a
  temporary file nor a partial target, and an older complete file of the same
  name stays as it was;
- an output folder that cannot be written is an error (exit 1, the folder
  named, -o suggested) before any trace is read;
- existing outputs of the same names are replaced, other files are left alone
  (docs/errors.md);
- the trace files are never modified or touched: every command runs on a copy
  of examples/ and sha256 + mtime_ns are compared before and after.
"""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from matplotlib.figure import Figure

import actorprof.write
from actorprof import ActorProfError
from actorprof.cli import main
from actorprof.write import OutputWriter

from .conftest import EXAMPLES, snapshot, trace_heads

DATA = Path(__file__).resolve().parent / "data"
BAD = DATA / "bad"


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


#: command, trace argument, name of its first figure
FIRST_FIGURE = [
    ("logical", DATA / "logical_small", "logical_heatmap.png"),
    ("timeline", DATA / "logical_small", "timeline_rate.png"),
    ("papi", DATA / "papi_small", "papi_bars.png"),
    ("overall", DATA / "overall_mixed", "overall_stacked.png"),
    ("physical", DATA / "physical_small", "physical_heatmap.png"),
    ("aggregation", DATA / "aggregation_2d", "aggregation_heatmap.png"),
]


def leftovers(folder: Path) -> list[str]:
    """Temporary files of ours left in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def failing_savefig(exc: BaseException) -> Callable[..., None]:
    def savefig(self: Figure, handle: Any, **kws: Any) -> None:
        handle.write(b"\x89PNG half a figure")  # some bytes reach the temporary file
        raise exc

    return savefig


def fail_figures(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    """Every figure write fails with `exc`: ``Figure.savefig`` and PNG's own route."""
    monkeypatch.setattr(Figure, "savefig", failing_savefig(exc))
    monkeypatch.setattr(actorprof.write, "save_png", failing_savefig(exc))


@pytest.mark.parametrize(("command", "trace", "figure"), FIRST_FIGURE)
def test_disk_full_while_writing_leaves_nothing(
    command: str, trace: Path, figure: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_figures(monkeypatch, OSError(errno.ENOSPC, "No space left on device"))
    out = tmp_path / "out"
    code, stdout, err = run(command, trace, "-o", out)
    assert code == 1 and stdout == ""
    assert (
        f"Error: {out / figure}: cannot write this output (No space left on device); nothing "
        "half-written was left. Is the disk or quota full? Free space, or choose another "
        "folder with -o/--output-dir." in err
    )
    assert "Traceback" not in err and "internal error" not in err
    assert list(out.iterdir()) == []  # no temporary file, no partial figure


@pytest.mark.parametrize(("command", "trace", "figure"), FIRST_FIGURE[:3])
def test_crash_while_writing_keeps_the_older_complete_file(
    command: str, trace: Path, figure: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    code, _, err = run(command, trace, "-o", out)
    assert code == 0, err
    before = snapshot(out)
    fail_figures(monkeypatch, RuntimeError("renderer exploded"))
    code, stdout, err = run(command, trace, "-o", out)
    assert code == 1 and stdout == ""
    assert "internal error (RuntimeError: renderer exploded)" in err and "Traceback" not in err
    assert snapshot(out) == before  # the older figure is whole, nothing else appeared
    assert leftovers(out) == []
    code, _, err = run(command, trace, "-o", out, "-v")
    assert code == 1 and "Traceback" in err and "RuntimeError: renderer exploded" in err


def test_rename_failure_and_interrupt_leave_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = OutputWriter(tmp_path, kind="k")

    def interrupted(handle: Any) -> None:
        handle.write(b"partial")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        writer._atomic(tmp_path / "k_x.txt", interrupted)
    assert list(tmp_path.iterdir()) == []

    def refuse(src: Any, dst: Any) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(dst))

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(ActorProfError, match=r"k_summary\.json: cannot write this output "):
        writer.json({"a": 1}, "summary")
    assert list(tmp_path.iterdir()) == [] and writer.written == []


def test_export_write_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:
        if str(dst).endswith("export_perfetto.json"):
            raise OSError(errno.EDQUOT, "Disk quota exceeded")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    out = tmp_path / "out"
    code, _, err = run("export", DATA / "logical_small", "-o", out)
    assert code == 1
    assert f"{out / 'export_perfetto.json'}: cannot write this output (Disk quota exceeded)" in err
    assert list(out.iterdir()) == []


# --- an output folder that cannot be written ------------------------------------------

#: every command on a trace that would fail if it were read: the output error comes first
UNREAD = [
    ("logical", BAD / "logical_only_output"),
    ("timeline", BAD / "logical_only_output"),
    ("export", BAD / "logical_only_output"),
    ("papi", BAD / "papi_only_output"),
    ("overall", BAD / "overall_empty"),
    ("physical", BAD / "physical_empty"),
    ("aggregation", BAD / "physical_empty"),
    ("report", BAD / "physical_empty"),
]


@pytest.mark.parametrize(("command", "trace"), UNREAD)
def test_output_below_a_file_fails_before_any_work(
    command: str, trace: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder\n")
    out = blocker / "plots"
    code, stdout, err = run(command, trace, "-o", out)
    assert code == 1 and stdout == ""
    assert (
        f"Error: {out}: cannot write output here (Not a directory). Choose another folder "
        "with -o/--output-dir." in err
    )
    assert "Traceback" not in err


@pytest.mark.parametrize(("command", "trace"), UNREAD)
def test_read_only_output_folder_fails_before_any_work(
    command: str, trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a folder without write permission does (simulated: root may write anywhere)."""
    out = tmp_path / "read_only"
    out.mkdir()

    def refuse(*args: Any, **kws: Any) -> Any:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(tempfile, "NamedTemporaryFile", refuse)
    code, stdout, err = run(command, trace, "-o", out)
    assert code == 1 and stdout == ""
    assert (
        f"Error: {out}: cannot write output here (Permission denied). Choose another folder "
        "with -o/--output-dir." in err
    )
    assert list(out.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_output_folder_for_real(tmp_path: Path) -> None:
    out = tmp_path / "read_only"
    out.mkdir()
    out.chmod(0o555)
    try:
        code, _, err = run("logical", DATA / "logical_small", "-o", out)
    finally:
        out.chmod(0o755)
    assert code == 1 and f"{out}: cannot write output here (Permission denied)" in err


def test_output_dir_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    code, _, err = run("logical", DATA / "logical_small", "-o", blocker)
    assert code == 2 and "is a file" in err and "Traceback" not in err


# --- replacement ------------------------------------------------------------------------


def test_existing_outputs_are_replaced_others_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, _ = run("logical", DATA / "logical_small", "-o", out, "--format", "svg")
    assert code == 0
    (out / "notes.txt").write_text("mine\n")
    svg = snapshot(out)
    code, stdout, _ = run("logical", DATA / "logical_small", "-o", out, "--metric", "bytes")
    assert code == 0
    written = [Path(p) for p in stdout.splitlines()]
    after = snapshot(out)
    for path in written:  # replaced: new content (or at least a new write)
        assert str(path) in after
        if path.suffix in (".json",):
            assert after[str(path)][0] != svg[str(path)][0]
        if str(path) in svg:
            assert after[str(path)][1] >= svg[str(path)][1]
    untouched = {p: v for p, v in svg.items() if Path(p) not in written}
    assert untouched and all(after[p] == v for p, v in untouched.items())
    assert str(out / "logical_heatmap.svg") in untouched  # other format: left as it was
    assert str(out / "notes.txt") in untouched
    assert leftovers(out) == []


def test_outputs_keep_the_umask_not_mkstemps_0600(tmp_path: Path) -> None:
    code, stdout, _ = run("overall", DATA / "overall_mixed", "-o", tmp_path)
    assert code == 0
    mask = os.umask(0)
    os.umask(mask)
    for path in stdout.splitlines():
        assert Path(path).stat().st_mode & 0o777 == 0o666 & ~mask


# --- inputs never touched ------------------------------------------------------------------


def digest(folder: Path) -> dict[str, tuple[str, int, int]]:
    """sha256, mtime_ns and mode of every file and folder below ``folder``."""
    result = {}
    for p in sorted(folder.rglob("*")):
        st = p.stat()
        sha = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "folder"
        result[str(p.relative_to(folder))] = (sha, st.st_mtime_ns, st.st_mode)
    return result


def test_inputs_are_never_modified_or_touched(tmp_path: Path) -> None:
    runs = tmp_path / "examples"
    ig = trace_heads(EXAMPLES / "ig_8pe_2nodes", runs / "ig_8pe_2nodes")
    histo = trace_heads(EXAMPLES / "histo_4pe", runs / "histo_4pe")
    before = digest(runs)
    out = tmp_path / "out"
    commands: list[list[str | Path]] = [
        ["logical", ig / "logical", "-j", "1"],
        ["logical", ig / "logical", "-j", "2", "--no-cache"],
        ["timeline", ig / "logical"],
        ["export", ig / "logical"],
        ["papi", histo / "papi"],
        ["overall", histo / "overall" / "overall.txt"],
        ["physical", ig / "physical", "--pes-per-node", "4"],
        ["aggregation", ig],
        ["report", histo, "-j", "1"],
        ["compare", histo, ig, "-j", "1", "--allow-different-pes"],
    ]
    for args in commands:
        code, _, err = run(*args, "-q", "-o", out)
        assert code == 0, (args, err)
    assert digest(runs) == before  # not even a temporary file came and went in a trace folder

    # outputs written beside the inputs are never read back as inputs
    trace = ig / "logical"
    code, stdout, err = run("logical", trace, "-j", "1", "-o", trace)
    assert code == 0, err
    first = (trace / "logical_summary.json").read_text()
    written = {str(Path(p).relative_to(runs)) for p in stdout.splitlines()}
    code, stdout, err = run("logical", trace, "-j", "1", "-o", trace)
    assert code == 0 and "warning" not in err
    assert (trace / "logical_summary.json").read_text() == first
    now = digest(runs)
    written.add(str(trace.relative_to(runs)))  # the folder itself got new entries
    assert {k: v for k, v in now.items() if k not in written} == {
        k: v for k, v in before.items() if k not in written
    }


@pytest.mark.parametrize("columns", [3, 7000, 40_000])
def test_wide_csv_is_written_in_bigger_chunks_with_the_same_bytes(
    tmp_path: Path, columns: int
) -> None:
    import numpy as np
    import pandas as pd

    from actorprof.write import OutputWriter

    rows = 40
    frame = pd.DataFrame(
        np.arange(rows * columns, dtype=np.int64).reshape(rows, columns) % 7,
        index=pd.Index(np.arange(rows) * 0.001, name="time_s"),
        columns=pd.RangeIndex(columns, name="pe"),
    )
    written = OutputWriter(tmp_path, kind="timeline").csv(frame, "counts")
    assert written.read_bytes() == frame.to_csv(lineterminator="\n").encode()


@pytest.mark.parametrize("rows", [0, 1, 999, 1000, 1001, 25_000])
@pytest.mark.parametrize("index", [True, False])
def test_long_csv_is_written_a_slice_at_a_time_with_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int, index: bool
) -> None:
    import numpy as np
    import pandas as pd

    import actorprof.write as write

    monkeypatch.setattr(write, "_CSV_SLICE_CELLS", 3000)  # slices of 1,000 rows
    rng = np.random.default_rng(rows)
    frame = pd.DataFrame(
        {"src_pe": rng.integers(0, 9, rows), "share": rng.random(rows), "kind": ["local"] * rows},
        index=pd.Index(np.arange(rows) + 7, name="pair"),
    )
    written = write.OutputWriter(tmp_path, kind="links").csv(frame, "t", index=index)
    assert written.read_bytes() == frame.to_csv(index=index, lineterminator="\n").encode()


def test_json_conversion_copies_only_what_changes() -> None:
    import math

    import numpy as np

    from actorprof.write import dumps_json, to_jsonable

    plain = {"coverage": [{"path": "PE0_send.csv", "skipped": {"short": 2}}] * 3, "n": 1.5}
    assert to_jsonable(plain) is plain  # nothing to convert: not copied
    mixed = {
        "a": [1, {"b": np.int64(2)}, "c"],
        "kept": {"x": [1, 2]},
        3: (np.float64(math.nan), 4),
        "d": np.arange(2),
    }
    out = to_jsonable(mixed)
    assert out == {"a": [1, {"b": 2}, "c"], "kept": {"x": [1, 2]}, "3": [None, 4], "d": [0, 1]}
    assert out is not mixed and out["kept"] is mixed["kept"]
    assert type(out["a"][1]["b"]) is int
    assert mixed["a"][1]["b"].dtype == np.int64  # the input is not modified
    assert dumps_json(out) == dumps_json(
        {"a": [1, {"b": 2}, "c"], "kept": {"x": [1, 2]}, "3": [None, 4], "d": [0, 1]}
    )


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([1.5, 2, None, "a", True], None),  # plain: the list itself
        ([0.5, float("nan"), 2], [0.5, None, 2]),
        ([float("inf"), -float("inf")], [None, None]),
        ([1.0, 2.0, 3], None),
    ],
)
def test_a_list_of_plain_items_is_kept_and_non_finite_floats_are_null(
    items: list[Any], expected: list[Any] | None
) -> None:
    from actorprof.write import to_jsonable

    before = list(items)
    out = to_jsonable(items)
    if expected is None:
        assert out is items
    else:
        assert out == expected and out is not items
        assert [repr(v) for v in items] == [repr(v) for v in before]  # the input kept


def _one_item_a_line(items: list[Any], level: int) -> str:
    """A long list as the writer writes it item by item (one compact JSON a line)."""
    import json

    encode = json.JSONEncoder(allow_nan=False, separators=(", ", ": ")).encode
    inner = "  " * (level + 1)
    lines = "".join(("\n" if not k else ",\n") + inner + encode(v) for k, v in enumerate(items))
    return "[" + lines + "\n" + "  " * level + "]"


@pytest.mark.parametrize(
    "kind", ["ints", "floats", "with None", "extremes", "bools", "a float subclass", "mixed"]
)
def test_a_long_list_of_numbers_is_written_as_item_by_item(kind: str) -> None:
    """Lists of numbers (65,536 per PE column at 65,536 PEs) are joined at once:
    the same text as the per-item route, which still takes every other list."""
    import numpy as np

    from actorprof.write import LONG_LIST, dumps_json

    class Half(float):
        def __repr__(self) -> str:
            return "half"

    rng = np.random.default_rng(len(kind))
    n = LONG_LIST + 7
    items: list[Any] = {
        "ints": lambda: [int(v) for v in rng.integers(-(2**62), 2**62, n)] + [10**30],
        "floats": lambda: [float(v) for v in rng.normal(0, 1e6, n)],
        "with None": lambda: [None if v < 0.2 else float(v) for v in rng.random(n)],
        "extremes": lambda: [0.0, -0.0, 5e-324, 1.7976931348623157e308, 1e16, 0.1] * (n // 6),
        "bools": lambda: [True, False, 1] * (n // 3),
        "a float subclass": lambda: [1.5, Half(0.5)] * (n // 2),
        "mixed": lambda: [1, "a", 2.5, None, {"x": 1}] * (n // 5),
    }[kind]()
    assert dumps_json({"k": items}) == '{\n  "k": ' + _one_item_a_line(items, 1) + "\n}"
    assert dumps_json(items, _level=2) == _one_item_a_line(items, 2)


@pytest.mark.parametrize("extra", [-1, 0, 1, 4096 + 5])
def test_a_long_list_of_objects_is_written_a_slice_at_a_time(extra: int) -> None:
    """Items' texts are joined a slice at a time (``_JOINED_ITEMS``): the text
    item by item, at and around the slices' ends; an iterator the same."""
    import numpy as np

    from actorprof._text import JsonText
    from actorprof.write import _JOINED_ITEMS, dumps_json, to_jsonable

    n = 2 * _JOINED_ITEMS + extra
    items: list[Any] = [{"i": k, "s": 'a"b'} if k % 3 else [k, None] for k in range(n)]
    assert dumps_json({"k": items}) == '{\n  "k": ' + _one_item_a_line(items, 1) + "\n}"
    assert dumps_json(iter(items), _level=2) == _one_item_a_line(items, 2)
    texts = [JsonText(f'{{"i": {k}}}') if k % 2 else {"i": k} for k in range(n)]
    as_dicts = [{"i": k} for k in range(n)]
    assert dumps_json(texts) == _one_item_a_line(as_dicts, 0)
    # streamed (the export's events): JSON texts and items converted as they come
    streamed = [JsonText(f'{{"i": {k}}}') if k % 2 else {"i": np.int64(k)} for k in range(n)]
    assert dumps_json(to_jsonable(iter(streamed))) == _one_item_a_line(as_dicts, 0)


def test_a_long_list_with_nan_is_refused_as_before() -> None:
    from actorprof.write import LONG_LIST, dumps_json

    with pytest.raises(ValueError, match="Out of range float"):
        dumps_json([1.0] * LONG_LIST + [float("nan")])
