"""Exceptions and warnings raised by actorprof.

Every error a user can meet derives from :class:`ActorProfError`; the CLI turns
them into a one-paragraph message and exit code 1 (data) or 2 (usage).
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "ActorProfError",
    "ActorProfWarning",
    "NoTraceError",
    "TraceFormatError",
    "UsageError",
]


class ActorProfError(Exception):
    """Base class of actorprof's errors: what went wrong, where, how to fix it."""

    exit_code = 1


class UsageError(ActorProfError):
    """An option or argument does not fit the data (exit code 2)."""

    exit_code = 2


class NoTraceError(ActorProfError):
    """No trace file of the requested kind was found."""


class TraceFormatError(ActorProfError):
    """A trace file cannot be used; names the file and, where known, the line.

    Parameters
    ----------
    message
        What is wrong and how to fix it.
    path
        The file concerned.
    line
        1-based line number, when the problem is on one line.
    """

    def __init__(
        self, message: str, *, path: str | Path | None = None, line: int | None = None
    ) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.message = message
        where = ""
        if self.path is not None:
            where = self.path if line is None else f"{self.path}:{line}"
            where += ": "
        super().__init__(where + message)


class ActorProfWarning(UserWarning):
    """Data was skipped or looks suspicious; nothing was lost silently."""
