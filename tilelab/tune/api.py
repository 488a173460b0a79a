"""``tilelab.tune(...)`` and ``%tilelang tune NAME ...``: build the space, run it, keep the history."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from tilelab.tune.build import kernel_name, kernel_source, spec_of
from tilelab.tune.result import TuneResult, TuneRow
from tilelab.tune.runner import Sweep, run_sweep
from tilelab.tune.space import Space, choices, config_key
from tilelab.tune.store import RunKey, TuningStore, signature_of

__all__ = ["tune", "tune_from_line"]

_OPTIONS = ("where", "reference", "flops", "bytes", "target", "arch", "timeout", "workers", "force", "db")
_NAME = re.compile(r"^[A-Za-z_]\w*$")


def tune(
    kernel: Any,
    *args: Any,
    configs: Iterable[Mapping[str, Any]] | None = None,
    where: Callable[[dict[str, Any]], bool] | None = None,
    reference: Callable | None = None,
    flops: float | Callable[[dict], float] | None = None,
    bytes: float | Callable[[dict], float] | None = None,
    target: Any = None,
    arch: str | None = None,
    timeout: float = 120.0,
    workers: int | None = None,
    force: bool = False,
    db: str | Path | None = None,
    rtol: float = 1e-2,
    atol: float = 1e-2,
    on_row: Callable[[TuneRow], None] | None = None,
    live: bool | None = None,
    **kwargs: Any,
) -> TuneResult:
    """Compile and benchmark every config of a space; every config becomes a row.

    Parameters
    ----------
    kernel
        A ``@tilelang.jit`` function (or a plain function returning a ``PrimFunc``).
    *args, **kwargs
        Passed to every compile; keyword arguments given as :func:`~tilelab.choices`
        are swept (grid product).
    configs
        Instead of ``choices``: an iterable (a generator is fine) of config dicts.
    where
        Keep only the configs for which ``where(config)`` is true.
    reference
        A callable taking the kernel's inputs; outputs must match (``allclose``)
        or the row is a ``mismatch``.
    flops, bytes
        Work per call (a number or ``f(config)``) for the TFLOP/s and GB/s columns.
    target, arch
        ``target="c"`` runs CPU kernels; without a GPU, CUDA kernels are lowered for
        ``arch`` (default ``sm_90``) and rows record compile status only.
    timeout
        Seconds one config may compile before its worker is killed (a ``timeout`` row).
    workers
        Compile processes (default: one per available CPU).
    force
        Measure again configs already in the history for this kernel, arguments and device.
    db
        The history database (default ``$TILELAB_DB`` or ``~/.tilelab/tilelab.db``).
    on_row
        Called with each finished :class:`~tilelab.tune.result.TuneRow`.
    live
        Show the live view (default: when running in a Jupyter kernel).

    Returns
    -------
    TuneResult
        All rows; ``partial`` is True when interrupted (Ctrl-C / kernel interrupt).
    """
    from tilelab.registry import default_registry
    from tilelab.targets import resolve_target

    space = Space.build(kwargs, where=where, configs=configs)
    if target is None and arch is None:
        target = _declared_target(kernel)
    choice = resolve_target(arch, target)
    device = _device_name(choice)
    name = kernel_name(kernel)
    key = RunKey.of(name, kernel_source(kernel), signature_of(args, space.fixed), choice.as_json(), device)
    store = TuningStore(db)
    result = TuneResult(name, space.configs, space.swept, device, kernel, args, space.fixed, choice, runnable=choice.runnable)
    measured = {} if force else store.measured(key)
    todo = []
    for index, config in enumerate(space.configs):
        past = measured.get(config_key(config))
        if past is None:
            todo.append((index, config))
        else:
            result.add(replace(past, index=index, config=config))
    sweep = Sweep(kernel, spec_of(kernel), args, space.fixed, choice, timeout, workers, reference, rtol, atol, flops, bytes)
    registry = default_registry()
    sweep.on_progress.append(lambda: registry.track_tuning(result))
    if on_row is not None:
        sweep.on_row.append(on_row)
    view = _LiveView(result) if (live if live is not None else _in_kernel()) else None
    if view is not None:
        sweep.on_progress.append(view.refresh)
    registry.track_tuning(result)
    tilelang_version = _tilelang_version()
    try:
        run_sweep(sweep, result, todo, lambda row: store.write(key, result.id, row, tilelang_version))
    finally:
        registry.track_tuning(result)
        if view is not None:
            view.finish()
    return result


def _declared_target(kernel: Any) -> Any:
    declared = getattr(kernel, "target", None)
    return declared if isinstance(declared, str) and declared.lower() in ("c", "llvm") else None


def _device_name(choice: Any) -> str:
    if not choice.runnable:
        return f"none (lowered for {choice.arch})"
    if choice.is_cuda:
        import torch

        return torch.cuda.get_device_name()
    return f"cpu: {_cpu_model()}"


@cache
def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    import platform

    return platform.processor() or platform.machine()


def _tilelang_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tilelang")
    except PackageNotFoundError:
        return ""


def _in_kernel() -> bool:
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and getattr(shell, "kernel", None) is not None


class _LiveView:
    """The view shown while a sweep runs; its output is replaced by the final snapshot at the end."""

    def __init__(self, result: TuneResult) -> None:
        from IPython.display import display

        from tilelab.views.tuning import TuningView

        self.view = TuningView(result)
        self.handle = display(self.view, display_id=True)

    def refresh(self) -> None:
        self.view.refresh()

    def finish(self) -> None:
        self.view.refresh(final=True)
        self.handle.update(self.view)  # the widget stays; the saved text/html is the finished table


def tune_from_line(line: str, user_ns: dict[str, Any]) -> TuneResult:
    """Run ``%tilelang tune NAME [ARGS...] key=v1,v2 ... [timeout=60] [target='c']``.

    ``NAME`` is a kernel in ``user_ns``; bare tokens are positional arguments;
    ``key=v1,v2,...`` sweeps ``key`` over the values, ``key=v`` fixes it. Values
    are Python literals (or names defined in the notebook); ``where`` takes a
    string expression over the parameters, e.g. ``where='block_M*block_N<=16384'``.

    Raises
    ------
    ValueError
        With one line naming the token that could not be read.
    """
    tokens = _split(line)
    if tokens[:1] == ["tune"]:
        tokens = tokens[1:]
    if not tokens:
        raise ValueError("usage: %tilelang tune NAME [ARGS...] param=v1,v2,... [timeout=S] [target=c]")
    name, *rest = tokens
    if name not in user_ns:
        raise ValueError(f"no kernel named {name!r} in the notebook")
    args, kwargs = [], {}
    for token in rest:
        key, sep, text = token.partition("=")
        if not sep:
            if kwargs:
                raise ValueError(f"positional argument {token!r} after keyword arguments")
            args.append(_value(token, text=token, user_ns=user_ns))
        elif not _NAME.match(key):
            raise ValueError(f"{token!r}: {key!r} is not a parameter name")
        elif key == "where":
            kwargs[key] = _where(token, _unquoted(text))
        elif key in ("target", "arch") and _NAME.match(text):
            kwargs[key] = text
        else:
            values = _values(token, text, user_ns)
            if len(values) > 1 and key in _OPTIONS:
                raise ValueError(f"{token!r}: {key} takes one value")
            kwargs[key] = choices(values) if len(values) > 1 else values[0]
    return tune(user_ns[name], *args, **kwargs)


def _split(line: str) -> list[str]:
    """Whitespace-separated tokens; quotes and brackets kept (values stay Python literals)."""
    tokens, current, depth, quote = [], [], 0, ""
    for char in line:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char.isspace() and depth == 0:
            if current:
                tokens.append("".join(current))
            current = []
            continue
        current.append(char)
    if quote or depth:
        raise ValueError(f"unbalanced {'quote' if quote else 'brackets'} in {line.strip()!r}")
    if current:
        tokens.append("".join(current))
    return tokens


def _unquoted(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _values(token: str, text: str, user_ns: dict[str, Any]) -> list[Any]:
    try:
        items = ast.parse(f"[{text}]", mode="eval").body.elts
    except SyntaxError:
        raise ValueError(f"cannot read {token!r}: expected comma-separated Python literals") from None
    if not items:
        raise ValueError(f"{token!r} has no value")
    return [_value(token, ast.get_source_segment(f"[{text}]", item), user_ns) for item in items]


def _value(token: str, text: str, user_ns: dict[str, Any]) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        if _NAME.match(text) and text in user_ns:
            return user_ns[text]
        raise ValueError(f"cannot read {token!r}: {text!r} is not a Python literal nor a name in the notebook") from None


def _where(token: str, expression: str) -> Callable[[dict[str, Any]], bool]:
    try:
        code = compile(expression, "<where>", "eval")
    except SyntaxError:
        raise ValueError(f"{token!r}: {expression!r} is not a Python expression") from None
    return lambda config: bool(eval(code, {"__builtins__": {}}, dict(config)))
