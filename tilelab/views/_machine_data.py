"""The live Machine code tab's data: per device kernel a resource card and instruction classes, and SASS or PTX
beside the CUDA, linked line to line (and, through the Source tab's links, to cell lines).

:class:`MachineCodeData` answers the tab's two requests. It asks for the newest
version of the record each time: ``%%tilelang`` builds the machine code in the
background and replaces the record, so a tab shown before the build finished
fills in when asked again (the Explorer asks when the record is replaced).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tilelab.machine.record import machine_warnings
from tilelab.machine.text import INSTRUCTION_CLASSES, instruction_classes
from tilelab.records import CodeLineLink, KernelRecord, MachineCodeRecord, SourceMap
from tilelab.source_map import source_map_of
from tilelab.views.machine_code import CLASS_COLOURS, limits_note, resource_rows

__all__ = ["CODES", "HOW", "MAX_LIVE_LINES", "MachineCodeData", "kernel_slice"]

_MAX_ERROR = 8_000  # an nvcc failure embeds the whole generated source
MAX_LIVE_LINES = 20_000  # each of SASS and PTX per kernel: a few MB at most over the comm; the record keeps it all
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


def _starts(lines: list[str], names: list[str], code: str) -> dict[str, int]:
    """The 0-based line where each kernel's section starts in SASS (``.text.<name>``) or PTX (``.entry <name>(``)."""
    starts = {}
    for name in names:
        pattern = (
            re.compile(rf"^//-+ \.text\.{re.escape(name)}\s")
            if code == "sass"
            else re.compile(rf"\.entry\s+{re.escape(name)}\s*\(")
        )
        found = next((k for k, line in enumerate(lines) if pattern.search(line)), None)
        if found is not None:
            starts[name] = found
    return starts


def kernel_slice(text: str, links: tuple[CodeLineLink, ...], kernel: str, names: list[str], code: str):
    """(lines of ``kernel``'s section of ``text``, its links renumbered, first line's number in ``text``).

    One kernel gets the whole text; with several, the first section also keeps the
    file's header and the last the file's trailer.
    """
    lines = text.splitlines()
    starts = _starts(lines, names, code)
    if len(names) < 2 or kernel not in starts:
        return lines, list(links), 1
    order = sorted(starts.values())
    begin = 0 if starts[kernel] == order[0] else starts[kernel]
    later = [start for start in order if start > starts[kernel]]
    end = later[0] if later else len(lines)
    return (
        lines[begin:end],
        [CodeLineLink(link.line - begin, link.cuda_line) for link in links if begin < link.line <= end],
        begin + 1,
    )


def _classes(counts: dict[str, int]) -> list[dict[str, Any]]:
    """The kernel's instructions by class, each with its opcodes (most frequent first) and its share."""

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
                "colour": CLASS_COLOURS.get(name, "#8c959f"),
                "opcodes": [[op, n] for op, n in ranked[:8]],
                "more": max(0, len(ranked) - 8),
            }
        )
    return rows


def _card(machine: MachineCodeRecord, name: str) -> dict[str, Any]:
    """One kernel's resources and occupancy: plain-text rows, the occupancy, whether it launches and why not."""

    resources, occupancy = machine.resources[name], machine.occupancy.get(name)
    bad = {"spills per thread"} if resources.spills else set()
    return {
        "rows": [[label, value, "bad" if label in bad else ""] for label, value in resource_rows(resources, occupancy)],
        "occupancy": None if occupancy is None else occupancy.occupancy,
        "launchable": True if occupancy is None else occupancy.launchable,
        "reasons": [] if occupancy is None else list(occupancy.reasons),
        "limits": "" if occupancy is None else limits_note(occupancy.arch),
    }


