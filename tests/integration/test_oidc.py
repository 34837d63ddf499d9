"""Sign-in with an identity provider (issue 33 item 2), against a real `excerpt serve` whose
settings name an issuer whose JWKS a thread serves on loopback: the attack suite (each refused
with a bad key's 401 body, the server's log saying why), the JWKS rotated and taken down (fail
closed: 503 when no key of the kid is cached), made-up kids that cannot make the server hammer
the issuer, and a token's rights equal to a key's for the same claims through REST search and
ask, MCP (the official client) and chat (the official `openai` client), and in the web UI."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import yaml
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from openai import OpenAI
from tests.aio import run_async
from tests.http import add_keys, call, wait_started
from tests.idp import AUDIENCE, ISSUER, Issuer, SigningKey, claims, forged, serving, tampered

from excerpt.cli.main import cli
from excerpt.engine import Engine

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"
MINUTES = ("# Board minutes\n\nThe board approved the Zephyrine merger of the snapshot stores; "
           "its price stays secret.\n")
HIDDEN = "Zephyrine merger"
RSA, EC = SigningKey.rsa("rsa-1"), SigningKey.ec("ec-1")
RULES = {"oidc_tags": ["/board=board", "/finance=finance"], "oidc_clearances": ["secret"],
         "oidc_role_claim": "realm_access.roles",
         "oidc_roles": ["excerpt-ingester=ingester", "excerpt-admin=admin"]}
BAD_KEY = "exk_not-a-key-of-this-server"


@contextmanager
def serve(home: Path, port: int, settings: dict[str, Any]) -> Iterator[tuple[str, Path]]:
    """A real `excerpt --settings FILE serve`; its URL and its log file (read by the tests:
    the log says why a token was refused, the caller never)."""
    path, log = home / "oidc.yaml", home / "serve.log"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    with log.open("wb") as out:
        server = subprocess.Popen([sys.executable, "-m", "excerpt", "--home", str(home),
                                   "--settings", str(path), "serve", "--port", str(port)],
                                  stdout=subprocess.DEVNULL, stderr=out)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_started(url, server)
            yield url, log
        finally:
            server.terminate()
            server.wait(timeout=10)
    assert "Traceback" not in log.read_text("utf-8"), log.read_text("utf-8")[-3000:]


def oidc_settings(jwks_url: str, **more: Any) -> dict[str, Any]:
    return {"oidc_issuer": ISSUER, "oidc_audience": AUDIENCE, "oidc_jwks_url": jwks_url,
            **RULES, **more}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory,
           free_port: Callable[[], int]) -> Iterator[dict[str, Any]]:
    """The handbook and a board-only page in "demo"; keys for alice (public) and bob (board);
    an issuer with an RSA and an EC key; the JWKS fetched again at most every 2 s."""
    folder = tmp_path_factory.mktemp("oidc")
    home, board = folder / "home", folder / "board"
    board.mkdir()
    (board / "minutes.md").write_text(MINUTES, encoding="utf-8")
    engine = Engine(home)
    engine.ingest(HANDBOOK, collection="demo", embedder="none")
    engine.ingest(board, collection="demo", acl_tags=["board"], embedder="none")
    engine.close()
    keys = add_keys(home, [("alice",), ("bob", "--acl-tag", "board")], revoke=())
    with serving(Issuer([RSA, EC])) as issuer, serve(
            home, free_port(), oidc_settings(issuer.url, oidc_jwks_min_refresh_s=2)) as (url, log):
        yield {"url": url, "log": log, "keys": keys, "issuer": issuer}


def search(served: dict[str, Any], credential: str, q: str = HIDDEN) -> tuple[int, Any]:
    query = urlencode({"q": q, "collection": "demo", "mode": "bm25", "k": 5})
    return call(f"{served['url']}/v1/search?{query}", credential)


def hidden_seen(body: dict[str, Any]) -> bool:
    return any("Zephyrine" in json.dumps(hit) for hit in body["hits"])


def without(payload: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k not in {"timings_ms", "reader", *names}}


def test_a_token_reads_what_its_groups_map_to(served: dict[str, Any]) -> None:
    status, board = search(served, RSA.sign(claims(groups=["/board"])))
    assert status == 200 and hidden_seen(board), board
    status, plain = search(served, EC.sign(claims(groups=["/hr", "board"])))  # no rule: nothing
    assert status == 200 and not hidden_seen(plain), plain
    status, who = call(f"{served['url']}/v1/whoami", RSA.sign(claims(
        realm_access={"roles": ["excerpt-ingester", "superuser"]})))
    assert (status, who) == (200, {"role": "ingester", "may_ingest": True})
    status, who = call(f"{served['url']}/v1/whoami", RSA.sign(claims(
        realm_access={"roles": ["admin"]})))  # a value no rule names: a reader
    assert (status, who) == (200, {"role": "reader", "may_ingest": False})
    status, _ = search(served, served["keys"]["alice"])  # API keys work as before
    assert status == 200


def test_the_attack_suite_is_refused_as_a_bad_key(served: dict[str, Any]) -> None:
    status, refusal = search(served, BAD_KEY)
    assert status == 401 and refusal["kind"] == "unauthorized"
    chat_refusal = call(f"{served['url']}/v1/models", BAD_KEY)
    assert chat_refusal[0] == 401
    good = RSA.sign(claims(groups=["/board"]))
    attacks = {
        "algorithm 'none' is not allowed": forged({"alg": "none", "kid": "rsa-1"},
                                                  claims(groups=["/board"]), None),
        "algorithm 'HS256' is not allowed": forged({"alg": "HS256", "kid": "rsa-1"},
                                                   claims(groups=["/board"]), RSA.public_pem()),
        "ExpiredSignatureError": RSA.sign(claims(exp=int(time.time()) - 120)),
        "ImmatureSignatureError": RSA.sign(claims(nbf=int(time.time()) + 3600)),
        "InvalidAudienceError": RSA.sign(claims(aud="another-app")),
        "InvalidIssuerError": EC.sign(claims(iss="https://idp.example.test/realms/other")),
        "unknown kid 'rsa-9'": RSA.sign(claims(), kid="rsa-9"),
        "InvalidSignatureError": tampered(RSA.sign(claims()), groups=["/board"]),
        "larger than 8192 bytes": RSA.sign(claims(groups=["/board"] * 2000)),
        "is a EC key": SigningKey("ec-1", "RS256", RSA.private).sign(claims()),
    }
    for reason, token in attacks.items():
        assert search(served, token) == (401, refusal), reason
        mcp = call(f"{served['url']}/mcp", token, {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                   headers={"Accept": "application/json, text/event-stream"})
        assert mcp == (401, refusal), reason
        assert call(f"{served['url']}/v1/models", token) == chat_refusal, reason
    assert search(served, good)[0] == 200
    log = served["log"].read_text("utf-8")
    for reason in attacks:
        assert f"bearer token refused: {reason}" in log or reason in log, reason
    assert good not in log  # no token is logged


def test_made_up_kids_cannot_make_the_server_hammer_the_issuer(served: dict[str, Any]) -> None:
    issuer: Issuer = served["issuer"]
    time.sleep(2.1)  # past the refresh interval: one fetch may be made
    before = issuer.fetches
    for n in range(20):
        assert search(served, RSA.sign(claims(), kid=f"made-up-{n}"))[0] == 401
    assert issuer.fetches - before <= 1
    assert search(served, EC.sign(claims()))[0] == 200  # the cached keys still work
    issuer.up = False
    try:  # the issuer down: API keys and cached kids work, a new kid fails closed
        time.sleep(2.1)
        assert search(served, served["keys"]["alice"])[0] == 200
        assert search(served, RSA.sign(claims()))[0] == 200
        status, body = search(served, RSA.sign(claims(), kid="rsa-new"))
        assert status == 503 and body["kind"] == "unavailable", body
    finally:
        issuer.up = True


def by_mcp(url: str, credential: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def body() -> list[Any]:
        headers = {"Authorization": f"Bearer {credential}"}
        async with (create_mcp_http_client(headers=headers) as http,
                    Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client):
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    results: list[Any] = run_async(body)
    return results


def through_every_door(url: str, credential: str) -> dict[str, Any]:
    """What ``credential`` gets for one search and one ask over REST, MCP and chat."""
    question = "What did the board approve about the Zephyrine merger?"
    query = urlencode({"q": HIDDEN, "collection": "demo", "mode": "bm25", "k": 5})
    search_status, rest_search = call(f"{url}/v1/search?{query}", credential)
    ask_status, rest_ask = call(f"{url}/v1/ask", credential,
                                {"question": question, "collection": "demo", "mode": "bm25"})
    assert (search_status, ask_status) == (200, 200), (rest_search, rest_ask)
    mcp_search, mcp_ask = by_mcp(url, credential, [
        ("search", {"query": HIDDEN, "collection": "demo", "mode": "bm25", "k": 5}),
        ("ask", {"question": question, "collection": "demo", "mode": "bm25"})])
    assert not mcp_search.is_error and not mcp_ask.is_error
    chat = OpenAI(base_url=f"{url}/v1", api_key=credential, max_retries=0)
    said = chat.chat.completions.create(
        model="excerpt:demo", messages=[{"role": "user", "content": question}],
        extra_body={"excerpt": {"mode": "bm25"}}).model_dump()["choices"][0]["message"]
    return {"search": without(rest_search), "ask": without(rest_ask),
            "mcp_search": without(mcp_search.structured_content),
            "mcp_ask": without(mcp_ask.structured_content),
            "chat": {"content": said["content"], "citations": said["excerpt"]["citations"]},
            "models": sorted(m.id for m in chat.models.list().data)}


def test_a_tokens_rights_equal_a_keys_for_the_same_claims(served: dict[str, Any]) -> None:
    """bob's key (--acl-tag board) and a token whose groups map to board get the same JSON
    through every door; alice's key and a token with no mapped group get the same too."""
    url = served["url"]
    board_key = through_every_door(url, served["keys"]["bob"])
    board_token = through_every_door(url, RSA.sign(claims(groups=["/board"])))
    assert board_token == board_key
    assert hidden_seen(board_token["search"]) and "Zephyrine" in board_token["chat"]["content"]
    public_key = through_every_door(url, served["keys"]["alice"])
    public_token = through_every_door(url, EC.sign(claims("u-2", groups=["/hr"])))
    assert public_token == public_key
    assert not hidden_seen(public_token["search"]) and public_token != board_token


