"""The PAPI view: read a PAPI trace and derive everything ``actorprof papi`` shows.

``papi_view(path)`` is the Python twin of the command: one pass over the
trace into per-(PE, mailbox) sums, then the per-PE breakdown (MAIN and PROC
per counter, messages handled, sends issued), imbalance per counter and a
JSON-able summary. No plotting, no files.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._progress import ProgressSink, track
from .._repr import Summarized, count
from .._text import format_ranges, run_name
from .._version import __version__
from ..analyze.breakdown import (
    counter_names,
    exact_group_sums,
    exact_sum,
    main_unknown,
    papi_breakdown,
    papi_regions,
    papi_segments,
    zero_counters,
)
from ..analyze.imbalance import imbalance
from ..read import ReadReport, note_missing_pe_files
from ..read.papi import check_counter_names, iter_papi
from ..schema import MAIN_MAILBOX
from ..write import keeps_tables
from .papi_figures import bars_figure, bars_panel

if TYPE_CHECKING:
    from ..engine import Engine
    from ..write import Sink

__all__ = [
    "PapiView",
    "build_papi_view",
    "main_unknown_message",
    "papi_view",
    "zero_counter_message",
]


def zero_counter_message(names: Sequence[str], *, every: bool) -> str:
    """The plain statement printed when counters are all zero."""
    listed = ", ".join(names)
    if every:
        return (
            f"all PAPI counter values are 0 ({listed}): the tracing machine gave no hardware "
            "counter readings (no counter unit, or PAPI without access to it); instruction "
            "counts are unknown, only messages handled and sends issued are meaningful"
        )
    return f"PAPI counter(s) {listed} are 0 on every line: those events were not counted"


def main_unknown_message(pes: Sequence[int], num_pes: int) -> str:
    """The plain statement printed when PEs have no MAIN line."""
    return (
        f"MAIN region unknown on {len(pes)} of {num_pes} PEs (PE {format_ranges(list(pes))}): "
        "no MAIN line (mailbox -1), which the runtime writes at done(0); was the job killed "
        "before? Their MAIN sends and counters are left empty (not 0), so the run's MAIN "
        "totals are unknown and MAIN imbalance covers only the PEs with a MAIN line; their "
        "messages handled are only those written before the end"
    )


def _imbalance_of(values: pd.Series) -> dict[str, Any] | None:
    """Imbalance over the PEs whose value is known (None: no PE is)."""
    known = values.dropna()
    if known.empty:
        return None
    return imbalance(known.astype(np.float64)).to_dict()


def _sum(values: pd.Series) -> int | None:
    """Sum over PEs, None when a PE's value is unknown."""
    return None if values.isna().any() else exact_sum(values.to_numpy(dtype=np.int64))


def _by_mailbox(rows: pd.DataFrame, counters: tuple[str, ...]) -> list[dict[str, int]]:
    """Region rows summed per mailbox over PEs, sorted by mailbox (exact sums)."""
    columns = ["lines", "num_sends", *counters]
    boxes, sums = exact_group_sums(rows["mailbox"], rows[columns])
    names = ["messages", "num_sends", *counters]
    return [
        {"mailbox": box, **dict(zip(names, row, strict=True))}
        for box, row in zip(boxes, sums, strict=True)
    ]


