"""A CPU-target kernel for ``bench_cluster.py --smoke``: the cluster path end to end on a machine without a GPU."""

import tilelang
import tilelang.cpu.language as C

__all__ = ["scale_add"]


@tilelang.jit(target="c", out_idx=[-1])
def scale_add(N=4096, block=64, chunk=1):
    """``Out = 2 * A + B`` in tiles of ``block``."""

    @C.prim_func
    def main(A: C.Tensor((N,), "float32"), B: C.Tensor((N,), "float32"), Out: C.Tensor((N,), "float32")):
        with C.Kernel(C.ceildiv(N, block)) as bx:
            acc = C.alloc_local((block,), "float32")
            for i in C.serial(block // chunk):
                for j in C.vectorized(chunk):
                    acc[i * chunk + j] = A[bx * block + i * chunk + j] * 2.0
            for i in C.serial(block):
                Out[bx * block + i] = acc[i] + B[bx * block + i]

    return main
