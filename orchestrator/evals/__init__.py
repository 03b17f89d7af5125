"""Evaluation suites run by `orch eval SUITE`: each module exposes a click command.

Suites measure the system as a whole (DESIGN.md section 8). Labelled data sets and
benchmark scripts live in the repository's top-level `evals/`; data that may not be
copied (LoCoMo) is read from where it lies.
"""
