"""Query understanding: entities, multi-stage expansion and adaptive top-k, driven by a lexicon."""
