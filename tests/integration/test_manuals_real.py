"""Real manuals Debian ships (issue 19): one PDF and one HTML manual ingested with format auto,
two of bench/qa/manuals.yaml's tune questions answered in the top 5, PDF hits carrying the page
their text is on and ``ask`` citing the printed pages ("p. 11–12", not the file's 17-18), HTML
hits their section. Skipped, naming the package, when the Debian files are absent (``apt-get
install maint-guide debian-policy``; ``make test`` installs them as root). The module's ingest
takes ~1.5 s."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from excerpt.cli.places import citation_place
from excerpt.engine import Engine
from excerpt.evaluate.qa import Question, load_qa
from excerpt.evaluate.qa_metrics import missing_facts
from excerpt.types import Filters, Node

PDF = Path("/usr/share/doc/maint-guide/maint-guide.en.pdf")
HTML = Path("/usr/share/doc/debian-policy/copyright-format-1.0.html")
QA = Path(__file__).resolve().parents[2] / "bench" / "qa" / "manuals.yaml"


def _require(path: Path, package: str) -> Path:
    if not path.is_file():
        pytest.skip(f"{path} is absent: the Debian package {package} is not installed "
                    f"(apt-get install {package})")
    return path


@pytest.fixture(scope="module")
def manuals(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    pdf, html = _require(PDF, "maint-guide"), _require(HTML, "debian-policy")
    engine = Engine(tmp_path_factory.mktemp("manuals"))
    for name, path in (("maint-guide", pdf), ("copyright-format", html)):
        result = engine.ingest([path], collection="manuals", embedder="none", source=name)
        assert result.nodes > 20 and not result.errors, result.to_json()
    return engine


def _question(qid: str) -> Question:
    found = [q for q in load_qa(QA).questions if q.id == qid]
    assert found and found[0].split == "tune", qid  # only tune questions may steer the readers
    return found[0]


def _top5(engine: Engine, question: str) -> list[Node]:
    return [h.node for h in engine.search(question, Filters("manuals"), None, "bm25", 5).hits]


def _squash(text: str) -> str:
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).lower())


def _mostly_on(words: list[str], page: int) -> bool:
    """3 in 4 of the words are on the page (pdfium's plain text may order them differently:
    table cells, footnotes; the same check as bench/manuals.py)."""
    text = _squash(_page_text(page))
    return bool(words) and sum(w in text for w in words) >= 0.75 * len(words)


def _page_text(page: int) -> str:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(PDF))
    try:
        return str(doc[page - 1].get_textpage().get_text_range())
    finally:
        doc.close()


@pytest.mark.parametrize("qid", ["mg-name-email", "cf-header-required"])
def test_tune_question_answered_in_top5(manuals: Engine, qid: str) -> None:
    q = _question(qid)
    hits = _top5(manuals, q.question)
    answering = [n for n in hits if not missing_facts(n.text, q.facts)]
    assert answering, [(n.source, n.metadata.get("section"), n.text[:80]) for n in hits]
    assert answering[0].source == q.corpus


def test_pdf_hits_cite_the_page_their_text_is_on(manuals: Engine) -> None:
    q = _question("mg-name-email")
    pdf_hits = [n for n in _top5(manuals, q.question) if n.source == "maint-guide"]
    assert pdf_hits
    for node in pdf_hits:
        page, end = node.metadata.get("page"), node.metadata.get("page_end") or node.metadata.get(
            "page")
        assert isinstance(page, int) and isinstance(end, int), node.metadata
        words = [w for w in map(_squash, node.text.split()) if len(w) >= 4]
        assert _mostly_on(words[:8], page), (page, node.text[:80])
        assert _mostly_on(words[-8:], end), (end, node.text[-80:])
    # the DEBEMAIL set-up is on the page printed "11 / 57", the 17th of the file
    answering = [n for n in pdf_hits if not missing_facts(n.text, q.facts)]
    assert answering and 17 in answering[0].metadata.get("pages", [answering[0].metadata["page"]])


def test_html_hits_carry_their_section(manuals: Engine) -> None:
    # the answer is under "5. Stanzas > 5.1. Header stanza"; a node's section is its first
    # block's heading path, so the node holding it is in section 5 (or 5.1)
    q = _question("cf-header-required")
    answering = [n for n in _top5(manuals, q.question) if not missing_facts(n.text, q.facts)]
    assert answering, "no top-5 hit states the answer"
    meta = answering[0].metadata
    assert str(meta.get("section", "")).startswith("5. Stanzas"), meta
    assert "5" in meta.get("section_numbers", []), meta


def test_ask_cites_the_printed_page(manuals: Engine) -> None:
    # the DEBEMAIL example is on the 18th page of the file, printed "12 / 57": the node quoted
    # for it is on printed page 12 (it may start on 11, the end of section 2.7's lead-in), and
    # the citation line gives the printed label, not the file's page, and section 2.7
    q = _question("mg-name-email")
    result = manuals.ask(q.question, Filters("manuals"), None, "bm25", reranker="none")
    lines = {c.node_id: citation_place(c.metadata) for c in result.composed.citations}
    quoted = [q_.node_id for q_ in result.composed.quotes if "DEBFULLNAME" in q_.text]
    assert quoted, result.composed.answer
    meta = next(c.metadata for c in result.composed.citations if c.node_id == quoted[0])
    assert "12" in (meta.get("page_label"), meta.get("page_end_label")), meta
    printed = "–".join(str(meta[k]) for k in ("page_label", "page_end_label") if k in meta)
    assert lines[quoted[0]].startswith(f"p. {printed}, section 2.7"), lines
    pdf = [c for c in result.composed.citations if c.source == "maint-guide"]
    assert all(lines[c.node_id].startswith("p. ") for c in pdf), lines
