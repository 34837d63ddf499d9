"""Regulation books (규정집): one document per regulation, one node per article, typed edges.

The real book (``regulations/dongeui_regulations_9-340_20250702.txt`` in the shared data) is
loaded once per module; the counts and ids below were checked by hand against the file
(``grep -c '^제[0-9]*조'`` over 교원인사규정's lines 22813-23687 gives its 47 articles; the
book's 5,219 lines starting with 제N조 are its 5,189 articles plus 16 quoted in agreement forms,
11 bare table cells, 2 sentences and one repeated 제2조).  The small tests write one snippet
each to ``tmp_path`` and check one rule.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from excerpt.errors import CorpusError, InputError
from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.regulations.loader import load_regulations, looks_like_regulations
from excerpt.types import Node

BOOK = ("regulations", "dongeui_regulations_9-340_20250702.txt")


@pytest.fixture(scope="module")
def book_path(shared_data: Callable[..., Path]) -> Path:
    return shared_data(*BOOK)


@pytest.fixture(scope="module")
def book(book_path: Path) -> LoadedCorpus:
    return load_regulations([book_path])


@pytest.fixture(scope="module")
def nodes(book: LoadedCorpus) -> dict[str, Node]:
    return {n.id: n for n in book.nodes}


def edge_keys(corpus: LoadedCorpus) -> set[tuple[str, str, str]]:
    return {(e.from_id, e.relation, e.to_id) for e in corpus.edges}


def doc_text(path: Path, line: int) -> str:
    """The file from a regulation's title line on: its document text is a prefix of it."""
    return "\n".join(path.read_text(encoding="utf-8").split("\n")[line - 1 :])


# --- the real book ------------------------------------------------------------------------------


def test_book_counts(book: LoadedCorpus) -> None:
    assert len(book.documents) == 510
    statuses = Counter(d.metadata["status"] for d in book.documents)
    assert statuses == {"in_force": 368, "abolished": 120, "moved": 22}
    kinds = Counter(n.metadata["kind"] for n in book.nodes)
    assert kinds["article"] == 5189
    assert kinds["addendum"] == 369
    assert kinds["notice"] == 142
    articles = [n for n in book.nodes if n.document_id == "교원인사규정"
                and n.metadata["kind"] == "article"]
    assert len(articles) == 47


def test_book_regulation_metadata(book: LoadedCorpus) -> None:
    docs = {d.id: d for d in book.documents}
    rules = docs["교원인사규정"]
    assert rules.title == "교원인사규정"
    assert rules.metadata["rule_code"] == "3-1-5"
    assert rules.metadata["department"] == "교무팀"
    assert rules.metadata["department_path"] == ["교무처", "교무팀"]
    assert rules.metadata["history"][:2] == ["2000년 8월 1일 제정", "2001년 8월 28일 개정"]
    chapters = rules.metadata["chapter_titles"]
    assert chapters[:3] == ["제1장 총칙", "제2장 신규임용", "제3장 승진임용"]
    assert docs["학교법인동의학원정관"].metadata["history"][0] == "1966. 10. 22. 제정"
    abolished = docs["시간강사위촉규정"]
    assert abolished.metadata["status"] == "abolished"
    assert abolished.metadata["history"] == ["2019년 8월 1일자 폐지 → 시간강사 제도 폐지"]


def test_book_article_with_its_items(nodes: dict[str, Node]) -> None:
    art = nodes["교원인사규정 제15조"]
    assert art.title == "교원인사규정 제15조 (승진임용의 제한)"
    assert art.metadata["caption"] == "(승진임용의 제한)"
    assert art.text.startswith("제15조 (승진임용의 제한) 교원이 다음 각 호의 1에 해당하는")
    for item in ("1. 징계의결요구", "2. 징계처분의 집행이", "정직 : 18개월"):
        assert item in art.text
    meta = art.metadata
    assert (meta["article"], meta["article_no"], meta["article_sub"]) == ("제15조", 15, 0)
    assert meta["chapter"] == "제3장 승진임용"
    assert meta["rule_code"] == "3-1-5"
    assert meta["kind"] == "article"
    paragraphs = nodes["교원인사규정 제14조"].text
    assert all(mark in paragraphs for mark in "①②③④⑤⑥⑦")
    assert "제15조 (" not in paragraphs


