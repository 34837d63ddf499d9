"""The structured chunker: blocks -> nodes by the rules every document format shares."""

from __future__ import annotations

import itertools
import random

from excerpt.ingest.base import LoadOptions
from excerpt.ingest.documents.blocks import Block, BlockKind, StructuredDoc
from excerpt.ingest.documents.structure import (
    SECTION_STRETCH,
    cleaned_text,
    nodes_of,
    section_number,
)
from excerpt.types import Node

SENTENCE = "The quick brown fox jumps over the lazy dog. "


def _doc(blocks: list[Block], fmt: str = "pdf") -> StructuredDoc:
    return StructuredDoc(doc_id="d.pdf", title="Doc", blocks=blocks, metadata={"format": fmt})


def _nodes(blocks: list[Block], chunk: int = 200, overlap: int = 30, **kw: object) -> list[Node]:
    options = LoadOptions(chunk_chars=chunk, overlap_chars=overlap, **kw)  # type: ignore[arg-type]
    return nodes_of(_doc(blocks), "/src/d.pdf", options)[1]


def _spans(blocks: list[Block]) -> tuple[str, list[Block], list[tuple[int, int]]]:
    text, kept, starts = cleaned_text(blocks)
    return text, kept, [(s, s + len(b.text)) for b, s in zip(kept, starts, strict=True)]


def _blocks_of(node: Node, spans: list[tuple[int, int]]) -> list[int]:
    """Indices of the kept blocks a node's core touches."""
    core = node.start + int(node.metadata.get("overlap", 0))
    return [k for k, (s, e) in enumerate(spans) if s < node.end and e > core]


def _random_blocks(rng: random.Random) -> list[Block]:
    kinds: list[BlockKind] = ["heading", "paragraph", "paragraph", "list_item", "table_row", "code"]
    out: list[Block] = []
    for _ in range(rng.randint(1, 40)):
        kind = rng.choice(kinds)
        if kind == "heading":
            out.append(Block("heading", f"{rng.randint(1, 9)} Heading", rng.randint(1, 4)))
        elif kind == "table_row":
            out.append(Block("table_row", " | ".join(["cell value"] * rng.randint(1, 40))))
        elif kind == "code":
            out.append(Block("code", "\n".join(["    x = call(y)"] * rng.randint(1, 30))))
        else:
            out.append(Block(kind, SENTENCE * rng.randint(1, 25)))
    return out


def test_node_text_is_the_cleaned_text_between_its_offsets_and_ids_follow_text_py() -> None:
    blocks = [Block("heading", "  Title \n", 1), Block("paragraph", "  "),
              Block("paragraph", "One.\r\nTwo."), Block("code", "\n\n    indented()\n  \n")]
    text, kept, _ = cleaned_text(blocks)
    # blank blocks dropped, blocks trimmed (code keeps its first line's indentation), "\n\n" joins
    assert text == "Title\n\nOne.\nTwo.\n\n    indented()"
    assert [b.kind for b in kept] == ["heading", "paragraph", "code"]
    document, nodes = nodes_of(_doc(blocks), "/src/d.pdf", LoadOptions())
    assert (document.id, document.title, document.source) == ("d.pdf", "Doc", "/src/d.pdf")
    assert document.metadata == {"format": "pdf", "path": "d.pdf", "chars": len(text)}
    assert [n.id for n in nodes] == ["d.pdf:0000"]
    assert nodes[0].text == text == text[nodes[0].start : nodes[0].end]


def test_rules_hold_on_many_random_documents() -> None:
    rng = random.Random(19)
    for _ in range(300):
        blocks = _random_blocks(rng)
        chunk = rng.choice([60, 150, 400, 800])
        text, kept, spans = _spans(blocks)
        nodes = _nodes(blocks, chunk, rng.choice([0, 20, 100]))
        assert [n.id for n in nodes] == [f"d.pdf:{i:04d}" for i in range(len(nodes))]
        covered: set[int] = set()
        for i, node in enumerate(nodes):
            assert node.text == text[node.start : node.end]
            assert node.metadata["chunk"] == i
            inside = _blocks_of(node, spans)
            covered.update(inside)
            if i < len(nodes) - 1:  # a heading is never the last block of a node
                assert kept[inside[-1]].kind != "heading", (chunk, node.text)
            for k in inside:  # rows and code are never cut
                if kept[k].kind in ("table_row", "code"):
                    assert node.start <= spans[k][0] and spans[k][1] <= node.end
            if len(node.text) - node.metadata.get("overlap", 0) > chunk:
                _over_budget_by_the_rules(node, inside, kept, chunk)
        assert covered == set(range(len(kept)))  # every block is in some node


