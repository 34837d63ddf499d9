"""BEIR dataset folders: corpus.jsonl, queries.jsonl and qrels/<split>.tsv."""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from excerpt.errors import CorpusError, InputError


@dataclass(frozen=True)
class BeirDataset:
    folder: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]

    @property
    def corpus(self) -> Path:
        return self.folder / "corpus.jsonl"


def corpus_fingerprint(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()[:16]


def _read_queries(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                out[str(rec["_id"])] = str(rec["text"])
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise CorpusError(f"{path}:{line_no}: bad query record ({exc})") from exc
    return out


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh, delimiter="\t")
        for line_no, row in enumerate(rows, start=1):
            if not row or (line_no == 1 and row[0] == "query-id"):
                continue
            try:
                qid, did, score = row[0], row[1], int(row[2])
            except (IndexError, ValueError) as exc:
                raise CorpusError(f"{path}:{line_no}: bad qrels row {row!r}") from exc
            out.setdefault(qid, {})[did] = score
    return out


def load_beir_dataset(folder: Path, split: str) -> BeirDataset:
    folder = Path(folder)
    needed = [folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels" / f"{split}.tsv"]
    for path in needed:
        if not path.exists():
            raise InputError(f"{path}: missing (a BEIR folder needs corpus, queries and qrels)")
    queries = _read_queries(needed[1])
    qrels = _read_qrels(needed[2])
    unknown = sorted(set(qrels) - set(queries))
    if unknown:
        raise CorpusError(f"{needed[2]}: qrels name queries not in queries.jsonl: {unknown[:5]}")
    return BeirDataset(folder, {q: queries[q] for q in sorted(qrels)}, qrels)
