"""The Machine code tab's data, the only code that shapes it: per device kernel a resource card (against the
arch's limits) and its instructions by class; the kernel's SASS or PTX beside the CUDA, linked line to line
(and, through the record's source map, to cell lines); the first lines of SASS and PTX for the snapshot.

:class:`MachineData` answers the tab's requests. It asks for the newest
version of the record each time: ``%%tilelang`` builds the machine code in the
background and replaces the record, so a tab shown before the build finished
fills in when asked again (the Explorer asks when the record is replaced). The
snapshot draws :func:`machine_data` and :func:`machine_texts`, the replies to
the same requests.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from tilelab.machine.occupancy import LIMITS_SOURCE, byte_size, limits_for
from tilelab.machine.record import machine_warnings
from tilelab.machine.text import INSTRUCTION_CLASSES, compact_sass_line, instruction_classes, kernel_slice, opcode_of
from tilelab.records import KernelRecord, KernelResources, MachineCodeRecord, OccupancyRecord, SourceRecord
from tilelab.source_map import source_map_of
from tilelab.views.lines import quoted_line

__all__ = [
    "CLASS_COLOURS",
    "CODES",
    "HOW",
    "MAX_CODE_LINES",
    "MAX_LIVE_LINES",
    "MachineData",
    "hot_lines",
    "limits_note",
    "machine_data",
    "machine_state",
    "machine_texts",
    "resource_rows",
]

_MAX_ERROR = 8_000  # an nvcc failure embeds the whole generated source
MAX_LIVE_LINES = 20_000  # each of SASS and PTX per kernel: a few MB at most over the comm; the record keeps it all
MAX_CODE_LINES = 150  # each of SASS and PTX in the snapshot: the saved Explorer stays under 250 kB
CODES = ("sass", "ptx")
HOW = {
    "sass": "nvdisasm's line table (nvcc -lineinfo)",
    "ptx": "the PTX .loc directives (through inlined calls)",
}
_NO_CELL = (
    "no cell line: TileLang emitted it for the kernel as a whole (set-up, barriers, warp-specialisation branches)"
)
_UNLINKED = {
    "sass": "ptxas recorded no CUDA line for it (scheduling, address set-up or code it added itself).",
    "ptx": "no .loc directive covers it (declarations, labels or code nvcc added itself).",
}
CLASS_COLOURS = {
    "tensor core (warpgroup)": "#8250df",
    "tensor core (warp)": "#8250df",
    "TMA / bulk copy": "#0969da",
    "async copy (cp.async)": "#0969da",
    "shared memory": "#1a7f37",
    "global memory": "#bc4c00",
    "local memory (spills)": "#cf222e",
    "barriers and sync": "#9a6700",
    "other": "#666",
}


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
        total = f"{byte_size(resources.total_shared_bytes)} of {byte_size(limits.max_shared_per_block)}"
        rows[3] = (rows[3][0], f"{total}: {rows[3][1]}")
    return [
        *rows,
        ("blocks per SM", f"{occupancy.blocks_per_sm} (limited by {occupancy.limited_by})"),
        ("blocks per SM by limit", ", ".join(f"{limit} {count}" for limit, count in occupancy.blocks_by_limit.items())),
        ("warps per SM", f"{occupancy.warps_per_sm} of {occupancy.max_warps_per_sm}"),
    ]


def _limits(arch: str):
    """``arch``'s limits; None for an arch the table does not know (a loaded record may name any)."""
    try:
        return limits_for(arch)
    except KeyError:
        return None


def limits_note(arch: str) -> str:
    """Where the limits an occupancy is measured against come from, or that they are unknown for ``arch``."""
    return f"{arch} limits: {LIMITS_SOURCE}" if _limits(arch) is not None else f"{arch}: limits unknown"


