"""Plain-language findings from the numbers of a run report.

Every rule reads numbers that ``report.json`` holds (so a finding can always
be checked against the report) and fires on an explicit threshold, defined
once here and listed in the report (``finding_rules``) and in docs/report.md:

============================  =================================================
rule                          fires when
============================  =================================================
``hot_pe``                    the busiest PE's load is >= 2 x the mean load
``balanced``                  the busiest PE's load is <= 1.05 x the mean load
``stragglers``                the robust straggler rule names PEs and the
                              busiest PE is >= 1.10 x the mean
``trend``                     Spearman rank correlation of load vs PE id is
                              <= -0.8 (falls) or >= +0.8 (rises), with at least
                              6 PEs and (max - min) >= 10 % of the mean
``triangular``                <= 1 % of the messages between different PEs go
                              up (lower-triangular) or down (upper-triangular)
``time_share``                MAIN, COMM or PROC is >= 50 % of T_TOTAL on
                              every PE
``pop_efficiency``            a POP efficiency (load balance, communication)
                              is < 0.8
``papi_zero``                 PAPI counters are 0 on every line
``papi_main_unknown``         PEs of the PAPI trace have no MAIN line (the job
                              ended before done(0)): their MAIN is unknown,
                              the loss is stated (messages sent per the
                              logical trace vs handled per PAPI), and the
                              balance of messages handled is not judged
``unread_lines``              lines were skipped for a reason other than
                              expected program output
``missing_pes``               PEs of the run left no trace file or profile line
``tcomm_checks``              printed TCOMM_PROFILING values disagree with the
                              raw lines, or the runtime printed its T_TOTAL
                              warning
``mesh``                      the physical trace does (not) fit the Conveyors
                              2D mesh (only without a logical trace)
``aggregation``               the logical and physical traces went through the
                              Conveyors model: its verdict (one run, not one
                              run, model does not fit) and the topology
``read_error``                a trace kind is present but could not be read
``empty_trace``               a logical trace (phase) holds no message
``time_outliers``             send times are outliers (negative, from 2286
                              on, or far from the other sends: the rule of
                              docs/timeline.md): counted, not placed in time
============================  =================================================

Functions take plain dicts and numbers (the summaries' own shapes), never
views, so each rule is tested on hand-made values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..analyze.imbalance import STRAGGLER_MIN_RATIO as _STRAGGLER_FLOOR
from ..analyze.imbalance import STRAGGLER_RULE

__all__ = [
    "BALANCED_RATIO",
    "HOT_PE_RATIO",
    "POP_EFFICIENCY_MIN",
    "RULES",
    "STRAGGLER_MIN_RATIO",
    "TIME_SHARE_MIN",
    "TREND_MIN_PES",
    "TREND_MIN_SPREAD",
    "TREND_RHO",
    "TRIANGULAR_MAX_SHARE",
    "Finding",
    "aggregation_findings",
    "balance_findings",
    "empty_findings",
    "mesh_findings",
    "missing_pe_findings",
    "papi_findings",
    "papi_main_findings",
    "pop_findings",
    "report_findings",
    "spearman",
    "tcomm_findings",
    "time_outlier_findings",
    "time_share_findings",
    "trend_findings",
    "triangular_findings",
    "unread_findings",
]

Severity = Literal["error", "warning", "info"]

#: ``hot_pe``: the busiest PE carries at least this many times the mean load.
HOT_PE_RATIO = 2.0
#: ``balanced``: the busiest PE carries at most this many times the mean load.
BALANCED_RATIO = 1.05
#: ``stragglers``: straggler PEs are reported only when max/mean reaches this
#: (the same floor as the straggler flag of the tables, load / median).
STRAGGLER_MIN_RATIO = _STRAGGLER_FLOOR
#: ``trend``: |Spearman rho| of load vs PE id at least this.
TREND_RHO = 0.8
#: ``trend``: at least this many PEs (with 4, a perfect order comes by chance 1 time in 12).
TREND_MIN_PES = 6
#: ``trend``: (max - min) / mean at least this (a trend of 1 % is noise).
TREND_MIN_SPREAD = 0.10
#: ``triangular``: at most this share of the off-diagonal messages on the other side.
TRIANGULAR_MAX_SHARE = 0.01
#: ``time_share``: a part of T_TOTAL at least this large on every PE.
TIME_SHARE_MIN = 0.5
#: ``pop_efficiency``: POP efficiencies below this are reported.
POP_EFFICIENCY_MIN = 0.8

#: Every rule and its threshold, as the report lists them.
RULES: list[dict[str, Any]] = [
    {
        "rule": "hot_pe",
        "threshold": HOT_PE_RATIO,
        "fires_when": f"max / mean of a per-PE load >= {HOT_PE_RATIO}",
    },
    {
        "rule": "balanced",
        "threshold": BALANCED_RATIO,
        "fires_when": f"max / mean of a per-PE load <= {BALANCED_RATIO}",
    },
    {
        "rule": "stragglers",
        "threshold": STRAGGLER_MIN_RATIO,
        "fires_when": f"some PE has {STRAGGLER_RULE.removesuffix(', largest first')}, "
        f"and max / mean >= {STRAGGLER_MIN_RATIO}",
    },
    {
        "rule": "trend",
        "threshold": TREND_RHO,
        "fires_when": f"Spearman rank correlation of per-PE load vs PE id <= -{TREND_RHO} "
        f"(falls) or >= {TREND_RHO} (rises), over >= {TREND_MIN_PES} PEs, with "
        f"(max - min) / mean >= {TREND_MIN_SPREAD}",
    },
    {
        "rule": "triangular",
        "threshold": TRIANGULAR_MAX_SHARE,
        "fires_when": f"<= {100 * TRIANGULAR_MAX_SHARE:g} % of the messages between different "
        "PEs go to a higher PE id (lower-triangular) or to a lower one (upper-triangular)",
    },
    {
        "rule": "time_share",
        "threshold": TIME_SHARE_MIN,
        "fires_when": f"T_MAIN, T_COMM or T_PROC is >= {100 * TIME_SHARE_MIN:g} % of T_TOTAL "
        "on every PE",
    },
    {
        "rule": "pop_efficiency",
        "threshold": POP_EFFICIENCY_MIN,
        "fires_when": f"POP load balance or communication efficiency < {POP_EFFICIENCY_MIN}",
    },
    {"rule": "papi_zero", "threshold": 0, "fires_when": "a PAPI counter is 0 on every line"},
    {
        "rule": "papi_main_unknown",
        "threshold": 0,
        "fires_when": "PEs of the PAPI trace have no MAIN line (mailbox -1)",
    },
    {
        "rule": "unread_lines",
        "threshold": 0,
        "fires_when": "lines skipped for a reason other than expected program output",
    },
    {"rule": "missing_pes", "threshold": 0, "fires_when": "PEs without trace file or lines"},
    {
        "rule": "tcomm_checks",
        "threshold": 0,
        "fires_when": "TCOMM_PROFILING values disagree with the raw lines, or the runtime "
        "printed 'T_TOTAL would be much bigger/smaller than T_finish'",
    },
    {
        "rule": "mesh",
        "threshold": None,
        "fires_when": "the physical trace was checked against the Conveyors 2D mesh",
    },
    {
        "rule": "aggregation",
        "threshold": None,
        "fires_when": "both traces went through the Conveyors model (compare_run): its verdict",
    },
    {"rule": "read_error", "threshold": None, "fires_when": "a trace kind could not be read"},
    {"rule": "empty_trace", "threshold": 0, "fires_when": "a logical trace holds no message"},
    {
        "rule": "time_outliers",
        "threshold": 0,
        "fires_when": "send times are negative, from 2286 on, or far outside the other sends "
        "(docs/timeline.md); they are counted but kept out of the timeline",
    },
]

_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Finding:
    """One statement about the run, with the number and threshold behind it."""

    rule: str
    severity: Severity
    kind: str
    text: str
    scope: str | None = None
    value: float | None = None
    threshold: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pes(ids: Sequence[int]) -> str:
    shown = ", ".join(str(p) for p in ids)
    return f"PE {shown}" if len(ids) == 1 else f"PEs {shown}"


def _scoped(scope: str | None) -> str:
    return f" ({scope})" if scope else ""


def balance_findings(
    metrics: Mapping[str, Any],
    *,
    kind: str,
    verb: str,
    noun: str,
    unit: str,
    scope: str | None = None,
) -> list[Finding]:
    """``hot_pe``, ``balanced`` and ``stragglers`` of one per-PE load.

    Parameters
    ----------
    metrics
        An :func:`actorprof.imbalance` dict (``max_over_mean``, ``max``,
        ``mean``, ``max_pe``, ``stragglers``).
    verb, noun, unit
        How the load reads: ``"sends"``, ``"sends"``, ``"messages"`` give
        "PE 0 sends 5.1x the mean (...)", "sends are balanced", "stragglers
        in sends".
    """
    ratio = metrics.get("max_over_mean")
    if ratio is None:
        return []
    where = _scoped(scope)
    out = []
    if ratio >= HOT_PE_RATIO:
        out.append(
            Finding(
                "hot_pe",
                "warning",
                kind,
                f"PE {metrics['max_pe']} {verb} {ratio:.1f}x the mean ({metrics['max']:,.0f} "
                f"{unit} vs a mean of {metrics['mean']:,.0f}){where}",
                scope,
                float(ratio),
                HOT_PE_RATIO,
            )
        )
    elif ratio <= BALANCED_RATIO:
        out.append(
            Finding(
                "balanced",
                "info",
                kind,
                f"{noun} are balanced: the busiest PE (PE {metrics['max_pe']}) is at "
                f"{ratio:.2f}x the mean{where}",
                scope,
                float(ratio),
                BALANCED_RATIO,
            )
        )
    stragglers = list(metrics.get("stragglers") or [])
    if stragglers and ratio >= STRAGGLER_MIN_RATIO:
        out.append(
            Finding(
                "stragglers",
                "warning",
                kind,
                f"stragglers in {noun}: {_pes(stragglers)} (far above the typical PE: "
                f"robust z-score above 3){where}",
                scope,
                float(len(stragglers)),
                STRAGGLER_MIN_RATIO,
            )
        )
    return out


def spearman(values: Sequence[float] | np.ndarray) -> float | None:
    """Spearman rank correlation of ``values`` with their position (the PE id).

    Ties get average ranks; None when the values are all equal or fewer than 2.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size < 2 or np.all(x == x[0]):
        return None
    ranks = pd.Series(x).rank(method="average").to_numpy()
    ids = np.arange(x.size, dtype=np.float64)
    return float(np.corrcoef(ranks, ids)[0, 1])


