"""orch: a workflow orchestrator for multi-phase coding tasks driven by a language model.

Importing this package must stay cheap: `orch --help` imports it. The seams between the
parts (model, tool set, memory store) are declared in `orchestrator.protocols`.
"""

__version__ = "0.1.0"
