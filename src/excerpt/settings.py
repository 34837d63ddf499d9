"""Pipeline settings as data: each field carries its default and its help text.

The CLI, the docs and a test read ``SETTINGS``, which is derived from the dataclass, so a
setting is declared exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from excerpt.errors import InputError

# Settings are the ground floor: every package reads them, so they import nothing of excerpt
# but its errors; the defaults other modules share are declared here.

MAX_NODE_TOKENS = 512
"""Default cap on a code node's tokens (``LoadOptions.max_node_tokens``): about forty lines
of code, a few nodes fit any context budget."""

DEFAULT_ALLOWLIST: tuple[str, ...] = (
    "ReadsFrom", "WritesTo", "Calls", "Executes", "FK", "On", "SynonymFor", "ReferencedBy(C#)",
    # issue 17: through an interface to its implementations, from a registration to what it
    # binds, from an EF entity to its table (Implements and Mentions stay out: the first leads
    # back up to the interface, the second is a weak link by design)
    "ImplementedBy", "Registers", "MapsTo",
)
"""The relations graph expansion follows by default (graph/expand.py)."""


def _setting(default: Any, help_text: str) -> Any:
    return field(default=default, metadata={"help": help_text})


@dataclass(frozen=True)
class Settings:
    bm25_k1: float = _setting(1.5, "BM25 term-frequency saturation (Lucene variant).")
    bm25_b: float = _setting(0.75, "BM25 length normalisation.")
    fusion: str = _setting(
        "blend", "Hybrid fusion: 'blend' (weighted, min-max) or 'rrf' (reciprocal rank).")
    fusion_alpha: float = _setting(0.5, "Weight of the dense score in the 'blend' fusion.")
    rrf_k: int = _setting(60, "The k constant of reciprocal-rank fusion.")
    fusion_depth: int = _setting(100, "Candidates taken from each ranking before fusion.")
    default_k: int = _setting(10, "Hits returned when -k is not given.")
    chunk_chars: int = _setting(800, "Target characters per chunk for plain text and books.")
    document_chunk_chars: int = _setting(
        1200, "Target characters per node for PDF, Word, HTML, EPUB and Markdown (a node may "
              "run half as far again to hold the rest of its section; why 1200: "
              "ingest/documents/structure.py).")
    chunk_overlap: int = _setting(100, "Characters of overlap between consecutive chunks.")
    code_max_node_tokens: int = _setting(
        MAX_NODE_TOKENS, "Code sources: most tokens in one node; longer members become parts.")
    embed_batch: int = _setting(32, "Texts per embedding batch.")
    dense_index_min_nodes: int = _setting(
        200_000, "Snapshots of at least this many embedded nodes get an IVF index: semantic "
                 "search probes it (approximate, noted; 1.0 of the exact top 10 at 1M nodes in "
                 "bench/dense_ann.py) instead of scanning every vector. 0: never.")
    dense_index_nprobe: int = _setting(
        256, "IVF cells a semantic search probes in a snapshot's index (fewer: faster, further "
             "from exact; 128 and 256 both kept 1.0 of the exact top 10 at 1M nodes).")
    dense_index_candidates: int = _setting(
        400, "Nodes the IVF walk returns per segment, by their 8-bit scores; the best 2 x depth "
             "of a view's are re-scored with the float vectors (fewer: faster, further from "
             "exact).")
    segment_open_files: int = _setting(
        256, "Most segment files a process keeps memory-mapped, each an open file (ulimit -n): "
             "past it the least recently read snapshots' files are closed, and mapped again "
             "when read (the same results). Files under 256 KB are read into memory and hold "
             "no descriptor.")
    merge_factor: int = _setting(
        10, "Segments that merge: when this many segments of a collection are of one size "
            "level (under 10,000 rows, under 100,000, ...), they are merged into one, as a "
            "sync pass goes and ends and in serve's background; so a folder of many files is "
            "searched as fast as one import of the same text. 0: syncs and serve never merge "
            "(`excerpt merge` still does, by 10).")
    merge_interval_s: float = _setting(
        60.0, "excerpt serve merges collections' small segments (left by single imports) "
              "in the background every this many seconds; 0: only syncs merge.")
    pg_dense_index: str = _setting(
        "exact", "PostgreSQL store: semantic search scans every visible vector ('exact') or "
                 "walks an HNSW index ('hnsw': pgvector iterative scans keep the caller's "
                 "filters in the walk; approximate, noted).")
    pg_hnsw_ef_search: int = _setting(
        100, "PostgreSQL store, pg_dense_index hnsw: candidates kept while walking the index "
             "(at least the depth asked; more: better recall, slower).")
    korean_share_for_e5: float = _setting(
        0.2, "Share of Korean nodes above which e5 embeds an import.")
    graph_max_depth: int = _setting(2, "Graph expansion: deepest level reached from a seed.")
    graph_max_nodes: int = _setting(120, "Graph expansion: most nodes returned, seeds included.")
    graph_edge_allowlist: tuple[str, ...] = _setting(
        DEFAULT_ALLOWLIST, "Graph expansion: the relations followed.")
    context_budget_tokens: int = _setting(
        1200, "Context fetch: token budget when --budget-from-settings is given.")
    context_prioritization: str = _setting(
        "seed_first", "Context fetch order: seed_first, graph_first or balanced.")
    query_lexicon: str = _setting(
        "", "YAML lexicon for entities and expansion ('' = the packaged Korean one).")
    expansion_weight: float = _setting(
        0.5, "BM25 weight of an expansion term relative to a query term.")
    search_budget_ms: float = _setting(
        500.0, "Search time above which the adaptive top-k is reduced.")
    multi_hop_max: int = _setting(
        2, "Citation hops followed from the hits (0: none); regulation references only.")
    multi_hop_threshold: float = _setting(
        0.5, "A cited passage is added when its BM25 score is this share of the best hit's.")
    log_dir: str = _setting(
        "", "Folder for pipeline traces and human-readable logs ('' writes none).")
    ask_doc_limit: int = _setting(
        10, "ask: passages that reach composition (the reranker narrows to this many).")
    ask_max_quotes: int = _setting(4, "ask: quotes listed at most.")
    ask_exclude_parts: tuple[str, ...] = _setting(
        ("header", "licence", "contents", "index", "front", "back", "notes"),
        "ask: book apparatus (node metadata 'part') left out of answers; search still finds it.")
    reranker: str = _setting(
        "none", "ask: reranker by name (none, features, late-interaction, cross-encoder, "
        "cross-encoder:PATH).")
    cross_encoder_model: str = _setting(
        "", "The ONNX cross-encoder (tokenizer.json beside it) that the reranker name "
        "'cross-encoder' loads; the service's requests name the reranker, never a path.")
    reader: str = _setting(
        "extractive", "ask: who writes the answer (extractive, openai, local); a model's "
        "sentences are kept only where the quote they cite supports them (compose/readers.py).")
    reader_model: str = _setting(
        "", "The GGUF chat model the reader 'local' runs in-process (pip install "
        "'excerpt[reader]'); requests name the reader, never a path.")
    reader_threads: int = _setting(0, "reader 'local': CPU threads (0: one per core).")
    reader_timeout_s: float = _setting(
        120.0, "reader 'local': seconds one answer may take before the extractive one stands.")
    reader_max_tokens: int = _setting(384, "reader 'local': most tokens one answer may have.")
    mmr_lambda: float = _setting(
        0.7, "ask --mmr: MMR trade-off between relevance (1.0) and diversity (0.0).")
    answer_min_confidence: float = _setting(
        0.42, "ask: answer cautiously when the best sentence's match with the question "
        "(similarity, coverage, focus; 0-1) is below this (calibrated on bench/qa tune).")
    body_max_kb: int = _setting(
        4096, "serve: most kilobytes of a request body (ask, graph, context, memory, /mcp); "
        "larger is refused with 413 before it is read.")
    chat_body_max_kb: int = _setting(
        8192, "serve: most kilobytes of a /v1/chat/completions body (it carries the "
        "conversation's history); larger is refused with 413 before it is read.")
    archive_max_member_mb: int = _setting(
        512, "Zip archives (code bundles, HWPX): most megabytes one member may expand to.")
    archive_max_total_mb: int = _setting(
        2048, "Zip archives: most megabytes read from one archive in all.")
    archive_max_ratio: float = _setting(
        200.0, "Zip archives: highest expanded/compressed ratio of a member past 8 MB.")
    oidc_issuer: str = _setting(
        "", "serve: the identity provider whose bearer JWTs are accepted beside API keys "
            "(its tokens' exact 'iss'); empty: API keys only. See docs/cli.md, 'Sign-in with an "
            "identity provider'.")
    oidc_audience: str = _setting(
        "", "serve: the audience a token must be issued for (its 'aud' must hold it); required "
            "with oidc_issuer.")
    oidc_jwks_url: str = _setting(
        "", "serve: the issuer's JWKS URL (fetched on first use, cached, fetched again for an "
            "unknown kid); or oidc_jwks_file.")
    oidc_jwks_file: str = _setting(
        "", "serve: a JWKS file of the issuer's signing keys (read again when it changes; "
            "nothing is fetched); or oidc_jwks_url.")
    oidc_algorithms: tuple[str, ...] = _setting(
        ("RS256", "ES256"), "serve: the signature algorithms a token may use (RS*, PS*, ES*, "
                            "EdDSA; never none or HS*); the key must be of the algorithm's type.")
    oidc_leeway_s: float = _setting(
        30.0, "serve: seconds of clock skew allowed on a token's exp and nbf.")
    oidc_max_token_bytes: int = _setting(
        8192, "serve: a longer bearer token is refused before it is parsed.")
    oidc_jwks_max_age_s: float = _setting(
        3600.0, "serve: the JWKS is fetched again when older than this.")
    oidc_jwks_min_refresh_s: float = _setting(
        60.0, "serve: the JWKS is fetched at most once per this many seconds, however many "
              "tokens name a kid it does not hold.")
    oidc_tags_claim: str = _setting(
        "groups", "serve: the token claim (a string or a list; dots walk into objects) whose "
                  "values oidc_tags maps to ACL tags.")
    oidc_tags: tuple[str, ...] = _setting(
        (), "serve: the ACL tags a token may get, as CLAIM_VALUE=TAG or TAG (the same); a "
            "claim value not named gives nothing.")
    oidc_clearances_claim: str = _setting(
        "clearance", "serve: the token claim whose values oidc_clearances maps to clearances.")
    oidc_clearances: tuple[str, ...] = _setting(
        (), "serve: the clearances a token may get, as CLAIM_VALUE=LABEL or LABEL.")
    oidc_role_claim: str = _setting(
        "roles", "serve: the token claim whose values oidc_roles maps to a role (Keycloak: "
                 "realm_access.roles).")
    oidc_roles: tuple[str, ...] = _setting(
        (), "serve: CLAIM_VALUE=ROLE rules (ROLE: reader, ingester or admin); the highest "
            "mapped role wins; a token with none is a reader.")
    otel_endpoint: str = _setting(
        "", "OpenTelemetry: the OTLP/HTTP collector's base URL (spans go to URL/v1/traces); "
            "'' : the standard OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT variables, else no tracing.")
    metrics_public: bool = _setting(
        False, "serve: GET /metrics (Prometheus) without a key; by default it needs an admin "
               "key (a scrape job sends it as a bearer token).")

    def with_(self, **changes: Any) -> Settings:
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise KeyError(f"unknown settings: {sorted(unknown)}")
        return replace(self, **changes)


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    help: str


SETTINGS: tuple[Setting, ...] = tuple(
    Setting(f.name, f.default, f.metadata["help"]) for f in fields(Settings)
)


RETIRED = {
    "answer_min_coverage": "caution is now calibrated on the best sentence's match; set "
                           "answer_min_confidence (0-1, default 0.42) instead",
}
"""Settings that existed once, with what replaces them (a file naming one is told so)."""


def load_settings(path: Path | str, base: Settings | None = None) -> Settings:
    """Settings from a YAML (.yaml/.yml) or TOML (.toml) file of ``name: value`` pairs.

    Unknown names and values of the wrong type are refused with the file and the name; lists
    become tuples. Names not in the file keep their value in ``base`` (default: the defaults).
    """
    path = Path(path)
    raw = _read_settings_file(path)
    base = base or Settings()
    known = {s.name: s.default for s in SETTINGS}
    changes: dict[str, Any] = {}
    for name, value in raw.items():
        if name in RETIRED:
            raise InputError(f"{path}: setting {name!r} is gone: {RETIRED[name]}")
        if name not in known:
            raise InputError(f"{path}: unknown setting {name!r}; known: {', '.join(known)}")
        changes[name] = _coerce(path, name, value, known[name])
    return base.with_(**changes)


def _read_settings_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise InputError(f"settings file {path} does not exist")
    text = path.read_text("utf-8")
    try:
        if path.suffix.lower() == ".toml":
            import tomllib

            data: Any = tomllib.loads(text)
        elif path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            raise InputError(f"{path}: settings files are .toml, .yaml or .yml")
    except InputError:
        raise
    except Exception as exc:  # tomllib.TOMLDecodeError, yaml.YAMLError
        raise InputError(f"{path}: not valid {path.suffix[1:].upper()}: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected name: value pairs at the top level")
    return data


def _coerce(path: Path, name: str, value: Any, default: Any) -> Any:
    if isinstance(default, tuple):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            hint = (" (YAML reads On, Off, Yes and No as booleans: quote them)"
                    if isinstance(value, list) and any(isinstance(v, bool) for v in value) else "")
            raise InputError(f"{path}: {name} must be a list of strings{hint}")
        return tuple(value)
    if isinstance(default, bool) or not isinstance(default, (int, float)):
        ok = isinstance(value, type(default))
    else:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok and isinstance(default, int) and not isinstance(value, int):
            ok = False
    if not ok:
        raise InputError(f"{path}: {name} must be {type(default).__name__}, not {value!r}")
    return value
