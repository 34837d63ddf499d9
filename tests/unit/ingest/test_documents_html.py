"""HTML pages written here (and Debian's HTML manuals when installed) read by
excerpt.ingest.documents.html: main content only, structure, rows, code whole, charsets, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from excerpt.errors import CorpusError
from excerpt.ingest.documents import html
from excerpt.ingest.documents.blocks import Block

SITE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Pump guide</title>
<script>var tracking = "SCRIPT TEXT";</script><style>p { color: red }</style></head>
<body>
<header><a href="/">Home</a> <a href="/shop">Shop</a> SITE HEADER</header>
<nav><ul><li><a href="/a">Nav one</a></li><li><a href="/b">Nav two</a></li></ul></nav>
<div role="navigation">ROLE NAV</div>
<div class="breadcrumbs"><a href="/">Docs</a> BREADCRUMB</div>
<main>
  <h1>Installing the pump</h1>
  <p>Read the <a href="/safety">safety notes</a> before you start.</p>
  <div hidden>HIDDEN TEXT</div>
  <h2>Wiring</h2>
  <ul>
    <li>Earth first<ul><li>green and yellow wire</li></ul></li>
    <li><p>Then live</p></li>
  </ul>
  <pre><code>def start(pump):
    pump.prime()

    return pump.run()
</code></pre>
  <table>
    <caption>Ratings</caption>
    <tr><th>Model</th><th colspan="2">Rating</th></tr>
    <tr><td>P-10</td><td>10 l/min</td><td>0.5 <b>kW</b></td></tr>
  </table>
  <aside>SIDEBAR AD</aside>
  <form>Subscribe <input name="mail"></form>
  <h2>Care</h2>
  <div>Loose text <em>with emphasis</em><p>and a paragraph</p>and a tail.</div>
</main>
<footer>FOOTER COPYRIGHT</footer>
</body></html>"""


def write(tmp_path: Path, text: str | bytes, name: str = "page.html") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def all_text(blocks: list[Block]) -> str:
    return "\n".join(b.text for b in blocks)


def test_main_content_without_boilerplate(tmp_path: Path) -> None:
    doc = html.read(write(tmp_path, SITE), "page.html")
    assert doc.title == "Pump guide"
    assert doc.metadata == {"format": "html"}
    text = all_text(doc.blocks)
    for gone in ("SCRIPT TEXT", "color", "SITE HEADER", "Nav one", "ROLE NAV", "BREADCRUMB",
                 "HIDDEN TEXT", "SIDEBAR AD", "Subscribe", "FOOTER COPYRIGHT"):
        assert gone not in text


def test_structure_in_reading_order(tmp_path: Path) -> None:
    blocks = html.read(write(tmp_path, SITE), "page.html").blocks
    code = "def start(pump):\n    pump.prime()\n\n    return pump.run()"
    assert blocks == [
        Block("heading", "Installing the pump", level=1),
        Block("paragraph", "Read the safety notes before you start."),
        Block("heading", "Wiring", level=2),
        Block("list_item", "Earth first", level=0),
        Block("list_item", "green and yellow wire", level=1),
        Block("list_item", "Then live", level=0),
        Block("code", code),
        Block("paragraph", "Ratings"),
        Block("table_row", "Model | Rating"),
        Block("table_row", "P-10 | 10 l/min | 0.5 kW"),
        Block("heading", "Care", level=2),
        Block("paragraph", "Loose text with emphasis"),
        Block("paragraph", "and a paragraph"),
        Block("paragraph", "and a tail."),
    ]


DOCBOOK = """<html><head><title>Chapter 2. First steps</title></head><body>
<div class="navheader"><table><tr><th colspan="3">Chapter 2. First steps</th></tr>
<tr><td><a href="start.html">Prev</a></td><td><a href="next.html">Next</a></td></tr></table></div>
<div class="chapter"><div class="titlepage"><h1 class="title">Chapter 2. First steps</h1></div>
<div class="toc"><p><b>Table of Contents</b></p><dl><dt><a href="#s1">2.1. Workflow</a></dt>
<dt><a href="#s2">2.2. Choose</a></dt></dl></div>
<p>Let's start by creating a package of your own, or adopting an existing one.</p>
<div class="section"><h2 class="title">2.1. Workflow</h2>
<p>The typical workflow of Debian package building has three steps.</p>
<div class="footnote"><p>[1] Footnote text in the chapter.</p></div></div>
<div><a href="/a">Unnamed menu one</a> | <a href="/b">Unnamed menu two</a> |
<a href="/c">Unnamed menu three</a></div></div>
<div class="navfooter"><a href="start.html">Prev</a> <a href="index.html">Home</a></div>
</body></html>"""


