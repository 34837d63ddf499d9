"""API keys mapped to principals: the keys file, and authentication.

The keys file is YAML (default ``<home>/keys.yaml``)::

    keys:
      - name: alice
        sha256: 9f86d0...          # of the key; the key itself is shown once, never stored
        role: reader               # reader | ingester | admin
        acl_tags: [finance]
        clearances: [internal]
        revoked: false
        created_at: 2026-11-23T14:40:00+00:00

Writers (`excerpt keys add` / `revoke`) hold a lock on ``keys.yaml.lock`` around their
read-modify-write and replace the file atomically, and write only what the reader reads back
unchanged. A server re-reads the file when it changes; while it cannot read it (deleted, broken
YAML, a malformed key) no key is valid.

A key's **identity** is the first 16 hex digits of its SHA-256 (:attr:`KeyEntry.identity`),
derived, never stored, so every keys file has one: its conversations are named by it, not by
the key's name, which is reused after a revoke (issue 28 item 5). A new key is a new identity.

A key is ``exk_`` followed by 32 random bytes (URL-safe base64), so a plain SHA-256 is enough to
store it (it is not a password: there is nothing to guess). Authentication compares digests in
constant time. A caller's principal comes from its key alone; a request may narrow it (fewer
tags or clearances), never widen it, and only an admin key may ask for all access.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import logging
import os
import secrets
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import anyio.to_thread

from excerpt.errors import InputError
from excerpt.names import plain_name, text_value
from excerpt.scope import Rights
from excerpt.types import Principal

ROLES = ("reader", "ingester", "admin")
PREFIX = "exk_"
KEYS_FILE = "keys.yaml"
ID_DIGITS = 16
"""Hex digits of a key's SHA-256 that name it (64 bits: no two keys of a file share them)."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class KeyEntry:
    name: str
    sha256: str
    role: str = "reader"
    acl_tags: tuple[str, ...] = ()
    clearances: tuple[str, ...] = ()
    revoked: bool = False
    created_at: str = ""

    @property
    def identity(self) -> str:
        """Who the key is, for good: its conversations are named by this, not by its name."""
        return self.sha256[:ID_DIGITS]

    def to_yaml(self) -> dict[str, Any]:
        return {"name": self.name, "sha256": self.sha256, "role": self.role,
                "acl_tags": list(self.acl_tags), "clearances": list(self.clearances),
                "revoked": self.revoked, "created_at": self.created_at}


@dataclass(frozen=True)
class Caller:
    """Who is calling: the key's name, role, principal and identity."""

    name: str
    role: str
    principal: Principal
    identity: str
    kind: str = "key"
    """``key`` (an API key) or ``oidc`` (a token of the identity provider, :mod:`.oidc`)."""

    def rights(self) -> Rights:
        """The key's rights: its principal at most, all access for an admin key, its own
        conversations (:mod:`excerpt.scope`), named by the key's identity: a key added later
        under the same name, or a name holding ``/``, never reaches them (a token's are
        ``oidc:IDENTITY/``, its identity from its issuer and subject)."""
        return Rights(self.principal, self.role == "admin", f"{self.kind}:{self.identity}/",
                      may_ingest=self.role in ("ingester", "admin"),
                      may_ingest_paths=self.role == "admin")

    def narrowed(self, acl_tags: Sequence[str] | None, clearances: Sequence[str] | None,
                 all_access: bool = False) -> Principal:
        """The principal for one request: the key's rights, narrowed to what the request
        names (never widened); ``all_access`` only for admin keys."""
        return self.rights().principal(acl_tags, clearances, all_access)


KEYS_UNAVAILABLE = ("the server cannot read its API keys now: no key is valid until its "
                    "operator repairs them")


class Unavailable(Exception):
    """Nobody can be signed in now (503): the keys file cannot be read, or the identity
    provider's signing keys cannot be fetched. ``message`` is for the caller, ``code`` names
    which (chat's error code)."""

    def __init__(self, message: str = KEYS_UNAVAILABLE, code: str = "keys_unavailable") -> None:
        super().__init__(message)
        self.message, self.code = message, code


