"""Layout figures: fragment maps (thread / warp / local index) and shared-memory swizzle and bank maps.

``LayoutRecord.plot()`` and ``LayoutRecord.to_matplotlib()`` call
:func:`layout_figure` and :func:`layout_matplotlib`; the Layouts tab
(:mod:`tilelab.views.layout_view`) shows the same figures.
"""

from __future__ import annotations

import numpy as np

from tilelab.records import LayoutKind, LayoutRecord
from tilelab.views.banks import bank_conflicts, bank_map

__all__ = [
    "COLORS",
    "fragment_grid",
    "label_cells",
    "layout_figure",
    "layout_matplotlib",
    "leading_count",
    "shared_grid",
]

COLORS = ("thread", "warp", "local")
LABEL_LIMIT = 1024  # cells; above this T#/L# labels are unreadable
_SCALES = {"thread": "Turbo", "warp": "Turbo", "local": "Viridis", "offset": "Viridis", "bank": "Twilight"}


def _tiles(array: np.ndarray) -> np.ndarray:
    """``array`` as a stack of 2-D tiles: leading dims flattened, a 1-D array is one row."""
    array = np.asarray(array)
    if array.ndim <= 1:
        return array.reshape(1, 1, -1)
    return array.reshape(-1, *array.shape[-2:])


def leading_count(layout: LayoutRecord) -> int:
    """How many 2-D tiles the layout has (the product of the dims before the last two)."""
    return int(np.prod(layout.shape[:-2], dtype=np.int64)) if len(layout.shape) > 2 else 1


def label_cells(rows: int, cols: int) -> bool:
    """Whether ``T#/L#`` labels are readable on a ``rows`` x ``cols`` tile."""
    return rows * cols <= LABEL_LIMIT and cols <= 32


def fragment_grid(layout: LayoutRecord, replica: int = 0, index: int = 0) -> dict[str, np.ndarray]:
    """2-D ``thread``, ``warp`` and ``local`` tables of tile ``index`` (leading dims flattened) for ``replica``."""
    if layout.thread is None or layout.local_index is None:
        raise ValueError(f"layout of {layout.buffer!r} has no thread tables (kind {layout.kind.value})")
    if not 0 <= replica < layout.thread.shape[0]:
        raise ValueError(f"replica {replica} out of range: {layout.buffer!r} has {layout.thread.shape[0]}")
    thread = _tiles(layout.thread[replica])[index]
    return {"thread": thread, "warp": thread // 32, "local": _tiles(layout.local_index[replica])[index]}


def shared_grid(layout: LayoutRecord, index: int = 0) -> dict[str, np.ndarray]:
    """2-D ``offset`` and ``bank`` tables of tile ``index`` (leading dims flattened)."""
    return {"offset": _tiles(layout.offset)[index], "bank": _tiles(bank_map(layout))[index]}


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
    top = {"thread": max(layout.threads, int(grid["thread"].max()) + 1) - 1, "local": int(grid["local"].max())}
    top["warp"] = top["thread"] // 32
    trace = go.Heatmap(
        z=z,
        x=np.arange(cols),
        y=np.arange(rows),
        customdata=custom,
        colorscale=_SCALES[color],
        zmin=0,
        zmax=max(1, top[color]),
        colorbar={"title": {"text": color}},
        hovertemplate="row %{y}, col %{x}<br>thread %{customdata[0]} (warp %{customdata[1]})"
        "<br>local index %{customdata[2]}<br>replica %{customdata[3]}<extra></extra>",
        xgap=1 if cols <= 64 else 0,
        ygap=1 if rows <= 64 else 0,
    )
    if labels if labels is not None else label_cells(rows, cols):
        text = np.char.add(np.char.add("T", grid["thread"].astype(str)), np.char.add("/L", grid["local"].astype(str)))
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
    where = f" [tile {index}]" if leading_count(layout) > 1 else ""
    shape = "×".join(str(n) for n in layout.shape)
    return f"{layout.buffer}{where}: {layout.kind.value} {shape} {layout.dtype}{extra}"


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
        Fragments: colour cells by ``"thread"``, ``"warp"`` (thread // 32) or ``"local"`` index.
    replica
        Fragments: which replica of a replicated fragment to show.
    warp
        Fragments: show only the elements owned by this warp.
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
        figure.add_annotation(text=f"no element table for {layout.description}", showarrow=False)
        figure.update_layout(title=_title(layout, index))
    figure.update_layout(
        height=max(320, min(720, 120 + 8 * _rows(layout))), margin={"l": 50, "r": 20, "t": 60, "b": 40}
    )
    return figure


def _rows(layout: LayoutRecord) -> int:
    return layout.shape[-2] if len(layout.shape) >= 2 else 1


def layout_matplotlib(
    layout: LayoutRecord, color: str = "thread", replica: int = 0, index: int = 0, labels: bool | None = None
):
    """A static matplotlib figure of ``layout`` (same tables and colours as :func:`layout_figure`)."""
    from matplotlib.figure import Figure

    if layout.kind is LayoutKind.FRAGMENT:
        grid = fragment_grid(layout, replica, index)
        panels: list[tuple[str, np.ndarray, str]] = [(color, grid[color], "turbo" if color != "local" else "viridis")]
        text = np.char.add(np.char.add("T", grid["thread"].astype(str)), np.char.add("/L", grid["local"].astype(str)))
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
