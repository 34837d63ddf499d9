"""References between regulations: the citations in an article's text (``「학칙」 제29조``,
``본 규정 제3조 내지 제5조``, a bare ``제N조`` continuing a list) resolved against the book's
names and articles, as ``cites`` and ``related`` edges. The book itself is read in
regulations.py."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from excerpt.ingest.regulations.text import NAME_SUFFIXES, name_key
from excerpt.types import Edge, Node

CITES = "cites"
RELATED = "related"
_STATUTE_SUFFIXES = (*NAME_SUFFIXES, "법", "법률", "령", "규칙", "조례", "협약")
_SELF_WORDS = ("이", "본")
_RUN_CHARS = re.compile(r"[^\s「」｢｣『』“”\"'‘’<>\[\]{},.;:]")
_SUFFIX = re.compile("|".join(NAME_SUFFIXES))
_ARTICLE_AFTER = re.compile(
    r"\s*제\s*(\d+)\s*조(?:\s*의\s*(\d+))?"
    r"(?:\s*(?:내지|부터|~|∼)\s*제\s*(\d+)\s*조(?:\s*의\s*\d+)?)?"
)
_LIST_GAP = re.compile(
    r"(?:\s|,|ㆍ|·|및|와|과|또는|내지|부터|~|∼|제\s*\d+\s*[항호목](?:의\s*\d+)?)*"
)
_BRACKETED = re.compile(r"[「｢『]\s*([^」｣』\n]{1,80}?)\s*[」｣』]")
_ARTICLE_REF = re.compile(
    r"제\s*(\d+)\s*조(?:\s*의\s*(\d+))?"
    r"(?:\s*(?:내지|부터|~|∼)\s*제\s*(\d+)\s*조(?:\s*의\s*\d+)?)?"
)
_MAX_RANGE = 50
_NAME_WORDS = 4
_AMENDED = re.compile("(?:변경|개정)(?:" + "|".join(NAME_SUFFIXES) + ")")  # "the amended rules"
# Words before 제N조 that name no particular statute ("the said law", "the decree").
_VAGUE = frozenset({*_STATUTE_SUFFIXES, "영", "동법", "본법", "이법", "동령", "시행령", "시행규칙",
                    "동규정", "본규정", "부칙"})
_ALIASES = {
    "학칙": "동의대학교학칙",
    "대학원학칙": "동의대학교대학원학칙",
    "정관": "학교법인동의학원정관",
}


@dataclass
class ReferenceIndex:
    """What references resolve against: names, first nodes and article node ids."""

    by_key: dict[str, str] = field(default_factory=dict)  # name key -> document id
    first_node: dict[str, str] = field(default_factory=dict)  # document id -> node id
    articles: dict[tuple[str, int, int], str] = field(default_factory=dict)


def reference_edges(cited: list[Node], index: ReferenceIndex) -> list[Edge]:
    found: dict[tuple[str, str, str], Edge] = {}
    for node in cited:
        finder = _Finder(node, index)
        for relation, target, meta in finder.find():
            key = (node.id, relation, target)
            if target != node.id and key not in found:
                found[key] = Edge(node.id, relation, target, meta)
    return [found[k] for k in sorted(found)]


class _Finder:
    """The references in one node's text: bracketed names, book names, bare 제N조.

    Article references are kept as spans with their owner (a document id, or a name outside
    the book), so ``학칙 제29조, 제30조 및 제31조`` gives 제30조 and 제31조 the 학칙 too: a bare
    제N조 separated from the previous reference only by ``,``/``및``/``와``/``내지``/항·호 numbers
    continues that list.
    """

    def __init__(self, node: Node, index: ReferenceIndex) -> None:
        self.text, self.doc_id, self.index = node.text, node.document_id, index
        self.own_name = str(node.metadata["regulation"])
        self.taken: list[tuple[int, int]] = []
        self.spans: list[tuple[int, int, str, str]] = []  # start, end, scope, owner
        self.out: list[tuple[str, str, dict[str, Any]]] = []

    def find(self) -> list[tuple[str, str, dict[str, Any]]]:
        for m in _BRACKETED.finditer(self.text):
            self._bracketed(m)
        for m in _SUFFIX.finditer(self.text):
            self._named(m.end())
        for m in _ARTICLE_REF.finditer(self.text):
            if not self._inside(m.start()):
                self._bare_article(m)
        return self.out

    def _inside(self, pos: int) -> bool:
        return any(a <= pos < b for a, b in self.taken)

    def _cite(self, span: tuple[int, int], scope: str, owner: str, ref: re.Match[str]) -> None:
        """``cites`` edges for the article reference ``ref`` (``제N조[의M][ 내지 제K조]``)."""
        no, sub = int(ref.group(1)), int(ref.group(2) or 0)
        last = int(ref.group(3) or no)
        mention = self.text[span[0] : span[1]]
        self.taken.append(span)
        self.spans.append((*span, scope, owner))
        if scope == "external":
            targets = [f"{owner} {_label(no, sub)}"]
            targets += [f"{owner} 제{last}조"] if last > no else []
        else:
            numbers = range(no, last + 1) if 0 < last - no <= _MAX_RANGE else range(no, no + 1)
            targets = [self._article_id(owner, k, sub if k == no else 0) for k in numbers]
        for target in targets:
            self.out.append((CITES, target, {"mention": mention, "scope": scope}))

    def _resolve(self, key: str) -> str | None:
        for candidate in (key, key.removeprefix("동의대학교")):
            if candidate in self.index.by_key:
                return self.index.by_key[candidate]
        return None

    def _article_id(self, doc_id: str, no: int, sub: int) -> str:
        return self.index.articles.get((doc_id, no, sub)) or f"{doc_id} {_label(no, sub)}"

    def _scope(self, doc: str) -> str:
        return "internal" if doc == self.doc_id else "book"

    def _bracketed(self, m: re.Match[str]) -> None:
        name = re.sub(r"\s+", " ", m.group(1)).strip()
        key = name_key(name)
        doc = self._resolve(key) or self._alias(key, m.start())
        if doc is None and not key.endswith(_STATUTE_SUFFIXES):
            return
        ref = _ARTICLE_AFTER.match(self.text, m.end())
        if ref is not None:
            scope = self._scope(doc) if doc else "external"
            return self._cite((m.start(), ref.end()), scope, doc or name, ref)
        self.taken.append(m.span())
        target = self.index.first_node.get(doc, doc) if doc else name
        scope = self._scope(doc) if doc else "external"
        self.out.append((CITES, target, {"mention": m.group(0), "scope": scope}))

    def _named(self, end: int) -> None:
        """A regulation name of the book ending at ``end``, unbracketed."""
        if self._inside(end - 1):
            return
        starts = _word_starts(self.text, end)
        ref = _ARTICLE_AFTER.match(self.text, end)
        inner = starts[-1]
        text = self.text
        candidates = [k for k in range(starts[0], inner)
                      if k == starts[0] or (text[k - 1].isspace() and not text[k].isspace())]
        candidates += [k for k in range(inner, end - 1) if self.text[k] != "\n"]
        for start in candidates:
            key = name_key(self.text[start:end])
            doc = self._resolve(key) or (self._alias(key, start) if start == inner and ref
                                         else None)
            if doc is None:
                continue
            if ref is not None:
                self._cite((start, ref.end()), self._scope(doc), doc, ref)
            elif doc != self.doc_id and doc in self.index.first_node:
                self.taken.append((start, end))
                self.out.append((RELATED, self.index.first_node[doc],
                                 {"mention": self.text[start:end], "scope": "book"}))
            return

    def _alias(self, key: str, start: int) -> str | None:
        """``학칙``/``정관``/``대학원학칙``: the book's own abbreviations of its charters."""
        if key not in _ALIASES:
            return None
        before = self.text[max(0, start - 12) : start].split()
        if key == "학칙" and before and before[-1].endswith("대학원"):
            key = "대학원학칙"
        if key == "정관" and "산학협력단" in self.own_name:
            return None
        return self._resolve(name_key(_ALIASES[key]))

    def _bare_article(self, m: re.Match[str]) -> None:
        previous = max((s for s in self.spans if s[1] <= m.start()), key=lambda s: s[1],
                       default=None)
        if previous is not None and _LIST_GAP.fullmatch(self.text, previous[1], m.start()):
            return self._cite(m.span(), previous[2], previous[3], m)
        words = self.text[max(0, m.start() - 40) : m.start()].split()
        last = words[-1] if words else ""
        word = name_key(last).lstrip("(“\"'‘")
        if last[-1:] in "」｣』" or word == "부칙":
            return
        own = _AMENDED.fullmatch(word) or (
            len(words) > 1 and words[-2] in _SELF_WORDS and word.endswith(NAME_SUFFIXES))
        if word.endswith(_STATUTE_SUFFIXES) and not own:
            if word not in _VAGUE and not word.startswith("같은"):
                start = self.text.rfind(last, 0, m.start())
                self._cite((start, m.end()), "external", word, m)
            return
        self._cite(m.span(), "internal", self.doc_id, m)


def _run_start(text: str, end: int) -> int:
    """Where the word ending at ``end`` starts; a word broken over two lines (a table cell
    ``대학원학위논문심사에`` / ``관한세칙``) counts as one."""
    start = end
    while start > 0 and end - start < 80:
        ch = text[start - 1]
        broken = ch == "\n" and start > 1 and _RUN_CHARS.match(text[start - 2])
        if not (_RUN_CHARS.match(ch) or broken):
            break
        start -= 1
    return start


def _word_starts(text: str, end: int) -> list[int]:
    """Starts of the words that may begin a name ending at ``end``: up to
    ``_NAME_WORDS - 1`` words back (``대학원공개강좌운영에 관한세칙``), farthest first; the last is
    the start of the word holding ``end``."""
    starts = [_run_start(text, end)]
    while len(starts) < _NAME_WORDS:
        j = starts[-1]
        while j > 0 and text[j - 1] in " \t":
            j -= 1
        if j == starts[-1] or j == 0 or not _RUN_CHARS.match(text[j - 1]):
            break
        starts.append(_run_start(text, j))
    return starts[::-1]


def _label(no: int, sub: int) -> str:
    return f"제{no}조" + (f"의{sub}" if sub else "")
