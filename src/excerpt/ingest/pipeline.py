"""One import run: load, check, analyse, embed, write the segment, publish — or fail cleanly.

The engine calls :class:`Importer`; everything an import needs is given to it (the store, the
settings and a function that returns an embedder by name), so it can be tested and reused alone.
An exception anywhere marks the run failed (with the files already reported) and re-raises;
the store's publish step makes the snapshot visible all at once or not at all.

Every snapshot records the content hash it was built from (:func:`content_hash`: the bytes of
every file read and the options that shape the nodes). Importing the same content again into
the same source is a no-op: the result says ``unchanged``, names the snapshot that already
holds it, and nothing is loaded, embedded, published or recorded as a run.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from excerpt import telemetry
from excerpt.analyze import ANALYZER_VERSION, analyze_many, detect_language
from excerpt.embedder_names import EMBEDDERS, for_language
from excerpt.errors import CorpusError, ExcerptError, InputError
from excerpt.ingest._archive import MIB, ArchiveLimits
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.files import FileSet, resolve_files
from excerpt.settings import Settings
from excerpt.store.ann import AnnConfig
from excerpt.store.base import OverSegments, SnapshotInfo, SnapshotPayload, Store
from excerpt.store.segment import write_segment
from excerpt.types import IngestIssue, Node

Progress = Callable[[str, int, int], None]
"""progress(stage, done, total): called as a long stage advances."""

_SURROGATE = re.compile("[\ud800-\udfff]")
READERS_VERSION = 3
"""Bump when a reader's nodes for the same files and options change (a fixed reader, a new
chunking rule): it is part of every import's fingerprint, so the next import or sync of files
that did not change reads them again instead of keeping the snapshot the old reader made.
2: DocBook terminal sessions and titled notes kept (html_blocks, html).
3: EPUB chapters numbered as the book numbers them, front matter not counted (epub)."""


def no_progress(stage: str, done: int, total: int) -> None:
    return None


def check_labels(acl_tags: Sequence[str], classification_labels: Sequence[str]) -> None:
    """Refuses a blank ACL tag or classification label of an import (InputError): dropped,
    it would publish to everyone what was meant for a group."""
    for option, values in (("acl_tag", acl_tags), ("classification", classification_labels)):
        if any(not value.strip() for value in values):
            raise InputError(f"{option} holds an empty value; an empty string is not a tag "
                             "or a label (remove it)")


@dataclass(frozen=True)
class IngestResult:
    collection: str
    snapshot_id: str | None
    import_run_id: int | None  # None when unchanged: no run was needed
    status: str
    documents: int
    nodes: int
    edges: int
    seconds: float
    errors: list[IngestIssue]
    embedded: int = 0
    embed_model: str | None = None
    message: str | None = None
    unresolved: dict[str, list[str]] = field(default_factory=dict)
    formats: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per file format, what the load read and skipped (LoadedCorpus.formats; documents)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "collection": self.collection,
            "snapshot_id": self.snapshot_id,
            "import_run_id": self.import_run_id,
            "status": self.status,
            "documents": self.documents,
            "nodes": self.nodes,
            "edges": self.edges,
            "seconds": round(self.seconds, 3),
            "errors": [e.to_json() for e in self.errors],
            "skipped": len(self.errors),  # files, batches or records reported and left out
            "embedded": self.embedded,
            "embed_model": self.embed_model,
            # references the import could not bind to anything it holds, per kind
            "unresolved": {kind: {"count": len(names), "names": names}
                           for kind, names in self.unresolved.items()},
        }
        if self.formats:
            out["formats"] = self.formats
        if self.message:
            out["message"] = self.message
        return out


class Importer:
    """Runs import runs against one store with one set of settings."""

    def __init__(self, store: Store, settings: Settings,
                 embedder_for: Callable[[str], Any]) -> None:
        self.store = store
        self.settings = settings
        self._embedder = embedder_for

    def run(
        self,
        paths: Path | str | Sequence[Path | str],
        collection: str = "default",
        fmt: str = "auto",
        acl_tags: Sequence[str] = (),
        classification_labels: Sequence[str] = (),
        snapshot_name: str | None = None,
        embedder: str = "auto",
        source: str | None = None,
        progress: Progress = no_progress,
        roots: Sequence[Path | str] | None = None,
        known_hash: str | None = None,
        ray: str | None = None,
        document_id: str | None = None,
        files: FileSet | None = None,
    ) -> IngestResult:
        """Import ``paths`` as one snapshot; raises on a refused corpus (the run is 'failed').
        The same content as the latest snapshot of the run's source is a no-op ('unchanged').

        ``roots``: when given, every file read must resolve inside one of these folders
        (symbolic links included); a server passes its ingest roots. ``known_hash``: the
        content hash, computed and compared by the caller (excerpt sync, for many files at
        once); the import then always runs and records it. ``ray``: a Ray cluster address
        (``auto``, ``HOST:PORT``, ``ray://HOST:PORT`` or ``local``) whose workers embed the
        batches (:mod:`excerpt.embed.ray_embed`); everything else runs here as without it.
        ``document_id``: for one file, the id its document takes instead of the file's name
        (and the prefix of the node ids made from it): excerpt sync gives each file its path
        in the synced folder, so that ``a/README.md`` and ``b/README.md`` stay apart.
        ``files``: the paths' files as the caller found them (ingest/files.py; sync hands
        each file with the bytes it hashed), roots checked; None, they are walked here once,
        and the hash, detection and the loader all read that one walk's files."""
        if embedder not in EMBEDDERS:
            raise InputError(f"unknown embedder {embedder!r}; choose one of {EMBEDDERS}")
        resolved = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
        if not resolved:
            raise InputError("nothing to ingest: give at least one path")
        for p in resolved:
            if not p.exists():
                raise InputError(f"{p}: no such file or directory")
        guess = source or "|".join(sorted(str(p.resolve()) for p in resolved))
        started = time.perf_counter()
        options = self.options(acl_tags, classification_labels, roots)
        if known_hash is None:
            files = files if files is not None else resolve_files(resolved, options.roots)
            known_hash = content_hash(resolved, fingerprint(fmt, options, embedder,
                                                            snapshot_name), files=files)
            same = self._unchanged(collection, guess, known_hash)
            if same is not None:
                files.release()
                telemetry.imported("unchanged")
                return unchanged_result(same, time.perf_counter() - started)
        run_id = self.store.begin_run(collection, guess, fmt)
        issues: list[IngestIssue] = []
        try:
            from excerpt.ingest.detect import load  # the readers, when an import runs

            progress("load", 0, 1)
            corpus = load(resolved, fmt, replace(options, progress=progress, files=files))
            if files is not None:
                files.release()  # what a loader did not read (a README in a code folder)
            progress("load", 1, 1)
            issues = list(corpus.errors)
            if source:
                _rename_source(corpus, source)
            if document_id and len(resolved) == 1 and resolved[0].is_file():
                _rename_document(corpus, resolved[0].name, document_id)
            try:
                return self._build_and_publish(
                    run_id, collection, corpus, snapshot_name, embedder, started, progress,
                    known_hash, ray,
                )
            except UnicodeEncodeError as exc:  # a lone surrogate outside the nodes' fields
                raise CorpusError(f"{corpus.source}: text that cannot be stored as UTF-8 "
                                  f"({exc.object[exc.start:exc.end]!r}: {exc.reason})") from None
        except BaseException as exc:
            reason = str(exc) if isinstance(exc, ExcerptError) else f"interrupted: {exc!r}"
            self.store.fail_run(run_id, reason, issues, time.perf_counter() - started)
            telemetry.imported("failed")
            raise

    def options(self, acl_tags: Sequence[str], classification_labels: Sequence[str],
                roots: Sequence[Path | str] | None = None) -> LoadOptions:
        """The load options of an import with these security fields under these settings."""
        check_labels(acl_tags, classification_labels)
        return LoadOptions(
            acl_tags=tuple(sorted(set(acl_tags))),
            classification_labels=tuple(sorted(set(classification_labels))),
            chunk_chars=self.settings.chunk_chars,
            document_chunk_chars=self.settings.document_chunk_chars,
            overlap_chars=self.settings.chunk_overlap,
            max_node_tokens=self.settings.code_max_node_tokens,
            archive_limits=archive_limits(self.settings),
            roots=None if roots is None else tuple(Path(r).resolve() for r in roots),
        )

    def _build_and_publish(
        self,
        run_id: int,
        collection: str,
        corpus: LoadedCorpus,
        snapshot_name: str | None,
        embedder: str,
        started: float,
        progress: Progress,
        hashed: str,
        ray: str | None = None,
    ) -> IngestResult:
        nodes = _checked_nodes(corpus.nodes)
        texts = [_index_text(n, corpus.index_titles) for n in nodes]
        languages = [detect_language(t) for t in texts]
        nodes = [_with_language(n, lang) for n, lang in zip(nodes, languages, strict=True)]
        model = self._choose_model(embedder, languages)
        if ray is None:
            tokens = _analyze(texts, progress)
            vectors, embedded = self._embed(model, texts, progress)
        else:  # the cluster embeds while this process analyses: neither waits for the other
            with ThreadPoolExecutor(1, thread_name_prefix="analyze") as pool:
                analysing = pool.submit(_analyze, texts, progress)
                vectors, embedded = self._embed(model, texts, progress, ray)
                tokens = analysing.result()
        staging = self.store.staging_dir(run_id)
        ann = AnnConfig.from_settings(self.settings)
        indexing = (vectors is not None and ann.min_nodes > 0 and len(vectors) >= ann.min_nodes
                    and isinstance(self.store.ranking, OverSegments))  # the engine ranks over it
        if indexing:
            progress("index", 0, 1)  # k-means cells: about a minute at a million nodes
        write_segment(
            staging,
            [n.id for n in nodes],
            tokens,
            [n.acl_tags for n in nodes],
            [n.classification_labels for n in nodes],
            vectors,
            {"analyzer": ANALYZER_VERSION, "embed_model": model},
            [(e.from_id, e.relation, e.to_id) for e in corpus.edges],
            ann=ann if indexing else None,
        )
        if indexing:
            progress("index", 1, 1)
        payload = SnapshotPayload(
            collection=collection,
            source=corpus.source,
            documents=corpus.documents,
            nodes=nodes,
            edges=corpus.edges,
            errors=corpus.errors,
            segment_dir=staging,
            snapshot_id=corpus.snapshot_hint,
            name=snapshot_name,
            embed_model=model,
            content_hash=hashed,
        )
        info = self.store.publish(run_id, payload, time.perf_counter() - started)
        telemetry.imported("completed")
        return IngestResult(
            collection=collection,
            snapshot_id=info.snapshot_id,
            import_run_id=run_id,
            status="completed",
            documents=info.documents,
            nodes=info.nodes,
            edges=info.edges,
            seconds=time.perf_counter() - started,
            errors=corpus.errors,
            embedded=embedded,
            embed_model=model,
            unresolved=corpus.unresolved,
            formats=corpus.formats,
        )

    def _unchanged(self, collection: str, run_source: str, hashed: str) -> SnapshotInfo | None:
        """The live snapshot the last completed run of ``run_source`` published, when it was
        built from ``hashed`` and is still the latest of its source; else None. (The run's
        source is known before loading; the snapshot's source only after.)"""
        runs = [r for r in self.store.runs(collection)
                if r.source == run_source and r.status == "completed" and r.snapshot_id]
        if not runs:
            return None
        latest = runs[-1].snapshot_id
        for known in self.store.source_states(collection).values():
            if known.snapshot_id == latest:
                return self.store.snapshot(latest) if known.content_hash == hashed else None
        return None  # deleted since, or its source retired

    def _choose_model(self, embedder: str, languages: Sequence[str]) -> str | None:
        if embedder == "none" or not languages:
            return None
        if embedder != "auto":
            return embedder
        korean = sum(1 for lang in languages if lang == "ko") / len(languages)
        return for_language("ko" if korean >= self.settings.korean_share_for_e5 else "en")

    def _embed(
        self, model: str | None, texts: Sequence[str], progress: Progress,
        ray: str | None = None,
    ) -> tuple[npt.NDArray[np.float32] | None, int]:
        """The texts' vectors (cached ones reused) and how many were embedded; on the Ray
        cluster at ``ray`` when given, in the same batches, so with the same vectors."""
        if model is None:
            return None, 0
        from excerpt.embed.cache import BatchRunner, embed_with_cache, run_in_order

        progress("embed", 0, len(texts))

        def run(runner: BatchRunner = run_in_order) -> tuple[npt.NDArray[np.float32], int]:
            return embed_with_cache(
                self._embedder(model), texts, self.store, batch_size=self.settings.embed_batch,
                progress=lambda done: progress("embed", done, len(texts)), runner=runner)

        if ray is None:
            return run()
        from excerpt.embed.ray_embed import ray_connection, ray_runner

        with ray_connection(ray) as connected:
            return run(ray_runner(connected, model))


