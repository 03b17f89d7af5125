"""Checks every write needs, whatever layer it comes from.

The store (file formats, locks) and the parts above it (memory discipline, the engine, the
model's memory tool) all run these before anything reaches disk, so they live below all of
them and import nothing of orch but `errors`:

- `schema`: a record declared once as a frozen dataclass, and what is derived from that
  declaration: the check that a mapping read from a file is a valid record, building the
  record from it, and the JSON Schema that says the same;
- `secrets`: API keys, tokens, private keys and passwords in a text (the audit reports
  them; refusing them on every write is the next step, and it belongs here too).
"""
