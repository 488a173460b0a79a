"""The parts of a compile's record: passes, sources and their line links, layouts,
launches, timings, the static estimate and the error. Plain frozen data."""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Enum
from typing import Any

import numpy as np

from tilelab._hooks import render
from tilelab.peaks import DevicePeaks
from tilelab.records.encoding import values_equal

__all__ = [
    "NO_GPU",
    "CellLink",
    "CompileMode",
    "ErrorRecord",
    "FoundThrough",
    "LaunchRecord",
    "LayoutKind",
    "LayoutRecord",
    "LineLink",
    "PassRecord",
    "SourceMap",
    "SourceRecord",
    "StaticEstimate",
    "Status",
    "TileOp",
    "TimingRecord",
]


class Status(str, Enum):
    """Whether the compile finished."""

    OK = "ok"
    FAILED = "failed"


class CompileMode(str, Enum):
    """How far the compile went."""

    LOWERED = "lowered"  # device code generated, not compiled: no GPU here, or one of another arch
    COMPILED = "compiled"  # compiled for a present device (or the CPU), runnable


NO_GPU = "no GPU"  # why a CUDA kernel was lowered only, where no GPU was visible


class LayoutKind(str, Enum):
    FRAGMENT = "fragment"  # registers: element -> (thread, local index)
    SHARED = "shared"  # shared memory: element -> physical offset
    OTHER = "other"


@dataclass(frozen=True)
class PassRecord:
    """One top-level compiler pass and the IR right after it."""

    index: int
    name: str
    ir: str
    changed: bool
    added: int
    removed: int
    seconds: float
    phase: str | None = None


@dataclass(frozen=True)
class LineLink:
    """Generated-source line ``output_line`` came from ``file:line``."""

    output_line: int
    file: str
    line: int


class FoundThrough(str, Enum):
    """How a device-code line's kernel-file line was found (see :mod:`tilelab.source_map`)."""

    DIRECTIVE = "directive"  # TileLang's #line directive, where it was emitted for the line
    TEMPLATE = "template"  # a tl:: template call naming the op and its buffers
    BLOCK = "block"  # the block around it
    DECLARATION = "declaration"  # the declaration of a buffer the kernel allocates
    PIPELINE = "pipeline"  # a pipelined loop's loops and barriers
    OPERAND = "operand"  # the buffers it reads and writes: one op names them all (a fill: the one that fills), or one
    # statement of the T.Parallel loop that its #line gives


@dataclass(frozen=True)
class CellLink:
    """Device-code line ``cuda_line`` came from line ``cell_line`` of the kernel's file."""

    cuda_line: int
    cell_line: int
    how: FoundThrough


@dataclass(frozen=True)
class TileOp:
    """A tile-op statement of the kernel's Python: ``T.<name>(...)``, or a ``for`` over a tile loop, at ``line``."""

    line: int
    name: str  # "gemm", "copy", "reduce_max", "Pipelined", "alloc_shared", ...


@dataclass(frozen=True)
class SourceMap:
    """Which kernel-file line each device-code line came from, TileLang's ``#line`` directives repaired.

    :mod:`tilelab.source_map` computes it once, at capture. ``links`` are in
    device-code order; ``ops`` are the tile ops of the kernel's function by line,
    linked or not (an op with no link was fused into the lines around it, or removed).
    """

    links: tuple[CellLink, ...] = ()
    ops: tuple[TileOp, ...] = ()

    @property
    def cuda_to_cell(self) -> dict[int, int]:
        return {link.cuda_line: link.cell_line for link in self.links}

    def cuda_lines_for(self, cell_line: int) -> list[int]:
        """The device-code lines that came from ``cell_line``."""
        return [link.cuda_line for link in self.links if link.cell_line == cell_line]

    def cell_line_for(self, cuda_line: int) -> int | None:
        """The kernel-file line that ``cuda_line`` came from, if known."""
        return next((link.cell_line for link in self.links if link.cuda_line == cuda_line), None)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SourceMap:
        links = (CellLink(link["cuda_line"], link["cell_line"], FoundThrough(link["how"])) for link in data["links"])
        return cls(links=tuple(links), ops=tuple(TileOp(**op) for op in data["ops"]))


@dataclass(frozen=True)
class SourceRecord:
    """Generated sources and how they link back to the kernel's Python.

    ``line_links`` are TileLang's ``#line`` directives as emitted, which
    :mod:`tilelab.source_map` repairs into ``source_map``: ask the map (through
    :func:`tilelab.source_map.source_map_of`) which cell line a CUDA line came from.
    """

    device: str
    host: str | None
    language: str  # "cuda" or "c"
    line_links: tuple[LineLink, ...]  # TileLang's #line directives as emitted
    kernel_file: str  # the file (or cell) that defined the kernel
    kernel_source: str  # the text of kernel_file, for side-by-side views
    source_map: SourceMap | None = None  # the repaired links; None in records saved before format 6

    @property
    def code_name(self) -> str:
        """What to call the device code in words: ``"CUDA"``, or ``"C"`` for a CPU kernel."""
        return "C" if self.language == "c" else "CUDA"


