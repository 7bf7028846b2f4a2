"""Text helpers shared by every layer (readers, analyses, reports)."""

from __future__ import annotations

__all__ = ["format_ranges"]


def format_ranges(values: list[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` -> ``"0-2, 5, 7-8"``."""
    parts: list[str] = []
    start = prev = None
    for v in sorted(values):
        if start is None:
            start = prev = v
        elif prev is not None and v == prev + 1:
            prev = v
        else:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = prev = v
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ", ".join(parts)
