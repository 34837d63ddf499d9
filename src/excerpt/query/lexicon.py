"""The query lexicon: keyword categories, synonyms, hypernyms and query-shape words, from YAML.

The default ships as package data (``query/data/regulations_ko.yaml``); the ``query_lexicon``
setting names a replacement file. The code holds no word lists of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from excerpt.errors import InputError

DEFAULT = "regulations_ko.yaml"
PATTERN_NAMES = ("section", "paragraph", "item", "regulation")
CATEGORY_NAMES = ("procedure", "requirement", "benefit", "deadline")


@dataclass(frozen=True)
class Category:
    name: str
    keywords: tuple[str, ...]
    expansions: tuple[str, ...]


@dataclass(frozen=True)
class PlainRule:
    """Everyday words -> the regulation's terms (:mod:`excerpt.query.plain`)."""

    when: tuple[str, ...]
    terms: tuple[str, ...]
    unless: tuple[str, ...] = ()


@dataclass(frozen=True)
class Lexicon:
    language: str
    categories: tuple[Category, ...]
    topics: tuple[str, ...] = ()
    synonyms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    hypernyms: dict[str, str] = field(default_factory=dict)
    procedure_terms: tuple[str, ...] = ()
    patterns: dict[str, re.Pattern[str]] = field(default_factory=dict)
    question_markers: tuple[str, ...] = ()
    conjunctions: tuple[str, ...] = ()
    plain_words: tuple[PlainRule, ...] = ()

    def added_terms(self) -> list[str]:
        """Every term the lexicon may add to a query (expansions and plain-word terms)."""
        terms = [t for c in self.categories for t in c.expansions]
        terms += [t for values in self.synonyms.values() for t in values]
        terms += [*self.hypernyms.values(), *self.procedure_terms]
        terms += [t for rule in self.plain_words for t in rule.terms]
        return list(dict.fromkeys(terms))

    def hypernym_chain(self, term: str, limit: int = 8) -> list[str]:
        """Parents of ``term``, nearest first (a cycle in the file stops the walk)."""
        chain: list[str] = []
        while term in self.hypernyms and len(chain) < limit:
            term = self.hypernyms[term]
            if term in chain:
                break
            chain.append(term)
        return chain


def load_lexicon(path: Path | str | None = None) -> Lexicon:
    """The lexicon in ``path`` (YAML), or the packaged default when ``path`` is empty."""
    return _load(str(path) if path else "")


@lru_cache(maxsize=8)
def _load(path: str) -> Lexicon:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's: ~8x faster, same data
    if path:
        source = Path(path)
        if not source.is_file():
            raise InputError(f"lexicon file {source} does not exist")
        text = source.read_text("utf-8")
    else:
        source = Path(DEFAULT)
        text = resources.files("excerpt.query").joinpath("data", DEFAULT).read_text("utf-8")
    try:
        raw = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise InputError(f"{source}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise InputError(f"{source}: expected a mapping at the top level")
    return _parse(raw, source)


def _strings(raw: Any, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        raise InputError(f"{where} must be a list of strings (quote words YAML reads otherwise)")
    return tuple(raw)


def _plain_rules(raw: Any, source: Path) -> tuple[PlainRule, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InputError(f"{source}: plain_words must be a list of rules (when, terms, unless)")
    rules = []
    for i, body in enumerate(raw, 1):
        where = f"{source}: plain_words rule {i}"
        if not isinstance(body, dict):
            raise InputError(f"{where} must be a mapping with 'when' and 'terms'")
        unknown = set(body) - {"when", "terms", "unless"}
        if unknown:
            raise InputError(f"{where}: unknown field {sorted(unknown)[0]!r}")
        rule = PlainRule(_strings(body.get("when"), f"{where}: when"),
                         _strings(body.get("terms"), f"{where}: terms"),
                         _strings(body.get("unless"), f"{where}: unless"))
        if not rule.when or not rule.terms:
            raise InputError(f"{where} needs at least one word in 'when' and one in 'terms'")
        rules.append(rule)
    return tuple(rules)


def _parse(raw: dict[str, Any], source: Path) -> Lexicon:
    for name in raw.get("categories") or {}:
        if name not in CATEGORY_NAMES:
            raise InputError(f"{source}: unknown category {name!r}; "
                             f"known: {', '.join(CATEGORY_NAMES)}")
    categories = tuple(
        Category(name, _strings(body.get("keywords"), f"{source}: categories.{name}.keywords"),
                 _strings(body.get("expansions"), f"{source}: categories.{name}.expansions"))
        for name, body in (raw.get("categories") or {}).items()
    )
    patterns = {}
    for name in PATTERN_NAMES:
        expr = (raw.get("patterns") or {}).get(name)
        if expr:
            try:
                patterns[name] = re.compile(expr)
            except re.error as exc:
                raise InputError(f"{source}: patterns.{name} is not a valid regex: {exc}") from None
    synonyms = {k: _strings(v, f"{source}: synonyms.{k}")
                for k, v in (raw.get("synonyms") or {}).items()}
    hypernyms = {str(k): str(v) for k, v in (raw.get("hypernyms") or {}).items()}
    return Lexicon(
        language=str(raw.get("language", "")),
        categories=categories,
        topics=_strings(raw.get("topics"), f"{source}: topics"),
        synonyms=synonyms,
        hypernyms=hypernyms,
        procedure_terms=_strings(raw.get("procedure_terms"), f"{source}: procedure_terms"),
        patterns=patterns,
        question_markers=_strings(raw.get("question_markers"), f"{source}: question_markers"),
        conjunctions=_strings(raw.get("conjunctions"), f"{source}: conjunctions"),
        plain_words=_plain_rules(raw.get("plain_words"), source),
    )
