"""The check every TileLab reproducer runs: :mod:`tilelab.repro` copies this file's text into each one.

It needs only ``tilelang`` and ``torch`` (and TileLang's bundled TVM), never
TileLab: the file is run by people who do not have it. It elaborates the
kernel as TileLab did, lowers it (when it was only lowered) or compiles it,
runs it on seeded inputs and checks the outputs against the reference, or for
NaN and Inf when there is none. Exit status: 0 when it compiled and passed its
check, 1 when the check failed or the compile failed (``REPRODUCED`` when with
the error TileLab saw).
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

import tilelang  # before tvm: tilelang bundles its own
import torch
from tvm.target import Target


class TensorArg(NamedTuple):
    """A tensor argument, made here: seeded, on the kernel's device (``meta`` when only lowering)."""

    shape: tuple
    dtype: str


def _torch_dtype(name: str) -> Any:
    return getattr(torch, name.replace("torch.", ""))


def _random(shape: list[int], dtype: Any, device: str) -> Any:
    if dtype.is_floating_point:
        return torch.empty(shape, dtype=dtype, device=device).uniform_(-1.0, 1.0)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, device=device).to(torch.bool)
    return torch.randint(-2, 3, shape, dtype=dtype, device=device)


def _materialised(value: Any, device: str) -> Any:
    if not isinstance(value, TensorArg):
        return value
    if device == "meta":
        return torch.empty(value.shape, dtype=_torch_dtype(value.dtype), device="meta")
    return _random(list(value.shape), _torch_dtype(value.dtype), device)


def elaborate(kernel: Any, args: tuple, kwargs: dict, target: Any) -> Any:
    """The PrimFunc of this call (an ``@tilelang.autotune`` kernel through the ``@tilelang.jit`` it wraps)."""
    if type(kernel).__name__ == "PrimFunc":
        return kernel
    jit = getattr(kernel, "jit_impl", kernel)
    with target:
        return jit.get_tir(*args, **kwargs) if hasattr(jit, "get_tir") else kernel(*args, **kwargs)


def build(func: Any, case: dict, target: Any) -> Any:
    """Lower ``func`` (``case["run"]`` false) or compile it with TileLab's options, as TileLang merges them."""
    attrs = func.attrs or {}
    if not case["run"]:
        # tilelang.compile merges a kernel's own T.annotate_pass_configs; tilelang.lower does not.
        own = dict(attrs["tilelang_pass_configs"]) if "tilelang_pass_configs" in attrs else {}
        with tilelang.transform.PassContext(opt_level=3, config={**own, **case["pass_configs"]}), target:
            return tilelang.lower(func, target=target, enable_device_compile=False)
    own_flags = [str(flag) for flag in attrs["tilelang_compile_flags"]] if "tilelang_compile_flags" in attrs else []
    return tilelang.compile(
        func,
        out_idx=None if "tilelang_out_idx" in attrs else case["out_idx"],
        target=target,
        execution_backend=case["execution_backend"] or None,
        pass_configs=case["pass_configs"] or None,
        compile_flags=[flag for flag in case["compile_flags"] if flag not in own_flags] or None,
    )


def _inputs(kernel: Any, args: tuple, kwargs: dict, device: str) -> list[Any]:
    """An eager kernel's own tensors, else one seeded tensor per parameter of the compiled kernel that is not an output."""
    given = [value for value in (*args, *kwargs.values()) if isinstance(value, torch.Tensor)]
    if given:
        return given
    outputs = set(kernel.out_idx or [])
    return [
        _random([int(s) for s in param.shape], param.torch_dtype(), device)
        for position, param in enumerate(kernel.params)
        if position not in outputs
    ]


def check(outputs: list[Any], expected: list[Any] | None, rtol: float, atol: float) -> str | None:
    """What is wrong with ``outputs``: a difference from ``expected``, or NaN/Inf without a reference; None when fine."""
    if expected is None:
        for position, tensor in enumerate(outputs):
            if isinstance(tensor, torch.Tensor) and tensor.is_floating_point() and not torch.isfinite(tensor).all():
                return f"output {position} holds NaN or Inf"
        return None
    if len(outputs) != len(expected):
        return f"the kernel returned {len(outputs)} outputs, the reference {len(expected)}"
    for position, (got, want) in enumerate(zip(outputs, expected, strict=True)):
        got, want = got.float().cpu(), torch.as_tensor(want).float().cpu()
        if got.shape != want.shape or not torch.allclose(got, want, rtol=rtol, atol=atol):
            worst = (got - want).abs().max().item() if got.shape == want.shape else "shape"
            return f"output {position} differs from the reference (max abs diff {worst})"
    return None


def _listed(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _failed(exc: BaseException, expected_errors: list[str]) -> int:
    text = f"{type(exc).__name__}: {exc}"
    print(f"compile failed: {text[:4000]}")
    if expected_errors:
        same = any(signature in text for signature in expected_errors)
        print("REPRODUCED: the error TileLab observed" if same else "a different error from the one TileLab observed")
    return 1


def main(kernel: Any, args: tuple, kwargs: dict, case: dict, reference: Any = None) -> int:
    """Elaborate, lower or compile, run and check; the exit status (0: passed)."""
    torch.manual_seed(case["seed"])
    target = Target(case["target"])
    device = ("cuda" if target.kind.name == "cuda" else "cpu") if case["run"] else "meta"
    args = tuple(_materialised(value, device) for value in args)
    kwargs = {name: _materialised(value, device) for name, value in kwargs.items()}
    try:
        built = build(elaborate(kernel, args, kwargs, target), case, target)
    except Exception as exc:  # whatever the compiler raises is what this file reproduces
        return _failed(exc, case["expected_errors"])
    if case["expected_errors"]:
        print("compiled: the error TileLab observed did not reproduce")
    if not case["run"]:
        print(f"lowered for {case['target']}: {len(str(built.kernel_source).splitlines())} lines of device source")
        return 0
    inputs = _inputs(built, args, kwargs, device)
    outputs = _listed(built(*inputs)) or inputs  # a kernel without outputs writes into its inputs
    expected = _listed(reference(*inputs)) if reference is not None else None
    problem = check(outputs, expected, case["rtol"], case["atol"])
    if problem is not None:
        print(f"FAILED: {problem}")
        return 1
    print("passed: " + ("matches the reference" if expected is not None else "no NaN or Inf in the outputs"))
    return 0


if __name__ == "__main__":  # the reproducer calls main() itself; this file alone has no kernel
    sys.exit("this is the check TileLab copies into each reproducer; run a reproducer instead")
