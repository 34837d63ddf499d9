"""excerpt inside the orchestration frameworks: retrievers for LangChain
(:mod:`excerpt.integrations.langchain`, ``pip install 'excerpt[langchain]'``) and LlamaIndex
(:mod:`excerpt.integrations.llama_index`, ``pip install 'excerpt[llamaindex]'``).

Each retriever reads either a local :class:`excerpt.Engine` as an explicit
:class:`excerpt.Principal` (default: anonymous, the least; never all access unless given) or a
running ``excerpt serve`` with an API key (the key's rights, as every other door has them). Both
go through the same search every door calls (:mod:`excerpt.service`), so a framework sees what
the CLI, REST and MCP would show the same caller, and nothing more. What they share is here:
the source of hits (:mod:`._source`) and a hit as a framework's document (:mod:`._documents`);
the framework itself is imported only when its retriever is first used.
"""
