"""TileLang's own examples through ``tilelab.explore`` and plain ``tilelang.lower``, per arch.

    python bench/corpus.py PATH [--arch sm_90 --arch sm_80] [--limit N] [--json OUT] [--timeout S] [--only SUBSTRING]
                                [--records DIR]

PATH is a checkout of tile-ai/tilelang (or its ``examples/``). Prints a markdown
table per arch: kernels tried, how many plain TileLang lowered, how many
TileLab explored, the TileLab-only failures (goal 0) with their errors, the
median and worst capture overhead, and the share of the explored kernels' CUDA
statement lines that the source map links to a line of their Python; then every
failure with its error. Progress goes to stderr. ``--records`` keeps each
explored kernel's record (``tilelab.load`` opens it).

How kernels are found: every ``*.py`` under PATH that mentions ``tilelang`` and
has a ``__main__`` block (test, regression and conftest files excepted) runs as
``__main__`` with no command-line arguments (so ``main()`` gets its defaults),
in its own subprocess (isolation, a timeout, a 12 GiB address-space cap).
There ``JITImpl.__call__``, ``JITImpl.compile``, ``AutoTuneImpl.__call__`` and
``tilelang.compile`` are intercepted: each records the kernel and its (args,
kwargs) and hands back a stand-in that stops the example (a private
``BaseException``) as soon as it is used, or after 60 s. So every kernel an
example builds before it needs a result is found. While the example runs it sees a stand-in sm_90 GPU:
torch's device queries answer as one, tensors meant for CUDA are made on the CPU
(real values: lengths are read from them), tilelang's current target is sm_90
and its SM-count query answers 132; a package the example imports that is not
installed (triton, einops, fla, ...) is a stub. A kernel is its Python function:
the first call of each counts, and one found in an earlier file is skipped.
``tilelang.compile(prim_func)`` kernels (also the old ``AutoTuner.from_kernel``
API's first config) are explored as bare PrimFuncs; pass configs given to that
call are applied on neither side (``explore`` takes none for a PrimFunc).

Then, per kernel and arch, in the same subprocess (after one warm-up of a tiny
kernel per arch, and one untimed elaboration of the kernel): plain is
``get_tir`` under the target then ``tilelang.lower(...,
enable_device_compile=False)`` with the pass configs TileLab uses (the
PrimFunc's annotation, the ``@jit``'s, ``TL_EMIT_LINE_DIRECTIVES``), as
``tilelab._tilelang`` does; TileLab is ``tilelab.explore(kernel, *args,
arch=..., machine_code=False, **kwargs)`` (nvcc's PTX/SASS is not capture).
Only the SM-count answer stays during lowering, on both sides. Overhead is
explore's CPU time over plain's (both include elaboration; CPU time, because
the machine is shared); wall times are in the JSON too.

Kernels wrapped in ``@tilelang.autotune`` stay in the table. Plain lowering
undecorates them: the inner ``@jit`` function with the first config of the
space merged into the kwargs (its ``pass_configs`` into the pass configs),
unless the call already gives a tunable parameter (then TileLang compiles the
call as given, and so does the bench). TileLab gets the autotuned object as the
example called it.

``--timeout`` is per step: the subprocess is killed when one discovery or one
lowering gives no news for that long; its unfinished kernels say so.

One module because the subprocess is this script run with ``--child``: the
parent (files, rows, report) and the child (discovery, both sides) share the
event format and must change together.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.abc
import importlib.machinery
import json
import os
import queue
import re
import resource
import runpy
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ARCHES = ("sm_90", "sm_80")
_SKIPPED_FILES = re.compile(r"^(test_|regression_|conftest)")
_STAND_IN_SMS = 132  # an H100 SXM's
_MEMORY_LIMIT = 12 << 30  # bytes of address space per example's subprocess
_DISCOVERY_SECONDS = 60  # per example, to reach its kernels
_ERROR_TYPE = re.compile(r"^(\w+: )+")
_NOISE_LINE = re.compile(r"^(Traceback|Stack trace|\s*File \"|\s*\d+: )")


# ---------------------------------------------------------------- parent: run files, gather rows, report


def example_files(root: Path, only: str | None) -> list[Path]:
    """Runnable example scripts under ``root``, sorted by path."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = str(path.relative_to(root))
        if _SKIPPED_FILES.match(path.name) or (only and only not in relative):
            continue
        text = path.read_text(errors="replace")
        if "tilelang" in text and "__main__" in text:
            found.append(path)
    return found


