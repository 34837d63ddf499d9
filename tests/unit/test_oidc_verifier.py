"""The token verifier alone (edge/oidc.py): a JWKS file (nothing fetched), the checks in order
with the reason each refusal logs, settings it refuses to start with, and claims mapped to
rights, narrowing only."""

from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import pytest
from tests.idp import AUDIENCE, ISSUER, SigningKey, claims, forged, tampered

from excerpt.edge.keys import Caller
from excerpt.edge.oidc import TokenVerifier, verifier
from excerpt.errors import InputError
from excerpt.settings import Settings, load_settings
from excerpt.types import Principal

RSA, EC = SigningKey.rsa("rsa-1"), SigningKey.ec("ec-1")
RULES = {"oidc_tags": ("/board=board", "finance"), "oidc_clearances": ("secret",),
         "oidc_role_claim": "realm_access.roles",
         "oidc_roles": ("excerpt-ingest=ingester", "excerpt-admin=admin")}


def settings_for(jwks: Path, **more: Any) -> Settings:
    base = {"oidc_issuer": ISSUER, "oidc_audience": AUDIENCE, "oidc_jwks_file": str(jwks)}
    return Settings().with_(**{**base, **RULES, **more})


@pytest.fixture
def jwks(tmp_path: Path) -> Path:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [RSA.jwk(), EC.jwk()]}), encoding="utf-8")
    return path


@pytest.fixture
def check(jwks: Path) -> TokenVerifier:
    found = verifier(settings_for(jwks))
    assert found is not None
    return found


def refused(check: TokenVerifier, token: str, caplog: pytest.LogCaptureFixture,
            reason: str) -> None:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="excerpt.edge.oidc"):
        assert check.caller(token) is None
    assert reason in caplog.text, caplog.text


def test_rsa_and_ec_tokens_are_callers_with_mapped_rights(check: TokenVerifier) -> None:
    for key in (RSA, EC):
        caller = check.caller(key.sign(claims(groups=["/board", "hr"], clearance="secret",
                                              realm_access={"roles": ["excerpt-ingest"]})))
        assert isinstance(caller, Caller) and caller.kind == "oidc"
        assert caller.principal.acl_tags == {"board"}  # hr is in no rule: nothing
        assert caller.principal.clearances == {"secret"}
        assert caller.role == "ingester" and caller.rights().may_ingest
        assert caller.rights().conversations == f"oidc:{caller.identity}/"


def test_the_identity_is_the_issuer_and_subject_never_the_token(check: TokenVerifier) -> None:
    first = check.caller(RSA.sign(claims("alice", jti="1")))
    again = check.caller(EC.sign(claims("alice", jti="2")))
    other = check.caller(RSA.sign(claims("bob")))
    assert first and again and other
    assert first.identity == again.identity != other.identity
    assert len(first.identity) == 16


def test_roles_narrow_only(check: TokenVerifier) -> None:
    def role(values: Any) -> str:
        caller = check.caller(RSA.sign(claims(realm_access={"roles": values})))
        assert caller is not None
        return caller.role

    assert role(["excerpt-admin", "excerpt-ingest"]) == "admin"  # the highest mapped
    assert role(["admin", "superuser"]) == "reader"  # values no rule names: a reader
    assert role("excerpt-ingest") == "ingester"  # a string is one value
    assert role({"nested": "excerpt-admin"}) == "reader"  # neither string nor list: nothing
    caller = check.caller(RSA.sign(claims(groups="finance", clearance=["top", 3])))
    assert caller is not None and caller.principal.acl_tags == {"finance"}
    assert not caller.principal.clearances