@dataclass(frozen=True, repr=False)
class PapiView(Summarized):
    """Everything derived from one PAPI trace (one phase)."""

    path: str
    report: ReadReport
    counters: tuple[str, ...]
    regions: pd.DataFrame
    pes: pd.DataFrame
    zero_counters: tuple[str, ...]

    def _repr_facts(self) -> tuple[str, list[tuple[str, str]]]:
        phase = f", phase {self.report.phase}" if self.report.phase else ""
        return f"{run_name(self.path)}{phase}", [
            ("PEs", count(self.num_pes)),
            ("messages handled", count(exact_sum(self.pes["messages"]))),
            ("warnings", count(len(self.report.warnings))),
            ("counters", ", ".join(self.counters)),
            ("counters all zero", ", ".join(self.zero_counters) or "none"),
        ]

    @property
    def num_pes(self) -> int:
        return len(self.pes)

    @property
    def all_zero(self) -> bool:
        """True when every counter is 0 on every line (no hardware counters)."""
        return len(self.zero_counters) == len(self.counters)

    @property
    def main_unknown(self) -> list[int]:
        """PEs without MAIN line: their MAIN sends and counters are unknown."""
        return main_unknown(self.pes)

    @property
    def mailboxes(self) -> list[int]:
        """Mailbox ids that handled messages (MAIN excluded), sorted."""
        mailbox = self.regions["mailbox"].to_numpy()
        return sorted(int(m) for m in np.unique(mailbox[mailbox != MAIN_MAILBOX]))

    def segments(self, value: str, *, by_mailbox: bool = False) -> pd.DataFrame:
        """Stacks per PE of a counter, ``num_sends`` or ``messages`` (see papi_segments)."""
        return papi_segments(self.regions, value, by_mailbox=by_mailbox, num_pes=self.num_pes)

    def summary(self, *, files: bool = True) -> dict[str, Any]:
        """JSON-able summary: totals, per mailbox, imbalance per counter, files.

        ``files=False`` leaves the per-file line accounting out (an empty list).
        """
        pes = self.pes
        messages = exact_sum(pes["messages"])  # sums over PEs: beyond int64 at 65,536 PEs
        counters: dict[str, Any] = {}
        for name in self.counters:
            proc = exact_sum(pes[f"{name}_proc"])
            counters[name] = {
                "main": _sum(pes[f"{name}_main"]),
                "proc": proc,
                "total": _sum(pes[f"{name}_total"]),
                "per_message": proc / messages if messages else None,
                "all_zero": name in self.zero_counters,
            }
        metrics: dict[str, Any] = {
            name: _imbalance_of(pes[f"{name}_total"]) for name in self.counters
        }
        metrics["messages"] = imbalance(pes["messages"]).to_dict()
        metrics["sends"] = _imbalance_of(pes["main_sends"] + pes["proc_sends"])
        proc_rows = self.regions[self.regions["mailbox"] != MAIN_MAILBOX]
        main_sends = _sum(pes["main_sends"])
        proc_sends = exact_sum(pes["proc_sends"])
        unknown = self.main_unknown
        return {
            "kind": "papi",
            "actorprof_version": __version__,
            "trace": self.path,
            "phase": self.report.phase,
            "num_pes": self.num_pes,
            "num_pes_inferred": self.report.num_pes_inferred,
            "counters": list(self.counters),
            "zero_counters": list(self.zero_counters),
            "counters_all_zero": self.all_zero,
            "counters_note": (
                zero_counter_message(self.zero_counters, every=self.all_zero)
                if self.zero_counters
                else None
            ),
            "totals": {
                "messages": messages,
                "main_lines": exact_sum(pes["main_lines"]),
                "main_sends": main_sends,
                "proc_sends": proc_sends,
                "sends": None if main_sends is None else main_sends + proc_sends,
                "counters": counters,
            },
            "main_unknown_pes": unknown,
            "main_unknown_note": (main_unknown_message(unknown, self.num_pes) if unknown else None),
            "mailboxes": _by_mailbox(proc_rows, self.counters),
            "imbalance": metrics,
            **{
                k: v
                for k, v in self.report.to_dict(files=files).items()
                if k in ("missing_pes", "lines_read", "lines_skipped", "warnings", "files")
            },
            "notes": list(self.report.notes),
        }

    def summary_lines(self) -> list[str]:
        """A short human summary (what the CLI prints on stderr)."""
        s = self.summary(files=False)
        t = s["totals"]
        phase = s["phase"] or "unnamed"
        main = "unknown" if t["main_sends"] is None else f"{t['main_sends']:,}"
        lines = [
            f"PAPI trace ({phase} phase): {t['messages']:,} messages handled on "
            f"{s['num_pes']} PEs, mailboxes {', '.join(map(str, self.mailboxes)) or 'none'}; "
            f"sends issued: {main} from MAIN, {t['proc_sends']:,} from handlers",
        ]
        unknown = s["main_unknown_pes"]
        if unknown:
            lines.append(
                f"  MAIN UNKNOWN on {len(unknown)} of {s['num_pes']} PEs "
                f"(PE {format_ranges(unknown)}): no MAIN line; MAIN values left empty, not 0"
            )
        if self.all_zero:
            lines.append(f"  ALL COUNTERS ARE ZERO ({', '.join(self.counters)}): see the warning")
        for name in self.counters:
            c = t["counters"][name]
            if c["all_zero"]:
                lines.append(f"  {name}: 0 everywhere")
                continue
            m = s["imbalance"][name]
            per = "n/a" if c["per_message"] is None else f"{c['per_message']:,.1f}"
            if c["total"] is None or m is None:
                lines.append(
                    f"  {name}: PROC {c['proc']:,} ({per} per message); MAIN and total "
                    "unknown (no MAIN line on some PEs)"
                )
                continue
            ratio = "n/a" if m["max_over_mean"] is None else f"{m['max_over_mean']:.2f}"
            lines.append(
                f"  {name}: {c['total']:,} (MAIN {c['main']:,}, PROC {c['proc']:,}, "
                f"{per} per message); per PE max {m['max']:,.0f} (PE {m['max_pe']}), "
                f"max/mean {ratio}"
            )
        m = s["imbalance"]["messages"]
        ratio = "n/a" if m["max_over_mean"] is None else f"{m['max_over_mean']:.2f}"
        lines.append(
            f"  messages handled per PE: mean {m['mean']:,.1f}, max {m['max']:,.0f} "
            f"(PE {m['max_pe']}), max/mean {ratio}"
        )
        skipped = self.report.lines_skipped
        if skipped:
            lines.append(f"  {skipped:,} line(s) skipped (details in the summary JSON)")
        return lines


