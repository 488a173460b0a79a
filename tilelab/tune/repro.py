"""The reproducer of one tuning config: :func:`tilelab.repro.reproducer_text` of a row and its sweep.

The config's keyword arguments (the fixed ones and the swept ones), the
sweep's target and the kernel's ``@tilelang.jit`` options (its pass configs,
``out_idx``, backend and flags; a config's own ``pass_configs``) go in; the
sweep's ``reference``, when it has one, becomes the check (its source, a
``lambda`` or a ``def``); the row's status, error, latency and device are what
was observed.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import time
from typing import Any

from tilelab import _tilelang as tl
from tilelab.capture import describe_arguments
from tilelab.provenance import KernelSource
from tilelab.repro import ReproCase, argument_expression, reproducer_text

__all__ = ["case_of_row", "reference_source", "row_reproducer"]

_CONFIG_PASS_CONFIGS = "pass_configs"  # a config's own pass configs (TileLang's reserved config key)


def case_of_row(result: Any, row: Any) -> ReproCase:
    """The :class:`~tilelab.repro.ReproCase` of ``row``, a config of the sweep ``result``."""
    kernel, choice = result.kernel, result.choice
    kwargs = {**result.fixed, **row.config}
    options = tl.jit_options(kernel) or {}
    configs = {str(getattr(k, "value", k)): repr(v) for k, v in (options.get("pass_configs") or {}).items()}
    parameters = inspect.signature(tl.python_function(kernel)).parameters if callable(tl.python_function(kernel)) else {}
    if _CONFIG_PASS_CONFIGS in kwargs and _CONFIG_PASS_CONFIGS not in parameters:
        configs.update({str(getattr(k, "value", k)): repr(v) for k, v in dict(kwargs.pop(_CONFIG_PASS_CONFIGS)).items()})
    flags = options.get("compile_flags")
    lines = tl.kernel_source_lines(kernel)
    reference, rtol, atol = getattr(result, "reference", None), getattr(result, "rtol", 1e-2), getattr(result, "atol", 1e-2)
    return ReproCase(
        name=tl.kernel_name(kernel),
        source=KernelSource(*lines) if lines is not None else None,
        target=choice.spec,
        run=choice.runnable,
        args=tuple(argument_expression(v) for v in describe_arguments(tuple(result.args), {}).values()),
        kwargs={name: argument_expression(text) for name, text in describe_arguments((), kwargs).items()},
        pass_configs=configs,
        out_idx=options.get("out_idx"),
        execution_backend=str(options.get("execution_backend") or ""),
        compile_flags=(flags,) if isinstance(flags, str) else tuple(flags or ()),
        observed=_observed(result, row),
        expected_error=row.error if row.status.value == "compile_error" and row.error else None,
        reference=reference_source(reference) if reference is not None else None,
        rtol=rtol,
        atol=atol,
    )


def _observed(result: Any, row: Any) -> tuple[str, ...]:
    config = ", ".join(f"{name}={value!r}" for name, value in row.config.items())
    lines = [f"config {config} of a sweep of {result.kernel_name} on {result.device}, "
             f"{time.strftime('%Y-%m-%d %H:%M')}: {row.status.value}"]  # fmt: skip
    if row.error:
        lines.append(f"error: {row.error}")
    if row.latency_ms is not None:
        lines.append(f"latency {row.latency_ms:.4g} ms")
    if row.compile_s is not None:
        lines.append(f"compile {row.compile_s:.2f} s" + (f" ({row.cache})" if getattr(row, "cache", None) else ""))
    return tuple(lines)


def reference_source(reference: Any) -> str | None:
    """Source binding ``reference`` to the sweep's reference: its ``def``, or its ``lambda`` cut out of the line it is on."""
    try:
        text = textwrap.dedent(inspect.getsource(reference))
    except (OSError, TypeError):
        return None
    name = getattr(reference, "__name__", "")
    if name != "<lambda>":
        return f"{text.rstrip()}\n\n\nreference = {name}\n" if name.isidentifier() else None
    inner = text.strip().rstrip(",")
    for candidate in (text, f"({inner})", f"_({inner})"):  # a lambda on a continuation line: of an expression, or a call
        try:
            tree = ast.parse(candidate)
        except SyntaxError:
            continue
        lambdas = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda)]
        # None, or several on one line (which one is not known): no reference rather than a wrong one.
        return f"reference = {ast.get_source_segment(candidate, lambdas[0])}\n" if len(lambdas) == 1 else None
    return None


def row_reproducer(result: Any, row: Any) -> str:
    """The reproducer file of ``row`` (``TuneRow.repro``, ``TuneResult.repro``)."""
    return reproducer_text(case_of_row(result, row))
