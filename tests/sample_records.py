"""Hand-built records for view tests: small, exact, no tilelang needed."""

from __future__ import annotations

import functools

import numpy as np

from tilelab.records import (
    CompileMode,
    ErrorRecord,
    KernelRecord,
    LaunchRecord,
    LayoutKind,
    LayoutRecord,
    LineLink,
    PassRecord,
    SourceRecord,
    Status,
    TimingRecord,
)

EVIL = "</script><img src=x onerror=alert(1)>"

IR_START = "def main(A, B):\n    A_shared = alloc(128)\n    for k in range(4):\n        copy(A, A_shared)\n    gemm(A_shared, B)\n"
IR_LAYOUT = "def main(A, B):\n    A_shared = alloc(128)  # swizzled\n    for k in range(4):\n        copy(A, A_shared)\n    gemm(A_shared, B)\n"
IR_LOWERED = f"def main(A, B):\n    A_shared = alloc(128)  # swizzled\n    for k in range(4):\n        tma_load(A, A_shared)\n        fence()\n    mma(A_shared, B)  # {EVIL}\n"

KERNEL_SOURCE = f"""import tilelang.language as T
# {EVIL}
def kernel(A, B):
    A_shared = T.alloc_shared((8, 64), "float16")
    T.copy(A, A_shared)
    T.gemm(A_shared, B, C)
"""

DEVICE = """extern "C" __global__ void kernel(half* A, half* B) {
  __shared__ half A_shared[512];
  // copy
  A_shared[threadIdx.x] = A[threadIdx.x];
  __syncthreads();
  mma(A_shared, B);
}
"""


def _passes(evil: bool) -> tuple[PassRecord, ...]:
    lowered = IR_LOWERED if evil else IR_LOWERED.replace(EVIL, "done")
    spec = [
        ("tirx.BindTarget", IR_START, True, 0.002),
        ("tl.Simplify", IR_START, False, 0.001),
        ("tl.LayoutInference", IR_LAYOUT, True, 0.004),
        ("tl.VerifyMemory", IR_LAYOUT, False, 0.0005),
        ("tl.LowerTileOp", lowered, True, 0.003),
    ]
    records, previous = [], ""
    for index, (name, ir, changed, seconds) in enumerate(spec):
        before, after = previous.splitlines(), ir.splitlines()
        added = len([line for line in after if line not in before]) if changed else 0
        removed = len([line for line in before if line not in after]) if changed else 0
        records.append(PassRecord(index, name, ir, changed, added, removed, seconds))
        previous = ir
    return tuple(records)


def fragment_layout(replicas: int = 1) -> LayoutRecord:
    """An 8 x 16 float32 fragment over 64 threads (2 warps), two registers per thread; replica r adds 64 r to the thread."""
    flat = np.arange(8 * 16).reshape(8, 16)
    thread = np.stack([(flat // 2) % 64 + 64 * r for r in range(replicas)])
    local = np.stack([flat % 2] * replicas)
    return LayoutRecord(
        "C_local",
        "local.fragment",
        (8, 16),
        "float32",
        LayoutKind.FRAGMENT,
        "Fragment(8x16)",
        64 * replicas,
        replicas,
        thread,
        local,
    )


def shared_layout(swizzled: bool) -> LayoutRecord:
    """An 8 x 64 float16 shared tile; swizzled: 16-byte chunk ``c // 8`` is XORed with ``row % 8``."""
    rows, cols = np.meshgrid(np.arange(8), np.arange(64), indexing="ij")
    chunk = (cols // 8) ^ (rows % 8) if swizzled else cols // 8
    offset = rows * 64 + chunk * 8 + cols % 8
    name = "A_shared" if swizzled else "A_plain"
    return LayoutRecord(
        name,
        "shared.dyn",
        (8, 64),
        "float16",
        LayoutKind.SHARED,
        "swizzled" if swizzled else "row-major",
        offset=offset,
    )


def sample_record(name: str = "gemm", evil: bool = False, arch: str = "sm_90") -> KernelRecord:
    """A lowered record with 5 passes (3 changed), linked sources and three layouts."""
    links = (
        LineLink(4, "cell.py", 5),
        LineLink(5, "cell.py", 5),
        LineLink(6, "cell.py", 6),
        LineLink(2, "other.py", 5),
    )
    source = SourceRecord(DEVICE, "// host\nint main() { return 0; }\n", "cuda", links, "cell.py", KERNEL_SOURCE)
    layouts = {layout.buffer: layout for layout in (fragment_layout(), shared_layout(True), shared_layout(False))}
    return KernelRecord(
        name=f"{name}{EVIL}" if evil else name,
        status=Status.OK,
        mode=CompileMode.LOWERED,
        target=f'{{"kind": "cuda", "arch": "{arch}"}}',
        arch=arch,
        tilelang_version="0.1.15",
        cache_key="abc",
        arguments={"block_M": "128"},
        passes=_passes(evil),
        source=source,
        layouts=layouts,
        launches=(LaunchRecord((8, 8, 1), (128, 1, 1), 49152, kernel="gemm_kernel"),),
        timings=TimingRecord(0.01, 0.2, 0.0),
        warnings=(f"careful {EVIL}",) if evil else (),
    )


def failed_record() -> KernelRecord:
    """A compile that failed in lowering at cell line 7 after two passes, with no source or layouts."""
    return KernelRecord(
        name="broken",
        status=Status.FAILED,
        mode=CompileMode.LOWERED,
        target='{"kind": "cuda", "arch": "sm_90"}',
        arch="sm_90",
        tilelang_version="0.1.15",
        cache_key="def",
        passes=_passes(False)[:2],
        error=ErrorRecord("lower", "buffer A_shared is too small for the copy", "<cell>", 7, "Fatal: long log"),
    )


@functools.cache
def gemm_record(arch: str = "sm_90") -> KernelRecord:
    """The real 1024^3 fp16 GEMM (128x128x32, 3 stages) lowered for ``arch``."""
    from kernels import matmul

    import tilelab

    return tilelab.explore(matmul, arch=arch)


def with_flat_peaks(encoded: dict) -> dict:
    """An encoded estimate or roofline position as formats 3 to 6 wrote it: its peaks as four fields of its own."""
    encoded = dict(encoded)
    peaks = encoded.pop("peaks")
    flat = {"device": peaks["device"], "peak_flops": peaks["flops_per_s"], "peak_bytes": peaks["bytes_per_s"]}
    return {**encoded, **flat, "peaks_source": peaks["source"]}
