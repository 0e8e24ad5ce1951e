"""The per-tenant platform (upstream-platform.md §3-§5) and the objects every tenant shares, with management states."""
