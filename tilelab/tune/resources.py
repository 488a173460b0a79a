"""A config's machine-code columns: registers, spills, shared memory, occupancy and whether it can launch.

Compile workers call :func:`resource_columns` after a successful build of a
CUDA config. A lowered config (no GPU) is compiled by nvcc and ptxas
(:func:`tilelab.machine.build.machine_code`, resources only: ~1 s less than the full
record, no SASS). A compiled ``JITKernel`` comes with the cubin TileLang
built, inside the host library it exported (``executable.so`` in its kernel
cache); its numbers come from ``cuobjdump --dump-resource-usage`` of that cubin,
so no second nvcc runs (there ``spills`` is the ELF's local memory per thread,
which holds spilled registers and local arrays alike). Launch facts (threads,
dynamic shared memory) come from the device module's launches. With them comes
``roofline_ms``, the static roofline bound of :mod:`tilelab.estimate` (empty
where tilelang's Analyzer cannot count the config).

Everything here is optional: without nvcc (or cuobjdump) the columns stay
empty and the result carries one note saying what to install.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilelab import _tilelang as tl
from tilelab.estimate import estimate_of_built
from tilelab.machine.build import BuildError, cubin_resource_usage, find_tool, machine_code
from tilelab.machine.occupancy import occupancy
from tilelab.records import KernelResources, MachineCodeRecord
from tilelab.targets import gpu_name

__all__ = ["ResourceFacts", "embedded_cubins", "launch_columns", "resource_columns", "roofline_columns"]

@dataclass
class ResourceFacts:
    """The columns of one config, why it cannot launch (if so), and notes about how they were found."""

    columns: dict[str, Any] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    build_error: str | None = None  # nvcc or ptxas rejected a lowered config's device source


def launch_columns(launches: list[Any]) -> dict[str, Any]:
    """What the launches alone say: the largest dynamic shared memory, and that the config cannot launch."""
    return {"shared_bytes": max((launch.dynamic_shared_bytes for launch in launches), default=None), "launchable": False}


def resource_columns(built: Any, launches: list[Any], arch: str, timeout: float = 300.0) -> ResourceFacts:
    """The machine-code columns of ``built`` (a ``Lowered`` or a ``JITKernel``) for ``arch``, and ``roofline_ms``.

    ``launches`` are its :class:`~tilelab.records.LaunchRecord`; never raises for a missing tool.
    """
    facts = _machine_facts(built, launches, arch, timeout)
    facts.columns.update(roofline_columns(built, arch))
    return facts


def roofline_columns(built: Any, arch: str) -> dict[str, Any]:
    """``roofline_ms`` of a built config on the present GPU (a compiled one) or ``arch``'s default device; {} when none."""

    device_name = None
    if not isinstance(built, tl.Lowered):  # a JITKernel: compiled here, for the GPU present
        device_name = gpu_name()
    estimate, _reason = estimate_of_built(built, arch, device_name)
    return {"roofline_ms": estimate.roofline_ms} if estimate is not None else {}


def _machine_facts(built: Any, launches: list[Any], arch: str, timeout: float) -> ResourceFacts:
    if isinstance(built, tl.Lowered):
        return _from_source(built.device_source, launches, arch, timeout)
    facts = _from_cubin(built, launches, arch)
    if facts is not None:
        return facts
    source = built.get_kernel_source() if hasattr(built, "get_kernel_source") else None
    if not source:
        return ResourceFacts(notes=["no device source or cubin on the compiled kernel: no resource columns."])
    facts = _from_source(source, launches, arch, timeout)
    if facts.build_error:  # TileLang compiled it: a failure of our second compile is only a note
        facts.notes.append(f"resource columns: {facts.build_error}")
        facts.build_error = None
    return facts


def _launch_values(launches: list[Any]) -> tuple[Any, Any]:
    if len(launches) == 1:
        return launches[0].dynamic_shared_bytes, launches[0].threads
    return (
        {launch.kernel: launch.dynamic_shared_bytes for launch in launches},
        {launch.kernel: launch.threads for launch in launches},
    )


def _from_source(source: str, launches: list[Any], arch: str, timeout: float) -> ResourceFacts:
    shared, threads = _launch_values(launches)
    record = machine_code(
        source, arch, dynamic_shared_bytes=shared, threads_per_block=threads, timeout=timeout, resources_only=True
    )
    if record.error:
        return ResourceFacts(build_error=record.error.splitlines()[0][:300])
    if not record.resources:
        return ResourceFacts(notes=[note for note in record.notes if not note.startswith("resources only")])
    notes = [note for note in record.notes if not note.startswith("resources only")]
    return ResourceFacts(record.summary(), list(record.launch_reasons), notes)


