"""Everything about a run at once: the run report (every kind, findings, one
HTML page) and the comparison of two runs."""

from .compare import CompareView, compare_runs, write_compare
from .findings import Finding, report_findings
from .run import RunReport, run_report

__all__ = [
    "CompareView",
    "Finding",
    "RunReport",
    "compare_runs",
    "report_findings",
    "run_report",
    "write_compare",
]
