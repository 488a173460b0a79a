"""``%%tilelang`` and ``%tilelang``: run a cell, explore the kernels it defines, show them.

The cell runs in the user namespace under a pseudo-file registered in
``linecache`` (so ``inspect.getsource`` and TileLang's parser see it and the
CUDA ``#line`` directives point back at cell lines). Records are cached on a
hash of (cell, arguments, target, tilelang version): an unchanged cell re-runs
its Python (cheap: it only defines kernels) but compiles nothing.
"""

from __future__ import annotations

import hashlib
import linecache
import shlex
import sys
import time
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from tilelab.errors import KernelCompileError, NoGPUError, error_record
from tilelab.records import KernelRecord
from tilelab.registry import default_registry
from tilelab.targets import TargetError, resolve_target

__all__ = ["TileLangMagics", "load_extension", "unload_extension"]

_SUBCOMMANDS = ("list", "show", "traceback", "tune")


@magics_class
class TileLangMagics(Magics):
    """The ``tilelang`` line and cell magic."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.registry = default_registry()
        self._cache: dict[str, tuple[list[KernelRecord], dict[str, Any]]] = {}
        self._last_log: str | None = None

    @magic_arguments()
    @argument("--args", default=None, help="Python expression for the kernel's arguments, e.g. '(A, B)' or 'dict(M=512)'")
    @argument("--arch", default=None, help="CUDA arch to lower for without a GPU (sm_80, sm_90, sm_90a, sm_100)")
    @argument("--target", default=None, help="explicit target: 'c' for CPU kernels")
    @argument("--name", default=None, help="explore only the kernel with this name")
    @argument("--no-show", action="store_true", help="bind the records but display nothing")
    @argument("--force", action="store_true", help="recompile even when the cell is unchanged")
    @argument("--bench", action="store_true", help="also time each compiled kernel on the GPU")
    @line_cell_magic
    def tilelang(self, line: str, cell: str | None = None):
        """Compile the kernels a cell defines and show their Explorer; see ``%tilelang?``.

        Line forms: ``%tilelang list``, ``%tilelang show NAME``, ``%tilelang traceback``,
        ``%tilelang tune NAME block_M=64,128 ...``.
        """
        if cell is None:
            return self._line_command(line)
        options = parse_argstring(self.tilelang, line)
        try:
            choice = resolve_target(options.arch, options.target)
        except TargetError as exc:
            raise UsageError(str(exc)) from None
        if options.bench and not choice.runnable:
            raise UsageError(str(NoGPUError("--bench")))
        key = self._cache_key(cell, options, choice.as_json())
        filename = f"<tilelang-cell-{key[:10]}>"
        kernels = self._run_cell(cell, filename, options.name)
        cached = None if options.force else self._cache.get(key)
        if cached is not None:
            records = [self.registry.add(record.with_cache_hit()) for record in cached[0]]
            compiled = cached[1]
        else:
            records, compiled = self._explore_all(kernels, options, choice)
            if all(record.ok for record in records):
                self._cache[key] = (records, compiled)
        self._bind(records, compiled)
        if options.bench:
            for name, jit_kernel in compiled.items():
                _bench(name, jit_kernel)
        if options.no_show:
            return None
        return self._show(records)

    # -- steps of the cell magic ------------------------------------------------
    def _cache_key(self, cell: str, options: Any, target: str) -> str:
        import tilelang

        normalized = "\n".join(ln.rstrip() for ln in cell.strip().splitlines())
        parts = (normalized, repr((options.args, options.name)), target, tilelang.__version__)
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def _run_cell(self, cell: str, filename: str, only: str | None) -> dict[str, Any]:
        """Run the cell in the user namespace; return the kernels it (re)defined."""
        lines = cell.splitlines(keepends=True)
        linecache.cache[filename] = (len(cell), None, lines, filename)
        before = dict(self.shell.user_ns)
        try:
            code = compile(cell, filename, "exec", dont_inherit=True)  # not our __future__ flags
            exec(code, self.shell.user_ns)
        except Exception as exc:
            error = error_record(exc, stage="cell", kernel_file=filename)
            self._last_log = error.log
            raise UsageError(_located(error.message, error.line, lines)) from None
        kernels = {
            name: value
            for name, value in self.shell.user_ns.items()
            if not name.startswith("_") and _is_kernel(value) and before.get(name) is not value
        }
        if only is not None:
            if only not in kernels:
                raise UsageError(f"--name {only}: the cell defines no kernel called {only!r} (it defines: {', '.join(kernels) or 'none'})")
            kernels = {only: kernels[only]}
        if not kernels:
            raise UsageError("the cell defines no @tilelang.jit kernel or T.prim_func to explore")
        return kernels

    def _arguments(self, expression: str | None, name: str, kernel: Any) -> tuple[tuple, dict]:
        if expression is None:
            if _is_eager(kernel):
                raise UsageError(
                    f"{name} is an eager kernel: give its tensors with --args, "
                    "e.g. --args '(tilelab.place(1024, 512), tilelab.place(512, 256))'"
                )
            return (), {}
        expression = _unquoted(expression)
        try:
            value = eval(expression, self.shell.user_ns)
        except Exception as exc:
            raise UsageError(f"--args {expression!r}: {type(exc).__name__}: {exc}") from None
        if isinstance(value, dict):
            return (), value
        return (value if isinstance(value, tuple) else (value,)), {}

    def _explore_all(self, kernels: dict[str, Any], options: Any, choice: Any) -> tuple[list[KernelRecord], dict[str, Any]]:
        """Records of every kernel (failed ones too) and the compiled kernels by name."""
        from tilelab.capture import compile_kernel

        records, compiled_kernels = [], {}
        for name, kernel in kernels.items():
            args, kwargs = self._arguments(options.args, name, kernel)
            try:
                compiled = compile_kernel(kernel, args, kwargs, choice, name=name)
            except KernelCompileError as exc:
                self._last_log = exc.record.error.log if exc.record.error else None
                records.append(self.registry.add(exc.record))
                continue
            records.append(self.registry.add(compiled.record))
            if compiled.kernel is not None:
                compiled_kernels[name] = compiled.kernel
        return records, compiled_kernels

    def _bind(self, records: list[KernelRecord], compiled: dict[str, Any]) -> None:
        names = {f"{record.name}_record": record for record in records}
        names.update({f"{name}_kernel": jit_kernel for name, jit_kernel in compiled.items()})
        names["_tl"] = records[0] if len(records) == 1 else records
        self.shell.push(names)
        for record in records:
            if not record.ok and record.error is not None:
                lines = linecache.getlines(record.error.file or "")
                print(f"{record.name}: {_located(record.error.message, record.error.line, lines)}", file=sys.stderr)
                print("(%tilelang traceback shows the full compiler log)", file=sys.stderr)

    def _show(self, records: list[KernelRecord]):
        from IPython.display import display

        from tilelab.views import record_view

        views = [record_view(record) for record in records]
        for view in views[:-1]:
            display(view)
        return views[-1]

    # -- line forms -----------------------------------------------------------------
    def _line_command(self, line: str):
        words = shlex.split(line)
        if not words or words[0] not in _SUBCOMMANDS:
            raise UsageError(f"%tilelang {line!r}: use one of {', '.join(_SUBCOMMANDS)} (or %%tilelang as a cell magic)")
        command, rest = words[0], words[1:]
        if command == "list":
            return self._list()
        if command == "show":
            if len(rest) != 1:
                raise UsageError("usage: %tilelang show NAME")
            record = self.registry.latest(rest[0])
            if record is None:
                raise UsageError(f"no kernel called {rest[0]!r} compiled in this session; %tilelang list shows them")
            from tilelab.views import record_view

            return record_view(record)
        if command == "traceback":
            if self._last_log is None:
                print("no TileLab error in this session")
            else:
                print(self._last_log)
            return None
        return self._tune(line.split(None, 1)[1] if len(words) > 1 else "")

    def _list(self):
        import pandas as pd

        rows = [record.summary() for record in self.registry.records()]
        columns = ["name", "status", "mode", "arch", "passes", "compile_s", "threads", "error", "id"]
        return pd.DataFrame(rows, columns=columns)

    def _tune(self, rest: str):
        from tilelab.tune.api import tune_from_line

        try:
            return tune_from_line(rest, self.shell.user_ns)
        except ValueError as exc:
            raise UsageError(f"%tilelang tune: {exc}") from None


def _is_kernel(value: Any) -> bool:
    module = type(value).__module__
    if not module.startswith(("tilelang", "tvm")):
        return False
    from tilelang.jit import JITImpl
    from tvm import tirx

    return isinstance(value, (JITImpl, tirx.PrimFunc))


def _is_eager(kernel: Any) -> bool:
    func = getattr(kernel, "func", None)
    return bool(getattr(func, "tensor_args", None))


def _unquoted(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _located(message: str, line: int | None, lines: list[str]) -> str:
    if line is None or not 0 < line <= len(lines):
        return message
    return f"line {line}: {message}\n  {line} | {lines[line - 1].rstrip()}"


def _bench(name: str, jit_kernel: Any) -> None:
    started = time.perf_counter()
    latency = jit_kernel.get_profiler().do_bench()
    print(f"{name}: {latency:.4f} ms per call (do_bench, {time.perf_counter() - started:.1f} s to measure)")


def load_extension(ipython: Any) -> None:
    ipython.register_magics(TileLangMagics)
    try:
        from tilelab import bridge
    except ImportError:
        return
    bridge.register(ipython)


def unload_extension(ipython: Any) -> None:
    try:
        from tilelab import bridge
    except ImportError:
        return
    bridge.unregister(ipython)
