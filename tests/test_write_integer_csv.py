"""The integer fast path of ``OutputWriter.csv`` writes what ``to_csv`` writes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from actorprof.write import OutputWriter, _plain_columns, integer_rows

DTYPES = ["int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8"]


def _random_frame(rng: np.random.Generator) -> pd.DataFrame:
    n = int(rng.integers(1, 60))
    columns = {}
    for k in range(int(rng.integers(1, 6))):
        dtype = np.dtype(str(rng.choice(DTYPES)))
        info = np.iinfo(dtype)
        low = max(int(info.min), -(10 ** int(rng.integers(0, 19))))
        high = min(int(info.max), 10 ** int(rng.integers(0, 19)))
        values = rng.integers(low, high, n, dtype=dtype, endpoint=True)
        values[0] = info.min if rng.random() < 0.3 else values[0]
        values[-1] = info.max if rng.random() < 0.3 else values[-1]
        columns[f"col {k}" if k % 2 else f"c{k}"] = values
    return pd.DataFrame(columns)


@pytest.mark.parametrize("seed", range(40))
def test_integer_rows_equal_to_csv(seed: int) -> None:
    rng = np.random.default_rng(seed)
    frame = _random_frame(rng)
    for index in (False, True):
        if index and seed % 2:
            frame.index = rng.integers(-(10**12), 10**12, len(frame))
        columns = _plain_columns(frame, index=index)
        assert columns is not None
        expected = frame.to_csv(index=index, header=False, lineterminator="\n").encode()
        assert integer_rows(columns) == expected


def test_writer_fast_and_general_paths_agree(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    ints = pd.DataFrame(
        {"src_pe": rng.integers(0, 65536, 5000), "bytes": rng.integers(-9, 10**12, 5000)}
    )
    ints.index.name = "row"
    mixed = ints.assign(share=ints["bytes"] / 3.0)  # a float column
    nullable = ints.astype({"src_pe": "Int64"})  # a missing value is an empty field
    nullable.loc[[3, 10, 4999], "src_pe"] = None
    assert _plain_columns(mixed, index=False) is not None
    assert _plain_columns(nullable, index=False) is not None
    out = OutputWriter(tmp_path, kind="t")
    for name, frame in {"ints": ints, "mixed": mixed, "nullable": nullable}.items():
        for index in (False, True):
            written = out.csv(frame, f"{name}{index}", index=index).read_bytes()
            assert written == frame.to_csv(index=index, lineterminator="\n").encode()
    empty = out.csv(ints.iloc[:0], "empty", index=False).read_bytes()
    assert empty == b"src_pe,bytes\n"


def test_writer_slices_big_integer_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import actorprof.write as write

    monkeypatch.setattr(write, "_CSV_SLICE_CELLS", 10)  # many slices: header once, rows in order
    frame = pd.DataFrame({"a": np.arange(1000), "b": np.arange(1000)[::-1] * -7})
    written = OutputWriter(tmp_path, kind="t").csv(frame, "big", index=False).read_bytes()
    assert written == frame.to_csv(index=False, lineterminator="\n").encode()


def test_writer_slices_text_columns_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # floats, bools, labels, strings and nullable integers are made into text
    # a slice at a time (a 65,536-PE links table's labels are never held whole)
    import actorprof.write as write
    from actorprof.schema import SEND_TYPE_DTYPE

    monkeypatch.setattr(write, "_CSV_SLICE_CELLS", 10)  # slices of 2 rows: rows in order
    rng = np.random.default_rng(5)
    n = 997
    frame = pd.DataFrame(
        {
            "send_type": pd.Categorical.from_codes(rng.integers(0, 3, n), dtype=SEND_TYPE_DTYPE),
            "share": rng.standard_normal(n),
            "ok": rng.random(n) < 0.5,
            "label": pd.Series(rng.choice(["tcomm", "synthetic"], n), dtype=object),
            "items": pd.array(np.where(rng.random(n) < 0.2, None, rng.integers(0, 9, n)), "Int64"),
            "src_pe": rng.integers(0, 65536, n),
        }
    )
    columns = write._plain_columns(frame, index=False)
    assert columns is not None
    assert [type(c).__name__ for c in columns[:-1]] == ["_TextRows"] * 5
    written = OutputWriter(tmp_path, kind="t").csv(frame, "big", index=False).read_bytes()
    assert written == frame.to_csv(index=False, lineterminator="\n").encode()


@pytest.mark.parametrize("seed", range(12))
def test_wide_tables_written_as_one_block(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A column per PE (the timeline's counts: few time bins, 65,536 PEs):
    the block route writes what ``to_csv`` writes, index of floats (written
    as ``repr``, as pandas does) or of integers, sliced or not."""
    import actorprof.write as write

    rng = np.random.default_rng(seed)
    rows, cols = int(rng.integers(1, 40)), int(rng.integers(64, 400))
    dtype = ["int64", "uint32", "int16"][seed % 3]
    values = rng.integers(
        -5 if dtype != "uint32" else 0, 10 ** int(rng.integers(1, 4)), (rows, cols)
    )
    frame = pd.DataFrame(values.astype(dtype), columns=[str(c) for c in range(cols)])
    kind = seed % 4
    if kind == 0:
        frame.index = pd.Index(np.arange(rows) * 0.016 * rng.random(), name="time_s")
    elif kind == 1:
        frame.index = pd.Index(rng.integers(-(10**12), 10**12, rows), name="pe")
    elif kind == 2:
        frame.index = pd.Index([1e-7 * k for k in range(rows)], name="t")
    if seed % 5 == 0:
        monkeypatch.setattr(write, "_CSV_SLICE_CELLS", 1)  # a row per slice
    assert write._wide_integer_frame(frame, index=True)
    out = OutputWriter(tmp_path, kind="t")
    for index in (True, False):
        written = out.csv(frame, f"wide{index}", index=index).read_bytes()
        assert written == frame.to_csv(index=index, lineterminator="\n").encode()