class MachineCodeData:
    """Answers the Machine code tab's requests: ``machine`` (state, cards, classes) and ``machine_code`` (panes).

    ``newest`` returns the newest version of the record (the registry's, once the
    background build has replaced it).
    """

    def __init__(self, newest: Callable[[], KernelRecord]) -> None:
        self.newest = newest
        self._links: tuple[str, SourceMap] | None = None

    def summary(self, _content: dict[str, Any] | None = None) -> dict[str, Any]:
        """What the tab shows above the code: a state, and per kernel a card and its instruction classes."""
        record = self.newest()
        machine = record.machine_code
        state, message = _state(record)
        if state != "ready":  # the build's log is "log": "error" would say the request itself failed
            log = (machine.error or "") if machine else ""
            return {"state": state, "message": message, "log": log[:_MAX_ERROR]}
        head = f"{machine.arch} (built as {machine.compile_arch})" if machine.compile_arch else machine.arch
        return {
            "state": "ready",
            "head": head,
            "notes": [*machine.notes, *machine_warnings(machine)],
            "codes": [code for code in CODES if getattr(machine, code)],
            "kernels": [
                {
                    "name": name,
                    "card": _card(machine, name),
                    "classes": _classes(machine.instruction_counts.get(name, {})),
                    "instructions": sum(machine.instruction_counts.get(name, {}).values()),
                }
                for name in _kernel_names(record)
            ],
            "tools": " · ".join(_tool(name, value) for name, value in machine.tools.items()),
            "seconds": machine.seconds,
        }

    def panes(self, content: dict[str, Any]) -> dict[str, Any]:
        """The device CUDA beside one kernel's SASS or PTX, in :mod:`linked`'s reply shape (CUDA left)."""
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
        shown = [_compact(line) for line in lines[:MAX_LIVE_LINES]] if code == "sass" else lines[:MAX_LIVE_LINES]
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
        cuda_lines = sorted({link.cuda_line for link in kept})
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
            "ops": self._cell_lines(record, cuda_lines),
            "unlinked_left": f"no {code.upper()} instruction of {kernel} came from it.",
            "unlinked_right": _UNLINKED[code],
            "has_host": False,
            "note": note,
        }

    def _cell_lines(self, record: KernelRecord, cuda_lines: list[int]) -> dict[str, str]:
        """For each CUDA line, the cell line it came from (the Source tab's repaired links) and its code."""
        source = record.source
        if self._links is None or self._links[0] != source.device:
            self._links = (source.device, source_map_of(source))
        to_cell = self._links[1].cuda_to_cell
        cell = source.kernel_source.splitlines()
        named = {}
        for line in cuda_lines:
            at = to_cell.get(line)
            if at is None or not 0 < at <= len(cell):
                named[str(line)] = _NO_CELL
            else:
                code = cell[at - 1].strip()
                named[str(line)] = f"cell line {at}: {code[:80]}{'…' if len(code) > 80 else ''}"
        return named


_SASS_INSTRUCTION = re.compile(r"^\s+(/\*[0-9a-f]{4,}\*/)\s+(@!?U?P[T\d]+\s+)?(.*)$")


def _compact(line: str) -> str:
    """A SASS instruction line with nvdisasm's ~30 columns of padding cut to a fixed predicate column (same line count)."""
    match = _SASS_INSTRUCTION.match(line)
    if match is None:
        return line
    address, predicate, rest = match.groups()
    return f"    {address} {(predicate or '').strip():>5} {rest}"


def _tool(name: str, value: str) -> str:
    """``nvcc (release 13.0, V13.0.88)`` of ``"/usr/local/bin/nvcc (release 13.0, V13.0.88)"``: the path is long."""
    version = value[value.rfind("(") + 1 : -1] if value.endswith(")") and "(" in value else value
    return f"{name} ({version})"


def _kernel_names(record: KernelRecord) -> list[str]:
    """The device kernels with machine code, in launch order where the launches name them."""
    machine = record.machine_code
    names = list(machine.resources) or list(machine.instruction_counts)
    launched = [launch.kernel for launch in record.launches if launch.kernel in names]
    return launched + [name for name in names if name not in launched]


def _first_error(log: str) -> str:
    """The first line of an nvcc log that names an error, without the build's temporary directory."""
    lines = [line.strip() for line in log.strip().splitlines() if line.strip()] or ["no output"]
    first = next((line for line in lines if "error" in line.lower()), lines[0])
    return re.sub(r"(?:[\w.-]*[/\\])+(?=[\w.-]+\(\d+\))", "", first.removeprefix("nvcc failed: "))


def _state(record: KernelRecord) -> tuple[str, str]:
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
