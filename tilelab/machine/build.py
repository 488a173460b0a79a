"""Machine code without a GPU: nvcc → PTX, cubin and resources, nvdisasm → SASS with line links.

One unit because the steps share one build directory and one file name (the
line links match the compiled file's path). The device source is compiled as
TileLang compiles it (``nvcc --cubin -O3 -lineinfo -std=c++20``, its
``tl_templates`` and CUTLASS includes) in one nvcc run that keeps the PTX its
front end wrote, so the front end (most of the time) runs once. Given TileLang's
compiled kernel, the SASS is that of TileLang's own cubin. Results are cached
(:mod:`tilelab.machine.cache`); text parsing lives in :mod:`tilelab.machine.text`,
finding the tools in :mod:`tilelab.machine.cuda_tools`.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilelab import _tilelang as tl
from tilelab.machine import cache as machine_cache
from tilelab.machine.cuda_tools import cubins_in_library, find_tool, run_tool, tool_version
from tilelab.machine.record import build_facts, machine_record
from tilelab.machine.text import (
    INSTRUCTION_CLASSES,
    ParsedSass,
    instruction_classes,
    links_of_twin,
    parse_ptx_links,
    parse_ptxas,
    parse_resource_usage,
    parse_sass,
    presumed_lines,
)
from tilelab.records import MachineCodeRecord
from tilelab.scratch import scratch

__all__ = [
    "INSTRUCTION_CLASSES",
    "Build",
    "build",
    "compile_arch",
    "cubin_resource_usage",
    "cubins_in_library",
    "find_tool",
    "instruction_classes",
    "machine_code",
    "machine_code_for",
    "machine_code_off",
    "start_machine_code",
    "tool_version",
]

SOURCE_NAME = "kernel.cu"
NVCC_MISSING = (
    "nvcc not found (looked in PATH, $CUDA_HOME/bin, /usr/local/cuda/bin and the nvidia-cuda-nvcc wheel): "
    "install the CUDA toolkit or `pip install nvidia-cuda-nvcc` to see PTX, SASS, registers and occupancy."
)
MACHINE_CODE_SWITCH = "TILELAB_MACHINE_CODE"
MACHINE_CODE_OFF = (
    f"machine code is off ({MACHINE_CODE_SWITCH}=0): TileLab ran no nvcc for this kernel; "
    f"unset {MACHINE_CODE_SWITCH} to see PTX, SASS, registers and occupancy."
)
NVDISASM_MISSING = "nvdisasm and cuobjdump not found: `pip install nvidia-cuda-nvdisasm` to see SASS."
_ERROR_LINE = re.compile(r"error|fatal", re.IGNORECASE)


def machine_code_off() -> bool:
    """Whether ``TILELAB_MACHINE_CODE=0`` (or ``off``, ``false``, ``no``) turns TileLab's own nvcc builds off here."""
    return os.environ.get(MACHINE_CODE_SWITCH, "").strip().lower() in {"0", "off", "false", "no"}


# -- arch and includes -------------------------------------------------------------
def compile_arch(arch: str) -> str:
    """The arch to build for: ``sm_90`` → ``sm_90a`` and ``sm_100`` → ``sm_100a`` (wgmma, TMA, tcgen05 need them)."""
    arch = arch.strip().lower()
    return f"{arch}a" if arch in ("sm_90", "sm_100") else arch


@functools.cache
def _include_dirs() -> tuple[str, ...]:
    from tilelang.env import CUTLASS_INCLUDE_DIR, TILELANG_TEMPLATE_PATH

    return tuple(path for path in (TILELANG_TEMPLATE_PATH, CUTLASS_INCLUDE_DIR) if path)


@functools.cache
def _tilelang_version() -> str:
    import tilelang

    return tilelang.__version__


# -- building --------------------------------------------------------------------
@dataclass(frozen=True)
class Build:
    """The files of one build and ptxas's report."""

    source: Path
    ptx: Path
    cubin: Path
    ptxas_log: str


class BuildError(RuntimeError):
    """nvcc or ptxas rejected the device source; the message holds its error lines."""


def _run(command: list[str], timeout: float, scratch: Path | None = None) -> subprocess.CompletedProcess:
    """:func:`run_tool`; a failure raises :class:`BuildError` with the tool's error lines."""
    result = run_tool(command, timeout, scratch)
    if result.returncode != 0:
        output = (result.stderr + result.stdout).splitlines()
        errors = [line for line in output if _ERROR_LINE.search(line)] or output[-20:]
        raise BuildError(f"{Path(command[0]).name} failed: " + "\n".join(errors[:20]))
    return result