def _over_budget_by_the_rules(node: Node, inside: list[int], kept: list[Block],
                              chunk: int) -> None:
    """A node past its budget holds one block that is not a heading (a row, code, a heading's
    first block), or ends its section within the stretch with no heading after its text."""
    if sum(kept[k].kind != "heading" for k in inside) <= 1:
        return
    first_text = next(j for j, k in enumerate(inside) if kept[k].kind != "heading")
    assert all(kept[k].kind != "heading" for k in inside[first_text:]), node.text
    assert len(node.text) <= SECTION_STRETCH * chunk, node.text
    after = inside[-1] + 1
    assert after == len(kept) or kept[after].kind == "heading", node.text


def test_a_heading_goes_with_the_block_after_it_even_at_the_budget() -> None:
    blocks = [Block("paragraph", SENTENCE * 3), Block("heading", "Background", 3),
              Block("paragraph", SENTENCE * 3)]
    nodes = _nodes(blocks, chunk=200)
    assert [n.text.split("\n\n")[0][:10] for n in nodes] == ["The quick ", "Background"]
    assert nodes[1].text.startswith("Background\n\nThe quick")


def test_headings_before_a_top_level_heading_stay_together_and_start_it() -> None:
    blocks = [Block("paragraph", "Preface."), Block("heading", "Manual", 1),
              Block("heading", "1 Scope", 2), Block("paragraph", "Scope text."),
              Block("heading", "1.1 Terms", 3), Block("paragraph", "Terms text."),
              Block("heading", "2 Use", 2), Block("paragraph", "Use text.")]
    nodes = _nodes(blocks, chunk=800)
    # a level 1-2 heading starts a node; a level-3 heading does not when the node has room
    assert [n.text for n in nodes] == [
        "Preface.",
        "Manual\n\n1 Scope\n\nScope text.\n\n1.1 Terms\n\nTerms text.",
        "2 Use\n\nUse text.",
    ]


def test_rows_and_code_longer_than_the_budget_are_whole_nodes_of_their_own() -> None:
    code = "\n".join(f"line_{i} = compute({i})" for i in range(40))
    row = " | ".join(f"cell {i}" for i in range(60))
    blocks = [Block("paragraph", "Intro."), Block("code", code), Block("table_row", row),
              Block("table_row", "a | b"), Block("table_row", "c | d")]
    nodes = _nodes(blocks, chunk=100)
    assert [n.text for n in nodes] == ["Intro.", code, row, "a | b\n\nc | d"]


def test_a_long_paragraph_is_split_at_sentences_with_overlap() -> None:
    para = " ".join(f"Sentence number {i} says something." for i in range(60))
    nodes = _nodes([Block("heading", "H", 2), Block("paragraph", para)], chunk=300, overlap=60)
    assert len(nodes) > 5
    assert nodes[0].text.startswith("H\n\nSentence number 0 ")
    text, _, _ = cleaned_text([Block("heading", "H", 2), Block("paragraph", para)])
    for before, node in itertools.pairwise(nodes):
        assert node.text.startswith("Sentence number ") and node.text.endswith("something.")
        overlap = node.metadata["overlap"]
        core = node.start + overlap  # the text both hold, then white space, then the new text
        assert 0 < overlap <= 60 and node.start < before.end <= core
        assert not text[before.end : core].strip()
        assert len(node.text) - overlap <= 300
    assert text.endswith(nodes[-1].text)


def test_metadata_contract_of_every_node() -> None:
    blocks = [
        Block("paragraph", "Cover text.", page=1, page_label="i"),
        Block("heading", "Chapter 2. Requirements", 1, page=11, page_label="11"),
        Block("heading", "2.1 Power", 2, page=11),
        Block("paragraph", SENTENCE * 2, page=11),
        Block("table_row", "volts | 230", page=12),
        Block("heading", "Notes", 3, page=12),
        Block("paragraph", "Unnumbered notes.", page=12),
    ]
    nodes = _nodes(blocks, chunk=120, acl_tags=("team",), classification_labels=("internal",))
    # the table row ends section 2.1 within the stretch: it stays in 2.1's node
    assert [n.text[:20] for n in nodes] == [
        "Cover text.", "Chapter 2. Requireme", "Notes\n\nUnnumbered no"]
    assert [dict(n.metadata) for n in nodes] == [
        {"path": "d.pdf", "format": "pdf", "chunk": 0, "page": 1, "pages": [1],
         "page_label": "i"},
        # the heading path of the node's first block that is not a heading: it opens with
        # "Chapter 2" and "2.1 Power", and its text is in 2.1 ("in section 2.1" finds it)
        {"path": "d.pdf", "format": "pdf", "chunk": 1,
         "section": "Chapter 2. Requirements > 2.1 Power",
         "headings": ["Chapter 2. Requirements", "2.1 Power"], "section_number": "2.1",
         "section_numbers": ["2", "2.1"], "page": 11, "page_end": 12, "pages": [11, 12]},
        {"path": "d.pdf", "format": "pdf", "chunk": 2,
         "section": "Chapter 2. Requirements > 2.1 Power > Notes",
         "headings": ["Chapter 2. Requirements", "2.1 Power", "Notes"], "section_number": "2.1",
         "section_numbers": ["2", "2.1"], "page": 12, "pages": [12]},
    ]  # fmt: skip
    spanning = _nodes(blocks[1:5], chunk=1000)  # one node from page 11 to page 12
    assert {k: spanning[0].metadata[k] for k in ("page", "page_end", "pages")} == {
        "page": 11, "page_end": 12, "pages": [11, 12]}
    assert "page_label" not in spanning[0].metadata  # "11" is no different from page 11
    assert all(n.acl_tags == ("team",) and n.classification_labels == ("internal",)
               for n in nodes)
    assert all(n.title == "Doc" and n.source == "/src/d.pdf" for n in nodes)