def test_generated_manual_without_main_element(tmp_path: Path) -> None:
    """No <main>: named navigation, a table of contents and an unnamed link menu are left out,
    the chapter's headings kept, a DocBook footnote is a footnote block."""
    blocks = html.read(write(tmp_path, DOCBOOK), "first.html").blocks
    text = all_text(blocks)
    assert [b.text for b in blocks if b.kind == "heading"] == [
        "Chapter 2. First steps", "2.1. Workflow"]
    for gone in ("Prev", "Next", "Home", "Table of Contents", "2.2. Choose", "Unnamed menu"):
        assert gone not in text
    assert blocks[-1] == Block("footnote", "[1] Footnote text in the chapter.")


def test_density_fallback_steps_into_the_content_frame(tmp_path: Path) -> None:
    prose = " ".join(["The filter must be cleaned every month to keep the flow."] * 8)
    page = (f"<html><body><div id='banner-x'>Welcome to ACME</div><div id='frame'>"
            f"<p>{prose}</p><p>{prose}</p></div><div>Small print.</div></body></html>")
    blocks = html.read(write(tmp_path, page), "p.html").blocks
    assert [b.text for b in blocks] == [prose, prose]


def test_several_articles_all_kept(tmp_path: Path) -> None:
    page = ("<html><body><div>Menu text</div><article><h2>One</h2><p>First.</p></article>"
            "<article><h2>Two</h2><p>Second.</p></article></body></html>")
    blocks = html.read(write(tmp_path, page), "p.html").blocks
    assert [b.text for b in blocks] == ["One", "First.", "Two", "Second."]


def test_layout_table_read_as_text(tmp_path: Path) -> None:
    page = ("<html><body><main><table><tr><td><h1>Title</h1><p>Body text.</p></td></tr>"
            "</table></main></body></html>")
    blocks = html.read(write(tmp_path, page), "p.html").blocks
    assert blocks == [Block("heading", "Title", level=1), Block("paragraph", "Body text.")]


@pytest.mark.parametrize(("data", "expected"), [
    ('<html><head><meta charset="windows-1251"></head><body><p>Привет</p></body></html>'
     .encode("cp1251"), "Привет"),
    ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
     "</head><body><p>Café – naïve</p></body></html>".encode("cp1252"), "Café – naïve"),
    ("\ufeff<html><body><p>Grüße</p></body></html>".encode("utf-16-le"), "Grüße"),
    ("\ufeff<html><body><p>Ωmega</p></body></html>".encode("utf-8"), "Ωmega"),
    ("<html><body><p>déjà vu</p></body></html>".encode("cp1252"), "déjà vu"),
])
def test_charset_from_bom_meta_or_guess(tmp_path: Path, data: bytes, expected: str) -> None:
    path = write(tmp_path, data)
    assert html.looks_like(path)
    assert html.read(path, "page.html").blocks == [Block("paragraph", expected)]


def test_title_falls_back_to_h1_then_file_name(tmp_path: Path) -> None:
    with_h1 = write(tmp_path, "<html><body><h2>Sub</h2><h1>Main title</h1></body></html>")
    assert html.read(with_h1, "a.html").title == "Main title"
    bare = write(tmp_path, "<html><body><p>Just text.</p></body></html>", "notes.html")
    assert html.read(bare, "notes.html").title == "notes"


def test_looks_like_and_errors(tmp_path: Path) -> None:
    assert not html.looks_like(write(tmp_path, "plain words, no markup", "a.txt"))
    assert not html.looks_like(write(tmp_path, b"\x89PNG\r\n\x1a\n\0\0<html>", "b.html"))
    empty = write(tmp_path, "<html><head><title>T</title></head><body><nav><a>x</a></nav>"
                  "</body></html>", "empty.html")
    with pytest.raises(CorpusError, match=r"empty\.html: no text"):
        html.read(empty, "empty.html")
    with pytest.raises(CorpusError, match=r"missing\.html: cannot read"):
        html.read(tmp_path / "missing.html", "missing.html")


# --- Debian's HTML manuals (installed by the test set-up; skipped with a reason otherwise) ---

MAINT_GUIDE = Path("/usr/share/doc/maint-guide/html/first.en.html")  # DocBook (maint-guide)
DEV_REFERENCE = Path("/usr/share/doc/developers-reference/docs/pkgs.html")  # Sphinx


def _manual(path: Path, package: str) -> Path:
    if not path.exists():
        pytest.skip(f"{path} not installed: apt-get install {package} (Debian's HTML manual)")
    return path


