"""The Machine code tab's static HTML: resources and occupancy against the arch's limits, instruction classes, SASS, PTX.

Script-free and escaped like every snapshot (see :mod:`tilelab.views.html`).
SASS and PTX are cut after :data:`MAX_CODE_LINES` lines each; the live pane
shows them whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tilelab.machine.occupancy import LIMITS_SOURCE, limits_for
from tilelab.machine.record import machine_warnings
from tilelab.machine.text import INSTRUCTION_CLASSES, instruction_classes, opcode_of
from tilelab.records import KernelResources, MachineCodeRecord, OccupancyRecord, SourceRecord
from tilelab.views.html import MONO, details, escape, table

if TYPE_CHECKING:
    from tilelab.machine.occupancy import ArchLimits

__all__ = [
    "CLASS_COLOURS",
    "MAX_CODE_LINES",
    "hot_lines",
    "limits_note",
    "machine_code_html",
    "resource_rows",
]

MAX_CODE_LINES = 150  # each of SASS and PTX; the saved Explorer stays under 250 kB
_WARN = "border-left:4px solid var(--jp-warn-color1,#9a6700);background:rgba(154,103,0,0.12);padding:4px 8px;margin:4px 0"
_ERROR = "border-left:4px solid var(--jp-error-color1,#cf222e);background:var(--jp-rendermime-error-background,#fff5f5);padding:4px 8px;margin:4px 0"
CLASS_COLOURS = {
    "tensor core (warpgroup)": "#8250df",
    "tensor core (warp)": "#8250df",
    "TMA / bulk copy": "#0969da",
    "async copy (cp.async)": "#0969da",
    "shared memory": "#1a7f37",
    "global memory": "#bc4c00",
    "local memory (spills)": "#cf222e",
    "barriers and sync": "#9a6700",
}


def hot_lines(machine: MachineCodeRecord, source: SourceRecord | None = None, limit: int = 12) -> list[dict]:
    """The CUDA lines with the most SASS instructions: line, cell line (via ``source``), count, classes."""

    class_of = {opcode: name for name, opcodes in INSTRUCTION_CLASSES.items() for opcode in opcodes}
    sass = machine.sass.splitlines()
    by_line: dict[int, dict[str, int]] = {}
    for link in machine.sass_links:
        opcode = opcode_of(sass[link.line - 1]) if 0 < link.line <= len(sass) else None
        classes = by_line.setdefault(link.cuda_line, {})
        name = class_of.get(opcode or "", "other")
        classes[name] = classes.get(name, 0) + 1
    ranked = sorted(by_line.items(), key=lambda item: -sum(item[1].values()))[:limit]
    device = source.device.splitlines() if source else []
    return [
        {
            "cuda_line": line,
            "code": device[line - 1].strip() if 0 < line <= len(device) else "",
            "kernel_line": source.kernel_line_for(line) if source else None,
            "instructions": sum(classes.values()),
            "classes": classes,
        }
        for line, classes in ranked
    ]


def resource_rows(resources: KernelResources, occupancy: OccupancyRecord | None) -> list[tuple[str, str]]:
    """A kernel's resources and occupancy against the arch's limits, as plain-text ``(label, value)`` rows."""
    rows = [
        ("registers per thread", f"{resources.registers}"),
        ("spills per thread", f"{resources.spill_stores} B stored, {resources.spill_loads} B loaded"),
        ("stack frame", f"{resources.stack_frame} B per thread"),
        ("shared memory per block", f"{resources.shared_bytes} B static + {resources.dynamic_shared_bytes} B dynamic"),
        ("barriers", f"{resources.barriers}"),
        ("threads per block", f"{resources.threads_per_block if resources.threads_per_block else 'unknown'}"),
    ]
    if occupancy is None:
        return rows
    limits = _limits(occupancy.arch)
    if limits is not None:
        rows[0] = (rows[0][0], f"{resources.registers} of {limits.max_registers_per_thread}")
        rows[3] = (rows[3][0], f"{rows[3][1]} = {resources.total_shared_bytes} B of {limits.max_shared_per_block} B")
    return [
        *rows,
        ("blocks per SM", f"{occupancy.blocks_per_sm} (limited by {occupancy.limited_by})"),
        ("blocks per SM by limit", ", ".join(f"{limit} {count}" for limit, count in occupancy.blocks_by_limit.items())),
        ("warps per SM", f"{occupancy.warps_per_sm} of {occupancy.max_warps_per_sm}"),
    ]


def _limits(arch: str) -> ArchLimits | None:
    """``arch``'s limits; None for an arch the table does not know (a loaded record may name any)."""

    try:
        return limits_for(arch)
    except KeyError:
        return None


def limits_note(arch: str) -> str:
    """Where the limits an occupancy is measured against come from, or that they are unknown for ``arch``."""

    return f"{arch} limits: {LIMITS_SOURCE}" if _limits(arch) is not None else f"{arch}: limits unknown"


def _limits_rows(resources: KernelResources, occupancy: OccupancyRecord | None) -> list[tuple[str, str]]:
    cells = [(label, escape(value)) for label, value in resource_rows(resources, occupancy)]
    if occupancy is None:
        return cells
    bar = (
        f"<div style='display:inline-block;width:120px;height:8px;background:var(--jp-layout-color3,#eee);vertical-align:middle'>"
        f"<div style='width:{round(120 * occupancy.occupancy)}px;height:8px;background:var(--jp-brand-color1,#1976d2)'></div></div> "
        f"{occupancy.occupancy:.1%}"
    )
    cells.append(("theoretical occupancy", bar))
    cells.append(("limits", f"<span style='color:var(--jp-ui-font-color2,#666)'>{escape(limits_note(occupancy.arch))}</span>"))
    return cells