def run_file(
    path: Path, root: Path, archs: list[str], timeout: float, max_kernels: int, seen: set[str], records: Path | None = None
) -> dict:
    """Run one example's subprocess; returns ``{"file", "note", "seconds", "rows"}`` and adds its kernels to ``seen``."""
    started = time.perf_counter()
    run = _FileRun(str(path.relative_to(root)), archs, seen)
    with tempfile.TemporaryDirectory() as scratch:
        seen_file = Path(scratch, "seen.json")
        seen_file.write_text(json.dumps(sorted(seen)))
        command = [sys.executable, __file__, str(path), "--child", "--root", str(root), "--seen", str(seen_file),
                   "--limit", str(max_kernels)] + [f"--arch={arch}" for arch in archs]  # fmt: skip
        command += [f"--records={records}"] if records is not None else []
        with open(Path(scratch, "stderr.log"), "w+") as log:
            child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True, cwd=path.parent)
            ended = _follow(child, timeout, run.take)
            log.seek(0)
            if ended and "timed out" not in ended:
                ended = f"{ended}: {_one_line(log.read()[-4000:])}"
    if ended:
        run.end(ended)
    return {"file": run.file, "note": run.note, "seconds": time.perf_counter() - started, "rows": list(run.rows.values())}


@dataclass
class _FileRun:
    """One example's rows (one per kernel and arch), filled in as its subprocess reports."""

    file: str
    archs: list[str]
    seen: set[str]
    rows: dict[tuple[int, str], dict] = field(default_factory=dict)
    note: str | None = None
    in_flight: tuple[int, str, str] | None = None

    def take(self, event: dict) -> None:
        if event["event"] == "found":
            self.note = event["ended"]
            for kernel in event["kernels"]:
                self.seen.add(kernel["key"])
                for arch in self.archs:
                    self.rows[kernel["index"], arch] = {"file": self.file, **kernel, "arch": arch}
        elif event["event"] == "step":
            self.in_flight = (event["index"], event["arch"], event["tool"])
        else:
            row = self.rows[event["index"], event["arch"]]
            row.update(event["fields"])
            _print_progress(row, event["tool"])

    def end(self, why: str) -> None:
        """The subprocess stopped early (``why``): every unfinished step says so."""
        self.note = why if self.note is None else f"{self.note}; then {why}"
        for row in self.rows.values():
            for tool in ("tilelang", "tilelab"):
                if f"{tool}_ok" not in row:
                    failed = why if self.in_flight == (row["index"], row["arch"], tool) else f"not run ({why} earlier)"
                    row.update({f"{tool}_ok": False, f"{tool}_error": failed})


def _follow(child: subprocess.Popen, timeout: float, take) -> str | None:
    """Hand each JSON line of ``child`` to ``take``; kill it after ``timeout`` s without one. Returns why it ended early."""
    lines: queue.Queue = queue.Queue()

    def forward() -> None:
        for line in child.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=forward, daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            child.kill()
            child.wait()
            return f"timed out after {timeout:.0f} s"
        if line is None:
            code = child.wait()
            return None if code == 0 else f"subprocess exited with code {code}"
        take(json.loads(line))


def _print_progress(row: dict, tool: str) -> None:
    ok = row[f"{tool}_ok"]
    detail = f"{row.get(f'{tool}_s', 0):.2f} s" if ok else row[f"{tool}_error"]
    print(f"[{row['arch']}] {row['kernel']}: {tool} {'ok' if ok else 'FAILED'} ({detail})", file=sys.stderr, flush=True)


