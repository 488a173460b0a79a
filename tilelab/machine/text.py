"""Pure parsers of the CUDA tools' text: ptxas ``-v``, ``cuobjdump --dump-resource-usage``, nvdisasm SASS, PTX ``.loc``.

Formats as printed by CUDA 13 (ptxas 13.0, nvdisasm/cuobjdump 13.5).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePath
from typing import NamedTuple

from tilelab.records import CodeLineLink

__all__ = [
    "INSTRUCTION_CLASSES",
    "ParsedSass",
    "compact_sass_line",
    "instruction_classes",
    "instruction_lines",
    "kernel_slice",
    "links_of_twin",
    "opcode_of",
    "parse_ptx_links",
    "parse_ptxas",
    "parse_resource_usage",
    "parse_sass",
    "presumed_lines",
]

# SASS opcodes (the mnemonic before the first '.') grouped by what they do.
INSTRUCTION_CLASSES: dict[str, tuple[str, ...]] = {
    "tensor core (warpgroup)": ("HGMMA", "QGMMA", "IGMMA", "BGMMA", "UTCHMMA", "UTCQMMA", "UTCIMMA", "UTCOMMA"),
    "tensor core (warp)": ("HMMA", "IMMA", "DMMA", "BMMA", "QMMA", "OMMA"),
    "TMA / bulk copy": ("UTMALDG", "UTMASTG", "UTMAPF", "UTMAREDG", "UTMACCTL", "UBLKCP", "UBLKPF", "UBLKRED"),
    "async copy (cp.async)": ("LDGSTS", "LDGDEPBAR", "DEPBAR"),
    "shared memory": ("LDS", "STS", "LDSM", "STSM", "ATOMS"),
    "global memory": ("LDG", "STG", "ATOMG", "RED", "LD", "ST"),
    "local memory (spills)": ("LDL", "STL"),
    "barriers and sync": ("BAR", "SYNCS", "MEMBAR", "WARPSYNC", "ARRIVES", "ELECT"),
}

_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PROPERTIES = re.compile(r"Function properties for (\S+)")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = {
    "registers": re.compile(r"Used (\d+) registers"),
    "barriers": re.compile(r"used (\d+) barriers"),
    "shared_bytes": re.compile(r"(\d+) bytes smem"),
    "constant_bytes": re.compile(r"(\d+) bytes cmem\[0\]"),
}
_RESOURCE_FUNCTION = re.compile(r"^\s*Function (\S+):\s*$")
_RESOURCE_VALUE = re.compile(r"([A-Z_]+(?:\[\d+\])?):(\d+)")
_LOCATION = re.compile(r'File "([^"]+)", line (\d+)')
_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T\d]+\s+)?([A-Z][A-Z0-9_]*)")
_SECTION = re.compile(r"^(?:\.text\.(\S+):|\s*Function : (\S+))\s*$")
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"')
_LINE_DIRECTIVE = re.compile(r'^\s*#line\s+(\d+)\s+"([^"]*)"\s*$')
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+(?:.*inlined_at\s+(\d+)\s+(\d+)\s+\d+)?")


def parse_ptxas(log: str) -> dict[str, dict[str, int]]:
    """Per entry kernel: registers, spill stores/loads, static shared, barriers, stack frame, cmem[0] (from ``ptxas -v``)."""
    kernels: dict[str, dict[str, int]] = {}
    stacks: dict[str, tuple[int, int, int]] = {}
    current = properties = None
    for line in log.splitlines():
        if match := _ENTRY.search(line):
            current = match.group(1)
            kernels[current] = {"kernel": current, "registers": 0}  # type: ignore[dict-item]
        elif match := _PROPERTIES.search(line):
            properties = match.group(1)
        elif (match := _STACK.search(line)) and properties:
            stacks[properties] = tuple(int(v) for v in match.groups())  # type: ignore[assignment]
        elif "Used" in line and current:
            for key, pattern in _USED.items():
                if found := pattern.search(line):
                    kernels[current][key] = int(found.group(1))
    for name, numbers in kernels.items():
        stack, stores, loads = stacks.get(name, (0, 0, 0))
        numbers.update(stack_frame=stack, spill_stores=stores, spill_loads=loads)
    return kernels


def parse_resource_usage(text: str) -> dict[str, dict[str, int]]:
    """``cuobjdump --dump-resource-usage``: per function ``{"REG": ..., "STACK": ..., "SHARED": ..., ...}``."""
    found: dict[str, dict[str, int]] = {}
    current = None
    for line in text.splitlines():
        if match := _RESOURCE_FUNCTION.match(line):
            current = match.group(1)
        elif current and (values := _RESOURCE_VALUE.findall(line)):
            found[current] = {key: int(value) for key, value in values}
            current = None
    return found


def opcode_of(line: str) -> str | None:
    """The opcode of a SASS instruction line (``HGMMA`` of ``/*0a80*/ HGMMA.64x128x16.F32 ...``), else None."""
    match = _INSTRUCTION.match(line)
    return match.group(2) if match else None


def instruction_lines(lines: list[str]) -> dict[int, tuple[int, str]]:
    """A SASS listing's instructions by their address in the kernel (the ``/*0a80*/``): (line number from 1, opcode)."""
    found = {}
    for number, line in enumerate(lines, start=1):
        if match := _INSTRUCTION.match(line):
            found[int(match.group(1), 16)] = (number, match.group(2))
    return found


