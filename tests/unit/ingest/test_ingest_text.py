from __future__ import annotations

from pathlib import Path

import pytest
from tests.unit.ingest.files import write_file

from excerpt.errors import CorpusError, InputError
from excerpt.ingest.base import LoadOptions
from excerpt.ingest.documents.markdown import parse as parse_markdown
from excerpt.ingest.documents.structure import cleaned_text
from excerpt.ingest.documents.text import load_text, read_text_file

KOREAN = (
    "교원인사규정\n\n제1조(목적) 이 규정은 동의대학교 교원의 임용, 승진, 재임용에 관한 사항을 "
    "규정함을 목적으로 한다.\n\n제2조(정의) 이 규정에서 사용하는 용어의 뜻은 다음과 같다.\n"
)


def _cleaned(path: Path) -> str:
    text, reason = read_text_file(path)
    assert text is not None, reason
    return text


def test_single_text_file(tmp_path: Path) -> None:
    body = "\n\n".join(f"Paragraph {i}. " + "Some words here. " * 20 for i in range(8))
    f = write_file(tmp_path / "notes.txt", "\n  The Title Line  \n\n" + body)
    corpus = load_text([f], LoadOptions())
    assert corpus.source == str(f.resolve())
    assert corpus.errors == []
    [doc] = corpus.documents
    assert (doc.id, doc.title, doc.source) == ("notes.txt", "The Title Line", str(f.resolve()))
    assert doc.metadata["format"] == "text"
    assert len(corpus.nodes) > 1
    text = _cleaned(f)
    for i, node in enumerate(corpus.nodes):
        assert node.id == f"notes.txt:{i:04d}"
        assert node.document_id == "notes.txt"
        assert node.text == text[node.start : node.end]
        assert node.title == "The Title Line"
        overlap = {"overlap": node.metadata["overlap"]} if i else {}  # repeated from i - 1
        assert dict(node.metadata) == {"path": "notes.txt", "chunk": i, **overlap}  # no section
        if i:
            before = corpus.nodes[i - 1]
            core = node.start + overlap["overlap"]  # the text both hold, then white space
            assert node.start < before.end <= core and not text[before.end:core].strip()
        assert len(node.text) <= 800 + 100


def test_folder_is_walked_recursively_in_sorted_order(tmp_path: Path) -> None:
    write_file(tmp_path / "b.txt", "bee")
    write_file(tmp_path / "a.md", "# A\n\nay")
    write_file(tmp_path / "sub" / "deeper" / "c.rst", "Title\n=====\n\nsee")
    write_file(tmp_path / "sub" / "d.markdown", "dee")
    write_file(tmp_path / "sub" / "e.text", "ee")
    write_file(tmp_path / "UPPER.TXT", "upper")
    write_file(tmp_path / "skip.py", "print('not text')")
    write_file(tmp_path / "data.json", "{}")
    write_file(tmp_path / ".hidden.txt", "hidden")
    write_file(tmp_path / ".git" / "notes.txt", "hidden folder")
    corpus = load_text([tmp_path], LoadOptions())
    assert [d.id for d in corpus.documents] == [
        "UPPER.TXT", "a.md", "b.txt", "sub/d.markdown", "sub/deeper/c.rst", "sub/e.text",
    ]  # fmt: skip
    assert corpus.errors == []  # other suffixes and hidden files are skipped silently
    assert corpus.source == str(tmp_path.resolve())
    assert [n.id for n in corpus.nodes][:2] == ["UPPER.TXT:0000", "a.md:0000"]


def test_explicit_file_is_read_whatever_its_suffix(tmp_path: Path) -> None:
    f = write_file(tmp_path / "script.py", "# a comment line\nprint('hi')\n")
    corpus = load_text([f], LoadOptions())
    assert corpus.documents[0].id == "script.py"
    assert corpus.documents[0].title == "# a comment line"  # not markdown: line kept as is
    assert corpus.nodes[0].text.startswith("# a comment")