def summarise(rows: list[dict], arch: str) -> dict:
    """The table's numbers for one arch."""
    rows = [row for row in rows if row["arch"] == arch]
    both = [row for row in rows if row["tilelang_ok"] and row["tilelab_ok"]]
    explored = [row for row in rows if row["tilelab_ok"]]
    worst = max(both, key=lambda row: row["ratio"], default=None)
    return {
        "arch": arch,
        "tried": len(rows),
        "tilelang_ok": sum(row["tilelang_ok"] for row in rows),
        "tilelab_ok": sum(row["tilelab_ok"] for row in rows),
        "tilelab_only_failures": sum(row["tilelang_ok"] and not row["tilelab_ok"] for row in rows),
        "tilelang_only_failures": sum(row["tilelab_ok"] and not row["tilelang_ok"] for row in rows),
        "median_ratio": statistics.median(row["ratio"] for row in both) if both else None,
        "median_wall_ratio": statistics.median(row["wall_ratio"] for row in both) if both else None,
        "worst_ratio": worst["ratio"] if worst else None,
        "worst_kernel": worst["kernel"] if worst else None,
        "linked_share": _share(sum(row["linked_lines"] for row in explored), sum(row["cuda_lines"] for row in explored)),
    }


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def markdown(summaries: list[dict], rows: list[dict], files: list[dict], elapsed_s: float) -> str:
    """The table, then every TileLab-only failure and every TileLang failure with its error."""

    def ratio(value):
        return f"{value:.2f}×" if value is not None else "–"

    lines = ["| arch | tried | TileLang ok | TileLab ok | TileLab-only failures | median overhead | worst overhead | CUDA lines linked |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for s in summaries:
        worst = f"{ratio(s['worst_ratio'])} ({s['worst_kernel']})" if s["worst_kernel"] else "–"
        linked = f"{s['linked_share']:.1%}" if s["linked_share"] is not None else "–"
        lines.append(f"| {s['arch']} | {s['tried']} | {s['tilelang_ok']} | {s['tilelab_ok']} | "
                     f"{s['tilelab_only_failures']} | {ratio(s['median_ratio'])} | {worst} | {linked} |")  # fmt: skip
    kinds = {row["key"]: row["kind"] for row in rows}
    empty = [f for f in files if not f["rows"]]
    walls = ", ".join(f"{s['arch']} {ratio(s['median_wall_ratio'])}" for s in summaries)
    lines += ["", f"{len(kinds)} kernels from {len(files) - len(empty)} of {len(files)} example files "
              f"({list(kinds.values()).count('autotune')} in `@tilelang.autotune`); {elapsed_s:.0f} s in all. "
              "Overhead: CPU time of `tilelab.explore` / of plain `get_tir` + `tilelang.lower` "
              f"(median wall-clock ratio: {walls}). CUDA lines linked: of the statement lines inside the explored "
              "kernels' device functions, those the source map links to a line of the kernel's Python."]  # fmt: skip
    tilelab_only = [row for row in rows if row["tilelang_ok"] and not row["tilelab_ok"]]
    lines += ["", f"### TileLab-only failures: {len(tilelab_only)}", ""]
    lines += [f"- {_row_name(row)}: {row['tilelab_error']}" for row in tilelab_only] or ["None."]
    tilelang_failed = [row for row in rows if not row["tilelang_ok"]]
    lines += ["", f"### TileLang failures (TileLab's outcome shown where it differs): {len(tilelang_failed)}", ""]
    lines += [f"- {_row_name(row)}: {row['tilelang_error']}{_tilelab_differs(row)}" for row in tilelang_failed] or ["None."]
    lines += ["", f"### Example files adding no kernel (none found, or only ones found before): {len(empty)}", ""]
    lines += [f"- `{f['file']}`: {f['note']}" for f in empty] or ["None."]
    return "\n".join(lines) + "\n"


def _row_name(row: dict) -> str:
    return f"{row['arch']} `{row['kernel']}` ({row['kind']})"


def _tilelab_differs(row: dict) -> str:
    """For a TileLang failure: TileLab's outcome when it is not the same failure (TileLab words it more briefly)."""
    if row["tilelab_ok"]:
        return " (TileLab explored it)"
    theirs, ours = _ERROR_TYPE.sub("", row["tilelang_error"]), _ERROR_TYPE.sub("", row["tilelab_error"])
    same = theirs[:40] in ours or ours[:40] in theirs or row["tilelab_error"].startswith("not run")
    return "" if same else f" (TileLab: {row['tilelab_error']})"


def main() -> None:
    options = _parse_args()
    if options.child:
        return child_main(options)
    root = Path(options.path).resolve()
    if not root.is_dir():
        sys.exit(f"corpus.py: {root} is not a directory (give a tilelang checkout or its examples/)")
    if (root / "examples").is_dir():
        root = root / "examples"
    archs = options.arch or list(ARCHES)
    started = time.perf_counter()
    files, seen, kernels_left = [], set(), options.limit
    candidates = example_files(root, options.only)
    records = Path(options.records).resolve() if options.records else None
    for number, path in enumerate(candidates, 1):
        if kernels_left is not None and kernels_left <= 0:
            break
        files.append(run_file(path, root, archs, options.timeout, -1 if kernels_left is None else kernels_left, seen, records))
        found = len(files[-1]["rows"]) // len(archs)
        kernels_left = None if kernels_left is None else kernels_left - found
        print(f"({number}/{len(candidates)}) {files[-1]['file']}: {found} kernels in {files[-1]['seconds']:.0f} s; "
              f"{files[-1]['note']}", file=sys.stderr, flush=True)  # fmt: skip
    elapsed = time.perf_counter() - started
    rows = [row for f in files for row in f["rows"]]
    summaries = [summarise(rows, arch) for arch in archs]
    print(markdown(summaries, rows, files, elapsed))
    if options.json:
        report = {"format": 1, "path": str(root), "archs": archs, "tilelang": _tilelang_version(), "elapsed_s": elapsed,
                  "date": time.strftime("%Y-%m-%d"), "summary": summaries, "rows": rows,
                  "files": [{"file": f["file"], "kernels": len(f["rows"]) // len(archs), "note": f["note"],
                            "seconds": round(f["seconds"], 1)} for f in files]}  # fmt: skip
        Path(options.json).write_text(json.dumps(report, indent=1) + "\n")


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="a tilelang checkout, or an examples/ folder")
    parser.add_argument("--arch", action="append", choices=ARCHES, help="repeatable; default: sm_90 and sm_80")
    parser.add_argument("--limit", type=int, help="stop after N kernels")
    parser.add_argument("--json", help="write every row and the summary to this file")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one discovery or one lowering may take")
    parser.add_argument("--only", help="only example files whose path under PATH contains this")
    parser.add_argument("--records", help="write each explored kernel's record to this folder (ARCH/KERNEL.json)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--seen", help=argparse.SUPPRESS)
    return parser.parse_args()


