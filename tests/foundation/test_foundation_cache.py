"""The one cache file: tables by name and version, created by the first write, and never
an error: a broken, busy or unwritable cache is skipped (a broken one removed)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from orchestrator.store import cache as cache_module
from orchestrator.store.cache import CACHE_FILE, Cache


def test_reading_an_absent_cache_creates_nothing(tmp_path: Path) -> None:
    folder = tmp_path / ".orch"
    with Cache(folder) as cache:
        table = cache.table("t", 1)
        assert table.items() == {} and table.get("k") is None
    assert not folder.exists()


def test_the_first_write_creates_the_folder_and_rows_read_back(tmp_path: Path) -> None:
    folder = tmp_path / ".orch"
    with Cache(folder) as cache:
        cache.table("t", 1).put_many([("a", "1"), ("b", "2")])
        cache.table("u", 1).put_many([("a", "other")])
    with Cache(folder) as cache:
        table = cache.table("t", 1)
        assert table.items() == {"a": "1", "b": "2"}
        assert table.get_many(["b", "c"]) == {"b": "2"}
        table.put_many([("c", "3")], drop=["a"])
        assert table.items() == {"b": "2", "c": "3"}
        table.replace_all([("z", "26")])
        assert table.items() == {"z": "26"}
        assert cache.table("u", 1).items() == {"a": "other"}  # tables keep apart


def test_a_new_table_version_starts_empty(tmp_path: Path) -> None:
    with Cache(tmp_path) as cache:
        cache.table("t", 1).put_many([("a", "1")])
    with Cache(tmp_path) as cache:
        assert cache.table("t", 2).items() == {}
    with Cache(tmp_path) as cache:
        assert cache.table("t", 2).items() == {}  # and stays the new version


def test_a_file_that_is_not_a_database_is_removed_then_rebuilt(tmp_path: Path) -> None:
    (tmp_path / CACHE_FILE).write_bytes(b"garbage, not a database" * 100)
    with Cache(tmp_path) as cache:
        assert cache.table("t", 1).items() == {}
    assert not (tmp_path / CACHE_FILE).exists()
    with Cache(tmp_path) as cache:
        cache.table("t", 1).put_many([("a", "1")])
        assert cache.table("t", 1).items() == {"a": "1"}


def test_a_busy_cache_is_skipped_not_waited_for_forever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT", 0.2)
    with Cache(tmp_path) as cache:
        cache.table("t", 1).put_many([("a", "1")])
    holder = sqlite3.connect(tmp_path / CACHE_FILE)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        cache = Cache(tmp_path)
        cache.table("t", 1).put_many([("b", "2")])  # locked: skipped, no exception
        cache.close()
    finally:
        holder.rollback()
        holder.close()
    assert (tmp_path / CACHE_FILE).is_file()  # a busy file is not removed


def test_a_folder_that_cannot_be_made_is_no_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with Cache(tmp_path / "file" / ".orch") as cache:
        cache.table("t", 1).put_many([("a", "1")])
        assert cache.table("t", 1).items() == {}
