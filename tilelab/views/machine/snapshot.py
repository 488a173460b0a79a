"""The Machine code tab's snapshot, drawn from :func:`~tilelab.views.machine.data.machine_data` and
:func:`~tilelab.views.machine.data.machine_texts` alone: notes and warnings, a resource card per kernel against
the arch's limits, instruction classes, the CUDA lines with the most SASS, the first lines of SASS and PTX.

Script-free and escaped like every snapshot (see :mod:`tilelab.views.html`);
the live pane shows SASS and PTX whole.
"""

from __future__ import annotations

from typing import Any

from tilelab.views.html import ERROR_BACKGROUND, ERROR_COLOUR, MONO, TRACK, details, escape, table

__all__ = ["machine_snapshot"]

_WARN = "border-left:4px solid var(--jp-warn-color1,#9a6700);background:rgba(154,103,0,0.12);padding:4px 8px;margin:4px 0"
_ERROR = f"border-left:4px solid {ERROR_COLOUR};background:{ERROR_BACKGROUND};padding:4px 8px;margin:4px 0"


def _card_rows(card: dict[str, Any]) -> list[tuple[str, str]]:
    cells = [(label, escape(value)) for label, value, _level in card["rows"]]
    occupancy = card["occupancy"]
    if occupancy is None:
        return cells
    bar = (
        f"<div style='display:inline-block;width:120px;height:8px;background:{TRACK};vertical-align:middle'>"
        f"<div style='width:{round(120 * occupancy)}px;height:8px;background:var(--jp-brand-color1,#1976d2)'></div></div> "
        f"{card['occupancy_text']}"
    )
    cells.append(("theoretical occupancy", bar))
    cells.append(("limits", f"<span style='color:var(--jp-ui-font-color2,#666)'>{escape(card['limits'])}</span>"))
    return cells


def _resource_card(name: str, card: dict[str, Any]) -> str:
    launch = "" if card["launchable"] else "".join(
        f"<div data-tilelab='cannot-launch' style='{_ERROR}'>cannot launch: {escape(reason)}</div>"
        for reason in card["reasons"]
    )
    rows = [(f"<b>{escape(label)}</b>", value) for label, value in _card_rows(card)]
    return (
        f"<div data-tilelab='resource-card' data-kernel='{escape(name)}' style='margin:6px 0'>"
        f"<div style='font-weight:600'>{escape(name)}</div>{launch}{table(rows)}</div>"
    )


def _classes_table(data: dict[str, Any]) -> str:
    rows = [
        (escape(kernel["name"]), f"<span style='color:{row['colour']}'>{escape(row['class'])}</span>", str(row["count"]))
        for kernel in data["kernels"]
        for row in kernel["classes"]
    ]
    opcodes = ", ".join(f"{escape(opcode)}&nbsp;{count}" for opcode, count in data["opcodes"])  # wraps between items
    return (
        table(rows, ("kernel", "class", "instructions"), attrs=" data-tilelab='instruction-classes'")
        + f"<p style='{MONO}'>{opcodes}</p>"
    )


def _hot_lines_table(kernels: list[dict[str, Any]]) -> str:
    """Each kernel's CUDA lines with the most SASS (a kernel column where there are several) with the cell line each came from."""
    many = len(kernels) > 1
    rows = [
        (
            *((escape(kernel["name"]),) if many else ()),
            str(line["cuda_line"]),
            f"<code>{escape(line['code'])}</code>",
            "—" if line["cell_line"] is None else f"{line['cell_line']}: <code>{escape(line['cell_code'])}</code>",
            str(line["instructions"]),
            ", ".join(f"<span style='color:{escape(colour)}'>{escape(name)}</span> {n}" for name, n, colour in line["classes"]),
        )
        for kernel in kernels
        for line in kernel["hot_lines"]
    ]
    header = (*(("kernel",) if many else ()), "CUDA line", "code", "cell line", "SASS instructions", "classes")
    return table(rows, header, attrs=" data-tilelab='hot-lines'")


def _code(listing: dict[str, Any]) -> str:
    """The listing's lines, numbered, each with the CUDA line it came from."""
    shown = [
        f"{number:>5} {('→' + str(cuda)) if cuda is not None else '':>6}  {escape(line)}"
        for number, (line, cuda) in enumerate(listing["lines"], start=1)
    ]
    cut = listing["total"] - len(shown)
    more = f"<p style='color:var(--jp-ui-font-color2,#666)'>… {cut} more lines in the live view.</p>" if cut > 0 else ""
    return (
        f"<pre data-tilelab='{escape(listing['code'])}' style='{MONO};white-space:pre;overflow:auto;max-height:520px'>"
        + "\n".join(shown)
        + f"</pre>{more}"
    )


def machine_snapshot(data: dict[str, Any], texts: dict[str, Any]) -> str:
    """The Machine code section of a record with machine code (``data["head"]`` set): notes and warnings, a
    resource card per kernel, instruction classes, the CUDA lines with the most SASS, SASS and PTX."""
    parts = [f"<div style='font-weight:600'>Machine code — {escape(data['head'])}</div>"]
    parts += [f"<div data-tilelab='machine-note' style='{_WARN}'>{escape(note)}</div>" for note in data["notes"]]
    if data["log"]:
        parts.append(
            f"<div data-tilelab='machine-error' style='{_ERROR}'><pre style='{MONO};white-space:pre-wrap;margin:0'>"
            f"{escape(data['log'])}</pre></div>"
        )
    parts += [f"<div data-tilelab='machine-warning' style='{_WARN}'>{escape(w)}</div>" for w in data["warnings"]]
    parts += [_resource_card(kernel["name"], kernel["card"]) for kernel in data["kernels"] if kernel["card"] is not None]
    if any(kernel["classes"] for kernel in data["kernels"]):
        parts.append(details("instruction classes", _classes_table(data), open_=True))
    if any(kernel["hot_lines"] for kernel in data["kernels"]):
        parts.append(details("CUDA lines with the most SASS", _hot_lines_table(data["kernels"])))
    for code in ("sass", "ptx"):
        if code in texts:
            parts.append(details(f"{code.upper()} ({texts[code]['total']} lines)", _code(texts[code])))
    if data["tools"]:
        tools = ", ".join(f"{name}: {value}" for name, value, _short in data["tools"])
        parts.append(f"<p style='color:var(--jp-ui-font-color2,#666)'>{escape(tools)}; {data['seconds']:.2f} s</p>")
    return f"<div class='tilelab-machine-code' data-tilelab='machine-code'>{''.join(parts)}</div>"
