"""``tilelab report | diff | tune | cache | repro``: reports, CI checks, sweeps, TileLang's cache and reproducers.

Exit codes: 0 done; 1 the kernel failed to compile (``report``), every config
failed (``tune``) or a ``--fail-on`` aspect changed (``diff``); 2 bad input (one
line on stderr); 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any, NoReturn

import tilelab
from tilelab.changes import ASPECTS, record_changes
from tilelab.cli import cache as cache_command
from tilelab.cli import repro as repro_command
from tilelab.cli.load import UsageError
from tilelab.errors import KernelCompileError
from tilelab.targets import TargetError
from tilelab.tune.budget import duration_of, looks_like_duration

__all__ = ["main"]

USAGE_ERROR, CHANGED, FAILED, INTERRUPTED = 2, 1, 1, 130
_RUNS_CODE = (
    "report, tune and repro run code: FILE.py is imported (its top level runs, as with any import) and "
    "--args is evaluated as Python. Use them only on files and expressions you trust."
)


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line (argparse prints the whole usage first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tilelab",
        description="TileLab: reports, comparisons and tuning sweeps of TileLang kernels.",
        epilog=_RUNS_CODE,
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")

    report = commands.add_parser("report", help="one standalone HTML report (or the record as JSON) of a kernel", epilog=_RUNS_CODE)
    report.add_argument("kernel", metavar="FILE.py::KERNEL")
    _add_target(report, cpu=False)
    report.add_argument("--args", metavar="EXPR", help="a Python expression giving a tuple (positional) or dict (keywords); it runs as code in FILE's namespace")
    report.add_argument("-o", "--output", type=Path, help="the file to write (default KERNEL.html, or KERNEL.json)")
    report.add_argument("--json", action="store_true", help="write the record as JSON (tilelab.load reads it)")

    diff = commands.add_parser("diff", help="compare two saved records: HTML report, text summary, CI exit code")
    diff.add_argument("before", metavar="A.json")
    diff.add_argument("after", metavar="B.json")
    diff.add_argument("-o", "--output", type=Path, default=Path("diff.html"), help="the HTML file (default diff.html)")
    diff.add_argument("--fail-on", type=_aspects, default=(), metavar="ASPECTS",
                      help="exit 1 when any of these changed: registers,spills,shared,passes,launch")

    tune = commands.add_parser("tune", help="compile (and run, where possible) every config of a grid", epilog=_RUNS_CODE)
    tune.add_argument("kernel", metavar="FILE.py::KERNEL")
    tune.add_argument("params", nargs="*", metavar="PARAM=V1,V2", help="swept (several values) or fixed parameters")
    _add_target(tune, cpu=True)
    tune.add_argument("--args", metavar="EXPR", help="a Python expression giving a tuple (positional) or dict (keywords); it runs as code in FILE's namespace")
    tune.add_argument("--out", type=Path, help="rows.csv or rows.parquet (default KERNEL.csv)")
    tune.add_argument("--db", help="the tuning history (default $TILELAB_DB or ~/.tilelab/tilelab.db)")
    tune.add_argument("--workers", type=_positive(int), help="compile processes (default one per CPU)")
    tune.add_argument("--timeout", type=_positive(float), help="seconds one config may compile (default 120)")
    tune.add_argument("--force", action="store_true", help="measure again configs already in the history")
    tune.add_argument("--search", choices=("grid", "optuna", "auto"), help="grid (default), an Optuna search, or auto")
    tune.add_argument("--budget", type=_budget,
                      help="configs a search may measure (a number, or a fraction 0 < f <= 1), or wall-clock time (90s, 3m, 1h)")
    tune.add_argument("--seed", type=int, help="the search's seed")
    tune.add_argument("--sampler", choices=("tpe", "gp", "random"), help="the search's sampler (default tpe)")
    cache = commands.add_parser("cache", help="TileLang's kernel cache: entries, size, duplicates; prune it (a dry run unless --yes)")
    cache_command.configure(cache, _Parser)

    repro = commands.add_parser("repro", help="a standalone Python file that reproduces a kernel's compile (needs only tilelang and torch)",
                                epilog=_RUNS_CODE)  # fmt: skip
    repro.add_argument("kernel", metavar="FILE.py::KERNEL")
    _add_target(repro, cpu=True)
    repro.add_argument("--args", metavar="EXPR", help="a Python expression giving a tuple (positional) or dict (keywords); it runs as code in FILE's namespace")
    repro.add_argument("-o", "--output", type=Path, help="the file to write (default repro_KERNEL.py)")
    return parser


def _budget(text: str) -> int | float | str:
    """``40`` configs, ``0.3`` of the space, or ``3m`` of wall-clock time (no config starts after it)."""

    if looks_like_duration(text):
        try:
            duration_of(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected a duration such as 90s, 3m or 1h30m") from None
        return text
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    raise argparse.ArgumentTypeError(f"{text!r}: expected a number of configs or a fraction (e.g. 40 or 0.3), or a duration (3m)")


def _add_target(parser: argparse.ArgumentParser, cpu: bool) -> None:
    where = parser.add_mutually_exclusive_group() if cpu else parser
    where.add_argument("--arch", help="the CUDA arch to lower for without a GPU (sm_80, sm_90, ...; default sm_90)")
    if cpu:
        where.add_argument("--target", help="'c' for CPU kernels")


def _aspects(text: str) -> tuple[str, ...]:

    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in ASPECTS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"{text!r}: choose among {','.join(ASPECTS)}")
    return names


def _positive(kind: type) -> Any:
    def read(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r}: expected a positive number")
        return value

    read.__name__ = kind.__name__
    return read


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code."""
    options = _parser().parse_args(argv)
    command = {"report": _report, "diff": _diff, "tune": _tune, "cache": _cache, "repro": repro_command.run}[options.command]
    try:
        with warnings.catch_warnings():  # restores showwarning: main() may run inside a Python session

            def one_line(message: Any, category: type, *_: Any, **__: Any) -> None:
                print(f"tilelab {options.command}: {category.__name__}: {message}", file=sys.stderr)

            warnings.showwarning = one_line  # the user's warning is one line, not our source line
            return command(options)
    except UsageError as exc:
        print(f"tilelab {options.command}: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print(f"tilelab {options.command}: interrupted", file=sys.stderr)
        return INTERRUPTED


def _report(options: argparse.Namespace) -> int:
    from tilelab.cli.load import call_arguments, compiled_arguments, load_kernel

    compiled_arguments(options.args)  # a typo fails before the (slow) import of the kernel's file
    name, kernel, namespace = load_kernel(options.kernel)
    args, kwargs = call_arguments(options.args, namespace)
    output = options.output or Path(f"{name}.{'json' if options.json else 'html'}")

    error = None
    try:
        record = tilelab.explore(kernel, *args, arch=options.arch, **kwargs)
    except TargetError as exc:
        raise UsageError(f"--arch {options.arch}: {exc}") from None
    except KernelCompileError as exc:
        record, error = exc.record, exc
    _write(output, record.to_json() if options.json else _standalone(record))
    print(f"wrote {output}")
    if error is not None:
        print(f"tilelab report: {_located(record, error, kernel)}", file=sys.stderr)
        return FAILED
    return 0


def _standalone(record: Any) -> str:
    from tilelab.sharing import html_document, to_html

    return html_document(to_html(record), f"TileLab — {record.name} ({record.arch})")


def _located(record: Any, error: Exception, kernel: Any) -> str:
    """The compile error as one line after ``file:line``: the line it names, else where the kernel starts."""
    from tilelab import _tilelang as tl

    text = record.error.message if record.error else str(error)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "failed to compile")
    where, line = (record.error.file, record.error.line) if record.error else (None, None)
    origin, span = tl.kernel_origin(kernel), tl.kernel_span(kernel)
    if not line and span is not None and where in (None, origin):
        where, line = origin, span[0]
        first = f"{first} (in {record.name}; the compiler named no line)"
    if where and line:
        where = f"{where}:{line}"
    return f"{where}: {first}" if where else first


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _diff(options: argparse.Namespace) -> int:
    from tilelab.cli.load import read_record
    from tilelab.sharing import html_document
    from tilelab.views.compare import CompareView

    before, after = read_record(options.before), read_record(options.after)
    changes = record_changes(before, after)
    _write(options.output, html_document(CompareView(before, after).to_html(), f"TileLab — {changes.label}"))
    print("\n".join(changes.lines()))
    print(f"wrote {options.output}")
    failing = [aspect for aspect in options.fail_on if changes.changed(aspect)]
    if failing:
        print(f"changed: {', '.join(failing)}")
        return CHANGED
    return 0


