"""Citations and rights: multi-hop never follows a citation into a passage the caller may not
see, and a query that names an article by its id gets it first only when the caller may see it.
Every test runs on both stores: the embedded one and PostgreSQL (a real server).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.retrieve.citations import candidate_ids
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


@pytest.fixture(params=["sqlite", "postgres"])
def new_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[
        Callable[[Settings], Engine]]:
    """``new_engine(settings)``: an engine on an empty store of the parametrised backend."""
    made: list[Engine] = []

    def make(settings: Settings) -> Engine:
        store = None
        if request.param == "postgres":
            from excerpt.store.postgres import PostgresStore

            store = PostgresStore(request.getfixturevalue("pg_url"), tmp_path / "scratch")
        made.append(Engine(tmp_path / "home", settings, store=store))
        return made[-1]

    yield make
    for engine in made:
        engine.close()


def test_hidden_cited_article_is_not_added(tmp_path: Path,
                                           new_engine: Callable[[Settings], Engine]) -> None:
    engine = new_engine(Settings(multi_hop_threshold=0.3))
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


LONG = """교원인사규정
제1조 (목적) 이 규정은 교원인사규정의 목적을 정한다.
제2조 (지급) 강의료 지급 기준은 「강사료지급규정」 제2조에 따른다.
제3조 (임용) 교원의 신규임용은 공개채용을 원칙으로 하며, 임용권자는 대학의 교육과 연구에
필요한 분야를 정하여 모집공고를 하고 서류심사, 전공심사, 면접심사를 거쳐 임용한다.
"""


@pytest.fixture()
def engine(tmp_path: Path, new_engine: Callable[[Settings], Engine]) -> Engine:
    engine = new_engine(Settings())
    engine.ingest(book(tmp_path / "public.txt", LONG), collection="reg",
                  fmt="regulations", embedder="none", source="public")
    engine.ingest(book(tmp_path / "secret.txt", SECRET), collection="reg",
                  fmt="regulations", embedder="none", source="secret", acl_tags=["finance"])
    return engine


def test_candidate_ids_strip_brackets_and_sub_units() -> None:
    ids = candidate_ids("「교원인사규정」 제3조제2항의 내용")
    assert "교원인사규정 제3조" in ids
    assert ids.index("교원인사규정 제3조") < ids.index("교원인사규정")


def test_the_named_article_comes_first_even_when_bm25_prefers_another(engine: Engine) -> None:
    query = "교원인사규정 제3조"
    bm25_only = engine.search("교원인사규정", Filters("reg"), Principal.anonymous(), "bm25", 3)
    assert bm25_only.hits[0].node.id != "교원인사규정 제3조"  # the long article loses on BM25
    result = engine.search(query, Filters("reg"), Principal.anonymous(), "bm25", 3)
    assert result.hits[0].node.id == "교원인사규정 제3조"
    assert result.analysis["named_nodes"] == ["교원인사규정 제3조"]
    assert result.hits[0].score > result.hits[1].score
    assert len({h.node.id for h in result.hits}) == len(result.hits) <= 3 + 2  # + multi-hop


def test_a_hidden_article_is_never_named(engine: Engine) -> None:
    query = "강사료지급규정 제2조"
    insider = engine.search(query, Filters("reg"), Principal(frozenset({"finance"})), "bm25", 2)
    outsider = engine.search(query, Filters("reg"), Principal.anonymous(), "bm25", 2)
    assert insider.hits[0].node.id == "강사료지급규정 제2조"
    assert "named_nodes" not in outsider.analysis
    assert all("강사료지급규정" not in h.node.id for h in outsider.hits)
