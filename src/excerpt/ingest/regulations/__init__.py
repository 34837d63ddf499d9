"""Regulation books: the text layout with its table of contents, and HWPX files."""