def trend_findings(
    values: Sequence[float], *, kind: str, noun: str, scope: str | None = None
) -> list[Finding]:
    """``trend``: ``noun`` ("receives") falls or rises with PE id (Spearman rho)."""
    x = np.asarray(values, dtype=np.float64)
    if x.size < TREND_MIN_PES:
        return []
    mean = float(x.mean())
    if mean <= 0 or (float(x.max()) - float(x.min())) / mean < TREND_MIN_SPREAD:
        return []
    rho = spearman(x)
    if rho is None or abs(rho) < TREND_RHO:
        return []
    direction = "fall" if rho < 0 else "rise"
    return [
        Finding(
            "trend",
            "warning",
            kind,
            f"{noun} {direction} with PE id (Spearman rank correlation {rho:+.2f} over "
            f"{x.size} PEs; from {x[0]:,.0f} on PE 0 to {x[-1]:,.0f} on PE {x.size - 1})"
            f"{_scoped(scope)}",
            scope,
            rho,
            -TREND_RHO if rho < 0 else TREND_RHO,
        )
    ]


def triangular_findings(
    shape: Mapping[str, Any], *, kind: str = "logical", scope: str | None = None
) -> list[Finding]:
    """``triangular``, from the message counts above/below the diagonal.

    ``shape`` has ``num_pes``, ``upper`` (messages to a higher PE id) and
    ``lower`` (to a lower PE id).
    """
    upper, lower = int(shape["upper"]), int(shape["lower"])
    off = upper + lower
    if int(shape["num_pes"]) < 3 or off == 0:
        return []
    for name, other, main, towards in (
        ("lower", upper, lower, "lower"),
        ("upper", lower, upper, "higher"),
    ):
        share = other / off
        if share <= TRIANGULAR_MAX_SHARE:
            return [
                Finding(
                    "triangular",
                    "info",
                    kind,
                    f"the logical matrix is {name}-triangular: {100 * main / off:.1f} % of the "
                    f"messages between different PEs go to a {towards} PE id{_scoped(scope)}",
                    scope,
                    share,
                    TRIANGULAR_MAX_SHARE,
                )
            ]
    return []


