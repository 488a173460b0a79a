"""A kernel travels to a compile worker as a KernelSpec and is rebuilt there, whatever the serializer
does with file names (cloudpickle 3.1.3 writes ``<dynamic-code>`` into every code object it sends by value).

Each test sends a spec to a fresh interpreter, which rebuilds the kernel exactly as a compile worker does
(``spec.load()``, then ``build``) and compiles it: the CPU kernel is run there and checked.
"""

from __future__ import annotations

import linecache
import pickle
import subprocess
import sys
import types
from dataclasses import replace
from pathlib import Path

import cloudpickle
import pytest

from tilelab.tune.build import KernelSpec, TensorShape, spec_of, with_filename

KERNELS = Path(__file__).with_name("kernels.py")
CPU_CELL = '''
import tilelang
import tilelang.cpu.language as C

def helper(n):
    return [x * 2 for x in range(n)][-1] // 2  # a global the kernel calls, sent along by value

@tilelang.jit(target="c", out_idx=[-1])
def doubled(N=256, block=helper(33)):
    @C.prim_func
    def main(A: C.Tensor((N,), "float32"), Out: C.Tensor((N,), "float32")):
        with C.Kernel(C.ceildiv(N, block)) as bx:
            for i in C.serial(block):
                Out[bx * block + i] = A[bx * block + i] * 2.0

    return main
'''

WORKER = """
import pickle, sys
import torch
from tilelab.targets import resolve_target
from tilelab.tune.build import build

spec, args, target = pickle.load(sys.stdin.buffer)
kernel = spec.load()
choice = resolve_target(arch="sm_90") if target == "cuda" else resolve_target(target=target)
built = build(kernel, args, {}, choice)
if target == "c":
    a = torch.arange(256, dtype=torch.float32)
    assert torch.equal(built(a), 2 * a), "wrong result"
print("compiled", type(built).__name__)
"""


def _cell(source: str, filename: str) -> dict:
    """Run ``source`` as IPython runs a cell: in ``__main__``'s name, its text only in ``linecache``."""
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    namespace = {"__name__": "__main__"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def _as_dynamic_code(spec: KernelSpec) -> KernelSpec:
    """The spec as a serializer that renames every code object's file would send it."""
    function = cloudpickle.loads(spec.function)
    function.__code__ = with_filename(function.__code__, "<dynamic-code>")
    return replace(spec, function=cloudpickle.dumps(function))


def _compile_in_fresh_process(spec: KernelSpec, args: tuple = (), target: str = "c") -> str:
    done = subprocess.run(
        [sys.executable, "-c", WORKER], input=pickle.dumps((spec, args, target)), capture_output=True, timeout=300,
        cwd=Path(__file__).parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return done.stdout.decode()


@pytest.mark.parametrize("renamed", [False, True], ids=["as-pickled", "dynamic-code"])
def test_a_notebook_cell_kernel_compiles_and_runs_in_a_fresh_worker(renamed):
    doubled = _cell(CPU_CELL, "<ipython-input-3-5f1c0a>")["doubled"]
    spec = spec_of(doubled)
    spec = _as_dynamic_code(spec) if renamed else spec

    out = _compile_in_fresh_process(spec)

    assert spec.filename == "<ipython-input-3-5f1c0a>" and "compiled JITKernel" in out


def test_the_worker_gives_the_kernel_and_every_code_object_nested_in_it_its_file_name_back():
    doubled = _cell(CPU_CELL, "<ipython-input-4-77aa01>")["doubled"]
    spec = _as_dynamic_code(spec_of(doubled))

    rebuilt = replace(spec, jit_options=None).load()  # the plain function, without the @tilelang.jit wrapper

    nested = [c for c in rebuilt.__code__.co_consts if isinstance(c, types.CodeType)]
    assert cloudpickle.loads(spec.function).__code__.co_filename == "<dynamic-code>"  # what arrived
    assert rebuilt.__code__.co_filename == "<ipython-input-4-77aa01>" and nested
    assert {code.co_filename for code in nested} == {"<ipython-input-4-77aa01>"}


@pytest.mark.parametrize(
    ("name", "args"),
    [("matmul", ()), ("eager_gemm", (TensorShape((256, 128), "float16"), TensorShape((128, 256), "float16"))),
     ("autotuned_matmul", ())],
    ids=["classic", "eager", "autotune"],
)  # fmt: skip
def test_cuda_kernels_of_a_script_run_as_main_lower_in_a_fresh_worker_with_dynamic_code_names(name, args):
    namespace = _cell(KERNELS.read_text(), str(KERNELS))  # a script run as __main__: its file is on disk
    spec = _as_dynamic_code(spec_of(namespace[name]))

    out = _compile_in_fresh_process(spec, args, target="cuda")

    assert "compiled Lowered" in out and spec.files[str(KERNELS)]


def test_a_kernel_of_an_importable_module_compiles_in_a_fresh_worker():
    from kernels import matmul  # sent by value too: the module's name ``matmul`` is the @jit wrapper, not the function

    spec = spec_of(matmul)

    assert spec.filename == str(KERNELS)
    assert "compiled Lowered" in _compile_in_fresh_process(spec, target="cuda")
