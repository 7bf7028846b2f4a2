"""The self-contained HTML page of ``actorprof report``, and its files.

:class:`FigureCollector` stands in for :class:`~actorprof.output.OutputWriter`
when the commands' figure helpers draw: it keeps each figure as PNG (or SVG)
bytes instead of writing a file. :func:`render_report` turns a run report summary
(``report.json``) and those figures into one HTML page: figures embedded as
base64 PNG, CSS inline, one small inline script (click a figure to see it at
full size), nothing fetched from the network.
"""

from __future__ import annotations

import base64
import io
import itertools
import os
import pickle
import re
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .._version import __version__
from ..errors import ActorProfError
from ..write import OutputWriter, suptitle_of
from ._html import (
    CSS,
    compact,
    esc,
    exact_seconds,
    human_bytes,
    imbalance_table,
    num,
    pct,
    seconds,
    table,
)
from .traces import UNNAMED

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ._matrix import MatrixExplorer

__all__ = [
    "EmbeddedFigure",
    "FigureCollector",
    "FigureFiles",
    "NamedOutputWriter",
    "render_report",
]

#: Resolution of the embedded figures (pixels per inch).
EMBED_DPI = 100
#: Formats a figure can be embedded in.
EMBED_FORMATS = ("png", "svg")
#: At most this many files are listed in a coverage table (report.json has them all).
MAX_COVERAGE_ROWS = 200


@dataclass(frozen=True)
class EmbeddedFigure:
    """One figure of the report, as PNG or SVG bytes."""

    section: str
    scope: str | None
    name: str
    caption: str
    data: bytes
    fmt: str
    width_px: int
    height_px: int

    @property
    def mime(self) -> str:
        return "image/svg+xml" if self.fmt == "svg" else "image/png"

    def data_uri(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "scope": self.scope,
            "name": self.name,
            "caption": self.caption,
            "format": self.fmt,
            "width_px": self.width_px,
            "height_px": self.height_px,
            "size_bytes": len(self.data),
        }


class FigureFiles(OutputWriter):
    """The report's figures as files beside report.html (``actorprof report --figures``).

    Named as the kind commands name theirs, ``<kind>_<chart>.<ext>``, with
    the phase after the kind for a named phase (``logical_bfs_heatmap.png``).
    """

    def __init__(
        self, directory: str | os.PathLike[str], *, fmt: str = "png", dpi: int | None = None
    ) -> None:
        super().__init__(directory, kind="", fmt=fmt, dpi=dpi)

    def path(self, name: str, ext: str) -> Path:
        return self.directory / f"{name}.{ext}"

    @staticmethod
    def stem(section: str, scope: str | None, name: str) -> str:
        """``<section>[_<phase>]_<name>``; the unnamed phase adds nothing."""
        if not scope or scope == UNNAMED:
            return f"{section}_{name}"
        return f"{section}_{_FILE_UNSAFE.sub('_', scope)}_{name}"