def _card(machine: MachineCodeRecord, name: str) -> dict[str, Any] | None:
    """One kernel's resources and occupancy: plain-text rows, the occupancy (a share and its label), whether it
    launches and why not."""
    if name not in machine.resources:
        return None
    resources, occupancy = machine.resources[name], machine.occupancy.get(name)
    bad = {"spills per thread"} if resources.spills else set()
    return {
        "rows": [[label, value, "bad" if label in bad else ""] for label, value in resource_rows(resources, occupancy)],
        "occupancy": None if occupancy is None else occupancy.occupancy,
        "occupancy_text": "" if occupancy is None else f"{occupancy.occupancy:.1%}",
        "launchable": True if occupancy is None else occupancy.launchable,
        "reasons": [] if occupancy is None else list(occupancy.reasons),
        "limits": "" if occupancy is None else limits_note(occupancy.arch),
    }


def _classes(counts: dict[str, int]) -> list[dict[str, Any]]:
    """The kernel's instructions by class, each with its colour, its opcodes (most frequent first) and its share."""
    total = sum(counts.values()) or 1
    members = {name: set(opcodes) for name, opcodes in INSTRUCTION_CLASSES.items()}
    classified = set().union(*members.values())
    rows = []
    for name, count in instruction_classes(counts).items():
        opcodes = members.get(name) if name != "other" else {op for op in counts if op not in classified}
        ranked = sorted(((op, n) for op, n in counts.items() if op in (opcodes or ())), key=lambda item: -item[1])
        rows.append(
            {
                "class": name,
                "count": count,
                "share": count / total,
                "colour": CLASS_COLOURS[name],
                "opcodes": [[op, n] for op, n in ranked[:8]],
                "more": max(0, len(ranked) - 8),
            }
        )
    return rows


def hot_lines(record: KernelRecord, kernel: str, to_cell: dict[int, int], limit: int = 12) -> list[dict]:
    """``kernel``'s CUDA lines with the most SASS instructions, most first: each line's code, the cell line it came
    from (``to_cell``: the record's source map, as the Source tab and the linked panes say; None: no cell line),
    its instruction count and its classes, most first, as ``[class, count, colour]``."""
    machine, source = record.machine_code, record.source
    sass, links, _first = kernel_slice(machine.sass, machine.sass_links, kernel, _kernel_names(record), "sass")
    opcodes_by_line: dict[int, Counter[str]] = {}
    for link in links:
        opcode = opcode_of(sass[link.line - 1]) if 0 < link.line <= len(sass) else None
        opcodes_by_line.setdefault(link.cuda_line, Counter())[opcode or ""] += 1
    ranked = sorted(opcodes_by_line.items(), key=lambda item: -item[1].total())[:limit]
    device = source.device.splitlines() if source is not None else []
    cell = source.kernel_source.splitlines() if source is not None else []
    rows = []
    for line, opcodes in ranked:
        at = to_cell.get(line)
        at = at if at is not None and 0 < at <= len(cell) else None
        by_count = sorted(instruction_classes(opcodes).items(), key=lambda item: -item[1])
        rows.append(
            {
                "cuda_line": line,
                "code": quoted_line(device, line, 120),
                "cell_line": at,
                "cell_code": quoted_line(cell, at, 80),
                "instructions": opcodes.total(),
                "classes": [[name, count, CLASS_COLOURS.get(name, CLASS_COLOURS["other"])] for name, count in by_count],
            }
        )
    return rows


def _kernel_names(record: KernelRecord) -> list[str]:
    """The device kernels with machine code, in launch order where the launches name them."""
    names = record.machine_code.kernels
    launched = [launch.kernel for launch in record.launches if launch.kernel in names]
    return launched + [name for name in names if name not in launched]


def _tool(name: str, value: str) -> str:
    """``nvcc (release 13.0, V13.0.88)`` of ``"/usr/local/bin/nvcc (release 13.0, V13.0.88)"``: the path is long."""
    version = value[value.rfind("(") + 1 : -1] if value.endswith(")") and "(" in value else value
    return f"{name} ({version})"


