"""``tilelab repro FILE.py::KERNEL``: compile a kernel once and write its standalone reproducer (see :mod:`tilelab.repro`)."""

from __future__ import annotations

import argparse
from pathlib import Path

import tilelab
from tilelab.cli.load import UsageError, call_arguments, compiled_arguments, load_kernel
from tilelab.errors import KernelCompileError
from tilelab.targets import TargetError

__all__ = ["run"]


def run(options: argparse.Namespace) -> int:
    """Explore the kernel (a failed compile too), write ``record.reproducer()``; exit code 0 when written."""

    compiled_arguments(options.args)  # a typo fails before the (slow) import of the kernel's file
    name, kernel, namespace = load_kernel(options.kernel)
    args, kwargs = call_arguments(options.args, namespace)
    output = options.output or Path(f"repro_{name}.py")
    try:
        record = tilelab.explore(kernel, *args, arch=options.arch, target=options.target, machine_code=False, **kwargs)
    except TargetError as exc:
        raise UsageError(f"--{'target' if options.target else 'arch'}: {exc}") from None
    except KernelCompileError as exc:
        record = exc.record
    try:
        text = record.reproducer()
    except ValueError as exc:  # no Python source to put in it (a bare PrimFunc)
        raise UsageError(str(exc)) from None
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None
    observed = f"the {record.error.kind} error it raised" if record.error is not None else "a check of its outputs"
    print(f"wrote {output}: {name} with {observed}; run it with: python {output}")
    return 0
