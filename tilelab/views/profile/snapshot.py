"""The Profile tab's snapshot, drawn from :func:`~tilelab.views.profile.data.profile_data` alone: per profiled
launch its Speed of Light bars, roofline position (an SVG image), where the warps were (by cell line, and
by CUDA line under a fold), occupancy, launch and ncu's advice.

Script-free, every kernel name and advice text escaped; colours come from
JupyterLab's theme variables (with light fallbacks), so dark themes work.
"""

from __future__ import annotations

from typing import Any

from tilelab.views.html import MONO, TRACK, chart, escape, table

__all__ = ["profile_snapshot", "roofline_svg"]

_BOX = "font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;line-height:1.4"
_TEXT = "var(--jp-ui-font-color1,#1f2328)"
_MUTED = "var(--jp-ui-font-color2,#6e7781)"
_GRID = "var(--jp-border-color2,#d0d7de)"
_ROOF = "var(--jp-brand-color1,#0969da)"
_POINT = "var(--jp-error-color1,#cf222e)"
_WARN = "var(--jp-warn-color1,#9a6700)"


def _track(width: float, size: str) -> str:
    """A bar filled to ``width`` percent; ``size`` places and sizes its track."""
    fill = f"display:block;height:8px;width:{width:.1f}%;background:{_ROOF};border-radius:4px"
    return f"<span style='{size};height:8px;background:{TRACK};border-radius:4px'><span style='{fill}'></span></span>"


def _bar(bar: dict[str, Any]) -> str:
    return (
        f"<div data-tilelab='sol-bar' style='display:flex;align-items:center;gap:8px'>"
        f"<span style='width:100px;color:{_MUTED}'>{escape(bar['label'])}</span>"
        f"{_track(bar['width'], 'flex:0 0 240px')}<span>{escape(bar['text'])}</span></div>"
    )


def roofline_svg(plot: dict[str, Any]) -> str:
    """The roofline plot (memory and compute roofs, the kernel's point) as an SVG document."""
    width, height, left, right, top, bottom = (plot[key] for key in ("width", "height", "left", "right", "top", "bottom"))
    body = []
    for tick in plot["xticks"]:
        x, label = tick["at"], escape(tick["label"])
        body.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{top}' y2='{height - bottom}' style='stroke:{_GRID}'/>")
        body.append(f"<text x='{x:.1f}' y='{height - bottom + 13}' text-anchor='middle' style='fill:{_MUTED}'>{label}</text>")
    for tick in plot["yticks"]:
        y, label = tick["at"], escape(tick["label"])
        body.append(f"<line x1='{left}' x2='{width - right}' y1='{y:.1f}' y2='{y:.1f}' style='stroke:{_GRID}'/>")
        body.append(f"<text x='{left - 4}' y='{y + 4:.1f}' text-anchor='end' style='fill:{_MUTED}'>{label}</text>")
    path = " ".join(f"{'M' if k == 0 else 'L'}{x:.1f},{y:.1f}" for k, (x, y) in enumerate(plot["roof"]))
    body.append(f"<path data-tilelab='roof' d='{path}' style='fill:none;stroke:{_ROOF};stroke-width:2'/>")
    point = plot["point"]
    body.append(
        f"<circle data-tilelab='roofline-point' cx='{point['x']:.1f}' cy='{point['y']:.1f}' r='4' "
        f"style='fill:{_POINT}'><title>{escape(point['label'])}</title></circle>"
    )
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' viewBox='0 0 {width} {height}' "
        f"data-tilelab='roofline-plot' style='{_BOX};font-size:10px' role='img' aria-label='{escape(point['label'])}'>"
        + "".join(body)
        + f"<text x='{(width + left) / 2:.0f}' y='{height - 4}' text-anchor='middle' style='fill:{_MUTED}'>"
        f"{escape(plot['x_title'])}</text>"
        f"<text transform='translate(10 {(height + top - bottom) / 2:.0f}) rotate(-90)' "
        f"text-anchor='middle' style='fill:{_MUTED}'>{escape(plot['y_title'])}</text></svg>"
    )


def _advice(items: list[dict[str, str]]) -> str:
    rows = [
        f"<li data-tilelab='advice'><b>{escape(item['rule'])}</b> "
        f"<span style='color:{_WARN}'>{escape(item['kind'])}{escape(item['speedup'])}</span><br>"
        f"<span>{escape(item['description'])}</span></li>"
        for item in items
    ]
    return f"<ol style='margin:2px 0;padding-left:20px'>{''.join(rows)}</ol>"


def _share_bar(row: dict[str, Any]) -> str:
    track = _track(row["width"], "display:inline-block;width:40px")
    return f"<span style='display:inline-flex;align-items:center;gap:6px;white-space:nowrap'>{track}{escape(row['share'])}</span>"


