"""What a benchmark needs besides timing: the device, the kernel's inputs, and the check of its outputs.

Inputs are made once per config from the kernel's parameters (uniform in
[-1, 1] for floats, 0 or 1 for booleans, small integers otherwise), or are the
caller's tensors for eager kernels. Outputs are compared with the reference's
with ``torch.allclose``; a difference is one line naming the output and the
largest absolute difference.
"""

from __future__ import annotations

from typing import Any

__all__ = ["call_args", "device_of", "mismatch", "outputs_of", "short_error"]


def device_of(choice: Any) -> Any:
    """The torch device a config of ``choice`` runs on."""
    import torch

    return torch.device("cuda", torch.cuda.current_device()) if choice.is_cuda else torch.device("cpu")


def _inputs(jit_kernel: Any, device: Any) -> list[Any]:
    import torch

    out_idx = set(jit_kernel.out_idx or [])
    tensors = []
    for position, param in enumerate(jit_kernel.params):
        if position in out_idx:
            continue
        dtype = param.torch_dtype()
        shape = [int(s) for s in param.shape]
        if dtype.is_floating_point:
            tensors.append(torch.empty(shape, dtype=dtype, device=device).uniform_(-1.0, 1.0))
        elif dtype == torch.bool:
            tensors.append(torch.randint(0, 2, shape, device=device).to(torch.bool))
        else:
            tensors.append(torch.randint(-2, 3, shape, dtype=dtype, device=device))
    return tensors


def call_args(kernel: Any, args: tuple, kwargs: dict, jit_kernel: Any, device: Any) -> list[Any]:
    """The tensors one call of ``jit_kernel`` takes: made from its parameters, or an eager kernel's own."""
    if getattr(kernel, "mode", None) == "eager":
        _, tensor_args = kernel.func.parse_args(*args, **kwargs)
        return list(tensor_args.values())
    return _inputs(jit_kernel, device)


def outputs_of(value: Any) -> list[Any]:
    """A call's return value as a list of outputs."""
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def mismatch(outputs: list[Any], expected: list[Any], rtol: float, atol: float) -> str | None:
    """Why ``outputs`` differ from the reference's ``expected`` (None when they match)."""
    import torch

    if len(outputs) != len(expected):
        return f"kernel returned {len(outputs)} outputs, reference {len(expected)}"
    for position, (got, want) in enumerate(zip(outputs, expected, strict=True)):
        got, want = got.float().cpu(), torch.as_tensor(want).float().cpu()
        if got.shape != want.shape:
            return f"output {position}: shape {tuple(got.shape)} != reference {tuple(want.shape)}"
        if not torch.allclose(got, want, rtol=rtol, atol=atol):
            worst = (got - want).abs().max().item()
            return f"output {position} differs from the reference (max abs diff {worst:.3g})"
    return None


def short_error(exc: BaseException) -> str:
    """An exception as one short line: its type and the first line of its message."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:300]
