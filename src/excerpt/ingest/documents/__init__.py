"""Documents people have: plain text and Markdown (PDF, Word, HTML and EPUB as they come)."""