_PART_NAMES = {"main": "MAIN", "comm": "COMM", "proc": "PROC"}


def time_share_findings(
    fractions: Mapping[str, Sequence[float | None]],
    overall: Mapping[str, float | None] | None = None,
    *,
    scope: str | None = None,
) -> list[Finding]:
    """``time_share``: a part is >= 50 % of T_TOTAL on every PE.

    ``fractions`` maps ``main``/``comm``/``proc`` to the per-PE fractions of
    T_TOTAL (None for PEs with incomplete lines, ignored); ``overall`` to the
    fractions of all T_TOTAL.
    """
    out = []
    for part, name in _PART_NAMES.items():
        values = np.array([v for v in fractions.get(part, []) if v is not None], dtype=np.float64)
        if not values.size or float(values.min()) < TIME_SHARE_MIN:
            continue
        low, high = float(values.min()), float(values.max())
        if round(100 * high) - round(100 * low) <= 5:
            share = f"{100 * float(np.mean(values)):.0f} %"
        else:
            share = f"{100 * low:.0f}-{100 * high:.0f} %"
        total = None if overall is None else overall.get(part)
        tail = "" if total is None else f" ({100 * total:.0f} % of all T_TOTAL)"
        out.append(
            Finding(
                "time_share",
                "info" if part != "comm" else "warning",
                "overall",
                f"{name} is {share} of time on every PE{tail}{_scoped(scope)}",
                scope,
                low,
                TIME_SHARE_MIN,
            )
        )
    return out