def test_book_sub_article_addendum_and_deleted(nodes: dict[str, Node]) -> None:
    sub = nodes["교원인사규정 제2조의2"]
    assert sub.title == "교원인사규정 제2조의2 (산학협력중점교원으로의 전환)"
    assert sub.metadata["article_sub"] == 2
    assert "② 산학협력중점교원으로의 지정에 관한 세부사항" in sub.text
    addendum = nodes["교원인사규정 부칙"]
    assert addendum.metadata["kind"] == "addendum"
    assert addendum.text.startswith("부  칙\n1. 이 규정은 2000년 8월 1일부터 시행한다.")
    assert addendum.text.endswith("58. 이 변경 규정은 2025년 3월 1일부터 시행한다.")
    assert not re.search(r"^\[별표", addendum.text, re.M)
    assert nodes["학교법인동의학원정관 부칙 2"].text.startswith("부")
    deleted = nodes["교원인사규정 제16조"]
    assert deleted.text == "제16조 <삭제 2008. 3. 1.>"
    assert deleted.metadata["deleted"] is True
    assert nodes["교원인사규정 별표 1"].metadata["kind"] == "appendix"


def test_book_edges(book: LoadedCorpus) -> None:
    keys = edge_keys(book)
    assert ("교원인사규정 제14조", "cites", "교원인사규정 제15조") in keys
    assert ("교원인사규정 제12조의2", "cites", "교원및직원의수당규정 제29조") in keys
    assert ("학사학위취득유예규정 제9조", "cites", "등록금에관한규정 제7조") in keys
    assert ("겸임교원임용등에관한시행세칙 제1조", "cites", "초빙교원임용규정 제1조") in keys
    assert ("교원인사규정 제42조", "cites", "동의대학교학칙 제46조") in keys
    assert ("교원인사규정 제12조", "related", "교원및직원의보수규정 제1조") in keys
    cross = next(e for e in book.edges if e.from_id == "학사학위취득유예규정 제9조")
    assert cross.metadata == {"mention": "「등록금에관한규정」 제7조", "scope": "book"}
    assert all(e.from_id != e.to_id for e in book.edges)
    assert len(keys) == len(book.edges)
    assert {e.relation for e in book.edges} == {"cites", "related"}


def test_book_no_contents_or_index_nodes(book: LoadedCorpus, book_path: Path) -> None:
    lines = book_path.read_text(encoding="utf-8").split("\n")
    first_part = next(i for i, ln in enumerate(lines) if i > 1000 and ln.strip() == "제1편")
    assert min(n.metadata["line"] for n in book.nodes) > first_part
    toc_line = re.compile(r"\t\d+-\d+-\d+[ \t]*$", re.M)
    assert not [n.id for n in book.nodes if toc_line.search(n.text)]


def test_book_nodes_are_clean(book: LoadedCorpus, book_path: Path) -> None:
    ids = [n.id for n in book.nodes]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    assert all(n.text and n.text == n.text.strip() for n in book.nodes)
    docs = {d.id: d for d in book.documents}
    for node_id in ("교원인사규정 제15조", "교원인사규정 부칙", "시간강사위촉규정"):
        node = next(n for n in book.nodes if n.id == node_id)
        text = doc_text(book_path, docs[node.document_id].metadata["line"])
        assert text[node.start : node.end] == node.text


