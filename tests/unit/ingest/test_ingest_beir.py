from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from excerpt.errors import CorpusError, InputError
from excerpt.ingest.base import LoadOptions
from excerpt.ingest.beir import load_beir


def _corpus(folder: Path, records: list[Any] | str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "corpus.jsonl"
    if isinstance(records, str):
        path.write_text(records, encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


RECORDS: list[Any] = [
    {"_id": "d1", "title": "First", "text": "Alpha text.", "metadata": {"year": 2001}},
    {"_id": "d2", "title": "Second", "text": "Beta text " * 2000, "metadata": {}},
    {"_id": "d3", "text": "No title here.", "acl_tags": ["hr", "eng"], "extra": [1, 2]},
]


def test_folder_records_become_documents_and_nodes(tmp_path: Path) -> None:
    path = _corpus(tmp_path / "beir", RECORDS)
    corpus = load_beir([tmp_path / "beir"], LoadOptions(acl_tags=("eng", "all")))
    assert corpus.source == str((tmp_path / "beir").resolve())
    assert [d.id for d in corpus.documents] == ["d1", "d2", "d3"]
    assert [n.id for n in corpus.nodes] == ["d1", "d2", "d3"]
    d1, d2, d3 = corpus.nodes
    assert (d1.title, d1.text, d1.document_id) == ("First", "Alpha text.", "d1")
    assert d1.source == str(path.resolve())
    assert (d1.start, d1.end) == (-1, -1)
    assert dict(d1.metadata) == {"year": 2001}
    assert d2.text == "Beta text " * 2000  # never chunked, never truncated
    assert d3.title == ""
    assert dict(d3.metadata) == {"extra": [1, 2]}  # unknown fields are kept, not dropped
    assert d1.acl_tags == ("all", "eng")
    assert d3.acl_tags == ("eng", "hr")  # its own tags: the import's never widen them
    assert corpus.documents[0].title == "First"
    assert corpus.errors == []


def test_the_file_itself_and_blank_lines(tmp_path: Path) -> None:
    text = "\n" + json.dumps(RECORDS[0]) + "\n\n   \n" + json.dumps(RECORDS[1])  # no final newline
    path = _corpus(tmp_path, text)
    corpus = load_beir([path], LoadOptions(classification_labels=("b", "a", "b")))
    assert [n.id for n in corpus.nodes] == ["d1", "d2"]
    assert corpus.nodes[0].classification_labels == ("a", "b")
    assert corpus.source == str(path.resolve())


def test_integer_ids_and_record_labels(tmp_path: Path) -> None:
    records = [{"_id": 7, "text": "x", "classification_labels": ["secret"]}]
    corpus = load_beir([_corpus(tmp_path, records)], LoadOptions(classification_labels=("pii",)))
    assert corpus.nodes[0].id == "7"
    assert corpus.nodes[0].classification_labels == ("pii", "secret")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"_id": "a", "text": "ok"}\n{"_id": "b", "text": \n', r"line 2: malformed JSON"),
        ('{"_id": "a", "text": "ok"}\n["a list"]\n', r"line 2: expected a JSON object"),
        ('{"title": "t", "text": "no id"}\n', r"line 1: missing or invalid '_id'"),
        ('{"_id": null, "text": "x"}\n', r"line 1: missing or invalid '_id'"),
        ('{"_id": "  ", "text": "x"}\n', r"line 1: empty '_id'"),
        ('{"_id": "a\\nb", "text": "x"}\n', r"line 1: '_id' .* line break"),
        ('{"_id": "a", "text": "x"}\n\n{"_id": "a", "text": "y"}\n', r"line 3: duplicate _id 'a'"),
        ('{"_id": "a", "text": 42}\n', r"line 1: 'text' must be a string, got int"),
        ('{"_id": "a"}\n', r"line 1: 'text' must be a string, got nothing"),
        ('{"_id": "a", "text": "x", "title": ["t"]}\n', r"line 1: 'title' must be a string"),
        ('{"_id": "a", "text": "x", "acl_tags": "hr"}\n',
         r"line 1 \(_id a\): 'acl_tags' must be a list"),
        ("", r"holds no records"),
        ("\n  \n", r"holds no records"),
    ],
)
def test_malformed_corpus_is_refused_naming_file_and_line(
    tmp_path: Path, content: str, message: str
) -> None:
    path = _corpus(tmp_path, content)
    with pytest.raises(CorpusError, match=message) as info:
        load_beir([tmp_path], LoadOptions())
    assert str(path.resolve()) in str(info.value)


def test_invalid_utf8_line(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"_id": "a", "text": "ok"}\n{"_id": "b", "text": "caf\xe9"}\n')
    with pytest.raises(CorpusError, match="line 2: not valid UTF-8"):
        load_beir([path], LoadOptions())


def test_missing_paths(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no corpus\.jsonl"):
        load_beir([tmp_path], LoadOptions())
    with pytest.raises(InputError, match="missing"):
        load_beir([tmp_path / "missing"], LoadOptions())


def test_duplicate_id_across_two_corpora(tmp_path: Path) -> None:
    a = _corpus(tmp_path / "a", [RECORDS[0]])
    b = _corpus(tmp_path / "b", [RECORDS[0]])
    with pytest.raises(CorpusError, match="duplicate _id 'd1'"):
        load_beir([a, b], LoadOptions())


def test_five_thousand_records_load_fast_and_deterministically(tmp_path: Path) -> None:
    records = [
        {"_id": f"doc{i}", "title": f"Title {i}", "text": "Some abstract text. " * 60}
        for i in range(5000)
    ]
    path = _corpus(tmp_path, records)
    started = time.perf_counter()
    corpus = load_beir([path], LoadOptions())
    elapsed = time.perf_counter() - started
    assert len(corpus.nodes) == 5000
    assert elapsed < 1.0, f"5k records took {elapsed:.2f}s"
    assert load_beir([path], LoadOptions()) == corpus


@pytest.mark.data
def test_scifact_corpus(scifact_dir: Path) -> None:
    corpus = load_beir([scifact_dir], LoadOptions())
    assert len(corpus.documents) == len(corpus.nodes) == 5183
    assert corpus.errors == []
    node = next(n for n in corpus.nodes if n.id == "4983")
    assert node.title.startswith("Microstructural development of human newborn")
    assert node.text.startswith("Alterations of the architecture of cerebral white matter")