def _analyze(texts: Sequence[str], progress: Progress) -> list[list[str]]:
    progress("analyze", 0, len(texts))
    tokens = analyze_many(texts)
    progress("analyze", len(texts), len(texts))
    return tokens


def _rename_document(corpus: LoadedCorpus, old: str, new: str) -> None:
    """The document the file's name identified (``README.md``) is ``new`` (``notes/a/README.md``),
    and so are the node ids made from it (``README.md:0003``), in nodes and edges alike; ids
    the content gives (a book's ``pg174:ch01:0003``, code symbols) are left as they are."""
    def renamed(node_id: str) -> str:
        if node_id == old:
            return new
        return new + node_id[len(old):] if node_id.startswith(old + ":") else node_id

    corpus.documents = [replace(d, id=new) if d.id == old else d for d in corpus.documents]
    corpus.nodes = [replace(n, id=renamed(n.id), document_id=new) if n.document_id == old
                    else n for n in corpus.nodes]
    corpus.edges = [replace(e, from_id=renamed(e.from_id), to_id=renamed(e.to_id))
                    for e in corpus.edges]


def _rename_source(corpus: LoadedCorpus, source: str) -> None:
    """The import's source is ``source`` (an upload's ``upload:NAME``, a chosen name): the
    documents and nodes that carried the loader's own name (the files' resolved paths) carry
    it too, so no hit shows where a server kept an upload; a node's own file within a bundle
    (a relative path) stays."""
    loaded = corpus.source
    corpus.documents = [replace(d, source=source) if d.source == loaded else d
                        for d in corpus.documents]
    corpus.nodes = [replace(n, source=source) if n.source == loaded else n
                    for n in corpus.nodes]
    corpus.source = source


