"""A strict little HTML tree for tests: every non-void tag must close, in order."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)
    text: str = ""

    def iter(self):
        yield self
        for child in self.children:
            yield from child.iter()

    def find_all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        return [
            n
            for n in self.iter()
            if (tag is None or n.tag == tag) and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def all_text(self) -> str:
        return self.text + "".join(child.all_text() for child in self.children)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root")
        self.stack = [self.root]
        self.first_only = False
        self.done = False

    def handle_starttag(self, tag, attrs):
        if self.done:
            return
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        if not self.done:
            self.stack[-1].children.append(Node(tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in VOID or self.done:
            return
        open_tag = self.stack[-1].tag
        if open_tag != tag:
            raise AssertionError(f"</{tag}> closes <{open_tag}> at {self.getpos()}")
        self.stack.pop()
        self.done = self.first_only and len(self.stack) == 1

    def handle_data(self, data):
        if self.done:
            return
        text = Node("#text", text=data)
        self.stack[-1].children.append(text)


def parse(markup: str) -> Node:
    """The tree of ``markup``; raises AssertionError when a tag is left open or closed out of order."""
    builder = _Builder()
    builder.feed(markup)
    builder.close()
    if len(builder.stack) != 1:
        raise AssertionError(f"unclosed tags: {[n.tag for n in builder.stack[1:]]}")
    return builder.root


def parse_element(markup: str) -> Node:
    """The tree of the first element of ``markup`` (what follows it is ignored); strict like :func:`parse`."""
    builder = _Builder()
    builder.first_only = True
    builder.feed(markup)
    builder.close()
    if not builder.done:
        raise AssertionError(f"unclosed tags: {[n.tag for n in builder.stack[1:]]}")
    return builder.root.children[0]


FORBIDDEN_TAGS = {"script", "img", "iframe", "object", "embed", "textarea", "base", "form", "frame", "frameset"}


class _Audit(HTMLParser):
    """Lenient: every start tag with its attributes, the visible text, and the text of ``<style>`` blocks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []
        self.css: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self._in_style = tag == "style"

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        (self.css if self._in_style else self.text).append(data)


def css_selectors(css: str) -> list[str]:
    """The selectors of every rule in ``css`` (no nesting, as pandas' Styler writes it)."""
    selectors = []
    for rule in css.split("}"):
        if "{" in rule:
            selectors += [s.strip() for s in rule.split("{", 1)[0].split(",") if s.strip()]
    return selectors


def assert_inert(markup: str, *texts: str) -> None:
    """``markup`` runs nothing (no script, event handler or ``javascript:`` URL; styles only scoped to ids),
    and each of ``texts`` is visible in it as plain text."""
    audit = _Audit()
    audit.feed(markup)
    audit.close()
    for tag, attrs in audit.tags:
        assert tag not in FORBIDDEN_TAGS or _chart_image(dict(attrs)), f"live <{tag}> in {markup[:200]!r}"
        for name, value in attrs:
            assert not name.lower().startswith("on"), f"event handler {name}={value!r} on <{tag}>"
            squeezed = "".join((value or "").split()).lower()
            assert "javascript:" not in squeezed, f"javascript: URL in {name}={value!r} on <{tag}>"
    css = "".join(audit.css)
    assert "alert" not in css and "<" not in css, f"user text inside a <style> block: {css[:200]!r}"
    for selector in css_selectors(css):
        # A Styler scopes its rules to its table's id; a DataFrame's repr ships pandas' fixed ``.dataframe`` rules.
        assert selector.startswith(("#T_", ".dataframe ")), f"a <style> rule reaching outside its table: {selector!r}"
    visible = "".join(audit.text)
    for text in texts:
        assert text in visible, f"{text!r} is not visible as text"


def _chart_document(attrs: dict[str, str | None]) -> str | None:
    """The SVG document of an ``<img>`` that ``tilelab.views.html.chart`` wrote (class ``tl-chart``, an SVG data
    URI), from its ``attrs``; None for any other image."""
    kind, _, data = (attrs.get("src") or "").partition(",")
    if "tl-chart" not in (attrs.get("class") or "").split() or kind != "data:image/svg+xml;base64":
        return None
    return base64.b64decode(data).decode()


def _chart_image(attrs: dict[str, str | None]) -> bool:
    """Whether an ``<img>``'s ``attrs`` are a chart's whose document holds no script and no event handler."""
    document = _chart_document(attrs)
    if document is None:
        return False
    svg = parse_element(document)
    return not any(node.tag == "script" or any(name.startswith("on") for name in node.attrs) for node in svg.iter())


def foreign_images(tree: Node) -> list[Node]:
    """The ``<img>`` elements of ``tree`` that are not chart images (what a string that escaped its escaping adds)."""
    return [image for image in tree.find_all("img") if not _chart_image(image.attrs)]


def chart_documents(tree: Node) -> list[str]:
    """The SVG documents of a snapshot's chart images, as text; every ``<img>`` of ``tree`` must be one."""
    documents = [_chart_document(image.attrs) for image in tree.find_all("img")]
    assert None not in documents, [image.attrs for image in tree.find_all("img")]
    return documents


def charts(tree: Node) -> list[Node]:
    """The SVG documents of a snapshot's chart images, each parsed as strictly."""
    return [parse_element(document) for document in chart_documents(tree)]
