"""Memory discipline: the checklists, verification and audit that keep repo memory clean.

Each module is imported by its own name (docs/seams.md, "Memory discipline"): the engine
uses `use.memories_for_prompt`, `fresh.wants_fresh_context` and `promotion.promote`, and
every writer of repo memory uses `writer.MemoryWriter`. Nothing is imported here, so that
`orch memory list` (which needs none of it) and a write (which needs the writer only)
load no more than they use.
"""
