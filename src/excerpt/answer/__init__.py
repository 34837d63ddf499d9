"""Answers from retrieved passages: sentences, quotes and extractive composition."""
