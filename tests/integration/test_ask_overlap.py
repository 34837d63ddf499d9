"""A chunk repeats the end of the chunk before (its overlap), and that repeated text may start
inside a sentence (at a line start of a hard-wrapped text). Such a piece reads as a sentence
("Basil Hallward had painted of him in …") but is a fragment: ``ask`` must never quote it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from excerpt.compose.composer import compose
from excerpt.compose.extract import candidates
from excerpt.engine import Engine
from excerpt.types import Filters

LINES = [
    "Dorian looked at the portrait for a long time, and the longer he looked the more",
    "he hated the face that smiled back at him from the canvas that the painter",
    "Basil Hallward had painted of him in the long summer of that year.",
]


def test_the_repeated_start_of_a_chunk_is_never_quoted(tmp_path: Path) -> None:
    # Long sentences hard-wrapped at 80 characters: no sentence starts inside most overlap
    # windows, so the overlap starts at a line start, in the middle of a sentence.
    text = "\n".join(LINES * 40) + "\n"
    folder = tmp_path / "book"
    folder.mkdir()
    (folder / "novel.txt").write_text(text, encoding="utf-8")
    engine = Engine(tmp_path / "home")
    engine.ingest(folder, collection="c", embedder="none", fmt="text")
    hits = engine.search("portrait canvas Basil Hallward painted", Filters("c"), k=50).hits
    cut = [h for h in hits if h.node.metadata.get("overlap") and h.node.text.startswith("Basil")]
    assert cut, "no chunk whose overlap starts inside a sentence: the test proves nothing"
    for hit in cut:
        node = hit.node
        answer = compose("Who painted the portrait?", [hit])
        for quote in answer.quotes:
            at = node.text.index(quote.text)
            assert at >= node.metadata["overlap"], quote.text
        fragment = "Basil Hallward had painted of him in the long summer of that year."
        assert fragment not in [s.text for s in candidates([node])]
        # the same node without its overlap metadata (a store ingested before it existed)
        # offers the fragment: the metadata is what keeps it out
        bare = replace(node, metadata={})
        assert next(s.text for s in candidates([bare])) == fragment
    engine.close()