def _tilelang_version() -> str:
    done = subprocess.run([sys.executable, "-c", "import tilelang; print(tilelang.__version__)"], capture_output=True, text=True)
    return done.stdout.strip()


def _one_line(text: str, limit: int = 300) -> str:
    """The first informative line of an error text, shortened."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip() and not _NOISE_LINE.match(line)]
    line = next((line for line in lines if "Error" in line), lines[0] if lines else "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


# ---------------------------------------------------------------- child: find one file's kernels, time both sides


class _StopExample(BaseException):
    """Raised when an example uses a kernel it was handed back: discovery has what it needs."""


class _StandIn:
    """What an intercepted kernel call returns: any use stops the example."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise _StopExample

    def __getattr__(self, name: str) -> Any:
        raise _StopExample

    def __iter__(self) -> Any:
        raise _StopExample


class _Interceptor:
    """Patches tilelang's kernel entry points for one example run; records the first call of each kernel."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.found: dict[str, dict] = {}

    def __enter__(self) -> _Interceptor:
        import tilelang
        from tilelang.autotuner.tuner import AutoTuneImpl
        from tilelang.jit import JITImpl

        record = self._record
        self._saved = [(JITImpl, "__call__"), (JITImpl, "compile"), (AutoTuneImpl, "__call__"), (tilelang, "compile")]
        self._saved = [(owner, name, getattr(owner, name)) for owner, name in self._saved]
        JITImpl.__call__ = JITImpl.compile = lambda kernel, *args, **kwargs: record(kernel, "jit", args, kwargs)
        AutoTuneImpl.__call__ = lambda kernel, *args, **kwargs: record(kernel, "autotune", args, kwargs)
        tilelang.compile = lambda func, *args, **kwargs: record(func, "prim_func", (), {})
        return self

    def __exit__(self, *exc: Any) -> None:
        for owner, name, original in self._saved:
            setattr(owner, name, original)

    def _record(self, kernel: Any, kind: str, args: tuple, kwargs: dict) -> _StandIn:
        kwargs = {k: v for k, v in kwargs.items() if k != "__return_kernel"}
        values = [*args, *kwargs.values()]
        if any(isinstance(value, _StandIn) for value in values):
            raise _StopExample  # fed another kernel's output: nothing real to elaborate with
        key = _kernel_key(kernel, self.root)
        self.found.setdefault(key, {"key": key, "kernel": key, "kind": kind, "object": kernel, "args": args, "kwargs": kwargs})
        return _StandIn()


def _kernel_key(kernel: Any, root: Path) -> str:
    """``file.py::function`` of a kernel's Python function (relative to root when inside it)."""
    jit = getattr(kernel, "jit_impl", kernel)
    func = getattr(getattr(jit, "func", None), "orig_func", None)
    if func is None:  # a bare PrimFunc: named by its symbol, placed at the example that compiled it
        symbol = str(kernel.attrs["global_symbol"]) if kernel.attrs and "global_symbol" in kernel.attrs else "prim_func"
        return f"{Path(sys.argv[0]).resolve().relative_to(root)}::{symbol}"
    file = Path(func.__code__.co_filename).resolve()
    return f"{file.relative_to(root) if file.is_relative_to(root) else file}::{func.__qualname__}"