def test_real_docbook_manual() -> None:
    doc = html.read(_manual(MAINT_GUIDE, "maint-guide"), "first.en.html")
    headings = [b.text for b in doc.blocks if b.kind == "heading"]
    assert headings[0] == "Chapter 2. First steps"
    assert "2.1. Debian package building workflow" in headings
    words = all_text(doc.blocks).split()
    assert "Prev" not in words and "Next" not in words  # the navheader/navfooter
    assert sum(b.kind == "footnote" for b in doc.blocks) >= 10
    assert any(b.kind == "code" and "\n" in b.text for b in doc.blocks)


def test_real_sphinx_manual() -> None:
    doc = html.read(_manual(DEV_REFERENCE, "developers-reference"), "pkgs.html")
    headings = [b.text for b in doc.blocks if b.kind == "heading"]
    assert headings[:2] == ["5. Managing Packages", "5.1. New packages"]
    text = all_text(doc.blocks)
    for gone in ("Quick search", "Previous topic", "Next topic", "Table of Contents", "¶"):
        assert gone not in text


def test_code_line_numbers_left_out(tmp_path: Path) -> None:
    """Pygments' numbered code is a table of two <pre>s: the numbers are not code."""
    page = ('<html><body><main><table class="highlighttable"><tr>'
            '<td class="linenos"><div class="linenodiv"><pre>1\n2</pre></div></td>'
            '<td class="code"><pre>make\nmake install</pre></td></tr></table></main>'
            "</body></html>")
    assert html.read(write(tmp_path, page), "p.html").blocks == [
        Block("code", "make\nmake install")]


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"blank\.html: not an HTML document"):
        html.read(write(tmp_path, b"", "blank.html"), "blank.html")


def test_heading_permalinks_dropped_and_code_alternatives_one_per_line(tmp_path: Path) -> None:
    page = ('<html><body><main><h2>File system<span><a class="mark" href="#fs">#</a></span>'
            '</h2><h3>Use C# <a href="#csharp">¶</a></h3><h3><a href="#x">Linked title</a></h3>'
            '<pre><input type="checkbox"><code class="mjs">import fs;</code>'
            '<code class="cjs">const fs = require("fs");</code></pre></main></body></html>')
    assert html.read(write(tmp_path, page), "p.html").blocks == [
        Block("heading", "File system", level=2), Block("heading", "Use C#", level=3),
        Block("heading", "Linked title", level=3),
        Block("code", 'import fs;\nconst fs = require("fs");')]


def test_docbook_terminal_session_and_sidebar_kept(tmp_path: Path) -> None:
    """The Debian Administrator's Handbook (DocBook): a ``screen`` puts the prompt and output in
    <code> and what the user types in <strong><code>, which was dropped (every command of the
    book lost); a titled ``sidebar`` note is text, a site's navigation sidebar is not."""
    page = ('<html><body><div class="sidebar"><p>SITE SIDEBAR: opening hours</p></div>'
            '<div class="section"><h2>Certificates</h2><p>Use the Apache plugin:</p>'
            '<pre class="screen"><code class="computeroutput"># </code><strong class="userinput">'
            '<code>certbot --apache\n</code></strong><code class="computeroutput">Saving debug '
            'log\n</code></pre>'
            '<div class="sidebar"><div class="titlepage"><p class="title"><strong>TIP Renewal'
            '</strong></p></div><div class="para">A cron job renews them.</div></div>'
            '</div></body></html>')
    blocks = html.read(write(tmp_path, page), "p.html").blocks
    assert [(b.kind, b.text) for b in blocks] == [
        ("heading", "Certificates"), ("paragraph", "Use the Apache plugin:"),
        ("code", "# certbot --apache\nSaving debug log"),
        ("paragraph", "TIP Renewal"), ("paragraph", "A cron job renews them.")]


def test_a_definition_term_opens_its_definition(tmp_path: Path) -> None:
    """Debian Policy's build options: <dt>nocheck</dt><dd><p>This tag says…</p></dd>. A term
    on its own became the last line of one node and its definition the next node's first."""
    page = ("<html><body><main><h1>Options</h1><dl>"
            "<dt>nocheck</dt><dd><p>This tag says to not run any build-time test suite.</p>"
            "<p>It may be combined with others.</p></dd>"
            "<dt>noopt</dt><dt>nostrip</dt><dd>Keep the symbols and compile without "
            "optimisation.</dd>"
            "<dt>example</dt><dd><pre>DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage</pre></dd>"
            "</dl></main></body></html>")
    blocks = html.read(write(tmp_path, page), "page.html").blocks
    assert [(b.kind, b.text) for b in blocks] == [
        ("heading", "Options"),
        ("paragraph", "nocheck: This tag says to not run any build-time test suite."),
        ("paragraph", "It may be combined with others."),
        ("paragraph", "noopt, nostrip: Keep the symbols and compile without optimisation."),
        ("paragraph", "example"),
        ("code", "DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage"),
    ]
