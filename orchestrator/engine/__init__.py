"""The workflow engine: plan, audit, execute phases behind gates, commit, resume.

Commands call `orchestrator.engine.api` (start, resume, approve, summary); see README.md
beside this file for what each module does, and docs/engine.md for users.
"""