@contextlib.contextmanager
def _stand_in_device(arch: str = "sm_90"):
    """An example's view of a GPU while it is searched: ``arch`` answers torch's device queries and is
    tilelang's current target, and tensors meant for CUDA live on the CPU (values are real: shapes and
    lengths are read from them)."""
    import torch
    from torch.overrides import TorchFunctionMode
    from tvm.target import Target

    def is_cuda(device: Any) -> bool:
        return isinstance(device, (str, torch.device)) and str(device).startswith("cuda")

    class CudaOnCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func is torch.Tensor.cuda:
                return args[0]
            if is_cuda(kwargs.get("device")):
                kwargs["device"] = "cpu"
            if func is torch.Tensor.to:
                args = tuple("cpu" if is_cuda(arg) else arg for arg in args)
            return func(*args, **kwargs)

    major, minor = int(arch[3:-1]), int(arch[-1])
    properties = types.SimpleNamespace(name=f"stand-in {arch} GPU", major=major, minor=minor, multi_processor_count=_STAND_IN_SMS,
                                       total_memory=80 << 30, warp_size=32, L2_cache_size=50 << 20)  # fmt: skip
    answers = {"is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
               "get_device_capability": lambda *_: (major, minor), "get_device_name": lambda *_: properties.name,
               "get_device_properties": lambda *_: properties, "set_device": lambda *_: None,
               "synchronize": lambda *_: None}  # fmt: skip
    saved = {name: getattr(torch.cuda, name) for name in answers}
    vars(torch.cuda).update(answers)
    try:
        with CudaOnCpu(), Target({"kind": "cuda", "arch": arch}), _stand_in_sm_count():
            yield
    finally:
        vars(torch.cuda).update(saved)


@contextlib.contextmanager
def _stand_in_sm_count():
    """TileLang's own SM-count query (persistent kernels ask it while they elaborate) answered without a GPU."""
    from tilelang.carver.arch import driver

    saved = driver.get_num_sms
    driver.get_num_sms = lambda device_id=0: _STAND_IN_SMS
    try:
        yield
    finally:
        driver.get_num_sms = saved


class _Stub:
    """Anything from a module that is not installed: callable, indexable, every attribute another stub."""

    def __call__(self, *args: Any, **kwargs: Any) -> _Stub:
        return _Stub()

    def __getattr__(self, name: str) -> _Stub:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub()

    def __getitem__(self, key: Any) -> _Stub:
        return _Stub()


class _StubModule(types.ModuleType):
    __version__ = "0"
    __file__ = "<not installed>"

    def __getattr__(self, name: str) -> _Stub:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub()


class _MissingModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on ``sys.meta_path``: an example's import of a package not installed here (triton, einops, ...)
    gets a stub module, since such packages serve only reference code. Imports from elsewhere still fail."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)

    def find_spec(self, name: str, path: Any, target: Any = None):
        frame = sys._getframe(1)
        while frame and (frame.f_code.co_filename.startswith("<frozen") or frame.f_code.co_filename == __file__):
            frame = frame.f_back
        if frame is None or not frame.f_code.co_filename.startswith(self.root):
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec) -> types.ModuleType:
        return _StubModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def discover(path: Path, root: Path) -> tuple[list[dict], str]:
    """Run ``path`` as ``__main__``; returns the kernels it called and how the run ended."""
    sys.argv = [str(path)]
    sys.path.insert(0, str(path.parent))
    sys.meta_path.append(_MissingModules(root))
    with _Interceptor(root) as interceptor, _stand_in_device(), _time_budget(_DISCOVERY_SECONDS) as budget:
        try:
            runpy.run_path(str(path), run_name="__main__")
            ended = "finished"
        except _StopExample:
            ended = f"stopped after {_DISCOVERY_SECONDS} s" if budget.spent else "stopped at the first use of a kernel"
        except (Exception, SystemExit) as exc:  # examples fail in every way once they reach CUDA; the kernels are found
            ended = f"{type(exc).__name__}: {_one_line(str(exc))}"
    sys.meta_path.pop()
    return list(interceptor.found.values()), ended