def pop_findings(
    pop: Mapping[str, Any] | None,
    useful: Mapping[str, Any] | None = None,
    *,
    scope: str | None = None,
) -> list[Finding]:
    """``pop_efficiency``: load balance or communication efficiency below 0.8."""
    if not pop:
        return []
    out = []
    lb = pop.get("load_balance")
    if lb is not None and lb < POP_EFFICIENCY_MIN:
        busiest = (
            ""
            if not useful or useful.get("max_over_mean") is None
            else f"; PE {useful['max_pe']} does {useful['max_over_mean']:.1f}x the mean"
        )
        out.append(
            Finding(
                "pop_efficiency",
                "warning",
                "overall",
                f"POP load balance is {lb:.2f}: useful work (MAIN + PROC) is uneven across "
                f"PEs{busiest}{_scoped(scope)}",
                scope,
                float(lb),
                POP_EFFICIENCY_MIN,
            )
        )
    ce = pop.get("communication_efficiency")
    if ce is not None and ce < POP_EFFICIENCY_MIN:
        out.append(
            Finding(
                "pop_efficiency",
                "warning",
                "overall",
                f"POP communication efficiency is {ce:.2f}: even the busiest PE does useful "
                f"work (MAIN + PROC) only {100 * ce:.0f} % of the run{_scoped(scope)}",
                scope,
                float(ce),
                POP_EFFICIENCY_MIN,
            )
        )
    return out


def papi_findings(
    counters: Sequence[str], zero: Sequence[str], *, scope: str | None = None
) -> list[Finding]:
    """``papi_zero``: all (or some) counters are 0 on every line."""
    if not zero:
        return []
    listed = ", ".join(zero)
    if len(zero) == len(counters):
        text = (
            f"all PAPI counters are zero ({listed}): the tracing machine had no hardware "
            "counters (or PAPI could not read them); only messages handled and sends "
            "issued are meaningful"
        )
    else:
        text = f"PAPI counter(s) {listed} are zero on every line: those events were not counted"
    return [
        Finding("papi_zero", "warning", "papi", text + _scoped(scope), scope, float(len(zero)), 0.0)
    ]


