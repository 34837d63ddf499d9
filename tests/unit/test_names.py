"""The one rule for names a caller gives (excerpt.names), as uploads, syncs, conversations and
keys apply it."""

from __future__ import annotations

import pytest

from excerpt.errors import InputError
from excerpt.names import plain_name, text_value


@pytest.mark.parametrize(("value", "said"), [
    ("", "is empty"), ("  ", "is empty"), ("a\x00b", "control character"),
    ("a\nb", "control character"), ("\udc80", "control character"), (".", "is not a name"),
    ("..", "is not a name"), ("a/b", "without folders"), ("..\\x", "without folders"),
    ("x" * 201, "over 200 characters")])
def test_a_name_that_is_not_one_plain_name_is_refused_naming_the_field(value: str,
                                                                         said: str) -> None:
    with pytest.raises(InputError, match=said) as refused:
        plain_name(value, "conversation")
    assert str(refused.value).startswith("conversation ")


def test_limits_in_characters_and_bytes() -> None:
    assert plain_name("é" * 127, "filename", max_chars=255, max_bytes=255) == "é" * 127
    with pytest.raises(InputError, match="over 255 bytes"):
        plain_name("é" * 128, "filename", max_chars=255, max_bytes=255)


def test_a_text_value_may_hold_what_a_name_may_not() -> None:
    assert text_value("team/hr", "--acl-tag") == "team/hr"
    assert plain_name("field-notes", "name") == "field-notes"
    with pytest.raises(InputError, match="--acl-tag '\\\\t' is empty"):
        text_value("\t", "--acl-tag")