def test_wide_tables_with_a_missing_time_take_the_general_path() -> None:
    import actorprof.write as write

    frame = pd.DataFrame(np.ones((3, 70), dtype=np.int64), index=[0.5, np.nan, 1.5])
    assert not write._wide_integer_frame(frame, index=True)
    assert write._wide_integer_frame(frame, index=False)
    assert not write._wide_integer_frame(frame.astype(float), index=False)


def test_send_type_labels_on_the_fast_path(tmp_path: Path) -> None:
    """A categorical column of plain labels (the physical pairs' send type) is
    written by the fast path, byte for byte what ``to_csv`` writes; labels
    that CSV would quote, and missing values, take the general path."""
    from actorprof.schema import SEND_TYPE_DTYPE

    rng = np.random.default_rng(3)
    n = 5000
    frame = pd.DataFrame(
        {
            "send_type": pd.Categorical.from_codes(rng.integers(0, 3, n), dtype=SEND_TYPE_DTYPE),
            "src_pe": rng.integers(0, 65536, n),
            "bytes": rng.integers(0, 10**9, n),
        }
    )
    assert _plain_columns(frame, index=False) is not None
    odd = frame.assign(send_type=frame["send_type"].cat.rename_categories(["a,b", "c", "d"]))
    missing = frame.copy()
    missing.loc[3, "send_type"] = None
    assert _plain_columns(odd, index=False) is None
    assert _plain_columns(missing, index=False) is None
    out = OutputWriter(tmp_path, kind="t")
    for name, f in {"plain": frame, "odd": odd, "missing": missing}.items():
        for index in (False, True):
            written = out.csv(f, f"{name}{index}", index=index).read_bytes()
            assert written == f.to_csv(index=index, lineterminator="\n").encode()


FLOATS = [0.0, -0.0, 1.0, 0.1, 1 / 3, 1e-7, 1.5e-300, 5e-324, 1e16, 1.7976931348623157e308, -2.5]


def _plain_frame(rng: np.random.Generator) -> pd.DataFrame:
    """Columns of floats (NaN, inf, tiny, huge, float32), bools and strings
    (plain, or what CSV quotes, or missing), as the summaries' tables hold."""
    n = int(rng.integers(1, 50))
    columns: dict[str, object] = {}
    for k in range(int(rng.integers(1, 5))):
        kind = int(rng.integers(0, 6))
        if kind == 0:
            values = rng.choice(np.array([*FLOATS, np.nan, np.inf, -np.inf]), n)
            columns[f"f{k}"] = values
        elif kind == 1:
            columns[f"r{k}"] = rng.standard_normal(n) * 10.0 ** int(rng.integers(-20, 20))
        elif kind == 2:
            columns[f"h{k}"] = (rng.standard_normal(n) * 1000).astype(np.float32)
        elif kind == 3:
            columns[f"b{k}"] = rng.random(n) < 0.5
        elif kind == 4:
            words = ["tcomm", "synthetic", "é", "a b"]
            if rng.random() < 0.3:
                words.append(str(rng.choice(["a,b", 'q"', "l\n", ""])))
            columns[f"s{k}"] = pd.Series(rng.choice(words, n), dtype=object)
        else:
            values = rng.choice(np.array(["x", "y"], dtype=object), n)
            if rng.random() < 0.5:
                values[int(rng.integers(0, n))] = None
            columns[f"o{k}"] = pd.Series(values, dtype=object)
    return pd.DataFrame(columns)


