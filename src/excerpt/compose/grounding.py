"""Grounding: the concepts of a question, and the part of a book it names.

**Concepts** (offline, the default): runs of content words, at most ``MAX_PHRASE`` each. In
English a word counts unless it frames the question (``data/question_stopwords_en.txt``: what,
does, say, about …), so "What does Lord Henry say about influence?" gives ``Lord Henry`` and
``influence``. In Korean the nouns count (Kiwi NNG/NNP and foreign words), joined across
neighbouring words, so "휴학 중에 장학금을 받을 수 있나요? 그리고 복학 절차는?" gives ``휴학``,
``장학금`` and ``복학 절차``: a verb, an ending or a bound noun (중) ends a concept. A question
that names an article (제15조) is formal and stays one concept. At most
``MAX_CONCEPTS`` are kept; a question with no counted word is its own single concept. With an
LLM configured, the pipeline asks it for the concepts instead and falls back to these when the
answer is empty.

**Scope**: "Book 1", "book I", "Chapter 3", "chapter iii", "Canto 2" name a part of a book;
"on page 12", "p. 12", "12쪽" a page and "in section 2.1", "§ 2" a numbered section of a
document (PDF, Word, HTML, EPUB, Markdown: :mod:`excerpt.ingest.documents.blocks`). :func:`scope`
returns it as a metadata filter in the keys the loaders write (``{"book": 1}``, ``{"pages":
12}``, ``{"section_numbers": "2.1"}``: a list holding the value matches, so a node spanning
pages 11-12 is on page 12 and one under 2.1 is in section 2), and the words are left out of
the concepts. :func:`alternatives` gives the filters to try in order (a page number is first
the page's printed label, then its position). The pipeline searches inside the scope and, when
nothing there matches, without it.

Korean: "12쪽"/"12페이지" name a page, "2.1절" a section. "제3장" and "제2절" do not become
scopes: regulations record their chapters and sections as text ("제3장 교원"), and the question
is already a formal reference.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from excerpt.analyze import analyze, detect_language
from excerpt.analyze.korean import REFERENCE, kiwi

MAX_CONCEPTS = 4
MAX_PHRASE = 3
_KOREAN_NOUNS = frozenset({"NNG", "NNP", "SL", "SH"})
_EDGE_PUNCT = re.compile(r"^[^\w]+|[^\w]+$")
# The metadata key a scope word reads: loaders store PART divisions as books (a node's ``part``
# names the book's apparatus, :mod:`excerpt.ingest.books.parts`).
_SCOPE_KEY = {"part": "book"}
_SCOPE = re.compile(r"\b(book|chapter|canto|part)\s+(\d{1,3}|[ivxlc]{1,7})\b", re.IGNORECASE)
# The particle after a Korean page or section ("12쪽에", "2.1절의") goes with it, or left alone
# it would read as a noun (의) in the concepts.
_PARTICLE = "(?:에서|에는|에|의|은|는|을|를|이|가|도|까지|부터)?"
# "page 12", "pages 11", "p. 12", "pp. 11", "pg 12"; a roman numeral after "page" or "p." is
# a printed label ("page iv", "p. iv", as citations show it); "12쪽", "12 페이지".
_PAGE = re.compile(r"(?:\bpages?\s+|\bpp?\.\s*|\bpg\.?\s+)(\d{1,5})\b(?![.,]\d)"
                   r"|(?:\bpages?\s+|\bpp?\.\s*)([ivxlc]{1,7})\b"
                   rf"|(?<!\d)(\d{{1,5}})\s*(?:쪽|페이지){_PARTICLE}", re.IGNORECASE)
# "section 2.1", "sec. 2", "sect. 3.4.1", "§ 2.1", "§2"; numbers as the headings write them.
# Korean "2.1절" (a dotted number only: "제2절" is a regulation's section, a formal reference).
_SECTION = re.compile(r"(?:\bsection\s+|\bsect?\.\s*|§\s*)(\d{1,3}(?:\.\d{1,3}){0,5})\b"
                      r"(?!\.\d)|(?<![\d.제])(\d{1,3}(?:\.\d{1,3}){1,5})\s*절" + _PARTICLE,
                      re.IGNORECASE)
_SCOPE_WORDS = (_SCOPE, _PAGE, _SECTION)
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}


def roman_to_int(text: str) -> int | None:
    """``"iv"`` -> 4; None when ``text`` is not a well-formed roman numeral up to 399."""
    values = [_ROMAN.get(ch) for ch in text.lower()]
    if not values or any(v is None for v in values):
        return None
    total = 0
    for i, v in enumerate(values):
        assert v is not None
        nxt = values[i + 1] if i + 1 < len(values) else 0
        total += -v if nxt and nxt > v else v
    return total if total > 0 and _to_roman(total) == text.lower() else None


def _to_roman(n: int) -> str:
    out = ""
    for value, letters in ((100, "c"), (90, "xc"), (50, "l"), (40, "xl"), (10, "x"), (9, "ix"),
                           (5, "v"), (4, "iv"), (1, "i")):
        while n >= value:
            out, n = out + letters, n - value
    return out


def scope(question: str) -> dict[str, Any]:
    """The part of a book or document the question names, as metadata: ``{"book": 1}``,
    ``{"pages": 12}``, ``{"section_numbers": "2.1"}``, ``{"page_label": "iv"}``; {} when none.
    The first mention of each kind counts."""
    found: dict[str, Any] = {}
    for match in _SCOPE.finditer(question):
        key, number = match.group(1).lower(), match.group(2)
        key = _SCOPE_KEY.get(key, key)
        value = int(number) if number.isdigit() else roman_to_int(number)
        if value is not None and key not in found:
            found[key] = value
    found.update(_page(question))
    section = _SECTION.search(question)
    if section:
        found["section_numbers"] = section.group(1) or section.group(2)
    return found


def _page(question: str) -> dict[str, Any]:
    for match in _PAGE.finditer(question):
        number, roman, korean = match.groups()
        if number or korean:
            return {"pages": int(number or korean)}
        if roman_to_int(roman) is not None:
            return {"page_label": roman.lower()}
    return {}


def alternatives(found: dict[str, Any]) -> list[dict[str, Any]]:
    """The filters to try, in order, for a scope: a page number is first the page's printed
    label (a PDF whose front matter is numbered i, ii … labels its page 24 "12", and the
    citation shows that label), then its position in the file (``pages``); a scope with no page
    is tried as it is. Empty for no scope."""
    if not found:
        return []
    if "pages" not in found:
        return [found]
    rest = {k: v for k, v in found.items() if k != "pages"}
    return [{**rest, "page_label": str(found["pages"])}, found]


@cache
def question_stopwords() -> frozenset[str]:
    text = resources.files("excerpt.compose").joinpath("data/question_stopwords_en.txt")
    lines = (line.strip() for line in text.read_text("utf-8").splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


def _english_runs(text: str) -> list[list[str]]:
    stop = question_stopwords()
    runs: list[list[str]] = [[]]
    for raw in text.split():
        word = _EDGE_PUNCT.sub("", raw).removesuffix("'s").removesuffix("’s")
        if len(word) > 1 and word.lower() not in stop:
            runs[-1].append(word)
        else:
            runs.append([])
        if not raw[-1].isalnum() and raw[-1] not in "'’":  # punctuation ends a concept
            runs.append([])
    return runs


def _korean_runs(text: str) -> list[list[str]]:
    """Noun runs; nouns touching in the text stay one word (교원인사규정)."""
    runs: list[list[str]] = [[]]
    end = -1
    for token in kiwi().tokenize(text):
        if token.tag in _KOREAN_NOUNS:
            if runs[-1] and token.start == end:
                runs[-1][-1] += token.form
            else:
                runs[-1].append(token.form)
            end = token.start + token.len
        elif not token.tag.startswith("J"):  # a particle keeps the run open (장학금을 신청)
            runs.append([])
    return runs


def concepts(question: str, language: str | None = None) -> list[str]:
    """The question's concepts, in order (see the module docstring). ``language``: the
    question's, when the caller has detected it (it holds for the question without its scope
    words only when none were taken out: "12쪽" is Korean)."""
    text = question
    for words in _SCOPE_WORDS:
        text = words.sub(" ", text)
    if REFERENCE.search(text):  # names an article: a formal query is one concept
        return [question.strip()]
    if language is None or text != question:
        language = detect_language(text)
    runs = _korean_runs(text) if language == "ko" else _english_runs(text)
    phrases = [run[i:i + MAX_PHRASE] for run in runs for i in range(0, len(run), MAX_PHRASE)]
    found = list(dict.fromkeys(" ".join(p) for p in phrases if p))
    return found[:MAX_CONCEPTS] or [question.strip()]


def search_text(question: str, language: str | None = None) -> str:
    """The question as a search query: English without the words that only frame it ("Who
    captained the team?" -> "captained the team?": a "who" would match any passage about who
    may do something); Korean as it is (its endings are not tokens). Never empty.
    ``language``: the question's, when the caller has detected it."""
    if (language or detect_language(question)) == "ko":
        return question
    stop = question_stopwords()
    kept = " ".join(w for w in question.split() if _EDGE_PUNCT.sub("", w).lower() not in stop)
    return kept if kept.strip() else question


def key_tokens(question: str, language: str | None = None,
               tokens: Sequence[str] | None = None) -> frozenset[str]:
    """The question's analyzer tokens without the words that only frame it (English: how,
    does, say …; Korean particles and endings are gone already): what an answer must cover.
    ``language`` and ``tokens``: the question's, when the caller has read it already (the
    question with no framing word to leave out is not analysed again)."""
    language = language or detect_language(question)
    searched = search_text(question, language)
    if tokens is None or searched != question:
        found = frozenset(analyze(searched, language))
        if found:
            return found
    return frozenset(analyze(question, language) if tokens is None else tokens)
