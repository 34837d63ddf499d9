from __future__ import annotations

import pytest

from excerpt.errors import InputError
from excerpt.memory import ConversationConfig, Utterance
from excerpt.memory.model import check_speaker, utc_now


def test_speakers() -> None:
    for speaker in ("user", "assistant", "system"):
        assert check_speaker(speaker) == speaker
    with pytest.raises(InputError, match="speaker"):
        check_speaker("bot")


def test_config_defaults_and_validation() -> None:
    config = ConversationConfig()
    assert (config.buffer_size, config.max_tokens, config.summary_token_limit) == (20, 8000, 500)
    for bad in (0, -1, True, 2.5, "3"):
        with pytest.raises(InputError, match="buffer_size"):
            ConversationConfig(buffer_size=bad)  # type: ignore[arg-type]
    assert config.with_changes(buffer_size=3, max_tokens=None).buffer_size == 3
    with pytest.raises(InputError, match="unknown memory setting"):
        config.with_changes(size=3)
    with pytest.raises(InputError, match="max_tokens"):
        config.with_changes(max_tokens=0)


def test_utterance_dict_and_utc_timestamps() -> None:
    u = Utterance(0, "user", 1, utc_now(), "hi", 1)
    assert u.to_dict() == {"utterance_index": 0, "speaker": "user", "turn_number": 1,
                           "timestamp": u.timestamp, "text": "hi", "tokens": 1}
    assert u.timestamp.endswith("+00:00") and "T" in u.timestamp