_ELF = b"\x7fELF"
_EM_CUDA = 190


def embedded_cubins(data: bytes) -> list[bytes]:
    """The CUDA ELF images (cubins) inside a host library, e.g. the ``executable.so`` TileLang exports.

    TVM serialises a CUDA module's binary into the library's data; each cubin is a
    complete 64-bit ELF whose ``e_machine`` is EM_CUDA, found by its magic and sized
    by its section and program header tables.
    """
    cubins, start = [], 1
    while (at := data.find(_ELF, start)) != -1:
        start = at + 1
        if data[at + 4 : at + 5] != b"\x02" or int.from_bytes(data[at + 18 : at + 20], "little") != _EM_CUDA:
            continue
        size = _elf_size(data, at)
        if size:
            cubins.append(data[at : at + size])
            start = at + size
    return cubins


def _elf_size(data: bytes, at: int) -> int:
    """The extent of the ELF64 image at ``at``: the furthest of its header tables and section contents."""
    number = lambda offset, width: int.from_bytes(data[at + offset : at + offset + width], "little")  # noqa: E731
    phoff, shoff = number(0x20, 8), number(0x28, 8)
    phentsize, phnum, shentsize, shnum = number(0x36, 2), number(0x38, 2), number(0x3A, 2), number(0x3C, 2)
    end = max(phoff + phentsize * phnum, shoff + shentsize * shnum)
    for section in range(shnum):
        header = shoff + section * shentsize
        if number(header + 4, 4) != 8:  # SHT_NOBITS takes no room in the file
            end = max(end, number(header + 0x18, 8) + number(header + 0x20, 8))
    return end if at + end <= len(data) else 0


def _library_of(jit_kernel: Any) -> Path | None:
    """The host library TileLang loaded or exported for ``jit_kernel`` (it holds the cubin)."""
    candidates = [getattr(getattr(jit_kernel, "adapter", None), "libpath", None)]
    cache_path = getattr(jit_kernel, "_tilelang_cache_path", None)
    if cache_path:
        candidates += [Path(cache_path) / name for name in ("executable.so", "kernel_lib.so", "kernel.cubin")]
    return next((Path(c) for c in candidates if c and Path(c).is_file()), None)


def _from_cubin(jit_kernel: Any, launches: list[Any], arch: str) -> ResourceFacts | None:
    """The columns from the cubin TileLang built (no second nvcc); None when there is none to read."""

    library = _library_of(jit_kernel)
    if library is None or find_tool("cuobjdump") is None:
        return None
    data = library.read_bytes()
    cubins = [data] if data[:4] == _ELF and int.from_bytes(data[18:20], "little") == _EM_CUDA else embedded_cubins(data)
    if not cubins:
        return None
    with tempfile.TemporaryDirectory(prefix="tilelab-cubin-") as directory:
        cubin = Path(directory) / "kernel.cubin"
        cubin.write_bytes(cubins[0])
        try:
            usage = cubin_resource_usage(cubin)
        except BuildError:  # not a cubin cuobjdump reads: fall back to compiling the source
            return None
    return _facts_from_usage(usage, launches, arch)


def _facts_from_usage(usage: dict[str, dict[str, int]], launches: list[Any], arch: str) -> ResourceFacts | None:
    """ResourceFacts from ``cuobjdump --dump-resource-usage`` numbers per kernel."""

    by_name = {launch.kernel: launch for launch in launches}
    resources, found, notes = {}, {}, []
    for name, numbers in usage.items():
        launch = by_name.get(name) or (launches[0] if len(launches) == 1 else None)
        resources[name] = KernelResources(
            kernel=name,
            registers=numbers.get("REG", 0),
            spill_stores=numbers.get("LOCAL", 0),  # local memory per thread: spills and local arrays
            shared_bytes=numbers.get("SHARED", 0),
            dynamic_shared_bytes=launch.dynamic_shared_bytes if launch else 0,
            stack_frame=numbers.get("STACK", 0),
            threads_per_block=launch.threads if launch else None,
        )
        try:
            found[name] = occupancy(resources[name], arch)
        except (KeyError, ValueError) as exc:
            notes.append(f"occupancy of {name}: {exc.args[0]}")
    if not resources:
        return None
    record = MachineCodeRecord(arch=arch, resources=resources, occupancy=found)
    return ResourceFacts(record.summary(), list(record.launch_reasons), notes)