_FILE_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass
class FigureCollector:
    """An OutputWriter look-alike that keeps figures (PNG or SVG) and drops tables.

    Set ``section`` and ``scope`` before calling a command's ``write_*``
    helper; every figure it draws is appended to ``figures``, and written as
    a file too when ``files`` is given (rendered once when both resolutions
    agree).
    """

    fmt: str = "png"
    dpi: int = EMBED_DPI
    #: Tables and summaries are dropped: the writers need not make them (Sink).
    tables: ClassVar[bool] = False
    section: str = ""
    scope: str | None = None
    figures: list[EmbeddedFigure] = field(default_factory=list)
    files: FigureFiles | None = None
    #: the interactive matrix of each logical phase (by phase name)
    matrices: dict[str, MatrixExplorer] = field(default_factory=dict)
    #: Figures given to :meth:`draw` are built and rendered by a figure server
    #: (write.py) forked here, and its children, on the idle CPUs (not with
    #: ``files``): :meth:`finish` collects them. Make the collector first: the
    #: server imports the plotting stack while this process reads.
    background: bool = False
    #: Modules the server imports before its first figure (the builders'
    #: plotting stack): else every child imports them anew.
    warm: Sequence[str] = ()
    _pages: _PageFigures | None = field(default=None, init=False, repr=False)
    _places: list[EmbeddedFigure] = field(default_factory=list, init=False, repr=False)
    _failed: list[tuple[str, str | None, BaseException]] = field(
        default_factory=list, init=False, repr=False
    )
    # by id of a place: the place (kept alive: its id stays its own) and its figure
    _done: dict[int, tuple[EmbeddedFigure, EmbeddedFigure | None]] = field(
        default_factory=dict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        if self.fmt not in EMBED_FORMATS:
            raise ValueError(f"embedded figures are {' or '.join(EMBED_FORMATS)}, got {self.fmt!r}")
        if self.files is not None and self.files.fmt != self.fmt:
            raise ValueError(f"figure files are {self.files.fmt}, the page's {self.fmt}")
        if self.background and self.files is None:
            try:
                pages = _PageFigures(self.fmt, self.warm)
            except (OSError, ActorProfError):  # no temporary folder to draw in: drawn here
                return
            if pages.serving:
                self._pages = pages
            else:  # no CPU to spare, or threads already run: drawn here
                pages.close()

    def figure(self, fig: Figure, name: str, *, dpi: int | None = None) -> str:
        embedded = self._embedded(fig, name, dpi)
        self.figures.append(embedded)
        if self.files is not None:
            stem = FigureFiles.stem(self.section, self.scope, name)
            if self.files.dpi == (self.dpi if dpi is None else dpi):
                self.files.data(embedded.data, stem, self.fmt)
            else:
                self.files.figure(fig, stem)
        return name

    def _embedded(self, fig: Figure, name: str, dpi: int | None) -> EmbeddedFigure:
        resolution = self.dpi if dpi is None else dpi
        return EmbeddedFigure(self.section, self.scope, name, *_rendered(fig, self.fmt, resolution))

    def draw(self, build: Callable[[], Figure], name: str, *, dpi: int | None = None) -> str:
        """Keep the figure ``build()`` makes; by the figure server when
        ``background`` started one (its place in ``figures`` is kept:
        :meth:`finish`)."""
        if self._pages is None:
            return self.figure(build(), name, dpi=dpi)
        self._pages.draw(build, str(len(self._places)), dpi=self.dpi if dpi is None else dpi)
        place = EmbeddedFigure(self.section, self.scope, name, "", b"", self.fmt, 0, 0)
        self.figures.append(place)  # its place in the page, filled by finish()
        self._places.append(place)
        return name

    def finish(self) -> list[tuple[str, str | None, BaseException]]:
        """Wait for the figures drawn in the background; the failed ones
        (section, scope, error), in the order they were given, are dropped
        from ``figures`` and returned."""
        if self._pages is not None:
            pages, places, self._places = self._pages, self._places, []
            failed = pages._failures(block=True)
            for i, place in enumerate(places):
                target = pages.path(str(i), "")
                if target in failed:
                    self._done[id(place)] = (place, None)
                    self._failed.append((place.section, place.scope, failed[target]))
                    continue
                # our own file, in our own private folder: the figure's parts
                rendered = pickle.loads(target.read_bytes())
                drawn = EmbeddedFigure(place.section, place.scope, place.name, *rendered)
                self._done[id(place)] = (place, drawn)  # put in its place by drawn() below
            pages.close()
            self._pages = None
        self.figures[:] = self.drawn(self.figures)
        failed_figures, self._failed = self._failed, []
        return failed_figures

    def drawn(self, figures: list[EmbeddedFigure]) -> list[EmbeddedFigure]:
        """``figures`` (taken from ``figures`` before :meth:`finish`) with each
        place of a background figure replaced by the figure, or dropped when
        it failed."""
        out = []
        for f in figures:
            if id(f) in self._done:
                done = self._done[id(f)][1]
                if done is not None:
                    out.append(done)
            else:
                out.append(f)
        return out

    def csv(self, frame: pd.DataFrame, name: str, *, index: bool = True) -> str:
        return name  # tables are in report.json, not in the page

    def csv_parts(self, frames: Iterable[pd.DataFrame], name: str, *, index: bool = True) -> str:
        return name  # nor tables built a block at a time (the frames are never built)

    def json(self, data: Any, name: str) -> str:
        return name


def _rendered(fig: Figure, fmt: str, dpi: int) -> tuple[str, bytes, str, int, int]:
    """A figure's caption, its bytes in ``fmt`` at ``dpi``, and its size in pixels."""
    buffer = io.BytesIO()
    if fmt == "png":  # one draw, as the commands' figure files
        from ..write import save_png  # here: looked up when called

        save_png(fig, buffer, dpi=dpi)
    else:
        fig.savefig(buffer, format=fmt, dpi=dpi)
    width, height = (round(float(v) * dpi) for v in fig.get_size_inches())
    return _caption(fig), buffer.getvalue(), fmt, width, height


class _PageFigures(OutputWriter):
    """The page's figures, drawn by a figure server (``OutputWriter``'s
    ``warm``) into a private temporary folder: file ``<k>`` holds the
    :func:`_rendered` parts of the ``k``-th figure, pickled."""

    def __init__(self, fmt: str, warm: Sequence[str]) -> None:
        folder = tempfile.mkdtemp(prefix="actorprof-figures-")
        self._cleanup = weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)
        super().__init__(folder, kind="", fmt=fmt, background=True, warm=warm)

    @property
    def serving(self) -> bool:
        """Whether the figure server runs."""
        return self._server is not None

    def path(self, name: str, ext: str) -> Path:
        return self.directory / name

    def figure(self, fig: Figure, name: str, *, dpi: int | None = None) -> Path:
        """Drawn here (a builder that does not pickle): its error is the caller's."""
        return self._write_file(self.path(name, self.fmt), self._figure_writer(fig, dpi))

    def _figure_writer(self, fig: Figure, dpi: int | None) -> Callable[[Any], None]:
        rendered = _rendered(fig, self.fmt, self.dpi if dpi is None else dpi)
        return lambda handle: handle.write(pickle.dumps(rendered, pickle.HIGHEST_PROTOCOL))

    def close(self) -> None:
        """Stop the server (when still running) and remove the folder."""
        if self._server is not None:
            self._failures(block=True)
        self._cleanup()


