"""``ask`` on a code relation question opens with the line that does what is asked (issue 17
item 4): "which procedure writes the Tenants table" is answered by the writer's UPDATE, not by
the table's CREATE TABLE, which shares more words with the question; every writer's line is
given, each citing its own node; a hidden writer never appears."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.code_sources import write_secret, write_sources

from excerpt.compose.code_evidence import code_evidence
from excerpt.engine import Engine
from excerpt.types import Filters, Principal


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = Engine(tmp_path / "home")
    engine.ingest(write_sources(tmp_path / "public"), collection="c", fmt="code",
                  embedder="none", source="public")
    engine.ingest(write_secret(tmp_path / "secret"), collection="c", fmt="code",
                  embedder="none", source="secret", acl_tags=["dba"])
    return engine


def test_the_writers_lines_answer_a_which_writes_question(engine: Engine) -> None:
    answer = engine.ask("Which procedure writes the Tenants table?", Filters("c"),
                        Principal(("dba",)), mode="bm25").composed
    assert answer.sentences[0][0].startswith("DELETE FROM dbo.Tenants")
    assert answer.sentences[1][0].startswith("UPDATE dbo.Tenants SET TenantName")
    cited = [c.node_id for c in answer.citations]
    assert cited[:2] == ["SQL:dbo.usp_Tenant_Purge", "SQL:dbo.usp_Tenant_Rename"]
    assert not answer.cautious
    public = engine.ask("Which procedure writes the Tenants table?", Filters("c"),
                        mode="bm25").composed
    assert public.sentences[0][0].startswith("UPDATE dbo.Tenants SET TenantName")
    assert "usp_Tenant_Purge" not in public.answer + str([c.node_id for c in public.citations])


def test_a_who_reads_question_is_answered_by_the_reading_line(engine: Engine) -> None:
    answer = engine.ask("What reads Sales.OrderStaging?", Filters("c"), mode="bm25").composed
    assert answer.sentences[0][0] == "SELECT Id, Customer, 1 FROM Sales.OrderStaging;"
    assert answer.citations[0].node_id == "SQL:Sales.usp_Order_Import"


@pytest.mark.parametrize(("question", "line", "expected"), [
    ("Which procedure writes the Tenants table?", "UPDATE dbo.Tenants SET x = 1", 1.0),
    ("Which procedure writes the Tenants table?", "CREATE TABLE dbo.Tenants (", 0.0),
    ("Which procedure writes the Tenants table?", "UPDATE dbo.Orders SET x = 1", 0.0),
    ("what reads dbo.Venues", "SELECT * FROM [dbo].[Venues] v", 1.0),
    ("what calls GetOrder", "var order = repository.GetOrder(id);", 1.0),
    ("what calls GetOrder", "public Order GetOrderCount()", 0.0),
    ("who implements IOrderRepository", "public class OrderRepository : IOrderRepository", 1.0),
    ("what executes usp_Order_Import", "EXEC Sales.usp_Order_Import;", 1.0),
])
def test_evidence_lines(question: str, line: str, expected: float) -> None:
    score = code_evidence(question)
    assert score is not None and score(line) == expected


def test_a_question_without_a_relation_word_has_no_evidence_scorer() -> None:
    assert code_evidence("How are orders imported?") is None
