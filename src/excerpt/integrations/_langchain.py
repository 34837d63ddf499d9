"""The LangChain retriever (see :mod:`excerpt.integrations.langchain`); imports langchain-core."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field, SecretStr, model_validator

from excerpt.integrations._source import Read, Source, open_source, overridden
from excerpt.types import SearchMode


class ExcerptRetriever(BaseRetriever):
    """excerpt's search as a LangChain retriever: local (``engine`` and ``principal``) or
    remote (``url`` and ``api_key``). Each document's ``id`` is the node id; its metadata
    holds ``score``, ``citation`` (``place``, ``kind``), ``title``, ``source``,
    ``snapshot_id`` and the node's own ``metadata``
    (:func:`excerpt.integrations._documents.document_metadata`). ``invoke(query, k=3)`` (or
    ``mode=``, ``where=``, ...) changes one call."""

    engine: Any = None
    """A local :class:`excerpt.Engine` (or give ``url``)."""
    principal: Any = None
    """Who reads the local engine (:class:`excerpt.Principal`); None: anonymous."""
    url: str | None = None
    """A running ``excerpt serve`` (``http://127.0.0.1:8080``)."""
    api_key: SecretStr | None = None
    """The key the remote server knows; its rights are what the retriever may see."""
    collection: str = "default"
    k: int | None = None
    """How many documents; None: the adaptive top-k decides."""
    mode: SearchMode = "hybrid"
    snapshot: str | None = None
    snapshot_set: str | None = None
    where: dict[str, Any] = Field(default_factory=dict)
    """Metadata filters (``{"chapter": 3}``), applied before ranking."""
    rerank: str | None = None
    timeout: float = 60.0

    @model_validator(mode="after")
    def _one_source(self) -> ExcerptRetriever:
        self._source()  # refuses a wrong combination when made, not at the first query
        return self

    def _source(self) -> Source:
        key = self.api_key.get_secret_value() if self.api_key is not None else None
        return open_source(self.engine, self.principal, self.url, key, self.timeout)

    def _read(self) -> Read:
        return Read(self.collection, self.mode, self.k, self.snapshot, self.snapshot_set,
                    self.where, self.rerank)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **options: Any) -> list[Document]:
        passages = self._source().search(query, overridden(self._read(), options))
        return [Document(page_content=p.text, id=p.id, metadata=p.metadata) for p in passages]