class _MaxSender:
    """Remembers the largest src_pe of the chunks it passes on (PEs that only send)."""

    def __init__(self) -> None:
        self.max_pe = -1

    def track(self, chunks: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for chunk in chunks:
            if len(chunk):
                self.max_pe = max(self.max_pe, int(chunk["src_pe"].max()))
            yield chunk


def build_papi_view(
    chunks: Iterable[pd.DataFrame],
    report: ReadReport,
    *,
    path: str,
    num_pes: int | None = None,
    counters: Sequence[str] | None = None,
) -> PapiView:
    """Reduce PAPI chunks (one pass) into a :class:`PapiView`.

    ``report`` must be the one the chunks' reader fills.
    """
    senders = _MaxSender()
    regions = papi_regions(senders.track(chunks))
    return _view(regions, senders.max_pe, report, path=path, num_pes=num_pes, counters=counters)


def _view(
    regions: pd.DataFrame,
    max_src_pe: int,
    report: ReadReport,
    *,
    path: str,
    num_pes: int | None,
    counters: Sequence[str] | None,
) -> PapiView:
    """The view of a trace's region table (``max_src_pe``: its largest sender)."""
    names = counter_names(regions)
    if not len(regions):
        names = check_counter_names(counters)
        regions = papi_regions([], counters=names)
    if num_pes is None:
        limit = report.pe_limit  # a stray file far beyond the others is no PE of the run
        from_files = (
            max(
                (
                    pe
                    for pe in report.file_pes()  # (files held as columns stay so)
                    if pe is not None and (limit is None or pe < limit)
                ),
                default=-1,
            )
            + 1
        )
        seen = int(regions["pe"].max()) + 1 if len(regions) else 0
        n = max(from_files, seen, max_src_pe + 1, 1)
        report.num_pes = n
        report.num_pes_inferred = True
        report.note(
            f"inferred --num-pes {n} from the file names and PE ids "
            "(pass --num-pes to check the trace against the run)"
        )
        note_missing_pe_files(report, n)
    else:
        n = num_pes
        report.num_pes = num_pes
    warn_far_mailboxes(regions, report)
    pes = papi_breakdown(regions, num_pes=n)
    zeros = tuple(zero_counters(pes))
    if zeros:
        report.warn(zero_counter_message(zeros, every=len(zeros) == len(names)))
    return PapiView(
        path=path,
        report=report,
        counters=tuple(names),
        regions=regions,
        pes=pes,
        zero_counters=zeros,
    )


#: Far mailboxes named one by one in warnings (the others are summed up).
_FAR_MAILBOXES_NAMED = 5


def warn_far_mailboxes(regions: pd.DataFrame, report: ReadReport) -> None:
    """Warn of mailbox ids far beyond the others: a corrupt line, most likely.

    A selector's mailboxes are numbered from 0 and are a few; a mailbox of
    1,999,999,999 among mailboxes 0 and 1 is a damaged digit, not a
    mailbox. The rule is the PE ids' (:func:`~actorprof.read.stray_pes`):
    ids from ``max(64, 2 x (the id before + 1))`` on, whose lines are fewer
    than those of the ids below, and any id from 2^20 on; and their lines
    are a handful (under 1 % of the others'). Such lines are still counted
    (as that mailbox's PROC lines: the totals stay the line counts); each
    such mailbox is named with the first file and line that holds it. The
    check reads the reduced regions, so every read route gives the same.
    """
    from ..analyze.matrix import unique_ints
    from ..read import stray_pes
    from ..read.papi import first_line_with_mailbox

    mailbox = regions["mailbox"].to_numpy(np.int64)
    proc = mailbox >= 0
    if not proc.any() or int(mailbox[proc].max()) < 64:
        return
    region_lines = regions["lines"].to_numpy()
    boxes, at = unique_ints(mailbox[proc], inverse=True)
    lines = np.bincount(at, weights=region_lines[proc], minlength=len(boxes))
    stray = stray_pes(boxes, lambda: np.rint(lines).astype(np.int64))
    if stray is None:
        return
    above = boxes >= stray.limit
    if lines[above].sum() * 100 >= lines[~above].sum():
        return  # more than a handful of lines: a mailbox of the program, however numbered
    far = boxes[above]
    first, last = stray.first, stray.last  # (some mailbox is below: it has lines)
    others = f"mailbox {first}" if first == last else f"mailboxes {first}-{last}"
    paths = dict(zip(report.file_pes(), report.file_paths(), strict=True))
    pe = regions["pe"].to_numpy(np.int64)
    for box in far[:_FAR_MAILBOXES_NAMED].tolist():
        rows = mailbox == box
        held = np.unique(pe[rows])
        count = int(region_lines[rows].sum())
        path = paths.get(int(held[0]))
        line = None if path is None else first_line_with_mailbox(path, box)
        where = f"PE {held[0]}" if path is None else path + ("" if line is None else f":{line}")
        report.warn(
            f"{where}: mailbox {box:,} is far beyond {others}: a corrupt "
            f"line? Its {count:,} line(s) on {len(held):,} PE(s) are counted as the PROC "
            f"lines of mailbox {box:,}"
        )
    if len(far) > _FAR_MAILBOXES_NAMED:
        report.warn(
            f"{len(far) - _FAR_MAILBOXES_NAMED:,} more mailbox id(s) far beyond the others, "
            f"up to {int(far[-1]):,}: their lines are counted as those mailboxes' PROC lines"
        )


def papi_view(
    path: str | PathLike[str],
    *,
    phase: str | None = None,
    num_pes: int | None = None,
    counters: Sequence[str] | None = None,
    report: ReadReport | None = None,
    engine: Engine | None = None,
    progress: ProgressSink | None = None,
) -> PapiView:
    """Read a run's PAPI trace and derive the PAPI view (one pass).

    Parameters
    ----------
    path
        Run folder or one ``PE<i>_PAPI.csv`` file.
    phase, num_pes, counters
        As :func:`actorprof.iter_papi`.
    report
        Receives the line accounting; when None, skipped data and warnings
        (all-zero counters included) are announced with
        :class:`ActorProfWarning`.
    engine
        Read with :mod:`actorprof.engine` (groups of files in worker
        processes, or on a Dask cluster); None: the plain reader, in this
        process. The view is the same, bit for bit, either way.
    progress
        Told the bytes and files to read and done (e.g. a progress line).

    Returns
    -------
    PapiView

    Raises
    ------
    ActorProfError
        Any read error (file, line and fix in the message).

    Examples
    --------
    >>> view = papi_view("examples/histo_4pe/papi")  # doctest: +SKIP
    >>> view.pes["messages"].tolist()  # doctest: +SKIP
    [10112, 9923, 9925, 10040]
    """
    own = report is None
    report = ReadReport(kind="papi") if report is None else report
    if engine is not None:
        from ..engine.papi import reduce_papi

        reduced = reduce_papi(
            path,
            phase=phase,
            num_pes=num_pes,
            counters=counters,
            report=report,
            engine=engine,
            progress=progress,
        )
        view = _view(
            reduced.regions,
            reduced.max_src_pe,
            report,
            path=str(path),
            num_pes=num_pes,
            counters=counters,
        )
    else:
        chunks = iter_papi(path, phase=phase, num_pes=num_pes, counters=counters, report=report)
        view = build_papi_view(
            track(chunks, progress, planned=report.planned, done=report.done),
            report,
            path=str(path),
            num_pes=num_pes,
            counters=counters,
        )
    if own:
        report.emit_python_warnings()
    return view


# --- files: figures, tables and the summary -------------------------------


def write_papi(view: PapiView, out: Sink, *, by_mailbox: bool, sort: str) -> None:
    phase = ""  # said once, above the panels
    split = "PROC per mailbox" if by_mailbox else "PROC"
    if view.all_zero:
        # no instruction counts: show what the trace still says, and why
        panels = [
            ("messages", "messages handled", f"Messages handled per PE ({split}){phase}"),
            ("num_sends", "sends issued", f"Sends issued per PE (MAIN and {split}){phase}"),
        ]
    else:
        panels = [(c, c, f"{c}: MAIN + {split} per PE{phase}") for c in view.counters]
    unknown = view.main_unknown
    caption = []
    if view.all_zero:
        exactly = "as far as the trace goes" if unknown else "which the trace records exactly"
        caption.append(
            f"All PAPI counters are 0 in this trace ({', '.join(view.counters)}): the machine "
            "gave no hardware counter readings.\nShown instead: messages handled and sends "
            f"issued per PE, {exactly}."
        )
    if unknown:
        caption.append(
            f"MAIN unknown on {len(unknown)} of {view.num_pes} PEs (PE "
            f"{format_ranges(unknown)}): no MAIN line (the job ended before done(0)?).\n"
            "Their MAIN part is not drawn; their messages handled are those written "
            "before the end."
        )
    # built from arrays by papi_figures' function: a figure server builds it without pandas
    out.draw(
        partial(
            bars_figure,
            [
                bars_panel(view.segments(value, by_mailbox=by_mailbox), value_label, title)
                for value, value_label, title in panels
            ],
            sort=sort == "total",
            # room for the explanations
            extra_height=(0.7 if view.all_zero else 0.0) + (0.7 if unknown else 0.0),
            run=(view.path, view.report.phase),
            caption=caption,
        ),
        "bars",
    )
    if not keeps_tables(out):  # the report's figures: no table or summary
        return
    out.csv(view.pes, "pes")
    out.csv(view.regions, "mailboxes", index=False)
    summary = view.summary(files=False)
    summary["files"] = view.report.file_entries()  # in its place; 65,536 files: JSON text
    summary["options"] = {"by_mailbox": by_mailbox, "sort": sort}
    out.json(summary, "summary")
