"""Conversations belong to a key, not to its name, and `keys add` writes only files the server
reads (issue 28, items 5 and 6).

A real `excerpt serve` process: a key revoked and added again under the same name must not read
the old key's conversations (which quote nodes the new key may not see); names holding ``/`` must
not reach each other's conversations; a conversation name that is not a plain name is a 400
naming the field. The real `excerpt keys add` refuses what the keys file reader would refuse,
and never leaves a file the server cannot read."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from tests.aio import run_async
from tests.http import add_keys, call, excerpt_serve
from tests.stores import handbook_and_secret

from excerpt.cli.main import cli
from excerpt.edge.keys import KeyEntry, KeyRing
from excerpt.errors import InputError

SECRET = ("The Kestrel salary bands are kept by human resources: grade seven pays ninety "
          "thousand crowns a year.")
MARKER = "ninety thousand"
QUESTION = "What do the Kestrel salary bands pay for grade seven?"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The handbook (public) and one note only the tag ``hr`` may read, in collection demo."""
    return handbook_and_secret(tmp_path_factory.mktemp("identity"), "hr", "bands.txt", SECRET)


@dataclass
class Service:
    url: str
    home: Path
    keys: dict[str, str]

    def ask(self, key: str, conversation: str, question: str = QUESTION) -> tuple[int, Any]:
        return call(f"{self.url}/v1/ask", key, {"question": question, "collection": "demo",
                                                "mode": "bm25", "conversation": conversation})

    def memory(self, key: str, conversation: str, intent: str = "read",
               data: dict[str, Any] | None = None) -> tuple[int, Any]:
        path = quote(conversation, safe="").replace(".", "%2E")  # sent, not resolved as ..
        return call(f"{self.url}/v1/memory/{path}/query", key,
                    {"intent": intent, "data": data or {}})

    def cli(self, *args: str) -> Any:
        result = CliRunner().invoke(cli, ["--home", str(self.home), "keys", *args, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)


@pytest.fixture
def service(home: Path, free_port: Callable[[], int]) -> Iterator[Service]:
    """A real `excerpt serve` on ``home`` with a fresh keys file: ``hr`` reads the hr note,
    ``alice`` only public nodes."""
    (home / "keys.yaml").unlink(missing_ok=True)
    keys = add_keys(home, [("hr", "--acl-tag", "hr"), ("alice",)], revoke=())
    with excerpt_serve(["--home", str(home)], free_port()) as url:
        yield Service(url, home, keys)


@asynccontextmanager
async def over_mcp(url: str, key: str) -> Any:
    async with (create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
                Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client):
        yield client


def mcp_read(url: str, key: str, conversation: str) -> tuple[bool, str]:
    """MCP ``memory_read`` over HTTP: whether it is an error, and its whole result as text."""
    async def body() -> tuple[bool, str]:
        async with over_mcp(url, key) as client:
            result = await client.call_tool("memory_read", {"conversation": conversation})
            return bool(result.is_error), json.dumps(result.model_dump(mode="json"))

    return run_async(body)  # type: ignore[no-any-return]


def test_a_key_added_again_under_a_revoked_name_does_not_inherit_its_conversations(
        service: Service) -> None:
    status, first = service.ask(service.keys["hr"], "payroll")
    assert status == 200 and MARKER in first["answer"], first  # the hr key sees the note
    assert first["turn"] == 1
    service.cli("revoke", "hr")
    newcomer = service.cli("add", "hr")["key"]  # the same name, no tags
    assert service.ask(service.keys["hr"], "payroll")[0] == 401
    status, read = service.memory(newcomer, "payroll")
    assert status == 200 and read["utterances"] == [], read
    is_error, by_mcp = mcp_read(service.url, newcomer, "payroll")
    assert not is_error and MARKER not in by_mcp, by_mcp
    status, follow_up = service.ask(newcomer, "payroll", "And for grade eight?")
    assert status == 200 and follow_up["turn"] == 1, follow_up  # a conversation of its own
    assert MARKER not in json.dumps(follow_up)


def test_a_renamed_key_keeps_its_conversations(service: Service) -> None:
    """A conversation belongs to the key itself: a hand edit of its name does not lose it."""
    note = {"speaker": "user", "turn": 1, "text": "Remember the Osprey audit."}
    assert service.memory(service.keys["alice"], "audit", "add", note)[0] == 200
    keys_file = service.home / "keys.yaml"
    data = yaml.safe_load(keys_file.read_text("utf-8"))
    data["keys"][1]["name"] = "alice.smith"
    keys_file.write_text(yaml.safe_dump(data), "utf-8")
    status, read = service.memory(service.keys["alice"], "audit")
    assert status == 200 and [u["text"] for u in read["utterances"]] == [note["text"]]


def test_names_holding_a_slash_do_not_reach_each_others_conversations(
        service: Service) -> None:
    # a keys file from before names were checked may hold "hr/x": the server still reads it
    keys_file = service.home / "keys.yaml"
    other = service.cli("add", "hrx")["key"]
    keys_file.write_text(keys_file.read_text("utf-8").replace("name: hrx", "name: hr/x"), "utf-8")
    status, refused = service.ask(service.keys["hr"], "x/c")
    assert status == 400 and refused["kind"] == "input" and "conversation" in refused["error"]
    status, read = service.memory(other, "c")
    assert status == 200 and read["utterances"] == [], read  # hr's "x/c" is not hr/x's "c"
    note = {"speaker": "user", "turn": 1, "text": "hr/x's own note"}
    assert service.memory(other, "c", "add", note)[0] == 200
    status, read = service.memory(service.keys["hr"], "c")
    assert status == 200 and read["utterances"] == []


BAD_CONVERSATIONS = ["..", ".", "a/b", "a\\b", "a\x00b", "a\nb", "a\x7fb", "   ", "x" * 201]


def test_a_conversation_name_that_is_not_a_plain_name_is_a_400_naming_the_field(
        service: Service) -> None:
    alice = service.keys["alice"]
    for name in BAD_CONVERSATIONS:
        for status, answer in (service.ask(alice, name), service.memory(alice, name)):
            if status == 404 and "/" in name:  # %2F in the path: no route has two segments
                assert answer["kind"] == "not_found", answer
                continue
            assert status == 400, (name, status, answer)
            assert answer["kind"] == "input" and "conversation" in answer["error"], answer
            assert str(service.home) not in answer["error"]
        is_error, text = mcp_read(service.url, alice, name)
        assert is_error, (name, text)
        assert "conversation" in text or "NUL" in text, (name, text)  # NUL: refused earlier


def keys_add(keys_file: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["keys", "add", *args, "--keys", str(keys_file)])


REFUSED_ADDS = [
    (("",), "NAME"), (("   ",), "NAME"), (("a/b",), "NAME"), (("a\\b",), "NAME"),
    (("..",), "NAME"), (("a\x07b",), "NAME"), (("a\nb",), "NAME"), ((" bob",), "NAME"),
    (("bob", "--acl-tag", ""), "--acl-tag"), (("bob", "--acl-tag", "  "), "--acl-tag"),
    (("bob", "--acl-tag", "hr\x00"), "--acl-tag"), (("bob", "--clearance", ""), "--clearance"),
    (("bob", "--clearance", "\t"), "--clearance"),
    (("bob", "--acl-tag", "hr", "--clearance", "a\nb"), "--clearance"),
]


@pytest.mark.parametrize(("args", "option"), REFUSED_ADDS)
def test_keys_add_refuses_what_the_reader_would_refuse_and_leaves_the_file_as_it_was(
        tmp_path: Path, args: tuple[str, ...], option: str) -> None:
    keys_file = tmp_path / "keys.yaml"
    assert keys_add(keys_file, "alice").exit_code == 0
    before = keys_file.read_bytes()
    result = keys_add(keys_file, *args)
    assert result.exit_code == 1, (args, result.output)
    assert result.stdout == ""  # no key printed
    assert len(result.stderr.strip().splitlines()) == 1 and option in result.stderr, \
        result.stderr
    assert keys_file.read_bytes() == before
    assert [e.name for e in KeyRing.load(keys_file).entries] == ["alice"]
    assert keys_add(keys_file, "bob").exit_code == 0  # later adds still work


def test_keys_add_prints_the_keys_identity(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.yaml"
    result = CliRunner().invoke(cli, ["keys", "add", "alice", "--json", "--keys",
                                      str(keys_file)])
    added = json.loads(result.output)
    entry = KeyRing.load(keys_file).entries[0]
    assert added["id"] == entry.identity and len(entry.identity) == 16
    assert entry.sha256.startswith(entry.identity)


def test_a_keys_file_the_reader_refuses_is_never_written(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.yaml"
    assert keys_add(keys_file, "alice").exit_code == 0
    before = keys_file.read_bytes()
    for bad in (KeyEntry("x", ""), KeyEntry("x", "ab", role="wizard"),
                KeyEntry("x", "ab", acl_tags=("",))):
        with pytest.raises(InputError), KeyRing.editing(keys_file) as ring:
            ring.entries.append(bad)
        assert keys_file.read_bytes() == before, bad
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keys.yaml", "keys.yaml.lock"]