LineOf = Callable[[str, int], "int | None"]


def _location(group: list[str], line_of: LineOf) -> int | None:
    """The CUDA line of one ``//## File ...`` group: the outermost location that maps to a line of the device source."""
    lines = [cuda for text in group for file, line in _LOCATION.findall(text) if (cuda := line_of(file, int(line)))]
    return lines[-1] if lines else None


class ParsedSass(NamedTuple):
    """A SASS listing as TileLab shows it: ``text`` without nvdisasm's ``//##`` line comments, its ``links`` (line of
    ``text`` → CUDA line) and ``counts`` (opcode → instructions, per kernel)."""

    text: str
    links: tuple[CodeLineLink, ...]
    counts: dict[str, dict[str, int]]


def parse_sass(text: str, source_path: str | LineOf) -> ParsedSass:
    """nvdisasm ``-c -gi`` output, parsed.

    ``source_path`` is the path of the compiled device source as nvdisasm prints it,
    or a function of (file, line) as printed giving the device-source line (or None).
    """
    line_of = source_path if callable(source_path) else lambda file, line: line if file == source_path else None
    kept: list[str] = []
    links: list[CodeLineLink] = []
    counts: dict[str, dict[str, int]] = {}
    kernel, group, cuda_line = "", [], None
    for line in text.splitlines():
        if line.lstrip().startswith("//##"):
            group.append(line)
            continue
        if group:
            cuda_line, group = _location(group, line_of), []
        if match := _SECTION.match(line):
            kernel = match.group(1) or match.group(2)
        kept.append(line)
        opcode = opcode_of(line)
        if opcode is None:
            continue
        per_kernel = counts.setdefault(kernel, {})
        per_kernel[opcode] = per_kernel.get(opcode, 0) + 1
        if cuda_line is not None:
            links.append(CodeLineLink(len(kept), cuda_line))
    return ParsedSass("\n".join(kept) + "\n", tuple(links), counts)


_LABEL = re.compile(r"\.L_x_\d+")
_COMMENT = re.compile(r"\s*/\*[^*]*\*/\s*$")


def _instructions(sass: str) -> list[tuple[int, str]]:
    """(line number from 1, the instruction as written: address, predicate, operands; labels unnamed) of a listing."""
    return [
        (number, _LABEL.sub(".L", " ".join(_COMMENT.sub("", line).split())))
        for number, line in enumerate(sass.splitlines(), start=1)
        if _INSTRUCTION.match(line)
    ]


def links_of_twin(sass: str, twin: ParsedSass) -> tuple[CodeLineLink, ...] | None:
    """``sass``'s SASS → CUDA links taken from a twin listing: the same instructions at the same addresses, in the
    same order (labels may be numbered apart), whose links give each its CUDA line; None when they differ."""
    ours, theirs = _instructions(sass), _instructions(twin.text)
    if [text for _, text in ours] != [text for _, text in theirs]:
        return None
    cuda_line_of = {link.line: link.cuda_line for link in twin.links}
    twins = ((line, cuda_line_of.get(twin_line)) for (line, _), (twin_line, _) in zip(ours, theirs, strict=True))
    return tuple(CodeLineLink(line, cuda) for line, cuda in twins if cuda is not None)


