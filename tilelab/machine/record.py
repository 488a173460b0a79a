"""What one build found (or the cache kept) plus a launch → the :class:`~tilelab.records.MachineCodeRecord`.

A build's facts do not depend on the launch (it is not part of the cache key):
the launch's shared memory and threads, and so the resources and the occupancy,
are applied here, after a build or a cache hit alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tilelab.machine.occupancy import occupancy
from tilelab.machine.text import ParsedSass
from tilelab.records import CodeLineLink, KernelResources, MachineCodeRecord, OccupancyRecord

_LAUNCH_BOUNDS = re.compile(r"__global__\s+void\s+__launch_bounds__\((\d+)[^)]*\)\s+(\w+)\s*\(")


def build_facts(
    *,
    kernels: dict[str, dict[str, int]],
    tools: dict[str, str],
    notes: list[str],
    ptx: str = "",
    ptx_links: tuple[CodeLineLink, ...] = (),
    sass: ParsedSass | None = None,
) -> dict[str, Any]:
    """A build's launch-independent facts as plain JSON data (what the cache stores)."""
    sass = sass or ParsedSass("", (), {})
    return {
        "kernels": kernels,
        "tools": tools,
        "notes": notes,
        "ptx": ptx,
        "sass": sass.text,
        "sass_links": [[link.line, link.cuda_line] for link in sass.links],
        "ptx_links": [[link.line, link.cuda_line] for link in ptx_links],
        "instruction_counts": sass.counts,
    }


def machine_record(
    facts: Mapping[str, Any],
    device_source: str,
    arch: str,
    compile_arch: str,
    dynamic_shared_bytes: int | Mapping[str, int],
    threads_per_block: int | Mapping[str, int] | None,
    seconds: float,
) -> MachineCodeRecord:
    """The record of ``facts`` (from :func:`build_facts`) for one launch."""
    notes = list(facts["notes"])
    resources = _resources(facts["kernels"], device_source, dynamic_shared_bytes, threads_per_block)
    return MachineCodeRecord(
        arch=arch,
        compile_arch=compile_arch,
        ptx=facts["ptx"],
        sass=facts["sass"],
        resources=resources,
        occupancy=_occupancies(resources, arch, notes),
        instruction_counts={kernel: dict(counts) for kernel, counts in facts["instruction_counts"].items()},
        sass_links=tuple(CodeLineLink(line, cuda) for line, cuda in facts["sass_links"]),
        ptx_links=tuple(CodeLineLink(line, cuda) for line, cuda in facts["ptx_links"]),
        tools=dict(facts["tools"]),
        notes=tuple(notes),
        seconds=seconds,
    )


def _per_kernel(value: int | Mapping[str, int] | None, kernel: str) -> int | None:
    return value.get(kernel) if isinstance(value, Mapping) else value


def _resources(
    kernels: Mapping[str, Mapping[str, int]],
    device_source: str,
    dynamic_shared_bytes: int | Mapping[str, int],
    threads_per_block: int | Mapping[str, int] | None,
) -> dict[str, KernelResources]:
    bounds = {name: int(threads) for threads, name in _LAUNCH_BOUNDS.findall(device_source)}
    return {
        name: KernelResources(
            **numbers,
            dynamic_shared_bytes=_per_kernel(dynamic_shared_bytes, name) or 0,
            threads_per_block=_per_kernel(threads_per_block, name) or bounds.get(name),
        )
        for name, numbers in kernels.items()
    }


def _occupancies(resources: dict[str, KernelResources], arch: str, notes: list[str]) -> dict[str, OccupancyRecord]:
    found = {}
    for name, kernel in resources.items():
        try:
            found[name] = occupancy(kernel, arch)
        except (KeyError, ValueError) as exc:  # an arch without limits, or no block size: no occupancy, a note
            notes.append(f"occupancy of {name}: {exc.args[0]}")
    return found


def machine_warnings(machine: MachineCodeRecord) -> list[str]:
    """Plain-text warnings for the Overview: kernels that cannot launch, spills, a failed or missing build."""
    if machine.error:
        return [f"machine code: the build failed — {machine.error.splitlines()[0]}"]
    found = [f"cannot launch on {machine.arch}: {reason}" for reason in machine.launch_reasons]
    for name, resources in machine.resources.items():
        if resources.spills:
            found.append(
                f"{name} spills registers: {resources.spill_stores} B stored and {resources.spill_loads} B loaded "
                f"per thread ({resources.registers} registers, {resources.stack_frame} B stack frame)"
            )
    return found