def machine_data(record: KernelRecord) -> dict[str, Any]:
    """The tab's data (the reply to ``machine``): its ``state`` and, when it has machine code, per kernel a card
    and classes and its CUDA lines with the most SASS, the most frequent opcodes, the tools that built it.

    ``state`` is "ready", "none", "pending" or "failed" (``message`` says why in one line); ``head`` is None
    when the record has no machine code at all (nothing built yet, or no CUDA to build).
    """
    machine = record.machine_code
    state, message = machine_state(record)
    data: dict[str, Any] = {"state": state, "message": message, "log": "", "head": None, "notes": [], "warnings": []}
    data |= {"codes": [], "kernels": [], "opcodes": [], "tools": [], "seconds": 0.0}
    if machine is None:
        return data
    top = sorted(machine.total_instruction_counts().items(), key=lambda item: -item[1])[:24]
    to_cell = source_map_of(record.source).cuda_to_cell if record.source is not None and machine.sass_links else {}
    return data | {
        "log": (machine.error or "")[:_MAX_ERROR],
        "head": f"{machine.arch} (built as {machine.compile_arch})" if machine.compile_arch else machine.arch,
        "notes": list(machine.notes),
        "warnings": [] if machine.error else list(machine_warnings(machine)),
        "codes": [code for code in CODES if getattr(machine, code)],
        "kernels": [
            {
                "name": name,
                "card": _card(machine, name),
                "classes": _classes(machine.instruction_counts.get(name, {})),
                "instructions": sum(machine.instruction_counts.get(name, {}).values()),
                "hot_lines": hot_lines(record, name, to_cell) if machine.sass_links else [],
            }
            for name in _kernel_names(record)
        ],
        "opcodes": [[opcode, count] for opcode, count in top],
        "tools": [[name, value, _tool(name, value)] for name, value in machine.tools.items()],
        "seconds": machine.seconds,
    }


def machine_listing(record: KernelRecord, code: str) -> dict[str, Any]:
    """The first :data:`MAX_CODE_LINES` lines of the whole SASS or PTX, each with the CUDA line it came from."""
    machine = record.machine_code
    text = getattr(machine, code, "") if machine is not None else ""
    if code not in CODES or not text:
        raise ValueError(f"no {code.upper()} here" if code in CODES else f"code {code!r} is not one of {', '.join(CODES)}")
    links = {link.line: link.cuda_line for link in (machine.sass_links if code == "sass" else machine.ptx_links)}
    lines = text.splitlines()
    shown = [[line, links.get(number)] for number, line in enumerate(lines[:MAX_CODE_LINES], start=1)]
    return {"code": code, "total": len(lines), "lines": shown}


def machine_texts(record: KernelRecord) -> dict[str, Any]:
    """What the snapshot draws besides :func:`machine_data`: the replies to ``{"type": "machine_listing",
    "code": code}`` for each code the record has."""
    machine = record.machine_code
    return {code: machine_listing(record, code) for code in CODES if machine is not None and getattr(machine, code)}


