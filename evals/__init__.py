"""Benchmarks and generators run from the repository root (`python -m evals.<name>`)."""