def build(
    device_source: str,
    arch: str,
    directory: str | Path,
    *,
    fast_math: bool = False,
    nvcc_options: Sequence[str] = (),
    ptxas_options: Sequence[str] = (),
    timeout: float = 300.0,
    line_info: bool = True,
) -> Build:
    """Compile ``device_source`` for ``arch`` (already the compile arch) into ``directory``: PTX, cubin, ptxas log.

    One nvcc run (``--cubin`` with ``ptxas -v``): its front end's PTX is kept
    (``--keep-dir``) rather than running the front end again for ``--ptx``.
    ``line_info=False`` leaves out ``-lineinfo`` and the PTX (resources only).
    Raises :class:`BuildError` when nvcc or ptxas fails, ``FileNotFoundError`` without nvcc.
    """
    nvcc = find_tool("nvcc")
    if nvcc is None or find_tool("ptxas") is None:
        raise FileNotFoundError(NVCC_MISSING)
    directory = Path(directory)
    source, cubin, kept = directory / SOURCE_NAME, directory / "kernel.cubin", directory / "nvcc"
    source.write_text(device_source)
    includes = [f"-I{path}" for path in _include_dirs()]
    flags = [f"-arch={arch}", "-std=c++20", *includes, *(["--use_fast_math"] if fast_math else []), *nvcc_options]
    ptxas = ["-Xptxas", "-v", *(part for option in ptxas_options for part in ("-Xptxas", option))]
    keep = ["-lineinfo", "--keep", "--keep-dir", str(kept)] if line_info else []
    if line_info:
        kept.mkdir()
    command = [nvcc, "--cubin", "-O3", "-w", *keep, *flags, *ptxas, "-o", str(cubin), str(source)]
    log = _run(command, timeout, scratch=directory / "tmp")
    return Build(source, kept / source.with_suffix(".ptx").name, cubin, log.stdout + log.stderr)


def _disassemble(cubin: Path, timeout: float) -> tuple[str, str | None]:
    """(SASS text, the tool used); nvdisasm gives line info, cuobjdump does not."""
    if nvdisasm := find_tool("nvdisasm"):
        return _run([nvdisasm, "-c", "-gi", str(cubin)], timeout).stdout, nvdisasm
    if cuobjdump := find_tool("cuobjdump"):
        return _run([cuobjdump, "-sass", str(cubin)], timeout).stdout, cuobjdump
    return "", None


def cubin_resource_usage(cubin: str | Path) -> dict[str, dict[str, int]]:
    """``cuobjdump --dump-resource-usage`` of ``cubin``: per kernel REG, STACK, SHARED, LOCAL, ..."""
    cuobjdump = find_tool("cuobjdump")
    if cuobjdump is None:
        raise FileNotFoundError("cuobjdump not found: `pip install nvidia-cuda-cuobjdump`")
    return parse_resource_usage(_run([cuobjdump, "--dump-resource-usage", str(cubin)], 60).stdout)



