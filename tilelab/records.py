"""The records of one compile: plain, immutable, JSON-serialisable data.

Records hold text, numbers and numpy arrays only (never TVM or torch objects),
import nothing heavy, and know nothing of views. ``KernelRecord.to_json`` /
``KernelRecord.from_json`` carry ``FORMAT_VERSION``.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any

import numpy as np

from tilelab._hooks import render
from tilelab.profile_summary import ProfileRecord
from tilelab.provenance import CacheSource, Provenance
from tilelab.repro import reproducer_of_record

__all__ = [
    "FORMAT_VERSION",
    "CodeLineLink",
    "CompileMode",
    "ErrorRecord",
    "KernelRecord",
    "KernelResources",
    "LaunchRecord",
    "LayoutKind",
    "LayoutRecord",
    "LineLink",
    "MachineCodeRecord",
    "OccupancyRecord",
    "PassRecord",
    "SourceRecord",
    "StaticEstimate",
    "Status",
    "TimingRecord",
]

# 2: a launch per device kernel, launch problems, layouts keyed per kernel; 3: static estimate;
# 4: the estimate's GEMM operand dtypes (which pick its FLOP peak); 5: provenance (who served it, the cache key's parts)
FORMAT_VERSION = 5
_READABLE_FORMATS = (2, 3, 4, 5)  # formats 3 to 5 only added optional fields: older files lack them (None, or no dtypes)


class Status(str, Enum):
    """Whether the compile finished."""

    OK = "ok"
    FAILED = "failed"


class CompileMode(str, Enum):
    """How far the compile went."""

    LOWERED = "lowered"  # device code generated, not compiled: no GPU here
    COMPILED = "compiled"  # compiled for a present device (or the CPU), runnable


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


@dataclass(frozen=True)
class SourceRecord:
    """Generated sources and how they link back to the kernel's Python."""

    device: str
    host: str | None
    language: str  # "cuda" or "c"
    line_links: tuple[LineLink, ...]
    kernel_file: str  # the file (or cell) that defined the kernel
    kernel_source: str  # the text of kernel_file, for side-by-side views

    def cuda_lines_for(self, line: int) -> list[int]:
        """Generated lines that came from ``line`` of the kernel's file."""
        return [link.output_line for link in self.line_links if link.file == self.kernel_file and link.line == line]

    def kernel_line_for(self, output_line: int) -> int | None:
        """The kernel-file line that generated ``output_line``, if known."""
        for link in self.line_links:
            if link.output_line == output_line and link.file == self.kernel_file:
                return link.line
        return None


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
        return all(_values_equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    __hash__ = None  # type: ignore[assignment]

    def plot(self, **kwargs: Any):
        """An interactive figure of this layout (``tilelab.views.layout.layout_figure``)."""

        return render("layout_figure", self, **kwargs)

    def to_matplotlib(self, **kwargs: Any):
        """A static matplotlib figure of this layout, for papers (``tilelab.views.layout.layout_matplotlib``)."""

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
    device: str  # whose peaks, e.g. "H200 SXM"
    peak_flops: float  # FLOP/s
    peak_bytes: float  # bytes/s
    peaks_source: str  # the datasheet figure the peaks are, in words
    operand_dtypes: tuple[str, ...] = ()  # the dtypes the T.gemm calls multiply, which pick the FLOP peak

    @property
    def arithmetic_intensity(self) -> float:
        """FLOPs per byte that must move (``min_bytes``)."""
        return self.flops / self.min_bytes if self.min_bytes else float("inf")

    @property
    def compute_ms(self) -> float:
        return self.flops / self.peak_flops * 1e3

    @property
    def memory_ms(self) -> float:
        return self.min_bytes / self.peak_bytes * 1e3

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
            f"bound: {self.bound}, roofline time {self.roofline_ms * 1e3:.3g} µs on {self.device}"
        )


@dataclass(frozen=True)
class ErrorRecord:
    """A failure a user caused, cleaned for display; ``log`` keeps the original."""

    kind: str  # e.g. "elaborate", "lower", "compile", "run"
    message: str
    file: str | None = None
    line: int | None = None  # line in ``file`` (a cell line for %%tilelang)
    log: str = ""


