"""HTML building blocks of the report page: number formats, tables, the stylesheet.

Everything returned is HTML text; every value shown is escaped here.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "CSS",
    "compact",
    "esc",
    "human_bytes",
    "imbalance_table",
    "num",
    "pct",
    "seconds",
    "table",
]


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def num(value: Any, digits: int = 2) -> str:
    """Numbers for people: 160,000; 1.01; 12.3 %; n/a."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value.is_integer() and abs(value) >= 1000:
            return f"{int(value):,}"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}f}"
    return esc(value)


def compact(value: float | None) -> str:
    """1234567 -> 1.23 M (for the cards)."""
    if value is None:
        return "n/a"
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:g}"


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def seconds(value: float | None) -> str:
    if value is None:
        return "n/a"
    if value < 1e-3:
        return f"{value * 1e6:.0f} µs"
    if value < 1:
        return f"{value * 1e3:.1f} ms"
    return f"{value:,.2f} s"


def exact_seconds(value: float | None) -> str:
    """A time measured by the traces' microsecond clock, all its digits (0.391406 s)."""
    return "n/a" if value is None else f"{value:,.6f} s"


def human_bytes(value: int | None) -> str:
    if value is None:
        return "n/a"
    size = float(value)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{value:,} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{value:,} B"  # pragma: no cover


def table(
    header: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "", raw: bool = False
) -> str:
    """An HTML table; cells are escaped unless ``raw`` (then they are HTML already)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{c if raw else esc(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    klass = f' class="{cls}"' if cls else ""
    return f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def imbalance_table(rows: Sequence[tuple[str, Mapping[str, Any] | None]], unit: str = "") -> str:
    """One row per load: mean, median, max (PE), max/mean, CrayPat %, POP, cv, stragglers."""
    out = []
    for label, m in rows:
        if not m:
            continue
        listed = [str(p) for p in m.get("stragglers") or []]
        stragglers = (
            (f"PE {listed[0]}" if len(listed) == 1 else f"PEs {', '.join(listed)}")
            if listed
            else "none"
        )
        out.append(
            [
                label,
                num(m["mean"], 1),
                num(m["median"], 1),
                f"{num(m['max'], 1)} (PE {m['max_pe']})",
                num(m["max_over_mean"]),
                "n/a"
                if m["craypat_imbalance_pct"] is None
                else f"{m['craypat_imbalance_pct']:.1f} %",
                num(m["pop_load_balance"]),
                num(m["cv"]),
                stragglers,
            ]
        )
    header = [
        f"per-PE load{f' ({unit})' if unit else ''}",
        "mean",
        "median",
        "max (PE)",
        "max/mean",
        "CrayPat imb.",
        "POP balance",
        "cv",
        "stragglers",
    ]
    return table(header, out, cls="num")


CSS = """
:root { --ink: #1d2430; --muted: #5b6472; --line: #d9dee5; --bg: #f6f7f9;
  --warn: #b45309; --warn-bg: #fff7ed; --err: #b91c1c; --err-bg: #fef2f2;
  --info: #1d4ed8; --info-bg: #eff6ff; --ok: #15803d; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto,
  "DejaVu Sans", sans-serif; color: var(--ink); background: var(--bg); }
