"""Real manuals, real questions: is the passage that answers in the top 5 (issue 19 target:
>= 80% on our own questions over real manuals)?

Run:  .venv/bin/python bench/manuals.py [--modes bm25,hybrid] [--json bench/out/manuals.json]
      [--misses tune|heldout|fresh|fresh2|blind|all] [--embedder auto|minilm|e5] [--home DIR]
      [--settings FILE] [--manuals NAME,...]

Reads bench/qa/manuals.yaml: its ``manuals`` (Debian packages that ship PDF, HTML and EPUB
manuals under /usr/share, with their paths) and its questions (facts; split tune, heldout, fresh,
fresh2 or blind).
Each manual is ingested with ``--format`` (default ``auto``: the dispatcher picks the reader, as
``excerpt ingest`` does) into one collection of a temporary home, as its own source, twice: BM25
only (for the ``bm25`` mode and the ingest times: seconds per manual, pages/s for PDFs) and with
the default embedder (for ``hybrid``). Each question is then searched as typed through
``Engine.search`` (k 5) and counts when one of the hits states every fact (the matching rules of
:mod:`excerpt.evaluate.qa_metrics`); "bare" repeats it without the question's framing words
(what ``ask`` searches in BM25 mode). For a question missed, its rank in the top 20 and the
number of nodes of the collection that state every fact (0: a chunking miss). Every PDF hit is
also checked for its page: the node must carry ``page``, and most of its first (last) words must
be on that page (on ``page_end``) of the file as pdfium reads it.

The questions missed are listed for the tune half only unless ``--misses`` says otherwise: a
change to the chunker or the ranking is chosen by reading tune misses, and the held-out share
is measured, not read question by question, until the change is final (the JSON has them all).

A manual whose file is absent is reported as such, by name, path and package, and its questions
are left out of the shares (never counted as failures); with none present the run fails.
"""

from __future__ import annotations

import argparse
import glob
import json
import re
import shutil
import sys
import tempfile
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from excerpt.compose.grounding import search_text
from excerpt.engine import Engine
from excerpt.evaluate.qa import SPLITS, Question, load_qa
from excerpt.evaluate.qa_metrics import missing_facts
from excerpt.evaluate.scenarios import read_data
from excerpt.ingest.detect import detect_format
from excerpt.settings import load_settings
from excerpt.types import Filters, Node, SearchMode

QA_FILE = Path(__file__).resolve().parent / "qa" / "manuals.yaml"


@dataclass(frozen=True)
class Manual:
    """One manual of the QA file: its Debian package, declared format and files on disk."""

    name: str
    package: str
    fmt: str
    patterns: tuple[str, ...]
    files: tuple[Path, ...]

    @property
    def present(self) -> bool:
        return bool(self.files)


def read_manuals(qa_file: Path) -> list[Manual]:
    """The ``manuals`` mapping of the QA file, each pattern expanded on this machine."""
    raw = read_data(qa_file).get("manuals") or {}
    out = []
    for name, spec in raw.items():
        patterns = tuple(spec["paths"])
        files = tuple(Path(f) for p in patterns for f in sorted(glob.glob(p)))
        out.append(Manual(str(name), str(spec["package"]), str(spec["format"]), patterns, files))
    return out


def absent_message(manual: Manual) -> str:
    return (f"ABSENT: manual {manual.name!r}: no file matches {', '.join(manual.patterns)} "
            f"(install the Debian package: apt-get install {manual.package}); "
            "its questions are left out")


