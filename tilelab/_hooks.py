"""Renderers that records and tuning results call by name, registered by :mod:`tilelab.display`.

Records and tune never import views (``make test`` checks it with
import-linter); a convenience such as ``layout.plot()`` looks its renderer up
here instead, once ``tilelab.display.register_renderers()`` has run (any
public TileLab call, or ``%load_ext tilelab``, does that).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["register", "render"]

_renderers: dict[str, Callable[..., Any]] = {}


def register(name: str, renderer: Callable[..., Any]) -> None:
    _renderers[name] = renderer


def render(name: str, *args: Any, **kwargs: Any) -> Any:
    """Call the renderer registered as ``name``."""
    if name not in _renderers:
        raise RuntimeError(f"TileLab's views are not loaded ({name}): call tilelab.display.register_renderers() first")
    return _renderers[name](*args, **kwargs)
