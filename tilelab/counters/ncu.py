"""Nsight Compute counters for one compiled kernel: run it once under ``ncu`` and read the report as a DataFrame.

ncu must start the process it profiles, so the kernel runs in a child Python
(:mod:`tilelab.counters.run`): the JITKernel's ``PrimFunc`` (TVM JSON), its
compile options and the inputs go to a temporary folder; the child compiles
the same function (TileLang's kernel cache usually has it), runs it once and
exits. Only the kernel's own launches are profiled (``--kernel-name``), the
report is exported and read back with ``ncu --import --csv --page details``,
so the child's output never mixes with the CSV, and its source page (the warp-state
samples at each SASS instruction, :mod:`tilelab.counters.source_page`) the same way.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tilelab.counters.source_page import parse_ncu_source_csv
from tilelab.counters.summary import summarize
from tilelab.errors import TileLabError
from tilelab.estimate import estimate_of_built
from tilelab.machine.cuda_tools import find_tool, run_tool
from tilelab.scratch import scratch
from tilelab.targets import gpu_name

__all__ = ["DEFAULT_SECTIONS", "ProfilerUnavailableError", "ncu_command", "ncu_refusal", "parse_ncu_csv", "profile"]

# SourceCounters samples the warps' state at each instruction; WarpStateStats sums the stalls up (and its rule
# names the biggest). Together they cost no measurable time on a 1024³ GEMM or a flash attention (H200).
DEFAULT_SECTIONS = ("SpeedOfLight", "MemoryWorkloadAnalysis", "Occupancy", "LaunchStats", "SourceCounters", "WarpStateStats")
COLUMNS = ["id", "kernel", "section", "metric", "value", "unit", "text"]
NCU_MISSING = "ncu (Nsight Compute) not found on PATH or in $CUDA_HOME/bin: install Nsight Compute to profile kernels."
_GLOBAL = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(")
_NUMBER = re.compile(r"^-?[\d,]*\.?\d+(?:[eE][-+]?\d+)?$")


class ProfilerUnavailableError(TileLabError):
    """ncu is missing, refused to read the counters, or the kernel did not run under it."""


def _value(text: str) -> float:
    """``"32,315"`` → 32315.0; ``"no data"``, ``"PolicySpread"`` → NaN."""
    text = (text or "").strip()
    return float(text.replace(",", "")) if _NUMBER.match(text) else math.nan


def parse_ncu_csv(text: str):
    """``ncu --csv`` (``--page details``) text → a DataFrame of ``id, kernel, section, metric, value, unit, text``.

    Lines before the CSV header (``==PROF==`` lines, the program's own output)
    are skipped. ``value`` is the number (thousands separators removed; NaN
    for text such as ``no data``); ``text`` keeps what ncu printed. The rules'
    advice rows go to ``frame.attrs["rules"]`` (id, kernel, section, rule, type,
    description, estimated speedup).
    """
    import pandas as pd

    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        raise ValueError('no ncu CSV header (a line starting with "ID") in the text')
    rows, rules = [], []
    for row in csv.DictReader(lines[start:]):
        if not row.get("ID", "").isdigit():
            continue  # a stray line after the table
        kernel, section = row.get("Kernel Name", ""), row.get("Section Name", "")
        if row.get("Metric Name"):
            value = row.get("Metric Value", "")
            rows.append(
                [int(row["ID"]), kernel, section, row["Metric Name"], _value(value), row.get("Metric Unit", ""), value]
            )
        elif row.get("Rule Name"):
            speedup = row.get("Estimated Speedup") or ""
            rules.append(
                {
                    "id": int(row["ID"]),
                    "kernel": kernel,
                    "section": section,
                    "rule": row["Rule Name"],
                    "type": row.get("Rule Type", ""),
                    "description": row.get("Rule Description", ""),
                    "estimated_speedup": _value(speedup),
                }
            )
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame.attrs["rules"] = rules
    return frame


def ncu_command(ncu: str, kernels: list[str], report: Path, program: list[str], sections=DEFAULT_SECTIONS) -> list[str]:
    """The ``ncu`` command that profiles the first launch of each of ``kernels`` made by ``program``."""
    names = "|".join(re.escape(name) for name in kernels)
    command = [ncu, "--export", str(report), "--force-overwrite", "--clock-control", "none"]  # the card's clocks stay as found
    for section in sections:
        command += ["--section", section]
    return [*command, "--kernel-name", f"regex:^({names})$", "--launch-count", str(len(kernels)), *program]


def _jit_kernel(kernel: Any) -> Any:
    if hasattr(kernel, "prim_func") and hasattr(kernel, "get_kernel_source"):
        return kernel
    compiled = getattr(kernel, "kernel", None)  # tilelab.capture.CompiledKernel
    if compiled is not None and hasattr(compiled, "prim_func"):
        return compiled
    raise TypeError(
        f"profile() needs a compiled TileLang kernel (a JITKernel, e.g. kernel = matmul(1024, 1024, 1024)), "
        f"got {type(kernel).__name__}"
    )


def _write_job(jit: Any, inputs: tuple, directory: Path) -> None:
    import torch
    import tvm

    export = getattr(jit.target, "export", None)
    target = {k: str(v) for k, v in dict(export()).items() if k in ("kind", "arch")} if export else str(jit.target)
    spec = {
        "func": tvm.ir.save_json(jit.prim_func),
        "out_idx": list(jit.out_idx) if jit.out_idx is not None else None,
        "target": target,
        "execution_backend": jit.execution_backend,
        "pass_configs": {str(k): v for k, v in (jit.pass_configs or {}).items()},
        "compile_flags": jit.compile_flags,
    }
    (directory / "kernel.json").write_text(json.dumps(spec, default=str))
    if inputs:
        torch.save([x.detach().cpu() if isinstance(x, torch.Tensor) else x for x in inputs], directory / "inputs.pt")


def ncu_refusal(output: str) -> str | None:
    """One line saying why ncu refused (counters not permitted, profiler not loaded), or None."""
    if "ERR_NVGPUCTRPERM" in output:
        return (
            "ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM): ask the admin to allow "
            "profiling (NVreg_RestrictProfilingToAdminUsers=0) or run as root."
        )
    errors = [line.strip() for line in output.splitlines() if line.startswith("==ERROR==")]
    return f"ncu failed: {errors[0].removeprefix('==ERROR==').strip()}" if errors else None


def profile(kernel: Any, *inputs: Any, sections=DEFAULT_SECTIONS, timeout: float = 600.0):
    """Run a compiled kernel once under Nsight Compute; its metrics as a pandas DataFrame.

    Parameters
    ----------
    kernel
        A compiled TileLang ``JITKernel`` (what ``@tilelang.jit`` returns on a GPU).
    *inputs
        The kernel's inputs (torch tensors; copied to the child process). With
        none, random inputs of the kernel's parameter shapes are made there.
    sections
        ncu sections (default: Speed of Light, memory workload, occupancy, launch statistics, source
        counters and warp state statistics).

    Returns
    -------
    pandas.DataFrame
        ``id, kernel, section, metric, value, unit, text``; ``attrs["rules"]`` holds ncu's advice,
        ``attrs["samples"]`` per kernel, a table per launch of the warp-state samples at its SASS instructions, and
        ``attrs["summary"]`` a :class:`~tilelab.records.ProfileRecord` (Speed of Light, occupancy,
        launch, the roofline position against the device's peaks, with FLOP/s from the static estimate,
        the samples).

    Raises
    ------
    ProfilerUnavailableError
        ncu is missing or refused (one line saying why).
    """
    jit = _jit_kernel(kernel)
    ncu = find_tool("ncu")
    if ncu is None:
        raise ProfilerUnavailableError(NCU_MISSING)
    kernels = list(dict.fromkeys(_GLOBAL.findall(jit.get_kernel_source())))
    if not kernels:
        raise ProfilerUnavailableError("profile(): no __global__ kernel found in the kernel's CUDA source")
    with scratch("ncu") as folder:
        directory = Path(folder)
        _write_job(jit, inputs, directory)
        report = directory / "report"
        program = [sys.executable, "-m", "tilelab.counters.run", str(directory), str(os.getpid())]
        try:
            ran = run_tool(ncu_command(ncu, kernels, report, program, sections), timeout)
        except subprocess.TimeoutExpired:
            raise ProfilerUnavailableError(
                f"the kernel did not finish under ncu within {timeout:g} s (does it hang?): ncu and the kernel's "
                "process were stopped"
            ) from None
        output = ran.stdout + ran.stderr
        if (problem := ncu_refusal(output)) or ran.returncode != 0 or not report.with_suffix(".ncu-rep").exists():
            last = (output.strip().splitlines() or ["no output"])[-1]
            raise ProfilerUnavailableError(problem or f"the kernel did not run under ncu: {last}")
        read = [ncu, "--import", str(report.with_suffix(".ncu-rep")), "--csv", "--page"]
        try:
            imported = run_tool([*read, "details"], timeout)
            source_page = run_tool([*read, "source", "--print-source", "sass"], timeout) if "SourceCounters" in sections else None
        except subprocess.TimeoutExpired:
            raise ProfilerUnavailableError(f"ncu could not read back its report within {timeout:g} s") from None
    if imported.returncode != 0:
        raise ProfilerUnavailableError(ncu_refusal(imported.stderr) or "ncu could not read back its report")
    frame = parse_ncu_csv(imported.stdout)
    frame.attrs["samples"] = parse_ncu_source_csv(source_page.stdout) if source_page and source_page.returncode == 0 else {}
    if source_page is not None and source_page.returncode != 0:
        why = (source_page.stderr.strip().splitlines() or ["no output"])[-1]
        frame.attrs["notes"] = [f"ncu's source page could not be read ({why}): no warp samples by line"]
    frame.attrs["summary"] = _summary(frame, jit)
    return frame


def _summary(frame: Any, jit: Any):
    """The frame's :class:`~tilelab.records.ProfileRecord`, measured against the present device's peaks."""

    attrs = getattr(jit.target, "attrs", None)  # a tvm Target (a str target names no arch)
    arch = str(attrs.get("arch", "")) if attrs is not None else ""
    device_name = gpu_name()
    estimate, note = estimate_of_built(jit, arch, device_name) if arch else (None, "the target names no arch")
    return summarize(frame, estimate, arch, device_name, note or "")
