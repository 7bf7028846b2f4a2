"""Package metadata and the source distribution.

The core install is the design card's five packages; anything else is an
extra. The source distribution carries what its tests need, so they run
from it (and nothing of the repository's CI or caches).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest

import actorprof

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - pytest itself depends on tomli before 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CORE = {"numpy", "pandas", "matplotlib", "seaborn", "click"}


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def requirement_name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def test_core_dependencies_are_the_design_card_packages() -> None:
    project = pyproject()["project"]
    assert {requirement_name(r) for r in project["dependencies"]} == CORE
    for extra, requirements in project["optional-dependencies"].items():
        assert "pyarrow" not in {requirement_name(r) for r in requirements}, extra


def test_license_file_and_metadata() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("BSD 3-Clause License")
    assert "Copyright (c) 2026, the actorprof developers" in text
    project = pyproject()["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    # PEP 639: a license expression excludes license classifiers
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]


def test_citation_version_is_the_package_version() -> None:
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(r"(?m)^version: (\S+)$", text)[1] == actorprof.__version__  # type: ignore[index]
    assert "doi: 10.1109/SCW63240.2024.00199" in text


def test_index_description_has_no_relative_links() -> None:
    """The package index shows the readme alone: relative links and pictures break there."""
    readme = ROOT / pyproject()["project"]["readme"]
    text = readme.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)]*)\)", text) + re.findall(r"src=\"([^\"]*)\"", text)
    assert [t for t in targets if not t.startswith("https://")] == []
    assert "![" not in text
    # the repository README's two commands, word for word
    commands = re.findall(r"(?m)^python3 -m pip install .*$", (ROOT / "README.md").read_text())
    assert len(commands) == 2
    for command in commands:
        assert command in text


def _setuptools_major() -> int:
    try:
        return int(version("setuptools").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return 0


def _tree_files(folder: Path) -> set[str]:
    files = (p.relative_to(ROOT) for p in folder.rglob("*") if p.is_file())
    return {
        str(p)
        for p in files
        if p.suffix != ".pyc" and not any(x == "__pycache__" or x.startswith(".") for x in p.parts)
    }


@pytest.mark.skipif(
    _setuptools_major() < 77, reason="building the sdist needs setuptools>=77 (the test extra)"
)
def test_sdist_holds_what_its_tests_need(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
        ),
    )
    out = tmp_path / "dist"
    out.mkdir()
    code = f"from setuptools import build_meta as b; print(b.build_sdist({str(out)!r}))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=source, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (sdist,) = out.glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    needed = (
        _tree_files(ROOT / "tests")
        | _tree_files(ROOT / "examples")
        | _tree_files(ROOT / "docs")
        | {"LICENSE", "README.md", "CHANGELOG.md", "CONTRIBUTING.md", "CITATION.cff"}
        | {"pyproject.toml", "actorprof/py.typed"}
    )
    assert needed - names == set()
    assert "tests/conftest.py" in names and "tests/_synthetic.py" in names
    assert not [n for n in names if n.startswith(".ci") or "__pycache__" in n or n.endswith(".pyc")]
