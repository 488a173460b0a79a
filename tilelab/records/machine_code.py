"""The machine-code records: PTX, SASS, per-kernel resources and occupancy, built by nvcc/ptxas/nvdisasm."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tilelab.records.encoding import encode

__all__ = ["CodeLineLink", "KernelResources", "MachineCodeRecord", "OccupancyRecord"]


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

    @property
    def kernels(self) -> list[str]:
        """The device kernels it has machine code of: those with resources, then any with only instruction counts."""
        return [*self.resources, *(name for name in self.instruction_counts if name not in self.resources)]

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
        return encode(self)

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
