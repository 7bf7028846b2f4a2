"""papi_regions' shortcut for chunks of (mostly) one (PE, mailbox) against a plain groupby.

A block of one PAPI file is summed as column totals less its few other
lines (``_one_key_rows``); any other chunk goes to the groupby. Whatever the
mix of keys, chunk sizes and dtypes, the region table must be the one a
plain pandas groupby of all the lines gives.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal

from actorprof import papi_regions
from actorprof.analyze import breakdown
from actorprof.schema import MAIN_MAILBOX

COUNTERS = ("PAPI_TOT_INS", "PAPI_LST_INS")
VALUES = ["num_sends", *COUNTERS]


def reference(frame: pd.DataFrame) -> pd.DataFrame:
    """The region table from one groupby of every line, written out plainly."""
    grouped = frame.groupby(["dst_pe", "mailbox"], sort=True)
    table = grouped[VALUES].sum().astype(np.int64)
    table.insert(0, "lines", grouped.size().astype(np.int64))
    table.index.names = ["pe", "mailbox"]
    table = table.reset_index().astype({"pe": np.int64, "mailbox": np.int64})
    table.insert(2, "region", np.where(table["mailbox"] == MAIN_MAILBOX, "MAIN", "PROC"))
    table["region"] = table["region"].astype(object)
    return table


def frame_of(n: int, seed: int, others: int, keys: int, dtype: str) -> pd.DataFrame:
    """``n`` lines of PE 3, mailbox 0, but ``others`` lines of ``keys`` other keys."""
    rng = np.random.default_rng(seed)
    pe = np.full(n, 3, dtype=np.int32)
    mailbox = np.zeros(n, dtype=np.int32)
    at = rng.choice(n, size=min(others, n), replace=False)
    pe[at] = rng.integers(0, 5, at.size)
    mailbox[at] = rng.integers(-1, keys, at.size)
    frame = pd.DataFrame({"src_pe": rng.integers(0, 8, n).astype(np.int32)})
    frame["dst_pe"] = pe
    frame["mailbox"] = mailbox
    for name in VALUES:
        frame[name] = rng.integers(0, 10**12, n).astype(dtype)
    return frame


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from([1, 100, 4095, 4096, 5000, 9000]),
            st.integers(0, 2**16),
            st.integers(0, 1200),
            st.integers(1, 4),
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(["int64", "int32", "float64"]),
)
def test_same_table_as_one_groupby(chunks: list[tuple[int, int, int, int]], dtype: str) -> None:
    if dtype == "int32":
        frames = [frame_of(*c, dtype="int64") for c in chunks]
        for f in frames:
            for name in VALUES:
                f[name] = (f[name] % 2**31).astype(np.int32)
    else:
        frames = [frame_of(*c, dtype=dtype) for c in chunks]
    expected = reference(pd.concat(frames, ignore_index=True))
    if dtype == "float64":
        expected = expected.astype({name: np.int64 for name in VALUES})
    assert_frame_equal(papi_regions(frames, counters=COUNTERS), expected)


def test_one_key_rows_sums() -> None:
    """Hand-checked: the first key's totals less the other lines', which stay as they are."""
    n = breakdown._ONE_KEY_MIN_ROWS
    frame = pd.DataFrame(
        {
            "dst_pe": np.full(n, 2, dtype=np.int32),
            "mailbox": np.zeros(n, dtype=np.int32),
            "num_sends": np.ones(n, dtype=np.int64),
            "PAPI_TOT_INS": np.arange(n, dtype=np.int64),
        }
    )
    frame.loc[n - 1, ["mailbox", "num_sends", "PAPI_TOT_INS"]] = [MAIN_MAILBOX, 7, 10**15]
    rows = breakdown._one_key_rows(frame, ["num_sends", "PAPI_TOT_INS"])
    assert rows is not None
    assert rows.tolist() == [
        [2, 0, n - 1, n - 1, (n - 1) * (n - 2) // 2],
        [2, MAIN_MAILBOX, 1, 7, 10**15],
    ]


def test_many_keys_and_small_chunks_take_the_groupby() -> None:
    small = frame_of(breakdown._ONE_KEY_MIN_ROWS - 1, 1, 0, 1, "int64")
    assert breakdown._one_key_rows(small, VALUES) is None
    n = 8000
    mixed = frame_of(n, 2, 0, 1, "int64")
    # lines 1..n/8+1 of another mailbox: one more than allowed
    mixed.loc[: n // breakdown._ONE_KEY_SHARE + 1, "mailbox"] = 1
    mixed.loc[0, "mailbox"] = 0
    assert breakdown._one_key_rows(mixed, VALUES) is None
    assert breakdown._one_key_rows(mixed.iloc[1:].reset_index(drop=True), VALUES) is None
    mixed.loc[n // breakdown._ONE_KEY_SHARE + 1, "mailbox"] = 0  # n/8 others: allowed
    assert breakdown._one_key_rows(mixed, VALUES) is not None
    floats = frame_of(n, 3, 0, 1, "float64")
    assert breakdown._one_key_rows(floats, VALUES) is None
