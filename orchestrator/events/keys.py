"""orch's state folder, outside every repository, and the key kept there.

The folder is `ORCH_STATE_DIR`, else `$XDG_STATE_HOME/orch`, else `~/.local/state/orch`. It
holds, for this user on this machine:

- `event-key`: 32 random bytes (hex), mode 0600, in a folder created 0700. It signs every
  event line (HMAC-SHA256) and every high-risk approval. Nothing inside the agent's
  sandbox can read it, so nothing there can sign a line or compute an approval. It is
  created on first use: two processes racing to create it end with one key (the file is
  written under a temporary name, then hard-linked into place, which fails for the loser).
- `heads/<hash of the log's path>.json`: one head record per event log written here (see
  `orchestrator.events.chain`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import time
from pathlib import Path

from msgspec import Struct

from orchestrator.errors import OrchError, UsageError

STATE_ENV = "ORCH_STATE_DIR"
KEY_FILE = "event-key"
KEY_BYTES = 32
KID_LENGTH = 16  # hex digits of the key id each signed line carries


class KeyUnavailable(OrchError):
    """The key cannot be created or read (an unwritable state folder, a damaged key file)."""


def state_dir() -> Path:
    """orch's state folder for this user (created only when a key is first needed)."""
    explicit = os.environ.get(STATE_ENV)
    if explicit:
        return Path(explicit).expanduser().absolute()
    xdg = os.environ.get("XDG_STATE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "state"
    return base / "orch"


class Key(Struct, frozen=True):
    """The signing key; `kid` names it (a hash, so the id reveals nothing of the key)."""

    secret: bytes
    kid: str

    def __repr__(self) -> str:  # the secret is never shown
        return f"Key(kid={self.kid!r})"

    @classmethod
    def of(cls, secret: bytes) -> Key:
        kid = hashlib.sha256(b"orch event key id\0" + secret).hexdigest()[:KID_LENGTH]
        return cls(secret, kid)

    def mac(self, data: bytes) -> str:
        return hmac.new(self.secret, data, hashlib.sha256).hexdigest()

    def verifies(self, data: bytes, mac: str) -> bool:
        return hmac.compare_digest(self.mac(data), mac)

    def approval(self, trace_id: str, phase: int, command: str) -> str:
        """The key of a high-risk approval: one exact command, in one phase of one task."""
        message = "\0".join(("orch approval", trace_id, str(phase), command))
        return f"p{phase}-" + self.mac(message.encode("utf-8"))[:32]


def key_path() -> Path:
    return state_dir() / KEY_FILE


def load_key(*, create: bool = True) -> Key | None:
    """This user's key; created on first use when `create` (else None when there is none).

    Raises `KeyUnavailable` (one line) when the folder cannot be written or the key file is
    damaged or readable by others.
    """
    path = key_path()
    try:
        return _read(path)
    except (FileNotFoundError, NotADirectoryError):
        if not create:
            return None
    _create(path)
    try:
        return _read(path)
    except FileNotFoundError:
        raise KeyUnavailable(f"the event-log key {path} vanished as it was created") from None


def _read(path: Path) -> Key:
    for attempt in range(50):  # a key written without link() may be seen half-written
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except (FileNotFoundError, NotADirectoryError):
            raise
        except OSError as exc:
            raise KeyUnavailable(
                f"cannot read the event-log key {path}: {exc.strerror or exc}"
            ) from None
        try:
            mode = os.fstat(fd).st_mode
            text = os.read(fd, 4 * KEY_BYTES).decode("ascii", "replace").strip()
        finally:
            os.close(fd)
        if mode & 0o077:
            raise KeyUnavailable(
                f"the event-log key {path} can be read by others (mode {mode & 0o777:o}); "
                f"run: chmod 600 {path}"
            )
        try:
            secret = bytes.fromhex(text)
        except ValueError:
            secret = b""
        if len(secret) == KEY_BYTES:
            return Key.of(secret)
        if attempt < 49:
            time.sleep(0.02)
    raise KeyUnavailable(
        f"the event-log key {path} is damaged; move it away (logs it signed will then read "
        "as signed with another key)"
    )


def _create(path: Path) -> None:
    folder = path.parent
    try:
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(folder, 0o700)
        temp = folder / f".{KEY_FILE}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            # os.urandom is what `secrets.token_bytes` returns; the `secrets` module's import
            # (random, base64) would cost every command that reads a log
            os.write(fd, (os.urandom(KEY_BYTES).hex() + "\n").encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temp, path)  # fails if another process got there first: its key stands
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: exclusive create, then write
            _create_in_place(path, temp)
        finally:
            temp.unlink(missing_ok=True)
        _sync_folder(folder)
    except KeyUnavailable:
        raise
    except OSError as exc:
        raise KeyUnavailable(
            f"cannot create the event-log key in {folder}: {exc.strerror or exc} "
            f"(set {STATE_ENV} to a folder you can write, outside the repository)"
        ) from None


def _create_in_place(path: Path, temp: Path) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    try:
        os.write(fd, temp.read_bytes())
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def inside(path: Path, root: Path) -> bool:
    """True when `path` is `root` or lies under it (both resolved)."""
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def signing_key_for(root: Path) -> Key:
    """The key for logs in the repository at `root`, created if need be; refused (one line,
    before anything is written) when the state folder lies inside that repository, where
    the agent could read it."""
    if inside(state_dir(), root):
        raise UsageError(
            f"orch's state folder {state_dir()} is inside the repository; set {STATE_ENV} "
            "to a folder outside it (the key that signs event logs must stay out of the "
            "agent's reach)"
        )
    key = load_key(create=True)
    assert key is not None  # load_key creates it or raises
    return key
