"""Compile failures -> one short message that names the kernel's line.

TileLang's failures arrive in many shapes: a C++ ``InternalError`` with a
``--> file:line:col`` snippet (sometimes at the allocation rather than the
faulty op), ``Fatal:`` lines the C++ logger writes to fd 2, the eager
builder's CRITICAL dump of its transformed source, a plain Python error deep
in tilelang with no location, or an nvcc log that embeds the whole generated
source. :func:`error_record` turns each into an :class:`ErrorRecord` whose
``message`` is short and whose ``log`` keeps everything.
"""

from __future__ import annotations

import contextlib
import linecache
import logging
import os
import re
import sys
import tempfile
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilelab.records import NO_GPU, ErrorRecord, KernelRecord
from tilelab.targets import TargetChoice

__all__ = [
    "KernelCompileError",
    "NoGPUError",
    "TileLabError",
    "captured_compiler_output",
    "error_record",
    "source_file",
]

_LOCATION = re.compile(r"-->\s+(?P<file>.+?):(?P<line>\d+)(?::\d+)?\s*$", re.MULTILINE)
_NOISE = (
    re.compile(r"^\s*File \"<unknown>\", line \d+, in "),
    re.compile(r"^\s*\d+: (0x[0-9a-f]+ )?\S+::"),  # C++ backtrace frames
    re.compile(r"^Stack trace:|^Traceback \(most recent call last\)"),
    re.compile(r"^\[\d\d:\d\d:\d\d\] .*: Fatal: "),
)
_SOURCE_DUMP = re.compile(r"(?s)(source=|Source:|// tilelang target:|extern \"C\" __global__).*")
_MAX_MESSAGE = 400


class TileLabError(Exception):
    """An error a user can cause; shown as one line, never as a traceback."""


class NoGPUError(TileLabError):
    """A GPU-only path (running, benchmarking) was called with no GPU."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what} needs a CUDA GPU and none is visible here; "
            "lowering, the Explorer and lowering-only tuning work without one (use --arch sm_80/sm_90)"
        )


class LoweredOnlyError(TileLabError):
    """A path that runs kernels was asked of kernels lowered for another arch than the GPU here."""

    def __init__(self, what: str, choice: TargetChoice) -> None:
        super().__init__(
            f"{what} runs the kernels, and they are lowered for {choice.arch} only ({choice.lowered_because}); "
            "leave out --arch to compile them for this GPU"
        )


def cannot_run(what: str, choice: TargetChoice) -> TileLabError:
    """Why ``what`` (``--bench``, ``--profile``) cannot run kernels lowered for ``choice``: no GPU, or one of another arch."""
    return NoGPUError(what) if choice.lowered_because in ("", NO_GPU) else LoweredOnlyError(what, choice)


class KernelCompileError(TileLabError):
    """A kernel failed to elaborate, lower or compile; ``record`` is the failed record."""

    def __init__(self, record: KernelRecord) -> None:
        self.record = record
        super().__init__(record.error.message if record.error else f"{record.name} failed to compile")


@dataclass
class CompilerOutput:
    """What the compiler printed while captured: fd 2 and tilelang's log records."""

    stderr_file: Any = None
    log_lines: list[str] = field(default_factory=list)
    frozen_text: str | None = None

    def text(self) -> str:
        if self.frozen_text is not None:
            return self.frozen_text
        raw = ""
        if self.stderr_file is not None:
            self.stderr_file.flush()
            self.stderr_file.seek(0)
            raw = self.stderr_file.read().decode(errors="replace")
        return "\n".join([raw, *self.log_lines]).strip()


