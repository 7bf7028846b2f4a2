"""Everything about a run at once: the run report (every kind, findings, one
HTML page) and the comparison of two runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = [
    "CompareView",
    "Finding",
    "RunReport",
    "compare_runs",
    "report_findings",
    "run_report",
    "write_compare",
]

# Imported on first use, so that a command loads only the modules it runs
# (docs/performance.md, "Fixed cost"); type checkers read the imports below.
_EXPORTS = {
    "CompareView": "compare",
    "Finding": "findings",
    "RunReport": "run",
    "compare_runs": "compare",
    "report_findings": "findings",
    "run_report": "run",
    "write_compare": "compare",
}

if TYPE_CHECKING:
    from .compare import CompareView, compare_runs, write_compare
    from .findings import Finding, report_findings
    from .run import RunReport, run_report
else:
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