class MachineData:
    """Answers the Machine code tab's requests: ``machine`` (:func:`machine_data`), ``machine_code`` (one kernel's
    SASS or PTX beside the CUDA) and ``machine_listing`` (:func:`machine_listing`).

    ``newest`` returns the newest version of the record (the registry's, once the
    background build has replaced it).
    """

    def __init__(self, newest: Callable[[], KernelRecord]) -> None:
        self.newest = newest

    def summary(self, _content: dict[str, Any] | None = None) -> dict[str, Any]:
        """What the tab shows above the code: a state, and per kernel a card and its instruction classes."""
        return machine_data(self.newest())

    def listing(self, content: dict[str, Any]) -> dict[str, Any]:
        """``{"code"}`` → the first lines of the whole SASS or PTX (the snapshot's)."""
        return machine_listing(self.newest(), str(content.get("code", "sass")))

    def panes(self, content: dict[str, Any]) -> dict[str, Any]:
        """The device CUDA beside one kernel's SASS or PTX, in the Source tab's reply shape (CUDA left)."""
        record = self.newest()
        machine, code, kernel = record.machine_code, str(content.get("code", "sass")), str(content.get("kernel", ""))
        if code not in CODES:
            raise ValueError(f"code {code!r} is not one of {', '.join(CODES)}")
        if machine is None or record.source is None or not getattr(machine, code):
            return {"panes": [], "links": [], "note": f"No {code.upper()} for this record."}
        names = _kernel_names(record)
        if kernel not in names:
            raise ValueError(f"no device kernel {kernel!r} here; kernels: {', '.join(names)}")
        links = machine.sass_links if code == "sass" else machine.ptx_links
        lines, kept, first = kernel_slice(getattr(machine, code), links, kernel, names, code)
        shown = [compact_sass_line(line) for line in lines[:MAX_LIVE_LINES]] if code == "sass" else lines[:MAX_LIVE_LINES]
        kept = [link for link in kept if link.line <= len(shown)]
        where = "" if len(names) < 2 else f" {kernel}"
        title = f"{code.upper()}{where} ({len(lines)} lines{f', from line {first}' if first > 1 else ''})"
        note = None
        if len(shown) < len(lines):
            title = f"{code.upper()}{where} (first {len(shown)} of {len(lines)} lines)"
            note = (
                f"{code.upper()} cut after {len(shown)} of {len(lines)} lines to keep the notebook responsive; "
                f"the whole text is record.machine_code.{code}."
            )
        return {
            "panes": [
                {
                    "title": f"Device code ({record.source.language.upper()})",
                    "language": "cuda",
                    "text": record.source.device,
                },
                {"title": title, "language": code, "text": "\n".join(shown)},
            ],
            "links": [[link.line, link.cuda_line, code] for link in kept],
            "how": {code: HOW[code]},
            "ops": self._cell_lines(record.source, sorted({link.cuda_line for link in kept})),
            "unlinked_left": f"no {code.upper()} instruction of {kernel} came from it.",
            "unlinked_right": _UNLINKED[code],
            "has_host": False,
            "note": note,
        }

    def _cell_lines(self, source: SourceRecord, cuda_lines: list[int]) -> dict[str, str]:
        """For each CUDA line, the cell line it came from (the record's source map) and its code."""
        to_cell = source_map_of(source).cuda_to_cell
        cell = source.kernel_source.splitlines()
        named = {}
        for line in cuda_lines:
            at = to_cell.get(line)
            if at is None or not 0 < at <= len(cell):
                named[str(line)] = _NO_CELL
            else:
                named[str(line)] = f"cell line {at}: {quoted_line(cell, at, 80)}"
        return named


def _first_error(log: str) -> str:
    """The first line of an nvcc log that names an error, without the build's temporary directory."""
    lines = [line.strip() for line in log.strip().splitlines() if line.strip()] or ["no output"]
    first = next((line for line in lines if "error" in line.lower()), lines[0])
    return re.sub(r"(?:[\w.-]*[/\\])+(?=[\w.-]+\(\d+\))", "", first.removeprefix("nvcc failed: "))


def machine_state(record: KernelRecord) -> tuple[str, str]:
    """("ready" | "none" | "pending" | "failed", one line saying why there is nothing to show)."""
    machine = record.machine_code
    if machine is not None and machine.error:
        return "failed", f"nvcc could not build this kernel's machine code: {_first_error(machine.error)}"
    if machine is not None and machine.available:
        return "ready", ""
    if machine is not None:
        return "none", machine.notes[0] if machine.notes else "nvcc produced no PTX or SASS for this kernel."
    if not record.has_cuda_source:
        if not record.ok:
            return "none", "No machine code: the compile failed before there was CUDA to build."
        if record.source is None:
            return "none", "No machine code: the compile stopped before code generation."
        return "none", f"No machine code: this kernel is {record.source.language.upper()}, not CUDA."
    return "pending", (
        "Machine code is not built yet: %%tilelang builds PTX and SASS with nvcc in the background and this tab "
        "fills in when they arrive (nothing is built with --no-machine-code or explore(..., machine_code=False))."
    )