def time_outlier_findings(timeline: Mapping[str, Any] | None) -> list[Finding]:
    """``time_outliers``: messages whose send time is an outlier (kept out of the timeline)."""
    count = int((timeline or {}).get("messages_outliers") or 0)
    if not count:
        return []
    lines = [
        f"{o['path']}:{o['line']}: {o['time_s'] if o['time_s'] is not None else 'inf'}"
        for o in (timeline or {}).get("time_outliers") or []
    ]
    return [
        Finding(
            "time_outliers",
            "warning",
            "timeline",
            f"{count:,} message(s) have an outlier send time (negative, from 2286 on, or far "
            "from the other sends): counted, but not placed in the timeline or its duration"
            + (f"; e.g. {'; '.join(lines)}" if lines else ""),
            None,
            float(count),
            0.0,
        )
    ]


def papi_main_findings(
    unknown: Sequence[int],
    *,
    num_pes: int,
    handled: int,
    sent: int | None = None,
    scope: str | None = None,
) -> list[Finding]:
    """``papi_main_unknown``: PEs without MAIN line, and what was lost.

    ``handled`` is the PAPI trace's messages handled; ``sent`` the same
    run's logical trace messages (None: no logical trace of that phase).
    """
    if not unknown:
        return []
    from .._text import format_ranges

    text = (
        f"the PAPI trace has no MAIN line on {len(unknown)} of {num_pes} PEs "
        f"(PE {format_ranges(list(unknown))}): the job ended before done(0)? Their MAIN "
        "sends and counters are unknown (left empty, not 0), and messages handled per PE "
        "are partial: their balance is not judged"
    )
    if sent is not None:
        lost = sent - handled
        share = f" ({100 * handled / sent:.1f} %)" if sent else ""
        text += (
            f". The logical trace sent {sent:,} messages; the PAPI trace handled "
            f"{handled:,}{share}" + (f": {lost:,} message(s) left no PAPI line" if lost > 0 else "")
        )
    return [
        Finding(
            "papi_main_unknown",
            "warning",
            "papi",
            text + _scoped(scope),
            scope,
            float(len(unknown)),
            0.0,
        )
    ]


def unread_findings(coverage: Iterable[Mapping[str, Any]]) -> list[Finding]:
    """``unread_lines``: per kind, lines skipped for unexpected reasons.

    ``coverage`` entries have ``kind``, ``path``, ``skipped_unexpected``
    (reason -> count) and, optionally, ``first_skipped`` examples.
    """
    by_kind: dict[str, dict[str, int]] = {}
    files: dict[str, int] = {}
    first: dict[str, str] = {}
    for entry in coverage:
        reasons = entry.get("skipped_unexpected") or {}
        if not reasons:
            continue
        kind = str(entry["kind"])
        counts = by_kind.setdefault(kind, {})
        for reason, n in reasons.items():
            counts[reason] = counts.get(reason, 0) + int(n)
        files[kind] = files.get(kind, 0) + 1
        for example in entry.get("first_skipped") or []:
            if kind not in first and example.get("reason") in reasons:
                first[kind] = f"{entry['path']}:{example['line']}"
    out = []
    for kind, counts in by_kind.items():
        total = sum(counts.values())
        reasons = ", ".join(f"{n:,} {r}" for r, n in sorted(counts.items()))
        where = f"; first at {first[kind]}" if kind in first else ""
        out.append(
            Finding(
                "unread_lines",
                "warning",
                kind,
                f"{total:,} {kind} trace line(s) could not be read in {files[kind]} file(s): "
                f"{reasons}{where}",
                None,
                float(total),
                0.0,
            )
        )
    return out


def missing_pe_findings(
    missing: Sequence[int], *, kind: str, num_pes: int | None, scope: str | None = None
) -> list[Finding]:
    """``missing_pes``: PEs of the run without trace file or profile lines."""
    if not missing:
        return []
    from .._text import format_ranges

    of = "" if num_pes is None else f" of {num_pes}"
    return [
        Finding(
            "missing_pes",
            "warning",
            kind,
            f"{len(missing)}{of} PEs left nothing in the {kind} trace: PE "
            f"{format_ranges(list(missing))}{_scoped(scope)}",
            scope,
            float(len(missing)),
            0.0,
        )
    ]