def test_markdown_title_and_sections(tmp_path: Path) -> None:
    # .md files go through the Markdown reader and the structured chunker: node text is the
    # blocks' text (no "#" marks, no fence lines), sections are heading paths
    md = (
        "Some intro line before the heading.\n\n"
        + "# The Real Title\n\n"
        + "Intro paragraph. " * 30
        + "\n\n## Install\n\n"
        + "```bash\n# not a heading: a shell comment\npip install x\n```\n\n"
        + "Install text. " * 60
        + "\n\nUsage\n-----\n\n"
        + "Usage text. " * 60
        + "\n"
    )
    f = write_file(tmp_path / "guide.md", md)
    corpus = load_text([f], LoadOptions(chunk_chars=300, overlap_chars=50))
    doc = corpus.documents[0]
    assert doc.title == "The Real Title"
    assert doc.metadata["format"] == "markdown"
    by_section: dict[str | None, list[str]] = {}
    for node in corpus.nodes:
        by_section.setdefault(node.metadata.get("section"), []).append(node.text)
    install, usage = "The Real Title > Install", "The Real Title > Usage"
    assert set(by_section) == {None, "The Real Title", install, usage}
    # each level-1/2 heading starts a node: no chunk spans two of those sections
    assert by_section[None] == ["Some intro line before the heading."]
    assert by_section["The Real Title"][0].startswith("The Real Title\n\nIntro paragraph.")
    assert by_section[install][0].startswith("Install\n\n# not a heading: a shell comment\n")
    assert by_section[usage][0].startswith("Usage\n\nUsage text.")
    assert all("Usage text" in t and "Install" not in t for t in by_section[usage])
    text, _, _ = cleaned_text(parse_markdown(_cleaned(f), "guide.md", "guide.md").blocks)
    assert all(n.text == text[n.start : n.end] for n in corpus.nodes)
    assert [n.id for n in corpus.nodes] == [f"guide.md:{i:04d}" for i in range(len(corpus.nodes))]


def test_markdown_heading_on_the_first_line_names_the_first_section(tmp_path: Path) -> None:
    f = write_file(tmp_path / "a.md", "# Top\n\nText under top.\n\n## Next\n\nMore text.\n")
    nodes = load_text([f], LoadOptions()).nodes
    assert [(n.text, n.metadata["section"]) for n in nodes] == [
        ("Top\n\nText under top.", "Top"),
        ("Next\n\nMore text.", "Top > Next"),
    ]


def test_markdown_title_falls_back(tmp_path: Path) -> None:
    level2 = write_file(tmp_path / "a.md", "intro\n\n## Second level only\n\ntext\n")
    front = write_file(tmp_path / "b.md", "---\ntitle: From Front Matter\n---\n\n# H1\n\ntext\n")
    plain = write_file(tmp_path / "c.md", "\n\n### \n\nJust a line of text\n")
    corpus = load_text([level2, front, plain], LoadOptions())
    titles = {d.id: d.title for d in corpus.documents}
    assert titles == {
        "a.md": "Second level only",
        "b.md": "From Front Matter",
        "c.md": "Just a line of text",
    }


def test_long_title_is_cut_to_120_chars(tmp_path: Path) -> None:
    first = "word " * 60
    f = write_file(tmp_path / "long.txt", first + "\n\nbody")
    title = load_text([f], LoadOptions()).documents[0].title
    assert len(title) <= 120 and title.endswith("…") and title.startswith("word word")
    # the text itself is never cut
    assert first.strip() in load_text([f], LoadOptions()).nodes[0].text


def test_title_falls_back_to_file_name(tmp_path: Path) -> None:
    f = write_file(tmp_path / "dashes.txt", "----\n\n====\n\n....\n")
    assert load_text([f], LoadOptions()).documents[0].title == "dashes.txt"


def test_korean_text_reads_fine(tmp_path: Path) -> None:
    f = write_file(tmp_path / "규정.txt", KOREAN)
    corpus = load_text([f], LoadOptions())
    [doc] = corpus.documents
    assert doc.id == "규정.txt"
    assert doc.title == "교원인사규정"
    joined = " ".join(n.text for n in corpus.nodes)
    assert "제1조(목적)" in joined and "제2조(정의)" in joined


def test_bom_and_crlf_are_cleaned(tmp_path: Path) -> None:
    f = write_file(tmp_path / "win.txt", b"\xef\xbb\xbfTitle\r\n\r\nBody line one.\r\nTwo.\r\n")
    corpus = load_text([f], LoadOptions())
    assert corpus.documents[0].title == "Title"
    assert corpus.nodes[0].text == "Title\n\nBody line one.\nTwo."
    assert corpus.nodes[0].start == 0


