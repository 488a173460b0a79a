"""Plotly and matplotlib figures of a layout (``LayoutRecord.plot()`` and ``.to_matplotlib()``).

They draw the tables of :mod:`tilelab.views.layouts.tables` (absolute thread ids).
Plotly figures get a transparent, mid-grey template so they read in light and
dark JupyterLab themes alike; the Explorer itself draws layouts without plotly.
"""

from __future__ import annotations

import numpy as np

from tilelab.records import LayoutKind, LayoutRecord
from tilelab.views.html import plotly_text
from tilelab.views.layouts.banks import bank_conflicts
from tilelab.views.layouts.tables import fragment_grid, leading_count, shared_grid, thread_range

__all__ = ["COLORS", "THEME", "layout_figure", "layout_matplotlib"]

COLORS = ("thread", "warp", "local")
LABEL_LIMIT = 1024  # cells; above this T#/L# labels are unreadable in a figure

_SCALES = {"thread": "Turbo", "warp": "Turbo", "local": "Viridis", "offset": "Viridis", "bank": "Twilight"}
# Plotly cannot read CSS variables: transparent backgrounds and a grey that reads on white and on black.
THEME = {
    "paper_bgcolor": "rgba(0,0,0,0)",
    "plot_bgcolor": "rgba(0,0,0,0)",
    "font": {"color": "#8c8c8c"},
    "xaxis": {"gridcolor": "rgba(128,128,128,0.25)", "zerolinecolor": "rgba(128,128,128,0.4)"},
    "yaxis": {"gridcolor": "rgba(128,128,128,0.25)", "zerolinecolor": "rgba(128,128,128,0.4)"},
}


def label_cells(rows: int, cols: int) -> bool:
    """Whether ``T#/L#`` labels are readable on a ``rows`` x ``cols`` tile drawn at once (figures)."""
    return rows * cols <= LABEL_LIMIT and cols <= 32


def cell_labels(layout: LayoutRecord, grid: dict[str, np.ndarray]) -> np.ndarray:
    """``T<thread>/L<local>`` of every cell of a fragment grid, or the physical offset of a shared one."""
    if layout.kind is LayoutKind.FRAGMENT:
        thread, local = grid["thread"].astype(str), grid["local"].astype(str)
        return np.char.add(np.char.add("T", thread), np.char.add("/L", local))
    return grid["offset"].astype(str)


