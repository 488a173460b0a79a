"""Tuning: spaces, the parallel runner, result rows and the SQLite history.

``tilelab.tune`` is both this package and the function users call
(``tilelab.tune(kernel, block_M=tilelab.choices([64, 128]))``). Importing any
submodule binds the package to the attribute ``tilelab.tune``, replacing the
function; the package is therefore callable itself and forwards to
:func:`tilelab.tune.api.tune`.
"""

from __future__ import annotations

import sys
import types
from typing import Any

__all__ = ["tune"]


def tune(kernel: Any, *args: Any, **kwargs: Any):
    """Compile and benchmark every config of a space; see :func:`tilelab.tune.api.tune`."""
    from tilelab.tune.api import tune as _tune

    return _tune(kernel, *args, **kwargs)


class _CallablePackage(types.ModuleType):
    def __call__(self, kernel: Any, *args: Any, **kwargs: Any):
        return tune(kernel, *args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
