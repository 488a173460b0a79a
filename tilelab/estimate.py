"""A kernel's static roofline estimate: tilelang's Analyzer counts, against one device's peaks.

``tilelang.tools.Analyzer`` walks an *elaborated* PrimFunc (before lowering:
it reads the ``T.copy`` and ``T.gemm`` tile operators) and counts 2·M·N·K
FLOPs per ``T.gemm`` and the global side of every ``T.copy``, multiplied by
the enclosing loops' trip counts and by blockIdx.x · blockIdx.y. Its own
``calculate()`` knows only sm_80/86/89 CUDA-core FP32 peaks, so TileLab keeps
its counts and uses the tensor-core peaks of :data:`DEVICE_PEAKS` instead.
Its bytes are what the blocks issue (a tiled GEMM re-reads each tile from L2
many times), so the roofline's memory side uses the bytes that must move at
least once: the copied global buffers' sizes (see :class:`StaticEstimate`).

Where the counts would be wrong the estimate is refused, with the reason: a
loop or grid extent that is not a constant (a causal mask's loop, a dynamic
shape), a grid with a z extent (the Analyzer ignores blockIdx.z), more than
one launch in the function, a GEMM other than ``T.gemm``, sub-byte global
data, global memory touched outside ``T.copy``, nothing counted. A vector
dtype (``float16x2``) makes the Analyzer itself raise: that is a reason too.

The FLOP peak is the dense tensor-core figure for the GEMMs' operand dtype
(FP16/BF16, TF32 for float32, FP8, INT8, FP64); a kernel whose GEMMs mix
dtypes is measured against the slowest of them, and one without a figure
(an A100 has no FP8 tensor cores) against FP16/BF16's, which its source says.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from tilelab.records import StaticEstimate

__all__ = ["DEVICE_PEAKS", "DevicePeaks", "StaticEstimate", "estimate_of_built", "operand_class", "peaks_for", "static_estimate"]

FP16 = "FP16/BF16"


@dataclass(frozen=True)
class DevicePeaks:
    """One device's dense tensor-core throughput (``flops_per_s``: FP16/BF16's) and memory bandwidth."""

    device: str
    flops_per_s: float
    bytes_per_s: float
    source: str
    tensor_flops: dict[str, float] = field(default_factory=dict, compare=False)  # operand class -> dense FLOP/s

    def for_operands(self, dtypes: Iterable[str]) -> DevicePeaks:
        """These peaks with the FLOP peak of the tensor cores that multiply ``dtypes`` (the slowest when several)."""
        classes = {operand_class(dtype) for dtype in dtypes}
        missing = sorted(classes - set(self.tensor_flops))
        if missing:
            return replace(self, source=f"{self.source}; no {', '.join(missing)} tensor-core figure, so FP16's")
        peak, name = min(((self.tensor_flops[name], name) for name in classes), default=(self.flops_per_s, FP16))
        if name == FP16:
            return self
        return replace(self, flops_per_s=peak, source=self.source.replace(f"{FP16} tensor core", f"{name} tensor core"))


def operand_class(dtype: str) -> str:
    """Which tensor-core peak a GEMM operand of ``dtype`` runs at (``float32`` runs as TF32)."""
    if dtype.startswith("float8"):
        return "FP8"
    return {"float16": FP16, "bfloat16": FP16, "float32": "TF32", "float64": "FP64", "int8": "INT8", "uint8": "INT8"}.get(dtype, dtype)


def _datasheet(device: str, sheet: str, memory: str, bytes_per_s: float, **tera: float) -> DevicePeaks:
    flops = {name.replace("FP16", FP16): value * 1e12 for name, value in tera.items()}
    return DevicePeaks(device, flops[FP16], bytes_per_s, f"NVIDIA {sheet} datasheet: {FP16} tensor core dense, {memory}", flops)


# Dense figures: NVIDIA's datasheets list tensor-core TFLOPS "with sparsity"; the dense peak is half of it.
# H100: "NVIDIA H100 Tensor Core GPU" datasheet (SXM: FP16 1,979 / TF32 989 / FP8 3,958 / INT8 3,958 sparse,
#   FP64 67; PCIe: 1,513 / 756 / 3,026 / 3,026, FP64 51; 3.35 / 2 TB/s).
# H200: "NVIDIA H200 Tensor Core GPU" datasheet (SXM: as H100 SXM; 4.8 TB/s HBM3e).
# A100: "NVIDIA A100 Tensor Core GPU" datasheet (SXM 80GB: FP16 312 / TF32 156 / INT8 624 dense, FP64 19.5;
#   2,039 GB/s HBM2e; no FP8).
DEVICE_PEAKS: dict[str, DevicePeaks] = {
    "H200 SXM": _datasheet("H200 SXM", "H200", "HBM3e", 4.8e12, FP16=989.5, TF32=494.5, FP8=1979, INT8=1979, FP64=67),
    "H100 SXM": _datasheet("H100 SXM", "H100", "HBM3", 3.35e12, FP16=989.5, TF32=494.5, FP8=1979, INT8=1979, FP64=67),
    "H100 PCIe": _datasheet("H100 PCIe", "H100", "HBM2e", 2.0e12, FP16=756.5, TF32=378, FP8=1513, INT8=1513, FP64=51),
    "A100 SXM 80GB": _datasheet("A100 SXM 80GB", "A100", "HBM2e", 2.039e12, FP16=312, TF32=156, INT8=624, FP64=19.5),
}
_ARCH_DEFAULTS = {"sm_90": "H100 SXM", "sm_80": "A100 SXM 80GB"}  # when no device is present to name one


def peaks_for(arch: str, device_name: str | None = None) -> DevicePeaks | None:
    """The peaks of the present device (by ``device_name``, e.g. ``NVIDIA H200``), else ``arch``'s default device."""
    name = (device_name or "").upper()
    if "H200" in name:
        return DEVICE_PEAKS["H200 SXM"]
    if "H100" in name:
        return DEVICE_PEAKS["H100 PCIe" if "PCIE" in name else "H100 SXM"]
    if "A100" in name:
        return DEVICE_PEAKS["A100 SXM 80GB"]
    default = _ARCH_DEFAULTS.get(arch.rstrip("a"))
    return DEVICE_PEAKS[default] if default else None


