"""A compile worker: ``python -m tilelab.tune.worker``, driven by the runner over pipes.

The worker imports tilelang once (and says ``alive``), then serves sweeps: a
setup message (a dict) rebuilds the kernel from its
:class:`~tilelab.tune.build.KernelSpec` (``ready``), then it compiles one config per request
and reports status, a short error message, the compile time and, for CUDA
targets, the machine-code columns (:mod:`tilelab.tune.resources`). Messages are
length-prefixed pickles: requests on stdin, replies on a private copy of the
original stdout (fd 1 itself is pointed at stderr, so whatever the compiler
prints cannot corrupt the protocol). The worker exits when stdin closes or its
parent dies; a hung compile is the runner's to kill. Between sweeps it waits in
the session's pool (:mod:`tilelab.tune.pool`) for the next setup.

Most workers are not started as ``python -m tilelab.tune.worker`` but forked,
TileLang already imported, by the zygote (:mod:`tilelab.tune.zygote`), which
calls :func:`serve` in the child: the parent to outlive is then the notebook's
process, not the zygote, and is watched through a pidfd.
"""

from __future__ import annotations

import os
import pickle
import select
import shutil
import signal
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

from tilelab.errors import captured_compiler_output, error_record
from tilelab.tune.build import BuildTrace, build, launch_problems_of, launches_of
from tilelab.tune.resources import launch_columns, resource_columns

__all__ = ["SCRATCH", "read_message", "serve", "warm_up", "write_message"]

_HEADER = struct.Struct("!I")
# The variable naming the worker's temporary folder (made and removed by the pool): TileLang's library generator
# (CPU kernels, the cython backend) writes each compile's source and library to the temporary folder
# and never removes them, nor does nvcc when it is killed.
SCRATCH = "TILELAB_WORKER_SCRATCH"


def write_message(stream: BinaryIO, message: Any) -> None:
    """Send one message: a 4-byte length, then the pickle."""
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


def _read_exact(stream: BinaryIO, size: int) -> bytes:
    # The runner reads unbuffered pipes (so select() sees every message): reads may come short.
    chunks, missing = [], size
    while missing:
        chunk = stream.read(missing)
        if not chunk:
            raise EOFError("pipe closed")
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)


def read_message(stream: BinaryIO) -> Any:
    """Receive one message; ``EOFError`` when the other side has gone."""
    size = _HEADER.unpack(_read_exact(stream, _HEADER.size))[0]
    return pickle.loads(_read_exact(stream, size))


def _exit_with_parent(parent: int, parent_fd: int | None, scratch: str | None) -> None:
    # A compile may hang where stdin is never read again: watch the parent instead.
    if parent_fd is not None:  # forked by the zygote: the parent is not ours, its pidfd says when it ends
        select.select([parent_fd], [], [])
    else:
        while os.getppid() == parent:
            time.sleep(1.0)
    if scratch:  # nobody else will remove it now
        shutil.rmtree(scratch, ignore_errors=True)
    if os.getpgrp() == os.getpid():  # it leads its session (it always does): the compilers its compile started go too
        os.killpg(0, signal.SIGKILL)
    os._exit(1)


def _use_scratch() -> str | None:
    """Make the pool's folder for this worker (``$TILELAB_WORKER_SCRATCH``) its temporary folder, and its tools'."""
    scratch = os.environ.get(SCRATCH)
    if not scratch or not Path(scratch).is_dir():
        return None
    os.environ["TMPDIR"] = tempfile.tempdir = scratch  # tempfile keeps the folder it found first (a forked worker's
    return scratch  # is the zygote's)


def _emptied(scratch: str | None) -> None:
    """Remove what the last config's compile left: TileLang has copied what it keeps to its own cache."""
    for entry in Path(scratch).iterdir() if scratch else ():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _compile(setup: dict, kernel: Any, config: dict) -> tuple[str, str | None, float, dict[str, Any], list[str]]:
    """(status, error, seconds, machine-code and provenance columns, notes) of one config."""

    trace = BuildTrace()
    status, error, seconds, columns, notes = _compiled(setup, kernel, config, trace)
    return status, error, seconds, {**columns, **trace.columns()}, notes