@contextlib.contextmanager
def _time_budget(seconds: float):
    """Stop the example (keeping what it found) when ``seconds`` pass: a CPU reference of a GPU-sized problem can take hours."""
    budget = types.SimpleNamespace(spent=False)

    def stop(*_: Any) -> None:
        budget.spent = True
        raise _StopExample

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield budget
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def plain_lower(kernel: dict, arch: str) -> dict:
    """Elaborate and lower as tilelab does, without it; returns the row's tilelang fields."""
    import tilelang
    from tvm.target import Target

    target = Target({"kind": "cuda", "arch": arch})
    (func, configs), elaborate_s, elaborate_cpu_s = _timed(lambda: _plain_elaborate(kernel, target))
    configs[tilelang.PassConfigKey.TL_EMIT_LINE_DIRECTIVES] = True

    def lower() -> None:
        with tilelang.transform.PassContext(opt_level=3, config=configs), target:
            tilelang.lower(func, target=target, enable_device_compile=False, enable_host_codegen=True)

    _, lower_s, lower_cpu_s = _timed(lower)
    return {"tilelang_s": elaborate_s + lower_s, "elaborate_s": elaborate_s, "tilelang_cpu_s": elaborate_cpu_s + lower_cpu_s}


def _plain_elaborate(kernel: dict, target: Any) -> tuple[Any, dict]:
    """The PrimFunc and its pass configs (the kernel's own annotation first, as tilelab merges them)."""
    jit, args, kwargs, configs = _undecorated(kernel)
    if kernel["kind"] == "prim_func":
        func = jit
    else:
        with target:
            func = jit.get_tir(*args, **kwargs)
    annotated = dict(func.attrs["tilelang_pass_configs"]) if func.attrs and "tilelang_pass_configs" in func.attrs else {}
    return func, {**annotated, **configs}


def _undecorated(kernel: dict) -> tuple[Any, tuple, dict, dict]:
    """(jit function or PrimFunc, args, kwargs, pass configs) to lower; an autotuned kernel takes its first config."""
    obj, args, kwargs = kernel["object"], kernel["args"], dict(kernel["kwargs"])
    if kernel["kind"] == "prim_func":
        return obj, (), {}, {}
    if kernel["kind"] == "jit":
        return obj, args, kwargs, dict(obj.pass_configs or {})
    jit = obj.jit_impl
    first = dict(next(iter(obj.configs(*args, **kwargs) if callable(obj.configs) else obj.configs)))
    parameters = list(jit.signature.parameters)
    pass_configs = dict(jit.pass_configs or {})
    if not (set(kwargs) | set(parameters[: len(args)])) & set(first):  # tilelang tunes only when no tunable is given
        pass_configs.update(first.pop("pass_configs", None) or {})
        kwargs.update({name: value for name, value in first.items() if name in parameters})
    return jit, args, kwargs, pass_configs


def tilelab_explore(kernel: dict, arch: str, records: Path | None = None) -> dict:
    """``tilelab.explore`` on the kernel as the example called it (no nvcc); returns the row's tilelab fields, and
    writes the record to ``records/<arch>/`` if given."""
    import tilelab

    def explore():
        return tilelab.explore(kernel["object"], *kernel["args"], arch=arch, machine_code=False, **kernel["kwargs"])

    record, seconds, cpu_s = _timed(explore)
    if records is not None:
        (records / arch).mkdir(parents=True, exist_ok=True)
        record.save(records / arch / (re.sub(r"[^\w.-]+", "_", kernel["key"]) + ".json"))
    return {"tilelab_s": seconds, "tilelab_cpu_s": cpu_s, "device_kernels": len(record.launches), **link_coverage(record)}


def link_coverage(record: Any) -> dict:
    """How many of the device code's statement lines inside a function the source map links to a cell line (the
    Source tab's tints), and through what (``tilelab.records.FoundThrough``)."""
    if record.source is None or record.source.source_map is None:
        return {"cuda_lines": 0, "linked_lines": 0, "linked_by": {}}
    how = {link.cuda_line: link.how.value for link in record.source.source_map.links}
    depth, body = 0, []
    for number, text in enumerate(record.source.device.splitlines(), 1):
        stripped = text.strip()
        if depth > 0 and stripped and not stripped.startswith(("#", "}", "//")) and stripped != "{":
            body.append(number)
        depth += text.count("{") - text.count("}")
    linked = [how[number] for number in body if number in how]
    return {"cuda_lines": len(body), "linked_lines": len(linked), "linked_by": {h: linked.count(h) for h in sorted(set(linked))}}


