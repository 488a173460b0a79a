"""One live widget tree per shown item: showing a record again closes the widgets of its previous showing.

Every display of a view builds a widget tree (the Explorer's is ~30 widgets),
and the kernel keeps each widget, and whatever its callbacks hold, until it is
closed. Views with a key (the Explorer: the record's id) register their tree
here when they build it; a newer tree of the same key closes the older one, and
past :data:`LIMIT` keys the least recently shown tree is closed. A closed
output goes blank in a live notebook; a view shown again builds a new tree.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

__all__ = ["LIMIT", "LiveViews", "close_tree", "live_views"]

LIMIT = 64


class LiveViews:
    """The live widget trees of this session, by view key, least recently shown first."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._trees: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def adopt(self, key: Hashable, widget: Any) -> None:
        """Make ``widget`` the live tree of ``key``, closing the tree it supersedes and any beyond the limit."""
        with self._lock:
            superseded = [] if self._trees.get(key) in (None, widget) else [self._trees[key]]
            self._trees[key] = widget
            self._trees.move_to_end(key)
            while len(self._trees) > self.limit:
                superseded.append(self._trees.popitem(last=False)[1])
        for tree in superseded:
            close_tree(tree)

    def get(self, key: Hashable) -> Any:
        """The live tree of ``key`` (None when there is none or it was closed); it becomes the most recent."""
        with self._lock:
            tree = self._trees.get(key)
            if tree is None or getattr(tree, "comm", None) is None:
                return None
            self._trees.move_to_end(key)
            return tree

    def __len__(self) -> int:
        return len(self._trees)

    def clear(self) -> None:
        """Close every live tree."""
        with self._lock:
            trees = list(self._trees.values())
            self._trees.clear()
        for tree in trees:
            close_tree(tree)


def close_tree(root: Any) -> None:
    """Close ``root`` and every widget it holds, in traits or attributes (layouts and styles too)."""
    from ipywidgets import Widget

    seen, stack = set(), [root]
    while stack:
        widget = stack.pop()
        if id(widget) in seen:
            continue
        seen.add(id(widget))
        values = [getattr(widget, name, None) for name in widget.keys] + list(vars(widget).values())
        for value in values:
            items = value if isinstance(value, (list, tuple)) else (value,)
            stack += [item for item in items if isinstance(item, Widget)]
        widget.close()


@functools.cache
def live_views() -> LiveViews:
    """The live trees of this Python session."""
    return LiveViews()