main { max-width: 1240px; margin: 0 auto; padding: 0 24px 48px; }
header.top { background: #1f2a3a; color: #fff; padding: 22px 0 18px; }
header.top .inner { max-width: 1240px; margin: 0 auto; padding: 0 24px; }
header.top h1 { margin: 0 0 4px; font-size: 24px; font-weight: 650; }
header.top .run { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 14px;
  color: #cfd8e3; word-break: break-all; }
header.top .meta { color: #9fb0c3; font-size: 13px; margin-top: 6px; }
nav { position: sticky; top: 0; z-index: 1; background: #fff; border-bottom: 1px solid var(--line);
  margin: 0 -24px 0; padding: 8px 24px; font-size: 14px; display: flex; flex-wrap: wrap;
  gap: 2px 16px; }
nav a { color: var(--info); text-decoration: none; white-space: nowrap; }
nav a.absent { color: var(--muted); text-decoration: line-through; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px;
  padding: 8px 22px 18px; margin-top: 20px; }
h2 { font-size: 20px; margin: 12px 0 10px; }
h3 { font-size: 16px; margin: 18px 0 8px; color: #2b3645; }
p { margin: 6px 0; }
.muted { color: var(--muted); }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 12px;
  margin: 8px 0 12px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px;
  background: #fbfcfd; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase;
  letter-spacing: .04em; }
.card .value { font-size: 20px; font-weight: 650; margin-top: 2px; overflow-wrap: anywhere; }
.card .sub { color: var(--muted); font-size: 12px; }
.chips > span { display: inline-block; border-radius: 999px; padding: 1px 10px;
  margin: 2px 4px 2px 0; font-size: 13px; border: 1px solid var(--line); }
.chips > .found { background: #ecfdf3; border-color: #b7e4c7; color: var(--ok); }
.chips > .absent { background: #f3f4f6; color: var(--muted); }
.chips > .error { background: var(--err-bg); border-color: #fecaca; color: var(--err); }
ul.findings { list-style: none; padding: 0; margin: 6px 0; }
ul.findings li { border-left: 4px solid var(--info); background: var(--info-bg);
  padding: 7px 12px; margin: 6px 0; border-radius: 0 6px 6px 0; }
ul.findings li.warning { border-color: var(--warn); background: var(--warn-bg); }
ul.findings li.error { border-color: var(--err); background: var(--err-bg); }
.sev { display: inline-block; min-width: 84px; font-size: 11px; font-weight: 700;
  text-transform: uppercase; letter-spacing: .05em; }
li.info .sev { color: var(--info); } li.warning .sev { color: var(--warn); }
li.error .sev { color: var(--err); }
.rule { float: right; color: var(--muted); font-size: 12px; margin-left: 12px; }
.figs { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(520px, 100%), 1fr));
  gap: 14px;
  align-items: start; }
figure { margin: 6px 0; border: 1px solid var(--line); border-radius: 6px; padding: 8px;
  background: #fff; text-align: center; }
figure.wide { grid-column: 1 / -1; }
figure img { max-width: 100%; height: auto; cursor: zoom-in; }
#lightbox { position: fixed; inset: 0; z-index: 10; overflow: auto; padding: 24px;
  background: rgba(15, 20, 30, .88); cursor: zoom-out; }
#lightbox[hidden] { display: none; }
#lightbox img { display: block; margin: 0 auto; max-width: none; background: #fff; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 4px; }
table { border-collapse: collapse; margin: 8px 0 12px; font-size: 14px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: left;
  vertical-align: top; }
th { background: #f3f5f8; font-weight: 600; }
table.num td:not(:first-child) { text-align: right; font-variant-numeric: tabular-nums;
  white-space: nowrap; }
details { margin: 8px 0; } summary { cursor: pointer; color: var(--info); }
.scroll { overflow-x: auto; }
.absentbox { border: 1px dashed var(--line); border-radius: 6px; padding: 10px 14px;
  color: var(--muted); background: #fafbfc; }
.error-box { border: 1px solid #fecaca; background: var(--err-bg); color: var(--err);
  border-radius: 6px; padding: 10px 14px; }
.apm { margin: 6px 0 10px; }
.apm-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 14px; font-size: 14px;
  margin-bottom: 6px; }
.apm-bar label { margin-left: auto; }
.apm-crumbs a { color: var(--info); }
.apm-stage { position: relative; display: grid; grid-template-columns: max-content minmax(0, 640px);
  justify-content: start;
  font-size: 12px; color: var(--muted); }
.apm-x { display: flex; justify-content: space-between; padding: 0 2px; }
.apm-y { display: flex; flex-direction: column; justify-content: space-between;
  align-items: flex-end; padding: 2px 4px 2px 0; }
.apm-yl { writing-mode: vertical-rl; }
.apm-canvas { display: block; width: 100%; height: auto; image-rendering: pixelated;
  border: 1px solid var(--line); cursor: crosshair; }
.apm-tip { position: absolute; z-index: 2; width: max-content; max-width: 420px;
  pointer-events: none; background: #1f2a3a; color: #fff; font-size: 13px; padding: 6px 9px;
  border-radius: 6px; box-shadow: 0 2px 8px rgba(0, 0, 0, .25); }
.apm-tip[hidden] { display: none; }
.apm-legend { font-size: 13px; color: var(--muted); margin-top: 4px; }
.apm-ramp { display: inline-block; width: 160px; height: 10px; margin: 0 6px;
  vertical-align: middle; background: linear-gradient(90deg, #440154, #3a528b, #20908c,
  #5ec961, #fde724); }
.apm-hover { min-height: 1.5em; margin: 4px 0; }
.apm-note:empty { display: none; }
.apm-note { border: 1px solid #fde68a; background: var(--warn-bg); border-radius: 6px;
  padding: 8px 12px; font-size: 14px; }
footer { color: var(--muted); font-size: 12px; margin-top: 24px; }
"""
