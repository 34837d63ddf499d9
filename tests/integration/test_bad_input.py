"""The bad-input corpus of the standing attack suite, through `excerpt ingest`.

Each hostile or broken input, in each format it could claim to be: exit 1 with one line that
names the file (and `{"error", "kind"}` under --json), never a traceback, and nothing
published; or a clean import where the input is legitimately readable.  Zip bombs run in a
subprocess whose peak memory is measured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.bombs import BUNDLE_META as META
from tests.bombs import MIB, Member, write_bzip2_bundle, write_zip

from excerpt.cli.main import cli
from excerpt.engine import Engine

HUGE_LINE = ("lorem ipsum dolor sit amet " * 160_000).encode()  # 4.3 MB, no line break
SECTION = "Contents/section0.xml"


def _file(name: str, data: bytes) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        (tmp / name).write_bytes(data)
        return tmp / name
    return make


def _zip(name: str, *members: Member) -> Callable[[Path], Path]:
    return lambda tmp: write_zip(tmp / name, list(members))


def _dangling(tmp: Path) -> Path:
    os.symlink(tmp / "nowhere.txt", tmp / "dangling.txt")
    return tmp / "dangling.txt"


def _loop(tmp: Path) -> Path:
    os.symlink(tmp / "loop_b.txt", tmp / "loop_a.txt")
    os.symlink(tmp / "loop_a.txt", tmp / "loop_b.txt")
    return tmp / "loop_a.txt"


BINARY = bytes(range(256)) * 64
BAD_UTF8 = b"caf\xe9 au lait, cr\xe8me br\xfbl\xe9e\n"
UTF16 = "A note written by a Windows tool.\n".encode("utf-16")
NUL = b"half a line\x00and the rest\n"

# (id, make the input, --format, what the refusal says; None: a clean import)
CORPUS: list[tuple[str, Callable[[Path], Path], str, str | None]] = [
    ("text-binary", _file("blob.txt", BINARY), "auto", "binary file"),
    ("text-bad-utf8", _file("latin1.txt", BAD_UTF8), "auto", "not valid UTF-8"),
    ("text-utf16", _file("utf16.txt", UTF16), "auto", "UTF-16 text"),
    ("text-nul", _file("nul.md", NUL), "auto", "NUL byte"),
    ("text-empty", _file("empty.txt", b""), "auto", "empty file"),
    ("text-huge-line", _file("huge.txt", HUGE_LINE), "auto", None),
    ("text-dangling-link", _dangling, "text", "no such file or directory"),
    ("text-link-loop", _loop, "text", "no such file or directory"),
    ("gutenberg-binary", _file("book.txt", BINARY), "gutenberg", "book.txt"),
    ("regulations-binary", _file("regs.txt", BINARY), "regulations", "binary file"),
    ("code-binary", _file("blob.cs", BINARY), "auto", "binary file"),
    ("code-bad-utf8", _file("proc.sql", BAD_UTF8), "auto", "not valid UTF-8"),
    ("code-utf16", _file("proc.sql", UTF16), "code", "UTF-16 text"),
    ("beir-binary", _file("corpus.jsonl", BINARY), "auto", "line 1: malformed JSON"),
    ("beir-bad-json", _file("corpus.jsonl", b'{"_id": "a", "text": \n'), "auto", "malformed JSON"),
    ("beir-nul", _file("corpus.jsonl", b'{"_id": "a", "text": "x\\u0000y"}\n'), "auto", "NUL"),
    ("beir-empty", _file("corpus.jsonl", b""), "auto", "holds no records"),
    ("beir-lone-surrogate", _file("corpus.jsonl", b'{"_id": "a", "text": "half \\ud800"}\n'),
     "auto", "lone surrogate"),
    ("beir-surrogate-metadata", _file("corpus.jsonl", b'{"_id": "a", "text": "x", "metadata": '
                                      b'{"k": "\\udc80"}}\n'), "auto", "lone surrogate"),
    ("beir-utf16", _file("corpus.jsonl", '{"_id": "a", "text": "x"}\n'.encode("utf-16")),
     "auto", "not valid UTF-8"),
    ("beir-deep", _file("corpus.jsonl", b'{"_id": "a", "text": "x", "m": ' + b"[" * 100_000
                        + b"]" * 100_000 + b"}\n"), "auto", "unreadable JSON"),
    ("beir-huge-line", _file("corpus.jsonl", b'{"_id": "a", "text": "' + HUGE_LINE + b'"}\n'),
     "auto", None),
    ("bundle-not-a-zip", _file("bundle.zip", BINARY), "auto", "not a readable zip archive"),
    ("bundle-truncated", _file("bundle.zip", b"PK\x03\x04" + BINARY[:100]), "auto",
     "not a readable zip archive"),
    ("bundle-zip-slip", _zip("slip.zip", META, Member("../../etc/cron.d/x", b"{}")), "auto",
     "leaves the archive"),
    ("bundle-absolute", _zip("abs.zip", META, Member("/etc/passwd", b"x")), "auto",
     "leaves the archive"),
    ("bundle-bzip2", lambda tmp: write_bzip2_bundle(tmp / "bz.zip"), "auto",
     "compression method 12"),
    ("bundle-ratio-bomb", _zip("ratio.zip", META, Member("R/regular_code_bundle/chunks.json",
                                                         zeros_mib=32)), "auto", "over 200:1"),
    ("bundle-bad-acl", _zip("acl.zip", META, Member(
        "R/regular_code_bundle/chunks.json",
        json.dumps([{"Id": "C1", "File": "a.cs", "Text": "x", "acl_tags_any": [""]}]).encode())),
     "auto", "empty tag"),
    ("hwpx-not-a-zip", _file("book.hwpx", BINARY), "auto", "not an HWPX file"),
    ("hwpx-no-sections", _zip("book.hwpx", Member("mimetype", b"x")), "auto",
     "no Contents/section"),
    ("hwpx-broken-xml", _zip("book.hwpx", Member(SECTION, b"<hs:sec><hp:p>")), "auto",
     "malformed XML"),
]


def _ingest(home: Path, path: Path, fmt: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--home", str(home), "ingest", str(path), "--format", fmt,
                                      "--embedder", "none", "--no-progress", "--json"])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(("make", "fmt", "refusal"), [c[1:] for c in CORPUS],
                         ids=[c[0] for c in CORPUS])
def test_bad_input_is_refused_in_one_line_or_read_cleanly(
        tmp_path: Path, make: Callable[[Path], Path], fmt: str, refusal: str | None) -> None:
    (tmp_path / "in").mkdir()
    path = make(tmp_path / "in")
    code, stdout, stderr = _ingest(tmp_path / "home", path, fmt)
    assert "Traceback" not in stdout + stderr
    if refusal is None:
        assert code == 0, stderr
        assert json.loads(stdout)["status"] == "completed"
        return
    assert code == 1, stdout
    assert json.loads(stdout)["kind"] in ("input", "corpus")
    [line] = stderr.strip().splitlines()
    assert line.startswith("excerpt: ") and path.name in line and refusal in line, line
    assert Engine(tmp_path / "home").store.snapshots() == []


def test_broken_tsql_batches_are_counted_in_the_summary(tmp_path: Path) -> None:
    """The issue's file: two misspelled batches, each reported with its line, and counted."""
    sql = tmp_path / "broken.sql"
    sql.write_text("CREATE TABLE dbo.Good (Id INT PRIMARY KEY);\nGO\nCREATE TABL dbo.Bad (Id INT);"
                   "\nGO\nCREATE PROCEDUR dbo.BadProc AS SELECT 1;\nGO\n", "utf-8")
    code, stdout, _ = _ingest(tmp_path / "home", sql, "code")
    result = json.loads(stdout)
    assert code == 0 and result["nodes"] == 1 and result["skipped"] == 2
    assert [(e["path"], e["line"]) for e in result["errors"]] == [(str(sql), 3), (str(sql), 5)]