class Tokens(Protocol):
    """Bearer tokens of an identity provider to callers (:class:`excerpt.edge.oidc.TokenVerifier`):
    None for a token that is not valid; raises :class:`Unavailable` when it cannot tell."""

    def caller(self, token: str) -> Caller | None: ...


def is_token(credential: str) -> bool:
    """A JWT's shape (three dot-separated parts); an API key has no dot."""
    return not credential.startswith(PREFIX) and credential.count(".") == 2


async def sign_in(keys: KeyRing, credential: str | None) -> Caller | None:
    """The caller of a bearer ``credential``: a token of the identity provider when the server
    has one (:attr:`KeyRing.tokens`) and the credential is shaped as a JWT (checked in a
    worker thread: it may fetch the JWKS), else an API key of ``keys``, re-read when its file
    changed. None for anything not valid; :class:`Unavailable` when it cannot tell."""
    if credential and keys.tokens is not None and is_token(credential):
        return await anyio.to_thread.run_sync(keys.tokens.caller, credential)
    keys.refresh()  # a key revoked in the file is refused from the next request on
    if keys.problem is not None:  # the server's log says why; the caller learns nothing
        raise Unavailable()
    return keys.authenticate(credential)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


_FIELDS = {"name", "sha256", "role", "acl_tags", "clearances", "revoked", "created_at"}


def _strings(raw: dict[str, Any], field_name: str, where: str) -> tuple[str, ...]:
    value = raw.get(field_name) or []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InputError(f"{where}: {field_name} must be a list of non-empty strings")
    return tuple(value)


def check_new_key(name: str, acl_tags: Sequence[str], clearances: Sequence[str]) -> None:
    """What `excerpt keys add` refuses, naming the option (the reader of old files is more
    lenient: a file written before stays readable): a NAME that is not a plain name
    (:mod:`excerpt.names`) or has white space at either end, a blank tag or label, or one
    with a control character."""
    plain_name(name, "NAME")
    if name != name.strip():
        raise InputError(f"NAME {name[:40]!r} must not start or end with white space")
    for option, values in (("--acl-tag", acl_tags), ("--clearance", clearances)):
        for value in values:
            text_value(value, option)


def _entry(raw: Any, path: Path, index: int) -> KeyEntry:
    """One key of the file, refused unless every field is what it should be: a misspelled
    ``revoked`` or a tag of the wrong type must not leave a key wider than meant."""
    where = f"{path}: key {index + 1}"
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"] \
            or not isinstance(raw.get("sha256"), str) or not raw["sha256"]:
        raise InputError(f"{where}: every key needs a name and a sha256")
    unknown = sorted(map(str, set(raw) - _FIELDS))
    if unknown:
        raise InputError(f"{where}: unknown field {unknown[0]!r}")
    role = raw.get("role") or "reader"
    if role not in ROLES:
        raise InputError(f"{where}: key {raw['name']!r} has unknown role {role!r}")
    if not isinstance(raw.get("revoked", False), bool):
        raise InputError(f"{where}: revoked must be true or false")
    return KeyEntry(raw["name"], raw["sha256"], role, _strings(raw, "acl_tags", where),
                    _strings(raw, "clearances", where), raw.get("revoked", False),
                    str(raw.get("created_at") or ""))


def _read(path: Path) -> list[KeyEntry]:
    """The keys in ``path``; InputError (naming the file) for anything unreadable."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the keys file: {exc}") from None
    return _parse(text, path)


def _parse(text: str, path: Path) -> list[KeyEntry]:
    """The keys of a keys file's ``text``; InputError naming ``path`` for anything else."""
    import yaml

    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("keys") or [], list):
        raise InputError(f"{path}: a keys file is a mapping with a list under 'keys'")
    return [_entry(raw, path, i) for i, raw in enumerate(data.get("keys") or [])]


Signature = tuple[int, int, int]


