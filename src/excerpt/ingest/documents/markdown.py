"""Markdown files -> :class:`StructuredDoc` (the one Markdown reader: plain-text loading of
``.md`` files goes through it too).

Parsed with markdown-it-py (CommonMark, plus GitHub tables and strikethrough), so what is a
heading, a list or a code block is what a Markdown renderer would show, not what a line looks
like: a ``#`` line inside a fence is code, a setext underline makes a heading.  Blocks:

- headings (ATX and setext) with their level;
- paragraphs (block quotes' too) and list items with their depth (0 outermost);
- tables as one ``table_row`` per row, the header row included, cells joined by ``" | "``;
- fenced and indented code blocks whole (without the fence lines);
- raw HTML blocks as paragraphs of their text (tags dropped), when any text is left.

Inline markup is dropped (emphasis marks, link targets; a link keeps its text, an image its
alt text) except inline code, which keeps its backticks (they mark a literal, and quotes of
the text read as the page does); a paragraph keeps its line breaks.  A YAML front matter
block (``---`` … ``---``) is not text; its ``title:`` is the document's title, else the first
level-1 heading, else the first heading, else the first line with a letter or digit, else the
file name.
"""

from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from excerpt.errors import InputError
from excerpt.ingest._common import BINARY_SNIFF_BYTES, read_text_file
from excerpt.ingest.documents.blocks import Block, StructuredDoc
from excerpt.ingest.files import head_of

__all__ = ["MARKDOWN_SUFFIXES", "looks_like", "parse", "read"]

MARKDOWN_SUFFIXES = (".md", ".markdown")
TITLE_MAX_CHARS = 120

# Characters that start an inline rule of this parser other than text and line breaks:
# escape, code, emphasis, strikethrough, link, image, autolink/HTML, entity.  An inline token
# with none of them is its text, line breaks as written (most headings, table cells, plain
# sentences); running markdown-it's inline parser over it only to get that back was a third of
# the parse time of a folder of small notes.
_INLINE_MARKUP = frozenset("\\`*_~[]!<&")


def _plain_or_parsed(state: StateCore) -> None:
    """markdown-it's core ``inline`` rule, except that an inline token without markup gets one
    text child (its content) instead of a parse: the same text once :func:`_inline_text`
    reads it (proved on a varied set by the tests against :data:`FULL_PARSER`)."""
    md, env = state.md, state.env
    for token in state.tokens:
        if token.type != "inline":
            continue
        if _INLINE_MARKUP.isdisjoint(token.content):
            token.children = [Token("text", "", 0, content=token.content)]
        else:
            token.children = []
            md.inline.parse(token.content, md, env, token.children)


def _new_parser() -> MarkdownIt:
    """markdown-it as excerpt configures it (one place, for both parsers below)."""
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


FULL_PARSER = _new_parser()
"""markdown-it as configured, every inline token parsed: the reference the fast path is tested
against."""
_PARSER = _new_parser()
_PARSER.core.ruler.at("inline", _plain_or_parsed)
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_HAS_WORD = re.compile(r"\w")
_TAG = re.compile(r"<[^>]*>")
_ATX_START = re.compile(r"^#{1,6}[ \t]+\S")


def read(path: Path, doc_id: str, *, data: bytes | None = None) -> StructuredDoc:
    """The Markdown file at ``path`` (``data``: its bytes, when already read); :class:`InputError`
    naming it when it cannot be read as UTF-8 text or holds no text."""

    text, reason = read_text_file(path, data)
    if text is None:
        raise InputError(f"{path}: {reason}")
    doc = parse(text, doc_id, path.name)
    if not doc.blocks:
        raise InputError(f"{path}: no text in this Markdown file")
    return doc


def looks_like(path: Path, head: bytes | None = None) -> bool:
    """A Markdown file by its name, or a UTF-8 text file that opens with front matter or an
    ATX heading (a ``README`` without a suffix); ``head``: its first bytes, when already read."""
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        return True
    head = head_of(path, BINARY_SNIFF_BYTES, head)
    if head is None:
        return False
    if b"\x00" in head:
        return False
    first = head.decode("utf-8", errors="replace").lstrip("\ufeff").lstrip().split("\n", 1)[0]
    return first.rstrip() == "---" or bool(_ATX_START.match(first))


