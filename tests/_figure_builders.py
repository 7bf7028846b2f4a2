"""What the tests of the kinds' figure builders share: a sink that keeps the
builders (and a report's collector that keeps them), a figure's PNG bytes,
its titles placed by matplotlib again, and a check that a builder draws in a
process that imports neither pandas nor the kind's module."""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from actorprof.report.html import EmbeddedFigure, FigureCollector
from actorprof.write import save_png

from .conftest import fresh_python


class Builders:
    """A sink that keeps the figure builders it is given (tables are dropped)."""

    def __init__(self) -> None:
        self.builders: dict[str, Any] = {}

    def draw(self, build: Any, name: str) -> None:
        self.builders[name] = build

    def csv(self, *args: object, **kwargs: object) -> None:
        pass

    def csv_parts(self, *args: object, **kwargs: object) -> None:
        pass

    def json(self, *args: object) -> None:
        pass


class BuilderCollector(FigureCollector):
    """The report's figure collector keeping each figure's builder, pickled
    (what a figure server is sent), as the figure's data: two equal builders
    draw the same figure, so tests of which figures a report makes, and in
    what order, compare them without drawing them."""

    def draw(self, build: Any, name: str, *, dpi: int | None = None) -> str:
        built = pickle.dumps(build, protocol=pickle.HIGHEST_PROTOCOL)
        kept = EmbeddedFigure(self.section, self.scope, name, "", built, self.fmt, 0, 0)
        self.figures.append(kept)
        return name


def pooled_physical(folder: Path) -> Path:
    """A physical trace of 1,100 PEs in ``folder``: beyond DENSE_MAX_PES, its
    heatmap pools blocks."""
    lines = [f"local_send, {4096 * (1 + pe % 3)}, {pe}, {(pe * 7) % 1100}\n" for pe in range(1100)]
    lines += [f"nonblock_send, 8192, {pe}, {(pe + 550) % 1100}\n" for pe in range(0, 1100, 5)]
    (folder / "physical.txt").write_text("".join(lines))
    return folder


def placed_by_matplotlib(fig: Figure) -> Figure:
    """``fig`` with its titles placed again at each draw (matplotlib's default,
    which :func:`actorprof.write.titles_at_the_top` turns off)."""
    for ax in fig.axes:
        ax._autotitlepos = None  # what a title set without y has
    return fig


def png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    save_png(fig, buffer, dpi=50)
    return buffer.getvalue()


def draw_apart(builders: dict[str, Any], kind: str, folder: Path) -> None:
    """Unpickle ``builders`` in a new process (as a figure server does) and
    save each figure in ``folder``; that process must not import pandas,
    ``actorprof.kinds.<kind>`` or the engine."""
    job = folder / "figures.pickle"
    job.write_bytes(pickle.dumps(builders))
    code = (
        "import pickle, sys\n"
        "from actorprof.write import OutputWriter\n"
        f"out = OutputWriter({str(folder)!r}, kind={kind!r})\n"
        f"for name, build in pickle.loads(open({str(job)!r}, 'rb').read()).items():\n"
        "    out.figure(build(), name)\n"
        f"print(sorted(m for m in ('pandas', 'actorprof.kinds.{kind}', 'actorprof.engine')"
        " if m in sys.modules))\n"
    )
    printed = fresh_python(code)
    assert printed.strip().splitlines()[-1] == "[]"
