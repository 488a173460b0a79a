"""The zygote: one process that imports TileLang once and forks ready compile workers, milliseconds each.

Why: a compile worker spends seconds importing TileLang and TVM before it can
compile anything, and sixteen started at once contend for the same disk and CPUs
(8.6-9.8 s on a 16-core H100 host, the critical path of a cold sweep). The
zygote (``python -m tilelab.tune.zygote FD PID``, started by
:mod:`tilelab.tune.processes`) pays for the import once; each worker is then a
``fork()`` of a process that already holds TileLang.

How: the pool's process talks to it over a Unix socket pair (``FD``): a
``fork`` request carries the worker's environment and working directory and,
as SCM_RIGHTS, its stdin, its stdout, its log and a status pipe; the zygote
forks, the child takes the environment (the same compile environment as the
zygote's: :mod:`tilelab.tune.processes` sees to it), with the paths TileLang's
import added (the zygote tells them in its hello), puts the first three fds
on 0-2 and runs :func:`tilelab.tune.worker.serve`, and the zygote answers
with the child's pid and a pidfd of it. The zygote reaps its children and
writes each one's exit status to its status pipe, since the pool's process is
not their parent and cannot wait for them.

Fork is safe only from a process with one thread and no CUDA. The pool starts
the zygote (:func:`import_environment`) with OpenBLAS (which numpy starts with a
thread per CPU) held to one thread, and with no GPU to see: TileLang's import
asks torch whether CUDA is available (``tilelang.utils.device``, and tvm_ffi's
torch DLPack addon), and torch's usual answer starts the CUDA driver, which
starts a thread of its own. The children take their worker's environment before
they compile, so each child meets the GPU afresh, as a spawned worker would (a
compile asks torch again: TileLang's kernel adapter). What stays from the
zygote's import is TileLang's ``IS_CUDA`` (False), the default device of
TileLang's own profiler, which a worker never runs (its target is explicit),
and no DLPack addon, which only speeds passing tensors, which a worker never
does. The zygote refuses to serve when its imports left any other thread
running or initialised CUDA (the pool then spawns interpreters as before), and
never compiles anything itself, so TVM's thread pool starts in each child, not
here.
A child gets its own session (``setsid``), the signal handlers of a fresh
interpreter, fresh random seeds, and watches the notebook's process (``PID``,
through a pidfd the zygote opened) to exit with it. The zygote exits when that
process does; when the pool closes its end of the socket (an environment it
does not serve), it forks no more and exits once its last child has.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
from pathlib import Path

from tilelab.tune import worker  # what a child runs; TileLang and TVM come in worker.warm_up()

__all__ = ["FORK_REQUEST", "GPUS_HIDDEN", "STATUS", "import_environment", "main"]

FORK_REQUEST = b"fork "  # then JSON (cwd, env), with four fds: the worker's stdin, stdout, log and exit-status pipe
STATUS = struct.Struct("!i")  # a pid (its answers), or an exit status (its status pipes)
BLAS_THREADS = "OPENBLAS_NUM_THREADS"  # numpy's OpenBLAS starts a thread per CPU at import unless this is 1
# With no device visible and NVML asked instead of the driver, torch.cuda.is_available() says False without loading
# the driver (which CUDA_VISIBLE_DEVICES="" alone does not spare); tvm_ffi's addon would ask the same at import.
GPUS_HIDDEN = {"CUDA_VISIBLE_DEVICES": "", "PYTORCH_NVML_BASED_CUDA_CHECK": "1", "TVM_FFI_DISABLE_TORCH_C_DLPACK": "1"}


def import_environment(env: dict[str, str]) -> dict[str, str]:
    """The zygote's own environment: its workers' ``env``, with OpenBLAS at one thread unless ``env`` says otherwise,
    and no GPU to see."""
    return {BLAS_THREADS: "1", **env, **GPUS_HIDDEN}


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    parent = int(sys.argv[2])
    parent_fd = os.pidfd_open(parent)
    if os.getppid() != parent:  # gone before its pidfd was opened: that pidfd may name another process
        return
    os.nice(5)  # like a spawned worker, below the parent; the children inherit it
    before = dict(os.environ)
    import_s = worker.warm_up()
    imported = _added_by_import(before, dict(os.environ))
    unsafe = _unsafe_to_fork()
    if unsafe:
        control.send(b"unsafe " + json.dumps({"why": unsafe, "import_s": import_s}).encode())
        _refuse(control, parent_fd)
        return
    control.send(b"ready " + json.dumps({"pid": os.getpid(), "import_s": import_s, "imported": imported}).encode())
    child = _serve(control, parent_fd)
    if child is None:
        return
    _become_worker(*child, imported)
    worker.serve(sys.stdin.buffer, parent, parent_fd)


def _unsafe_to_fork() -> str | None:
    """Why forking this process now would be unsafe (other threads, CUDA initialised), or None."""
    threads = sum(1 for _ in Path("/proc/self/task").iterdir())
    if threads > 1 or threading.active_count() > 1:
        return (
            f"its imports left {threads} threads running; a fork would copy their locks, not them "
            f"({_thread_names()})"
        )
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return "its imports initialised CUDA, which does not survive a fork"
    return None


def _thread_names() -> str:
    """Which threads run: Python's by name, and the OS's by the name each has in /proc (what started them)."""
    python = _counted(thread.name for thread in threading.enumerate())
    names = []
    for task in sorted(Path("/proc/self/task").iterdir(), key=lambda path: int(path.name)):
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            names.append((task / "comm").read_text().strip())
    return f"Python's threads: {python}; the OS's threads: {_counted(names) or 'unknown'}"


def _counted(names) -> str:
    """``MainThread, openblas ×3``: each name once, in first-seen order, with how many bear it."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(name if count == 1 else f"{name} ×{count}" for name, count in counts.items())


