"""Book apparatus is marked at ingest (``part`` metadata), without changing a node id."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from excerpt.compose.grounding import scope
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.books.gutenberg import load_gutenberg
from excerpt.ingest.books.parts import excluded_parts, without_parts
from excerpt.types import Hit, Node

HEADER = ("The Project Gutenberg eBook of Songs, by Ann Poet\n\nTitle: Songs\n\n"
          "Author: Ann Poet\n\nRelease Date: 2001 [eBook #77]\n\n"
          "*** START OF THE PROJECT GUTENBERG EBOOK SONGS ***\n")
FOOTER = ("\n*** END OF THE PROJECT GUTENBERG EBOOK SONGS ***\n\n"
          "The Full Project Gutenberg License\n")
PROSE = ("The editor explains at length how this edition came to be made and why it differs "
         "from the others that were printed before it, in many long sentences. ") * 4
ARGUMENT = ("The hero quarrels with the king over a captive, and withdraws from the war; his "
            "mother asks the gods to honour him by giving victory to the enemy for a time. ") * 3
VERSE = "\n".join(["Sing, goddess, of the hero's wrath and woe,", "That sent the chiefs to the"
                   " shades below;"] * 6)
NOTES = "\n\n".join(f"{i}. The captive is named in line {i}; see the editor's remarks on the "
                     "text and the older readings of it." for i in range(1, 13))
PLATES = "\n".join(f"THE HERO ARMING FOR BATTLE, PLATE {i}." for i in range(1, 16))


def _songs() -> str:
    body = ("\n\nSONGS\n\nby Ann Poet\n\n\nContents\n\nINTRODUCTION.\nBOOK I.\nBOOK II.\n\n\n"
            f"Illustrations\n\n{PLATES}\n\n\nINTRODUCTION.\n\n{PROSE}\n\n\n")
    for n in ("I", "II"):
        body += f"BOOK {n}.\n\nARGUMENT.\n\nTHE QUARREL.\n\n{ARGUMENT}\n\n{VERSE}\n\n{VERSE}\n\n\n"
    body += f"APPENDIX\n\n{PROSE}\n\n\nFOOTNOTES\n\n{NOTES}\n\n\nINDEX\n\n"
    body += "\n".join(f"Achilles, {i}, {i + 7}, {i + 30}" for i in range(60)) + "\n"
    return HEADER + body + FOOTER


def _load(tmp_path: Path, text: str, name: str = "pg77.txt", chunk: int = 300) -> LoadedCorpus:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return load_gutenberg([path], LoadOptions(chunk_chars=chunk, overlap_chars=40))


def _parts(corpus: LoadedCorpus) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for n in corpus.nodes:
        out.setdefault(n.metadata["division"], set()).add(n.metadata["part"])
    return out


def test_every_node_carries_its_part(tmp_path: Path) -> None:
    corpus = _load(tmp_path, _songs())
    by_text = {n.id: (n.metadata["part"], n.text) for n in corpus.nodes}
    assert all("part" in n.metadata for n in corpus.nodes)
    assert by_text["pg77:front:0000"][0] == "contents"  # title page and the contents list
    assert any(p == "front" and "editor explains" in t for p, t in by_text.values())
    for book in ("b01", "b02"):
        assert by_text[f"{book}:0000".join(("pg77:", ""))][0] == "argument"
        verse = [p for p, t in (by_text[i] for i in by_text if f":{book}:" in i)
                 if "Sing, goddess" in t and "captive" not in t]
        assert verse and set(verse) == {"body"}
    back = [by_text[i] for i in by_text if ":back:" in i]
    assert {p for p, t in back if "editor explains" in t} == {"back"}
    assert {p for p, t in back if "6. The captive" in t} == {"notes"}
    assert {p for p, t in back if "Achilles, 40" in t} == {"index"}
    # the header and the licence are cut before chunking: no node holds them
    assert not any("Gutenberg" in t for _, t in by_text.values())


def test_prose_argument_ends_with_its_first_paragraph(tmp_path: Path) -> None:
    prose = f"{PROSE}\n\n" * 3
    text = HEADER + "".join(f"\n\nCHAPTER {n}.\n\nARGUMENT\n\n{ARGUMENT}\n\n{prose}" for n in "12")
    corpus = _load(tmp_path, text + FOOTER, chunk=400)
    for ch in ("ch01", "ch02"):
        parts = [n.metadata["part"] for n in corpus.nodes if n.metadata["division"] == ch]
        assert parts[0] == "argument" and parts[-1] == "body" and parts.count("argument") <= 2


def test_a_chapter_without_apparatus_is_all_body(tmp_path: Path) -> None:
    text = HEADER + "".join(f"\n\nCHAPTER {n}.\n\n{PROSE}\n\n{PROSE}" for n in "12") + FOOTER
    assert _parts(_load(tmp_path, text)) == {"ch01": {"body"}, "ch02": {"body"}}


# --- the ask side: over-fetch past apparatus, scope words -------------------------------------


def _hit(i: int, part: str | None) -> Hit:
    meta = {} if part is None else {"part": part}
    return Hit(Node(id=f"n{i}", document_id="d", text="t", metadata=meta), 1.0 / (i + 1), "s")


def test_without_parts_over_fetches_until_k_are_kept() -> None:
    pool = [_hit(i, "notes" if i < 9 else "body") for i in range(30)] + [_hit(30, None)]
    asked: list[int] = []

    def search(n: int) -> list[Hit]:
        asked.append(n)
        return pool[:n]

    kept = without_parts(search, 3, frozenset({"notes"}))
    assert [h.node.id for h in kept] == ["n9", "n10", "n11"] and asked == [3, 12]
    assert [h.node.id for h in without_parts(search, 3, frozenset())] == ["n0", "n1", "n2"]
    # when everything left is apparatus, what there is comes back (never more than exists)
    assert [h.node.id for h in without_parts(lambda n: pool[:9], 3, frozenset({"notes"}))] == []
    assert len(without_parts(lambda n: pool[-2:][:n], 5, frozenset({"notes"}))) == 2


def test_a_filter_on_part_turns_the_exclusion_off_and_part_n_is_book_n() -> None:
    assert excluded_parts(("notes",), {"part": "notes"}) == frozenset()
    assert excluded_parts(("notes",), {"book": 1}) == frozenset({"notes"})
    assert scope("Where is the mill in part 2?") == {"book": 2}
    assert scope("What happens in chapter 3?") == {"chapter": 3}


# --- the real books: ids unchanged, parts where the apparatus is -------------------------------

# sha256 of [(id, start, end, text)] of each book as loaded before parts existed (issue 16):
# the QA set's gold passage ids were taken from that ingest, so they must not move.
FINGERPRINTS = {
    "pg174_dorian_gray.txt": "7e9450e3c3a1d88234ae8f78f60337ecb1c502f91949d12a65f73f015c686938",
    "pg6130_iliad_pope.txt": "7709e4adfa37acf8750ed843c3e636cb1db924609d88434adae6390294d7c499",
}


@pytest.fixture(scope="module")
def books(shared_data: Callable[..., Path]) -> dict[str, LoadedCorpus]:
    return {name: load_gutenberg([shared_data("books", name)], LoadOptions())
            for name in FINGERPRINTS}


@pytest.mark.data
def test_real_node_ids_and_texts_are_unchanged(books: dict[str, LoadedCorpus]) -> None:
    for name, corpus in books.items():
        rows = [(n.id, n.start, n.end, n.text) for n in corpus.nodes]
        assert hashlib.sha256(json.dumps(rows).encode()).hexdigest() == FINGERPRINTS[name], name


@pytest.mark.data
def test_real_books_parts(books: dict[str, LoadedCorpus]) -> None:
    dorian, iliad = books["pg174_dorian_gray.txt"], books["pg6130_iliad_pope.txt"]
    assert Counter(n.metadata["part"] for n in dorian.nodes) == {"body": 662, "front": 4}
    assert all(n.metadata["part"] == "body" for n in dorian.nodes if "chapter" in n.metadata)
    parts = {n.id: n.metadata["part"] for n in iliad.nodes}
    counts = Counter(parts.values())
    assert counts == {"body": 1388, "front": 184, "notes": 162, "argument": 43, "back": 5,
                      "contents": 4}
    assert parts["pg6130:front:0001"] == "contents"  # the list of illustrations
    for b in range(1, 25):  # every book opens with its argument; its verse is body
        assert parts[f"pg6130:b{b:02d}:0000"] == "argument"
        assert parts[f"pg6130:b{b:02d}:0004"] == "body"
    texts = {n.id: n.text for n in iliad.nodes}
    wrath = next(i for i, t in texts.items() if "Achilles’ wrath, to Greece" in t)
    assert parts[wrath] == "body"
    assert parts["pg6130:back:0000"] == "back" and texts["pg6130:back:0000"].startswith(
        "CONCLUDING NOTE")
    notes = [i for i in parts if parts[i] == "notes"]
    assert all(i.startswith("pg6130:back:") for i in notes)
    assert any("\nFootnotes\n" in texts[i] for i in notes)
    intro = next(i for i, t in texts.items() if "Scepticism is as much the result" in t)
    assert parts[intro] == "front"