def _fragment_trace(layout: LayoutRecord, color: str, replica: int, warp: int | None, index: int, labels: bool | None):
    import plotly.graph_objects as go

    if color not in COLORS:
        raise ValueError(f"color {color!r} is not one of {COLORS}")
    grid = fragment_grid(layout, replica, index)
    z = grid[color].astype(float)
    if warp is not None:
        z[grid["warp"] != warp] = np.nan
    rows, cols = z.shape
    custom = np.stack([grid["thread"], grid["warp"], grid["local"], np.full_like(grid["thread"], replica)], axis=-1)
    start, end = thread_range(layout)
    bounds = {"thread": (start, max(end, int(grid["thread"].max()) + 1) - 1), "local": (0, int(grid["local"].max()))}
    bounds["warp"] = (bounds["thread"][0] // 32, bounds["thread"][1] // 32)
    low, high = bounds[color]
    trace = go.Heatmap(
        z=z,
        x=np.arange(cols),
        y=np.arange(rows),
        customdata=custom,
        colorscale=_SCALES[color],
        zmin=low,
        zmax=max(low + 1, high),
        colorbar={"title": {"text": color}},
        hovertemplate="row %{y}, col %{x}<br>thread %{customdata[0]} (warp %{customdata[1]})"
        "<br>local index %{customdata[2]}<br>replica %{customdata[3]}<extra></extra>",
        xgap=1 if cols <= 64 else 0,
        ygap=1 if rows <= 64 else 0,
    )
    if labels if labels is not None else label_cells(rows, cols):
        text = cell_labels(layout, grid)
        if warp is not None:
            text[grid["warp"] != warp] = ""
        trace.update(text=text, texttemplate="%{text}", textfont={"size": 9})
    return trace


def _shared_traces(layout: LayoutRecord, index: int, labels: bool | None):
    import plotly.graph_objects as go

    grid = shared_grid(layout, index)
    rows, cols = grid["offset"].shape
    custom = np.stack([grid["offset"], grid["bank"]], axis=-1)
    show = labels if labels is not None else label_cells(rows, cols)
    traces = []
    for name, column in (("offset", 0.45), ("bank", 1.0)):
        trace = go.Heatmap(
            z=grid[name],
            x=np.arange(cols),
            y=np.arange(rows),
            customdata=custom,
            colorscale=_SCALES[name],
            zmin=0,
            zmax=31 if name == "bank" else max(1, int(grid["offset"].max())),
            colorbar={"title": {"text": name}, "x": column},
            hovertemplate="row %{y}, col %{x}<br>offset %{customdata[0]}<br>bank %{customdata[1]}<extra></extra>",
            name=name,
        )
        if show:
            trace.update(text=grid[name].astype(str), texttemplate="%{text}", textfont={"size": 9})
        traces.append(trace)
    return traces


def _title(layout: LayoutRecord, index: int, extra: str = "") -> str:
    """The figure's title, escaped: plotly reads titles as a subset of HTML."""
    where = f" [tile {index}]" if leading_count(layout) > 1 else ""
    shape = "×".join(str(n) for n in layout.shape)
    return plotly_text(f"{layout.buffer}{where}: {layout.kind.value} {shape} {layout.dtype}{extra}")


def layout_figure(
    layout: LayoutRecord,
    color: str = "thread",
    replica: int = 0,
    warp: int | None = None,
    index: int = 0,
    labels: bool | None = None,
):
    """An interactive plotly figure of ``layout``.

    Parameters
    ----------
    layout
        A fragment (element -> thread, local index) or shared (element -> physical offset) layout.
    color
        Fragments: colour cells by ``"thread"`` (``threadIdx.x``), ``"warp"`` or ``"local"`` index.
    replica
        Fragments: which replica of a replicated fragment to show.
    warp
        Fragments: show only the elements owned by this warp (absolute: ``threadIdx.x // 32``).
    index
        Which 2-D tile of a layout with more than two dimensions (leading dims flattened).
    labels
        ``T#/L#`` (fragments) or offset/bank (shared) text in each cell; default: when the tile is small.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    if layout.kind is LayoutKind.FRAGMENT:
        figure = go.Figure(_fragment_trace(layout, color, replica, warp, index, labels))
        replicas = f", replica {replica}/{layout.replicas}" if layout.replicas > 1 else ""
        figure.update_layout(title=_title(layout, index, f" — {color}{replicas}"))
        figure.update_yaxes(autorange="reversed", scaleanchor="x", title="row")
        figure.update_xaxes(title="col", constrain="domain")
    elif layout.offset is not None:
        figure = make_subplots(
            rows=1, cols=2, subplot_titles=("physical offset", "bank (32 × 4 B)"), horizontal_spacing=0.12
        )
        for column, trace in enumerate(_shared_traces(layout, index, labels), start=1):
            figure.add_trace(trace, row=1, col=column)
        conflicts = bank_conflicts(layout, "row")
        figure.update_layout(title=_title(layout, index, f" — {conflicts.describe()}"))
        figure.update_yaxes(autorange="reversed")
    else:
        figure = go.Figure()
        figure.add_annotation(text=plotly_text(f"no element table for {layout.description}"), showarrow=False)
        figure.update_layout(title=_title(layout, index))
    rows = layout.shape[-2] if len(layout.shape) >= 2 else 1
    figure.update_layout(height=max(320, min(720, 120 + 8 * rows)), margin={"l": 50, "r": 20, "t": 60, "b": 40})
    figure.update_layout(**THEME)
    return figure


def layout_matplotlib(
    layout: LayoutRecord, color: str = "thread", replica: int = 0, index: int = 0, labels: bool | None = None
):
    """A static matplotlib figure of ``layout`` (same tables and colours as :func:`layout_figure`)."""
    from matplotlib.figure import Figure

    if layout.kind is LayoutKind.FRAGMENT:
        grid = fragment_grid(layout, replica, index)
        panels: list[tuple[str, np.ndarray, str]] = [(color, grid[color], "turbo" if color != "local" else "viridis")]
        text = cell_labels(layout, grid)
    else:
        grid = shared_grid(layout, index)
        panels = [("physical offset", grid["offset"], "viridis"), ("bank", grid["bank"], "twilight")]
        text = grid["bank"].astype(str)
    rows, cols = panels[0][1].shape
    figure = Figure(
        figsize=(min(16, 2 + 6 * len(panels)), min(12, 1.5 + 6 * rows / max(cols, 1))), layout="constrained"
    )
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    for axis, (name, values, cmap) in zip(axes, panels, strict=True):
        image = axis.imshow(values, cmap=cmap, interpolation="nearest", aspect="equal")
        figure.colorbar(image, ax=axis, shrink=0.8, label=name)
        axis.set_title(f"{layout.buffer}: {name}")
        axis.set_xlabel("col")
        axis.set_ylabel("row")
        if labels if labels is not None else label_cells(rows, cols):
            for (r, c), label in np.ndenumerate(text):
                axis.text(c, r, label, ha="center", va="center", fontsize=5)
    return figure
