"""The logical view's files: heatmap, violin, loads, matrices, tables, summary."""

from __future__ import annotations

from typing import Any


def write_logical(
    view: Any, out: Any, *, metric: str, level: str, log_scale: bool, top: int
) -> None:
    from ..plot import plot_heatmap, plot_pe_loads, plot_violin
    from . import new_figure

    unit = "PE" if level == "pe" else "node"
    value_label = "messages" if metric == "count" else "bytes"
    prefix = "" if level == "pe" else "node_"
    phase = f", phase {view.report.phase}" if view.report.phase else ""
    selfs = "" if view.self_sends == "include" else f", self-sends {view.self_sends}"

    matrix = view.matrix(metric, level)
    n = max(matrix.shape)
    # grows with the number of annotated cells, capped (a 17-inch 32 x 32 figure
    # cost 330 MB to render); beyond 32 the matrix is an image without numbers
    size = (
        (min(14.0, max(7.0, 0.42 * n + 4.0)), min(12.5, max(6.0, 0.38 * n + 3.0)))
        if n <= 32
        else (11.0, 9.5)
    )
    fig = new_figure(*size)
    plot_heatmap(
        matrix,
        ax=fig.axes[0],
        log=log_scale,
        value_label=value_label,
        title=f"Logical {value_label} {unit} x {unit}{phase}{selfs}",
    )
    out.figure(fig, f"{prefix}heatmap")

    fig = new_figure(7.5, 5.5)
    plot_violin(
        view.loads(metric, level),
        ax=fig.axes[0],
        value_label=value_label,
        unit_label=unit,
        title=f"Logical {value_label} per {unit}: sent and received{phase}{selfs}",
    )
    out.figure(fig, f"{prefix}violin")

    fig = new_figure(max(7.5, min(14.0, 0.12 * n + 5.0)), 4.5)
    plot_pe_loads(
        view.loads(metric, level),
        ax=fig.axes[0],
        value_label=value_label,
        unit_label=unit,
        title=f"Logical {value_label} sent and received by {unit} id{phase}{selfs}",
    )
    out.figure(fig, f"{prefix}loads")

    if level == "pe":
        out.csv(view.counts, "counts")
        out.csv(view.bytes, "bytes")
    else:
        out.csv(view.node_counts, "node_counts")
        out.csv(view.node_bytes, "node_bytes")
        out.csv(view.nodes, "nodes")
    out.csv(view.pes, "pes")
    summary = view.summary(top=top)
    summary["options"] = {"metric": metric, "level": level, "log": log_scale}
    out.json(summary, "summary")