@dataclass(frozen=True, eq=False)
class LayoutRecord:
    """The inferred layout of one buffer after ``tl.LayoutInference``.

    For fragments ``thread`` and ``local_index`` have shape
    ``(replicas, *shape)``: replica ``r`` of element ``(i, j)`` lives in
    register ``local_index[r, i, j]`` of thread ``thread[r, i, j]``.
    For shared buffers ``offset`` has shape ``shape`` and holds the physical
    element offset (row-major over the layout's output shape).
    """

    buffer: str
    scope: str
    shape: tuple[int, ...]
    dtype: str
    kind: LayoutKind
    description: str
    threads: int = 0
    replicas: int = 1
    thread: np.ndarray | None = None
    local_index: np.ndarray | None = None
    offset: np.ndarray | None = None
    kernel: str = ""  # the device kernel that allocates the buffer
    thread_start: int = 0  # threadIdx.x of the fragment's thread 0 (its thread range's start)

    @property
    def element_bytes(self) -> int:
        bits = int("".join(ch for ch in self.dtype if ch.isdigit()) or 8)
        return max(1, bits // 8)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LayoutRecord):
            return NotImplemented
        return all(values_equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    __hash__ = None  # type: ignore[assignment]

    def plot(self, **kwargs: Any):
        """An interactive figure of this layout (``tilelab.views.layouts.layout_figure``)."""

        return render("layout_figure", self, **kwargs)

    def to_matplotlib(self, **kwargs: Any):
        """A static matplotlib figure of this layout, for papers (``tilelab.views.layouts.layout_matplotlib``)."""

        return render("layout_matplotlib", self, **kwargs)


@dataclass(frozen=True)
class LaunchRecord:
    """Launch facts of one device kernel; an extent that depends on a dynamic shape is its expression (a str)."""

    grid: tuple[int | str, int | str, int | str]
    block: tuple[int, int, int]
    dynamic_shared_bytes: int
    kernel: str = ""  # the device function's name, e.g. main_kernel

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


@dataclass(frozen=True)
class TimingRecord:
    elaborate_s: float = 0.0
    lower_s: float = 0.0
    compile_s: float = 0.0

    @property
    def total_s(self) -> float:
        return self.elaborate_s + self.lower_s + self.compile_s


@dataclass(frozen=True)
class StaticEstimate:
    """A static roofline estimate of one kernel: what it computes and moves, against one device's peaks.

    ``flops`` counts ``T.gemm`` only (2·M·N·K each) and ``bytes`` the global
    side of every ``T.copy`` as the blocks issue them (each block its own tiles,
    cache hits included), both by tilelang's ``tilelang.tools.Analyzer``.
    ``min_bytes`` is what must cross global memory at least once (the copied
    global buffers' sizes, at most ``bytes``): the roofline uses it, so
    :attr:`roofline_ms` is a bound no run should beat at these peaks (the dense tensor-core peak of
    ``operand_dtypes``, the GEMMs' A operands: FP16/BF16, TF32 for float32, FP8, INT8 or FP64).
    :mod:`tilelab.estimate` builds this record and names the peaks' source.
    """

    flops: int
    bytes: int
    min_bytes: int
    peaks: DevicePeaks  # whose peaks, at the FLOP peak of the operands' tensor cores
    operand_dtypes: tuple[str, ...] = ()  # the dtypes the T.gemm calls multiply, which pick the FLOP peak

    @property
    def arithmetic_intensity(self) -> float:
        """FLOPs per byte that must move (``min_bytes``)."""
        return self.flops / self.min_bytes if self.min_bytes else float("inf")

    @property
    def compute_ms(self) -> float:
        return self.flops / self.peaks.flops_per_s * 1e3

    @property
    def memory_ms(self) -> float:
        return self.min_bytes / self.peaks.bytes_per_s * 1e3

    @property
    def roofline_ms(self) -> float:
        """The roofline bound: no faster than its FLOPs at peak compute, nor its ``min_bytes`` at peak bandwidth."""
        return max(self.compute_ms, self.memory_ms)

    @property
    def bound(self) -> str:
        """``"compute"`` or ``"memory"``: which of the two sets :attr:`roofline_ms`."""
        return "compute" if self.compute_ms >= self.memory_ms else "memory"

    def percent_of_roofline(self, latency_ms: float | None) -> float | None:
        """``roofline_ms / latency_ms`` in percent (100 = at the bound); None without a measured latency."""
        return self.roofline_ms / latency_ms * 100 if latency_ms else None

    def text(self) -> str:
        """One line: ``2.15 GFLOP, 6.29 MB (35.7 MB issued by the blocks), bound: compute, roofline time 2.17 µs on H100 SXM``."""
        return (
            f"{self.flops / 1e9:.3g} GFLOP, {self.min_bytes / 1e6:.3g} MB ({self.bytes / 1e6:.3g} MB issued by the blocks), "
            f"bound: {self.bound}, roofline time {self.roofline_ms * 1e3:.3g} µs on {self.peaks.device}"
        )


@dataclass(frozen=True)
class ErrorRecord:
    """A failure a user caused, cleaned for display; ``log`` keeps the original."""

    kind: str  # e.g. "elaborate", "lower", "compile", "run"
    message: str
    file: str | None = None
    line: int | None = None  # line in ``file`` (a cell line for %%tilelang)
    log: str = ""
