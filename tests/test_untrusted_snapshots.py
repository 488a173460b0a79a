"""A cloned notebook is untrusted: JupyterLab shows its snapshots through its HTML sanitiser, which keeps their colours.

The sanitiser is JupyterLab's own (``@jupyterlab/apputils``, from the project's node_modules, run by node). It
drops an inline declaration whose value it does not know (``var(--jp-…)``, ``hsla()``, ``outline-offset``); each
snapshot must lose only the theme-variable copies whose plain fallback stands before them.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from htmlcheck import Node, parse
from sample_records import EVIL, failed_record
from test_search_analysis import searched
from test_tune_view import _everything
from test_views_compare import _pair
from test_views_profile import profiled

import tilelab
from tilelab.recompiled import KeyChange, WhyRecompiled
from tilelab.views.compare import CompareView
from tilelab.views.compare.changes import WhyView
from tilelab.views.html import sanitiser_proof
from tilelab.views.tuning import TuningView, search_html

SANITISER = Path(__file__).parent / "jupyterlab_sanitiser.mjs"
THEME_TEXT = re.compile(r"var\(\s*--jp-ui-font-color[01]\b")
LIGHT, DARK = "#ffffff", "#111111"  # the notebook's background in JupyterLab's light and dark themes


def as_untrusted(*pages: str) -> list[str]:
    """``pages`` as JupyterLab renders an untrusted notebook's text/html."""
    done = subprocess.run(["node", str(SANITISER)], input=json.dumps(pages), capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def style_of(node: Node) -> list[tuple[str, str]]:
    """``node``'s inline declarations as (property, value)."""
    return [tuple(part.strip() for part in d.split(":", 1)) for d in (node.attrs.get("style") or "").split(";") if d.strip()]


def declarations(markup: str) -> list[list[tuple[str, str]]]:
    """Each styled element's inline declarations, in document order."""
    return [style_of(node) for node in parse(markup).iter() if node.attrs.get("style")]


def dropped(page: str, sanitised: str) -> list[tuple[str, str, bool]]:
    """The declarations the sanitiser removed from ``page``, each with whether its element kept that property."""
    before, after = declarations(page), declarations(sanitised)
    assert len(before) == len(after), "the sanitiser removed a whole style attribute"
    lost = []
    for element, kept in zip(before, after, strict=True):
        remaining = list(kept)
        for name, value in element:
            if (name, value) in remaining:
                remaining.remove((name, value))
            else:
                lost.append((name, value, any(name == other for other, _ in kept)))
    return lost


def lost(page: str, sanitised: str) -> list[tuple[str, str]]:
    """Declarations the sanitiser removed whose element kept no other value of their property, but for the page's
    own text colour (without it, text takes the theme's)."""
    return [
        (name, value)
        for name, value, replaced in dropped(page, sanitised)
        if not replaced and not (name == "color" and THEME_TEXT.match(value))
    ]


def luminance(colour: str) -> float:
    """WCAG relative luminance of ``#rgb``, ``#rrggbb`` or ``rgb(r,g,b)``."""
    if colour.startswith("#"):
        digits = colour[1:] if len(colour) == 7 else "".join(2 * d for d in colour[1:])
        channels = [int(digits[i : i + 2], 16) for i in (0, 2, 4)]
    else:
        channels = [int(c) for c in re.findall(r"\d+", colour)[:3]]
    linear = [c / 255 / 12.92 if c <= 10 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def poor_contrasts(sanitised: str) -> dict[str, float]:
    """Colours of text that reads badly: an element's own text against its own background where it has one,
    else against the notebook's light and dark backgrounds."""
    poor = {}
    for node in parse(sanitised).iter():
        values = dict(style_of(node))
        if "color" not in values or not any(child.tag == "#text" and child.text.strip() for child in node.children):
            continue
        grounds = [values["background"]] if "background" in values else [LIGHT, DARK]
        worst = min(contrast(values["color"], ground) for ground in grounds)
        if worst < 3:
            poor[values["color"]] = round(worst, 2)
    return poor


def test_every_tab_of_the_explorer_keeps_its_inline_styles_untrusted():
    pages = [tilelab.to_html(profiled()), tilelab.to_html(failed_record())]

    for page, sanitised in zip(pages, as_untrusted(*pages), strict=True):
        assert lost(page, sanitised) == []
        assert any(re.search(r"\bvar\(--", value) for _, value, _ in dropped(page, sanitised))


def test_the_tuning_table_timeline_and_the_search_charts_shown_alone_keep_their_colours_untrusted():
    pages = [TuningView(_everything()).to_html(), search_html(searched())]

    shown = as_untrusted(*pages)

    assert [lost(page, sanitised) for page, sanitised in zip(pages, shown, strict=True)] == [[], []]
    painted = [node for node in parse(shown[0]).iter() if "background" in (node.attrs.get("style") or "")]  # bars, swatches
    assert painted and all(re.search(r"background:\s*(#[0-9a-f]{6}|rgba\()", node.attrs["style"]) for node in painted)


def test_each_bar_of_the_timeline_keeps_its_tooltip_in_place_untrusted():
    result = _everything()
    timeline = TuningView(result).data()["timeline"]

    (shown,) = as_untrusted(TuningView(result).to_html())

    tips = parse(shown).find_all("div", **{"class": "tl-chart-tip"})
    assert [tip.attrs["title"] for tip in tips] == [bar["tip"] for bar in timeline["bars"]] and tips
    for tip, bar in zip(tips, timeline["bars"], strict=True):
        place = dict(style_of(tip))
        assert place["position"] == "absolute"
        assert place["left"] == f"{bar['x'] / timeline['width']:.3%}" and place["top"] == f"{bar['y'] / timeline['height']:.3%}"


def test_the_compare_view_and_why_line_keep_their_styles_untrusted():
    why = WhyRecompiled(EVIL, "fresh", (KeyChange("pass_configs", f"pass config {EVIL} False → True"),))
    pages = [CompareView(*_pair(), pass_name="tl.WarpSpecialized").to_html(), WhyView(why).to_html()]

    for page, sanitised in zip(pages, as_untrusted(*pages), strict=True):
        assert lost(page, sanitised) == []


def test_the_text_colours_an_untrusted_notebook_keeps_read_on_the_light_and_the_dark_theme():
    pages = [tilelab.to_html(profiled()), tilelab.to_html(failed_record()), TuningView(_everything()).to_html()]

    for sanitised in as_untrusted(*pages):
        assert poor_contrasts(sanitised) == {}
    assert poor_contrasts("<p style='color:#1f2328'>dark text</p>") == {"#1f2328": 1.2}


def test_a_theme_colour_is_written_as_its_fallback_first_so_the_sanitiser_keeps_one():
    page = "<p style='border-bottom:1px solid var(--jp-border-color2,rgba(128,128,128,0.3));padding:1px'>it&#x27;s</p>"

    proof = sanitiser_proof(page)

    assert proof == (
        "<p style='border-bottom:1px solid rgba(128,128,128,0.3);"
        "border-bottom:1px solid var(--jp-border-color2,rgba(128,128,128,0.3));padding:1px'>it&#x27;s</p>"
    )
    assert declarations(as_untrusted(proof)[0]) == [[("border-bottom", "1px solid rgba(128,128,128,0.3)"), ("padding", "1px")]]
    assert sanitiser_proof("<p style='color:var(--a,var(--b,#123))'>") == "<p style='color:#123;color:var(--a,var(--b,#123))'>"
    assert sanitiser_proof(proof) == proof