# -- the record ------------------------------------------------------------------
def machine_code(
    device_source: str,
    arch: str,
    *,
    dynamic_shared_bytes: int | Mapping[str, int] = 0,
    threads_per_block: int | Mapping[str, int] | None = None,
    fast_math: bool = False,
    nvcc_options: Sequence[str] = (),
    ptxas_options: Sequence[str] = (),
    timeout: float = 300.0,
    resources_only: bool = False,
    kernel: Any = None,
    cache: Path | bool | None = True,
) -> MachineCodeRecord:
    """PTX, SASS, per-kernel resources and occupancy of TileLang's CUDA ``device_source`` for ``arch``.

    Parameters
    ----------
    device_source
        The generated CUDA (``record.source.device``); SASS and PTX lines link to its lines.
    arch
        The record's arch (``sm_80`` … ``sm_120``); ``sm_90`` is built as ``sm_90a``.
    dynamic_shared_bytes, threads_per_block
        The launch's values, one for all kernels or by kernel name. Threads
        default to each kernel's ``__launch_bounds__``.
    fast_math, nvcc_options, ptxas_options
        What TileLang would pass (``TL_ENABLE_FAST_MATH``, ``TL_DEVICE_COMPILE_FLAGS``).
    resources_only
        Only ptxas's resources and the occupancy (what tuning rows need): no
        ``-lineinfo``, no disassembly, no PTX or SASS text kept.
    kernel
        The ``JITKernel`` TileLang compiled from this source, if any: the SASS
        shown is then that of its own cubin, the code that runs.
    cache
        The machine-code cache's directory; True: the one configured now
        (:func:`tilelab.machine.cache.cache_dir`); False or None: no cache.

    ``TILELAB_MACHINE_CODE=0`` in the environment turns these builds off: the record then has one note saying so.
    A build is kept in TileLab's machine-code cache (:mod:`tilelab.machine.cache`):
    the same source, arch, flags and tools again cost a file read. Never raises for
    a missing tool or a failed compile: the record's ``notes`` and ``error`` say what happened.
    """
    started = time.perf_counter()
    directory = machine_cache.cache_dir() if cache is True else cache or None
    target = compile_arch(arch)
    if machine_code_off():
        return MachineCodeRecord(arch=arch, compile_arch=target, notes=(MACHINE_CODE_OFF,))
    tools = {name: f"{path} ({tool_version(path)})" for name in ("nvcc", "ptxas") if (path := find_tool(name))}
    if "nvcc" not in tools or "ptxas" not in tools:
        return MachineCodeRecord(arch=arch, compile_arch=target, notes=(NVCC_MISSING,), tools=tools)
    compiled = None if resources_only else _compiled_by_tilelang(kernel, device_source)
    disassembler = None if resources_only else find_tool("nvdisasm") or find_tool("cuobjdump")
    options = {"fast_math": fast_math, "nvcc": list(nvcc_options), "ptxas": list(ptxas_options)}
    key = machine_cache.cache_key(
        source=device_source,
        arch=target,
        options=options,
        resources_only=resources_only,
        tools=[tool_version(find_tool(name)) for name in ("nvcc", "ptxas")],
        disassembler=disassembler and [Path(disassembler).name, tool_version(disassembler)],
        includes=[*_include_dirs(), _tilelang_version()],  # the templates' paths and the release they come from
        tilelang_kernel=compiled and [compiled, getattr(kernel, "compile_flags", None)],
    )
    launch = (dynamic_shared_bytes, threads_per_block)
    if (facts := machine_cache.load(key, directory)) is not None:
        try:
            return machine_record(facts, device_source, arch, target, *launch, time.perf_counter() - started)
        except (KeyError, TypeError, ValueError, AttributeError):  # an entry of another shape: a miss, built again
            pass
    try:
        facts = _build_facts(device_source, target, tools, options, timeout, resources_only, kernel if compiled else None)
    except (BuildError, subprocess.TimeoutExpired) as exc:
        error = str(exc) if isinstance(exc, BuildError) else f"timed out after {timeout:g} s: {exc.cmd[0]}"
        return MachineCodeRecord(
            arch=arch, compile_arch=target, tools=tools, error=error, seconds=time.perf_counter() - started
        )
    machine_cache.store(key, facts, directory)
    return machine_record(facts, device_source, arch, target, *launch, time.perf_counter() - started)


def _build_facts(
    device_source: str,
    target: str,
    tools: dict[str, str],
    options: dict[str, Any],
    timeout: float,
    resources_only: bool,
    kernel: Any,
) -> dict[str, Any]:
    """Build in a scratch directory; TileLang's own cubin (of ``kernel``) is disassembled meanwhile."""
    tools = dict(tools)
    with scratch("machine") as directory, ThreadPoolExecutor(1) as aside:
        theirs = aside.submit(_disassemble_tilelang_cubin, kernel, Path(directory), timeout) if kernel else None
        built = build(
            device_source,
            target,
            directory,
            fast_math=options["fast_math"],
            nvcc_options=options["nvcc"],
            ptxas_options=options["ptxas"],
            timeout=timeout,
            line_info=not resources_only,
        )
        kernels = parse_ptxas(built.ptxas_log)
        if resources_only:
            return build_facts(kernels=kernels, tools=tools, notes=["resources only: no PTX or SASS kept."])
        ptx = built.ptx.read_text().replace(directory + os.sep, "")
        disassembled = theirs.result() if theirs else None
        own_text, own_disassembler = _disassemble(built.cubin, timeout)
        if disassembled is not None:
            tools["cubin"] = "TileLang's own (the code that runs)"
            sass_text, disassembler = disassembled
        else:
            sass_text, disassembler = own_text, own_disassembler
    notes = []
    if disassembler is None:
        notes.append(NVDISASM_MISSING)
    else:
        tools[Path(disassembler).name] = f"{disassembler} ({tool_version(disassembler)})"
        if Path(disassembler).name == "cuobjdump":
            notes.append(
                "SASS from cuobjdump has no line info: `pip install nvidia-cuda-nvdisasm` to link it to CUDA lines."
            )
    own = parse_sass(own_text, str(built.source))
    sass = _linked_through_own_build(sass_text, own, kernel) if disassembled is not None else own
    ptx_links = parse_ptx_links(ptx, SOURCE_NAME)
    return build_facts(kernels=kernels, tools=tools, notes=notes, ptx=ptx, ptx_links=ptx_links, sass=sass)