@pytest.mark.parametrize("seed", range(60))
def test_floats_bools_and_strings_written_as_to_csv(tmp_path: Path, seed: int) -> None:
    """Floats (``astype(str)``, NaN empty), bools and plain strings take the
    fast route; whatever it takes, the file is what ``to_csv`` writes."""
    rng = np.random.default_rng(seed)
    frame = _plain_frame(rng)
    if seed % 7 == 0:
        frame = frame.iloc[:0]  # no rows: the header alone
    if seed % 3 == 0:
        frame.index = pd.Index(rng.standard_normal(len(frame)), name="x")
    out = OutputWriter(tmp_path, kind="t")
    for index in (False, True):
        written = out.csv(frame, f"p{index}", index=index).read_bytes()
        assert written == frame.to_csv(index=index, lineterminator="\n").encode()


def test_what_the_fast_route_refuses() -> None:
    assert _plain_columns(pd.DataFrame({"s": ["a", "b,c"]}), index=False) is None
    assert _plain_columns(pd.DataFrame({"s": ["a", None]}), index=False) is None
    assert _plain_columns(pd.DataFrame({"s": ["a", ""]}), index=False) is None
    assert _plain_columns(pd.DataFrame({"f": [1.0, np.nan]}), index=False) is None  # a lone ""
    assert _plain_columns(pd.DataFrame({"f": [1.0, np.nan], "g": 1}), index=False) is not None
    frame = pd.DataFrame({"s": ["a", "é"], "b": [True, False]})
    assert _plain_columns(frame, index=False) is not None


EDGES = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 9999, 10_000, 10_999, 99_999, 1_000_000,
         9_999_999, 10_000_000, 10_001_000, 2**31 - 1, 2**32 - 1, 2**32, 10**12, 2**63 - 1,
         10**19, 2**64 - 1]  # fmt: skip


@pytest.mark.parametrize("seed", range(12))
def test_word_rows_of_columns_none_negative(seed: int) -> None:
    """Non-negative integer columns take the word route: the text to_csv writes,
    at the edges of its 3- and 4-digit words, every dtype, the last column too."""
    from actorprof.write import _word_rows

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    columns = {}
    for k in range(int(rng.integers(1, 7))):
        dtype = np.dtype(str(rng.choice(DTYPES)))
        top = int(np.iinfo(dtype).max)
        edges = [v for v in EDGES if v <= top]
        values = rng.integers(0, min(top, 10 ** int(rng.integers(1, 20))), n, dtype=dtype)
        chosen = rng.integers(0, n, min(n, len(edges)))
        values[chosen] = np.array(edges[: len(chosen)], dtype=dtype)
        columns[f"c{k}"] = values
    frame = pd.DataFrame(columns)
    fields = [frame[c].to_numpy() for c in frame.columns]
    expected = frame.to_csv(index=False, header=False, lineterminator="\n").encode()
    assert _word_rows(fields) == expected
    assert integer_rows(fields) == expected
    every = np.array(EDGES, dtype=np.uint64)
    assert _word_rows([every, every[::-1].copy()]) == b"".join(
        b"%d,%d\n" % (a, b) for a, b in zip(EDGES, EDGES[::-1], strict=True)
    )


def test_word_rows_leave_negative_and_text_columns_to_digit_matrices() -> None:
    from actorprof.write import _word_rows

    assert _word_rows([np.array([1, -2])]) is None
    assert _word_rows([np.array([1, 2]), np.zeros((2, 3), np.uint8)]) is None
    assert integer_rows([np.array([5, -20]), np.array([0, 7], np.uint8)]) == b"5,0\n-20,7\n"
    assert _word_rows([np.array([], np.int64)]) == b""