def _refuse(control: socket.socket, parent_fd: int) -> None:
    """Turn down the requests sent before our refusal arrived, until the pool closes its end (or dies)."""
    # Closing a socket with requests unread would reset the connection, and the pool would not read why.
    while parent_fd not in select.select([control, parent_fd], [], [])[0]:
        message, fds, _, _ = socket.recv_fds(control, 1 << 20, 4)
        for fd in fds:
            os.close(fd)
        if not message:
            return


def _serve(control: socket.socket, parent_fd: int) -> tuple[list[int], dict] | None:
    """Fork a worker per request until the parent dies (None) or, in a child, return that child's fds and request."""
    children: dict[int, tuple[int, int]] = {}  # pidfd -> (pid, the status pipe's write end)
    accepting = True
    while accepting or children:
        ready = select.select([parent_fd, *children, *([control] if accepting else [])], [], [])[0]
        if parent_fd in ready:  # the notebook's process is gone; its workers see it too and exit
            return None
        for pidfd in [fd for fd in ready if fd in children]:
            _reap(pidfd, *children.pop(pidfd))
        if control not in ready:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(control, 1 << 20, 4)
        except OSError:
            message, fds = b"", []
        if not message.startswith(FORK_REQUEST) or len(fds) != 4:
            for fd in fds:
                os.close(fd)
            accepting = accepting and bool(message)  # an end of file: fork no more
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError as exc:
            control.send(STATUS.pack(-1) + str(exc).encode())
            for fd in fds:
                os.close(fd)
            continue
        if pid == 0:
            control.close()
            for pidfd, (_, status) in children.items():
                os.close(pidfd)
                os.close(status)
            return fds, json.loads(message[len(FORK_REQUEST) :])
        pidfd = os.pidfd_open(pid)  # ours to open safely: the pid is not reused before we reap it
        socket.send_fds(control, [STATUS.pack(pid)], [pidfd])
        for fd in fds[:3]:  # the child holds them now; the parent must see end of file when it exits
            os.close(fd)
        children[pidfd] = (pid, fds[3])
    return None


def _reap(pidfd: int, pid: int, status: int) -> None:
    """Collect an exited child and tell its exit status to whoever holds the status pipe."""
    _, wait_status = os.waitpid(pid, 0)
    try:
        os.write(status, STATUS.pack(os.waitstatus_to_exitcode(wait_status)))
    except BrokenPipeError:  # the pool's process no longer asks
        pass
    os.close(status)
    os.close(pidfd)


def _added_by_import(before: dict[str, str], after: dict[str, str]) -> dict[str, list[str]]:
    """What an import added to the environment: for each variable it set or changed, the entries (``os.pathsep``
    parts) it put in. TileLang's adds its TVM, library and template paths; the zygote tells the pool (so that a
    notebook's environment before and after its own import of TileLang is one compile environment) and adds them
    to each child's, as a spawned worker's import would."""
    return {
        name: [entry for entry in value.split(os.pathsep) if entry not in before.get(name, "").split(os.pathsep)]
        for name, value in after.items()
        if before.get(name) != value
    }


def _with_added(env: dict[str, str], adds: dict[str, list[str]]) -> dict[str, str]:
    """``env`` as the import that added ``adds`` would leave it: each missing entry put first, as TileLang does."""
    env = dict(env)
    for name, entries in adds.items():
        present = env.get(name, "").split(os.pathsep)
        missing = [entry for entry in entries if entry not in present]
        if missing:
            env[name] = os.pathsep.join([*missing, *([env[name]] if env.get(name) else [])])
    return env


def _become_worker(fds: list[int], request: dict, imported: dict[str, list[str]]) -> None:
    """In a forked child: the worker's environment (with what TileLang's import adds), its request, reply and
    log fds on 0-2, a session and signals of its own, new seeds."""
    os.environ.clear()  # what a spawned worker would have had (the imports saw it, but for GPUS_HIDDEN)
    os.environ.update(_with_added(request["env"], imported))
    with contextlib.suppress(OSError):  # a folder since removed: a spawned worker would not have started there
        os.chdir(request["cwd"])
    for fd, target in zip(fds[:3], (0, 1, 2), strict=True):
        os.dup2(fd, target)
    for fd in fds:  # the status pipe is the zygote's to write
        os.close(fd)
    os.setsid()  # as a spawned worker's start_new_session: a Ctrl-C in a terminal reaches the notebook only
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for name in ("SIGTERM", "SIGHUP", "SIGCHLD", "SIGUSR1", "SIGUSR2"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    numpy = sys.modules.get("numpy")
    if numpy is not None:  # the standard library's random re-seeds itself at fork; numpy's global state does not
        numpy.random.seed()


if __name__ == "__main__":
    main()
