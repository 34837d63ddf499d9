"""The engine end to end on small corpora written here: every mode, fusion, Korean, re-imports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.errors import InputError
from excerpt.retrieve.fusion import blend, rrf
from excerpt.retrieve.view import Candidate
from excerpt.settings import Settings
from excerpt.types import Filters, Principal

ENGLISH = {
    "tides.md": "# Tides\n\nThe moon's gravity pulls the oceans, raising the tides twice a day.",
    "volcano.md": "# Volcanoes\n\nMagma rises where tectonic plates meet and erupts as lava.",
    "bread.md": "# Baking\n\nKnead the dough, let it rise overnight, then bake the loaf.",
    "parking.md": "# Parking\n\nThe campus garage opens at seven and closes at eleven at night.",
    "fees.md": "# Fees\n\nTuition is paid each semester; late payment adds a fee.",
}
KOREAN = {
    "scholarship.md": "# 장학\n\n장학금을 신청하는 방법은 학기마다 정해진 기간에 "
                      "신청서를 제출하는 것이다.",
    "parking.md": "# 주차\n\n교내 주차장은 평일 오전 7시부터 오후 11시까지 이용할 수 있다.",
    "library.md": "# 도서관\n\n도서관 자료는 1인당 10권까지 대출할 수 있다.",
}
ADMIN = Principal.admin()


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, "utf-8")
    return folder


@pytest.fixture(scope="module")
def english_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("english")
    engine = Engine(root / "home")
    engine.ingest(write(root / "notes", ENGLISH), collection="notes", embedder="minilm")
    engine.close()
    return root / "home"


def candidates(engine: Engine, query: str, mode: str, depth: int) -> list[Candidate]:
    ranking = engine.search(query, Filters(collection="notes"), ADMIN, mode,  # type: ignore[arg-type]
                            depth, fetch=False).ranking
    return [Candidate(0, i, node_id, score) for i, (node_id, score, _) in enumerate(ranking)]


@pytest.mark.parametrize("fusion", ["blend", "rrf"])
def test_hybrid_is_the_configured_fusion_of_the_two_legs(english_home: Path, fusion: str) -> None:
    engine = Engine(english_home, Settings(fusion=fusion))
    query = "when does the garage close"
    depth = engine.settings.fusion_depth
    lexical = candidates(engine, query, "bm25", depth)
    dense = candidates(engine, query, "semantic", depth)
    fused = candidates(engine, query, "hybrid", 3)
    expected = (blend(lexical, dense, 3, engine.settings.fusion_alpha) if fusion == "blend"
                else rrf([lexical, dense], 3, engine.settings.rrf_k))
    assert [c.id for c in fused] == [c.id for c in expected]
    assert fused[0].id == "parking.md:0000"


def test_semantic_finds_a_paraphrase_that_shares_no_term(english_home: Path) -> None:
    engine = Engine(english_home)
    semantic = engine.search("burning mountain", Filters(collection="notes"), ADMIN, "semantic", 1)
    assert semantic.hits[0].node.id == "volcano.md:0000"
    lexical = engine.search("burning mountain", Filters(collection="notes"), ADMIN, "bm25", 5)
    assert lexical.hits == []


def test_every_mode_reports_its_stages(english_home: Path) -> None:
    engine = Engine(english_home)
    for mode, stages in [("bm25", {"bm25"}), ("semantic", {"semantic"}),
                         ("hybrid", {"bm25", "semantic", "fusion"})]:
        result = engine.search("moon tides", Filters(collection="notes"), ADMIN, mode, 2)  # type: ignore[arg-type]
        assert stages <= set(result.timings_ms)
        assert result.hits[0].node.id == "tides.md:0000"


def test_reimporting_unchanged_content_embeds_nothing(tmp_path: Path) -> None:
    corpus = write(tmp_path / "notes", ENGLISH)
    engine = Engine(tmp_path / "home")
    first = engine.ingest(corpus, collection="notes", embedder="minilm")
    (corpus / "fees.md").write_text("# Fees\n\nTuition is due in March and September.", "utf-8")
    second = engine.ingest(corpus, collection="notes", embedder="minilm")
    assert first.embedded == len(ENGLISH)
    assert second.embedded == 1
    assert second.snapshot_id != first.snapshot_id
    old = engine.search("tuition", Filters(collection="notes", snapshot_id=first.snapshot_id),
                        ADMIN, "bm25", 1)
    new = engine.search("tuition", Filters(collection="notes"), ADMIN, "bm25", 1)
    assert "late payment" in old.hits[0].node.text
    assert "March" in new.hits[0].node.text


def test_korean_query_uses_bm25_and_matches_inflected_forms(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "home")
    report = engine.ingest(write(tmp_path / "ko", KOREAN), collection="ko")
    assert report.embed_model == "e5"  # auto: a Korean collection is embedded by e5
    result = engine.search("장학금 신청 방법", Filters(collection="ko"), ADMIN, "hybrid", 3)
    assert result.analysis["language"] == "ko"
    assert result.analysis["tokens"], "the Korean query must have BM25 terms"
    assert "bm25" in result.timings_ms
    assert result.hits[0].node.id == "scholarship.md:0000"
    lexical = engine.search("장학금 신청 방법", Filters(collection="ko"), ADMIN, "bm25", 3)
    assert [h.node.id for h in lexical.hits] == ["scholarship.md:0000"]


def test_a_snapshot_indexed_by_an_older_analyzer_is_reported(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "home")
    result = engine.ingest(write(tmp_path / "ko", KOREAN), collection="ko", embedder="none")
    assert result.snapshot_id is not None
    fresh = engine.search("장학금 신청", Filters(collection="ko"), ADMIN, "bm25")
    assert not any("analyzer version" in n for n in fresh.analysis["notes"])
    meta_file = engine.store.segment(result.snapshot_id).folder / "meta.json"
    engine.close()
    meta = json.loads(meta_file.read_text("utf-8"))
    meta_file.write_text(json.dumps({**meta, "analyzer": "0"}), "utf-8")
    stale = Engine(tmp_path / "home").search("장학금 신청", Filters(collection="ko"), ADMIN, "bm25")
    assert any("analyzer version 0" in n and "re-ingest" in n for n in stale.analysis["notes"])
    assert stale.hits  # still searched


def test_search_rerank_overfetches_and_keeps_k(english_home: Path) -> None:
    engine = Engine(english_home)
    filters = Filters(collection="notes")
    query = "dough rises overnight then bake"
    plain = engine.search(query, filters, ADMIN, "hybrid", 2)
    reranked = engine.search(query, filters, ADMIN, "hybrid", 2, reranker="features")
    wide = engine.search(query, filters, ADMIN, "hybrid", 6)
    assert len(wide.hits) >= 3  # enough candidates for the over-fetch to matter
    assert len(reranked.hits) == 2 and "rerank" in reranked.timings_ms
    assert reranked.hits[0].node.id == plain.hits[0].node.id == "bread.md:0000"
    assert {h.node.id for h in reranked.hits} <= {h.node.id for h in wide.hits}
    assert "rerank" not in plain.timings_ms
    with pytest.raises(InputError, match="unknown reranker"):
        engine.search("moon", filters, ADMIN, "bm25", 2, reranker="no-such-reranker")


def test_documents_are_cut_at_their_own_node_size(tmp_path: Path) -> None:
    """``document_chunk_chars`` sizes the nodes of structured documents (Markdown here) and
    ``chunk_chars`` those of plain text; changing the former makes the same files a new
    snapshot instead of an unchanged no-op."""
    para = " ".join(f"Sentence {i} says where pump number {i} stands." for i in range(12))
    body = "\n\n".join([para] * 8)  # eight ~540-character paragraphs
    files = write(tmp_path / "docs", {"guide.md": f"# Guide\n\n{body}", "notes.txt": body})

    def sizes(settings: Settings, home: str) -> tuple[dict[str, int], str]:
        engine = Engine(tmp_path / home, settings)
        report = engine.ingest(files, collection="c", embedder="none")
        found = engine.search("pump", Filters(collection="c"), ADMIN, "bm25", 50).hits
        count = {s: sum(h.node.id.startswith(s) for h in found) for s in ("guide", "notes")}
        return count, report.snapshot_id

    default, first = sizes(Settings(), "a")
    small, _ = sizes(Settings().with_(document_chunk_chars=800), "b")
    assert default["notes"] == small["notes"]  # plain text: chunk_chars (800) either way
    assert default["guide"] < small["guide"]  # 1200 holds two paragraphs, 800 one
    engine = Engine(tmp_path / "a", Settings().with_(document_chunk_chars=800))
    again = engine.ingest(files, collection="c", embedder="none")
    assert again.snapshot_id != first and again.status != "unchanged"


def test_a_new_readers_version_reads_unchanged_files_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixed reader must reach collections whose files did not change: the readers' version
    is part of the import fingerprint, so the same files are no longer 'unchanged'."""
    from excerpt.ingest import pipeline

    files = write(tmp_path / "docs", ENGLISH)
    engine = Engine(tmp_path / "home")
    first = engine.ingest(files, collection="c", embedder="none")
    assert engine.ingest(files, collection="c", embedder="none").status == "unchanged"
    monkeypatch.setattr(pipeline, "READERS_VERSION", pipeline.READERS_VERSION + 1)
    again = engine.ingest(files, collection="c", embedder="none")
    assert again.status != "unchanged" and again.snapshot_id != first.snapshot_id
