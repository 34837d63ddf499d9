"""PDF reading and BM25-only ingestion time (issue 19 target: a 300-page PDF in under 30 s).

Run:  .venv/bin/python bench/pdf_ingest.py [--pdf PATH] [--pages 300] [--pdfminer 30]
                                          [--embedder minilm]

Without --pdf it writes a 300-page book with reportlab (tests/pdfs.write_book: a running header
and footer on every page, chapter and section headings, 44 lines of 10-point text a page, every
fifth page in two columns: denser than most books; 180 headings, and no block should hold its
header or footer: the read row says how many do). It times excerpt's reader alone
(:func:`excerpt.ingest.documents.pdf.read`: wall and CPU seconds, ms per page), then a full
``Engine.ingest`` with ``--format pdf --embedder none`` into a fresh store. ``--pdfminer N``
also times pdfminer.six's layout analysis (``extract_pages`` with default LAParams, nothing
after it) on the first N pages, the engine not chosen: the measured reason for PDFium.
``--embedder NAME`` also ingests with that embedder into a fresh store (no cached vectors) and
then runs the embedder alone on the same node texts, batches of 32 one after the other: the
issue's "with embeddings at the embedder's speed".
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from excerpt.engine import Engine
from excerpt.ingest.documents.pdf import read

REPO = Path(__file__).resolve().parents[1]


def timed_read(pdf: Path) -> dict[str, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    doc = read(pdf, pdf.name)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    pages = int(doc.metadata["pages"])
    leaks = sum(any(w in b.text for w in ("Acme Widget Manual", "Release 2.0", " of 300"))
                for b in doc.blocks)  # the built book's running header and footer
    return {"run": "pdfium read", "pages": pages, "blocks": len(doc.blocks),
            "headings": sum(b.kind == "heading" for b in doc.blocks), "header_leaks": leaks,
            "pages_with_text": len({b.page for b in doc.blocks}),
            "seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
            "ms_per_page": round(1000 * wall / pages, 1)}


def timed_ingest(pdf: Path, home: Path, embedder: str = "none") -> dict[str, Any]:
    engine = Engine(home)
    wall, cpu = time.perf_counter(), time.process_time()
    result = engine.ingest([pdf], collection="bench", fmt="pdf", embedder=embedder, source="pdf")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    engine.close()
    label = "ingest bm25 only" if embedder == "none" else f"ingest with {embedder}"
    return {"run": label, "nodes": result.nodes, "seconds": round(wall, 2),
            "cpu_seconds": round(cpu, 2), "nodes_per_s": round(result.nodes / wall, 1)}


def timed_embedding(pdf: Path, home: Path, embedder: str) -> dict[str, Any]:
    """The embedder alone on the texts the ingest in ``home`` embedded, in batches of 32 one
    after the other in this process (no cache): what "at the embedder's speed" compares to."""
    from excerpt.embed.registry import new_embedder

    engine = Engine(home)
    try:
        store = engine.store
        sid = store.latest_snapshots("bench")[0].snapshot_id
        texts = [n.text for n in store.nodes_by_ordinal(sid, list(range(store.segment(sid).size)))]
    finally:
        engine.close()
    model = new_embedder(embedder, workers=2)
    model.embed_documents(texts[:4])  # the model's load is not the embedding's speed
    wall, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), 32):
        model.embed_documents(texts[start:start + 32])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"run": f"{embedder} alone", "nodes": len(texts), "seconds": round(wall, 2),
            "cpu_seconds": round(cpu, 2), "nodes_per_s": round(len(texts) / wall, 1)}


def timed_pdfminer(pdf: Path, pages: int) -> dict[str, Any]:
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams

    wall, cpu = time.perf_counter(), time.process_time()
    n = sum(1 for _ in extract_pages(str(pdf), laparams=LAParams(), maxpages=pages))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"run": "pdfminer layout only", "pages": n, "seconds": round(wall, 2),
            "cpu_seconds": round(cpu, 2), "ms_per_page": round(1000 * wall / max(n, 1), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pdf", type=Path, default=None, help="a PDF to time (default: build)")
    parser.add_argument("--pages", type=int, default=300, help="pages of the built book")
    parser.add_argument("--pdfminer", type=int, default=0, help="also time pdfminer on N pages")
    parser.add_argument("--embedder", default="none",
                        help="also ingest with this embedder and time it alone (e.g. minilm)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="excerpt-pdf-bench-"))
    try:
        pdf = args.pdf
        if pdf is None:
            sys.path.insert(0, str(REPO))
            from tests.pdfs import write_book

            pdf = write_book(tmp / "book.pdf", args.pages)
        if not pdf.exists():
            print(f"{pdf} not found", file=sys.stderr)
            return 1
        rows = [timed_read(pdf), timed_ingest(pdf, tmp / "home")]
        if args.embedder != "none":
            rows.append(timed_ingest(pdf, tmp / "embedded", args.embedder))
            rows.append(timed_embedding(pdf, tmp / "embedded", args.embedder))
        if args.pdfminer:
            rows.append(timed_pdfminer(pdf, args.pdfminer))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for row in rows:
        print(json.dumps({"pdf": str(args.pdf or f"built {args.pages}-page book"), **row}),
              flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
