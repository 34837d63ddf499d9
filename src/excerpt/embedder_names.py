"""The embedders excerpt ships, one line each, in a module that imports no model.

The CLI's and the HTTP API's option choices need only the names; taking them from
:mod:`excerpt.ingest.pipeline` (where the import checks them) or :mod:`excerpt.embed` (which
loads numpy and the model code) would make every command, a search included, pay for that
first.  The registry of instances (embed/registry.py), the choice by language (an import's
``auto``, embed.registry.choose_embedder_for_language) and how answer composition may use a
model (compose/extract.py) all read :data:`SPECS`: a new embedder is its module plus a line.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EmbedderSpec:
    """One embedder: the short name an import asks for, the model id its vectors are stored
    under, other names it answers to, and ``module:Class`` that makes it (the class takes
    ``workers`` and loads its model on first use)."""

    name: str
    model: str
    aliases: tuple[str, ...]
    factory: str
    languages: tuple[str, ...] = ()
    """The languages ``auto`` gives it (analyze's codes; "mixed" for Korean among others);
    the one with none is the default, for every other language."""
    ranks_sentences: bool = False
    """Fast enough to rank an answer's sentences within the ask budget (compose/extract.py)."""
    unrelated_below: float | None = None
    """A model too slow for that scores the opening sentence alone, and under this cosine
    the sentence is taken as unrelated to the question."""


SPECS: tuple[EmbedderSpec, ...] = (
    EmbedderSpec("minilm", "all-MiniLM-L6-v2-int8", ("all-minilm-l6-v2",),
                 "excerpt.embed.minilm:MiniLMEmbedder", ranks_sentences=True),
    # multilingual-e5's cosines are crowded near the top (its contrastive training's
    # temperature, 0.01): a Korean article sentence and a question it does not answer meet at
    # 0.80-0.83, one it answers at 0.86-0.90 (the tune half of bench/qa/regulations.yaml; the
    # floor sits under the first); it takes about a second for a few dozen sentences
    EmbedderSpec("e5", "multilingual-e5-small-q4", ("multilingual-e5-small",),
                 "excerpt.embed.e5:E5Embedder", languages=("ko", "kor", "korean", "mixed"),
                 unrelated_below=0.76),
)

EMBEDDERS = ("auto", *(spec.name for spec in SPECS), "none")
"""auto: by the text's language (MiniLM for English, multilingual e5 for Korean); none: BM25
only."""


def spec_named(name: str) -> EmbedderSpec | None:
    """The embedder a short name, a model id or an alias names (any case), or None."""
    key = name.strip().lower()
    return next((s for s in SPECS if key in (s.name, s.model.lower(), *s.aliases)), None)


def for_language(lang: str) -> str:
    """The short name of the embedder ``auto`` gives text of language ``lang``."""
    key = lang.strip().lower()
    chosen = next((s for s in SPECS if key in s.languages), None)
    return (chosen or next(s for s in SPECS if not s.languages)).name


__all__ = ["EMBEDDERS", "SPECS", "EmbedderSpec", "for_language", "spec_named"]