#: What each figure shows, by (section, name); the figure's own title is its alt text.
CAPTIONS = {
    ("logical", "heatmap"): "Messages from each source PE (rows) to each destination PE "
    "(columns); totals sent (right column) and received (bottom row).",
    ("logical", "violin"): "Messages sent and received per PE: the spread over PEs, the "
    "median and the busiest PE.",
    ("logical", "loads"): "Messages sent and received by each PE in PE id order: a trend "
    "with the PE id or a single hot PE shows here.",
    ("timeline", "rate"): "Send rate of all PEs over time (top) and messages sent by each PE "
    "per time bin (bottom), on the senders' clocks.",
    ("papi", "bars"): "Per PE, MAIN (local work and message construction) and PROC (message "
    "handling) stacked; when the counters are zero, messages handled and sends issued.",
    ("overall", "stacked"): "Per PE, T_MAIN, T_COMM and T_PROC in cycles (left) and as "
    "fractions of T_TOTAL (right).",
    ("physical", "heatmap"): "Buffers sent on each link, one panel per send type: local_send "
    "within a node, nonblock_send across nodes, nonblock_progress completing them.",
    ("physical", "violin"): "Buffers sent and received per PE, per send type.",
    ("aggregation", "heatmap"): "Routed items per physical buffer on each link: the logical "
    "messages routed over the Conveyors topology (every hop).",
    ("aggregation", "bytes"): "Bytes each PE sent: the logical payload beside the physical "
    "bytes on the wire.",
}


def _caption(fig: Figure) -> str:
    suptitle = suptitle_of(fig)
    # the page names the run once: its line above every figure says nothing new here
    lines = suptitle.splitlines()
    if lines and lines[0].startswith("run "):
        suptitle = "\n".join(lines[1:])
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    text = suptitle or (titles[0] if titles else "")
    return " ".join(text.split())


def _description(f: EmbeddedFigure) -> str:
    return CAPTIONS.get((f.section, f.name), f.caption)


class NamedOutputWriter(OutputWriter):
    """OutputWriter whose name ``""`` means ``<kind>.<ext>`` (``report.json``)."""

    def path(self, name: str, ext: str) -> Path:
        return self.directory / (f"{self.kind}.{ext}" if not name else f"{self.kind}_{name}.{ext}")


# --------------------------------------------------------------------------- page


_SECTION_TITLES = {
    "glance": "At a glance",
    "findings": "Findings",
    "logical": "Logical trace: messages between PEs",
    "timeline": "Timeline: messages sent over time",
    "papi": "PAPI trace: work per PE in MAIN and PROC",
    "overall": "Overall profile: where time goes per PE",
    "physical": "Physical trace: buffers on the network",
    "aggregation": "Aggregation: logical messages vs physical buffers",
    "coverage": "Coverage: every line of every file",
    "rules": "How the findings are decided",
}


