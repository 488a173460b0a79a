"""What one ncu run said about each profiled kernel, as plain frozen data a :class:`~tilelab.records.KernelRecord` carries.

:func:`tilelab.counters.summary.summarize` makes it from ncu's report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilelab.peaks import DevicePeaks
from tilelab.records.encoding import decode_peaks

__all__ = ["InstructionSamples", "KernelProfile", "ProfileAdvice", "ProfileRecord", "RooflinePosition"]


@dataclass(frozen=True)
class ProfileAdvice:
    """One of ncu's rules that fired: ``kind`` is ncu's rule type (OPT, WRN, INF); speedup in percent, if estimated."""

    rule: str
    section: str
    kind: str
    description: str
    estimated_speedup: float | None = None


@dataclass(frozen=True)
class RooflinePosition:
    """Where one run sits under the roofline of ``peaks``: achieved FLOP/s (with a static estimate) and DRAM bytes/s."""

    peaks: DevicePeaks
    achieved_bytes_per_s: float | None = None  # ncu's DRAM throughput
    flops: int | None = None  # the static estimate's FLOPs
    min_bytes: int | None = None  # the static estimate's bytes that must move
    achieved_flops_per_s: float | None = None  # flops / ncu's duration

    @property
    def flops_percent(self) -> float | None:
        return self.achieved_flops_per_s / self.peaks.flops_per_s * 100 if self.achieved_flops_per_s is not None else None

    @property
    def bytes_percent(self) -> float | None:
        return self.achieved_bytes_per_s / self.peaks.bytes_per_s * 100 if self.achieved_bytes_per_s is not None else None

    @property
    def intensity(self) -> float | None:
        """FLOPs per DRAM byte as run (achieved FLOP/s over DRAM bytes/s), else the estimate's FLOPs per ``min_bytes``."""
        if self.achieved_flops_per_s is not None and self.achieved_bytes_per_s:
            return self.achieved_flops_per_s / self.achieved_bytes_per_s
        return self.flops / self.min_bytes if self.flops is not None and self.min_bytes else None

    @property
    def ridge(self) -> float:
        """The intensity where the memory roof meets the compute roof."""
        return self.peaks.flops_per_s / self.peaks.bytes_per_s

    def roof(self, intensity: float) -> float:
        """The attainable FLOP/s at ``intensity``."""
        return min(self.peaks.flops_per_s, self.peaks.bytes_per_s * intensity)


@dataclass(frozen=True)
class InstructionSamples:
    """ncu's warp-state samples at one SASS instruction (its SourceCounters section).

    ``offset`` is the instruction's address within its kernel (the ``/*0a10*/`` of a SASS listing) and
    ``instruction`` its text as ncu printed it, so a listing can be checked to hold the same instruction there.
    ``samples`` counts every sample of a warp at it, ``not_issued`` those where the warp issued nothing;
    ``reasons`` splits ``samples`` by ncu's stall reason (``long_sb``, ``barrier`` …, the ``stall_`` dropped), most first.
    """

    offset: int
    instruction: str
    samples: int
    not_issued: int
    reasons: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class KernelProfile:
    """ncu's figures for one profiled launch (``launch`` is ncu's ID); a figure ncu did not report is None.

    Throughputs and occupancies are percents as ncu prints them; ``duration_s``
    in seconds, ``dram_bytes_per_s`` in bytes/s, shared memory in bytes per block.
    """

    kernel: str
    launch: int
    duration_s: float | None = None
    compute_throughput: float | None = None  # Compute (SM) Throughput, % of peak
    memory_throughput: float | None = None  # Memory Throughput, % of peak (the busiest memory unit)
    dram_throughput: float | None = None
    l1_throughput: float | None = None
    l2_throughput: float | None = None
    dram_bytes_per_s: float | None = None
    achieved_occupancy: float | None = None
    theoretical_occupancy: float | None = None
    block_limits: dict[str, float] = field(default_factory=dict)  # limit -> resident blocks per SM it allows alone
    registers_per_thread: int | None = None
    block_size: int | None = None
    grid_size: int | None = None  # blocks
    threads: int | None = None
    shared_bytes_per_block: float | None = None  # static + dynamic
    waves_per_sm: float | None = None
    roofline: RooflinePosition | None = None
    advice: tuple[ProfileAdvice, ...] = ()
    samples: tuple[InstructionSamples, ...] = ()  # the instructions ncu sampled a warp at, in address order

    @property
    def sampled(self) -> int:
        """How many warp-state samples ncu took of this launch."""
        return sum(item.samples for item in self.samples)

    @property
    def occupancy_limiters(self) -> tuple[str, ...]:
        """The limits that allow the fewest resident blocks (ncu's ``Block Limit ...``), ties all named."""
        fewest = min(self.block_limits.values(), default=None)
        return tuple(name for name, value in self.block_limits.items() if value == fewest)


@dataclass(frozen=True)
class ProfileRecord:
    """One ncu run: a :class:`KernelProfile` per profiled launch, and notes (why no FLOP/s, whose peaks)."""

    kernels: tuple[KernelProfile, ...]
    device: str | None = None  # the device the kernel ran on, when known
    notes: tuple[str, ...] = ()

    def text(self) -> str:
        """One line per kernel: ``gemm_kernel: 22.2 µs, SM 18 %, memory 16 %, DRAM 190 GB/s (5.7 % of H100 SXM)``."""
        return "\n".join(_kernel_line(kernel) for kernel in self.kernels)

    @classmethod
    def from_dict(cls, data: dict) -> ProfileRecord:
        """The record that :func:`tilelab.records.encoding.encode` wrote as ``data``."""
        kernels = []
        for kernel in data["kernels"]:
            roofline = kernel.get("roofline")
            kernels.append(
                KernelProfile(
                    **{
                        **kernel,
                        "roofline": None if roofline is None else RooflinePosition(**decode_peaks(roofline)),
                        "advice": tuple(ProfileAdvice(**advice) for advice in kernel.get("advice", ())),
                        "samples": tuple(_instruction_samples(item) for item in kernel.get("samples", ())),
                    }
                )
            )
        return cls(tuple(kernels), data.get("device"), tuple(data.get("notes", ())))


def _instruction_samples(data: dict) -> InstructionSamples:
    return InstructionSamples(**{**data, "reasons": tuple((reason, count) for reason, count in data["reasons"])})


def _kernel_line(kernel: KernelProfile) -> str:
    parts = [f"{kernel.duration_s * 1e6:.3g} µs" if kernel.duration_s is not None else "duration unknown"]
    for label, value in (("SM", kernel.compute_throughput), ("memory", kernel.memory_throughput)):
        if value is not None:
            parts.append(f"{label} {value:.3g} %")
    roofline = kernel.roofline
    device = roofline.peaks.device if roofline is not None else ""
    if roofline is not None and roofline.flops_percent is not None:
        parts.append(f"{roofline.achieved_flops_per_s / 1e12:.3g} TFLOP/s ({roofline.flops_percent:.3g} % of {device})")
    if kernel.dram_bytes_per_s is not None:
        share = f" ({roofline.bytes_percent:.3g} % of {device})" if roofline is not None else ""
        parts.append(f"DRAM {kernel.dram_bytes_per_s / 1e9:.4g} GB/s{share}")
    return f"{kernel.kernel}: {', '.join(parts)}"
