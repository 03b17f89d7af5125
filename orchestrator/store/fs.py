"""Storage rules every writer follows: atomic writes, locks, paths kept in the repository.

- `atomic_write`: temp file in the same folder, fsync, `os.replace`, fsync of the folder.
  A reader sees the old file or the new one, never half of either.
- `file_lock`: an inter-process lock (`flock` on a lock file) around every read-modify-write.
  Lock files live in the git-ignored `.orch/locks/`; the kernel releases a lock when its
  process dies, so a crash never leaves one behind.
- `confine`: a user- or model-supplied path is resolved against the repository root and
  refused if it is absolute, climbs with `..`, or leaves the root through a symlink.
- `readable`: the one check before orch reads a file for the agent or an index: a regular
  file inside the repository, not a link out, a loop, a FIFO, a socket or a device.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from orchestrator.errors import Locked, PathEscape

DEFAULT_LOCK_TIMEOUT = 30.0
LOCK_POLL = 0.05  # seconds between attempts while another process holds a lock
TEMP_SUFFIX = ".tmp"
_TEMP_NAME = re.compile(r"^\.(?P<target>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.tmp$")


def atomic_write(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `data` so that a crash leaves the old content or the new one.

    The file keeps its permission bits when it exists (`mode` sets them otherwise; 0o644).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    keep: int | None = None
    if mode is None:
        with contextlib.suppress(OSError):
            keep = os.stat(path).st_mode & 0o7777
    mode = keep if keep is not None else (0o644 if mode is None else mode)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}{TEMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        if keep is not None:
            os.chmod(tmp, keep)  # os.open's mode passes through the umask
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def readable(root: Path, path: Path) -> tuple[str | None, os.stat_result | None]:
    """Whether orch may read `path` for the agent or an index: (None, its stat) for a
    regular file that stays inside `root` (symlinks followed), else (why not, None): a link
    out of the repository or in a loop, a FIFO, a socket, a device (reading one could hang
    or leak what is outside)."""
    try:
        real = path.resolve(strict=True)
    except RuntimeError:
        return "a symlink loop; skipped", None
    except FileNotFoundError:
        return ("a dangling symlink; skipped" if path.is_symlink() else "gone"), None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink loop; skipped", None
        return f"unreadable ({exc.strerror}); skipped", None
    if not real.is_relative_to(root.resolve()):
        return "a symlink to a file outside the repository; not read", None
    try:
        st = os.stat(real)
    except OSError as exc:
        return f"unreadable ({exc.strerror}); skipped", None
    if stat.S_ISREG(st.st_mode):
        return None, st
    if stat.S_ISDIR(st.st_mode):
        return "a folder", None
    kind = (
        "a FIFO"
        if stat.S_ISFIFO(st.st_mode)
        else ("a socket" if stat.S_ISSOCK(st.st_mode) else "a device")
    )
    return f"{kind}, not a file; not read", None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def sweep_temps(folder: Path) -> list[Path]:
    """Remove the temp files that atomic writes of processes now dead left in `folder`.

    A process killed between creating its temp file and renaming it leaves the temp behind
    (the target itself is intact). Temps of a live process are left alone.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP_NAME.match(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        if _alive(int(match.group("pid"))):
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file in `folder` durable."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def file_lock(
    lock_dir: Path, name: str, *, timeout: float | None = None, what: str | None = None
) -> Iterator[None]:
    """Hold the inter-process lock `name`; wait up to `timeout` seconds (0: do not wait;
    None: `DEFAULT_LOCK_TIMEOUT`). Raises `Locked` when the wait runs out. Not re-entrant:
    a second `file_lock` of the same name waits, even in the same process."""
    if timeout is None:
        timeout = DEFAULT_LOCK_TIMEOUT
    lock_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_dir / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise Locked(what or name) from None
                time.sleep(LOCK_POLL)
        yield
    finally:
        os.close(fd)  # closing the file releases the lock


def confine(root: Path, rel: str | os.PathLike[str]) -> Path:
    """The absolute path of repository-relative `rel`, or PathEscape if it leaves `root`."""
    text = os.fspath(rel)
    pure = PurePosixPath(text.replace("\\", "/"))
    if not text or pure.is_absolute() or ".." in pure.parts or "\x00" in text:
        raise PathEscape(text, root)
    real_root = root.resolve()
    target = (real_root / pure).resolve(strict=False)
    if target != real_root and not target.is_relative_to(real_root):
        raise PathEscape(text, root)
    return real_root / pure


def relative_to_root(root: Path, path: Path) -> str:
    """`path` as a POSIX repository-relative string (for citations, logs, messages)."""
    return path.resolve().relative_to(root.resolve()).as_posix()
