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

A key is ``exk_`` followed by 32 random bytes (URL-safe base64), so a plain SHA-256 is enough to
store it (it is not a password: there is nothing to guess). Authentication compares digests in
constant time. A caller's principal comes from its key alone; a request may narrow it (fewer
tags or clearances), never widen it, and only an admin key may ask for all access.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from excerpt.errors import InputError
from excerpt.types import Principal

ROLES = ("reader", "ingester", "admin")
PREFIX = "exk_"
KEYS_FILE = "keys.yaml"


@dataclass(frozen=True)
class KeyEntry:
    name: str
    sha256: str
    role: str = "reader"
    acl_tags: tuple[str, ...] = ()
    clearances: tuple[str, ...] = ()
    revoked: bool = False
    created_at: str = ""

    def to_yaml(self) -> dict[str, Any]:
        return {"name": self.name, "sha256": self.sha256, "role": self.role,
                "acl_tags": list(self.acl_tags), "clearances": list(self.clearances),
                "revoked": self.revoked, "created_at": self.created_at}


@dataclass(frozen=True)
class Caller:
    """Who is calling: the key's name, role and principal."""

    name: str
    role: str
    principal: Principal

    def narrowed(self, acl_tags: list[str] | None, clearances: list[str] | None,
                 all_access: bool = False) -> Principal:
        """The principal for one request: the key's rights, narrowed to what the request
        names (never widened); ``all_access`` only for admin keys."""
        if all_access:
            if self.role != "admin":
                raise PermissionError("all access needs an admin key")
            return Principal.admin()
        tags = self.principal.acl_tags
        labels = self.principal.clearances
        if acl_tags is not None:
            tags = tags & frozenset(acl_tags)
        if clearances is not None:
            labels = labels & frozenset(clearances)
        return Principal(tags, labels)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _entry(raw: Any, path: Path) -> KeyEntry:
    if not isinstance(raw, dict) or not raw.get("name") or not raw.get("sha256"):
        raise InputError(f"{path}: every key needs a name and a sha256")
    role = str(raw.get("role") or "reader")
    if role not in ROLES:
        raise InputError(f"{path}: key {raw['name']!r} has unknown role {role!r}")
    return KeyEntry(str(raw["name"]), str(raw["sha256"]), role,
                    tuple(map(str, raw.get("acl_tags") or ())),
                    tuple(map(str, raw.get("clearances") or ())), bool(raw.get("revoked")),
                    str(raw.get("created_at") or ""))


@dataclass
class KeyRing:
    path: Path
    entries: list[KeyEntry] = field(default_factory=list)
    loaded_mtime: float = 0.0

    def refresh(self) -> None:
        """Reload when the file changed since it was read (keys added or revoked)."""
        try:
            mtime = self.path.stat().st_mtime
        except FileNotFoundError:
            return
        if mtime != self.loaded_mtime:
            self.entries = KeyRing.load(self.path).entries
            self.loaded_mtime = mtime

    @classmethod
    def load(cls, path: Path) -> KeyRing:
        """The keys in ``path`` (an empty ring when the file does not exist yet)."""
        import yaml

        if not path.exists():
            return cls(path)
        mtime = path.stat().st_mtime
        try:
            data = yaml.safe_load(path.read_text("utf-8")) or {}
        except yaml.YAMLError as exc:
            raise InputError(f"{path}: not valid YAML: {exc}") from None
        return cls(path, [_entry(raw, path) for raw in data.get("keys") or []], mtime)

    def save(self) -> None:
        import yaml

        text = yaml.safe_dump({"keys": [e.to_yaml() for e in self.entries]}, sort_keys=False,
                              allow_unicode=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(text, "utf-8")
        tmp.chmod(0o600)
        tmp.replace(self.path)

    def add(self, name: str, role: str = "reader", acl_tags: tuple[str, ...] = (),
            clearances: tuple[str, ...] = ()) -> tuple[KeyEntry, str]:
        """A new key for ``name`` (which must be new or revoked); returns it once."""
        if role not in ROLES:
            raise InputError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")
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
                self.entries[i] = KeyEntry(e.name, e.sha256, e.role, e.acl_tags, e.clearances,
                                           True, e.created_at)
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
                      Principal(frozenset(found.acl_tags), frozenset(found.clearances)))