def render_report(
    summary: Mapping[str, Any],
    figures: Sequence[EmbeddedFigure],
    matrices: Mapping[str, MatrixExplorer] | None = None,
) -> str:
    """The report page: ``summary`` is :meth:`RunReport.summary`, figures from the
    collector, and the interactive matrix of each logical phase (``matrices``)."""
    from ._matrix import EXPLORER_JS

    read = set(summary["kinds_read"])
    explorers = matrices or {}
    parts = [
        _glance(summary),
        _findings(summary),
        _logical(summary, figures, explorers) if "logical" in read else _absent(summary, "logical"),
    ]
    if summary.get("timeline"):
        parts.append(_timeline(summary, figures))
    parts.append(_papi(summary, figures) if "papi" in read else _absent(summary, "papi"))
    parts.append(_overall(summary, figures) if "overall" in read else _absent(summary, "overall"))
    parts.append(
        _physical(summary, figures) if "physical" in read else _absent(summary, "physical")
    )
    if summary.get("aggregation"):
        parts.append(_aggregation(summary, figures))
    parts.append(_coverage(summary))
    parts.append(_rules(summary))
    nav = []
    for key, title in _SECTION_TITLES.items():
        if key == "timeline" and not summary.get("timeline"):
            continue
        if key == "aggregation" and not summary.get("aggregation"):
            continue
        short = title.split(":")[0]
        klass = ' class="absent"' if key in summary["kinds_absent"] else ""
        nav.append(f'<a href="#{key}"{klass}>{esc(short)}</a>')
    kinds = ", ".join(summary["kinds_read"]) or "none"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>actorprof report: {esc(summary['run'])}</title>"
        f"<style>{CSS}</style></head><body>"
        '<header class="top"><div class="inner"><h1>actorprof report</h1>'
        f'<div class="run">{esc(summary["run"])}</div>'
        f'<div class="meta">traces read: {esc(kinds)} · actorprof {esc(__version__)}</div>'
        "</div></header><main>"
        f"<nav>{''.join(nav)}</nav>"
        + "".join(parts)
        + "<footer>Written by actorprof "
        + esc(__version__)
        + ". This page is self-contained: figures are embedded, nothing is fetched. "
        "Every number is in report.json next to it.</footer>"
        f"</main>{LIGHTBOX}{EXPLORER_JS if explorers else ''}</body></html>\n"
    )


#: Click a figure: it opens at full size (scroll to pan) over the page; click
#: or Escape closes it. Inline and offline, like everything on the page.
#: ``report.html#enlarge`` opens the first figure (what the browser test checks).
LIGHTBOX = (
    '<div id="lightbox" hidden title="click or Esc to close"></div>'
    "<script>(function () {"
    "var box = document.getElementById('lightbox'), big = document.createElement('img');"
    "box.appendChild(big);"
    "function close() { box.hidden = true; big.removeAttribute('src'); }"
    "document.querySelectorAll('figure img').forEach(function (img) {"
    "img.title = 'click to enlarge';"
    "img.addEventListener('click', function () {"
    "big.src = img.src; big.alt = img.alt; box.hidden = false; box.scrollTo(0, 0); }); });"
    "box.addEventListener('click', close);"
    "document.addEventListener('keydown', function (e) { if (e.key === 'Escape') close(); });"
    # test hook: report.html#enlarge clicks the first figure
    "var first = document.querySelector('figure img');"
    "if (first && /[#&]enlarge/.test(location.hash)) first.click();"
    "})();</script>"
)


def _section(key: str, body: str, *, title: str | None = None) -> str:
    return f'<section id="{key}"><h2>{esc(title or _SECTION_TITLES[key])}</h2>{body}</section>'


def _card(label: str, value: str, sub: str = "") -> str:
    sub_html = f'<div class="sub">{esc(sub)}</div>' if sub else ""
    return (
        f'<div class="card"><div class="label">{esc(label)}</div>'
        f'<div class="value">{esc(value)}</div>{sub_html}</div>'
    )


