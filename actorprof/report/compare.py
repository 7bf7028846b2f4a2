"""Two runs side by side: the logical and overall views of each, and ratios B/A.

``compare_runs(a, b)`` is the Python twin of ``actorprof compare``: it finds
the logical trace and the overall profile of each run folder (as
:func:`actorprof.views.report.find_run_traces` does), reads them, refuses
runs of different PE counts unless told otherwise, and tabulates, for every
metric both runs have, the value of A, of B and the ratio B/A. No plotting,
no files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._progress import ProgressSink
from .._repr import Summarized, count
from .._version import __version__
from ..errors import ActorProfError, NoTraceError, UsageError
from ..kinds.logical import LogicalView, logical_view
from ..kinds.overall import OverallView, group_name, overall_view
from ..read import ReadReport
from .traces import find_run_traces, phase_name

if TYPE_CHECKING:
    from ..write import Sink

__all__ = ["CompareView", "RunSide", "compare_runs", "ratio", "run_names", "write_compare"]

#: Imbalance keys compared for each per-PE load.
IMBALANCE_KEYS = ("max", "mean", "max_over_mean", "craypat_imbalance_pct", "pop_load_balance", "cv")


def ratio(a: float | None, b: float | None) -> float | None:
    """B / A; None when either is unknown or A is 0 (undefined)."""
    if a is None or b is None or a == 0:
        return None
    return float(b) / float(a)


def run_names(a: str | PathLike[str], b: str | PathLike[str], names: str | None) -> list[str]:
    """The two runs' names: ``names`` ("cyclic,range") or the folder names.

    Raises
    ------
    UsageError
        ``names`` is not two distinct, non-empty names.
    """
    if names is None:
        first, second = Path(a).resolve().name or "A", Path(b).resolve().name or "B"
        return [first, second] if first != second else ["A", "B"]
    parts = [p.strip() for p in names.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise UsageError(
            f"--names needs two different names separated by a comma (e.g. cyclic,range), "
            f"got {names!r}"
        )
    return parts


@dataclass(frozen=True)
class RunSide:
    """One run of the comparison: its views (None when the run lacks the kind)."""

    name: str
    path: str
    logical: LogicalView | None
    overall: OverallView | None
    group: tuple[str, int] | None
    reports: list[ReadReport] = field(default_factory=list)

    @property
    def num_pes(self) -> int | None:
        if self.logical is not None:
            return self.logical.num_pes
        return None if self.overall is None else self.overall.num_pes

    def logical_metrics(self) -> dict[str, float | None]:
        """Flat logical metrics (messages, bytes, per-PE loads, imbalance)."""
        if self.logical is None:
            return {}
        s = self.logical.summary(top=0)
        t = s["totals"]
        out: dict[str, float | None] = {
            "messages": t["messages"],
            "bytes": t["bytes"],
            "duration_s": t["duration_s"],
            "self_send_share": t["self_send_share"],
            "inter_node_share": s["locality"]["inter_node_share"],
        }
        for side in ("sent", "received"):
            m = s["imbalance"]["count"][side]
            for key in IMBALANCE_KEYS:
                out[f"{side}_{key}"] = m[key]
            out[f"{side}_stragglers"] = len(m["stragglers"])
        return out

    def overall_metrics(self) -> dict[str, float | None]:
        """Flat overall metrics of the chosen group (T_TOTAL, shares, POP)."""
        if self.overall is None or self.group is None:
            return {}
        g = self.overall.group_summary(*self.group)
        t = g["totals"]
        pes = g["pes_used_for_metrics"] or None
        out: dict[str, float | None] = {
            "t_total_max_cycles": t["t_total_max_cycles"],
            "t_total_mean_cycles": None if pes is None else t["t_total_cycles"] / pes,
            "main_share": g["fractions"]["main"],
            "comm_share": g["fractions"]["comm"],
            "proc_share": g["fractions"]["proc"],
        }
        pop = g["pop_efficiencies"] or {}
        for key in ("load_balance", "communication_efficiency", "parallel_efficiency"):
            out[f"pop_{key}"] = pop.get(key)
        useful = (g["imbalance"] or {}).get("useful") or {}
        out["useful_max_over_mean"] = useful.get("max_over_mean")
        return out


@dataclass(frozen=True, repr=False)
class CompareView(Summarized):
    """Runs A and B, and what the comparison noticed."""

    a: RunSide
    b: RunSide
    notes: list[str] = field(default_factory=list)

    def _repr_facts(self) -> tuple[str, list[tuple[str, str]]]:
        def pes(side: RunSide) -> str:
            return "unknown" if side.num_pes is None else count(side.num_pes)

        return f"{self.a.name} vs {self.b.name}", [
            (f"PEs in {self.a.name}", pes(self.a)),
            (f"PEs in {self.b.name}", pes(self.b)),
            ("notes", count(len(self.notes))),
            ("kinds compared", ", ".join(self._kinds_compared()) or "none"),
        ]

    def _kinds_compared(self) -> list[str]:
        both = [
            ("logical", self.a.logical, self.b.logical),
            ("overall", self.a.group, self.b.group),
        ]
        return [kind for kind, a, b in both if a is not None and b is not None]

    @property
    def names(self) -> tuple[str, str]:
        return self.a.name, self.b.name

    def ratios(self) -> dict[str, dict[str, dict[str, float | None]]]:
        """``{"logical"|"overall": {metric: {"a", "b", "b_over_a"}}}``, kinds both runs have."""
        out: dict[str, dict[str, dict[str, float | None]]] = {}
        for kind, a, b in (
            ("logical", self.a.logical_metrics(), self.b.logical_metrics()),
            ("overall", self.a.overall_metrics(), self.b.overall_metrics()),
        ):
            if a and b:
                out[kind] = {
                    key: {"a": a[key], "b": b[key], "b_over_a": ratio(a[key], b[key])} for key in a
                }
        return out

    def summary(self) -> dict[str, Any]:
        """JSON-able summary (``compare.json``)."""
        runs = {}
        for side in (self.a, self.b):
            runs[side.name] = {
                "path": side.path,
                "num_pes": side.num_pes,
                "logical": None
                if side.logical is None
                else {
                    "phase": side.logical.report.phase,
                    "num_nodes": side.logical.num_nodes,
                    "stragglers_sent": side.logical.summary(top=0)["imbalance"]["count"]["sent"][
                        "stragglers"
                    ],
                    "stragglers_received": side.logical.summary(top=0)["imbalance"]["count"][
                        "received"
                    ]["stragglers"],
                    "lines_read": side.logical.report.lines_read,
                    "lines_skipped": side.logical.report.lines_skipped,
                },
                "overall": None
                if side.group is None
                else {"group": group_name(*side.group), "num_pes": side.num_pes},
            }
        return {
            "kind": "compare",
            "actorprof_version": __version__,
            "names": list(self.names),
            "a": self.a.name,
            "b": self.b.name,
            "runs": runs,
            "compared": list(self.ratios()),
            "ratios": self.ratios(),
            "ratio_rule": "b_over_a = B / A; null when A is 0 or either value is unknown",
            "notes": list(self.notes),
        }

    def summary_lines(self) -> list[str]:
        """A short human summary (what the CLI prints on stderr)."""
        r = self.ratios()
        a, b = self.names
        lines = [f"compare {a} (A) vs {b} (B): {', '.join(r) or 'nothing in common'}"]
        shown = {
            "logical": [
                ("messages", "messages"),
                ("sent_max", "max sent per PE"),
                ("received_max", "max received per PE"),
                ("sent_max_over_mean", "sent max/mean"),
                ("received_max_over_mean", "received max/mean"),
            ],
            "overall": [
                ("t_total_max_cycles", "T_TOTAL (slowest PE)"),
                ("comm_share", "COMM share"),
            ],
        }
        for kind, rows in shown.items():
            for key, label in rows:
                if kind in r:
                    v = r[kind][key]
                    lines.append(
                        f"  {label + ':':<24} {_fmt(v['a'])} -> {_fmt(v['b'])}  "
                        f"(B/A {_fmt(v['b_over_a'])})"
                    )
        return lines


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    if float(value).is_integer() and abs(value) >= 1000:
        return f"{int(value):,}"
    return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def _side(
    name: str,
    path: str | PathLike[str],
    *,
    phase: str | None,
    label: str | None,
    num_pes: int | None,
    engine: dict[str, Any],
    notes: list[str],
    progress: ProgressSink | None = None,
) -> RunSide:
    traces = find_run_traces(path)
    reports: list[ReadReport] = []
    logical = None
    if traces.logical is not None:
        report = ReadReport(kind="logical")
        logical = logical_view(
            traces.logical, phase=phase, num_pes=num_pes, report=report, progress=progress, **engine
        )
        reports.append(report)
        if phase is None and len(traces.logical_phases) > 1:
            notes.append(
                f"{name}: logical phase {phase_name(report.phase or '')} compared (phases: "
                f"{', '.join(phase_name(p) for p in traces.logical_phases)}; choose with --phase)"
            )
    overall = None
    group = None
    if traces.overall is not None:
        report = ReadReport(kind="overall")
        overall = overall_view(
            traces.overall, label=label, num_pes=num_pes, report=report, progress=progress
        )
        reports.append(report)
        groups = overall.groups
        if groups:
            group = groups[0]
            if len(groups) > 1:
                notes.append(
                    f"{name}: overall label {group_name(*group)} compared (labels: "
                    f"{', '.join(group_name(*g) for g in groups)}; choose with --label)"
                )
    if logical is None and overall is None:
        raise NoTraceError(
            f"{path}: neither a logical trace (PE<i>_send.csv) nor an overall profile "
            "(overall.txt) in the folder or its subfolders: nothing to compare"
        )
    return RunSide(name, str(path), logical, overall, group, reports)


def compare_runs(
    a: str | PathLike[str],
    b: str | PathLike[str],
    *,
    names: str | None = None,
    phase: str | None = None,
    label: str | None = None,
    allow_different_pes: bool = False,
    num_pes: int | None = None,
    jobs: int | None = 1,
    cache: bool = False,
    cache_dir: str | PathLike[str] | None = None,
    scheduler: Any = None,
    progress: ProgressSink | None = None,
) -> CompareView:
    """Read two runs and compare them (B relative to A).

    Parameters
    ----------
    a, b
        Run folders (traces in them or in subfolders, as ``actorprof report``).
    names
        ``"cyclic,range"``: the runs' names in tables and figures; default
        the folder names.
    phase
        Logical phase compared (default: the unnamed files, or the only phase).
    label
        Overall label compared (default: the first label of each profile).
    allow_different_pes
        Compare runs of different PE counts (ratios per PE then compare
        different things).
    num_pes
        The PE count both runs must have (checked against each trace).
    jobs, cache, cache_dir, scheduler
        How the logical traces are read (see :func:`actorprof.logical_view`).
    progress
        Told how far each read has got (the CLI's progress line); None: silent.

    Returns
    -------
    CompareView

    Raises
    ------
    ActorProfError
        The runs have different PE counts (without ``allow_different_pes``),
        have no kind in common, or a trace cannot be read.
    UsageError
        Bad ``names``, unknown phase or label.
    """
    name_a, name_b = run_names(a, b, names)
    engine = {"jobs": jobs, "cache": cache, "cache_dir": cache_dir, "scheduler": scheduler}
    notes: list[str] = []
    side_a, side_b = (
        _side(
            name,
            path,
            phase=phase,
            label=label,
            num_pes=num_pes,
            engine=engine,
            notes=notes,
            progress=progress,
        )
        for name, path in ((name_a, a), (name_b, b))
    )
    for kind in ("logical", "overall"):
        view_a, view_b = getattr(side_a, kind), getattr(side_b, kind)
        if view_a is None or view_b is None:
            continue
        if view_a.num_pes != view_b.num_pes:
            message = (
                f"the runs have different PE counts: {name_a} has {view_a.num_pes} PEs, "
                f"{name_b} has {view_b.num_pes} PEs ({kind} trace); per-PE ratios would compare "
                "different things. Pass --allow-different-pes to compare them anyway."
            )
            if not allow_different_pes:
                raise ActorProfError(message)
            notes.append(message.split(";")[0] + " (compared anyway: --allow-different-pes)")
            break
    view = CompareView(side_a, side_b, notes)
    if not view.ratios():
        have = {
            side.name: [k for k in ("logical", "overall") if getattr(side, k) is not None]
            for side in (side_a, side_b)
        }
        raise ActorProfError(
            "the runs have no trace kind in common: "
            + "; ".join(f"{n}: {', '.join(k)}" for n, k in have.items())
        )
    return view


# --- files: shared-scale figures, ratios -------------------------------------


def write_compare(view: CompareView, out: Sink) -> None:
    import numpy as np
    import pandas as pd

    from ..analyze.imbalance import LOG_SKEW, skew
    from ..plot import plot_heatmap, plot_violin
    from ..plot.bars import plot_time_stacked
    from ..write import new_figure

    a, b = view.a, view.b
    if a.logical is not None and b.logical is not None:
        # dense up to DENSE_MAX_PES PEs, else the pooled block sums
        panels = [a.logical.heatmap_panels()[0], b.logical.heatmap_panels()[0]]
        mats = [matrix for matrix, _ in panels]
        cells = max(float(m.to_numpy().max()) for m in mats)
        totals = max(
            float(max(m.to_numpy().sum(axis=0).max(), m.to_numpy().sum(axis=1).max())) for m in mats
        )
        # one scale for both sides: log or linear chosen on the two matrices together
        ratio = skew(np.concatenate([m.to_numpy(dtype=np.float64).ravel() for m in mats]))
        log = ratio is not None and ratio > LOG_SKEW
        n = max(max(m.shape) for m in mats)
        w, h = (max(7.0, 0.42 * n + 4.0), max(6.0, 0.38 * n + 3.0)) if n <= 32 else (10.0, 9.0)
        fig = new_figure(2 * w, h + 0.4, ncols=2)
        for ax, side, (matrix, caption) in zip(fig.axes, (a, b), panels, strict=True):
            plot_heatmap(
                matrix,
                ax=ax,
                value_label="messages",
                # beyond DENSE_MAX_PES a cell is a block of PEs: said as on logical's heatmap
                title=f"{side.name}: logical messages PE x PE"
                + (f"\n{caption}" if caption else ""),
                vmax=(cells, totals),
                log=log,
            )
        scale = f"log colour scale, chosen: max/median = {ratio:.0f}x" if log else "linear"
        fig.suptitle(
            f"{a.name} vs {b.name}, one colour scale ({scale}): cells up to {cells:,.0f}, "
            f"totals up to {totals:,.0f} messages"
        )
        out.figure(fig, "heatmap")

        loads = pd.DataFrame(
            {
                f"{a.name}\nsent": a.logical.pes["sent"],
                f"{b.name}\nsent": b.logical.pes["sent"],
                f"{a.name}\nreceived": a.logical.pes["received"],
                f"{b.name}\nreceived": b.logical.pes["received"],
            }
        )
        fig = new_figure(9.5, 5.5)
        plot_violin(
            loads,
            ax=fig.axes[0],
            value_label="messages",
            unit_label="PE",
            title=f"Messages per PE, {a.name} vs {b.name} (one axis)",
        )
        out.figure(fig, "violin")
    if a.group is not None and b.group is not None:
        assert a.overall is not None and b.overall is not None
        times = [a.overall.group_times(*a.group), b.overall.group_times(*b.group)]
        fig = new_figure(14.0, 8.4, nrows=2, ncols=2)
        axes = fig.axes
        for k, (side, table) in enumerate(zip((a, b), times, strict=True)):
            plot_time_stacked(
                table,
                ax=axes[k],
                legend=k == 1,
                title=f"{side.name}: T_MAIN, T_COMM, T_PROC per PE (cycles)",
            )
            plot_time_stacked(
                table,
                ax=axes[2 + k],
                relative=True,
                legend=False,
                title=f"{side.name}: fractions of T_TOTAL",
            )
        top = max(axes[0].get_ylim()[1], axes[1].get_ylim()[1])
        for ax in axes[:2]:
            ax.set_ylim(0, top)
        out.figure(fig, "overall")
    rows = [
        {"kind": kind, "metric": metric, **values}
        for kind, metrics in view.ratios().items()
        for metric, values in metrics.items()
    ]
    out.csv(
        pd.DataFrame(rows, columns=["kind", "metric", "a", "b", "b_over_a"]), "ratios", index=False
    )
    out.json(view.summary(), "")