def test_bad_files_are_reported_and_the_rest_goes_on(tmp_path: Path) -> None:
    write_file(tmp_path / "good.txt", "Readable text.")
    write_file(tmp_path / "binary.txt", b"PK\x03\x04\x00\x00binary stuff")
    write_file(tmp_path / "latin1.txt", b"caf" + b"\xe9 au lait")
    write_file(tmp_path / "empty.md", "")
    write_file(tmp_path / "blank.txt", "  \n\n\t \n")
    write_file(tmp_path / "utf16.txt", "hello".encode("utf-16"))
    corpus = load_text([tmp_path], LoadOptions())
    assert [d.id for d in corpus.documents] == ["good.txt"]
    reasons = {Path(i.path).name: i.reason for i in corpus.errors}
    assert set(reasons) == {"binary.txt", "latin1.txt", "empty.md", "blank.txt", "utf16.txt"}
    assert "binary" in reasons["binary.txt"] and "offset 4" in reasons["binary.txt"]
    assert "not valid UTF-8" in reasons["latin1.txt"]
    assert "0xe9 at offset 3" in reasons["latin1.txt"]
    assert reasons["empty.md"] == "empty file"
    assert "whitespace" in reasons["blank.txt"]
    assert "UTF-16" in reasons["utf16.txt"]
    assert all(str(tmp_path) in i.path for i in corpus.errors)


def test_invalid_utf8_offset_counts_the_bom(tmp_path: Path) -> None:
    f = write_file(tmp_path / "x.txt", b"\xef\xbb\xbfabc\xffdef")
    corpus_errors = load_text([f, write_file(tmp_path / "ok.txt", "ok")], LoadOptions()).errors
    assert [e.reason.split(" (")[0] for e in corpus_errors] == [
        "not valid UTF-8: byte 0xff at offset 6"
    ]


def test_nonexistent_path_raises_input_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "missing.txt"
    with pytest.raises(InputError, match=r"missing\.txt"):
        load_text([missing], LoadOptions())
    with pytest.raises(InputError):
        load_text([], LoadOptions())


def test_folder_without_readable_files_is_a_corpus_error(tmp_path: Path) -> None:
    write_file(tmp_path / "bin.txt", b"\x00\x01\x02")
    write_file(tmp_path / "empty.txt", "")
    with pytest.raises(CorpusError, match="no readable text files in") as info:
        load_text([tmp_path], LoadOptions())
    assert "bin.txt" in str(info.value) and "empty file" in str(info.value)
    other = tmp_path / "other"
    write_file(other / "x.py", "code")
    with pytest.raises(CorpusError, match=r"no readable text files in .*suffixes"):
        load_text([other], LoadOptions())


def test_single_unreadable_file_is_a_corpus_error(tmp_path: Path) -> None:
    f = write_file(tmp_path / "b.txt", b"\x00")
    with pytest.raises(CorpusError, match="binary"):
        load_text([f], LoadOptions())


def test_security_fields_from_options(tmp_path: Path) -> None:
    f = write_file(tmp_path / "a.txt", "text")
    options = LoadOptions(acl_tags=("hr", "eng", "hr"), classification_labels=("secret", "pii"))
    node = load_text([f], options).nodes[0]
    assert node.acl_tags == ("eng", "hr")
    assert node.classification_labels == ("pii", "secret")


def test_deterministic_and_order_independent(tmp_path: Path) -> None:
    a = write_file(tmp_path / "one" / "a.md", "# A\n\n" + "alpha. " * 300)
    b = write_file(tmp_path / "two" / "b.txt", "beta. " * 300)
    first = load_text([a.parent, b.parent], LoadOptions())
    second = load_text([b.parent, a.parent], LoadOptions())
    assert first == second
    assert first.source == "|".join(sorted([str(a.parent.resolve()), str(b.parent.resolve())]))
    assert len({n.id for n in first.nodes}) == len(first.nodes)


def test_same_id_from_two_folders_is_refused(tmp_path: Path) -> None:
    write_file(tmp_path / "x" / "README.md", "one")
    write_file(tmp_path / "y" / "README.md", "two")
    with pytest.raises(CorpusError, match=r"README\.md"):
        load_text([tmp_path / "x", tmp_path / "y"], LoadOptions())


def test_a_file_named_twice_is_read_once(tmp_path: Path) -> None:
    f = write_file(tmp_path / "a.txt", "once")
    assert len(load_text([f, f], LoadOptions()).documents) == 1


def test_bad_chunk_options_are_input_errors(tmp_path: Path) -> None:
    f = write_file(tmp_path / "a.txt", "text")
    with pytest.raises(InputError, match="chunk"):
        load_text([f], LoadOptions(chunk_chars=0))
    with pytest.raises(InputError, match="at least 1 character, got 0"):  # 0 is not "unset"
        load_text([f], LoadOptions(document_chunk_chars=0))
