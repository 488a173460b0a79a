"""A CPU-dialect kernel for the search tests: ``repeat`` multiplies its work, so some configs are many times slower."""

import tilelang
import tilelang.cpu.language as C

__all__ = ["axpy_repeat"]


@tilelang.jit(target="c", out_idx=[-1])
def axpy_repeat(N=4096, block=64, chunk=1, repeat=1):
    """``Out = B + repeat * 2 * A``, adding ``2 * A`` ``repeat`` times, in tiles of ``block``."""

    @C.prim_func
    def main(A: C.Tensor((N,), "float32"), B: C.Tensor((N,), "float32"), Out: C.Tensor((N,), "float32")):
        with C.Kernel(C.ceildiv(N, block)) as bx:
            for i in C.serial(block):
                Out[bx * block + i] = B[bx * block + i]
            for _ in C.serial(repeat):
                for i in C.serial(block // chunk):
                    for j in C.vectorized(chunk):
                        Out[bx * block + i * chunk + j] = Out[bx * block + i * chunk + j] + A[bx * block + i * chunk + j] * 2.0

    return main
