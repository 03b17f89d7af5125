"""The real-memory pollution-audit evaluation (issue 13): see README.md."""
