"""Short text and HTML summaries of result objects, for the console and notebooks.

A view holds tables as long as its PE count; its ``repr`` must not. Classes
that mix in :class:`Summarized` say what they are in a few (label, value)
facts, and get a one-line ``__repr__`` (``<LogicalView run/logical: 8 PEs,
160,000 messages, 0 warnings>``) and a small ``_repr_html_`` table that
Jupyter shows instead of it. Neither grows with the PE count.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

__all__ = ["Summarized", "count"]

#: A repr names at most this many facts (the HTML table shows them all).
REPR_FACTS = 5
#: Longest "where" part of a repr (a deep folder name is cut in the middle).
WHERE_CHARS = 60


def count(n: int | float) -> str:
    """``160000`` -> ``"160,000"``; floats with three significant decimals."""
    return f"{n:,}" if isinstance(n, int) else f"{n:,.3g}"


def _singular(label: str) -> str:
    """``"PEs per node"`` -> ``"PE per node"``: the first plural word loses its s."""
    words = label.split(" ")
    for i, word in enumerate(words):
        if len(word) > 1 and word.endswith("s"):
            words[i] = word[:-1]
            break
    return " ".join(words)


def _cut(text: str, limit: int = WHERE_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = (limit - 3) // 2
    return f"{text[:half]}...{text[-(limit - 3 - half) :]}"


class Summarized:
    """Mixin: ``__repr__`` and ``_repr_html_`` from :meth:`_repr_facts`.

    The repr names the numeric facts (``8 PEs``); the HTML table shows every
    fact. A dataclass must say ``repr=False``, or it replaces ``__repr__``.
    """

    def _repr_facts(self) -> tuple[str, Sequence[tuple[str, str]]]:
        """``(where, [(label, value), ...])``: the run or trace, then its facts."""
        raise NotImplementedError

    def __repr__(self) -> str:
        where, facts = self._repr_facts()
        numbers = [(label, value) for label, value in facts if value[:1].isdigit()]
        shown = ", ".join(
            f"{value} {_singular(label) if value == '1' else label}"
            for label, value in numbers[:REPR_FACTS]
        )
        return f"<{type(self).__name__} {_cut(where)}: {shown}>"

    def _repr_html_(self) -> str:
        where, facts = self._repr_facts()
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(label)}</th>"
            f"<td style='text-align:right'>{html.escape(value)}</td></tr>"
            for label, value in facts
        )
        caption = f"<b>{type(self).__name__}</b> {html.escape(_cut(where))}"
        return f"<table><caption style='text-align:left'>{caption}</caption>{rows}</table>"
