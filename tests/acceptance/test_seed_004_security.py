"""Seed 004, section 5: the ACL-only, classification and combined matrices, in every path.

A small bundle (folder form) carries exactly the label sets of the seed's matrices; every node
mentions "ledger" and depends on a public root, so search, graph expansion and context fetch
each see the whole table and must return exactly the allowed part of it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.graph import GraphLimits
from excerpt.types import SEARCH_MODES, Filters, Principal

TABLE = {  # id: (acl_tags_any, classification_labels_all)
    "ROOT": ([], []),
    "ACL_FINANCE": (["finance"], []), "ACL_SECURITY": (["security"], []), "ACL_HR": (["hr"], []),
    "CLS_NONE": ([], []), "CLS_PUBLIC": ([], ["public"]), "CLS_SECRET": ([], ["secret"]),
    "CLS_INTERNAL_SECRET": ([], ["internal", "secret"]), "CLS_SENSITIVE": ([], ["sensitive"]),
    "BOTH_FIN_INTERNAL": (["finance"], ["internal"]), "BOTH_SEC_NONE": (["security"], []),
    "BOTH_HR_INTERNAL": (["hr"], ["internal"]), "BOTH_FIN_SENSITIVE": (["finance"], ["sensitive"]),
}
GROUPS = frozenset({"finance", "security"})
SCENARIOS = {
    "acl-only": (Principal(GROUPS), {"ACL_FINANCE", "ACL_SECURITY"}, {"ACL_HR"}),
    "classification": (
        Principal(GROUPS, frozenset({"public", "internal", "secret"})),
        {"CLS_NONE", "CLS_PUBLIC", "CLS_SECRET", "CLS_INTERNAL_SECRET"}, {"CLS_SENSITIVE"}),
    "acl+classification": (
        Principal(GROUPS, frozenset({"public", "internal", "secret"})),
        {"BOTH_FIN_INTERNAL", "BOTH_SEC_NONE"}, {"BOTH_HR_INTERNAL", "BOTH_FIN_SENSITIVE"}),
}


def allowed(principal: Principal) -> set[str]:
    return {i for i, (acl, cls) in TABLE.items()
            if (not acl or set(acl) & principal.acl_tags) and set(cls) <= principal.clearances}


def write_bundle(bundle: Path) -> Path:
    """The matrices' bundle in folder form at ``bundle``: one chunk per row of TABLE."""
    (bundle / "regular_code_bundle").mkdir(parents=True)
    (bundle / "repo_meta.json").write_text(json.dumps({"Repo": "Sec", "SnapshotId": "sec-1"}))
    chunks = [{"Id": i, "File": f"src/{i}.cs", "Class": i.title().replace("_", ""),
               "Member": "Run", "Type": "Method",
               "Text": f"// {i}: posts entries to the general ledger\nclass {i} {{ }}\n",
               "acl_tags_any": acl, "classification_labels_all": cls}
              for i, (acl, cls) in TABLE.items()]
    (bundle / "regular_code_bundle" / "chunks.json").write_text(json.dumps(chunks))
    deps = {"ROOT": [i for i in TABLE if i != "ROOT"]}
    (bundle / "regular_code_bundle" / "dependencies.json").write_text(json.dumps(deps))
    return bundle


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("security")
    Engine(root / "home").ingest(write_bundle(root / "bundle"), collection="sec",
                                 embedder="minilm")
    return root / "home"


@pytest.mark.parametrize("mode", SEARCH_MODES)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_search_returns_exactly_the_allowed_nodes(store: Path, scenario: str, mode: str) -> None:
    principal, visible, hidden = SCENARIOS[scenario]
    result = Engine(store).search("general ledger entries", Filters("sec"), principal,
                                  mode, 50)  # type: ignore[arg-type]
    got = {h.node.id for h in result.hits}
    assert got == allowed(principal)
    assert visible <= got and not hidden & got
    assert result.filters["acl_tags_any"] == sorted(GROUPS)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_graph_is_trimmed(store: Path, scenario: str) -> None:
    principal, visible, hidden = SCENARIOS[scenario]
    result = Engine(store).graph(["ROOT"], Filters("sec"), principal, GraphLimits(2, 120))
    nodes = {n for n, _ in result.nodes}
    assert nodes == allowed(principal) and visible <= nodes and not hidden & nodes
    assert result.removed_nodes == len(TABLE) - len(nodes)
    assert result.removed_edges == result.removed_nodes
    assert all(e.to_id in nodes for e in result.edges)
    assert not any(h in json.dumps(result.to_json()) for h in hidden)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_context_never_returns_a_hidden_text(store: Path, scenario: str) -> None:
    principal, visible, hidden = SCENARIOS[scenario]
    result = Engine(store).context(sorted(TABLE), [], Filters("sec"), principal, 100_000)
    got = {n.id for n in result.node_texts}
    assert got == allowed(principal) and visible <= got and not hidden & got
    assert {i for i, reason in result.skipped} == set(TABLE) - got
    assert {reason for _, reason in result.skipped} == {"not found"}


def test_anonymous_sees_only_untagged_unlabelled(store: Path) -> None:
    result = Engine(store).search("ledger", Filters("sec"), Principal.anonymous(), "bm25", 50)
    assert {h.node.id for h in result.hits} == {"ROOT", "CLS_NONE"}