def fingerprint(fmt: str, options: LoadOptions, embedder: str,
                snapshot_name: str | None) -> dict[str, Any]:
    """What besides the files decides the snapshot's nodes and vectors: changing any of it
    (a tag, the chunk size, the analyzer, the readers' version) makes the same files a new
    snapshot."""
    return {"format": fmt, "acl_tags": list(options.acl_tags),
            "labels": list(options.classification_labels), "chunk": options.chunk_chars,
            "document_chunk": options.document_chars, "overlap": options.overlap_chars,
            "max_node_tokens": options.max_node_tokens,
            "embedder": embedder, "name": snapshot_name, "analyzer": ANALYZER_VERSION,
            "readers": READERS_VERSION}


def content_hash(paths: Sequence[Path], options: dict[str, Any],
                 roots: Sequence[Path] | None = None, files: FileSet | None = None) -> str:
    """sha256 of ``options`` and of every file under ``paths`` (its path relative to the
    path given, and its bytes' sha256), in a stable order. With ``roots``, paths outside them
    are refused first (nothing outside is read, not even to hash it). ``files``: the paths'
    files as the import found them (roots checked); the bytes hashed stay with them, within
    their budget, for the loader (ingest/files.py)."""
    files = files if files is not None else resolve_files(paths, roots)
    digest = hashlib.sha256(json.dumps(options, sort_keys=True).encode())
    for path in sorted(files.given, key=lambda p: str(p.resolve())):
        digest.update(f"\0{path.name}/".encode())  # not where it is: an upload's folder varies
        for f in files.files(path):
            digest.update(f"\0{f.name}\0{f.digest()}".encode())
    return digest.hexdigest()