def _glance(s: Mapping[str, Any]) -> str:
    g = s["at_a_glance"]
    cards = [
        _card("PEs", num(g["num_pes"]), f"from the {g['num_pes_from']} trace"),
        _card("nodes", num(g["num_nodes"])),
    ]
    if g["messages"] is not None:
        cards.append(_card("messages", num(g["messages"]), "logical sends"))
        cards.append(_card("bytes", human_bytes(g["bytes"]), f"{num(g['bytes'])} B payload"))
    if g["duration_s"] is not None:
        cards.append(_card("duration", exact_seconds(g["duration_s"]), "first to last send"))
    if g["messages_handled"] is not None:
        cards.append(_card("messages handled", num(g["messages_handled"]), "PAPI trace"))
    if g["t_total_max_cycles"] is not None:
        cards.append(
            _card(
                "T_TOTAL",
                compact(g["t_total_max_cycles"]),
                f"{num(g['t_total_max_cycles'])} cycles, slowest PE",
            )
        )
    if g["physical_buffers"] is not None:
        cards.append(_card("buffers", num(g["physical_buffers"]), "physical sends"))
        cards.append(_card("wire bytes", human_bytes(g["physical_bytes"]), "physical trace"))
    chips = []
    for kind in ("logical", "papi", "overall", "physical"):
        if kind in s["errors"]:
            chips.append(f'<span class="error">{kind}: unreadable</span>')
        elif kind in s["kinds_read"]:
            where = s["locations"].get(kind)
            at = "" if where in (None, ".") else f" <code>{esc(where)}</code>"
            chips.append(f'<span class="found">{kind} ✓{at}</span>')
        else:
            chips.append(f'<span class="absent">{kind}: absent</span>')
    absent = ""
    if s["kinds_absent"]:
        items = "".join(
            f"<li><b>{esc(k)}</b>: {esc(v)}</li>" for k, v in s["how_to_get_absent"].items()
        )
        absent = (
            f'<p class="muted">Absent from this run (partial report): '
            f'{esc(", ".join(s["kinds_absent"]))}.</p><ul class="muted">{items}</ul>'
        )
    by_kind = g.get("num_pes_by_kind")
    mismatch = (
        ""
        if not by_kind
        else '<p class="error-box">The traces disagree on the PE count: '
        + esc(", ".join(f"{k} {n}" for k, n in by_kind.items()))
        + "</p>"
    )
    notes = "".join(f'<p class="muted">{esc(n)}</p>' for n in s.get("notes") or [])
    return _section(
        "glance",
        f'<div class="cards">{"".join(cards)}</div><div class="chips">{"".join(chips)}</div>'
        + mismatch
        + absent
        + notes,
    )


def _findings(s: Mapping[str, Any]) -> str:
    items = []
    for f in s["findings"]:
        items.append(
            f'<li class="{esc(f["severity"])}"><span class="sev">{esc(f["severity"])}</span>'
            f"{esc(f['text'])}"
            f'<span class="rule">{esc(f["rule"])} · {esc(f["kind"])}</span></li>'
        )
    body = (
        f'<ul class="findings">{"".join(items)}</ul>'
        if items
        else '<p class="muted">No rule fired: nothing stands out in these numbers.</p>'
    )
    counts = {
        sev: sum(f["severity"] == sev for f in s["findings"])
        for sev in ("error", "warning", "info")
    }
    intro = (
        f'<p class="muted">{counts["error"]} error(s), {counts["warning"]} warning(s), '
        f'{counts["info"]} note(s); the thresholds are listed <a href="#rules">below</a>.</p>'
    )
    return _section("findings", intro + body)


def _figs(figures: Sequence[EmbeddedFigure], section: str, scope: str | None = None) -> str:
    shown = [f for f in figures if f.section == section and (scope is None or f.scope == scope)]
    if not shown:
        return ""
    out = []
    for f in shown:
        wide = ' class="wide"' if f.width_px > 1.6 * f.height_px or f.width_px >= 1000 else ""
        out.append(
            f'<figure{wide}><img src="{f.data_uri()}" alt="{esc(f.caption)}" '
            f'width="{f.width_px}" height="{f.height_px}"><figcaption>{esc(_description(f))}'
            "</figcaption></figure>"
        )
    return f'<div class="figs">{"".join(out)}</div>'


def _absent(s: Mapping[str, Any], kind: str) -> str:
    if kind in s["errors"]:
        body = (
            f'<p class="error-box">The {esc(kind)} trace is here but could not be read: '
            f"{esc(s['errors'][kind])}</p>"
        )
    else:
        body = (
            f'<p class="absentbox">No {esc(kind)} trace in this run. '
            f"{esc(s['how_to_get_absent'].get(kind, ''))}.</p>"
        )
    return _section(kind, body)


def _phase_heading(name: str, several: bool) -> str:
    return f"<h3>Phase {esc(name)}</h3>" if several else ""


