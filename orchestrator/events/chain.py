"""The signed line format of the event log, and the head record kept beside the key.

A signed line is the event envelope followed by three keys, always last and in this order:

    {"v":1,"ts":...,"payload":{...},"prev":"<64 hex>","kid":"<16 hex>","mac":"<64 hex>"}

- `prev`: sha256 (hex) of the previous line's bytes, without its newline; `GENESIS` (64
  zeros) on the first line. Any line inserted, removed, reordered or changed breaks it.
- `kid`: the id of the key that signed the line (`Key.kid`), so a log signed elsewhere (a
  teammate's clone, CI) reads as "signed with another key", not as forged.
- `mac`: HMAC-SHA256 with that key over the line's bytes without `,"mac":"..."`, that is,
  the line exactly as written up to `kid`, closed by `}`. The bytes are what is signed (no
  re-serialisation), so a line is valid only as orch wrote it.

The head record (`<state dir>/heads/<sha256 of the log's absolute path, 32 hex>.json`) says
what this machine last wrote to a log: its path, trace_id, key id, how many lines, the
byte offset of the end, the file's inode and the last line's hash. The writer updates it
under the log's lock after each append (in place, with a checksum), and uses it to find the
previous line's hash without reading the file; the verifier uses it to notice lines cut
from the end, or a log replaced by another.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from msgspec import Struct

from orchestrator.events.keys import Key, state_dir

GENESIS = "0" * 64
MAC_HEX = 64
# `,"mac":"` + 64 hex + `"}`: how every signed line ends.
_MAC_OPEN = b',"mac":"'
_SUFFIX = len(_MAC_OPEN) + MAC_HEX + 2
HEADS = "heads"


def line_hash(line: bytes) -> str:
    """The `prev` of the line after `line` (the line's bytes without its newline)."""
    return hashlib.sha256(line).hexdigest()


def seal(envelope: dict[str, Any], prev: str, key: Key) -> tuple[bytes, str]:
    """(the signed line with its newline, its MAC) for an event envelope."""
    body = json.dumps(
        {**envelope, "prev": prev, "kid": key.kid}, ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8")
    mac = key.mac(body)
    return body[:-1] + _MAC_OPEN + mac.encode("ascii") + b'"}\n', mac


def signed_part(line: bytes) -> tuple[bytes, str] | None:
    """(the bytes the MAC covers, the MAC) of a line as orch writes it; None otherwise."""
    if len(line) <= _SUFFIX or not line.endswith(b'"}'):
        return None
    if line[-_SUFFIX : -_SUFFIX + len(_MAC_OPEN)] != _MAC_OPEN:
        return None
    mac = line[-MAC_HEX - 2 : -2]
    try:
        text = mac.decode("ascii")
    except UnicodeDecodeError:
        return None
    return line[:-_SUFFIX] + b"}", text


class Head(Struct, frozen=True):
    """What this machine last wrote to one log."""

    path: str  # the log's absolute path
    trace_id: str
    kid: str
    lines: int  # complete lines in the log after that write
    end: int  # the log's size in bytes after that write
    inode: int
    hash: str  # line_hash of the last line

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "path": self.path,
            "trace_id": self.trace_id,
            "kid": self.kid,
            "lines": self.lines,
            "end": self.end,
            "inode": self.inode,
            "hash": self.hash,
        }

    @classmethod
    def from_dict(cls, raw: Any) -> Head | None:
        if not isinstance(raw, dict):
            return None
        try:
            head = cls(
                path=str(raw["path"]),
                trace_id=str(raw["trace_id"]),
                kid=str(raw["kid"]),
                lines=int(raw["lines"]),
                end=int(raw["end"]),
                inode=int(raw["inode"]),
                hash=str(raw["hash"]),
            )
        except (KeyError, TypeError, ValueError):
            return None
        return head if head.lines >= 0 and head.end >= 0 else None


def head_path(log: Path) -> Path:
    name = hashlib.sha256(str(log.absolute()).encode("utf-8")).hexdigest()[:32]
    return state_dir() / HEADS / f"{name}.json"


def read_head(log: Path, where: Path | None = None) -> Head | None:
    """The head record of the log at `log` (None: none, unreadable, torn, or for another
    path)."""
    try:
        data = (where or head_path(log)).read_bytes()
    except OSError:
        return None
    record, _, rest = data.partition(b"\n")
    if rest[:64].decode("ascii", "replace") != hashlib.sha256(record).hexdigest():
        return None  # torn by a crash or a concurrent write: as if there were none
    try:
        head = Head.from_dict(json.loads(record))
    except ValueError:
        return None
    return head if head is not None and head.path == str(log.absolute()) else None


def write_head(head: Head, where: Path) -> None:
    """Write the head record in place: the record, then its sha256, in one `pwrite`.

    A reader sees the old record, the new one, or one whose checksum fails and which it
    treats as absent (a crash, never a cut). In place rather than a temporary file and a
    rename: the rename cost more than the rest of an append together (docs/storage.md).
    Not fsynced: a head lost in a power cut is only behind the log (the log is fsynced
    first), which reads as a crash, not as lines cut.
    """
    record = json.dumps(head.to_dict(), separators=(",", ":")).encode("utf-8")
    data = record + b"\n" + hashlib.sha256(record).hexdigest().encode("ascii") + b"\n"
    try:
        fd = os.open(where, os.O_RDWR | os.O_CREAT, 0o600)
    except FileNotFoundError:
        where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(where, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.pwrite(fd, data, 0)
        if os.fstat(fd).st_size > len(data):
            os.ftruncate(fd, len(data))
    finally:
        os.close(fd)
