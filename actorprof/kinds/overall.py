"""The overall view: read an overall profile and derive what ``actorprof overall`` shows.

``overall_view(path)`` reads ``overall.txt`` (every label, or one), computes
T_MAIN/T_COMM/T_PROC/T_TOTAL per PE, checks the printed ``TCOMM_PROFILING``
values against the raw lines, and per label (and repeated run) the totals,
fractions, imbalance of T_TOTAL and of useful work, and the POP
efficiencies. No plotting, no files.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._progress import ProgressSink
from .._repr import Summarized, count
from .._text import format_ranges, run_name
from .._version import __version__
from ..analyze.breakdown import exact_sum, pop_efficiencies, time_breakdown, time_checks
from ..analyze.imbalance import imbalance
from ..errors import UsageError
from ..read import ReadReport
from ..read.overall import describe_group, program_output_lines, read_overall
from ..schema import OVERALL_KEY_COLUMNS
from ..write import keeps_tables
from .overall_figures import stacked_figure, stacked_row

if TYPE_CHECKING:
    from ..write import Sink

__all__ = ["CPU_GHZ_RANGE", "OverallView", "build_overall_view", "group_name", "overall_view"]

_PARTS = ("main", "comm", "proc", "total")
#: What ``cpu_ghz`` may be (GHz): a CPU's frequency, not any positive float
#: (``inf`` made every time 0 s; ``1e-300`` times beyond any axis).
CPU_GHZ_RANGE = (0.01, 100.0)
_MAX_CHECK_WARNINGS = 5
_MAX_LISTED = 10


def group_name(label: str, run: int) -> str:
    """Key of a (label, run) group in the summary: the label, ``#2`` for a repeat."""
    name = label if label else "(no label)"
    return name if run == 0 else f"{name} #{run + 1}"