def _logical(
    s: Mapping[str, Any],
    figures: Sequence[EmbeddedFigure],
    explorers: Mapping[str, MatrixExplorer],
) -> str:
    phases = s["logical"]["phases"]
    several = len(phases) > 1
    body = []
    for name, p in phases.items():
        t = p["totals"]
        loc = p["locality"]
        body.append(_phase_heading(name, several))
        body.append(
            f"<p>{num(t['messages'])} messages, {num(t['bytes'])} bytes, {p['num_pes']} PEs "
            f"on {p['num_nodes']} node(s); intra-node {pct(loc['intra_node_share'])}, "
            f"inter-node {pct(loc['inter_node_share'])}; self-sends {num(t['self_sends'])} "
            f"({pct(t['self_send_share'])}); sends over {exact_seconds(t['duration_s'])}.</p>"
        )
        body.append(_figs(figures, "logical", name))
        if name in explorers:
            body.append("<h3>Explore the matrix</h3>")
            body.append(explorers[name].html(f"matrix-{len(body)}"))
        counts = p["imbalance"]["count"]
        body.append("<h3>Load imbalance</h3>")
        body.append(
            imbalance_table(
                [("sent", counts["sent"]), ("received", counts["received"])], "messages"
            )
        )
        pairs = p["top_pairs"]
        if pairs:
            body.append("<h3>Top pairs</h3>")
            body.append(
                table(
                    ["source PE", "destination PE", "messages", "bytes", "share"],
                    [
                        [
                            str(q["src_pe"]),
                            str(q["dst_pe"]),
                            num(q["messages"]),
                            num(q["bytes"]),
                            pct(q["share"]),
                        ]
                        for q in pairs
                    ],
                    cls="num",
                )
            )
        d = p["direction"]
        off = d["upper"] + d["lower"]
        if off:
            body.append(
                f'<p class="muted">Between different PEs, {pct(d["lower"] / off)} of the '
                f"messages go to a lower PE id and {pct(d['upper'] / off)} to a higher one.</p>"
            )
    return _section("logical", "".join(body))


def _timeline(s: Mapping[str, Any], figures: Sequence[EmbeddedFigure]) -> str:
    t = s["timeline"]
    body = [
        f"<p>{num(t['messages_timed'])} timed messages over {exact_seconds(t['duration_s'])} on "
        f"{t['num_pes']} PEs; peak {num(t['peak_rate_per_s'])} messages/s at "
        f"{seconds(t['peak_at_s'])}. {esc(t['note'][:1].upper() + t['note'][1:])}.</p>"
    ]
    if t["messages_untimed"]:
        body.append(
            f"<p>{num(t['messages_untimed'])} messages have no timestamp (5-column lines).</p>"
        )
    if t.get("messages_outliers"):
        named = "; ".join(
            f"{o['path']}:{o['line']}: {o['time_s']}" for o in t.get("time_outliers") or []
        )
        body.append(
            f"<p>{num(t['messages_outliers'])} messages have an outlier send time (negative, "
            "from 2286 on, or far from the other sends): counted, not placed in time"
            + (f" (e.g. {esc(named)})" if named else "")
            + ".</p>"
        )
    body.append(_figs(figures, "timeline"))
    if len(t["phases"]) > 1:
        body.append(
            table(
                ["phase", "start", "end", "messages"],
                [
                    [p["name"], seconds(p["start_s"]), seconds(p["end_s"]), num(p["messages"])]
                    for p in t["phases"]
                ],
                cls="num",
            )
        )
    return _section("timeline", "".join(body))


def _papi(s: Mapping[str, Any], figures: Sequence[EmbeddedFigure]) -> str:
    phases = s["papi"]["phases"]
    several = len(phases) > 1
    body = []
    for name, p in phases.items():
        t = p["totals"]
        body.append(_phase_heading(name, several))
        body.append(
            f"<p>{num(t['messages'])} messages handled on {p['num_pes']} PEs; sends issued: "
            f"{num(t['main_sends'])} from MAIN, {num(t['proc_sends'])} from handlers.</p>"
        )
        if p["counters_note"]:
            body.append(f'<p class="error-box">{esc(p["counters_note"])}</p>')
        if p.get("main_unknown_note"):
            body.append(f'<p class="error-box">{esc(p["main_unknown_note"])}</p>')
        body.append(_figs(figures, "papi", name))
        rows = [
            [c, num(v["main"]), num(v["proc"]), num(v["total"]), num(v["per_message"], 1)]
            for c, v in t["counters"].items()
        ]
        body.append(
            table(["counter", "MAIN", "PROC", "total", "PROC per message"], rows, cls="num")
        )
        loads = [
            ("messages handled", p["imbalance"]["messages"]),
            ("sends issued", p["imbalance"]["sends"]),
        ]
        loads += [(c, p["imbalance"][c]) for c in p["counters"] if c not in p["zero_counters"]]
        body.append(imbalance_table(loads))
    return _section("papi", "".join(body))