def _reasons(row: dict[str, Any]) -> str:
    return ", ".join(
        f"<span title='{escape(meaning)}' style='white-space:nowrap'>{escape(label)} {escape(share)}</span>"
        for label, share, meaning in row["reasons"]
    )


def _warps(row: dict[str, Any], shown: bool) -> tuple[str, ...]:
    """The row's warps cell, where the section has that column."""
    if not shown:
        return ()
    return (", ".join(f"<span style='white-space:nowrap'>{escape(part)}</span>" for part in row["warps"]),)


def _code(text: str, width: int = 40) -> str:
    """``text`` in one line of at most ``width`` characters, cut with "…" (the whole text is its tooltip)."""
    clip = f"display:block;max-width:{width * 0.6:g}em;overflow:hidden;text-overflow:ellipsis;white-space:pre"  # 0.6em: a monospace character
    return f"<code title='{escape(text)}' style='{MONO};{clip}'>{escape(text)}</code>"


def _samples(section: dict[str, Any]) -> str:
    parts = [f"<div style='color:{_MUTED}'>{escape(section['about'])}</div>"]
    if section["summary"]:
        parts.append(f"<div data-tilelab='samples-summary'>{escape(section['summary'])}</div>")
    warps = section["warps"]  # a column saying whose warps the samples were, in a warp-specialised kernel
    if section["cell"]:
        rows = [
            (_share_bar(row), escape(row["line"]), _code(row["code"]), _reasons(row), *_warps(row, warps))
            for row in section["cell"]
        ]
        head = ("share", "cell line", "code", "why not issuing", *(("warps",) if warps else ()))
        parts.append(table(rows, head, " data-tilelab='samples-by-cell-line'"))
    if section["cuda"]:
        rows = [
            (_share_bar(row), escape(row["line"]), _code(row["code"]), _code(row["cell"], 28), _reasons(row), *_warps(row, warps))
            for row in section["cuda"]
        ]
        head = ("share", "CUDA line", "code", "cell line", "why not issuing", *(("warps",) if warps else ()))
        parts.append(
            f"<details style='margin-top:4px'><summary style='cursor:pointer'>by CUDA line "
            f"(the {len(rows)} with the most samples)</summary>"
            + table(rows, head, " data-tilelab='samples-by-cuda-line'")
            + "</details>"
        )
    if section["note"]:
        parts.append(f"<div data-tilelab='samples-note' style='color:{_WARN}'>{escape(section['note'])}</div>")
    return "".join(parts)


def _rows(rows: list[list[str]], attrs: str = "") -> str:
    return table([(escape(label), escape(value)) for label, value in rows], attrs=attrs)


def _roofline_chart(plot: dict[str, Any]) -> str:
    """The roofline plot as an image, the kernel's point with its label on hover."""
    point = plot["point"]
    tip = (point["x"] - 5, point["y"] - 5, 10, 10, point["label"])
    return chart(roofline_svg(plot), "roofline", tips=[tip])


def _section(section: dict[str, Any]) -> str:
    kind = section["kind"]
    if kind == "bars":
        body = "".join(_bar(bar) for bar in section["bars"])
    elif kind == "roofline":
        plot = section["plot"]
        body = _rows(section["rows"], " data-tilelab='roofline'") + (_roofline_chart(plot) if plot is not None else "")
    elif kind == "advice":
        body = _advice(section["advice"])
    elif kind == "samples":
        body = _samples(section)
    else:
        body = _rows(section["rows"])
    return f"<div style='margin-top:6px'><div style='font-weight:600;color:{_MUTED}'>{escape(section['title'])}</div>{body}</div>"


def _kernel(kernel: dict[str, Any]) -> str:
    duration = f" — {kernel['duration']}" if kernel["duration"] else ""
    return (
        f"<div data-tilelab='profile-kernel' style='margin:4px 0 10px 0'>"
        f"<div style='font-weight:600'>{escape(kernel['head'])}{escape(duration)}</div>"
        + "".join(_section(section) for section in kernel["sections"])
        + "</div>"
    )


def profile_snapshot(data: dict[str, Any]) -> str:
    """The Profile tab: a block per profiled launch, then where it ran and the notes."""
    parts = [f"<div data-tilelab='profile' style='{_BOX};color:{_TEXT}'>"]
    parts += [_kernel(kernel) for kernel in data["kernels"]]
    if not data["kernels"]:
        parts.append(f"<div style='color:{_MUTED}'>ncu profiled no launch of this kernel</div>")
    if data["device"]:
        parts.append(f"<div style='color:{_MUTED}'>ran on {escape(data['device'])}</div>")
    parts += [f"<div data-tilelab='profile-note' style='color:{_MUTED}'>{escape(note)}</div>" for note in data["notes"]]
    return "".join(parts) + "</div>"
