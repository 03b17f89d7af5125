"""One module per command group (`orch <group> ...`). Keep imports inside commands light."""