def _overall(s: Mapping[str, Any], figures: Sequence[EmbeddedFigure]) -> str:
    o = s["overall"]
    body = [_figs(figures, "overall")]
    rows = []
    for g in o["groups"]:
        f = g["fractions"]
        pop = g["pop_efficiencies"] or {}
        rows.append(
            [
                g["name"],
                str(g["pes"]),
                num(g["totals"]["t_total_max_cycles"]),
                pct(f["main"]),
                pct(f["comm"]),
                pct(f["proc"]),
                num(pop.get("load_balance")),
                num(pop.get("communication_efficiency")),
                num(pop.get("parallel_efficiency")),
                f"{g['checks']['compared'] - g['checks']['disagreements']} of "
                f"{g['checks']['compared']}",
            ]
        )
    body.append(
        table(
            [
                "label",
                "PEs",
                "T_TOTAL max (cycles)",
                "MAIN",
                "COMM",
                "PROC",
                "POP load balance",
                "POP comm. eff.",
                "POP parallel eff.",
                "checks agree",
            ],
            rows,
            cls="num",
        )
    )
    for g in o["groups"]:
        if g["imbalance"]:
            if len(o["groups"]) > 1:
                body.append(f"<h3>{esc(g['name'])}</h3>")
            body.append(
                imbalance_table(
                    [
                        ("T_TOTAL", g["imbalance"]["t_total"]),
                        ("useful (MAIN + PROC)", g["imbalance"]["useful"]),
                    ],
                    "cycles",
                )
            )
    return _section("overall", "".join(body))


def _physical(s: Mapping[str, Any], figures: Sequence[EmbeddedFigure]) -> str:
    p = s["physical"]
    shape = f"{p['num_pes']} PEs"
    if p["pes_per_node"]:
        shape += f" ({p['num_nodes']} node(s) of {p['pes_per_node']}, from the logical trace)"
    body = [f"<p>{num(p['totals']['all']['calls'])} calls on {esc(shape)}.</p>"]
    fit = p["mesh_fit"]
    if fit is None and p["pes_per_node_candidates"]:
        ks = ", ".join(str(k) for k in p["pes_per_node_candidates"])
        body.append(
            f'<p class="muted">The node layout is unknown (no logical trace); the trace fits a '
            f"2D mesh with {ks} PEs per node.</p>"
        )
    body.append(_figs(figures, "physical"))
    rows = []
    for t in (*p["send_types_present"], "all"):
        v = p["totals"][t]
        rows.append(
            [
                t,
                num(v["buffers"]),
                num(v["bytes"]),
                num(v.get("links")),
                num(v["avg_buffer_bytes"], 0),
            ]
        )
    body.append(table(["send type", "calls", "bytes", "links", "bytes per call"], rows, cls="num"))
    buffers = p["imbalance"]["all"]["buffers"]
    body.append(
        imbalance_table([("sent", buffers["sent"]), ("received", buffers["received"])], "buffers")
    )
    return _section("physical", "".join(body))


def _aggregation(s: Mapping[str, Any], figures: Sequence[EmbeddedFigure]) -> str:
    a = s["aggregation"]
    t = a["totals"]
    c = a.get("comparison") or {}
    verdict = c.get("verdict")
    topology = esc(str(c.get("topology") or a.get("topology_detail") or ""))
    if verdict == "one run":
        head = (
            f"<p>Verdict: <b>one run</b>. Routed over {topology}, the logical messages "
            f"explain all {num(c['links'])} links of the physical trace.</p>"
        )
    elif verdict == "not one run":
        head = (
            f'<p class="error-box">Verdict: <b>not one run</b>. The physical trace has the '
            f"links of {topology}, but the data differ: "
            + esc("; ".join(c.get("reasons") or []))
            + "</p>"
        )
    else:
        head = (
            '<p class="error-box">Verdict: <b>model does not fit</b> (the run is not blamed): '
            + esc("; ".join(c.get("notes") or []))
            + "</p>"
        )
    notes = [n for n in c.get("notes") or [] if verdict != "model does not fit"]
    body = [
        head,
        *(f"<p>{esc(n)}</p>" for n in notes),
        f"<p>{num(t['messages'])} logical messages ({num(t['payload_bytes'])} B payload) "
        f"went out in {num(t.get('buffers'))} buffers and {num(t.get('empty_buffers'))} empty "
        f"flushes ({num(t.get('wire_bytes'))} B on the wire): "
        f"{num(t.get('items_per_buffer'), 1)} routed items per buffer, wire/payload bytes "
        f"{num(t.get('wire_over_payload'))}, average buffer fill {pct(t.get('avg_buffer_fill'))} "
        f"of the {num(t.get('buffer_room_bytes'))} B a buffer holds.</p>",
        _figs(figures, "aggregation"),
    ]
    return _section("aggregation", "".join(body))