def tcomm_findings(
    disagreements: int, runtime_warnings: Sequence[int], *, scope: str | None = None
) -> list[Finding]:
    """``tcomm_checks``: printed values disagree, or the runtime warned."""
    out = []
    if disagreements:
        out.append(
            Finding(
                "tcomm_checks",
                "warning",
                "overall",
                f"{disagreements} TCOMM_PROFILING value(s) disagree with the raw timer lines"
                f"{_scoped(scope)}",
                scope,
                float(disagreements),
                0.0,
            )
        )
    if runtime_warnings:
        out.append(
            Finding(
                "tcomm_checks",
                "warning",
                "overall",
                f"the runtime warned that T_TOTAL differs from T_outside_finish by more than "
                f"1 % on {_pes(list(runtime_warnings))}{_scoped(scope)}",
                scope,
                float(len(runtime_warnings)),
                0.0,
            )
        )
    return out


def mesh_findings(fit: Mapping[str, Any] | None) -> list[Finding]:
    """``mesh``: whether the physical trace fits the Conveyors 2D mesh."""
    if not fit:
        return []
    k = fit.get("pes_per_node")
    if fit.get("fits"):
        return [
            Finding(
                "mesh",
                "info",
                "physical",
                f"the physical trace fits the Conveyors 2D mesh with {k} PEs per node "
                "(local_send within nodes, nonblock_send within columns)",
            )
        ]
    return [
        Finding(
            "mesh",
            "warning",
            "physical",
            f"the physical trace does NOT fit the Conveyors 2D mesh with {k} PEs per node",
        )
    ]


def aggregation_findings(comparison: Mapping[str, Any] | None) -> list[Finding]:
    """``aggregation``: the Conveyors model's verdict on the logical and physical traces.

    ``comparison`` is ``RunComparison.summary()`` (the aggregation summary's
    ``comparison``).
    """
    if not comparison:
        return []
    verdict = comparison.get("verdict")
    topology = comparison.get("topology")
    links, explained = comparison.get("links", 0), comparison.get("links_explained", 0)
    notes = list(comparison.get("notes") or [])
    if verdict == "one run":
        text = (
            f"the logical trace, routed over Conveyors' {topology}, explains all {links} links "
            "of the physical trace: one run"
        )
        out = [Finding("aggregation", "info", "aggregation", text, None, float(links), None)]
        if comparison.get("layout") != topology:
            out.append(
                Finding(
                    "aggregation",
                    "warning",
                    "aggregation",
                    f"the layout implies {comparison.get('layout')}, the physical trace shows "
                    f"{topology}: check the PEs per node",
                )
            )
        return out
    if verdict == "not one run":
        reasons = "; ".join(comparison.get("reasons") or [])
        return [
            Finding(
                "aggregation",
                "warning",
                "aggregation",
                f"the logical and physical traces are not of one run ({explained} of {links} "
                f"links explained under {topology}): {reasons}",
                None,
                float(links - explained),
                0.0,
            )
        ]
    return [
        Finding(
            "aggregation",
            "warning",
            "aggregation",
            "the Conveyors model does not fit the physical trace (the run is not blamed): "
            + "; ".join(notes),
        )
    ]


def empty_findings(
    messages: int, files: int, *, kind: str = "logical", scope: str | None = None
) -> list[Finding]:
    """``empty_trace``: the trace was read but holds no message."""
    if messages:
        return []
    return [
        Finding(
            "empty_trace",
            "warning",
            kind,
            f"the {kind} trace holds no message ({files} file(s) read, no message line): "
            f"nothing to analyse{_scoped(scope)}",
            scope,
            0.0,
            0.0,
        )
    ]