def _signature(path: Path) -> Signature | None:
    """What changes when the file is edited or replaced (None: there is no file)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


@dataclass
class KeyRing:
    """The keys of one file. A server calls :meth:`refresh` before each request: the file is
    re-read when it changed, and when it cannot be read (missing, broken, unreadable) no key
    is valid and :attr:`problem` says why (for the server's log, never for callers)."""

    path: Path
    entries: list[KeyEntry] = field(default_factory=list)
    loaded: Signature | None = None
    problem: str | None = None
    tokens: Tokens | None = None
    """The identity provider's tokens accepted beside the keys (``serve`` with ``oidc_issuer``
    set); they do not depend on the keys file."""

    def refresh(self) -> None:
        """Reload when the file changed since it was read (keys added or revoked)."""
        try:
            signature = _signature(self.path)
        except OSError as exc:
            self._fail(f"{self.path}: cannot read the keys file: {exc}")
            return
        if signature == self.loaded and (signature is not None or self.problem is not None):
            return
        self.loaded = signature
        if signature is None:
            self._fail(f"{self.path} does not exist")
            return
        try:
            self.entries = _read(self.path)
        except InputError as exc:
            self._fail(str(exc))
            return
        if self.problem is not None:
            log.warning("excerpt: the keys file is readable again (%d keys)", len(self.entries))
        self.problem = None

    def _fail(self, reason: str) -> None:
        self.entries = []
        if reason != self.problem:  # said once per problem, not once per request
            log.error("excerpt: no API key is valid until the keys file is fixed: %s", reason)
        self.problem = reason

    @classmethod
    def load(cls, path: Path) -> KeyRing:
        """The keys in ``path`` (an empty ring when the file does not exist yet)."""
        signature = _signature(path)
        if signature is None:
            return cls(path)
        return cls(path, _read(path), signature)

    @classmethod
    @contextmanager
    def editing(cls, path: Path) -> Iterator[KeyRing]:
        """The ring of ``path`` to change, saved when the block ends without an error. The
        whole read-modify-write holds an exclusive lock on ``<path>.lock``, so that parallel
        `excerpt keys` commands apply one after another and none loses another's change."""
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            ring = cls.load(path)
            yield ring
            ring.save()
        finally:
            os.close(lock)  # closing releases the lock

    def save(self) -> None:
        """Write the file atomically: a temporary file of this process (mode 0600), synced,
        then renamed over the old one; a reader sees the old keys or the new, never half."""
        import yaml

        text = yaml.safe_dump({"keys": [e.to_yaml() for e in self.entries]}, sort_keys=False,
                              allow_unicode=True)
        # a file the reader refuses would make every key invalid: check it before it replaces
        # the good one, with the reader itself
        if _parse(text, self.path) != self.entries:
            raise InputError(f"{self.path}: not written: the keys would not read back as they are")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp",
                                   dir=self.path.parent)  # mkstemp: mode 0600, a unique name
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        folder = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)  # the rename itself survives a crash
        finally:
            os.close(folder)

    def add(self, name: str, role: str = "reader", acl_tags: tuple[str, ...] = (),
            clearances: tuple[str, ...] = ()) -> tuple[KeyEntry, str]:
        """A new key for ``name`` (which must be new or revoked); returns it once."""
        if role not in ROLES:
            raise InputError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")
        check_new_key(name, acl_tags, clearances)
        if any(e.name == name and not e.revoked for e in self.entries):
            raise InputError(f"a key named {name!r} exists; revoke it first")
        key = PREFIX + secrets.token_urlsafe(32)
        entry = KeyEntry(name, digest(key), role, tuple(acl_tags), tuple(clearances), False,
                         datetime.now(UTC).isoformat(timespec="seconds"))
        self.entries = [e for e in self.entries if e.name != name] + [entry]
        return entry, key

    def revoke(self, name: str) -> KeyEntry:
        for i, e in enumerate(self.entries):
            if e.name == name and not e.revoked:
                self.entries[i] = replace(e, revoked=True)
                return self.entries[i]
        raise InputError(f"no active key named {name!r}")

    def authenticate(self, key: str | None) -> Caller | None:
        """The caller a key belongs to; None for no key, an unknown key or a revoked one."""
        if not key:
            return None
        wanted = digest(key)
        found = None
        for e in self.entries:  # every entry compared: the time says nothing about which
            if hmac.compare_digest(e.sha256, wanted) and not e.revoked:
                found = e
        if found is None:
            return None
        return Caller(found.name, found.role,
                      Principal(frozenset(found.acl_tags), frozenset(found.clearances)),
                      found.identity)
