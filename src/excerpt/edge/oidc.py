"""Sign-in with an identity provider: bearer JWTs of one configured issuer, beside API keys.

A token is checked in this order, and refused (None: the caller's 401, the same body as a bad
key; the reason goes to the server's log only) at the first check it fails:

1. its size (``oidc_max_token_bytes``), before anything is parsed;
2. its header's ``alg``, which must be one of ``oidc_algorithms`` (RS256 and ES256 by default;
   ``none`` and the HS* algorithms are never allowed, not even by settings: a public key is
   never used as an HMAC secret), and its ``kid``;
3. the key of that ``kid`` in the issuer's JWKS: its type must match the algorithm (RSA for
   RS*/PS*, EC for ES*, OKP for EdDSA), and its own ``alg``, when it names one, must be the
   header's;
4. the signature, with that key only; then ``exp`` and ``nbf`` (with ``oidc_leeway_s``),
   ``iss`` (exactly ``oidc_issuer``) and ``aud`` (must hold ``oidc_audience``); ``exp``,
   ``iss``, ``aud`` and ``sub`` are required.

The JWKS (:class:`Jwks`) comes from ``oidc_jwks_url`` (fetched on first use with a timeout and
a size cap, cached, fetched again when older than ``oidc_jwks_max_age_s`` or when a token names
a ``kid`` it does not hold, at most once per ``oidc_jwks_min_refresh_s``, so that tokens with
made-up kids cannot make the server hammer the issuer) or from ``oidc_jwks_file`` (read again
when the file changes; never fetched). A failed fetch keeps the keys fetched before: a token
whose ``kid`` is among them is still accepted while the issuer is down; one whose ``kid`` is
not, while the last fetch failed, is refused with :class:`TokensUnavailable` (503): fail
closed, never an unverified token.

Rights (:class:`ClaimRules`) are mapped from claims by settings, narrowing only: a token gets
the ACL tags, clearances and role that the rules map its claim values to, and nothing else;
claim values the rules do not name give nothing, a role value they do not name is a reader.
The caller is the kind API keys give (:class:`excerpt.edge.keys.Caller`), so every route treats
a token as a key with the same rights; its identity is derived from ``iss`` and ``sub`` (never
from the token), so a user keeps the same conversations across tokens.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt

from excerpt.edge.keys import ID_DIGITS, ROLES, Caller, Unavailable
from excerpt.errors import InputError
from excerpt.settings import Settings
from excerpt.types import Principal

log = logging.getLogger(__name__)

KEY_TYPES = {"RS256": "RSA", "RS384": "RSA", "RS512": "RSA", "PS256": "RSA", "PS384": "RSA",
             "PS512": "RSA", "ES256": "EC", "ES384": "EC", "ES512": "EC", "EdDSA": "OKP"}
"""The algorithms a setting may allow, each with the only key type that may verify it."""
FETCH_TIMEOUT_S = 5.0
MAX_JWKS_BYTES = 1 << 20
UNAVAILABLE = ("the identity provider's signing keys cannot be fetched now: sign-in with a "
               "token is unavailable until they can (API keys still work)")


class TokensUnavailable(Unavailable):
    """The issuer's JWKS cannot be had and holds no key for the token's ``kid`` (503)."""

    def __init__(self) -> None:
        super().__init__(UNAVAILABLE, "tokens_unavailable")


class Refused(Exception):
    """A token that fails a check; the message is for the server's log only."""