@dataclass(frozen=True, repr=False)
class OverallView(Summarized):
    """Everything derived from one overall profile (all labels, or the chosen one)."""

    path: str
    report: ReadReport
    raw: pd.DataFrame
    times: pd.DataFrame
    checks: pd.DataFrame
    num_pes: int
    cpu_ghz: float | None = None
    label: str | None = None

    def _repr_facts(self) -> tuple[str, list[tuple[str, str]]]:
        labels = sorted({label or "(no label)" for label, _ in self.groups})
        return run_name(self.path), [
            ("PEs", count(self.num_pes)),
            ("profiles", count(len(self.groups))),
            ("warnings", count(len(self.report.warnings))),
            ("labels", ", ".join(labels[:4]) + (", ..." if len(labels) > 4 else "")),
            ("CPU GHz", "not given" if self.cpu_ghz is None else count(self.cpu_ghz)),
        ]

    @property
    def groups(self) -> list[tuple[str, int]]:
        """(label, run) pairs in file order."""
        keys = self.raw[["label", "run"]].drop_duplicates()
        return [(str(label), int(run)) for label, run in keys.itertuples(index=False)]

    def group_times(self, label: str, run: int = 0) -> pd.DataFrame:
        """:func:`time_breakdown` rows of one group, PE order."""
        mask = (self.times["label"] == label) & (self.times["run"] == run)
        return self.times[mask.to_numpy()].reset_index(drop=True)

    def pes(self) -> pd.DataFrame:
        """The per-PE table (``overall_pes.csv``): raw values, then the derived times.

        With ``cpu_ghz``, ``t_main_s`` ... ``useful_s`` follow (cycles / (GHz x 1e9)).
        """
        table = pd.concat([self.raw, self.times.drop(columns=list(OVERALL_KEY_COLUMNS))], axis=1)
        if self.cpu_ghz is not None:
            for part in (*_PARTS, "useful"):
                cycles = table[f"t_{part}_cycles" if part != "useful" else "useful_cycles"]
                seconds = cycles.astype("Float64") / (self.cpu_ghz * 1e9)
                table[f"{'t_' + part if part != 'useful' else 'useful'}_s"] = seconds.to_numpy(
                    dtype=np.float64, na_value=np.nan
                )
        return table

    def group_summary(self, label: str, run: int = 0) -> dict[str, Any]:
        """Totals, fractions, imbalance, POP efficiencies and checks of one group."""
        times = self.group_times(label, run)
        raw = self.raw[((self.raw["label"] == label) & (self.raw["run"] == run)).to_numpy()]
        complete = _complete_rows(times)
        useful = times.loc[complete, "useful_cycles"].to_numpy(dtype=np.float64)
        total = times.loc[complete, "t_total_cycles"].to_numpy(dtype=np.float64)
        pe_ids = times.loc[complete, "pe"].to_numpy()
        # sums over PEs: exact, beyond int64 (65,536 PEs of a 16-hour run)
        sums = {p: exact_sum(times[f"t_{p}_cycles"]) for p in _PARTS}
        grand = sums["total"]
        totals: dict[str, Any] = {
            **{f"t_{p}_cycles": sums[p] for p in _PARTS},
            "useful_cycles": exact_sum(times["useful_cycles"]),
            "t_total_max_cycles": int(total.max()) if total.size else None,
            "sends": exact_sum(raw["sends_count"]),
            "sends_in_process": exact_sum(raw["send_in_process_count"]),
            "processed": exact_sum(raw["process_count"]),
        }
        if self.cpu_ghz is not None:
            hz = self.cpu_ghz * 1e9
            totals["t_total_max_s"] = None if not total.size else float(total.max()) / hz
            totals.update({f"t_{p}_s": sums[p] / hz for p in _PARTS})
        group_checks = self.checks[
            ((self.checks["label"] == label) & (self.checks["run"] == run)).to_numpy()
        ]
        bad = group_checks[~group_checks["agrees"].to_numpy()]
        metrics: dict[str, Any] = {}
        pop: dict[str, Any] | None = None
        if useful.size:
            metrics = {
                "t_total": imbalance(pd.Series(total, index=pe_ids)).to_dict(),
                "useful": imbalance(pd.Series(useful, index=pe_ids)).to_dict(),
            }
            pop = pop_efficiencies(useful, total).to_dict()
        return {
            "name": group_name(label, run),
            "label": label,
            "run": run,
            "pes": len(times),
            "pes_used_for_metrics": int(complete.sum()),
            "missing_pes": self.missing_pes(label, run),
            "totals": totals,
            "fractions": {
                f"{p}": (sums[p] / grand if grand > 0 else None) for p in ("main", "comm", "proc")
            },
            "imbalance": metrics,
            "pop_efficiencies": pop,
            "runtime_warnings": [int(p) for p in raw.loc[raw["total_warning"], "pe"]],
            "checks": {
                "compared": len(group_checks),
                "disagreements": len(bad),
                "first_disagreements": [
                    {
                        "pe": int(r["pe"]),
                        "check": str(r["check"]),
                        "expected": _number(r["expected"]),
                        "found": _number(r["found"]),
                    }
                    for r in bad.head(_MAX_LISTED).to_dict("records")
                ],
            },
        }

    def missing_pes(self, label: str, run: int = 0) -> list[int]:
        """PEs 0..num_pes-1 without a row in the group (listed, never invented)."""
        present = set(self.group_times(label, run)["pe"].tolist())
        return [pe for pe in range(self.num_pes) if pe not in present]

    def summary(self) -> dict[str, Any]:
        """JSON-able summary: per group details, plus imbalance and POP keyed by group."""
        groups = [self.group_summary(label, run) for label, run in self.groups]
        report = self.report.to_dict()
        return {
            "kind": "overall",
            "actorprof_version": __version__,
            "trace": self.path,
            "num_pes": self.num_pes,
            "num_pes_inferred": self.report.num_pes_inferred,
            "label": self.label,
            "cpu_ghz": self.cpu_ghz,
            "labels": [g["name"] for g in groups],
            "totals": {
                "groups": len(groups),
                "pe_rows": len(self.raw),
                "profile_lines": self.report.lines_read,
                "program_output_lines": program_output_lines(self.report),
                "checks_compared": len(self.checks),
                "checks_disagreeing": int((~self.checks["agrees"]).sum()),
                "runtime_warnings": int(self.raw["total_warning"].sum()),
            },
            "imbalance": {g["name"]: g["imbalance"] for g in groups},
            "pop_efficiencies": {g["name"]: g["pop_efficiencies"] for g in groups},
            "groups": groups,
            **{
                k: v
                for k, v in report.items()
                if k in ("missing_pes", "lines_read", "lines_skipped", "warnings", "files")
            },
            "notes": list(self.report.notes),
        }

    def summary_lines(self) -> list[str]:
        """A short human summary (what the CLI prints on stderr)."""
        s = self.summary()
        lines = []
        for g in s["groups"]:
            t = g["totals"]
            longest = t["t_total_max_cycles"]
            span = "n/a" if longest is None else f"{longest:,} cycles"
            if longest is not None and self.cpu_ghz is not None:
                span += f" = {t['t_total_max_s']:.6g} s at {self.cpu_ghz:g} GHz"
            lines.append(
                f"overall profile {describe_group(g['label'], g['run'])}: {g['pes']} PE(s), "
                f"longest T_TOTAL {span}"
            )
            f = g["fractions"]
            if f["main"] is not None:
                lines.append(
                    f"  of all T_TOTAL: MAIN {100 * f['main']:.1f} %, "
                    f"COMM {100 * f['comm']:.1f} %, PROC {100 * f['proc']:.1f} %"
                )
            pop = g["pop_efficiencies"]
            if pop is not None:
                lines.append(
                    f"  POP efficiencies: load balance {_fmt(pop['load_balance'])}, "
                    f"communication {_fmt(pop['communication_efficiency'])}, "
                    f"parallel {_fmt(pop['parallel_efficiency'])}"
                )
                for key, what in (("t_total", "T_TOTAL"), ("useful", "useful (MAIN+PROC)")):
                    m = g["imbalance"][key]
                    lines.append(
                        f"  {what}: max/mean {_fmt(m['max_over_mean'])} (max on PE {m['max_pe']})"
                    )
            c = g["checks"]
            lines.append(
                f"  TCOMM_PROFILING vs raw lines: {c['compared'] - c['disagreements']} of "
                f"{c['compared']} checks agree"
            )
        return lines


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else float(value)


