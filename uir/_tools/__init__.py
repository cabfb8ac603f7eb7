"""The command-line tools (`uir demo`, `uir info`, `uir run`, `uir opt`):
applications built on uir's public API, as a user's program would be, and
so above it. Nothing in uir/_src imports them."""