def _resource_card(name: str, machine: MachineCodeRecord) -> str:
    resources, occupancy = machine.resources[name], machine.occupancy.get(name)
    launch = ""
    if occupancy is not None and not occupancy.launchable:
        launch = "".join(
            f"<div data-tilelab='cannot-launch' style='{_ERROR}'>cannot launch: {escape(r)}</div>"
            for r in occupancy.reasons
        )
    rows = [(f"<b>{escape(label)}</b>", value) for label, value in _limits_rows(resources, occupancy)]
    return (
        f"<div data-tilelab='resource-card' data-kernel='{escape(name)}' style='margin:6px 0'>"
        f"<div style='font-weight:600'>{escape(name)}</div>{launch}{table(rows)}</div>"
    )


def _classes_table(machine: MachineCodeRecord) -> str:
    rows = []
    for name, counts in machine.instruction_counts.items():
        for group, count in instruction_classes(counts).items():
            colour = CLASS_COLOURS.get(group, "#666")
            rows.append((escape(name), f"<span style='color:{colour}'>{escape(group)}</span>", str(count)))
    top = sorted(machine.total_instruction_counts().items(), key=lambda item: -item[1])[:24]
    opcodes = ", ".join(f"{escape(opcode)} {count}" for opcode, count in top)
    return (
        table(rows, ("kernel", "class", "instructions"), attrs=" data-tilelab='instruction-classes'")
        + f"<p style='{MONO}'>{opcodes}</p>"
    )


def _hot_lines_table(machine: MachineCodeRecord, source: SourceRecord | None) -> str:
    rows = [
        (
            str(line["cuda_line"]),
            "" if line["kernel_line"] is None else str(line["kernel_line"]),
            f"<code>{escape(line['code'][:120])}</code>",
            str(line["instructions"]),
            escape(", ".join(f"{name} {count}" for name, count in line["classes"].items())),
        )
        for line in hot_lines(machine, source)
    ]
    header = ("CUDA line", "kernel line", "code", "SASS instructions", "classes")
    return table(rows, header, attrs=" data-tilelab='hot-lines'")


def _code(text: str, links: dict[int, int], kind: str) -> str:
    """The first lines of ``text``, numbered, each with the CUDA line it came from."""
    lines = text.splitlines()
    shown = [
        f"{number:>5} {('→' + str(links[number])) if number in links else '':>6}  {escape(line)}"
        for number, line in enumerate(lines[:MAX_CODE_LINES], start=1)
    ]
    cut = len(lines) - len(shown)
    more = f"<p style='color:var(--jp-ui-font-color2,#666)'>… {cut} more lines in the live view.</p>" if cut > 0 else ""
    return (
        f"<pre data-tilelab='{kind}' style='{MONO};white-space:pre;overflow:auto;max-height:520px'>"
        + "\n".join(shown)
        + f"</pre>{more}"
    )


def machine_code_html(machine: MachineCodeRecord, source: SourceRecord | None = None) -> str:
    """The Machine code tab: notes and warnings, a resource card per kernel, instruction classes, SASS and PTX.

    ``source`` (the record's :class:`~tilelab.records.SourceRecord`) adds the
    code and kernel (cell) line of the hottest CUDA lines.
    """
    head = f"{machine.arch} (built as {machine.compile_arch})" if machine.compile_arch else machine.arch
    parts = [f"<div style='font-weight:600'>Machine code — {escape(head)}</div>"]
    parts += [f"<div data-tilelab='machine-note' style='{_WARN}'>{escape(note)}</div>" for note in machine.notes]
    if machine.error:
        parts.append(
            f"<div data-tilelab='machine-error' style='{_ERROR}'><pre style='{MONO};white-space:pre-wrap;margin:0'>"
            f"{escape(machine.error)}</pre></div>"
        )
    parts += [
        f"<div data-tilelab='machine-warning' style='{_WARN}'>{escape(w)}</div>"
        for w in machine_warnings(machine)
        if not machine.error
    ]
    parts += [_resource_card(name, machine) for name in machine.resources]
    if machine.instruction_counts:
        parts.append(details("instruction classes", _classes_table(machine), open_=True))
    if machine.sass_links:
        parts.append(details("CUDA lines with the most SASS", _hot_lines_table(machine, source)))
    if machine.sass:
        sass_links = {link.line: link.cuda_line for link in machine.sass_links}
        parts.append(details(f"SASS ({len(machine.sass.splitlines())} lines)", _code(machine.sass, sass_links, "sass")))
    if machine.ptx:
        ptx_links = {link.line: link.cuda_line for link in machine.ptx_links}
        parts.append(details(f"PTX ({len(machine.ptx.splitlines())} lines)", _code(machine.ptx, ptx_links, "ptx")))
    if machine.tools:
        tools = ", ".join(f"{name}: {value}" for name, value in machine.tools.items())
        parts.append(f"<p style='color:var(--jp-ui-font-color2,#666)'>{escape(tools)}; {machine.seconds:.2f} s</p>")
    return f"<div class='tilelab-machine-code' data-tilelab='machine-code'>{''.join(parts)}</div>"
