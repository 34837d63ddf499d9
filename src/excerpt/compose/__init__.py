"""Composition: sentences, quotes, extractive answers with [n] citations (seed 000)."""
