"""`excerpt ask`: a question answered with quotes and [n] citations."""

from __future__ import annotations

from typing import Any, cast

import click

from excerpt import service
from excerpt.cli.main import (
    Bounded,
    cli,
    emit,
    handles_errors,
    json_option,
    local_scope,
    principal_options,
)
from excerpt.cli.places import citation_place
from excerpt.compose.readers import READERS, chosen_reader
from excerpt.scope import Scope
from excerpt.types import SEARCH_MODES, SearchMode


@cli.command()
@click.argument("question")
@click.option("--collection", default="default", show_default=True,
              help="The collection to answer from.")
@click.option("--mode", type=click.Choice(SEARCH_MODES), default="hybrid", show_default=True,
              help="How passages are found: bm25, semantic or hybrid (both, fused).")
@click.option("--snapshot", "snapshot_id", default=None, help="Read this snapshot only.")
@click.option("--snapshot-set", default=None, help="Read the snapshots of this set.")
@click.option("--where", "where", multiple=True, metavar="KEY=VALUE",
              help="Metadata filter: the value, or a list holding it (repeatable).")
@click.option("--doc-limit", type=Bounded("doc_limit"), default=None,
              help="Passages that reach composition, at most 100 (default: setting "
                   "ask_doc_limit, 10).")
@click.option("--fetch-limit", type=Bounded("fetch_limit"), default=None,
              help="With a reranker: candidates retrieved before it narrows them, at most 300 "
                   "(default 3 x doc-limit, never below doc-limit).")
@click.option("--rerank", "rerank", default=None, metavar="NAME", is_flag=False,
              flag_value="features",
              help="Rerank with NAME (features, late-interaction, cross-encoder:PATH; "
                   "bare --rerank: features). Default: setting reranker.")
@click.option("--mmr", is_flag=True, help="Diversify the passages with MMR (setting mmr_lambda).")
@click.option("--max-quotes", type=Bounded("max_quotes"), default=None,
              help="Quotes listed at most, up to 20 (default: setting ask_max_quotes, 4).")
@click.option("--explain", is_flag=True,
              help="Add the PROV-O provenance events (question, grounding, exploration, focus, "
                   "synthesis) to the output.")
@click.option("--explain-format", type=click.Choice(["json", "turtle", "trig", "jsonld"]),
              default="json", show_default=True,
              help="With --explain: also print the provenance graph in this RDF syntax.")
@click.option("--conversation", default=None, metavar="ID",
              help="Ask inside this conversation (memory store in --home): a follow-up is "
                   "resolved from its recent turns and summary, and the question and answer are "
                   "recorded as the next turn.")
@click.option("--reader", type=click.Choice(READERS), default=None,
              help="Who writes the answer: extractive (quotes, no model), openai (the server "
                   "EXCERPT_LLM_URL names) or local (a GGUF model in-process); a model's "
                   "sentences are kept only where the quote they cite supports them. Default: "
                   "setting reader, or openai when EXCERPT_LLM_URL is set.")
@click.option("--reader-model", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="The GGUF chat model of --reader local (default: setting reader_model); "
                   "given alone, it implies --reader local.")
@click.option("--llm/--no-llm", default=True, show_default=True,
              help="--no-llm: extractive even when EXCERPT_LLM_URL is set (as --reader "
                   "extractive).")
@principal_options
@json_option
@click.pass_context
@handles_errors
def ask(ctx: click.Context, question: str, collection: str, mode: str, snapshot_id: str | None,
        snapshot_set: str | None, where: tuple[str, ...], doc_limit: int | None,
        fetch_limit: int | None, rerank: str | None, mmr: bool, max_quotes: int | None,
        explain: bool, explain_format: str, conversation: str | None, reader: str | None,
        reader_model: str | None, llm: bool, acl_tags: tuple[str, ...],
        clearances: tuple[str, ...], all_access: bool) -> None:
    """Answer QUESTION from the collection, within the caller's access rights: quotes from the
    passages found, an answer whose every sentence cites them as [n], and the citations."""
    engine = ctx.obj["engine"]
    options = engine.ask_options(doc_limit, fetch_limit, max_quotes, mmr,
                                 chosen_reader(reader, reader_model, llm), reader_model)
    filters, principal = local_scope(Scope(collection, snapshot_id, snapshot_set, where,
                                           acl_tags, clearances, all_access))
    from excerpt.memory.store import MemoryStore

    streamed = _Streamed(ctx.obj.get("json", False))
    request = service.AskRequest(question, options, cast(SearchMode, mode), rerank, explain,
                                 service.Conversation(conversation, conversation)
                                 if conversation else None)  # any name: the user's own store
    memory = MemoryStore(engine.memory_backend(), embedder=None) if conversation else None
    try:
        answer = service.ask(engine, request, filters, principal, memory, streamed.sentence)
    finally:
        if memory is not None:
            memory.close()
    payload = answer.to_json(explain)
    recorder = answer.result.recorder
    if explain and explain_format != "json" and recorder is not None:
        payload["provenance_rdf"] = _rdf(recorder, explain_format)
    emit(ctx, payload, lambda: _human(payload, streamed))


