"""CUDA's command-line tools and files: where nvcc, ptxas, nvdisasm, cuobjdump and ncu are,
which version each is, how one is run (:func:`run_tool`), and the cubins embedded in a compiled TileLang library.

No tool is run at import; a missing tool is None, never an error here.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
from pathlib import Path

_TOOL_GUARD = Path(__file__).with_name("tool_guard.py")


def run_tool(command: list[str], timeout: float, scratch: Path | None = None) -> subprocess.CompletedProcess:
    """Run a CUDA tool to its end, its output captured as text, in a session of its own; ``scratch`` (made if
    missing) is its ``TMPDIR``.

    Jupyter interrupts a kernel by signalling its whole process group: in that group, a tool running beside the
    interrupted cell (an earlier cell's machine-code build) would die with it ("cicc died due to signal 2"). A
    timeout, or an interrupt of the caller waiting here, stops the tool with all it started: nvcc killed alone
    leaves its cicc compiling on and its ``tmpxft`` files behind, ncu its profiled program on the GPU. Raises
    ``subprocess.TimeoutExpired`` past ``timeout`` seconds. The tool runs under :mod:`tilelab.machine.tool_guard`,
    which stops it when this process ends first.
    """
    env = None
    if scratch is not None:
        scratch.mkdir(exist_ok=True)
        env = {**os.environ, "TMPDIR": str(scratch)}
    guarded = [sys.executable, "-I", "-S", str(_TOOL_GUARD), str(os.getpid()), *command]
    process = subprocess.Popen(
        guarded, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except BaseException as stopped:
        with contextlib.suppress(ProcessLookupError):  # all of it has exited already
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        if isinstance(stopped, subprocess.TimeoutExpired):
            raise subprocess.TimeoutExpired(command, timeout) from None  # the tool's command, not its guard's
        raise
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def _wheel_bin_dirs() -> list[Path]:
    """``nvidia/cu*/bin`` of the installed NVIDIA wheels (nvidia-cuda-nvdisasm and friends)."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    return sorted(
        (path for root in spec.submodule_search_locations for path in Path(root).glob("cu*/bin")), reverse=True
    )


@functools.cache
def find_tool(name: str) -> str | None:
    """The path of CUDA tool ``name`` (nvcc, ptxas, nvdisasm, cuobjdump, ncu), or None.

    nvcc and ptxas come from PATH, ``$CUDA_HOME/bin`` or ``/usr/local/cuda/bin``
    before the wheels (ptxas beside the nvcc found, so their versions agree);
    the disassemblers from the NVIDIA wheels first.
    """
    if name == "ptxas" and (nvcc := find_tool("nvcc")):
        sibling = Path(nvcc).resolve().parent / "ptxas"
        if sibling.exists():
            return str(sibling)
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    system = [shutil.which(name)] + [str(Path(home) / "bin" / name) for home in homes if home]
    wheels = [str(directory / name) for directory in _wheel_bin_dirs()]
    ordered = system + wheels if name in ("nvcc", "ptxas", "ncu") else wheels + system
    return next((path for path in ordered if path and os.access(path, os.X_OK)), None)


@functools.cache
def tool_version(path: str) -> str:
    """The version line a CUDA tool prints for ``--version`` (e.g. ``V13.0.88``)."""
    try:
        output = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    found = re.findall(r"(?:release \S+ )?V\d[\d.]*|Version \S+", output)
    return found[-1] if found else (output.strip().splitlines() or ["unknown"])[-1]


def cubins_in_library(library: str | Path) -> list[bytes]:
    """The CUDA ELF images (cubins) embedded in a compiled TileLang kernel's shared library.

    TVM embeds the device code as a blob that ``cuobjdump`` does not look into;
    each image is found by its ELF header (64-bit, machine ``EM_CUDA``) and cut
    at the end of its section or program header table, whichever is last.
    """
    data = Path(library).read_bytes()
    found, start = [], 1
    while (at := data.find(b"\x7fELF", start)) != -1:
        start = at + 4
        header = data[at : at + 64]
        if len(header) < 64 or header[4] != 2 or struct.unpack_from("<H", header, 18)[0] != _EM_CUDA:
            continue
        program_headers, section_headers = struct.unpack_from("<QQ", header, 32)
        program_size, programs, section_size, sections = struct.unpack_from("<HHHH", header, 54)
        end = max(section_headers + section_size * sections, program_headers + program_size * programs)
        found.append(data[at : at + end])
    return found


_EM_CUDA = 190
