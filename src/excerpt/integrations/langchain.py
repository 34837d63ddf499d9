"""excerpt as a LangChain retriever (``pip install 'excerpt[langchain]'``).

>>> from excerpt.integrations.langchain import ExcerptRetriever
>>> retriever = ExcerptRetriever(engine=engine, collection="books", k=3)   # doctest: +SKIP
>>> remote = ExcerptRetriever(url="http://127.0.0.1:8080", api_key=KEY,    # doctest: +SKIP
...                           collection="books", k=3)

langchain-core is imported when :class:`ExcerptRetriever` is first asked for; without it, a
:class:`excerpt.errors.DependencyError` says how to install it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from excerpt.integrations._lazy import retriever

if TYPE_CHECKING:
    from excerpt.integrations._langchain import ExcerptRetriever

__all__ = ["ExcerptRetriever"]
FRAMEWORK = ("langchain_core", "pydantic")
"""The packages whose absence means the extra is not installed."""


def __getattr__(name: str) -> Any:
    if name != "ExcerptRetriever":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    found = retriever("excerpt.integrations._langchain", FRAMEWORK, "LangChain",
                      "langchain-core", "langchain")
    globals()[name] = found  # later look-ups skip this function
    return found
