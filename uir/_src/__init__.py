"""uir's implementation. Nothing here is public API; see the `uir` package."""