def _cache(options: argparse.Namespace) -> int:
    try:
        print("\n".join(cache_command.run(options)))
    except cache_command.CacheUsageError as exc:
        raise UsageError(str(exc)) from None
    return 0


def _tune(options: argparse.Namespace) -> int:
    from tilelab.cli.load import call_arguments, compiled_arguments, kernel_spec, load_kernel
    from tilelab.cli.tune import check_output, check_params, run_tune, write_rows

    _file, name = kernel_spec(options.kernel)
    output = options.out or Path(f"{name}.csv")
    check_output(output)  # before the (slow) imports of TileLang and the kernel's file, as the --args check
    compiled_arguments(options.args)
    check_params(name, options.params)
    name, _kernel, namespace = load_kernel(options.kernel, plain_functions=True)
    call = call_arguments(options.args, namespace)
    chosen = {"arch": options.arch, "target": options.target, "db": options.db, "workers": options.workers,
              "timeout": options.timeout, "force": options.force or None, "search": options.search,
              "budget": options.budget, "seed": options.seed, "sampler": options.sampler}
    result = run_tune(name, namespace, call, options.params, {k: v for k, v in chosen.items() if v is not None})
    best = result.best
    found = f"; best {best.latency_ms:.4g} ms at {best.label()}" if best else ""
    print(f"{result.kernel_name}: {result.done}/{result.total} configs, {result.num_errors} failed{found}")
    for line in (result.verdict_text(), result.coverage() if result.budget_reached else "", result.timeline_summary()):
        if line:
            print(line)
    write_rows(result, output, options.db)
    print(f"wrote {output}")
    if result.partial:
        return INTERRUPTED
    rows = result.ordered_rows()
    if rows and not any(row.ok for row in rows):
        first = rows[0]
        why = next((line.strip() for line in (first.error or "").splitlines() if line.strip()), first.status.value)
        print(f"tilelab tune: every config failed; the first, {first.label()}: {first.status.value}: {why}", file=sys.stderr)
        return FAILED
    return 0
