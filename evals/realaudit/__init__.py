"""The real-memory pollution-audit evaluation: see README.md."""
