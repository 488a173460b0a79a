"""Where a kernel is compiled for: the present GPU, a chosen arch (lowering only), or the CPU."""

from __future__ import annotations

import functools
import json
import platform
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tilelab._tilelang import HOST_TARGETS
from tilelab.records import NO_GPU

__all__ = ["ARCHES", "DEFAULT_ARCH", "TargetChoice", "TargetError", "gpu_name", "has_gpu", "resolve_target"]

DEFAULT_ARCH = "sm_90"
ARCHES = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100")


class TargetError(ValueError):
    """A target or arch the user asked for that TileLab cannot use."""


@dataclass(frozen=True)
class TargetChoice:
    """A resolved target: ``spec`` is what ``tvm.target.Target`` takes."""

    spec: dict[str, Any] | str
    arch: str
    runnable: bool  # True: compile for a present device; False: lower only
    device_name: str | None = None
    lowered_because: str = ""  # why it is lowered only: NO_GPU, or the present GPU is of another arch

    def lowered(self, because: str) -> TargetChoice:
        """This target, lowered only (no device code compiled, nothing run), ``because``."""
        return replace(self, runnable=False, device_name=None, lowered_because=because)

    @property
    def is_cuda(self) -> bool:
        return isinstance(self.spec, dict) and self.spec.get("kind") == "cuda"

    def as_json(self) -> str:
        return json.dumps(self.spec, sort_keys=True) if isinstance(self.spec, dict) else json.dumps({"kind": self.spec})

    def tvm_target(self):
        import tilelang  # noqa: F401  (tilelang before tvm: it bundles its own)
        from tvm.target import Target

        return Target(self.spec)


@functools.cache
def has_gpu() -> bool:
    import torch

    return bool(torch.cuda.is_available())


@functools.cache
def gpu_name() -> str | None:
    if not has_gpu():
        return None
    import torch

    return torch.cuda.get_device_name()


@functools.cache
def _gpu_arch() -> str:
    import torch

    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}"
    # Hopper's wgmma and warp specialisation need the arch-specific variant.
    return "sm_90a" if arch == "sm_90" else arch


def _check_arch(arch: str) -> str:
    arch = arch.strip().lower()
    if not arch.startswith("sm_"):
        arch = f"sm_{arch}"
    if arch not in ARCHES:
        raise TargetError(f"unknown arch {arch!r}; use one of {', '.join(ARCHES)}")
    return arch


def resolve_target(arch: str | None = None, target: Any = None) -> TargetChoice:
    """Pick the target for one compile.

    With ``target="c"`` (or ``"llvm"``) the kernel is compiled for the CPU and
    can run. Otherwise a present GPU is used as is, unless ``arch`` names a
    different architecture; without a GPU the kernel is lowered for ``arch``
    (default ``sm_90``) and cannot run.
    """
    if target is not None and arch is not None:
        raise TargetError("give either arch or target, not both")
    if target is not None:
        return _explicit_target(target)
    if has_gpu():
        present = _gpu_arch()
        wanted = present if arch is None else _check_arch(arch)
        if wanted.rstrip("a") == present.rstrip("a"):
            return TargetChoice({"kind": "cuda", "arch": present}, present, True, gpu_name())
        return TargetChoice({"kind": "cuda", "arch": wanted}, wanted, False, lowered_because=f"the GPU, {gpu_name()}, is {present}")
    wanted = _check_arch(arch or DEFAULT_ARCH)
    return TargetChoice({"kind": "cuda", "arch": wanted}, wanted, False, lowered_because=NO_GPU)


def _explicit_target(target: Any) -> TargetChoice:
    if isinstance(target, str) and target.strip().lower() in HOST_TARGETS:
        kind = target.strip().lower()
        return TargetChoice(kind, "cpu", True, "cpu")
    if isinstance(target, str) and target.strip().lower() in ("cuda", "auto"):
        return resolve_target()
    if isinstance(target, str):
        try:
            target = json.loads(target)
        except json.JSONDecodeError:
            raise TargetError(
                f"target {target!r} is not understood; use 'c', 'cuda', or a dict like {{'kind': 'cuda', 'arch': 'sm_90'}}"
            ) from None
    if not isinstance(target, dict):
        target = _target_to_dict(target)
    if target.get("kind") != "cuda":
        return TargetChoice(dict(target), str(target.get("kind")), True, str(target.get("kind")))
    arch = _check_arch(str(target.get("arch", DEFAULT_ARCH)))
    choice = resolve_target(arch=arch)
    return replace(choice, spec={**target, "arch": choice.arch})


def _target_to_dict(target: Any) -> dict[str, Any]:
    export = getattr(target, "export", None)
    if export is None:
        raise TargetError(f"target {target!r} is not a tvm Target, a dict or a string")
    return {k: v for k, v in dict(export()).items() if k in ("kind", "arch")}


def why_lowered(choice: TargetChoice | None) -> str:
    """Why work under ``choice`` was lowered only, where it was kept (``no device`` where it was not)."""
    return (choice.lowered_because if choice is not None else "") or "no device"


def device_label(choice: TargetChoice) -> str:
    """What rows measured under ``choice`` are labelled with: the GPU's name, the CPU's model, or that nothing ran."""
    if not choice.runnable:
        return f"none (lowered for {choice.arch})"
    if choice.is_cuda:
        return gpu_name() or "cuda"
    return f"cpu: {_cpu_model()}"


@functools.cache
def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()