def _complete_rows(times: pd.DataFrame) -> np.ndarray:
    """Rows usable for the metrics: all times known, useful and total non-negative."""
    known = times[[f"t_{p}_cycles" for p in _PARTS]].notna().all(axis=1).to_numpy()
    useful = times["useful_cycles"].astype("Float64").fillna(-1).to_numpy(dtype=np.float64)
    total = times["t_total_cycles"].astype("Float64").fillna(-1).to_numpy(dtype=np.float64)
    return known & (useful >= 0) & (total >= 0)


def build_overall_view(
    raw: pd.DataFrame,
    report: ReadReport,
    *,
    path: str,
    num_pes: int | None = None,
    label: str | None = None,
    cpu_ghz: float | None = None,
) -> OverallView:
    """Derive an :class:`OverallView` from :func:`read_overall` output.

    Raises
    ------
    UsageError
        ``label`` is not in the profile, or ``cpu_ghz`` is not in
        :data:`CPU_GHZ_RANGE`.
    """
    low, high = CPU_GHZ_RANGE
    if cpu_ghz is not None and not low <= cpu_ghz <= high:  # (NaN too)
        raise UsageError(
            f"--cpu-ghz is the CPU's nominal (rdtsc) frequency in GHz, from {low:g} "
            f"to {high:g}; got {cpu_ghz:g}"
        )
    labels = list(dict.fromkeys(raw["label"].tolist()))
    if label is not None:
        if label not in labels:
            shown = ", ".join(repr(x) for x in labels)
            raise UsageError(
                f"no profile lines with label {label!r}; labels found: {shown}. "
                "Choose one with --label NAME (--label '' for the empty label)."
            )
        raw = raw[(raw["label"] == label).to_numpy()].reset_index(drop=True)
    elif len(labels) > 1:
        report.note(
            f"{len(labels)} labels in the profile ({', '.join(repr(x) for x in labels)}): "
            "each is analysed apart (choose one with --label NAME)"
        )
    if num_pes is None:
        n = int(raw["pe"].max()) + 1
        report.num_pes_inferred = True
        report.note(
            f"inferred --num-pes {n} from the largest PE id "
            "(pass --num-pes to list PEs missing from the profile)"
        )
    else:
        n = num_pes
    report.num_pes = n
    times = time_breakdown(raw)
    checks = time_checks(raw)
    view = OverallView(path, report, raw, times, checks, n, cpu_ghz, label)
    _warn(view)
    return view


