"""Where a profiled launch's warps were: ncu's warp-state samples placed on CUDA lines and on cell lines.

ncu samples, every few thousand cycles, the state of a warp on each SM: the
instruction it is at and why it is not issuing (its stall reason). Its source page
gives the samples per SASS instruction (:mod:`tilelab.counters.source_page`); the
record's SASS listing links each instruction to the CUDA line it came from, and the
record's source map (:mod:`tilelab.source_map`) each CUDA line to its cell line. So
the samples add up per CUDA line and per cell line, which no report of ncu's does:
its own source view can only follow TileLang's ``#line`` directives. In a
warp-specialised kernel they also add up by whose warps they were at, the
producer's or the consumers' (:mod:`tilelab.warp_roles`).

The samples are placed only where the SASS ncu ran is the record's: every sampled
instruction's address must hold the same opcode in the record's listing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from tilelab.machine.text import instruction_lines, kernel_slice
from tilelab.records import InstructionSamples, KernelProfile, KernelRecord
from tilelab.source_map import source_map_of
from tilelab.warp_roles import ALL_WARPS, warp_roles

__all__ = ["LineSamples", "PlacedSamples", "place_samples"]

_NO_MACHINE_CODE = "the record has no machine code yet (%%tilelang builds it in the background, unless --no-machine-code)"


@dataclass(frozen=True)
class LineSamples:
    """The warp samples at one line's instructions, split by stall reason (most first); ``line`` None: no line.

    ``by_role``: in a warp-specialised kernel, the same samples by the warps whose code they were at
    (:mod:`tilelab.warp_roles`: ``producer``, ``consumer``, or ``all`` outside the split; most first); else empty.
    """

    line: int | None
    samples: int
    reasons: tuple[tuple[str, int], ...]
    by_role: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class PlacedSamples:
    """A profiled launch's warp samples, by CUDA line and by cell line (most first), or why they are not placed.

    ``cell_line_of`` is the record's source map (CUDA line → cell line), for naming each CUDA line's cell line.
    """

    kernel: str
    samples: int
    by_cuda_line: tuple[LineSamples, ...] = ()
    by_cell_line: tuple[LineSamples, ...] = ()
    cell_line_of: dict[int, int] | None = None
    unplaced: str = ""  # why the samples are not on lines ("" when they are)


def _mnemonic(instruction: str) -> str:
    """``BRA`` of ncu's ``@P1 BRA 0x7f…``; ``HGMMA`` of ``HGMMA.64x128x16.F32 …``."""
    words = [word for word in instruction.split() if not word.startswith("@")]
    return words[0].split(".")[0] if words else ""


def _by_line(placed: list[tuple[int | None, InstructionSamples, str | None]]) -> tuple[LineSamples, ...]:
    samples: Counter[int | None] = Counter()
    reasons: dict[int | None, Counter[str]] = {}
    roles: dict[int | None, Counter[str]] = {}
    for line, item, role in placed:
        samples[line] += item.samples
        reasons.setdefault(line, Counter()).update(dict(item.reasons))
        if role is not None:
            roles.setdefault(line, Counter())[role] += item.samples
    return tuple(
        LineSamples(line, count, tuple(reasons[line].most_common()), tuple(roles.get(line, Counter()).most_common()))
        for line, count in samples.most_common()
    )


def _mismatch(samples: tuple[InstructionSamples, ...], at: dict[int, tuple[int, str]]) -> str:
    """Why the record's SASS is not the one ncu sampled ("" when every sampled address holds the same opcode)."""
    differ = [item for item in samples if at.get(item.offset, (0, None))[1] != _mnemonic(item.instruction)]
    if not differ:
        return ""
    first = differ[0]
    found = at.get(first.offset)
    theirs = f"the record has {found[1]}" if found else "the record has no instruction there"
    return (
        f"the SASS ncu ran differs from the record's at {len(differ)} of {len(samples)} sampled instructions "
        f"(first /*{first.offset:04x}*/: ncu ran {first.instruction}, {theirs}): the samples are not placed on lines"
    )


def place_samples(record: KernelRecord, kernel: KernelProfile) -> PlacedSamples | None:
    """``kernel``'s samples (a launch of ``record.profile``) on the lines they came from; None when ncu took none."""
    if not kernel.samples:
        return None
    machine, total = record.machine_code, kernel.sampled
    if machine is None or not machine.sass:
        why = _NO_MACHINE_CODE if machine is None else (machine.error or "the record's machine code has no SASS")
        return PlacedSamples(kernel.kernel, total, unplaced=f"{why}: the samples are not placed on lines")
    lines, links, _first = kernel_slice(machine.sass, machine.sass_links, kernel.kernel, machine.kernels, "sass")
    at = instruction_lines(lines)
    if why := _mismatch(kernel.samples, at):
        return PlacedSamples(kernel.kernel, total, unplaced=why)
    cuda_line_of: dict[int, int] = {}
    for link in links:
        cuda_line_of.setdefault(link.line, link.cuda_line)
    cell_line_of = source_map_of(record.source).cuda_to_cell if record.source is not None else {}
    roles = warp_roles(record.source.device) if record.source is not None else {}
    on_cuda = []
    for item in kernel.samples:
        line = cuda_line_of.get(at[item.offset][0])
        on_cuda.append((line, item, roles.get(line, ALL_WARPS) if roles else None))  # no roles: not warp-specialised
    on_cell = [(cell_line_of.get(line) if line is not None else None, item, role) for line, item, role in on_cuda]
    return PlacedSamples(kernel.kernel, total, _by_line(on_cuda), _by_line(on_cell), cell_line_of)
