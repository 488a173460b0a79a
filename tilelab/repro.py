"""Reproducers: one standalone Python file that compiles a kernel again, for people without TileLab.

A :class:`ReproCase` is what the file needs (the kernel's source, its
arguments, target, pass configs and compile options, what was observed); it is
built from a :class:`~tilelab.records.KernelRecord` here, or from a tuning row
by :mod:`tilelab.tune.repro`. :func:`reproducer_text` writes the file: a
header of comments saying what TileLab observed, the kernel's source (the
imports and definitions it needs from its cell or file, nothing else: a cell
that also ran ``tilelab.tune(...)`` must not run it again), the check that
:mod:`tilelab._repro_main` holds, and the call. The file imports only
``tilelang`` and ``torch``.
"""

from __future__ import annotations

import ast
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilelab.provenance import KernelSource

__all__ = ["ReproCase", "argument_expression", "case_of_record", "error_signatures", "kernel_module_text",
           "reproducer_of_record", "reproducer_text"]  # fmt: skip

_TENSOR = re.compile(r"^Tensor\[([\d, ]*); (?:torch\.)?(\w+)\]$")  # capture.describe_arguments' form
_POSITIONAL = re.compile(r"^arg\d+$")
_CHECK = Path(__file__).with_name("_repro_main.py")


@dataclass(frozen=True)
class ReproCase:
    """Everything a reproducer file says; ``args``, ``kwargs`` and pass-config values are Python expressions."""

    name: str
    source: KernelSource | None
    target: Any  # what tvm.target.Target takes
    run: bool  # compile and run (False: lower only, as where it was observed)
    args: tuple[str, ...] = ()
    kwargs: dict[str, str] = field(default_factory=dict)
    pass_configs: dict[str, str] = field(default_factory=dict)
    out_idx: Any = None
    execution_backend: str = ""
    compile_flags: tuple[str, ...] = ()
    observed: tuple[str, ...] = ()
    expected_error: str | None = None  # the error TileLab saw; the file says whether it reproduces
    reference: str | None = None  # source that binds ``reference(*inputs)``
    rtol: float = 1e-2
    atol: float = 1e-2
    seed: int = 0


def argument_expression(text: str) -> str:
    """A recorded argument (``Tensor[1024, 512; torch.float16]``, ``128``) as a Python expression for the file."""
    tensor = _TENSOR.match(text)
    if tensor:
        shape = tuple(int(size) for size in tensor.group(1).split(",") if size.strip())
        return f"TensorArg({shape!r}, {tensor.group(2)!r})"
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return f"None  # TileLab saw {_one_line(text)!r}, which is not a Python expression: set it by hand"
    return text


def error_signatures(message: str) -> list[str]:
    """Texts of which one appears in the compiler's error when it is the same error as ``message``.

    TileLab's message is the error's first meaningful line, sometimes prefixed with
    the exception's name and followed by a hint or a line number in parentheses.
    """
    first = next((line.strip() for line in message.splitlines() if line.strip()), message.strip())
    found = [first]
    said = re.search(r"\(the compiler said: (.*)\)$", first)
    if said:
        found.append(said.group(1))
    for text in list(found):
        if text.endswith(")") and " (" in text:
            found.append(text[: text.rindex(" (")])
    for text in list(found):
        name = re.match(r"^[A-Za-z_][\w.]*: ", text)
        if name:
            found.append(text[name.end() :])
    return list(dict.fromkeys(text for text in found if len(text) >= 8))


