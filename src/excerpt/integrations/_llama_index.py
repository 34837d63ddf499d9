"""The LlamaIndex retriever (see :mod:`excerpt.integrations.llama_index`); imports
llama-index-core."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from excerpt.integrations._documents import Passage
from excerpt.integrations._source import Read, open_source
from excerpt.types import SearchMode

LLM_KEYS = ("citation",)
"""The metadata a response synthesizer shows the model beside each passage's text: where it
is. The rest (ids, scores, the node's own metadata) stays on the node for the caller."""


class ExcerptRetriever(BaseRetriever):
    """excerpt's search as a LlamaIndex retriever: local (``engine`` and ``principal``) or
    remote (``url`` and ``api_key``). Each node's ``id_`` is excerpt's node id, its score the
    search's, its metadata ``citation``, ``place``, ``kind``, ``title``, ``source``,
    ``snapshot_id`` and the node's own ``metadata``."""

    def __init__(self, engine: Any = None, principal: Any = None, *, url: str | None = None,
                 api_key: str | None = None, collection: str = "default", k: int | None = None,
                 mode: SearchMode = "hybrid", snapshot: str | None = None,
                 snapshot_set: str | None = None, where: Mapping[str, Any] | None = None,
                 rerank: str | None = None, timeout: float = 60.0,
                 callback_manager: CallbackManager | None = None, verbose: bool = False
                 ) -> None:
        self._source = open_source(engine, principal, url, api_key, timeout)
        self.read = Read(collection, mode, k, snapshot, snapshot_set, dict(where or {}), rerank)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [node_with_score(p) for p in self._source.search(query_bundle.query_str,
                                                                 self.read)]


def node_with_score(passage: Passage) -> NodeWithScore:
    hidden = [key for key in passage.metadata if key not in LLM_KEYS]
    node = TextNode(id_=passage.id, text=passage.text, metadata=passage.metadata,
                    excluded_llm_metadata_keys=hidden,
                    excluded_embed_metadata_keys=list(passage.metadata))
    return NodeWithScore(node=node, score=passage.score)