# The peak of this process's own memory: VmHWM, not getrusage's ru_maxrss, which Linux carries
# over exec from the forking parent (a large pytest process would be measured instead).
_MEASURED = """
import sys
from excerpt.cli.main import cli
try:
    cli.main(sys.argv[1:])
finally:
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    print("maxrss_kb", peak, file=sys.stderr)
"""


@pytest.mark.parametrize(("name", "members"), [
    ("bundle.zip", [META, Member("R/regular_code_bundle/chunks.json", zeros_mib=1536)]),
    ("book.hwpx", [Member(SECTION, zeros_mib=1536)]),
    # the header says 1 MB; the stream holds 1.5 GB
    ("liar.hwpx", [Member(SECTION, zeros_mib=1536, declared_size=MIB)]),
], ids=["bundle", "hwpx", "lying-header"])
def test_zip_bombs_are_refused_in_little_memory(tmp_path: Path, name: str,
                                                members: list[Member]) -> None:
    """The issue's bomb: a 1.6 MB file holding a 1.5 GB member of zeros."""
    bomb = write_zip(tmp_path / name, members)
    assert bomb.stat().st_size < 2 * MIB
    run = subprocess.run(
        [sys.executable, "-c", _MEASURED, "--home", str(tmp_path / "home"), "ingest", str(bomb),
         "--embedder", "none", "--no-progress"],
        capture_output=True, text=True, timeout=120)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert lines[0].startswith(f"excerpt: {bomb}: {SECTION if 'hwpx' in name else 'R/'}")
    assert any(why in lines[0] for why in ("refused: expands", "damaged", "malformed")), lines[0]
    peak_mb = int(lines[-1].split()[1]) / 1024
    assert peak_mb < 400, f"peak memory {peak_mb:.0f} MB while refusing a zip bomb"


def test_the_plain_summary_says_how_many_were_skipped(tmp_path: Path) -> None:
    sql = tmp_path / "broken.sql"
    sql.write_text("CREATE TABLE dbo.Good (Id INT);\nGO\nCREATE TABL dbo.Bad (Id INT);\nGO\n",
                   "utf-8")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "ingest", str(sql),
                                      "--format", "code", "--embedder", "none", "--no-progress"])
    assert result.exit_code == 0
    assert "1 nodes" in result.stdout and "1 skipped (below)" in result.stdout
    assert f"skipped {sql}" in result.stderr