def _read_jwks(raw: bytes, where: str) -> dict[str, dict[str, Any]]:
    """The keys of a JWKS document by ``kid`` (keys without a kid, or not for signing, left
    out); :class:`ValueError` naming ``where`` for a document that is not a JWKS."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"{where}: not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
        raise ValueError(f"{where}: a JWKS is an object with a list under 'keys'")
    found: dict[str, dict[str, Any]] = {}
    for key in data["keys"]:
        if isinstance(key, dict) and isinstance(key.get("kid"), str) \
                and key.get("use", "sig") == "sig":
            found[key["kid"]] = key
    return found


@dataclass
class Jwks:
    """The issuer's signing keys by ``kid``, from a URL (cached, refreshed, rate-limited) or a
    file (read again when it changes). Thread-safe: one fetch at a time."""

    url: str = ""
    file: str = ""
    max_age_s: float = 3600.0
    min_refresh_s: float = 60.0
    keys: dict[str, dict[str, Any]] = field(default_factory=dict)
    fetched_at: float | None = None  # monotonic time of the last good fetch
    tried_at: float | None = None  # of the last attempt, good or not
    failed: bool = False  # the last attempt failed
    fetches: int = 0
    _file_signature: tuple[int, int, int] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def key(self, kid: str) -> dict[str, Any] | None:
        """The JWK of ``kid``; None when the issuer has no such key. Raises
        :class:`TokensUnavailable` when the keys cannot be had and ``kid`` is not cached."""
        with self._lock:
            if self.file:
                self._read_file()
            elif self._stale() or (kid not in self.keys and self._may_refresh()):
                self._fetch()
            if kid in self.keys:
                return self.keys[kid]
            if self.failed:
                raise TokensUnavailable()
            return None

    def _stale(self) -> bool:
        if self.fetched_at is None:
            return self._may_refresh()
        return time.monotonic() - self.fetched_at >= self.max_age_s and self._may_refresh()

    def _may_refresh(self) -> bool:
        return self.tried_at is None or time.monotonic() - self.tried_at >= self.min_refresh_s

    def _fetch(self) -> None:
        self.tried_at = time.monotonic()
        self.fetches += 1
        try:
            request = urllib.request.Request(self.url, headers={"Accept": "application/json"})
            with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as response:
                raw = response.read(MAX_JWKS_BYTES + 1)
            if len(raw) > MAX_JWKS_BYTES:
                raise ValueError(f"{self.url}: the JWKS is larger than {MAX_JWKS_BYTES} bytes")
            self.keys = _read_jwks(raw, self.url)
        except (OSError, ValueError) as exc:
            if not self.failed:
                log.error("excerpt: cannot fetch the identity provider's JWKS (%d keys kept): "
                          "%s", len(self.keys), exc)
            self.failed = True
            return
        if self.failed:
            log.warning("excerpt: the identity provider's JWKS is reachable again")
        self.failed, self.fetched_at = False, time.monotonic()
        log.info("excerpt: JWKS fetched: kids %s", sorted(self.keys))

    def _read_file(self) -> None:
        path = Path(self.file)
        try:
            st = path.stat()
            signature = (st.st_mtime_ns, st.st_size, st.st_ino)
            if signature == self._file_signature:
                return
            self._file_signature = signature
            self.keys = _read_jwks(path.read_bytes()[:MAX_JWKS_BYTES + 1], str(path))
        except (OSError, ValueError) as exc:
            if not self.failed:
                log.error("excerpt: cannot read the JWKS file (%d keys kept): %s",
                          len(self.keys), exc)
            self.failed = True
            return
        self.failed = False


def _rules(values: Sequence[str], setting: str, allowed: Iterable[str] | None = None
           ) -> dict[str, str]:
    """``CLAIM_VALUE=RIGHT`` (or ``VALUE``: the same on both sides) rules of a setting."""
    rules: dict[str, str] = {}
    for rule in values:
        source, _, target = rule.rpartition("=") if "=" in rule else (rule, "", rule)
        if not source or not target:
            raise InputError(f"setting {setting}: {rule!r} is not VALUE or CLAIM_VALUE=VALUE")
        if allowed is not None and target not in allowed:
            raise InputError(f"setting {setting}: {target!r} is not one of {', '.join(allowed)}")
        rules[source] = target
    return rules


def _claim(claims: dict[str, Any], path: str) -> list[str]:
    """The string values of the claim at ``path`` (dots walk into objects, as Keycloak's
    ``realm_access.roles``): a string is one value; anything else gives none."""
    value: Any = claims
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    if value is not None:
        log.warning("excerpt: token claim %r is neither a string nor a list: ignored", path)
    return []


@dataclass(frozen=True)
class ClaimRules:
    """Claims to rights, as the settings say: each claim's values through its rules."""

    tags_claim: str
    tags: dict[str, str]
    clearances_claim: str
    clearances: dict[str, str]
    role_claim: str
    roles: dict[str, str]

    @classmethod
    def of(cls, settings: Settings) -> ClaimRules:
        return cls(settings.oidc_tags_claim, _rules(settings.oidc_tags, "oidc_tags"),
                   settings.oidc_clearances_claim,
                   _rules(settings.oidc_clearances, "oidc_clearances"),
                   settings.oidc_role_claim, _rules(settings.oidc_roles, "oidc_roles", ROLES))

    def caller(self, claims: dict[str, Any]) -> Caller:
        """The caller of verified ``claims``: mapped rights only, reader by default."""
        tags = {self.tags[v] for v in _claim(claims, self.tags_claim) if v in self.tags}
        labels = {self.clearances[v] for v in _claim(claims, self.clearances_claim)
                  if v in self.clearances}
        mapped = [self.roles[v] for v in _claim(claims, self.role_claim) if v in self.roles]
        role = max(mapped, key=ROLES.index, default="reader")
        subject = f"{claims['iss']}\n{claims['sub']}".encode()
        identity = hashlib.sha256(subject).hexdigest()[:ID_DIGITS]
        return Caller(str(claims["sub"])[:64], role,
                      Principal(frozenset(tags), frozenset(labels)), identity, kind="oidc")