def _coverage(s: Mapping[str, Any]) -> str:
    entries = s["coverage"]
    # the entries come a trace (kind and scope) at a time: summed by runs, and
    # the skipped lines from the files that skipped some (196,608 entries at
    # 65,536 PEs: 0.55 s in a loop over each)
    runs = [(k, list(g)) for k, g in itertools.groupby(entries, key=itemgetter("kind", "scope"))]
    scopes: dict[str, set[Any]] = {}
    for (kind, scope), _ in runs:
        scopes.setdefault(kind, set()).add(scope)

    def trace(kind: str, scope: Any) -> str:
        return f"{kind}, phase {scope}" if len(scopes[kind]) > 1 else kind

    totals: dict[str, list[int]] = {}
    for (kind, scope), group in runs:
        row = totals.setdefault(trace(kind, scope), [0, 0, 0, 0, 0])
        row[0] += len(group)
        row[1] += sum(map(itemgetter("lines_read"), group))
        row[2] += sum(map(itemgetter("lines_blank"), group))
    skipped = [e for e in entries if e["lines_skipped"]]
    for e in skipped:
        row = totals[trace(e["kind"], e["scope"])]
        row[3] += sum(e["skipped_expected"].values())
        row[4] += sum(e["skipped_unexpected"].values())
    body = [
        "<p>Every line of every file is read, blank, or skipped with a reason. Program output "
        "in overall.txt and physical.txt is expected; any other skipped line is a problem.</p>",
        table(
            ["trace", "files", "lines read", "blank", "program output", "could not be read"],
            [[k, num(v[0]), num(v[1]), num(v[2]), num(v[3]), num(v[4])] for k, v in totals.items()],
            cls="num",
        ),
    ]
    if skipped:
        body.append("<h3>Files with skipped lines</h3>")
        body.append(_file_table(skipped[:MAX_COVERAGE_ROWS]))
        if len(skipped) > MAX_COVERAGE_ROWS:
            body.append(
                f'<p class="muted">... and {len(skipped) - MAX_COVERAGE_ROWS:,} more '
                "(all in report.json, coverage).</p>"
            )
    if entries:
        shown = entries[:MAX_COVERAGE_ROWS]
        more = (
            ""
            if len(entries) <= MAX_COVERAGE_ROWS
            else f'<p class="muted">First {MAX_COVERAGE_ROWS:,} of {len(entries):,} files; '
            "all are in report.json (coverage).</p>"
        )
        body.append(
            f"<details><summary>Every file ({len(entries):,})</summary>"
            f"{_file_table(shown)}{more}</details>"
        )
    examples = [
        (e["path"], x)
        for e in skipped  # (a file's first skipped lines: only where it skipped some)
        for x in e["first_skipped"]
        if x["reason"] in e["skipped_unexpected"]
    ]
    if examples:
        body.append("<h3>First lines that could not be read</h3>")
        body.append(
            '<div class="scroll">'
            + table(
                ["file:line", "reason", "text"],
                [
                    [
                        f'<span class="mono">{esc(path)}:{x["line"]}</span>',
                        esc(x["reason"]),
                        f'<span class="mono">{esc(x["text"])}</span>',
                    ]
                    for path, x in examples[:20]
                ],
                raw=True,
            )
            + "</div>"
        )
    return _section("coverage", "".join(body))


def _file_table(entries: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for e in entries:
        reasons = {**e["skipped_expected"], **e["skipped_unexpected"]}
        rows.append(
            [
                f'<span class="mono">{esc(e["path"])}</span>',
                esc(e["kind"]),
                num(e["lines_read"]),
                num(e["lines_blank"]),
                num(e["lines_skipped"]),
                esc(", ".join(f"{n:,} {r}" for r, n in reasons.items()) or "-"),
            ]
        )
    header = ["file", "trace", "read", "blank", "skipped", "reasons"]
    return f'<div class="scroll">{table(header, rows, raw=True, cls="num")}</div>'


def _rules(s: Mapping[str, Any]) -> str:
    rows = [
        [r["rule"], "-" if r["threshold"] is None else str(r["threshold"]), r["fires_when"]]
        for r in s["finding_rules"]
    ]
    body = (
        "<p>Each finding is one rule applied to the numbers of this report; the thresholds are "
        "fixed (see docs/report.md).</p>" + table(["rule", "threshold", "fires when"], rows)
    )
    return _section("rules", body)
