"""Where a run folder's traces are: each kind in the folder or its subfolders.

Apart from :mod:`actorprof.report.run` (which reads them all) so that a
single-kind command finding its trace in a run folder does not import every
kind's module.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from ..errors import ActorProfError, NoTraceError, UsageError
from ..read import has_pe_files, list_folder, pe_file_phases
from ..schema import OVERALL_FILE_NAME, PHYSICAL_FILE_NAME

__all__ = [
    "HOW_TO_GET",
    "KINDS",
    "OVERALL_FILE_NAME",
    "UNNAMED",
    "RunTraces",
    "find_run_traces",
    "holds_trace",
    "phase_name",
]

#: The trace kinds a run folder may hold, in report order.
KINDS = ("logical", "papi", "overall", "physical")
#: Display name of the unnamed phase (files without a phase in their name).
UNNAMED = "(unnamed)"

#: What each kind is and how a run produces it (said when a kind is absent).
HOW_TO_GET = {
    "logical": "PE<i>_send.csv: build with -DENABLE_TRACE",
    "papi": "PE<i>_PAPI.csv: build with -DENABLE_TRACE_PAPI",
    "overall": "overall.txt: build with -DENABLE_TCOMM_PROFILING and save stdout to overall.txt",
    "physical": "physical.txt: build with -DENABLE_TRACE_PHYSICAL and save stdout to physical.txt",
}


def phase_name(key: str) -> str:
    """Display name of a phase key (``""`` is the unnamed phase)."""
    return key if key else UNNAMED


@dataclass(frozen=True)
class RunTraces:
    """Where each trace kind of a run is (None: absent).

    ``logical_phases``/``papi_phases`` are the phase keys found (``""`` for
    the unnamed files); ``notes`` says what was passed over (a second folder
    holding the same kind).
    """

    root: Path
    logical: Path | None = None
    logical_phases: list[str] = field(default_factory=list)
    papi: Path | None = None
    papi_phases: list[str] = field(default_factory=list)
    overall: Path | None = None
    physical: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def found(self) -> list[str]:
        return [k for k in KINDS if getattr(self, k) is not None]

    @property
    def absent(self) -> list[str]:
        return [k for k in KINDS if getattr(self, k) is None]

    def location(self, kind: str) -> str | None:
        """Where ``kind`` is, relative to the run folder (``.`` for the folder itself)."""
        where: Path | None = getattr(self, kind)
        if where is None:
            return None
        try:
            return str(where.relative_to(self.root))
        except ValueError:
            return str(where)


def _pe_phases(folder: Path, kind: str) -> list[str]:
    """The phase keys of ``folder``'s files of ``kind`` (none: empty); the
    files are looked for as :func:`~actorprof.read.find_pe_files` does, and
    no :class:`~actorprof.read.TraceFile` is built (65,536 of them cost a
    quarter of a second; the read builds them)."""
    try:
        return pe_file_phases(folder, kind)
    except NoTraceError:
        return []


def find_run_traces(path: str | PathLike[str], *, kinds: Collection[str] = KINDS) -> RunTraces:
    """Find every trace kind (of ``kinds``) in a run folder and its immediate subfolders.

    The folder itself is searched first, then its subfolders in name order
    (hidden ones skipped), so both the flat layout (all files in the run
    folder) and the examples' layout (``logical/``, ``papi/``, ``overall/``,
    ``physical/``) work. The first folder holding a kind wins; later ones are
    noted. A command that reads one kind looks for that one only (the PAPI
    folder of a 65,536-PE run is 65,536 names to match for nothing: 0.35 s).

    Raises
    ------
    UsageError
        ``path`` is not a folder.
    """
    root = Path(path)
    if not root.is_dir():
        raise UsageError(
            f"{root}: not a folder. Give the run folder (the one holding the traces, or "
            "logical/, papi/, overall/, physical/ subfolders)."
        )
    try:
        _, names = list_folder(root)
    except OSError as exc:
        raise UsageError(f"{root}: cannot list this folder ({exc.strerror})") from exc
    folders = [root, *(root / name for name in names if not name.startswith("."))]
    found: dict[str, Any] = {}
    notes: list[str] = []

    def take(kind: str, where: Path, extra: dict[str, Any] | None = None) -> None:
        if kind in found:
            notes.append(f"{kind} trace also in {where}: not read (using {found[kind]})")
            return
        found[kind] = where
        found.update(extra or {})

    pe_kinds = {kind: pe for kind, pe in _PE_KINDS.items() if kind in kinds}
    file_kinds = {kind: name for kind, name in _FILE_KINDS.items() if kind in kinds}
    for folder in folders:
        for kind, pe_kind in pe_kinds.items():
            phases = _pe_phases(folder, pe_kind)
            if phases:
                take(kind, folder, {f"{kind}_phases": phases})
        for kind, name in file_kinds.items():
            if (folder / name).is_file():
                take(kind, folder / name)
    return RunTraces(root=root, notes=notes, **found)


_PE_KINDS = {"logical": "send", "papi": "papi"}
_FILE_KINDS = {"overall": OVERALL_FILE_NAME, "physical": PHYSICAL_FILE_NAME}


def holds_trace(folder: str | PathLike[str], kind: str) -> bool:
    """Whether ``folder`` itself holds a ``kind`` trace (as :func:`find_run_traces`
    looks for it there): a command given the trace folder itself need not
    look through the whole run."""
    where = Path(folder)
    if kind in _PE_KINDS:
        try:
            return has_pe_files(where, _PE_KINDS[kind])
        except (OSError, ActorProfError):
            return False
    try:
        return kind in _FILE_KINDS and (where / _FILE_KINDS[kind]).is_file()
    except OSError:  # a folder without x permission: the reader says why
        return False