def _timed(action) -> tuple[Any, float, float]:
    """``action()``'s result, wall seconds and CPU seconds of this process (the machine is shared)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = action()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def _warm_up(archs: list[str]) -> None:
    """One tiny kernel through both sides per arch, so no timed kernel pays first-use costs."""
    import tilelang
    import tilelang.language as T

    @tilelang.jit(out_idx=[-1])
    def add(n=256):
        @T.prim_func
        def add_one(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
            with T.Kernel(1, threads=n) as _:
                for i in T.Parallel(n):
                    B[i] = A[i] + 1

        return add_one

    tiny = {"object": add, "kind": "jit", "args": (), "kwargs": {}}
    for arch in archs:
        for side in (plain_lower, tilelab_explore):
            try:
                side(tiny, arch)
            except Exception:  # a side broken for every kernel shows in every row; the warm-up must not hide that
                pass


def child_main(options: argparse.Namespace) -> None:
    """Discover one file's kernels and time both sides, one JSON line per event on the original stdout."""
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_LIMIT, _MEMORY_LIMIT))  # GPU-sized tensors, made on the CPU
    events = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # the example's and the compiler's prints must not mix with the events

    def emit(**event: Any) -> None:
        events.write(json.dumps(event) + "\n")

    import tilelang  # noqa: F401  (before tvm: it bundles its own)

    archs = options.arch or list(ARCHES)
    seen = set(json.loads(Path(options.seen).read_text()))
    found, ended = discover(Path(options.path).resolve(), Path(options.root))
    kernels = [k for k in found if k["key"] not in seen][: options.limit if options.limit >= 0 else None]
    described = [{"index": i, "key": k["key"], "kernel": k["kernel"], "kind": k["kind"], "arguments": _arguments(k)}
                 for i, k in enumerate(kernels)]  # fmt: skip
    emit(event="found", kernels=described, ended=ended)
    if kernels:
        _warm_up(archs)
    with _stand_in_sm_count():
        _time_both_sides(kernels, archs, emit, Path(options.records) if options.records else None)


def _time_both_sides(kernels: list[dict], archs: list[str], emit, records: Path | None) -> None:
    """Plain lowering then ``tilelab.explore`` for each kernel and arch; a step and a result event each."""
    explore = functools.partial(tilelab_explore, records=records)
    for index, kernel in enumerate(kernels):
        for arch in archs:
            emit(event="step", index=index, arch=arch, tool="tilelang")
            _elaborate_untimed(kernel, arch)
            plain = {}
            for tool, measure in (("tilelang", plain_lower), ("tilelab", explore)):
                emit(event="step", index=index, arch=arch, tool=tool)
                try:
                    fields = {f"{tool}_ok": True, f"{tool}_error": None, **measure(kernel, arch)}
                except Exception as exc:  # every failure of either side is a result, not the end of the run
                    fields = {f"{tool}_ok": False, f"{tool}_error": f"{type(exc).__name__}: {_one_line(str(exc))}"}
                if tool == "tilelang":
                    plain = fields
                elif fields["tilelab_ok"] and plain.get("tilelang_ok"):
                    fields["ratio"] = fields["tilelab_cpu_s"] / plain["tilelang_cpu_s"]
                    fields["wall_ratio"] = fields["tilelab_s"] / plain["tilelang_s"]
                emit(event="result", index=index, arch=arch, tool=tool, fields=fields)


def _elaborate_untimed(kernel: dict, arch: str) -> None:
    """Elaborate once before timing: a kernel's first elaboration costs more, and neither side should pay it."""
    from tvm.target import Target

    try:
        _plain_elaborate(kernel, Target({"kind": "cuda", "arch": arch}))
    except Exception:  # the timed plain step meets the same failure and reports it
        pass


def _arguments(kernel: dict) -> str:
    from tilelab.capture import describe_arguments

    return ", ".join(f"{k}={v}" for k, v in describe_arguments(kernel["args"], kernel["kwargs"]).items())


if __name__ == "__main__":
    main()