def test_a_new_chapter_starts_a_node_and_its_own_outline() -> None:
    blocks = [
        Block("heading", "Sub", 3, chapter=1, chapter_title="One"),
        Block("paragraph", "First chapter text.", chapter=1, chapter_title="One"),
        Block("paragraph", "Second chapter text.", chapter=2, chapter_title="Two"),
    ]
    nodes = _nodes(blocks, chunk=800)
    assert [n.text for n in nodes] == ["Sub\n\nFirst chapter text.", "Second chapter text."]
    assert nodes[0].metadata["chapter"] == 1 and nodes[0].metadata["chapter_title"] == "One"
    assert nodes[0].metadata["section"] == "Sub"
    assert dict(nodes[1].metadata) == {"path": "d.pdf", "format": "pdf", "chunk": 1,
                                       "chapter": 2, "chapter_title": "Two"}


def test_section_numbers() -> None:
    assert section_number("2.1 Requirements") == "2.1"
    assert section_number("3. Scope") == "3"
    assert section_number("Section 4: Fees") == "4"
    assert section_number("§ 12 Terms") == "12"
    assert section_number("12) Terms") == "12"
    assert section_number("2024 Annual report") is None
    assert section_number("Introduction") is None
    assert section_number("3D printing") is None


def test_a_lead_in_goes_with_what_it_introduces_when_the_node_is_full() -> None:
    done = (SENTENCE * 2).strip()  # the section does not fit the stretch: it is cut
    blocks = [Block("paragraph", SENTENCE * 3), Block("paragraph", "A few examples:"),
              Block("code", "example_one()\nexample_two()"), Block("paragraph", done)]
    nodes = _nodes(blocks, chunk=160)
    assert [n.text for n in nodes] == [
        (SENTENCE * 3).strip(), f"A few examples:\n\nexample_one()\nexample_two()\n\n{done}"]
    # a colon does not hold back a top-level heading, and a long paragraph is no lead-in
    top = _nodes([Block("paragraph", "Then:"), Block("heading", "Next", 2),
                  Block("paragraph", "Text.")], chunk=800)
    assert [n.text for n in top] == ["Then:", "Next\n\nText."]


def test_a_section_that_fits_the_stretch_is_not_cut_before_its_last_paragraph() -> None:
    """200 characters of budget: a section of 219 stays one node (its last paragraph is not a
    node of its own, cut from the heading and the lead-in that say what it is about); one of
    309 (past 1.5 budgets) is cut; the stretch never reaches across a heading."""
    intro = (SENTENCE * 3).strip()  # 134 characters
    short = SENTENCE.strip()  # 44
    fits = [Block("heading", "4.1 Options", 3), Block("paragraph", intro),
            Block("paragraph", "nocheck: skip the tests.")]  # 173 with the separators
    nodes = _nodes([*fits, Block("paragraph", short)], chunk=200)
    assert [n.text for n in nodes] == [
        f"4.1 Options\n\n{intro}\n\nnocheck: skip the tests.\n\n{short}"]
    too_long = _nodes([*fits, Block("paragraph", intro)], chunk=200)
    assert [n.text[:11] for n in too_long] == ["4.1 Options", intro[:11]]
    across = _nodes([Block("paragraph", intro), Block("heading", "4.2 More", 3),
                     Block("paragraph", short)], chunk=150)
    assert [n.text[:8] for n in across] == [intro[:8], "4.2 More"]


def test_a_node_spanning_labelled_pages_records_both_labels() -> None:
    """Pages 17 and 18 of the file are printed 11 and 12: a node on both says so, for a
    citation of "p. 11–12"; a node on one labelled page has no end label."""
    blocks = [Block("heading", "2.7 Setup", 2, page=17, page_label="11"),
              Block("paragraph", SENTENCE, page=17, page_label="11"),
              Block("paragraph", SENTENCE, page=18, page_label="12")]
    both = _nodes(blocks, chunk=800)[0].metadata
    assert (both["page"], both["page_end"], both["page_label"], both["page_end_label"]) == (
        17, 18, "11", "12")
    one = _nodes(blocks[:2], chunk=800)[0].metadata
    assert one["page_label"] == "11" and "page_end_label" not in one