def report_findings(report: Mapping[str, Any]) -> list[Finding]:
    """All findings of a report summary (the dict ``report.json`` holds), most severe first.

    Reads the sections ``errors``, ``coverage``, ``logical.phases``,
    ``papi.phases``, ``overall.groups`` and ``physical`` when present; any
    may be missing.
    """
    out: list[Finding] = []
    for kind, message in (report.get("errors") or {}).items():
        out.append(
            Finding("read_error", "error", kind, f"the {kind} trace could not be read: {message}")
        )
    out += unread_findings(report.get("coverage") or [])
    out += time_outlier_findings(report.get("timeline"))

    logical = (report.get("logical") or {}).get("phases") or {}
    several = len(logical) > 1
    for name, s in logical.items():
        scope = f"phase {name}" if several else None
        out += missing_pe_findings(
            s.get("missing_pes") or [], kind="logical", num_pes=s.get("num_pes"), scope=scope
        )
        if "totals" in s:
            out += empty_findings(
                int(s["totals"]["messages"]), int(s.get("num_files") or 0), scope=scope
            )
        counts = s["imbalance"]["count"]
        out += balance_findings(
            counts["sent"],
            kind="logical",
            verb="sends",
            noun="sends",
            unit="messages",
            scope=scope,
        )
        out += balance_findings(
            counts["received"],
            kind="logical",
            verb="receives",
            noun="receives",
            unit="messages",
            scope=scope,
        )
        per_pe = s.get("per_pe") or {}
        out += trend_findings(per_pe.get("sent") or [], kind="logical", noun="sends", scope=scope)
        out += trend_findings(
            per_pe.get("received") or [], kind="logical", noun="receives", scope=scope
        )
        if s.get("direction"):
            out += triangular_findings(s["direction"], scope=scope)

    papi = (report.get("papi") or {}).get("phases") or {}
    several = len(papi) > 1
    for name, s in papi.items():
        scope = f"phase {name}" if several else None
        out += missing_pe_findings(
            s.get("missing_pes") or [], kind="papi", num_pes=s.get("num_pes"), scope=scope
        )
        out += papi_findings(s.get("counters") or [], s.get("zero_counters") or [], scope=scope)
        unknown = s.get("main_unknown_pes") or []
        if unknown:
            same = logical.get(name) or (
                next(iter(logical.values())) if len(logical) == 1 and len(papi) == 1 else None
            )
            out += papi_main_findings(
                unknown,
                num_pes=int(s.get("num_pes") or 0),
                handled=int(s["totals"]["messages"]),
                sent=None if same is None else int(same["totals"]["messages"]),
                scope=scope,
            )
            continue  # a cut trace: per-PE messages handled are partial, not judged
        out += balance_findings(
            s["imbalance"]["messages"],
            kind="papi",
            verb="handles",
            noun="messages handled",
            unit="messages",
            scope=scope,
        )

    overall = report.get("overall") or {}
    groups = overall.get("groups") or []
    for g in groups:
        scope = f"label {g['name']}" if len(groups) > 1 else None
        out += missing_pe_findings(
            g.get("missing_pes") or [],
            kind="overall",
            num_pes=overall.get("num_pes"),
            scope=scope,
        )
        out += time_share_findings(g.get("pe_fractions") or {}, g.get("fractions"), scope=scope)
        out += pop_findings(
            g.get("pop_efficiencies"), (g.get("imbalance") or {}).get("useful"), scope=scope
        )
        out += tcomm_findings(
            int((g.get("checks") or {}).get("disagreements") or 0),
            g.get("runtime_warnings") or [],
            scope=scope,
        )

    physical = report.get("physical") or {}
    aggregation = report.get("aggregation") or {}
    out += aggregation_findings(aggregation.get("comparison"))
    if physical:
        if not aggregation:  # the model's topology check supersedes the 2D-mesh one
            out += mesh_findings(physical.get("mesh_fit"))
        buffers = physical["imbalance"]["all"]["buffers"]
        out += balance_findings(
            buffers["sent"], kind="physical", verb="sends", noun="buffers sent", unit="buffers"
        )
        out += balance_findings(
            buffers["received"],
            kind="physical",
            verb="receives",
            noun="buffers received",
            unit="buffers",
        )
    return sorted(out, key=lambda f: _ORDER[f.severity])
