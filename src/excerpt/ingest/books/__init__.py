"""Books: Project Gutenberg texts and books without that frame, their parts and editions."""