class _ListHandler(logging.Handler):
    def __init__(self, sink: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(f"[{record.levelname}] {record.getMessage()}")


@contextlib.contextmanager
def captured_compiler_output() -> Iterator[CompilerOutput]:
    """Capture fd 2 (the C++ logger) and tilelang's log records for one compile."""
    output = CompilerOutput()
    logger = logging.getLogger("tilelang")
    saved_handlers, saved_propagate = logger.handlers[:], logger.propagate
    logger.handlers = [_ListHandler(output.log_lines)]
    logger.propagate = False
    with tempfile.TemporaryFile() as sink:
        output.stderr_file = sink
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        saved_fd = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield output
        finally:
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
            logger.handlers, logger.propagate = saved_handlers, saved_propagate
            output.frozen_text = output.text()
            output.stderr_file = None


def error_record(
    exc: BaseException,
    compiler_output: str = "",
    stage: str = "lower",
    kernel_file: str | None = None,
    parameters: dict[str, Any] | None = None,
    kernel_span: tuple[int, int] | None = None,
) -> ErrorRecord:
    """Describe ``exc`` in one short message with the kernel line it points at.

    ``kernel_span`` (first and last line of the kernel's function in
    ``kernel_file``) narrows the search for the op a C++ failure names.
    """
    text = str(exc) or type(exc).__name__
    location = _location(text, exc, kernel_file)
    headline = _headline(text, exc)
    hint_line, hint = _hint(headline, location, kernel_file, parameters or {}, kernel_span)
    if hint_line is not None:
        location = (location[0] if location else kernel_file, hint_line)
    message = headline if not hint else f"{headline} ({hint})"
    log = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if compiler_output:
        log += "\n--- compiler output ---\n" + compiler_output
    file, line = location if location else (kernel_file, None)
    return ErrorRecord(kind=stage, message=message, file=file, line=line, log=log)


def _headline(text: str, exc: BaseException) -> str:
    """The first meaningful line of an error, without frames and dumps."""
    text = _SOURCE_DUMP.sub("", text)
    lines = [ln.rstrip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln.strip() and not any(p.search(ln) for p in _NOISE)]
    lines = [ln for ln in lines if not ln.lstrip().startswith(("-->", "|")) and not re.match(r"^\s*\d+\s*\|", ln)]
    first = lines[0].strip() if lines else type(exc).__name__
    first = re.sub(r"^(Check failed: \(.*?\) is false: )", "", first)
    if not isinstance(exc, (RuntimeError, ValueError, TypeError)) or type(exc).__module__ != "builtins":
        name = type(exc).__name__
        if name not in ("InternalError", "TVMError", "DiagnosticError"):
            first = f"{name}: {first}"
    return first if len(first) <= _MAX_MESSAGE else first[: _MAX_MESSAGE - 3] + "..."


def _is_library_file(filename: str) -> bool:
    """Not the user's: TileLang's, TVM's or TileLab's Python, and any C++ frame (``/project/src/...ws.cc``)."""
    if filename.startswith("<"):
        return filename in ("<unknown>", "<string>")  # a cell's pseudo-file is the user's
    if not filename.endswith(".py"):
        return True
    return any(part in filename for part in ("/tilelang/", "/tvm/", "/tvm_ffi/", "/tilelab/", "site-packages"))


def _location(text: str, exc: BaseException, kernel_file: str | None) -> tuple[str, int] | None:
    """Where the error points: a ``-->`` snippet, else the deepest user frame."""
    for match in _LOCATION.finditer(text):
        file = source_file(match.group("file").strip())
        if not _is_library_file(file):
            return file, int(match.group("line"))
    frames = traceback.extract_tb(exc.__traceback__)
    user = [f for f in frames if not _is_library_file(f.filename)]
    preferred = [f for f in user if kernel_file and f.filename == kernel_file]
    chosen = (preferred or user or [None])[-1]
    return (chosen.filename, chosen.lineno) if chosen is not None and chosen.lineno else None


_COPY_OPERANDS = re.compile(r"src=(\w+), dst=(\w+)")
_MISMATCHED_TYPES = re.compile(r"mismatched types\.? (float\d+) vs\.? (u?int\d+)|(u?int\d+) vs\.? (float\d+)")
_OP_WORDS = {"gemm": "T.gemm(", "copy": "T.copy(", "reduce": "T.reduce", "atomic": "T.atomic"}


def _lines_of(file: str | None) -> list[str]:
    return linecache.getlines(file) if file else []


def _find_line(file: str | None, predicate, start: int = 1) -> int | None:
    for number, line in enumerate(_lines_of(file), start=1):
        if number >= start and predicate(line):
            return number
    return None


def _hint(
    headline: str,
    location: tuple[str, int] | None,
    kernel_file: str | None,
    parameters: dict[str, Any],
    kernel_span: tuple[int, int] | None = None,
) -> tuple[int | None, str]:
    """Point at the offending op when the compiler points elsewhere (or nowhere)."""
    file = location[0] if location else kernel_file
    operands = _COPY_OPERANDS.search(headline)
    if operands:
        src, dst = operands.groups()
        words = re.compile(rf"T\.copy\((?=.*\b{src}\b)(?=.*\b{dst}\b)")
        line = _find_line(file, words.search, start=location[1] if location else 1)
        why = "" if "tma" in headline.lower() else ": the source region is larger than the destination tile"
        return line, f"T.copy from {src} to {dst}{why}"
    if _MISMATCHED_TYPES.search(headline):
        floats = {k: v for k, v in parameters.items() if isinstance(v, float) and not float(v).is_integer()}
        for name, value in floats.items():
            line = _find_line(file, re.compile(rf"\b{re.escape(name)}\b(?!\s*=)").search, start=_def_line(file, name))
            return line, f"{name}={value!r} is a float where an int is needed (a shape, extent or index)"
        return None, "a float is used where an int is needed (a shape, extent or index)"
    lowered = headline.lower()
    first, last = kernel_span if kernel_span and file == kernel_file else (1, 1 << 30)
    for word, op in _OP_WORDS.items():
        if word in lowered and file:
            matches = [n for n, ln in enumerate(_lines_of(file), 1) if op in ln and first <= n <= last]
            if len(matches) == 1:
                return matches[0], f"at {op.rstrip('(')}"
    return None, ""


def _def_line(file: str | None, parameter: str) -> int:
    """The line after the signature that declares ``parameter`` (so a default's own line is skipped)."""
    line = _find_line(file, re.compile(rf"\bdef\b.*\b{re.escape(parameter)}\s*=").search)
    return (line or 0) + 1


def source_file(path: str) -> str:
    """A file name as linecache knows it: tilelang makes pseudo-files like ``<cell>`` absolute."""
    name = Path(path).name
    return name if name.startswith("<") and name.endswith(">") else path