def _warn(view: OverallView) -> None:
    report = view.report
    missing_all: set[int] = set()
    for label, run in view.groups:
        missing = view.missing_pes(label, run)
        missing_all.update(missing)
        if missing:
            report.warn(
                f"{describe_group(label, run)}: {len(missing)} of {view.num_pes} PEs have no "
                f"profile lines: PE {format_ranges(missing)} (not invented: left out)"
            )
    report.missing_pes = sorted(missing_all)
    warned = view.raw[view.raw["total_warning"].to_numpy()]
    pct = view.times.loc[view.raw["total_warning"].to_numpy(), "total_vs_outside_pct"]
    for (label, run, pe), diff in zip(
        warned[list(OVERALL_KEY_COLUMNS)].itertuples(index=False), pct, strict=True
    ):
        how = "" if np.isnan(diff) else f" (T_TOTAL - T_outside_finish = {diff:+.2f} %)"
        report.warn(
            f"{describe_group(label, run)} PE {pe}: the runtime printed 'T_TOTAL would be much "
            f"bigger/smaller than T_finish'{how}"
        )
    bad = view.checks[~view.checks["agrees"].to_numpy()]
    for r in bad.head(_MAX_CHECK_WARNINGS).to_dict("records"):
        report.warn(
            f"{describe_group(str(r['label']), int(r['run']))} PE {r['pe']}: TCOMM_PROFILING "
            f"disagrees with the raw lines: {r['check']}: printed {_number(r['found'])}, "
            f"computed {_number(r['expected']):.6g}"
        )
    if len(bad) > _MAX_CHECK_WARNINGS:
        report.warn(f"{len(bad) - _MAX_CHECK_WARNINGS} more TCOMM_PROFILING disagreement(s)")


def overall_view(
    path: str | PathLike[str],
    *,
    label: str | None = None,
    num_pes: int | None = None,
    cpu_ghz: float | None = None,
    report: ReadReport | None = None,
    progress: ProgressSink | None = None,
) -> OverallView:
    """Read an overall profile and derive the overall view.

    Parameters
    ----------
    path
        ``overall.txt`` (a program's stdout) or a folder holding it.
    label
        Keep only this label (``""`` for the empty one); None keeps all.
    num_pes
        The run's PE count: PEs missing from a label are listed (never
        invented), PE ids beyond it are an error.
    cpu_ghz
        Nominal CPU frequency: adds seconds (rdtsc counts at that rate).
    report
        Receives the line accounting; when None, warnings are announced
        with :class:`ActorProfWarning`.
    progress
        Told the bytes to read and done (e.g. a progress line).

    Returns
    -------
    OverallView

    Raises
    ------
    ActorProfError
        Any read error, an unknown label or a bad ``cpu_ghz``.

    Examples
    --------
    >>> view = overall_view("examples/histo_4pe/overall")  # doctest: +SKIP
    >>> view.summary()["pop_efficiencies"]["histo"]["load_balance"]  # doctest: +SKIP
    """
    own = report is None
    report = ReadReport(kind="overall") if report is None else report
    raw = read_overall(path, num_pes=num_pes, report=report)
    if progress is not None:
        progress.begin(report.bytes_read, 1)
        progress.update(report.bytes_read, 1)
    view = build_overall_view(
        raw, report, path=str(path), num_pes=num_pes, label=label, cpu_ghz=cpu_ghz
    )
    if own:
        import warnings

        from ..errors import ActorProfWarning

        for message in report.warnings:
            warnings.warn(message, ActorProfWarning, stacklevel=2)
    return view


# --- files: figures, tables and the summary -------------------------------


def write_overall(view: OverallView, out: Sink, *, sort: str) -> None:
    summary = view.summary()
    summaries = summary["groups"]
    unit = "seconds" if view.cpu_ghz else "cycles"
    rows = []
    for k, (label, run) in enumerate(view.groups):
        name = describe_group(label, run)
        pop = summaries[k]["pop_efficiencies"]
        effs = (
            ""
            if pop is None
            else "\nPOP: load balance {}, communication eff. {}, parallel eff. {}".format(
                *(
                    "n/a" if pop[key] is None else f"{pop[key]:.2f}"
                    for key in ("load_balance", "communication_efficiency", "parallel_efficiency")
                )
            )
        )
        rows.append(
            stacked_row(
                view.group_times(label, run),
                f"{name}: T_MAIN, T_COMM, T_PROC per PE ({unit})",
                f"{name}: fractions of T_TOTAL{effs}",
            )
        )
    # built from arrays by overall_figures' function: a figure server builds it without pandas
    out.draw(
        partial(stacked_figure, rows, sort=sort == "total", cpu_ghz=view.cpu_ghz, path=view.path),
        "stacked",
    )
    if not keeps_tables(out):  # the report's figures: no table or summary
        return
    out.csv(view.pes(), "pes", index=False)
    summary["options"] = {"label": view.label, "sort": sort, "cpu_ghz": view.cpu_ghz}
    out.json(summary, "summary")