def test_a_token_callers_conversations_are_its_subjects(served: dict[str, Any]) -> None:
    """Two tokens of one subject share conversations; another subject's never reaches them."""
    def turn(token: str) -> Any:
        status, body = call(f"{served['url']}/v1/ask", token, {
            "question": "How are snapshots published?", "collection": "demo", "mode": "bm25",
            "conversation": "mine"})
        assert status == 200, body
        return body["turn"]

    assert turn(RSA.sign(claims("carol", jti="a"))) == 1
    assert turn(EC.sign(claims("carol", jti="b"))) == 2  # another token, the same subject
    assert turn(RSA.sign(claims("dave"))) == 1


def test_rotation_and_an_issuer_down_fail_closed(tmp_path: Path,
                                                 free_port: Callable[[], int]) -> None:
    """A serve with tokens alone (no keys file). Nothing cached and the issuer down: 503; up
    again: accepted; the keys rotated: the new kid accepted after a refresh, the old one
    refused; down again: a cached kid still accepted, an unknown one 503."""
    home = tmp_path / "home"
    home.mkdir()
    old, new = SigningKey.rsa("old"), SigningKey.ec("new")
    issuer = Issuer([old], up=False)
    with serving(issuer), serve(home, free_port(), oidc_settings(
            issuer.url, oidc_jwks_min_refresh_s=1)) as (url, log):
        def whoami(token: str) -> tuple[int, Any]:
            return call(f"{url}/v1/whoami", token)

        status, body = whoami(old.sign(claims()))
        assert status == 503 and body["kind"] == "unavailable"
        assert "identity provider" in body["error"] and "API keys still work" in body["error"]
        chat = OpenAI(base_url=f"{url}/v1", api_key=old.sign(claims()), max_retries=0)
        with pytest.raises(Exception, match="503"):
            chat.models.list()
        issuer.up = True
        time.sleep(1.1)
        assert whoami(old.sign(claims()))[0] == 200
        issuer.keys = [new]
        time.sleep(1.1)
        assert whoami(new.sign(claims()))[0] == 200  # an unknown kid: fetched again
        assert whoami(old.sign(claims()))[0] == 401  # gone from the JWKS
        issuer.up = False
        time.sleep(1.1)
        assert whoami(new.sign(claims()))[0] == 200  # cached: still accepted
        status, body = whoami(SigningKey.rsa("newer").sign(claims()))
        assert status == 503 and body["kind"] == "unavailable"
        assert whoami(BAD_KEY)[0] == 503  # no keys file: no key is valid
        assert "cannot fetch the identity provider's JWKS" in log.read_text("utf-8")