def _linked_through_own_build(sass_text: str, own: ParsedSass, kernel: Any) -> ParsedSass:
    """TileLang's SASS (``sass_text``, parsed), each instruction linked to the CUDA line it came from.

    TileLang compiled the CUDA with its ``#line`` directives, so its line info names cell lines, and a cell line that
    several CUDA lines come from names none of them (a quarter of a Hopper GEMM's instructions, its TMA waits and
    its stores among them). TileLab's build of the same CUDA without them (``own``) names exact CUDA lines: where its
    instructions are TileLang's, each of TileLang's takes its twin's line. Otherwise TileLang's own line info is
    read, where it is unambiguous.
    """
    theirs = parse_sass(sass_text, presumed_lines(kernel.get_kernel_source())[1])
    twin_links = links_of_twin(theirs.text, own)
    return theirs if twin_links is None else ParsedSass(theirs.text, twin_links, theirs.counts)


def _compiled_by_tilelang(kernel: Any, device_source: str) -> str | None:
    """The source (with its ``#line`` directives) TileLang compiled ``kernel`` from, when it is ``device_source``."""
    get_source = getattr(kernel, "get_kernel_source", None)
    if get_source is None:
        return None
    compiled = get_source()
    return compiled if isinstance(compiled, str) and presumed_lines(compiled)[0] == device_source else None


def _disassemble_tilelang_cubin(kernel: Any, directory: Path, timeout: float) -> tuple[str, str | None] | None:
    """The SASS of the cubin inside ``kernel``'s library, or None when it has no one cubin to show."""
    library = directory / "tilelang_kernel.so"
    try:
        tl.export_library(kernel, str(library))
    except Exception:  # backends without a library, or a failing export: our own cubin is shown instead
        return None
    cubins = cubins_in_library(library)
    if len(cubins) != 1:
        return None
    cubin = directory / "tilelang_kernel.cubin"
    cubin.write_bytes(cubins[0])
    return _disassemble(cubin, timeout)


def machine_code_for(record: Any, **options: Any) -> MachineCodeRecord:
    """:func:`machine_code` of a :class:`~tilelab.records.KernelRecord`: its device source, arch and launches.

    Pass ``kernel=`` the ``JITKernel`` TileLang compiled for the record to show its own cubin's SASS.
    """
    if record.source is None or record.source.language != "cuda":
        return MachineCodeRecord(arch=record.arch, notes=("no CUDA source in this record: nothing to compile.",))
    launches: list[Any] = list(getattr(record, "launches", ()) or ([record.launch] if record.launch else []))
    if len(launches) == 1:  # one kernel: its launch whatever its name
        shared, threads = launches[0].dynamic_shared_bytes, launches[0].threads
    else:
        shared = {launch.kernel: launch.dynamic_shared_bytes for launch in launches}
        threads = {launch.kernel: launch.threads for launch in launches}
    return machine_code(
        record.source.device, record.arch, dynamic_shared_bytes=shared, threads_per_block=threads, **options
    )


@functools.cache
def _executor() -> ThreadPoolExecutor:
    # Threads suffice: the work is in nvcc/ptxas/nvdisasm subprocesses, outside the GIL.
    return ThreadPoolExecutor(max_workers=2, thread_name_prefix="tilelab-machine")


def start_machine_code(*args: Any, **options: Any) -> Future:
    """:func:`machine_code` (or, given a record, :func:`machine_code_for`) in a background thread.

    Returns a ``Future`` of the :class:`~tilelab.records.MachineCodeRecord`:
    ``start_machine_code(source, arch, ...)`` or ``start_machine_code(record)``.
    """
    if find_tool("nvcc") and not machine_code_off():
        _include_dirs()  # import tilelang here, not inside the worker thread
    function = machine_code_for if args and hasattr(args[0], "source") else machine_code
    options.setdefault("cache", machine_cache.cache_dir())  # the cache configured when asked, whenever it runs
    return _executor().submit(function, *args, **options)
