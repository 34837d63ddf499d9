"""RAG quality metrics, offline and deterministic: RAGAS's definitions with local judges.

RAGAS (Es et al., "RAGAS: Automated Evaluation of Retrieval Augmented Generation", EACL 2024
demo; docs.ragas.io, metrics "context recall", "faithfulness", "answer relevancy") asks an LLM
to split texts into statements and to judge support. Here the judges are local and
deterministic, and each replacement is stated:

* **Statements** are sentences (split on sentence-final punctuation and line breaks; Korean
  sentences end in 다. / 요. / ., so this is the usual unit).
* **Support**: a statement is supported by a text when at least ``SUPPORT`` (0.5) of its
  content tokens (excerpt's analyzer: Kiwi morphemes for Korean, stems for English) occur in
  that text — token-overlap recall, the "token overlap judge".

Definitions (all in [0, 1]):

* ``context_recall(reference, contexts)`` — RAGAS context recall: the share of the reference
  answer's statements supported by at least one retrieved context.
* ``context_recall_ids(gold, retrieved)`` — the id form when gold passages are known: the share
  of gold ids among the retrieved ids.
* ``faithfulness(answer, contexts)`` — RAGAS faithfulness: the share of the answer's statements
  supported by at least one context (an empty answer scores 0).
* ``answer_relevancy(question, answer, similarity)`` — RAGAS answer relevancy is the mean cosine
  between the question and questions an LLM writes back from the answer; with no LLM, the
  cosine between the question and the answer itself under the embedding model (``similarity``),
  clipped to [0, 1].
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from excerpt.analyze import analyze, detect_language
from excerpt.compose.sentences import split_sentences, strip_citation_marks

SUPPORT = 0.5

Tokenize = Callable[[str], list[str]]


def default_tokenize(text: str) -> list[str]:
    return analyze(text, detect_language(text))


def statements(text: str) -> list[str]:
    """Sentences of ``text`` that have any letters (headings and numbers alone are dropped);
    [n] citation markers are removed first."""
    return split_sentences(strip_citation_marks(text))


def supported(statement: str, contexts: Sequence[str], tokenize: Tokenize = default_tokenize,
              threshold: float = SUPPORT) -> bool:
    tokens = set(tokenize(statement))
    if not tokens:
        return False
    return any(len(tokens & set(tokenize(c))) / len(tokens) >= threshold for c in contexts)


def context_recall(reference: str, contexts: Sequence[str],
                   tokenize: Tokenize = default_tokenize) -> float:
    claims = statements(reference)
    if not claims:
        return 0.0
    return sum(supported(c, contexts, tokenize) for c in claims) / len(claims)


def context_recall_ids(gold: Sequence[str], retrieved: Sequence[str]) -> float:
    wanted = set(gold)
    if not wanted:
        return 0.0
    return len(wanted & set(retrieved)) / len(wanted)


def faithfulness(answer: str, contexts: Sequence[str],
                 tokenize: Tokenize = default_tokenize) -> float:
    claims = statements(answer)
    if not claims:
        return 0.0
    return sum(supported(c, contexts, tokenize) for c in claims) / len(claims)


def answer_relevancy(question: str, answer: str,
                     similarity: Callable[[str, str], float]) -> float:
    if not answer.strip():
        return 0.0
    return max(0.0, min(1.0, similarity(question, answer)))