def test_book_issues(book: LoadedCorpus, book_path: Path) -> None:
    assert [(e.line, e.reason.split(":")[0]) for e in book.errors] == [
        (54299, "한국어연수과정운영규정"),
        (57165, "대학원학위논문심사에관한세칙"),
        (57249, "대학원학위수여에관한세칙"),
        (70878, "연구노트작성․관리규정"),
    ]
    assert all(e.path == str(book_path) for e in book.errors)


def test_book_is_deterministic(book: LoadedCorpus, book_path: Path) -> None:
    again = load_regulations([book_path])
    assert again.documents == book.documents
    assert again.nodes == book.nodes
    assert again.edges == book.edges
    assert again.errors == book.errors


def test_book_is_detected(book_path: Path) -> None:
    assert looks_like_regulations(book_path)


# --- snippets -----------------------------------------------------------------------------------

SNIPPET = """규   정   집

차   례

제1편  일반

\t\t교원인사규정\t1-0-1
\t\t강사료지급규정\t1-0-2
\t\t폐지된규정【폐지】\t1-0-3
찾아보기
<소관부서별>

교무처
\t교무팀
\t\t교원인사규정\t1-0-1
\t\t강사료지급규정\t1-0-2

제1편

교원인사규정\t1-0-1
강사료지급규정\t1-0-2
폐지된규정【폐지】\t1-0-3

교원인사규정
<규정 명칭 변경 2008. 3. 1.>
제1장  총  칙
제1조 (목적) 이 규정은 교원의 인사에 관한 사항을 정한다.
제2조 (직위) 교원의 직위는 교수로 한다.
제2조의2 (전환) ① 교원을 전환할 수 있다.
  ② 제1항의 세부사항은 따로 정한다.
제2장  임용
제3조 (임용) ① 교원은 제2조에 따라 임용한다.
  1. 교수
    가. 정년
  ② 보수는 「강사료지급규정」 제2조에 따른다.
제4조 <삭제 2020. 3. 1.>

부  칙
1. 이 규정은 2000년 8월 1일부터 시행한다.
2. 이 변경 규정은 2001년 3월 1일부터 시행한다.
[별지 제1호 서식]
신 청 서
제1조 (목적) 서식에 옮겨 적은 조문

강사료지급규정
제1조 (목적) 이 규정은 강사료에 관한 사항을 정한다. 교원인사규정에 따른다.
제2조 (지급) 강사료는 매월 지급한다. 「고등교육법」 제14조와 「학과장 사유서」를 본다.

부  칙
1. 이 규정은 2010년 3월 1일부터 시행한다.
폐지된규정
2019년 8월 1일자 폐지 → 제도 폐지
"""


