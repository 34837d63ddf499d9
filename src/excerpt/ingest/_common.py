"""Helpers the loaders share: their file set, source names, security labels, decoding."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from excerpt.errors import CorpusError, InputError
from excerpt.ingest.base import LoadOptions
from excerpt.ingest.files import FileSet, resolve_files

BINARY_SNIFF_BYTES = 8192


def check_options(options: LoadOptions) -> None:
    for size in (options.chunk_chars, options.document_chars):
        if size < 1:
            raise InputError(f"chunk size must be at least 1 character, got {size}")
    if options.overlap_chars < 0:
        raise InputError(f"chunk overlap must not be negative, got {options.overlap_chars}")


def files_of(paths: Sequence[Path], options: LoadOptions) -> FileSet:
    """The files a loader reads: those the import found (``options.files``: of these paths,
    checked against these roots), else the paths walked now, within ``options.roots``."""
    found = options.files
    if (found is not None and found.given == [Path(p) for p in paths]
            and found.within(options.roots)):
        return found
    return resolve_files(paths, options.roots)


def source_name(paths: Sequence[Path]) -> str:
    """One path: its resolved absolute path; several: the sorted resolved paths joined by '|'."""
    resolved = sorted({str(Path(p).resolve()) for p in paths})
    return "|".join(resolved)


def labels(*groups: Iterable[str]) -> tuple[str, ...]:
    """Merged security labels: deduplicated, sorted, empty strings dropped."""
    return tuple(sorted({label for group in groups for label in group if label}))


# Parts of a record key that mark it as meant for access control (``aclTagsAny``,
# ``classification_label``, ``clearance``): a key like that which the format does not read is a
# misspelling, and ignoring it would publish the record to everyone.
_SECURITY_WORDS = ("acl", "classif", "clearance", "label", "tag")
_KEY_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def looks_like_security_key(key: str) -> bool:
    """Whether a record key names an access-control field (by its parts: ``acl_tag_any``,
    ``AclTags``, ``classificationLabels``, ``labels``; not ``stage`` or ``owner_id``)."""
    return any(part.lower().startswith(_SECURITY_WORDS) for part in _KEY_PARTS.findall(key))


def record_security(record: Mapping[str, Any], where: str, keys: tuple[str, str],
                    options: LoadOptions) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(acl_tags, classification_labels)`` of one record that carries its own security fields
    (``keys``: the format's ACL key and label key), with the import's options applied.

    The import never widens a record's access: the import's ACL tags (OR: any one grants) are
    only the default for a record that has none of its own, and its classification labels
    (AND: each one must be cleared) are added to the record's.  A field that is not a list of
    non-blank strings, or a key that looks like a security field but is not one of ``keys``,
    refuses the import (``where`` names the file and record): silently ignored, either would
    make the record public.
    """
    for key in record:
        if key not in keys and looks_like_security_key(key):
            raise CorpusError(f"{where}: unknown security field {key!r} (this format reads "
                              f"{keys[0]!r} and {keys[1]!r}); fix its name or remove it")
    own_acl = _security_list(record.get(keys[0]), where, keys[0])
    own_labels = _security_list(record.get(keys[1]), where, keys[1])
    acl = labels(own_acl) if own_acl else labels(options.acl_tags)
    return acl, labels(own_labels, options.classification_labels)


def _security_list(value: Any, where: str, key: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise CorpusError(f"{where}: {key!r} must be a list of strings, "
                          f"got {type(value).__name__} {value!r:.40}")
    for item in value:
        if not isinstance(item, str):
            raise CorpusError(f"{where}: {key!r} must be a list of strings, "
                              f"got the {type(item).__name__} {item!r:.40} in it")
        if not item.strip():
            raise CorpusError(f"{where}: {key!r} holds an empty tag {item!r}; "
                              "an empty string is not a tag (remove it)")
    return value


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def strip_bom(data: bytes) -> bytes:
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def read_text_file(path: Path, data: bytes | None = None) -> tuple[str | None, str | None]:
    """``(cleaned_text, None)`` for a readable UTF-8 text file, else ``(None, reason)``;
    ``data``: its bytes when the import holds them already (not read again)."""
    if data is None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            return None, f"cannot read file: {exc.strerror or exc}"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, "UTF-16 text (byte order mark); convert the file to UTF-8"
    nul = data.find(b"\x00", 0, BINARY_SNIFF_BYTES)
    if nul >= 0:
        return None, f"binary file (NUL byte at offset {nul})"
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + bom
        return None, (
            f"not valid UTF-8: byte 0x{data[offset]:02x} at offset {offset} "
            "(binary, or text in another encoding)"
        )
    if not text:
        return None, "empty file"
    if not text.strip():
        return None, "file holds only whitespace"
    return normalize_newlines(text), None
