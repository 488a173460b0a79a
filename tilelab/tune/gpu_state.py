"""The GPU's clocks, temperature and power when a sweep starts and ends: was it the same GPU throughout?

A GPU that heats up lowers its clocks, and a sweep's late configs then run
slower than its early ones. The sweep records what NVML says at its start and
end (through ``torch.cuda``, which needs ``pynvml``; else ``nvidia-smi``) so a
drift shows next to the timings. On the CPU, or where neither answers, there is
nothing to record (None).
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

__all__ = ["gpu_state"]

_FIELDS = ("sm_clock_mhz", "memory_clock_mhz", "temperature_c", "power_w")
_QUERY = "clocks.sm,clocks.mem,temperature.gpu,power.draw"


def gpu_state(choice: Any) -> dict[str, float | None] | None:
    """``sm_clock_mhz``, ``memory_clock_mhz``, ``temperature_c`` and ``power_w`` of the sweep's GPU now (None off a GPU)."""
    if choice is None or not (choice.is_cuda and choice.runnable):
        return None
    import torch

    if not torch.cuda.is_available():
        return None
    device = torch.cuda.current_device()
    return _from_torch(torch, device) or _from_nvidia_smi(torch, device)


def _from_torch(torch: Any, device: int) -> dict[str, float | None] | None:
    try:
        return {
            "sm_clock_mhz": float(torch.cuda.clock_rate(device)),
            "memory_clock_mhz": None,
            "temperature_c": float(torch.cuda.temperature(device)),
            "power_w": float(torch.cuda.power_draw(device)) / 1000.0,  # NVML answers in milliwatts
        }
    except Exception:  # pynvml missing or NVML refusing: the nvidia-smi fallback answers instead
        return None


def _from_nvidia_smi(torch: Any, device: int) -> dict[str, float | None] | None:
    tool = shutil.which("nvidia-smi")
    if tool is None:
        return None
    uuid = getattr(torch.cuda.get_device_properties(device), "uuid", None)
    # By UUID: CUDA_VISIBLE_DEVICES renumbers devices, nvidia-smi does not; the index is the fallback.
    for which in ([f"GPU-{uuid}"] if uuid is not None else []) + [str(device)]:
        try:
            done = subprocess.run(
                [tool, f"--query-gpu={_QUERY}", "--format=csv,noheader,nounits", "-i", which],
                capture_output=True, text=True, timeout=10, check=True,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            continue
        values = [part.strip() for part in done.stdout.strip().splitlines()[0].split(",")] if done.stdout.strip() else []
        if len(values) == len(_FIELDS):
            return {name: _number(value) for name, value in zip(_FIELDS, values, strict=True)}
    return None


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:  # "[N/A]", "[Not Supported]"
        return None