@dataclass(frozen=True, eq=False)
class KernelRecord:
    """Everything one compile of one kernel produced.

    ``mode`` says whether the device code was compiled (runnable) or only
    lowered; ``status`` whether the compile finished. A failed compile is a
    record too: ``error`` says why and ``passes`` holds those that ran.
    """

    name: str
    status: Status
    mode: CompileMode
    target: str  # the TVM target as JSON
    arch: str
    tilelang_version: str
    cache_key: str
    arguments: dict[str, str] = field(default_factory=dict)  # reprs of the values explored with
    passes: tuple[PassRecord, ...] = ()
    source: SourceRecord | None = None
    layouts: dict[str, LayoutRecord] = field(default_factory=dict)
    launches: tuple[LaunchRecord, ...] = ()  # one per device kernel
    launch_problems: tuple[str, ...] = ()  # why a kernel cannot launch on ``arch``, with the numbers
    machine_code: MachineCodeRecord | None = None  # PTX, SASS, resources, occupancy (CUDA, when nvcc is found)
    estimate: StaticEstimate | None = None  # static roofline estimate (CUDA, where tilelang's Analyzer reads the kernel)
    estimate_note: str = ""  # why there is no estimate, in one line
    latency_ms: float | None = None  # a measured latency of this kernel, when one was attached (with_latency)
    profile: ProfileRecord | None = None  # one ncu run of the compiled kernel (%%tilelang --profile), when attached
    timings: TimingRecord = field(default_factory=TimingRecord)
    error: ErrorRecord | None = None
    warnings: tuple[str, ...] = ()
    device_name: str | None = None
    from_cache: bool = False
    provenance: Provenance | None = None  # who served the compile and what TileLang's cache key was made of
    created: float = field(default_factory=time.time)  # when the compile finished (orders a kernel's runs)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def lowered_only(self) -> bool:
        return self.mode is CompileMode.LOWERED

    @property
    def launch(self) -> LaunchRecord | None:
        """The first device kernel's launch (most programs have one)."""
        return self.launches[0] if self.launches else None

    @property
    def launchable(self) -> bool:
        """False when a device kernel exceeds the arch's limits (threads, shared memory; registers with machine code)."""
        machine_ok = self.machine_code is None or self.machine_code.launchable
        return not self.launch_problems and machine_ok

    @property
    def has_cuda_source(self) -> bool:
        """Compiled, with CUDA device source: what nvcc can build machine code from."""
        return self.ok and self.source is not None and self.source.language == "cuda"

    def with_machine_code(self, machine_code: MachineCodeRecord) -> KernelRecord:
        """This record (same id) with its machine code attached."""
        return replace(self, machine_code=machine_code)

    def with_profile(self, profile: ProfileRecord) -> KernelRecord:
        """This record (same id) with an ncu profile attached."""
        return replace(self, profile=profile)

    def with_latency(self, latency_ms: float | None) -> KernelRecord:
        """This record (same id) with a measured latency in ms (e.g. a tuning row's), for the percent of roofline."""
        return replace(self, latency_ms=latency_ms)

    @property
    def percent_of_roofline(self) -> float | None:
        """The static roofline time as a percent of the measured latency; None without both."""
        return self.estimate.percent_of_roofline(self.latency_ms) if self.estimate else None

    def pass_named(self, name: str) -> PassRecord:
        """The first pass called ``name``."""
        for record in self.passes:
            if record.name == name:
                return record
        raise KeyError(f"no pass named {name!r} in {self.name}; passes: {', '.join(p.name for p in self.passes)}")

    def summary(self) -> dict[str, Any]:
        """A small JSON-ready dict for lists (the panel, ``%tilelang list``)."""
        return {
            "id": self.id,
            "name": self.name,
            "status": self.status.value,
            "mode": self.mode.value,
            "arch": self.arch,
            "passes": len(self.passes),
            "changed_passes": sum(1 for p in self.passes if p.changed),
            "compile_s": round(self.timings.total_s, 3),
            "threads": self.launch.threads if self.launch else None,
            "grid": list(self.launch.grid) if self.launch else None,
            "kernels": len(self.launches),
            "launchable": self.launchable,
            "error": self.error.message if self.error else None,
            "from_cache": self.from_cache,
        }

    def with_cache_hit(self) -> KernelRecord:
        """This record shown again from TileLab's cell cache (nothing compiled)."""
        provenance = self.provenance.served_from(CacheSource.CELL) if self.provenance is not None else None
        return replace(self, from_cache=True, provenance=provenance)

    def reproducer(self) -> str:
        """A standalone Python file (it imports only ``tilelang`` and ``torch``) that compiles this kernel again.

        It holds the kernel's source, the arguments, target and pass configs, seeded
        inputs and a NaN/Inf check of the outputs, under a header saying what TileLab
        observed (the compile error, the latency, the device). See :mod:`tilelab.repro`.
        """
        return reproducer_of_record(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KernelRecord):
            return NotImplemented
        return all(_values_equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        state = self.status.value if not self.ok else self.mode.value
        return f"<KernelRecord {self.name} {self.arch} {state}, {len(self.passes)} passes>"

    # -- JSON ---------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps({"format": FORMAT_VERSION, "record": _encode(self)})

    def save(self, path: Any) -> None:
        """Write this record as JSON to ``path`` (a str or ``Path``); ``tilelab.load(path)`` reads it back."""
        with open(path, "w", encoding="utf-8") as file:
            file.write(self.to_json())

    @classmethod
    def from_json(cls, text: str) -> KernelRecord:
        payload = json.loads(text)
        version = payload.get("format")
        if version == 1:
            return _decode_kernel(_upgraded_from_v1(payload["record"]))
        if version not in _READABLE_FORMATS:
            raise ValueError(f"KernelRecord JSON format {version!r} is not supported (expected {FORMAT_VERSION})")
        return _decode_kernel(payload["record"])


def _values_equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and bool((a == b).all())
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_values_equal(a[k], b[k]) for k in a)
    return a == b


