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

from typing import Any

from tilelab import _tilelang as tl
from tilelab.peaks import ARCH_DEFAULTS, peaks_for
from tilelab.records import StaticEstimate

__all__ = ["StaticEstimate", "estimate_of_built", "static_estimate"]

def static_estimate(func: Any, arch: str, device_name: str | None = None) -> tuple[StaticEstimate | None, str | None]:
    """The static estimate of ``func`` (an elaborated PrimFunc) on ``arch``; or None and why, in one line.

    Never raises: whatever the Analyzer cannot read becomes the reason.
    """
    peaks = peaks_for(arch, device_name)
    if peaks is None:
        known = ", ".join(sorted(ARCH_DEFAULTS))
        return None, f"no peak figures for {arch} (TileLab has them for {known})"

    try:
        counts = tl.tile_op_counts(func)
    except Exception as exc:  # the Analyzer fails in many ways on kernels it does not expect; each is a reason
        return None, f"tilelang's Analyzer cannot read this kernel ({type(exc).__name__}: {_first_line(exc)})"
    reason = _refusal(counts)
    if reason:
        return None, reason
    min_bytes = min(counts.global_bytes, counts.footprint_bytes)
    operands = counts.gemm_dtypes
    return StaticEstimate(counts.flops, counts.global_bytes, min_bytes, peaks.for_operands(operands), operands), None


def estimate_of_built(built: Any, arch: str, device_name: str | None = None) -> tuple[StaticEstimate | None, str | None]:
    """:func:`static_estimate` of a built config (a ``Lowered`` or a ``JITKernel``)."""

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