def write(tmp_path: Path, text: str, name: str = "book.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def snippet(tmp_path: Path) -> LoadedCorpus:
    return load_regulations([write(tmp_path, SNIPPET)])


def test_snippet_documents(snippet: LoadedCorpus) -> None:
    docs = {d.id: d for d in snippet.documents}
    assert sorted(docs) == ["강사료지급규정", "교원인사규정", "폐지된규정"]
    rules = docs["교원인사규정"].metadata
    assert rules["rule_code"] == "1-0-1"
    assert rules["department_path"] == ["교무처", "교무팀"]
    assert rules["chapter_titles"] == ["제1장 총칙", "제2장 임용"]
    assert rules["history"] == ["규정 명칭 변경 2008. 3. 1.", "2000년 8월 1일 제정",
                                "2001년 3월 1일 개정"]
    assert docs["폐지된규정"].metadata["status"] == "abolished"
    assert docs["폐지된규정"].metadata["listed_abolished"] is True
    assert snippet.errors == []


def test_snippet_nodes(snippet: LoadedCorpus) -> None:
    assert [n.id for n in snippet.nodes] == [
        "강사료지급규정 부칙", "강사료지급규정 제1조", "강사료지급규정 제2조",
        "교원인사규정 별지 제1호 서식", "교원인사규정 부칙", "교원인사규정 제1조",
        "교원인사규정 제2조", "교원인사규정 제2조의2", "교원인사규정 제3조", "교원인사규정 제4조",
        "폐지된규정",
    ]
    by_id = {n.id: n for n in snippet.nodes}
    art = by_id["교원인사규정 제3조"]
    assert art.text == ("제3조 (임용) ① 교원은 제2조에 따라 임용한다.\n  1. 교수\n    가. 정년\n"
                        "  ② 보수는 「강사료지급규정」 제2조에 따른다.")
    assert art.metadata["caption"] == "(임용)" and art.title.endswith(" (임용)")
    assert art.metadata["chapter"] == "제2장 임용"
    assert by_id["교원인사규정 제2조의2"].metadata["article_sub"] == 2
    assert by_id["교원인사규정 제4조"].metadata["deleted"] is True
    assert by_id["교원인사규정 부칙"].text.endswith("2001년 3월 1일부터 시행한다.")
    form = by_id["교원인사규정 별지 제1호 서식"]
    assert form.metadata["kind"] == "form"
    assert "제1조 (목적) 서식에 옮겨 적은 조문" in form.text
    assert by_id["폐지된규정"].metadata["kind"] == "notice"


def test_snippet_edges(snippet: LoadedCorpus) -> None:
    assert edge_keys(snippet) == {
        ("교원인사규정 제3조", "cites", "교원인사규정 제2조"),
        ("교원인사규정 제3조", "cites", "강사료지급규정 제2조"),
        ("교원인사규정 별지 제1호 서식", "cites", "교원인사규정 제1조"),
        ("강사료지급규정 제1조", "related", "교원인사규정 제1조"),
        ("강사료지급규정 제2조", "cites", "고등교육법 제14조"),
    }
    scopes = {e.to_id: e.metadata["scope"] for e in snippet.edges}
    assert scopes["고등교육법 제14조"] == "external"
    assert scopes["강사료지급규정 제2조"] == "book"


def test_offsets_point_into_the_document_text(snippet: LoadedCorpus, tmp_path: Path) -> None:
    docs = {d.id: d for d in snippet.documents}
    for node in snippet.nodes:
        text = doc_text(tmp_path / "book.txt", docs[node.document_id].metadata["line"])
        assert text[node.start : node.end] == node.text


def test_security_labels_on_every_node(tmp_path: Path) -> None:
    options = LoadOptions(acl_tags=("staff", "staff"), classification_labels=("internal",))
    corpus = load_regulations([write(tmp_path, SNIPPET)], options)
    assert {n.acl_tags for n in corpus.nodes} == {("staff",)}
    assert {n.classification_labels for n in corpus.nodes} == {("internal",)}


def test_a_book_without_contents(tmp_path: Path) -> None:
    corpus = load_regulations([write(tmp_path, "머리말\n\n시험규정\n제1조 (목적) 시험.\n"
                                                "제2조 (정의) 제1조를 본다.\n")])
    assert [n.id for n in corpus.nodes] == ["시험규정 제1조", "시험규정 제2조"]
    assert corpus.documents[0].metadata["rule_code"] == ""
    assert edge_keys(corpus) == {("시험규정 제2조", "cites", "시험규정 제1조")}


def test_a_shared_name_gets_the_code(tmp_path: Path) -> None:
    text = ("차례\n\t\t공동규정【폐지】\t1-0-1\n\t\t공동규정\t1-0-2\n찾아보기\n\n제1편\n"
            "공동규정【폐지】\t1-0-1\n공동규정\t1-0-2\n"
            "공동규정\n2017년 8월 1일자 직제개편으로 인한 이동(제1편 → 제2편)\n"
            "공동규정\n제1조 (목적) 목적.\n")
    corpus = load_regulations([write(tmp_path, text)])
    docs = {d.id: d.metadata["status"] for d in corpus.documents}
    assert docs == {"공동규정 (1-0-1)": "moved", "공동규정": "in_force"}
    assert [n.id for n in corpus.nodes] == ["공동규정 (1-0-1)", "공동규정 제1조"]


def test_two_regulations_in_force_under_one_name_are_reported(tmp_path: Path) -> None:
    text = "시험규정\n제1조 (가) 가.\n시험규정\n제1조 (나) 나.\n"
    corpus = load_regulations([write(tmp_path, text)])
    assert [n.id for n in corpus.nodes] == ["시험규정 (3) 제1조", "시험규정 제1조"]
    assert [(e.line, "in force" in e.reason) for e in corpus.errors] == [(3, True)]


def test_out_of_order_and_irregular_articles_are_reported(tmp_path: Path) -> None:
    text = ("시험규정\n제1조 (목적) 목적.\n제3조 (셋) 셋.\n제2조 (둘) 둘.\n"
            "제3조 2 (넷) 넷.\n")
    corpus = load_regulations([write(tmp_path, text)])
    assert [n.id for n in corpus.nodes] == ["시험규정 제1조", "시험규정 제3조", "시험규정 제3조의2"]
    assert "제2조 (둘) 둘." in corpus.nodes[1].text
    assert [(e.line, "out of order" in e.reason, "irregular" in e.reason)
            for e in corpus.errors] == [(4, True, False), (5, False, True)]


def test_contents_entries_without_text_are_reported(tmp_path: Path) -> None:
    text = "차례\n\t\t시험규정\t1-0-1\n\t\t없는규정\t1-0-2\n찾아보기\n\n제1편\n" \
           "시험규정\n제1조 (목적) 목적.\n"
    corpus = load_regulations([write(tmp_path, text)])
    assert [n.id for n in corpus.nodes] == ["시험규정 제1조"]
    assert any("없는규정 (1-0-2)" in e.reason for e in corpus.errors)


def test_not_a_regulation_book(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="not a regulation book"):
        load_regulations([write(tmp_path, "Just some text.\n제1장 없음\n")])
    assert not looks_like_regulations(tmp_path / "book.txt")


def test_unreadable_and_missing_files(tmp_path: Path) -> None:
    binary = tmp_path / "b.txt"
    binary.write_bytes(b"\x00\x01\x02")
    with pytest.raises(CorpusError, match="binary"):
        load_regulations([binary])
    with pytest.raises(InputError):
        load_regulations([tmp_path / "missing.txt"])


def test_two_books_with_one_regulation_are_refused(tmp_path: Path) -> None:
    first = write(tmp_path, SNIPPET, "a.txt")
    second = write(tmp_path, SNIPPET, "b.txt")
    with pytest.raises(CorpusError, match="교원인사규정"):
        load_regulations([first, second])


def test_a_folder_of_books(tmp_path: Path) -> None:
    write(tmp_path, SNIPPET)
    (tmp_path / "notes.md").write_text("# not read\n", encoding="utf-8")
    corpus = load_regulations([tmp_path])
    assert len(corpus.documents) == 3


def test_a_code_mistyped_in_a_part_list_takes_the_contents_code(tmp_path: Path) -> None:
    # The 9-343 edition lists 인공지능(AI)위원회규정 as 4-0-78 in part 4 and 4-0-76 in the contents.
    text = ("차례\n\t\t시험규정\t1-0-1\n\t\t새규정\t1-0-2\n찾아보기\n\n제1편\n"
            "시험규정\t1-0-1\n새규정\t1-0-9\n\n"
            "시험규정\n제1조 (목적) 목적.\n새규정\n제1조 (목적) 새.\n")
    corpus = load_regulations([write(tmp_path, text)])
    codes = {d.id: d.metadata["rule_code"] for d in corpus.documents}
    assert codes == {"새규정": "1-0-2", "시험규정": "1-0-1"}
    assert [(e.line, e.reason) for e in corpus.errors] == [
        (8, "the part's contents list 새규정 as 1-0-9, the book's contents as 1-0-2; 1-0-2 used")]
