"""The files orch keeps in a repository: layout, formats, atomic writes, locks, caches.

See README.md in this folder and docs/storage.md."""
