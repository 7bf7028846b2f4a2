"""The package's shape (docs/architecture.md): every import points down the pipeline.

read -> analyze -> plot -> write, with engine/ (the parallel map of read/'s
loops), kinds/ (one trace kind: view and writer) and report/ (everything about
a run) above them, and cli.py on top. A layer may import the layers below it
and the base modules, never one above or beside it; nothing outside read/
imports read/'s private modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "actorprof"

BASE = {"errors", "schema", "_text", "_version", "_progress", "_repr", "_lazy", "_memory"}
#: What each layer may import (besides itself and the base modules).
ALLOWED: dict[str, set[str]] = {
    "read": set(),
    "analyze": set(),
    "write": set(),
    "plot": {"analyze"},
    "engine": {"read", "analyze"},
    "kinds": {"read", "analyze", "plot", "engine", "write"},
    "report": {"read", "analyze", "plot", "engine", "write", "kinds"},
    "cli": {"read", "analyze", "plot", "engine", "write", "kinds", "report"},
    "__init__": {"read", "analyze", "plot", "engine", "write", "kinds", "report"},
    "__main__": {"cli"},
}


def _layer(module: str) -> str:
    """``actorprof.kinds.logical`` -> ``kinds``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every actorprof import in ``path``."""
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    package = list(relative.parts[:-1])  # the package a relative import starts from
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if not target.startswith("actorprof"):
                continue
            found.append((node.lineno, target))
            # "from .read import _scan": a private name may be a module too
            found.extend(
                (node.lineno, f"{target}.{a.name}") for a in node.names if a.name.startswith("_")
            )
        elif isinstance(node, ast.Import):
            found.extend(
                (node.lineno, a.name) for a in node.names if a.name.startswith("actorprof")
            )
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_imports_point_down_the_pipeline(path: Path) -> None:
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    mine = _layer(module)
    if mine in BASE:
        allowed: set[str] = set()
    else:
        allowed = ALLOWED[mine]
    for line, target in _imports(path):
        theirs = _layer(target)
        if theirs == "__init__":
            raise AssertionError(f"{module}:{line} imports the package's top ({target})")
        if not (theirs == mine or theirs in BASE or theirs in allowed):
            raise AssertionError(f"{module}:{line} imports {target} ({mine} -> {theirs})")
        private = [p for p in target.split(".")[2:] if p.startswith("_")]
        if theirs == "read" and mine != "read" and private:
            raise AssertionError(f"{module}:{line} imports read's private {target}")


def test_the_view_to_file_seam_is_typed() -> None:
    for path in sorted((PACKAGE / "kinds").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("write_"):
                for arg in node.args.args[:2]:
                    assert arg.annotation is not None, (path.name, node.name, arg.arg)
                    assert ast.unparse(arg.annotation) != "Any", (path.name, node.name, arg.arg)
