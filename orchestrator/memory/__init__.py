"""Memory discipline: the checklists, verification and audit that keep repo memory clean."""