class _Streamed:
    """A model's checked sentences, printed the moment each is judged (not with --json)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.text: list[str] = []

    def sentence(self, kept: Any) -> None:
        if not self.quiet:
            click.echo(("" if not self.text else " ") + kept.text, nl=False)
        self.text.append(kept.text)


def _rdf(recorder: Any, fmt: str) -> str:
    text: str = {"turtle": recorder.to_turtle, "trig": recorder.to_trig,
                 "jsonld": recorder.to_jsonld}[fmt]()
    return text


def provenance_lines(events: list[dict[str, Any]]) -> list[str]:
    """The PROV-O events of ``--explain`` as text a person reads: per stage, what it recorded
    (the query, concepts, candidates as ``#rank snapshot/node (score)``, the cited nodes),
    without the RDF types and the links between stages."""
    props: dict[str, dict[str, list[Any]]] = {}
    for event in events:
        for subject, predicate, obj in event["triples"]:
            if not predicate.endswith(("#type", "wasGeneratedBy", "wasDerivedFrom")):
                name = predicate.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
                props.setdefault(subject, {}).setdefault(name, []).append(obj)

    def show(value: Any) -> str:
        about = props.get(value, {}) if isinstance(value, str) else {}
        if "nodeId" in about:
            return f"{about.get('snapshotId', ['?'])[0]}/{about['nodeId'][0]}"
        if "node" in about:
            return (f"#{about.get('rank', ['?'])[0]} {show(about['node'][0])} "
                    f"(score {about.get('score', ['?'])[0]})")
        return str(value)

    lines = ["provenance:"]
    for event in events:
        lines.append(f"  {event['stage']}:")
        for name, values in props.get(event["id"], {}).items():
            if name != "answer":  # printed above
                lines += [f"    {name}: {show(v)}" for v in values]
    return lines


def _human(payload: dict[str, Any], streamed: _Streamed) -> None:
    if payload.get("resolution"):
        click.echo(f"(asked as: {payload['resolved_question']})", err=True)
    reader = payload["reader"]
    if streamed.text and not reader["fell_back"]:
        click.echo("")  # the answer's sentences were printed as they came
    else:
        if streamed.text:
            click.echo("")
        click.echo(payload["answer"])
    if payload.get("provenance") and payload.get("synthesis"):
        for kept in payload["synthesis"]["kept"]:
            support = "".join(f"[{n}]" for n in kept["supported_by"])
            click.echo(f"  supported by {support}: {kept['text']}", err=True)
    click.echo("")
    for c in payload["citations"]:
        meta = citation_place(c["metadata"])
        click.echo(f"[{c['n']}] {c['id']}  {c['title']}" + (f"  ({meta})" if meta else ""))
    if payload.get("provenance_rdf"):
        click.echo("")
        click.echo(payload["provenance_rdf"])
    elif payload.get("provenance"):
        click.echo("")
        click.echo("\n".join(provenance_lines(payload["provenance"])))
    timings = payload["timings_ms"]
    click.echo(f"({'cautious, ' if payload['cautious'] else ''}"
               f"{timings.get('total', 0.0):.0f} ms{reader_line(reader)})", err=True)


def reader_line(reader: dict[str, Any]) -> str:
    """``, read by local SmolLM2…gguf (312 tokens in, 41 out, 2100 ms)``, and when the
    extractive answer stood in for the model's, why."""
    if reader["name"] == "extractive":
        return ""
    line = (f", read by {reader['name']} {reader['model']} ({reader['tokens_in']} tokens in, "
            f"{reader['tokens_out']} out, {reader['ms']:.0f} ms)")
    if reader["fell_back"]:
        line += f"; the extractive answer stands: {reader.get('reason', '')}"
    return line
