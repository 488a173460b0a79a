"""Optional dependencies: import them where used, or say which extra installs them."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["MissingExtraError", "require"]


class MissingExtraError(ImportError):
    """A feature needs an optional dependency that is not installed; the message names the extra."""


def require(module: str, feature: str, extra: str = "cluster") -> ModuleType:
    """Import ``module`` for ``feature``, or raise :class:`MissingExtraError` naming ``pip install 'tilelab[extra]'``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f"{feature} needs {module.split('.')[0]}, which is not installed: pip install 'tilelab[{extra}]'"
        ) from None
