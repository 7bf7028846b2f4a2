"""The Python examples of README.md and docs/*.md run.

Each ```python block runs on its own (a fresh namespace) in a temporary
folder where ``examples/`` is the repository's shipped traces, so examples
name real files the way a reader would type them. A block that is not meant
to run (it needs a cluster, or shows a fragment) is preceded by the line
``<!-- not-run -->``; it must still compile.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOT_RUN = "<!-- not-run -->"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def python_blocks() -> Iterator[tuple[str, str, bool]]:
    """(where, code, runs) of every ```python block."""
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 2  # first line of code
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            where = f"{path.relative_to(ROOT)}:{line}"
            yield where, match.group(1), before.strip() != NOT_RUN


BLOCKS = list(python_blocks())


def test_blocks_are_found() -> None:
    assert len(BLOCKS) >= 8, [where for where, _, _ in BLOCKS]


@pytest.mark.parametrize(("where", "code", "runs"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_docs_example(
    where: str, code: str, runs: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled = compile(code, where, "exec")
    if not runs:
        pytest.skip(f"{where} is marked {NOT_RUN}")
    os.symlink(ROOT / "examples", tmp_path / "examples", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    exec(compiled, {"__name__": "__docs_example__"})


def test_figure_examples_use_constrained_layout() -> None:
    """Examples that draw give the plot an Axes of a constrained-layout figure."""
    drawing = [(where, code) for where, code, _ in BLOCKS if re.search(r"\bplot_\w+\(", code)]
    assert drawing
    for where, code in drawing:
        assert 'layout="constrained"' in code, where
        assert "ax=" in code, where
