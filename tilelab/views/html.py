"""The pieces every static HTML snapshot is made of: escaping, ``<details>`` sections, tables, fonts.

Snapshots are self-contained, script-free, inline CSS only, every user string
escaped: they are the ``text/html`` of each view's mime bundle, so a notebook
stays readable after nbconvert, on GitHub, in VS Code and with no kernel.
Sections are ``<details>`` blocks; pictures are SVG images (:func:`chart`) or coloured tables.
Each tab's snapshot (``views/<tab>/snapshot.py``) draws its tab's JSON with these.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["BOX", "ERROR_BACKGROUND", "ERROR_COLOUR", "MONO", "TRACK", "Tip", "chart", "details", "escape", "plotly_text", "sanitiser_proof", "table"]

MONO = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px"
BOX = "font-family:system-ui,-apple-system,Segoe UI,sans-serif;font-size:13px;line-height:1.4"
# Theme colours whose fallbacks stand alone in an untrusted notebook (see sanitiser_proof): translucent, so they
# read on a light page and a dark one.
TRACK = "var(--jp-layout-color3,rgba(128,128,128,0.25))"  # the empty part of a bar
ERROR_COLOUR = "var(--jp-error-color1,#cf222e)"  # an error's text and edge; .tl-error in tilelab.css for the widgets
ERROR_BACKGROUND = "var(--jp-rendermime-error-background,rgba(207,34,46,0.08))"
# A chart's hover region: left, top, width and height in the SVG's units, and the text shown on hover.
Tip = tuple[float, float, float, float, str]


def escape(value: Any) -> str:
    """``value`` as text safe inside HTML elements and quoted attributes."""
    return html.escape(str(value), quote=True)


def plotly_text(value: Any) -> str:
    """``value`` as plotly label or title text: plotly reads those as a subset of HTML (and decodes no ``&quot;``)."""
    return html.escape(str(value), quote=False)


def details(summary: str, body: str, open_: bool = False, attrs: str = "") -> str:
    """A ``<details>`` section; ``summary`` is escaped, ``body`` is trusted markup."""
    flag = " open" if open_ else ""
    return (
        f"<details{flag}{attrs} style='margin:6px 0'><summary style='cursor:pointer;font-weight:600'>"
        f"{escape(summary)}</summary><div style='margin:4px 0 4px 12px'>{body}</div></details>"
    )


def table(rows: Iterable[Sequence[str]], header: Sequence[str] = (), attrs: str = "") -> str:
    """A table of already-rendered cells (escape user text before passing it)."""
    cell = "padding:1px 8px;text-align:left;vertical-align:top;border-bottom:1px solid var(--jp-border-color2,rgba(128,128,128,0.2))"
    head = "".join(f"<th style='{cell}'>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='{cell}'>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table{attrs} style='border-collapse:collapse'>{f'<thead><tr>{head}</tr></thead>' if head else ''}<tbody>{body}</tbody></table>"


def chart(svg: str, alt: str, invert_when_dark: bool = True, tips: Iterable[Tip] = ()) -> str:
    """A complete ``<svg>`` document as an image (a data URI), with ``alt`` (escaped) as its text.

    Not inline: JupyterLab sanitises the text/html of a notebook it did not sign itself (a cloned one, or one run
    elsewhere), and its sanitiser drops every SVG tag but keeps their text, run together. An image passes whole.
    An image does not see the page's CSS variables, so the SVG's fallback (light) colours apply: under a dark theme
    TileLab's JupyterLab style inverts a chart's lightness (``invert_when_dark``), keeping its hues; a picture
    drawn in the snapshot's fixed palette, as the tables beside it are, stays as it is.

    An image shows none of its SVG's tooltips (``<title>``), so each of ``tips`` (in the units of the SVG's
    ``viewBox``) becomes an empty box laid over the image, in percents of it, whose ``title`` the browser shows
    on hover: the sanitiser keeps ``title`` and absolute positions.
    """
    data = base64.b64encode(svg.encode()).decode("ascii")
    kind = "tl-chart tl-chart-inverts" if invert_when_dark else "tl-chart"
    tips = list(tips)
    place = "max-width:100%;display:block" if tips else "max-width:100%"
    image = f"<img class='{kind}' src='data:image/svg+xml;base64,{data}' alt='{escape(alt)}' style='{place}'>"
    if not tips:
        return image
    size = _VIEW_BOX.search(svg)
    if size is None:
        raise ValueError("a chart with tips needs its SVG's viewBox='0 0 width height'")
    boxes = "".join(_tip_box(tip, float(size[1]), float(size[2])) for tip in tips)
    return (
        "<div class='tl-chart-box' style='position:relative;display:inline-block;max-width:100%;vertical-align:top'>"
        f"{image}{boxes}</div>"
    )


def _tip_box(tip: Tip, wide: float, high: float) -> str:
    x, y, width, height, text = tip
    place = f"left:{x / wide:.3%};top:{y / high:.3%};width:{width / wide:.3%};height:{height / high:.3%}"
    return f"<div class='tl-chart-tip' title='{escape(text)}' style='position:absolute;{place}'></div>"


_VIEW_BOX = re.compile(r"viewBox='0 0 ([\d.]+) ([\d.]+)'")
_STYLE = re.compile(r"style='([^']*)'")  # every user string is escaped with quote=True: a ' is always TileLab's markup
_VAR = re.compile(r"var\(\s*--[\w-]+\s*,\s*")
_THEME_TEXT = re.compile(r"color\s*:\s*var\(\s*--jp-ui-font-color[01]\s*,")  # the page's own text colour


def _fallbacks(declaration: str) -> str:
    """``declaration`` with each ``var(--name, fallback)`` replaced by its fallback."""
    out, start = [], 0
    while (found := _VAR.search(declaration, start)) is not None:
        depth, end = 1, found.end()
        while depth and end < len(declaration):
            depth += {"(": 1, ")": -1}.get(declaration[end], 0)
            end += 1
        out += [declaration[start : found.start()], _fallbacks(declaration[found.end() : end - 1].strip())]
        start = end
    return "".join(out) + declaration[start:]


def _with_fallbacks(style: str) -> str:
    written: list[str] = []
    for declaration in (d.strip() for d in style.split(";") if d.strip()):
        plain = _fallbacks(declaration)
        if plain != declaration and written[-1:] != [plain] and not _THEME_TEXT.match(declaration):
            written.append(plain)
        written.append(declaration)
    return ";".join(written)


def sanitiser_proof(markup: str) -> str:
    """``markup`` with each inline declaration that names a theme variable preceded by its fallback's.

    JupyterLab sanitises the text/html of a notebook it did not sign, and its sanitiser keeps a colour only when
    it is hex, rgb(a) or a name: ``color:var(--jp-ui-font-color2,#6e7781)`` is dropped there. Written as
    ``color:#6e7781;color:var(--jp-ui-font-color2,#6e7781)``, the sanitised page keeps the first and a trusted
    one (a notebook run here, the report page) applies the second. The page's own text colour
    (``--jp-ui-font-color0/1``) is not written plain: dropped, it leaves the theme's, which reads in a dark theme
    where a light fallback would not. (So a fallback that stands plain must read on light and dark pages alike:
    a saturated colour, a mid grey, or a translucent one.) Applying it twice changes nothing.
    """
    return _STYLE.sub(lambda found: f"style='{_with_fallbacks(found.group(1))}'", markup)