def unchanged_result(info: SnapshotInfo, seconds: float) -> IngestResult:
    """The result of an import whose content the latest snapshot already holds."""
    return IngestResult(
        collection=info.collection, snapshot_id=info.snapshot_id, import_run_id=None,
        status="unchanged", documents=info.documents, nodes=info.nodes, edges=info.edges,
        seconds=seconds, errors=[], embed_model=info.embed_model,
        message=f"unchanged: snapshot {info.snapshot_id} of {info.source!r} already holds "
                "this content")


def archive_limits(settings: Settings) -> ArchiveLimits:
    """The zip limits of ``settings`` (megabytes there, bytes here)."""
    return ArchiveLimits(max_member_bytes=settings.archive_max_member_mb * MIB,
                         max_total_bytes=settings.archive_max_total_mb * MIB,
                         max_ratio=settings.archive_max_ratio)


def _checked_nodes(nodes: Sequence[Node]) -> list[Node]:
    if not nodes:
        raise CorpusError("the corpus has no text to index")
    ordered = sorted(nodes, key=lambda n: n.id)
    for a, b in itertools.pairwise(ordered):
        if a.id == b.id:
            raise CorpusError(f"duplicate node id {a.id!r}")
    for n in ordered:
        if "\n" in n.id or not n.id:
            raise CorpusError(f"invalid node id {n.id!r}: ids are non-empty single lines")
        if any("\x00" in field for field in (n.id, n.text, n.title, n.source)):
            # PostgreSQL cannot store U+0000 in text; refused here so every store behaves alike
            raise CorpusError(f"{n.source or n.document_id}: node {n.id!r} contains a NUL "
                              "character (U+0000); remove it and import again")
        if any(_SURROGATE.search(field) for field in (n.id, n.text, n.title, n.source,
                                                       _as_text(n.metadata))):
            # a lone "\ud800" escape in JSON input: no store can encode it as UTF-8
            raise CorpusError(f"{n.source or n.document_id}: node {n.id!r} contains a lone "
                              "surrogate (a \\uD800-\\uDFFF escape that is half a character)")
    return ordered


def _as_text(metadata: Any) -> str:
    return json.dumps(metadata, ensure_ascii=False, default=str)


def _index_text(node: Node, with_title: bool) -> str:
    return f"{node.title}\n{node.text}" if with_title and node.title else node.text


def _with_language(node: Node, language: str) -> Node:
    if node.metadata.get("language") == language:
        return node
    return replace(node, metadata={**node.metadata, "language": language})
