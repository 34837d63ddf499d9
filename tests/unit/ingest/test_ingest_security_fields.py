"""Records that carry their own security fields (code bundles' chunks.json and sql_bodies.jsonl,
BEIR's corpus.jsonl): an import's rights never widen a record's access, and a malformed or
misspelled security field refuses the import instead of making the record public."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from excerpt.errors import CorpusError
from excerpt.ingest._common import looks_like_security_key
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.beir import load_beir
from excerpt.ingest.code.bundle import load_code_bundle

IMPORT = LoadOptions(acl_tags=("finance",), classification_labels=("internal",))


def _bundle(tmp: Path, chunk: dict[str, Any] | None = None,
            body: dict[str, Any] | None = None) -> Path:
    """A bundle whose one C# chunk (Id C1) or one SQL body (key SQL:dbo.p) holds ``extra``."""
    files = {"repo_meta.json": json.dumps({"Repo": "R", "SnapshotId": "s1"}),
             "regular_code_bundle/chunks.json": json.dumps(
                 [{"Id": "C1", "File": "a.cs", "Text": "class A {}", **(chunk or {})}]),
             "sql_bundle/docs/sql_bodies.jsonl": json.dumps(
                 {"key": "SQL:dbo.p", "body": "CREATE PROCEDURE p AS SELECT 1",
                  **(body or {})}) + "\n"}
    for name, text in files.items():
        path = tmp / "b" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return tmp / "b"


def _chunks(tmp: Path, fields: dict[str, Any]) -> LoadedCorpus:
    return load_code_bundle([_bundle(tmp, chunk=fields)], IMPORT)


def _bodies(tmp: Path, fields: dict[str, Any]) -> LoadedCorpus:
    return load_code_bundle([_bundle(tmp, body=fields)], IMPORT)


def _beir(tmp: Path, fields: dict[str, Any]) -> LoadedCorpus:
    names = {"acl_tags_any": "acl_tags", "classification_labels_all": "classification_labels"}
    record = {"_id": "d1", "text": "x", **{names.get(k, k): v for k, v in fields.items()}}
    (tmp / "corpus.jsonl").write_text(json.dumps(record) + "\n", "utf-8")
    return load_beir([tmp / "corpus.jsonl"], IMPORT)


# each loader, and the id of the node its one record becomes (the SQL node in a bundle)
LOADERS: dict[str, tuple[Callable[[Path, dict[str, Any]], LoadedCorpus], str]] = {
    "chunks.json": (_chunks, "C1"),
    "sql_bodies.jsonl": (_bodies, "SQL:dbo.p"),
    "beir": (_beir, "d1"),
}


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize(("own_acl", "own_labels", "acl", "labels"), [
    # own ACL tags are kept as they are: the import's 'finance' would let finance see hr's node
    (["hr"], [], ("hr",), ("internal",)),
    (["hr", "ops"], ["secret"], ("hr", "ops"), ("internal", "secret")),
    # no own tags (absent or empty list): the import's tags are the default
    (None, None, ("finance",), ("internal",)),
    ([], ["secret"], ("finance",), ("internal", "secret")),
])
def test_import_rights_never_widen_a_record(tmp_path: Path, loader: str, own_acl: Any,
                                            own_labels: Any, acl: tuple[str, ...],
                                            labels: tuple[str, ...]) -> None:
    load, node_id = LOADERS[loader]
    fields = {k: v for k, v in (("acl_tags_any", own_acl),
                                ("classification_labels_all", own_labels)) if v is not None}
    node = next(n for n in load(tmp_path, fields).nodes if n.id == node_id)
    assert (node.acl_tags, node.classification_labels) == (acl, labels)


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize(("fields", "message"), [
    ({"acl_tags_any": [""]}, "empty tag"),
    ({"acl_tags_any": ["hr", "  "]}, "empty tag"),
    ({"acl_tags_any": "hr"}, "must be a list of strings, got str"),
    ({"acl_tags_any": {"any": ["hr"]}}, "must be a list of strings, got dict"),
    ({"classification_labels_all": [1]}, "got the int 1"),
    ({"classification_labels_all": [None]}, "got the NoneType"),
    ({"classification_labels_all": [["secret"]]}, "got the list"),
    ({"classification_labels_all": ["secret", ""]}, "empty tag"),
    ({"acl_tag_any": ["hr"]}, "unknown security field 'acl_tag_any'"),
    ({"AclTagsAny": ["hr"]}, "unknown security field 'AclTagsAny'"),
    ({"clearance": ["secret"]}, "unknown security field 'clearance'"),
    ({"labels": ["secret"]}, "unknown security field 'labels'"),
])
def test_malformed_security_fields_refuse_the_import(tmp_path: Path, loader: str,
                                                     fields: dict[str, Any],
                                                     message: str) -> None:
    load, node_id = LOADERS[loader]
    with pytest.raises(CorpusError, match=message) as info:
        load(tmp_path, fields)
    text = str(info.value)
    assert node_id in text  # the record
    assert ("corpus.jsonl" if loader == "beir" else loader) in text  # the file
    assert any(key in text for key in (*fields, "acl_tags", "classification_labels"))


@pytest.mark.parametrize(("wrong", "loader"), [
    ("acl_tags", "chunks.json"), ("classification_labels", "sql_bodies.jsonl"),
    ("acl_tags_any", "beir"), ("classification_labels_all", "beir"),
])
def test_the_other_formats_spelling_is_refused(tmp_path: Path, wrong: str, loader: str) -> None:
    """A bundle record with BEIR's key (or the reverse) would otherwise be public."""
    record = {"_id": "d1", "text": "x", wrong: ["hr"]}
    (tmp_path / "corpus.jsonl").write_text(json.dumps(record) + "\n", "utf-8")
    with pytest.raises(CorpusError, match=f"unknown security field '{wrong}'"):
        if loader == "beir":
            load_beir([tmp_path / "corpus.jsonl"], IMPORT)
        else:
            LOADERS[loader][0](tmp_path, {wrong: ["hr"]})


@pytest.mark.parametrize(("key", "security"), [
    ("acl_tag_any", True), ("aclTags", True), ("ACL", True), ("classificationLabels", True),
    ("classif", True), ("Clearances", True), ("labels", True), ("tags", True),
    ("owner_id", False), ("source_system_id", False), ("stage", False), ("vintage", False),
    ("RepoRelativePath", False), ("data_type", False), ("domain", False), ("title", False),
])
def test_what_looks_like_a_security_key(key: str, security: bool) -> None:
    assert looks_like_security_key(key) is security


def test_the_seed_bundles_still_import(shared_data: Callable[..., Path]) -> None:
    """They carry owner_id and source_system_id (reserved, not enforced) beside the fields;
    with an import tag, tagged records keep exactly their own tags."""
    for release in ("1.0", "1.1"):
        path = shared_data("fake_enterprise", f"Release_FAKE_ENTERPRISE_{release}.zip")
        own = {n.id: n for n in load_code_bundle([path]).nodes}
        tagged = {n.id: n for n in load_code_bundle([path], IMPORT).nodes}
        assert sum(1 for n in own.values() if "hr" in n.acl_tags) >= 2
        for node_id, node in tagged.items():
            assert node.acl_tags == (own[node_id].acl_tags or ("finance",))
            assert set(node.classification_labels) == {
                *own[node_id].classification_labels, "internal"}