def parse(
    text: str, doc_id: str, name: str, parser: MarkdownIt | None = None
) -> StructuredDoc:
    """The blocks and title of Markdown ``text`` (``name`` is the title of last resort);
    ``parser`` is for tests (:data:`FULL_PARSER`)."""
    lines = text.split("\n")
    skip = _front_matter_end(lines)
    body = "\n".join([""] * skip + lines[skip:])  # front matter out, line numbers kept
    blocks = _blocks((parser or _PARSER).parse(body))
    front_title = _front_title(lines[:skip])
    title = front_title or _heading_title(blocks) or _first_line(lines[skip:]) or name
    metadata: dict[str, object] = {"format": "markdown"}
    return StructuredDoc(doc_id=doc_id, title=title, blocks=blocks, metadata=metadata)


def _blocks(tokens: list[Token]) -> list[Block]:
    out: list[Block] = []
    lists = 0  # how many lists enclose the current token
    in_table = False
    row: list[str] = []
    pending: tuple[str, int] | None = None  # the block kind/level an inline token completes
    for tok in tokens:
        kind = tok.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            lists += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists -= 1
        elif kind == "heading_open":
            pending = ("heading", int(tok.tag[1:]))
        elif kind == "paragraph_open" and not in_table:
            # a paragraph inside a list is (part of) a list item: its depth is what matters
            pending = ("list_item", lists - 1) if lists else ("paragraph", 0)
        elif kind == "tr_open":
            in_table, row = True, []
        elif kind == "tr_close":
            out.append(Block("table_row", " | ".join(row)))
            in_table = False
        elif kind == "inline" and in_table:
            row.append(_inline_text(tok))
        elif kind == "inline" and pending is not None:
            text = _inline_text(tok)
            if text:
                out.append(Block(pending[0], text, pending[1]))  # type: ignore[arg-type]
            pending = None
        elif kind in ("fence", "code_block") and tok.content.strip():
            out.append(Block("code", tok.content.rstrip()))
        elif kind == "html_block":
            text = " ".join(_TAG.sub(" ", tok.content).split())
            if text:
                out.append(Block("paragraph", text))
    return out


def _inline_text(tok: Token) -> str:
    """An inline token's text without markup but inline code: link text, image alt text."""
    parts: list[str] = []
    for child in tok.children or []:
        if child.type == "text":
            parts.append(child.content)
        elif child.type == "code_inline":  # `--format`: the quotes say it is a literal
            parts.append(child.markup + child.content + child.markup)
        elif child.type in ("softbreak", "hardbreak"):  # the source's lines, as written
            parts.append("\n")
        elif child.type == "image":
            parts.append(_inline_text(child) or child.content)
    return "\n".join(" ".join(line.split()) for line in "".join(parts).split("\n")).strip()


def _front_matter_end(lines: list[str]) -> int:
    """Number of lines of a leading YAML front matter block (``---`` … ``---``), else 0."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return i + 1
    return 0


def _front_title(front: list[str]) -> str | None:
    m = _FRONT_TITLE.search("\n".join(front))
    return clean_title(m.group(1).strip("\"'")) if m else None


def _heading_title(blocks: list[Block]) -> str | None:
    headings = [b for b in blocks if b.kind == "heading"]
    for h in headings:
        if h.level == 1:
            return clean_title(h.text)
    return clean_title(headings[0].text) if headings else None


def _first_line(lines: list[str]) -> str | None:
    for line in lines:
        if _HAS_WORD.search(line):
            return clean_title(line.lstrip("#").strip())
    return None


def clean_title(title: str) -> str:
    """Whitespace collapsed; cut at a word boundary to at most TITLE_MAX_CHARS (with '…')."""
    title = " ".join(title.split())
    if len(title) <= TITLE_MAX_CHARS:
        return title
    cut = title[: TITLE_MAX_CHARS - 1]
    space = cut.rfind(" ")
    if space > TITLE_MAX_CHARS // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"
