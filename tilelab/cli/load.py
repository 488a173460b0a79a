"""What the command line reads: a kernel named ``FILE.py::KERNEL``, an ``--args`` expression, saved records.

Every problem with the user's input becomes a :class:`UsageError` of one line.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from typing import Any

import tilelab
from tilelab import _tilelang as tl
from tilelab.sharing import load

__all__ = ["UsageError", "call_arguments", "compiled_arguments", "kernel_spec", "load_kernel", "read_record"]


class UsageError(Exception):
    """Bad command-line input: one line on stderr, exit code 2."""


def kernel_spec(spec: str) -> tuple[Path, str]:
    """The file and the kernel's name of ``FILE.py::KERNEL``, checked without importing anything."""
    file, sep, name = spec.rpartition("::")
    if not sep or not file or not name:
        raise UsageError(f"{spec!r}: expected FILE.py::KERNEL, e.g. kernels.py::matmul")
    if not name.isidentifier():
        raise UsageError(f"{spec!r}: {name!r} is not a Python name")
    path = Path(file)
    if not path.is_file():
        raise UsageError(f"{file}: no such file")
    return path, name


def load_kernel(spec: str, plain_functions: bool = False) -> tuple[str, Any, dict[str, Any]]:
    """``(name, kernel, module namespace)`` for ``FILE.py::KERNEL``; the file is imported, not run as a script.

    With ``plain_functions`` (tuning), a plain function returning a ``PrimFunc`` is a kernel too.
    """
    path, name = kernel_spec(spec)
    file = spec.rpartition("::")[0]
    namespace = _import_file(path)
    if name not in namespace:
        found = ", ".join(_kernels_in(namespace)) or "none"
        raise UsageError(f"{file}: no kernel named {name!r} (kernels there: {found})")
    kernel = namespace[name]
    if not (_is_kernel(kernel) or (plain_functions and callable(kernel))):
        raise UsageError(
            f"{file}::{name} is a {type(kernel).__name__}, not a @tilelang.jit / @tilelang.autotune function or a PrimFunc"
        )
    return name, kernel, namespace


def _import_file(path: Path) -> dict[str, Any]:
    """Import ``path`` as a module named after it (so its ``if __name__ == "__main__"`` block does not run)."""
    path = path.resolve()
    directory = str(path.parent)
    if directory not in sys.path:
        sys.path.insert(0, directory)  # the file's own imports, and compile workers that import it by name
    name = path.stem
    by_value = not name.isidentifier() or name in sys.modules
    if by_value:
        name = "_tilelab_cli_" + "".join(ch if ch.isalnum() else "_" for ch in path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # whatever the user's file raises on import is one line about it
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise UsageError(f"{_where_raised(exc, path)}: importing it raised {_one_line(exc)}") from None
    if by_value:
        # Workers cannot import a module under this private name; cloudpickle sends its functions by value.
        import cloudpickle

        cloudpickle.register_pickle_by_value(module)
    return vars(module)


def _where_raised(exc: BaseException, path: Path) -> str:
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return f"{exc.filename}:{exc.lineno}"
    lines = [frame.lineno for frame in traceback.extract_tb(exc.__traceback__) if Path(frame.filename) == path]
    return f"{path}:{lines[-1]}" if lines else str(path)


def _one_line(exc: BaseException) -> str:
    text = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    first = next((line.strip() for line in str(text).splitlines() if line.strip()), "")
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _is_kernel(value: Any) -> bool:
    return tl.is_kernel(value)


def _kernels_in(namespace: dict[str, Any]) -> list[str]:
    return [name for name, value in namespace.items() if not name.startswith("_") and _is_kernel(value)]


def compiled_arguments(expression: str | None) -> Any:
    """``--args EXPR`` compiled (checked before the kernel's file is imported), or None."""
    if expression is None:
        return None
    try:
        return compile(expression, "--args", "eval")
    except SyntaxError:
        raise UsageError(f"--args {expression!r} is not a Python expression") from None


def call_arguments(expression: str | None, namespace: dict[str, Any]) -> tuple[tuple, dict[str, Any]]:
    """``--args EXPR`` evaluated in the kernel module's namespace: a tuple is positional, a dict keywords."""
    code = compiled_arguments(expression)
    if code is None:
        return (), {}

    scope = {"tilelab": tilelab, **namespace}
    try:
        value = eval(code, scope)
    except Exception as exc:  # the user's expression: whatever it raises is one line about it
        raise UsageError(f"--args {expression!r} raised {_one_line(exc)}") from None
    if isinstance(value, tuple):
        return value, {}
    if isinstance(value, dict) and all(isinstance(key, str) and key.isidentifier() for key in value):
        return (), value
    raise UsageError(
        f"--args {expression!r}: expected a tuple of positional arguments (one argument: '(x,)') "
        f"or a dict of keyword arguments, got {type(value).__name__}"
    )


def read_record(path: str):
    """The record saved at ``path``, or a :class:`UsageError` naming the file."""

    try:
        return load(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{path}: {_one_line(exc)}") from None
    except ValueError as exc:
        message = str(exc)
        raise UsageError(message if message.startswith(str(path)) else f"{path}: {message}") from None
