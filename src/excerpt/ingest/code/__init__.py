"""Source code: C# and T-SQL files, folders and release bundles, and the graph between them."""