def test_every_check_refuses_and_logs_why(check: TokenVerifier,
                                          caplog: pytest.LogCaptureFixture) -> None:
    good = RSA.sign(claims())
    assert check.caller(good) is not None
    refused(check, forged({"alg": "none", "kid": "rsa-1"}, claims(), None), caplog,
            "algorithm 'none' is not allowed")
    refused(check, forged({"alg": "HS256", "kid": "rsa-1", "typ": "JWT"}, claims(),
                          RSA.public_pem()), caplog, "algorithm 'HS256' is not allowed")
    refused(check, RSA.sign(claims(exp=1_000_000)), caplog, "ExpiredSignatureError")
    refused(check, RSA.sign(claims(nbf=2_000_000_000)), caplog, "ImmatureSignatureError")
    refused(check, RSA.sign(claims(aud="another-app")), caplog, "InvalidAudienceError")
    refused(check, RSA.sign(claims(iss="https://evil.test")), caplog, "InvalidIssuerError")
    refused(check, RSA.sign(claims(), kid="nope"), caplog, "unknown kid 'nope'")
    refused(check, tampered(good, groups=["/board"]), caplog, "InvalidSignatureError")
    refused(check, RSA.sign(claims(pad="x" * 9000)), caplog, "larger than 8192 bytes")
    refused(check, "not.a.token", caplog, "malformed")
    no_sub = claims()
    del no_sub["sub"]
    refused(check, RSA.sign(no_sub), caplog, "MissingRequiredClaimError")


def test_the_key_type_must_be_the_algorithms(check: TokenVerifier,
                                             caplog: pytest.LogCaptureFixture) -> None:
    """A token naming the EC key's kid with RS256 (or the RSA key's with ES256) is refused
    before any signature is checked: a key verifies only its own algorithm."""
    mixed = SigningKey("ec-1", "RS256", RSA.private)
    refused(check, mixed.sign(claims()), caplog, "is a EC key")
    mixed = SigningKey("rsa-1", "ES256", EC.private)
    refused(check, mixed.sign(claims()), caplog, "is a RSA key")


def test_a_jwks_file_is_read_again_when_it_changes(jwks: Path, check: TokenVerifier) -> None:
    new = SigningKey.rsa("rsa-2")
    assert check.caller(new.sign(claims())) is None
    jwks.write_text(json.dumps({"keys": [new.jwk()]}), encoding="utf-8")
    assert check.caller(new.sign(claims())) is not None
    assert check.caller(RSA.sign(claims())) is None  # gone from the file: refused
    assert check.jwks.fetches == 0  # a file is never fetched


def test_settings_that_cannot_be_used_stop_serve(jwks: Path) -> None:
    assert verifier(Settings()) is None  # no issuer: keys only
    for changes, said in (({"oidc_audience": ""}, "oidc_audience is required"),
                          ({"oidc_algorithms": ("RS256", "HS256")}, "'HS256' is not allowed"),
                          ({"oidc_algorithms": ("none",)}, "'none' is not allowed"),
                          ({"oidc_algorithms": ()}, "is not allowed"),
                          ({"oidc_jwks_url": "https://idp.test/certs"}, "exactly one"),
                          ({"oidc_roles": ("boss=owner",)}, "'owner' is not one of"),
                          ({"oidc_tags": ("=board",)}, "is not VALUE")):
        with pytest.raises(InputError, match=said):
            verifier(settings_for(jwks, **changes))
    with pytest.raises(InputError, match="https://"):
        verifier(settings_for(jwks, oidc_jwks_file="", oidc_jwks_url="file:///etc/passwd"))


def test_the_worked_example_of_the_docs_maps_as_it_says(jwks: Path, tmp_path: Path) -> None:
    """docs/cli.md's Keycloak-like settings and claims give a reader with the tag board and
    the clearance secret, as the page says."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text("utf-8")
    section = docs.split("### Sign-in with an identity provider\n", 1)[1].split("\n## ", 1)[0]
    example = re.search(r"```yaml\n(.*?)```", section, re.S)
    said = re.search(r"```json\n(.*?)```", section, re.S)
    assert example and said
    settings_file = tmp_path / "oidc.yaml"
    settings_file.write_text(example.group(1).replace(
        "oidc_jwks_url: https://sso.example.com/realms/excerpt/protocol/openid-connect/certs",
        f"oidc_jwks_file: {jwks}"), encoding="utf-8")
    check = verifier(load_settings(settings_file))
    body = json.loads(said.group(1).replace("…", ""))
    assert check is not None
    caller = check.caller(RSA.sign({**body, "exp": int(time.time()) + 60}))
    assert caller is not None and caller.role == "reader"
    assert caller.principal == Principal(frozenset({"board"}), frozenset({"secret"}))
