"""Public names of a package imported on first use (PEP 562).

A command loads only the modules it runs (docs/performance.md, "Fixed
cost"): each package lists its public names and the submodule holding each
(``_EXPORTS``), and type checkers read the package's ``TYPE_CHECKING``
imports instead.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], names: Sequence[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``.

    ``exports`` maps a public name to the submodule (relative to ``package``)
    that defines it; a name is imported when first asked for, then kept in
    the package's namespace. ``names`` is the package's ``__all__``.
    """

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
