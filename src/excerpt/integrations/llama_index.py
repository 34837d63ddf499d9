"""excerpt as a LlamaIndex retriever (``pip install 'excerpt[llamaindex]'``).

>>> from excerpt.integrations.llama_index import ExcerptRetriever
>>> retriever = ExcerptRetriever(engine, collection="books", k=3)          # doctest: +SKIP
>>> remote = ExcerptRetriever(url="http://127.0.0.1:8080", api_key=KEY,    # doctest: +SKIP
...                           collection="books", k=3)

llama-index-core is imported when :class:`ExcerptRetriever` is first asked for; without it, a
:class:`excerpt.errors.DependencyError` says how to install it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from excerpt.integrations._lazy import retriever

if TYPE_CHECKING:
    from excerpt.integrations._llama_index import ExcerptRetriever

__all__ = ["ExcerptRetriever"]
FRAMEWORK = ("llama_index", "pydantic")
"""The packages whose absence means the extra is not installed."""


def __getattr__(name: str) -> Any:
    if name != "ExcerptRetriever":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    found = retriever("excerpt.integrations._llama_index", FRAMEWORK, "LlamaIndex",
                      "llama-index-core", "llamaindex")
    globals()[name] = found  # later look-ups skip this function
    return found
