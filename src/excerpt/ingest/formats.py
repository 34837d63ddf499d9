"""The names of the loaders (``--format``), known without importing any of them: the CLI, the
service and their option checks need the names, and a search should not pay for loading the
PDF, Word and C# readers (tests/unit/ingest/test_ingest_detect.py checks that these are
exactly the loaders of :mod:`excerpt.ingest.detect`)."""

from excerpt.ingest.documents.registry import READERS, TEXT

FORMATS = ("auto", "beir", "code", "code-bundle", "gutenberg", "hwpx", "regulations", "text",
           "documents", *(spec.format for spec in READERS if spec.format != TEXT))