def _compiled(setup: dict, kernel: Any, config: dict, trace: Any) -> tuple[str, str | None, float, dict[str, Any], list[str]]:
    """(status, error, seconds, machine-code columns, notes) of one config; ``trace`` learns who served its compile."""

    started = time.perf_counter()
    choice = setup["choice"]
    with captured_compiler_output() as output:
        try:
            built = build(kernel, setup["args"], {**setup["fixed"], **config}, choice, trace=trace)
        except Exception as exc:  # any failure of a user's config becomes its row
            seconds = time.perf_counter() - started
            record = error_record(exc, output.text(), stage="compile", parameters=config)
            where = f" (line {record.line})" if record.line else ""
            return "compile_error", f"{record.message}{where}", seconds, {}, []
    launches = launches_of(built, choice)
    if not launches and choice.is_cuda and choice.runnable:  # a kernel-cache load keeps no device module: lower it
        with captured_compiler_output():
            launches = launches_of(build(kernel, setup["args"], {**setup["fixed"], **config}, choice.lowered("a kernel-cache load keeps no device module")), choice)
    problems = launch_problems_of(built, choice, launches)
    if problems:  # no nvcc needed to know: the launch alone is over the limits
        return "cannot_launch", "; ".join(problems), time.perf_counter() - started, launch_columns(launches), []
    if not (setup.get("resources") and choice.is_cuda):
        return "ok", None, time.perf_counter() - started, {}, []

    facts = resource_columns(built, launches, choice.arch)
    seconds = time.perf_counter() - started
    if facts.build_error:  # what nvcc rejects here fails the same way on a GPU
        return "compile_error", facts.build_error, seconds, {}, facts.notes
    if facts.reasons:
        return "cannot_launch", "; ".join(facts.reasons), seconds, facts.columns, facts.notes
    return "ok", None, seconds, facts.columns, facts.notes


def warm_up() -> float:
    """Import TileLang (and what a compile needs) before any sweep asks; the seconds it took."""
    started = time.perf_counter()
    try:
        import tilelang  # noqa: F401  (imported once per worker, before tvm)

    except ImportError:  # TileLang is only on a path the sweep's setup adds: imported then
        pass
    return time.perf_counter() - started


def _load(setup: dict) -> Any:
    """The sweep's kernel, rebuilt from its spec (its module imported afresh: the file may have changed)."""
    sys.path[:0] = [p for p in setup["sys_path"] if p not in sys.path]
    import tilelang  # noqa: F401  (before tvm, when warm_up could not)

    filename = setup["spec"].filename
    for name, module in list(sys.modules.items()):
        if filename and getattr(module, "__file__", None) == filename:
            del sys.modules[name]
    return setup["spec"].load()


def main() -> None:
    # Below the parent, which benchmarks on the GPU while workers (and their nvcc) compile.
    serve(sys.stdin.buffer, os.getppid(), nice=5)


def serve(requests: BinaryIO, parent: int, parent_fd: int | None = None, nice: int = 0) -> None:
    """Answer ``requests`` (replies on fd 1) until they end or ``parent`` dies (``parent_fd``: its pidfd)."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    scratch = _use_scratch()
    threading.Thread(target=_exit_with_parent, args=(parent, parent_fd, scratch), daemon=True).start()
    os.nice(nice)
    write_message(replies, ("alive", os.getpid(), warm_up(), time.time()))
    setup, kernel = None, None
    while True:
        try:
            request = read_message(requests)
        except EOFError:
            return
        if isinstance(request, dict):  # a sweep's setup: the pool hands this worker to another sweep
            setup, kernel = request, None
            try:
                kernel = _load(setup)
            except Exception as exc:  # reported to the parent, which raises it for the user
                write_message(replies, ("setup_failed", f"{type(exc).__name__}: {exc}", setup.get("sweep")))
                continue
            write_message(replies, ("ready", os.getpid(), setup.get("sweep")))
        elif request[0] == "exit":
            return
        else:
            _, index, config = request
            _emptied(scratch)
            status, error, seconds, columns, notes = _compile(setup, kernel, config)
            write_message(replies, ("done", index, status, error, seconds, columns, notes))


if __name__ == "__main__":
    main()
