"""The public API of ``import actorprof``: complete, typed, checked by mypy, and fast to import."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import actorprof as ap

from .conftest import fresh_python

ROOT = Path(__file__).resolve().parent.parent
INIT = ROOT / "actorprof" / "__init__.py"

#: Names in public annotations that are not ours to export (stdlib, numpy,
#: pandas, matplotlib) or are generic words of the annotation syntax.
FOREIGN = {
    "Any", "ArrayLike", "Axes", "Callable", "Colormap", "DataFrame", "Figure", "Iterable",
    "Iterator", "Literal", "Mapping", "None", "Normalize", "Path", "PathLike", "Sequence",
    "Series", "Sink", "np", "pd", "ndarray", "NDArray",
}  # fmt: skip


def type_checking_imports() -> dict[str, str]:
    """Name -> module of the ``if TYPE_CHECKING:`` imports of ``actorprof/__init__.py``."""
    tree = ast.parse(INIT.read_text())
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
    )
    found = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names:
            found[alias.asname or alias.name] = node.module or ""
    return found


def test_all_exports_and_type_checking_imports_agree() -> None:
    exports = ap._EXPORTS
    assert set(ap.__all__) == {"__version__", *exports}
    assert type_checking_imports() == exports


@pytest.mark.parametrize("name", sorted(ap._EXPORTS))
def test_every_name_resolves_to_its_module(name: str) -> None:
    module = importlib.import_module(f"actorprof.{ap._EXPORTS[name]}")
    assert getattr(ap, name) is getattr(module, name)


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_function"):
        ap.no_such_function  # type: ignore[attr-defined]  # noqa: B018
    assert "read_logical" in dir(ap)


def annotation_names(obj: object) -> set[str]:
    """Capitalised names in the annotations of a function, or a class's methods and fields."""
    targets = [obj]
    texts = []
    if inspect.isclass(obj):
        targets = [m for n, m in vars(obj).items() if callable(m) and not n.startswith("_")]
        targets.append(obj.__init__)  # type: ignore[misc]
        if dataclasses.is_dataclass(obj):
            texts += [str(f.type) for f in dataclasses.fields(obj)]
    for target in targets:
        try:
            sig = inspect.signature(target)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
        texts += [str(p.annotation) for p in sig.parameters.values()]
        texts.append(str(sig.return_annotation))
    words = {w for t in texts for w in re.findall(r"[A-Za-z_]\w*", t)}
    return {w for w in words if w[0].isupper() and w not in FOREIGN}


def test_types_in_public_signatures_are_exported() -> None:
    missing = {}
    for name in ap.__all__:
        if name == "__version__":
            continue
        unknown = annotation_names(getattr(ap, name)) - set(ap.__all__)
        if unknown:
            missing[name] = sorted(unknown)
    assert not missing


def test_import_actorprof_imports_no_heavy_library() -> None:
    code = (
        "import sys, actorprof, actorprof.cli; "
        "print(sorted(m for m in ('numpy', 'pandas', 'matplotlib', 'seaborn') if m in sys.modules))"
    )
    printed = fresh_python(code)
    assert printed.strip() == "[]"


@pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,  # run as `python -m mypy` below
    reason="mypy is not installed for this Python",
)
def test_mypy_rejects_an_unknown_name_and_knows_the_types(tmp_path: Path) -> None:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(
        "import actorprof as ap\n"
        "\n"
        "view: ap.LogicalView = ap.logical_view('run/')\n"
        "metric: ap.Metric = 'count'\n"
        "times: ap.Timeline = ap.timeline_view('run/').timeline\n"
        "reveal_type(ap.read_logical)\n"
        "ap.no_such_function()\n"
    )
    env = {**os.environ, "MYPYPATH": str(ROOT), "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent",
         str(snippet)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    lines = result.stdout.splitlines()
    errors = [line for line in lines if ": error:" in line]
    assert len(errors) == 1, result.stdout
    assert "snippet.py:7" in errors[0] and "no_such_function" in errors[0]
    assert any("snippet.py:6: note: Revealed type" in line and "def (" in line for line in lines)