@dataclass
class TokenVerifier:
    """Bearer JWTs of one issuer to callers (see the module's docstring)."""

    issuer: str
    audience: str
    algorithms: tuple[str, ...]
    leeway_s: float
    max_bytes: int
    jwks: Jwks
    rules: ClaimRules

    def caller(self, token: str) -> Caller | None:
        """The caller of a valid token; None (reason logged) for any other."""
        try:
            claims = self.verify(token)
        except Refused as exc:
            log.warning("excerpt: bearer token refused: %s", exc)
            return None
        return self.rules.caller(claims)

    def verify(self, token: str) -> dict[str, Any]:
        """The claims of a valid token; :class:`Refused` saying which check failed."""
        if len(token.encode("utf-8", "replace")) > self.max_bytes:
            raise Refused(f"larger than {self.max_bytes} bytes")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise Refused(f"malformed: {exc}") from None
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in self.algorithms:
            raise Refused(f"algorithm {alg!r} is not allowed")
        if not isinstance(kid, str):
            raise Refused("no kid in its header")
        jwk = self.jwks.key(kid)
        if jwk is None:
            raise Refused(f"unknown kid {kid[:80]!r}")
        if jwk.get("kty") != KEY_TYPES[alg] or jwk.get("alg", alg) != alg:
            raise Refused(f"kid {kid!r} is a {jwk.get('kty')} key for {jwk.get('alg')}, not "
                          f"for {alg}")
        try:
            key = jwt.PyJWK(jwk, algorithm=alg)
            claims: dict[str, Any] = jwt.decode(
                token, key, algorithms=[alg], audience=self.audience, issuer=self.issuer,
                leeway=self.leeway_s,
                options={"require": ["exp", "iss", "aud", "sub"], "verify_signature": True})
        except jwt.PyJWTError as exc:
            raise Refused(f"{type(exc).__name__}: {exc}") from None
        return claims


def verifier(settings: Settings) -> TokenVerifier | None:
    """The settings' verifier; None when no issuer is set. :class:`InputError` for settings
    that cannot be used (no audience, no or two JWKS sources, an algorithm not allowed)."""
    if not settings.oidc_issuer:
        return None
    if not settings.oidc_audience:
        raise InputError("setting oidc_audience is required with oidc_issuer (the audience "
                         "this server's tokens are issued for)")
    if bool(settings.oidc_jwks_url) == bool(settings.oidc_jwks_file):
        raise InputError("set exactly one of oidc_jwks_url and oidc_jwks_file with oidc_issuer")
    if settings.oidc_jwks_url and not settings.oidc_jwks_url.startswith(("https://", "http://")):
        raise InputError("setting oidc_jwks_url must be an https:// (or http://) URL")
    bad = [a for a in settings.oidc_algorithms if a not in KEY_TYPES]
    if bad or not settings.oidc_algorithms:
        raise InputError(f"setting oidc_algorithms: {bad[0] if bad else 'none'!r} is not "
                         f"allowed; choose among {', '.join(KEY_TYPES)} (never none or HS*)")
    jwks = Jwks(settings.oidc_jwks_url, settings.oidc_jwks_file,
                settings.oidc_jwks_max_age_s, settings.oidc_jwks_min_refresh_s)
    return TokenVerifier(settings.oidc_issuer, settings.oidc_audience,
                         tuple(settings.oidc_algorithms), settings.oidc_leeway_s,
                         settings.oidc_max_token_bytes, jwks, ClaimRules.of(settings))