def _encode(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, Enum):
        return value.value
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _encode(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    return value


def _array(value: Any) -> np.ndarray | None:
    if value is None:
        return None
    return np.asarray(value["__ndarray__"], dtype=value["dtype"]).reshape(value["shape"])


def _decode_layout(data: dict) -> LayoutRecord:
    return LayoutRecord(
        **{
            **data,
            "shape": tuple(data["shape"]),
            "kind": LayoutKind(data["kind"]),
            "thread": _array(data["thread"]),
            "local_index": _array(data["local_index"]),
            "offset": _array(data["offset"]),
        }
    )


def _decode_source(data: dict | None) -> SourceRecord | None:
    if data is None:
        return None
    links = tuple(LineLink(**link) for link in data["line_links"])
    return SourceRecord(**{**data, "line_links": links})


def _upgraded_from_v1(data: dict) -> dict:
    """Format 1 had one ``launch`` (or None) and no launch problems."""
    data = dict(data)
    launch = data.pop("launch")
    data["launches"] = [] if launch is None else [launch]
    data["launch_problems"] = []
    data["machine_code"] = None
    data["created"] = 0.0
    return data


def _estimate_from(data: dict) -> StaticEstimate:
    return StaticEstimate(**{**data, "operand_dtypes": tuple(data.get("operand_dtypes", ()))})


def _decode_kernel(data: dict) -> KernelRecord:
    return KernelRecord(
        **{
            **data,
            "status": Status(data["status"]),
            "mode": CompileMode(data["mode"]),
            "passes": tuple(PassRecord(**p) for p in data["passes"]),
            "source": _decode_source(data["source"]),
            "layouts": {name: _decode_layout(layout) for name, layout in data["layouts"].items()},
            "launches": tuple(
                LaunchRecord(**{**launch, "grid": tuple(launch["grid"]), "block": tuple(launch["block"])})
                for launch in data["launches"]
            ),
            "launch_problems": tuple(data["launch_problems"]),
            "timings": TimingRecord(**data["timings"]),
            "error": None if data["error"] is None else ErrorRecord(**data["error"]),
            "warnings": tuple(data["warnings"]),
            "machine_code": None if data.get("machine_code") is None else MachineCodeRecord.from_dict(data["machine_code"]),
            "estimate": None if data.get("estimate") is None else _estimate_from(data["estimate"]),
            "profile": None if data.get("profile") is None else ProfileRecord.from_dict(data["profile"]),
            "provenance": None if data.get("provenance") is None else Provenance.from_dict(data["provenance"]),
        }
    )


# -- machine code (PTX, SASS, resources, occupancy) ---------------------------
@dataclass(frozen=True)
class KernelResources:
    """What ptxas reports for one device kernel, with the launch's dynamic shared memory.

    ``registers`` are per thread; spills and ``stack_frame`` are bytes per
    thread; shared memory is bytes per block (``shared_bytes`` static,
    ``dynamic_shared_bytes`` from the launch).
    """

    kernel: str
    registers: int
    spill_stores: int = 0
    spill_loads: int = 0
    shared_bytes: int = 0
    dynamic_shared_bytes: int = 0
    barriers: int = 0
    stack_frame: int = 0
    constant_bytes: int = 0  # cmem[0]: the kernel's parameters and constants
    threads_per_block: int | None = None

    @property
    def spills(self) -> int:
        """Spilled bytes per thread, stores and loads together."""
        return self.spill_stores + self.spill_loads

    @property
    def total_shared_bytes(self) -> int:
        return self.shared_bytes + self.dynamic_shared_bytes


@dataclass(frozen=True)
class OccupancyRecord:
    """Theoretical occupancy of one kernel on one arch, and whether it can launch at all.

    ``blocks_by_limit`` holds the resident blocks per SM that each limit alone
    allows (``registers``, ``shared memory``, ``threads``, ``blocks``);
    ``blocks_per_sm`` is their minimum and ``limited_by`` names it.
    """

    arch: str
    threads_per_block: int
    warps_per_block: int
    blocks_per_sm: int
    warps_per_sm: int
    max_warps_per_sm: int
    occupancy: float  # warps_per_sm / max_warps_per_sm, 0..1
    limited_by: str
    blocks_by_limit: dict[str, int] = field(default_factory=dict)
    registers_per_block: int = 0  # as allocated (per-warp granularity)
    shared_per_block: int = 0  # as allocated, the system's reserved shared memory included
    launchable: bool = True
    reasons: tuple[str, ...] = ()  # why it cannot launch, with the numbers


@dataclass(frozen=True)
class CodeLineLink:
    """Line ``line`` of a SASS or PTX text came from line ``cuda_line`` of the device source."""

    line: int
    cuda_line: int


@dataclass(frozen=True)
class MachineCodeRecord:
    """PTX, SASS, resources and occupancy of a record's device source, built by nvcc/ptxas/nvdisasm.

    ``arch`` is the record's arch; ``compile_arch`` what was compiled for
    (``sm_90`` becomes ``sm_90a``: wgmma and TMA need it). Per-kernel facts are
    keyed by the device kernel's name. When a tool is missing or the compile
    fails, the record says so in ``notes`` / ``error`` and carries what exists.
    """

    arch: str
    compile_arch: str = ""
    ptx: str = ""
    sass: str = ""
    resources: dict[str, KernelResources] = field(default_factory=dict)
    occupancy: dict[str, OccupancyRecord] = field(default_factory=dict)
    instruction_counts: dict[str, dict[str, int]] = field(default_factory=dict)  # kernel -> opcode -> count
    sass_links: tuple[CodeLineLink, ...] = ()
    ptx_links: tuple[CodeLineLink, ...] = ()
    tools: dict[str, str] = field(default_factory=dict)  # tool -> "path (version)"
    notes: tuple[str, ...] = ()
    error: str | None = None
    seconds: float = 0.0

    @property
    def available(self) -> bool:
        """True when SASS or PTX was built."""
        return self.error is None and bool(self.sass or self.ptx)

    @property
    def launchable(self) -> bool:
        return all(occupancy.launchable for occupancy in self.occupancy.values())

    @property
    def launch_reasons(self) -> tuple[str, ...]:
        """Why kernels cannot launch, each as ``kernel: reason``."""
        return tuple(f"{name}: {reason}" for name, occupancy in self.occupancy.items() for reason in occupancy.reasons)

    def total_instruction_counts(self) -> dict[str, int]:
        """Opcode counts over every kernel."""
        total: dict[str, int] = {}
        for counts in self.instruction_counts.values():
            for opcode, count in counts.items():
                total[opcode] = total.get(opcode, 0) + count
        return total

    def cuda_line_for(self, sass_line: int) -> int | None:
        """The device-source line that SASS line ``sass_line`` came from, if known."""
        return next((link.cuda_line for link in self.sass_links if link.line == sass_line), None)

    def sass_lines_for(self, cuda_line: int) -> list[int]:
        """SASS lines generated from device-source line ``cuda_line``."""
        return [link.line for link in self.sass_links if link.cuda_line == cuda_line]

    def summary(self) -> dict[str, Any]:
        """The tuning-row columns: the worst kernel's registers, spills, shared memory and occupancy."""
        resources, occupancy = self.resources.values(), self.occupancy.values()
        return {
            "registers": max((r.registers for r in resources), default=None),
            "spills": sum(r.spills for r in resources) if resources else None,
            "shared_bytes": max((r.total_shared_bytes for r in resources), default=None),
            "occupancy": min((o.occupancy for o in occupancy), default=None),
            "launchable": self.launchable if occupancy else None,
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``from_dict`` reads it back)."""
        return _encode(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MachineCodeRecord:
        return cls(
            **{
                **data,
                "resources": {name: KernelResources(**r) for name, r in data["resources"].items()},
                "occupancy": {
                    name: OccupancyRecord(**{**o, "reasons": tuple(o["reasons"])})
                    for name, o in data["occupancy"].items()
                },
                "sass_links": tuple(CodeLineLink(**link) for link in data["sass_links"]),
                "ptx_links": tuple(CodeLineLink(**link) for link in data["ptx_links"]),
                "notes": tuple(data["notes"]),
            }
        )
