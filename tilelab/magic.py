"""``%%tilelang`` and ``%tilelang``: run a cell, explore the kernels it defines, show them.

The cell runs in the user namespace under a pseudo-file registered in
``linecache`` (so ``inspect.getsource`` and TileLang's parser see it and the
CUDA ``#line`` directives point back at cell lines). Records are cached on a
hash of (cell, arguments, target, tilelang version): an unchanged cell re-runs
its Python (cheap: it only defines kernels) but compiles nothing.
"""

from __future__ import annotations

import linecache
import sys
import threading
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from tilelab import _tilelang as tl
from tilelab._line import LineError, option_words
from tilelab._magic_cell import CachedCell, cell_key, compile_cell, located
from tilelab._magic_lines import cache, diff, list_records, show, subcommand, why
from tilelab._time_limit import EXPLORE_TIMEOUT_S, check_timeout
from tilelab.errors import KernelCompileError, cannot_run, error_record
from tilelab.records import KernelRecord
from tilelab.registry import LIMIT, Bounded, default_registry
from tilelab.targets import TargetError, resolve_target

__all__ = ["TileLangMagics", "load_extension", "unload_extension"]

MACHINE_CODE_WAIT_S = 120.0  # how long --profile waits for the background build before showing without it


@magics_class
class TileLangMagics(Magics):
    """The ``tilelang`` line and cell magic."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.registry = default_registry()
        # Both bounded like the registry: a long session runs many distinct cells.
        self._cache: Bounded[str, CachedCell] = Bounded(LIMIT)
        self._cell_files: Bounded[str, None] = Bounded(
            LIMIT, on_evict=lambda filename, _: linecache.cache.pop(filename, None)
        )
        self._last_log: str | None = None
        self._replacing = threading.Lock()  # machine code arrives on a worker thread while --profile attaches
        self._machine_code_pending: dict[str, threading.Event] = {}  # record id -> set once its build is attached
        self._awaiting_machine_code: dict[str, list[tuple[Any, Any]]] = {}  # record id -> its shown Explorers, handles

    @magic_arguments()
    @argument("--args", default=None, help="the kernels' arguments, a Python expression evaluated before the cell runs: '(A, B)' or 'dict(M=512)'")
    @argument("--arch", default=None, help="CUDA arch to lower for without a GPU (sm_80, sm_90, sm_90a, sm_100)")
    @argument("--target", default=None, help="explicit target: 'c' for CPU kernels (a kernel whose @jit says target='c' needs none)")
    @argument("--name", default=None, help="explore only the kernel with this name")
    @argument("--no-show", action="store_true", help="bind the records but display nothing")
    @argument("--force", action="store_true", help="recompile even when the cell is unchanged")
    @argument("--bench", action="store_true", help="also time each compiled kernel where it runs: the GPU, or the CPU for a CPU kernel")
    @argument("--profile", action="store_true", help="also run each compiled kernel once under Nsight Compute (ncu)")
    @argument("--no-machine-code", action="store_true", help="skip building PTX/SASS/resources with nvcc")
    @argument("--timeout", type=float, default=EXPLORE_TIMEOUT_S, metavar="S", help="seconds each kernel may take to elaborate and lower (default 600)")
    @line_cell_magic
    def tilelang(self, line: str, cell: str | None = None):
        """Compile the kernels a cell defines and show their Explorer; see ``%tilelang?``.

        Line forms: ``%tilelang list``, ``%tilelang show NAME``, ``%tilelang diff NAME [A B]``,
        ``%tilelang why NAME [A B]``, ``%tilelang cache [prune ...]``, ``%tilelang traceback``,
        ``%tilelang tune NAME block_M=64,128 ...``.
        """
        if cell is None:
            return self._line_command(line)
        options = self._options(line)
        try:
            choice = resolve_target(options.arch, options.target)
        except TargetError as exc:
            raise UsageError(str(exc)) from None
        if options.profile and not choice.runnable:
            raise UsageError(str(cannot_run("--profile", choice)))
        code, filename = self._compile_cell(cell, f"%%tilelang {line}".rstrip())
        arguments = self._evaluate_arguments(options.args)
        key = self._cache_key(cell, code, options, arguments, choice.as_json())
        cached = None if options.force else self._cache.get(key)
        # A hit restores what the cell bound rather than re-running it: TileLang's decorator
        # rewrites each kernel's AST (~50 ms), and nothing the key covers has changed.
        kernels, bindings = (cached.kernels, cached.bindings) if cached is not None else self._run_cell(code, filename, options.name)
        if options.bench:  # before anything is compiled or bound: a cell none of whose kernels can run here is refused
            from tilelab._magic_bench import bench_lines, refuse_unless_one_runs

            refuse_unless_one_runs(kernels, options)
        if cached is not None:
            self.shell.push(bindings)
            records = [self.registry.add(record.with_cache_hit()) for record in cached.records]
            compiled = cached.compiled
        else:
            records, compiled = self._explore_all(kernels, arguments, options)
            if all(record.ok for record in records):
                self._cache[key] = CachedCell(records, compiled, kernels, bindings)
        self._bind(records, compiled, announce_errors=options.no_show)
        if cached is None and not options.no_machine_code:  # after binding: a cached build can finish at once
            for record in records:
                self._build_machine_code(record, key, compiled.get(record.name))
        if options.bench:
            print("\n".join(bench_lines(records, compiled, kernels, lambda n, k: self._arguments(arguments, n, k), options)))
        if options.profile:
            records = self._profile(records, compiled, key)
        if options.no_show:
            return None
        return self._show(records, since=cached is None)

    # -- steps of the cell magic ------------------------------------------------
    def _options(self, line: str) -> Any:
        """The cell magic's options, read by the one line reader (quoted values unquoted); bad input is one line."""
        try:
            options = self.tilelang.parser.parse_args(option_words(line))
            check_timeout(options.timeout)
        except (LineError, ValueError) as exc:
            raise UsageError(f"%%tilelang {exc}".replace("timeout=", "--timeout ")) from None
        return options

    def _compile_cell(self, cell: str, magic_line: str | None = None) -> tuple[Any, str]:
        """The cell's code object under its pseudo-file (:func:`tilelab._magic_cell.compile_cell`)."""
        return compile_cell(cell, self._cell_files, magic_line)

    def _cache_key(self, cell: str, code: Any, options: Any, arguments: Any, target: str) -> str:
        return cell_key(cell, code, options.name, arguments, target, self.shell.user_ns)

    def _run_cell(self, code: Any, filename: str, only: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Run the cell in the user namespace; return the kernels it defined and everything it bound."""
        before = dict(self.shell.user_ns)
        try:
            exec(code, self.shell.user_ns)
        except Exception as exc:  # the user's cell can raise anything: one located line, not a traceback
            error = error_record(exc, stage="cell", kernel_file=filename)
            self._last_log = error.log
            raise UsageError(located(error.message, error.line, linecache.getlines(filename))) from None
        bindings = {name: value for name, value in self.shell.user_ns.items() if before.get(name, _MISSING) is not value}
        kernels = {name: value for name, value in bindings.items() if not name.startswith("_") and tl.is_kernel(value)}
        if only is not None:
            if only not in kernels:
                raise UsageError(f"--name {only}: the cell defines no kernel called {only!r} (it defines: {', '.join(kernels) or 'none'})")
            kernels = {only: kernels[only]}
        if not kernels:
            raise UsageError("the cell defines no @tilelang.jit, @tilelang.autotune kernel or T.prim_func to explore")
        return kernels, bindings

    def _evaluate_arguments(self, expression: str | None) -> Any:
        if expression is None:
            return None
        try:
            return eval(expression, self.shell.user_ns)
        except Exception as exc:  # a bad --args expression is a usage error, whatever it raised
            raise UsageError(f"--args {expression!r}: {type(exc).__name__}: {exc}") from None

    @staticmethod
    def _arguments(value: Any, name: str, kernel: Any) -> tuple[tuple, dict]:
        if value is None:
            if tl.is_eager(kernel):
                raise UsageError(
                    f"{name} is an eager kernel: give its tensors with --args, "
                    "e.g. --args '(tilelab.place(1024, 512), tilelab.place(512, 256))'"
                )
            return (), {}
        if isinstance(value, dict):
            return (), value
        return (value if isinstance(value, tuple) else (value,)), {}

    def _explore_all(self, kernels: dict[str, Any], arguments: Any, options: Any) -> tuple[list[KernelRecord], dict[str, Any]]:
        """Records of every kernel (failed and timed-out ones too) and the compiled kernels by name; each compiles for
        the cell's ``--arch`` or ``--target``, else for the CPU target its own ``@jit`` names, if any."""
        from tilelab.capture import compile_kernel, kernel_target

        records, compiled_kernels = [], {}
        for name, kernel in kernels.items():
            args, kwargs = self._arguments(arguments, name, kernel)
            choice = kernel_target(kernel, options.arch, options.target)
            try:
                compiled = compile_kernel(kernel, args, kwargs, choice, name=name, timeout=options.timeout)
            except KernelCompileError as exc:
                self._last_log = exc.record.error.log if exc.record.error else None
                records.append(self.registry.add(exc.record))
                continue
            records.append(self.registry.add(compiled.record))
            if compiled.kernel is not None:
                compiled_kernels[name] = compiled.kernel
        return records, compiled_kernels

    def _bind(self, records: list[KernelRecord], compiled: dict[str, Any], announce_errors: bool) -> None:
        """Push the records and kernels; with ``announce_errors`` (nothing shown) each failure is one line on stderr."""
        names = {f"{record.name}_record": record for record in records}
        names.update({f"{name}_kernel": jit_kernel for name, jit_kernel in compiled.items()})
        names["_tl"] = records[0] if len(records) == 1 else records
        self.shell.push(names)
        if not announce_errors:
            return  # the shown Explorer says it once, with the line linked to the editor
        for record in records:
            if not record.ok and record.error is not None:
                lines = linecache.getlines(record.error.file or "")
                print(f"{record.name}: {located(record.error.message, record.error.line, lines)}", file=sys.stderr)
                print("(%tilelang traceback shows the full compiler log)", file=sys.stderr)

    def _show(self, records: list[KernelRecord], since: bool):
        from IPython.display import display

        from tilelab.runs import since_last_run
        from tilelab.views import record_view
        from tilelab.views.compare.changes import SinceLastRunView

        views = [record_view(record) for record in records]
        for view in views[:-1]:
            self._display_explorer(view)
        if not since:  # a cell-cache hit: the line under the Explorer says so
            from tilelab.recompiled import why
            from tilelab.views.compare.changes import WhyView

            self._display_explorer(views[-1])
            hits = [WhyView(why(record, record)) for record in records]
            for line in hits[:-1]:
                display(line)
            return hits[-1]
        self._display_explorer(views[-1])
        lines = [SinceLastRunView(since_last_run(self.registry, record)) for record in records]
        for line in lines[:-1]:
            display(line)
        return lines[-1]

    def _display_explorer(self, view: Any) -> None:
        """Display ``view``; while its record's machine code builds, keep its display handle (see :meth:`_replace`)."""
        from IPython.display import DisplayHandle

        handle = DisplayHandle()
        # Displayed under the lock: a build that lands meanwhile (a cache hit lands at once) updates it only once it
        # is shown, widget and all. (A terminal prints outputs: only a kernel's front-end keeps one to update.)
        with self._replacing:
            if view.record.id in self._machine_code_pending and getattr(self.shell, "kernel", None) is not None:
                self._awaiting_machine_code.setdefault(view.record.id, []).append((view, handle))  # (a cache hit shows it again)
            handle.display(view)

    def _build_machine_code(self, record: KernelRecord, cell_key: str, jit_kernel: Any = None) -> None:
        """Build PTX/SASS/resources in the background; the finished record replaces this one everywhere."""
        from tilelab.machine.build import start_machine_code

        if not record.has_cuda_source:
            return

        attached = self._machine_code_pending[record.id] = threading.Event()

        def attach(future: Any) -> None:
            try:
                self._update(record, lambda newest: newest.with_machine_code(future.result()), cell_key)
            finally:
                with self._replacing:
                    self._machine_code_pending.pop(record.id, None)
                    self._awaiting_machine_code.pop(record.id, None)
                attached.set()

        start_machine_code(record, kernel=jit_kernel).add_done_callback(attach)

    def _newest(self, record: KernelRecord) -> KernelRecord:
        """The registry's version of ``record`` (machine code or a profile may have replaced it since)."""
        try:
            return self.registry.get(record.id)
        except KeyError:  # evicted from the bounded registry
            return record

    def _update(self, record: KernelRecord, change: Any, cell_key: str) -> KernelRecord:
        """``change`` applied to the newest version of ``record``; the result replaces it everywhere.

        The newest version, not ``record``: machine code and a profile arrive in either order, each keeps the other.
        """
        with self._replacing:
            newest = self._newest(record)
            finished = change(newest)
            self._replace(finished, cell_key)
        return finished

    def _replace(self, finished: KernelRecord, cell_key: str) -> None:
        """``finished`` (same id as a shown record) replaces it in its shown Explorers' saved snapshots, the registry,
        the cell's cache and the namespace.

        The snapshot is what the notebook saves (and nbconvert, GitHub, a reopened notebook show). It goes first: a
        notebook run in batch (nbclient, ``nbconvert --execute``) takes an update of an earlier cell's output only
        while a cell runs, and a cell that waits for the record (a registry listener) may end as soon as the registry
        has it.
        """
        for view, handle in self._awaiting_machine_code.get(finished.id, []):
            view.refresh(finished)
            try:
                if view.widget_open:
                    handle.update(view)
                else:  # its widget was closed (a later showing of the record supersedes it): the snapshot alone
                    handle.update(view.snapshot_bundle(), raw=True)
            except Exception as exc:  # the live Explorer and the record still take it; say why the saved one did not
                print(f"{finished.name}: the saved Explorer keeps its earlier snapshot ({exc})", file=sys.stderr)
        self.registry.update(finished)  # where it stands: a later run stays the current one
        cached = self._cache.get(cell_key)
        if cached is not None:
            cached.records[:] = [finished if r.id == finished.id else r for r in cached.records]
        for binding in (f"{finished.name}_record", "_tl"):
            if getattr(self.shell.user_ns.get(binding), "id", None) == finished.id:
                self.shell.user_ns[binding] = finished

    def _profile(self, records: list[KernelRecord], compiled: dict[str, Any], cell_key: str) -> list[KernelRecord]:
        """Each compiled kernel once under ncu: its frame shown and bound, its summary attached to its record.

        Returns the records as they stand once their machine code is attached (waited for, up to
        ``MACHINE_CODE_WAIT_S``), so that the Explorer shown, live or saved, has the warp samples on lines."""
        from IPython.display import display

        from tilelab.counters.ncu import profile
        from tilelab.errors import TileLabError

        by_name = {record.name: record for record in records}
        for name, jit_kernel in compiled.items():
            try:
                frame = profile(jit_kernel)
            except TileLabError as exc:  # ncu missing or refused: one line, the rest of the cell stands
                print(f"{name}: --profile: {exc}", file=sys.stderr)
                continue
            self.shell.push({f"{name}_profile": frame})
            display(frame)
            summary = frame.attrs.get("summary")
            if summary is not None and name in by_name:
                by_name[name] = self._update(by_name[name], lambda newest, found=summary: newest.with_profile(found), cell_key)
        for record in records:  # the warp samples are placed on the machine code's lines: show them placed
            if (pending := self._machine_code_pending.get(record.id)) is not None:
                pending.wait(MACHINE_CODE_WAIT_S)
        return [self._newest(by_name.get(record.name, record)) for record in records]

    # -- line forms -----------------------------------------------------------------
    def _line_command(self, line: str):
        command, rest = subcommand(line)
        if command == "list":
            return list_records(self.registry)
        if command == "show":
            return show(self.registry, rest)
        if command == "diff":
            return diff(self.registry, rest)
        if command == "why":
            return why(self.registry, rest)
        if command == "cache":
            return cache(rest)
        if command == "traceback":
            if self._last_log is None:
                print("no TileLab error in this session")
            else:
                print(self._last_log)
            return None
        return self._tune(line.split(None, 1)[1] if rest else "")

    def _tune(self, rest: str):
        from tilelab.tune.api import tune_from_line

        try:
            return tune_from_line(rest, self.shell.user_ns)
        except ValueError as exc:
            raise UsageError(f"%tilelang tune: {exc}") from None


_MISSING = object()


def load_extension(ipython: Any) -> None:
    from tilelab.display import register

    ipython.register_magics(TileLangMagics)
    register(ipython)
    _warm_compile_workers(ipython)
    try:
        from tilelab import bridge
    except ImportError:
        return
    bridge.register(ipython)


def _warm_compile_workers(ipython: Any) -> None:
    """In a Jupyter kernel, start the session's compile workers now (a zygote imports TileLang once in the
    background and forks them), so the first ``tilelab.tune`` finds them running and any later worker is a fork
    away; they stay for the session (:mod:`tilelab.tune.pool`). Returns at once: nothing here waits for the import,
    but a ``%reload_ext`` after TileLang's import while the first zygote still imports waits for its hello (what the
    import adds to the environment tells whether that zygote serves it)."""
    if getattr(ipython, "kernel", None) is None:  # a terminal IPython or a test shell: started by the first tune()
        return
    from tilelab.tune.pool import session_pool

    session_pool().warm()


def unload_extension(ipython: Any) -> None:
    try:
        from tilelab import bridge
    except ImportError:
        return
    bridge.unregister(ipython)