@cache
def pdf_page_texts(path: Path) -> tuple[str, ...]:
    """Each page's text layer as pdfium gives it (the reference for the page check)."""
    import gzip

    import pypdfium2 as pdfium

    # a gzipped PDF (Debian ships some so) is read as excerpt reads it: expanded
    doc = pdfium.PdfDocument(gzip.decompress(path.read_bytes()) if path.suffix == ".gz"
                             else str(path))
    try:
        return tuple(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
    finally:
        doc.close()


def ingest(engine: Engine, manuals: Sequence[Manual], fmt: str,
           embedder: str) -> dict[str, dict[str, Any]]:
    """Ingest every present manual as its own source; seconds, nodes and pages/s per manual."""
    rows: dict[str, dict[str, Any]] = {}
    for m in manuals:
        reader = detect_format(list(m.files)) if fmt == "auto" else fmt
        t = time.perf_counter()
        result = engine.ingest(list(m.files), collection="manuals", fmt=fmt, embedder=embedder,
                               source=m.name)
        seconds = time.perf_counter() - t
        row: dict[str, Any] = {
            "files": len(m.files), "reader": reader, "documents": result.documents,
            "nodes": result.nodes, "embedded": result.embedded, "seconds": round(seconds, 2),
            "skipped": [e.to_json() for e in result.errors]}
        if m.fmt == "pdf":
            pages = sum(len(pdf_page_texts(f)) for f in m.files)
            row.update(pages=pages, pages_per_s=round(pages / seconds, 1))
        rows[m.name] = row
    return rows


def _squash(text: str) -> str:
    """Letters and digits only, lower case, compatibility forms folded: a passage and its page
    compare equal whatever the reader did to spaces, line-end hyphens and ligatures."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).lower())


def _words(text: str) -> list[str]:
    return [w for w in (_squash(t) for t in text.split()) if len(w) >= 4]


def _on_page(words: Sequence[str], page_text: str) -> bool:
    """Most of ``words`` (3 in 4) are on the page: word order may differ from pdfium's plain
    text (table cells, footnotes, dot leaders), the page may not."""
    squashed = _squash(page_text)
    return bool(words) and sum(w in squashed for w in words) >= 0.75 * len(words)


def page_right(node: Node, files: Sequence[Path]) -> bool:
    """Whether a PDF node has a ``page`` and that page (and ``page_end``) of one of ``files``
    holds its first (and last) words."""
    page = node.metadata.get("page")
    if not isinstance(page, int):
        return False
    end = node.metadata.get("page_end") or page
    words = _words(node.text)
    head, tail = words[:8], words[-8:]
    for path in files:
        pages = pdf_page_texts(path)
        if (1 <= page <= len(pages) and 1 <= end <= len(pages)
                and _on_page(head, pages[page - 1]) and _on_page(tail, pages[end - 1])):
            return True
    return False


def first_holding(nodes: Sequence[Node], q: Question) -> int | None:
    """The 1-based rank of the first node stating every fact of ``q``, or None."""
    for rank, node in enumerate(nodes, start=1):
        if not missing_facts(node.text, q.facts):
            return rank
    return None


def place(node: Node) -> str:
    meta = node.metadata
    where = [f"p. {meta['page']}"] if meta.get("page") else []
    if meta.get("section"):
        where.append(str(meta["section"]))
    return "; ".join(where)


def all_nodes(engine: Engine) -> list[Node]:
    """Every node of the collection's latest view (to tell a question no single node answers,
    a chunking miss, from one the ranking missed)."""
    store = engine.store
    out: list[Node] = []
    for snap in store.latest_snapshots("manuals"):
        sid = snap.snapshot_id
        out += store.nodes_by_ordinal(sid, list(range(store.segment(sid).size)))
    return out


def judge(engine: Engine, questions: Sequence[Question], mode: SearchMode, k: int,
          pdf_files: dict[str, tuple[Path, ...]]) -> list[dict[str, Any]]:
    """One row per question: rank of the answering hit as typed and bare, how many nodes of the
    collection answer it at all, and the PDF page checks of every hit."""
    filters = Filters("manuals")
    nodes = all_nodes(engine)
    rows = []
    for q in questions:
        typed = [h.node for h in engine.search(q.question, filters, None, mode, k).hits]
        bare = [h.node for h in engine.search(search_text(q.question), filters, None, mode,
                                              k).hits]
        deeper = [h.node for h in engine.search(q.question, filters, None, mode, 20).hits]
        checks = [page_right(n, pdf_files[n.source]) for n in typed if n.source in pdf_files]
        rows.append({
            "id": q.id, "manual": q.corpus, "split": q.split, "question": q.question,
            "rank": first_holding(typed, q), "rank_bare": first_holding(bare, q),
            "rank@20": first_holding(deeper, q),
            "answering_nodes": sum(not missing_facts(n.text, q.facts) for n in nodes),
            "pdf_hits": len(checks), "pages_right": sum(bool(c) for c in checks),
            "top": [{"id": n.id, "source": n.source, "place": place(n), "text": n.text[:160]}
                    for n in typed]})
    return rows


def share(rows: Iterable[dict[str, Any]], key: str) -> tuple[int, int]:
    rows = list(rows)
    return sum(r[key] is not None for r in rows), len(rows)


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Found-in-top-k counts per split, overall and per manual, and the page checks."""
    out: dict[str, Any] = {}
    for label, group in [("all", rows), *((s, [r for r in rows if r["split"] == s])
                                          for s in SPLITS)]:
        found, total = share(group, "rank")
        bare, _ = share(group, "rank_bare")
        out[label] = {"found": found, "questions": total,
                      "share": round(found / total, 3) if total else None,
                      "share_bare": round(bare / total, 3) if total else None}
    out["no_single_node"] = [r["id"] for r in rows if not r["answering_nodes"]]
    out["per_manual"] = {m: share((r for r in rows if r["manual"] == m), "rank")
                         for m in sorted({r["manual"] for r in rows})}
    pdf_hits = sum(r["pdf_hits"] for r in rows)
    out["pdf_hits"] = pdf_hits
    out["pdf_pages_right"] = sum(r["pages_right"] for r in rows)
    return out