def static_estimate(func: Any, arch: str, device_name: str | None = None) -> tuple[StaticEstimate | None, str | None]:
    """The static estimate of ``func`` (an elaborated PrimFunc) on ``arch``; or None and why, in one line.

    Never raises: whatever the Analyzer cannot read becomes the reason.
    """
    peaks = peaks_for(arch, device_name)
    if peaks is None:
        known = ", ".join(sorted(_ARCH_DEFAULTS))
        return None, f"no peak figures for {arch} (TileLab has them for {known})"
    from tilelab import _tilelang as tl

    try:
        counts = tl.tile_op_counts(func)
    except Exception as exc:  # the Analyzer fails in many ways on kernels it does not expect; each is a reason
        return None, f"tilelang's Analyzer cannot read this kernel ({type(exc).__name__}: {_first_line(exc)})"
    reason = _refusal(counts)
    if reason:
        return None, reason
    min_bytes = min(counts.global_bytes, counts.footprint_bytes)
    peaks = peaks.for_operands(counts.gemm_dtypes)
    estimate = StaticEstimate(
        counts.flops, counts.global_bytes, min_bytes, peaks.device, peaks.flops_per_s, peaks.bytes_per_s, peaks.source,
        counts.gemm_dtypes,
    )  # fmt: skip
    return estimate, None


def estimate_of_built(built: Any, arch: str, device_name: str | None = None) -> tuple[StaticEstimate | None, str | None]:
    """:func:`static_estimate` of a built config (a ``Lowered`` or a ``JITKernel``)."""
    from tilelab import _tilelang as tl

    func = tl.elaborated_func(built)
    if func is None:
        return None, "the built kernel keeps no elaborated PrimFunc to analyse"
    return static_estimate(func, arch, device_name)


def _refusal(counts: Any) -> str | None:
    """Why the Analyzer's counts would be wrong for this kernel, or None when they stand."""
    if any(isinstance(count, str) for count in (counts.flops, counts.global_bytes, counts.footprint_bytes)):
        return "a loop or grid extent is not a constant (e.g. a causal mask or a dynamic shape): the counts are symbolic"
    if counts.launches > 1:
        return f"the function launches {counts.launches} kernels; tilelang's Analyzer follows one grid"
    z = next((extent for extent in counts.grid_z if extent != 1), None)
    if z is not None:
        return f"the grid has blockIdx.z = {z}, which tilelang's Analyzer does not count"
    if counts.uncounted_ops:
        return f"uses {', '.join(counts.uncounted_ops)}, whose FLOPs tilelang's Analyzer does not count"
    if counts.sub_byte_dtypes:
        return f"global {', '.join(counts.sub_byte_dtypes)} data: tilelang's Analyzer counts a whole byte per element"
    if counts.untracked_global_accesses:
        return f"{counts.untracked_global_accesses} global memory accesses outside T.copy, which the Analyzer does not count"
    if not counts.flops and not counts.global_bytes:
        return "no T.gemm or global T.copy to count"
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else "no message"
