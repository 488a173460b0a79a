"""The devices' peaks from NVIDIA's datasheets: dense tensor-core FLOP/s per operand type and memory bandwidth.

The static estimate (:mod:`tilelab.estimate`) and the profile's roofline position
(:mod:`tilelab.counters.summary`) measure against these.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

__all__ = ["ARCH_DEFAULTS", "DEVICE_PEAKS", "FP16", "DevicePeaks", "operand_class", "peaks_for"]

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
ARCH_DEFAULTS = {"sm_90": "H100 SXM", "sm_80": "A100 SXM 80GB"}  # when no device is present to name one


def peaks_for(arch: str, device_name: str | None = None) -> DevicePeaks | None:
    """The peaks of the present device (by ``device_name``, e.g. ``NVIDIA H200``), else ``arch``'s default device."""
    name = (device_name or "").upper()
    if "H200" in name:
        return DEVICE_PEAKS["H200 SXM"]
    if "H100" in name:
        return DEVICE_PEAKS["H100 PCIe" if "PCIE" in name else "H100 SXM"]
    if "A100" in name:
        return DEVICE_PEAKS["A100 SXM 80GB"]
    default = ARCH_DEFAULTS.get(arch.rstrip("a"))
    return DEVICE_PEAKS[default] if default else None