def parse_ptx_links(ptx: str, source_name: str) -> tuple[CodeLineLink, ...]:
    """PTX instruction line → CUDA line from ``.loc`` (through ``inlined_at`` into the compiled file)."""
    lines = ptx.splitlines()
    files = {m.group(1): m.group(2) for line in lines if (m := _PTX_FILE.match(line))}  # listed after the code
    links: list[CodeLineLink] = []
    cuda_line = None
    for number, line in enumerate(lines, start=1):
        if match := _PTX_LOC.match(line):
            file, at_line, outer_file, outer_line = match.groups()
            if PurePath(files.get(file, "")).name == source_name:
                cuda_line = int(at_line)
            elif outer_file and PurePath(files.get(outer_file, "")).name == source_name:
                cuda_line = int(outer_line)
            continue
        stripped = line.strip()
        if cuda_line is not None and stripped and not stripped.startswith(("//", ".", "{", "}", "$")):
            links.append(CodeLineLink(number, cuda_line))
    return tuple(links)


def instruction_classes(counts: dict[str, int]) -> dict[str, int]:
    """Opcode counts summed into :data:`INSTRUCTION_CLASSES` (classes with none left out), plus ``other``."""
    grouped: dict[str, int] = {}
    classified = 0
    for name, opcodes in INSTRUCTION_CLASSES.items():
        total = sum(counts.get(opcode, 0) for opcode in opcodes)
        classified += total
        if total:
            grouped[name] = total
    other = sum(counts.values()) - classified
    if other:
        grouped["other"] = other
    return grouped


def presumed_lines(compiled: str) -> tuple[str, LineOf]:
    """A CUDA source with ``#line`` directives → (that source without them, the map from what a compiler
    built from it records as a location to the line of the source without them).

    A location is (file, line) as the compiler presumes it; files are matched by name,
    the compiled file (``*.cu``, no directive names it) by its own line numbers. Several
    lines can presume one location (``#line 16`` before each statement of one Python
    line): such a location maps to no line rather than to a wrong one.
    """
    kept: list[str] = []
    found: dict[tuple[str | None, int], int | None] = {}
    directive: tuple[str, int, int] | None = None  # (file name, line, at)
    for number, line in enumerate(compiled.splitlines(), start=1):
        if match := _LINE_DIRECTIVE.match(line):
            directive = (PurePath(match.group(2)).name, int(match.group(1)), number)
            continue
        kept.append(line)
        if not line.strip():
            continue
        where = (directive[0], directive[1] + number - directive[2] - 1) if directive else (None, number)
        found[where] = None if where in found else len(kept)
    named = {file for file, _ in found if file is not None}

    def line_of(file: str, line: int) -> int | None:
        name = PurePath(file).name
        own = name.endswith(".cu") and name not in named
        return found.get((None if own else name, line))

    return "\n".join(kept) + "\n", line_of


_SASS_COLUMNS = re.compile(r"^\s+(/\*[0-9a-f]{4,}\*/)\s+(@!?U?P[T\d]+\s+)?(.*)$")


def compact_sass_line(line: str) -> str:
    """A SASS instruction line with nvdisasm's ~30 columns of padding cut to a fixed predicate column."""
    match = _SASS_COLUMNS.match(line)
    if match is None:
        return line
    address, predicate, rest = match.groups()
    return f"    {address} {(predicate or '').strip():>5} {rest}"


def _kernel_starts(lines: list[str], names: list[str], code: str) -> dict[str, int]:
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


def kernel_slice(
    text: str, links: tuple[CodeLineLink, ...], kernel: str, names: list[str], code: str
) -> tuple[list[str], list[CodeLineLink], int]:
    """(lines of ``kernel``'s section of SASS or PTX ``text``, its links renumbered, first line's number in ``text``).

    One kernel gets the whole text; with several, the first section also keeps the
    file's header and the last the file's trailer.
    """
    lines = text.splitlines()
    starts = _kernel_starts(lines, names, code)
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