def kernel_module_text(source: KernelSource) -> tuple[str, bool]:
    """The kernel's function and what it needs from its cell or file: (text, whether it used ``from __future__``).

    Kept: the kernel's definition, the top-level definitions and assignments whose
    names it uses (and theirs, in turn), and the imports binding any of those names,
    in their original order. TileLab's own imports and everything else the cell did
    are left out.
    """
    # A cell's %%tilelang line (and any other IPython magic) is blanked, keeping the line numbers.
    text = "\n".join("" if line.lstrip().startswith("%") else line for line in source.text.splitlines())
    try:
        tree = ast.parse(text)
    except SyntaxError:  # not plain Python (an IPython cell): the function alone
        return "\n".join(source.function_lines) + "\n", False
    nodes = list(tree.body)
    kernel = next((n for n in nodes if _first_line(n) <= source.first_line <= n.end_lineno), None)
    if kernel is None:
        return "\n".join(source.function_lines) + "\n", False
    needed, kept = _used_names(kernel), {id(kernel)}
    changed = True
    while changed:
        changed = False
        for node in nodes:
            if id(node) not in kept and not isinstance(node, (ast.Import, ast.ImportFrom)) and _bound_names(node) & needed:
                kept.add(id(node))
                needed |= _used_names(node)
                changed = True
    future = any(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in nodes)
    lines = text.splitlines()
    chosen = [node for node in nodes if id(node) in kept or _wanted_import(node, needed)]
    return "\n\n".join("\n".join(lines[_first_line(n) - 1 : n.end_lineno]) for n in chosen) + "\n", future


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _used_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _bound_names(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    targets = [*getattr(node, "targets", []), *([node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])]
    return {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}


def _wanted_import(node: ast.stmt, needed: set[str]) -> bool:
    if not isinstance(node, (ast.Import, ast.ImportFrom)) or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
        return False
    modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    if any(module.split(".")[0] == "tilelab" for module in modules):
        return False
    bound = {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return bool(bound & needed)


def case_of_record(record: Any) -> ReproCase:
    """The :class:`ReproCase` of a :class:`~tilelab.records.KernelRecord` (failed or not)."""
    provenance = record.provenance
    parts = provenance.components if provenance is not None else None
    out_idx = json.loads(parts.out_idx) if parts is not None and parts.out_idx else None
    return ReproCase(
        name=record.name,
        source=provenance.source if provenance is not None else None,
        target=json.loads(record.target),
        run=not record.lowered_only,
        args=tuple(argument_expression(v) for k, v in record.arguments.items() if _POSITIONAL.match(k)),
        kwargs={k: argument_expression(v) for k, v in record.arguments.items() if not _POSITIONAL.match(k)},
        pass_configs=dict(parts.pass_configs) if parts is not None else {},
        out_idx=None if out_idx == [None] else out_idx,
        execution_backend=parts.execution_backend if parts is not None else "",
        compile_flags=parts.compile_flags if parts is not None else (),
        observed=_observed_of_record(record),
        expected_error=record.error.message if record.error is not None else None,
    )


def _observed_of_record(record: Any) -> tuple[str, ...]:
    state = "compiled" if not record.lowered_only else f"lowered only ({record.lowered_because or 'not compiled for a device'})"
    lines = [f"kernel {record.name} for {record.arch} ({state}), tilelang {record.tilelang_version}, "
             f"on {time.strftime('%Y-%m-%d %H:%M', time.localtime(record.created))}"]  # fmt: skip
    if record.error is not None:
        where = f" at line {record.error.line} of {record.error.file}" if record.error.line else ""
        lines.append(f"{record.error.kind} error{where}: {record.error.message}")
    if record.latency_ms is not None:
        lines.append(f"latency {record.latency_ms:.4g} ms")
    if record.device_name:
        lines.append(f"device {record.device_name}")
    if record.provenance is not None:
        lines.append(f"cache: {record.provenance.text()}")
    return tuple(lines)


def reproducer_of_record(record: Any) -> str:
    """The reproducer file of ``record`` (``KernelRecord.reproducer``)."""
    return reproducer_text(case_of_record(record))


def reproducer_text(case: ReproCase) -> str:
    """The standalone Python file of ``case``."""
    if not case.name.isidentifier():
        raise ValueError(f"{case.name!r} is not a Python name, so no reproducer can call it")
    if case.source is None:
        raise ValueError(f"{case.name}: its Python source is not known (a bare PrimFunc?), so no reproducer can be written")
    kernel, future = kernel_module_text(case.source)
    header = [
        f"TileLab reproducer of the TileLang kernel {case.name}: it needs only tilelang and torch.",
        "Run: python THIS_FILE.py   (exit 0: it compiled and passed its check; 1: it did not)",
        "",
        "What TileLab observed:",
        *(f"  {line}" for line in case.observed),
    ]
    parts = [
        *(["from __future__ import annotations", ""] if future else []),
        *(_comment(line) for line in header),
        "",
        "import tilelang  # before torch and tvm: tilelang bundles its own TVM",
        "import torch",
        "",
        _comment(f"---- the kernel, from {case.source.file} (lines {case.source.first_line}-{case.source.last_line}) ----"),
        kernel,
        _comment("---- the check (the same in every TileLab reproducer) ----"),
        _check_text(),
        _comment("---- how TileLab compiled it ----"),
        *_case_lines(case),
        "",
        'if __name__ == "__main__":',
        "    import sys",
        "",
        f"    sys.exit(main({case.name}, ARGS, KWARGS, CASE, reference))",
        "",
    ]
    return "\n".join(parts)


def _check_text() -> str:
    text = _CHECK.read_text(encoding="utf-8")
    return text[text.index("\nimport sys\n") + 1 : text.index('\nif __name__ == "__main__":')]


def _case_lines(case: ReproCase) -> list[str]:
    settings = {
        "target": repr(case.target), "run": repr(case.run), "out_idx": repr(case.out_idx),
        "execution_backend": repr(case.execution_backend), "compile_flags": repr(list(case.compile_flags)),
        "expected_errors": repr(error_signatures(case.expected_error) if case.expected_error else []),
        "rtol": repr(case.rtol), "atol": repr(case.atol), "seed": repr(case.seed),
    }  # fmt: skip
    lines = ["ARGS = (", *(_entry("    ", value) for value in case.args), ")", "KWARGS = {"]
    lines += [_entry(f"    {name!r}: ", value) for name, value in case.kwargs.items()]
    lines += ["}", "CASE = {", *(f"    {name!r}: {value}," for name, value in settings.items()), '    "pass_configs": {']
    lines += [_entry(f"        {name!r}: ", argument_expression(value)) for name, value in case.pass_configs.items()]
    lines += ["    },", "}"]
    if case.reference:
        lines += ["", case.reference.rstrip()]
    else:
        lines += ["reference = None  # none was given: the check looks for NaN and Inf in the outputs"]
    return lines


def _entry(prefix: str, value: str) -> str:
    """One element of a tuple or dict literal; a comment :func:`argument_expression` added goes after the comma."""
    expression, sep, comment = value.partition("  # ")
    return f"{prefix}{expression},{'  # ' + comment if sep else ''}"


def _comment(text: str) -> str:
    return "\n".join(f"# {line}".rstrip() for line in text.replace("\0", "").splitlines() or [""])


def _one_line(text: str) -> str:
    return " ".join(text.split())