def run_mode(home: Path, mode: SearchMode, manuals: Sequence[Manual], questions: list[Question],
             fmt: str, k: int, embedder: str = "auto", settings: Path | None = None
             ) -> dict[str, Any]:
    engine = Engine(home, load_settings(settings) if settings else None)
    try:
        embedder = "none" if mode == "bm25" else embedder
        ingested = ingest(engine, manuals, fmt, embedder)
        pdfs = {m.name: m.files for m in manuals if m.fmt == "pdf"}
        rows = judge(engine, questions, mode, k, pdfs)
    finally:
        engine.close()
    return {"mode": mode, "embedder": embedder, "ingest": ingested, "summary": summary(rows),
            "questions": rows}


def print_mode(result: dict[str, Any], k: int, misses: str = "tune") -> None:
    mode, s = result["mode"], result["summary"]
    print(f"\n## {mode}" + ("" if mode == "bm25" else f" ({result['embedder']})") + "\n")
    print("| manual | reader | files | pages | nodes | ingest s | pages/s |")
    print("|---|---|---|---|---|---|---|")
    for name, r in result["ingest"].items():
        print(f"| {name} | {r['reader']} | {r['files']} | {r.get('pages', '')} | {r['nodes']} "
              f"| {r['seconds']} | {r.get('pages_per_s', '')} |")
        for issue in r["skipped"]:
            print(f"  skipped: {issue}")
    print(f"\n| half | answering passage in top {k} | share | bare question |")
    print("|---|---|---|---|")
    for label in (*SPLITS, "all"):
        h = s[label]
        print(f"| {label} | {h['found']}/{h['questions']} | {h['share']} | {h['share_bare']} |")
    print("\nper manual: " + ", ".join(f"{m} {f}/{t}" for m, (f, t) in s["per_manual"].items()))
    print(f"PDF hits whose page holds their text: {s['pdf_pages_right']}/{s['pdf_hits']}")
    print(f"questions no single node answers (the facts split across nodes): "
          f"{', '.join(s['no_single_node']) or 'none'}")
    for row in result["questions"]:
        if row["rank"] is None and misses in ("all", row["split"]):
            top = "; ".join(f"{t['source']} [{t['place']}] {t['text'][:60]!r}"
                            for t in row["top"][:3])
            print(f"  missed {row['id']} ({row['split']}; rank in the top 20: {row['rank@20']}; "
                  f"{row['answering_nodes']} nodes of the collection answer it): "
                  f"{row['question']}\n    top: {top}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--qa", type=Path, default=QA_FILE)
    parser.add_argument("--modes", default="bm25,hybrid")
    parser.add_argument("--format", default="auto", help="the ingest format (default auto)")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--embedder", default="auto",
                        help="the embedder of the semantic and hybrid modes (default auto)")
    parser.add_argument("--home", type=Path, help="keep the homes here (default: a temporary "
                        "folder, removed)")
    parser.add_argument("--settings", type=Path, help="a settings file for the engine")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--misses", choices=(*SPLITS, "all"), default="tune",
                        help="whose missed questions to list (default tune)")
    parser.add_argument("--manuals", help="only these manuals (comma-separated names of the "
                        "QA file) and their questions (default all)")
    args = parser.parse_args()
    manuals = read_manuals(args.qa)
    if args.manuals:
        wanted = args.manuals.split(",")
        unknown = sorted(set(wanted) - {m.name for m in manuals})
        if unknown:
            parser.error(f"--manuals: no manual {', '.join(unknown)} in {args.qa}")
        manuals = [m for m in manuals if m.name in wanted]
    for m in manuals:
        if not m.present:
            print(absent_message(m))
    present = [m for m in manuals if m.present]
    if not present:
        print("no manual is present: nothing to measure", file=sys.stderr)
        return 2
    names = {m.name for m in present}
    questions = [q for q in load_qa(args.qa).questions if q.answerable and q.corpus in names]
    root = args.home or Path(tempfile.mkdtemp(prefix="excerpt-manuals-"))
    try:
        results = [run_mode(root / mode, mode, present, questions, args.format, args.k,
                            args.embedder, args.settings) for mode in args.modes.split(",")]
    finally:
        if args.home is None:
            shutil.rmtree(root, ignore_errors=True)
    print(f"{len(questions)} questions over {len(present)} manuals "
          f"({', '.join(sorted(names))}); format {args.format}")
    for result in results:
        print_mode(result, args.k, args.misses)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        absent = [{"manual": m.name, "package": m.package, "paths": list(m.patterns)}
                  for m in manuals if not m.present]
        args.json.write_text(json.dumps({"format": args.format, "k": args.k, "absent": absent,
                                         "modes": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
