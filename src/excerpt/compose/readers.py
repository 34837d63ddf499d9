"""Readers: who writes an answer's sentences, by name (``extractive``, ``openai``, ``local``).

``ask`` is retrieve -> compose -> read -> verify -> cite. The extractive composer always runs:
its quotes are what a model reads, and its answer is what stands when a model adds nothing.
A reader is the chat client that reads those quotes (compose.synthesis checks every sentence it
writes against the quote it cites):

============  ================================================================================
extractive    no model: the composer's quotes are the answer (the default; needs nothing)
openai        any OpenAI-compatible server (Ollama, vLLM, llama.cpp's server, LM Studio,
              OpenAI), configured by ``EXCERPT_LLM_URL`` / ``_MODEL`` / ``_KEY``
              (compose.llm); it also names the question's concepts for retrieval
local         a GGUF chat model run in-process by llama.cpp (``pip install 'excerpt[reader]'``,
              compose.local_llm): the file the ``reader_model`` setting names, or
              ``--reader-model PATH`` on the command line; loaded once, kept warm
============  ================================================================================

Requests over the network (REST, MCP, chat) name a reader, never a model path: the path is the
operator's (the setting), as the cross-encoder's is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal, get_args

from excerpt.errors import InputError

if TYPE_CHECKING:
    from excerpt.compose.synthesis import ChatClient
    from excerpt.settings import Settings

__all__ = ["READERS", "ReaderName", "check_reader", "chosen_reader", "open_reader"]

ReaderName = Literal["extractive", "openai", "local"]
READERS: tuple[str, ...] = get_args(ReaderName)  # the request bodies' type and the CLI's choice


def check_reader(name: str) -> str:
    """``name`` when it is a reader; an InputError naming the readers otherwise."""
    if name not in READERS:
        raise InputError(f"unknown reader {name!r}; the readers are {', '.join(READERS)}")
    return name


def chosen_reader(reader: str | None, model_path: str | None, llm: bool,
                  env: Mapping[str, str] | None = None) -> str | None:
    """The reader a command line asks for: ``--reader``; ``--reader-model`` alone means local;
    ``--no-llm`` extractive; openai when ``EXCERPT_LLM_URL`` is set (as before readers had
    names); else None (the ``reader`` setting's)."""
    if reader is not None:
        return reader
    if model_path:
        return "local"
    if not llm:
        return "extractive"
    env = os.environ if env is None else env
    return "openai" if env.get("EXCERPT_LLM_URL", "").strip() else None


def open_reader(name: str, settings: Settings, model_path: str | None = None,
                env: Mapping[str, str] | None = None) -> ChatClient | None:
    """The chat client of reader ``name`` (None for ``extractive``). ``model_path`` overrides
    the ``reader_model`` setting for ``local`` (the command line's ``--reader-model``)."""
    check_reader(name)
    if name == "openai":
        return _openai(os.environ if env is None else env)
    if name == "local":
        path = model_path or settings.reader_model
        if not path:
            raise InputError("the reader 'local' needs a GGUF chat model: set the reader_model "
                             "setting or give --reader-model PATH")
        from excerpt.compose.local_llm import open_local

        return open_local(path, settings.reader_threads or None,
                          max_tokens=settings.reader_max_tokens,
                          timeout_s=settings.reader_timeout_s)
    return None


def _openai(env: Mapping[str, str]) -> ChatClient:
    from excerpt.compose.llm import LLMClient, LLMConfig

    config = LLMConfig.from_env(env)
    if config is None:
        raise InputError("the reader 'openai' needs an OpenAI-compatible server: set "
                         "EXCERPT_LLM_URL and EXCERPT_LLM_MODEL (and EXCERPT_LLM_KEY if it asks "
                         "for one)")
    return LLMClient(config)