def test_settings_it_cannot_use_stop_serve_at_start(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(oidc_settings(
        "https://idp.example.test/certs", oidc_algorithms=["RS256", "HS256"])), encoding="utf-8")
    ran = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "--settings",
                                   str(tmp_path / "bad.yaml"), "serve", "--port", "0"])
    assert ran.exit_code == 1 and "'HS256' is not allowed" in ran.output, ran.output


def test_the_web_ui_takes_a_token_where_a_key_goes(page: Any, served: dict[str, Any]) -> None:
    """A token typed in the web UI's key field: its calls get what bob's key gets, and the
    board's page is on show (headless Chromium; skipped where it is not installed)."""
    page.goto(served["url"] + "/")
    page.fill("#key", RSA.sign(claims("erin", groups=["/board"])))
    page.wait_for_selector("#collection[aria-busy=false]", state="attached")
    page.select_option("#collection", "demo")
    page.select_option("#mode", "bm25")
    page.fill("#k", "5")
    page.fill("#query", HIDDEN)
    with page.expect_response(lambda r: "/v1/search?" in r.url) as sent:
        page.click("#search-button")
    assert sent.value.status == 200
    page.wait_for_function("!document.getElementById('status').textContent.startsWith('Search')")
    assert without(sent.value.json()) == without(search(served, served["keys"]["bob"])[1])
    assert "Zephyrine" in page.locator("#hit-list").inner_text()
