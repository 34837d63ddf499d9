"""Summary entity retention on the hand-written dialogues of data/conversations.json (the set
bench/memory.py measures): every evicted key entity at the default limit, most at 150 tokens."""

from __future__ import annotations

import json
from pathlib import Path

from excerpt.memory import MemoryStore, entity_retention

DATA = Path(__file__).parent / "data" / "conversations.json"


def test_summaries_keep_the_evicted_key_entities() -> None:
    conversations = json.loads(DATA.read_text("utf-8"))
    tight = []
    for name, turns in conversations.items():
        store = MemoryStore(embedder=None)
        store.config(name, buffer_size=4)
        for speaker, turn, text in turns:
            store.add(name, speaker, turn, text)
        evicted = " ".join(text for _, _, text in turns[:-4])
        assert store.stats(name)["evicted"] == len(turns) - 4
        assert entity_retention(evicted, store.summary(name)[0]) >= 0.8, name
        summary, tokens = store.summary(name, token_limit=150)
        assert tokens <= 150
        tight.append(entity_retention(evicted, summary))
    assert sum(tight) / len(tight) >= 0.8
