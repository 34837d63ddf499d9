"""Multi-hop never follows a citation into a passage the caller may not see."""

from __future__ import annotations

from pathlib import Path

from excerpt.engine import Engine
from excerpt.settings import Settings
from excerpt.types import Filters, Principal

TOC = """규   정   집

차   례

제1편  일반

\t\t{a}\t1-0-1
\t\t{b}\t1-0-2
\t\t{c}\t1-0-3

제1편

"""
PUBLIC = """교원인사규정
제1조 (목적) 이 규정은 교원의 강의료 지급 기준을 정한다.
제2조 (지급) 강의료 지급 기준은 「강사료지급규정」 제2조에 따른다.
"""
SECRET = """강사료지급규정
제1조 (목적) 이 규정은 강사료에 관한 사항을 정한다.
제2조 (지급) 강의료 지급 기준은 시간당 단가로 매월 지급한다.
"""


def book(path: Path, body: str) -> Path:
    path.write_text(TOC.format(a="교원인사규정", b="강사료지급규정", c="기타규정") + body, "utf-8")
    return path


def test_hidden_cited_article_is_not_added(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "home", Settings(multi_hop_threshold=0.3))
    engine.ingest(book(tmp_path / "public.txt", PUBLIC), collection="reg",
                  fmt="regulations", embedder="none", source="public")
    engine.ingest(book(tmp_path / "secret.txt", SECRET), collection="reg",
                  fmt="regulations", embedder="none", source="secret", acl_tags=["finance"])
    query = "교원 강의료 지급 기준 따른다"  # the public article ranks first and cites the other
    insider = engine.search(query, Filters("reg"), Principal(frozenset({"finance"})), "bm25", 1)
    outsider = engine.search(query, Filters("reg"), Principal.anonymous(), "bm25", 1)
    assert [h.node.id for h in insider.hits] == ["교원인사규정 제2조", "강사료지급규정 제2조"]
    assert insider.analysis["multi_hop"]["added"] == ["강사료지급규정 제2조"]
    assert [h.node.id for h in outsider.hits] == ["교원인사규정 제2조"]
    report = outsider.analysis.get("multi_hop", {"citations": []})
    assert not any("강사료" in c["to_id"] for c in report["citations"])
