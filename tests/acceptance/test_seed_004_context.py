"""Seed 004, section 7: fetch_node_texts (``excerpt context``) on the real bundle (release 1.0)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from excerpt.cli.main import cli
from excerpt.context import ContextResult
from excerpt.settings import Settings
from excerpt.tokens import count_tokens
from excerpt.types import Filters, Principal

from .conftest import FakeEnterprise

SEEDS = ["C0005", "C0006", "C0011"]
GRAPH = ["C0007", "C0008", "C0009"]


def fetch(fe: FakeEnterprise, seeds: list[str], graph: list[str], mode: str = "seed_first",
          budget: int | None = 100_000, max_chars: int | None = None,
          settings: Settings | None = None) -> ContextResult:
    from excerpt.engine import Engine

    engine = Engine(fe.home, settings)
    return engine.context(seeds, graph, Filters("code", snapshot_id=fe.snapshot_a),
                          Principal.admin(), budget, max_chars, mode)


def cost(fe: FakeEnterprise, ids: list[str]) -> int:
    return sum(n.tokens for n in fetch(fe, ids, []).node_texts)


def test_f1_seed_texts_only(fake_enterprise: FakeEnterprise) -> None:
    result = fetch(fake_enterprise, ["C0005", "C0006"], [], budget=300)
    assert [n.id for n in result.node_texts] == ["C0005", "C0006"]
    assert all(n.text.strip() and n.group == "seed" for n in result.node_texts)
    assert "SearchFacade" in result.node_texts[0].text


def test_f2_seed_first(fake_enterprise: FakeEnterprise) -> None:
    budget = cost(fake_enterprise, SEEDS[:2]) + 5  # room for two nodes, not three
    result = fetch(fake_enterprise, SEEDS, GRAPH, "seed_first", budget)
    assert [n.id for n in result.node_texts] == ["C0005", "C0006"]
    roomy = fetch(fake_enterprise, SEEDS, GRAPH, "seed_first", cost(fake_enterprise, SEEDS) + 60)
    groups = [n.group for n in roomy.node_texts]
    assert groups[:3] == ["seed"] * 3 and "graph" in groups


def test_f3_graph_first(fake_enterprise: FakeEnterprise) -> None:
    budget = cost(fake_enterprise, GRAPH[:2]) + 5
    result = fetch(fake_enterprise, SEEDS[:2], GRAPH, "graph_first", budget)
    assert [n.id for n in result.node_texts] == ["C0007", "C0008"]
    roomy = fetch(fake_enterprise, SEEDS[:2], GRAPH, "graph_first", 100_000)
    assert [n.group for n in roomy.node_texts] == ["graph"] * 3 + ["seed"] * 2


def test_f4_balanced_interleaves(fake_enterprise: FakeEnterprise) -> None:
    result = fetch(fake_enterprise, SEEDS, GRAPH, "balanced", 100_000)
    assert [n.id for n in result.node_texts] == ["C0005", "C0007", "C0006", "C0008", "C0011",
                                                  "C0009"]
    budget = cost(fake_enterprise, ["C0005", "C0007", "C0006", "C0008"]) + 5
    small = fetch(fake_enterprise, SEEDS, GRAPH, "balanced", budget)
    assert [n.group for n in small.node_texts] == ["seed", "graph", "seed", "graph"]
    assert fetch(fake_enterprise, SEEDS, GRAPH, "balanced", budget).to_json() == small.to_json()


def test_f5_budget_tokens(fake_enterprise: FakeEnterprise) -> None:
    for budget in (20, 40, 60):
        result = fetch(fake_enterprise, SEEDS, GRAPH[:2], "seed_first", budget)
        assert result.total_tokens <= budget
        assert all(n.tokens == count_tokens(n.text) for n in result.node_texts)
        assert len(result.node_texts) + len(result.skipped) == 5
    assert fetch(fake_enterprise, SEEDS, GRAPH[:2], budget=20).node_texts == []


def test_f6_budget_from_settings(fake_enterprise: FakeEnterprise) -> None:
    budget = cost(fake_enterprise, SEEDS[:2]) + 5
    settings = Settings(context_budget_tokens=budget)
    result = fetch(fake_enterprise, SEEDS, GRAPH, "seed_first", None, settings=settings)
    assert result.budget_tokens == budget
    assert [n.id for n in result.node_texts] == ["C0005", "C0006"]
    graph_first = fetch(fake_enterprise, SEEDS, GRAPH, "graph_first", None, settings=settings)
    assert {n.group for n in graph_first.node_texts} == {"graph"}


def test_f7_max_chars(fake_enterprise: FakeEnterprise) -> None:
    everything = fetch(fake_enterprise, SEEDS, GRAPH[:2])
    limit = everything.node_texts[0].chars + everything.node_texts[1].chars + 10
    result = fetch(fake_enterprise, SEEDS, GRAPH[:2], max_chars=limit)
    assert result.total_chars <= limit
    assert [n.id for n in result.node_texts] == ["C0005", "C0006"]
    assert {i for i, _ in result.skipped} == {"C0011", "C0007", "C0008"}


def test_f8_atomic_skip(fake_enterprise: FakeEnterprise) -> None:
    first = fetch(fake_enterprise, ["C0005"], []).node_texts[0]
    whole = {n.id: n.text for n in fetch(fake_enterprise, ["C0005", "C0006"], []).node_texts}
    for budget, chars in ((first.tokens + 10, None), (None, first.chars + 10)):
        result = fetch(fake_enterprise, ["C0005", "C0006"], [],
                       budget=100_000 if budget is None else budget, max_chars=chars)
        assert [n.id for n in result.node_texts] == ["C0005"]
        assert result.node_texts[0].text == whole["C0005"]  # never truncated
        assert [i for i, _ in result.skipped] == ["C0006"]
        assert whole["C0006"] not in "".join(n.text for n in result.node_texts)


def test_hidden_and_unknown_ids_are_indistinguishable(fake_enterprise: FakeEnterprise) -> None:
    from excerpt.engine import Engine

    engine = Engine(fake_enterprise.home)
    filters = Filters("code", snapshot_id=fake_enterprise.snapshot_a)
    result = engine.context(["C0003", "NOPE", "C0001"], [], filters, Principal.anonymous(), 1000)
    assert [n.id for n in result.node_texts] == ["C0001"]  # C0003 is tagged "architecture"
    assert result.skipped == [("C0003", "not found"), ("NOPE", "not found")]


def test_cli_context_contract(fake_enterprise: FakeEnterprise) -> None:
    args = ["--home", str(fake_enterprise.home), "context", "--seed", "C0005", "--graph", "C0007",
            "--collection", "code", "--snapshot", fake_enterprise.snapshot_a,
            "--budget-tokens", "60", "--prioritization", "graph_first", "--all-access", "--json"]
    out = CliRunner().invoke(cli, args, obj={"json": False})
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert set(payload) >= {"node_texts", "total_tokens", "total_chars", "skipped"}
    assert [n["id"] for n in payload["node_texts"]] == ["C0007"]
    assert set(payload["node_texts"][0]) == {"id", "group", "text", "tokens", "chars"}
    assert payload["skipped"][0]["id"] == "C0005"
