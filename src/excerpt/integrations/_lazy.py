"""A framework's retriever class, imported when it is first asked for: the framework is an
optional extra, and its absence is a :class:`excerpt.errors.DependencyError` saying how to
install it, not an ImportError from deep inside."""

from __future__ import annotations

import importlib
from typing import Any

from excerpt.errors import DependencyError


def retriever(implementation: str, framework: tuple[str, ...], what: str, needs: str,
              extra: str) -> Any:
    """``implementation``'s ExcerptRetriever; DependencyError when a package of
    ``framework`` is missing (``what`` needs ``needs``: ``pip install 'excerpt[extra]'``)."""
    try:
        module = importlib.import_module(implementation)
    except ImportError as exc:
        if not (exc.name or "").startswith(framework):
            raise
        raise DependencyError(f"the {what} retriever needs {needs} ({exc.name} is missing); "
                              f"install it with: pip install 'excerpt[{extra}]'") from exc
    return module.ExcerptRetriever
