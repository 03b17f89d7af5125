"""The sandbox every command of the agent runs in: bubblewrap (`bwrap`) on Linux.

A `Sandbox` describes one project's jail; `Sandbox.argv(command)` is the command line that
runs `command` inside it:

- the project's working tree read-write, with orch's records (`plans/`, `memories/`,
  `NOTES.md`, `.orch/`) and `.git` bound read-only over it;
- the system (`/usr`, `/bin`, `/lib*`, `/etc`, `/opt`...) read-only, and so are the
  Python installations and the `PATH` folders that live elsewhere (a venv's interpreter
  under the home folder, pyenv), so the project's tools run;
- the home folder an empty tmpfs (`HOME` points at it), `/tmp` a private tmpfs, orch's
  state folder hidden, variables that look like secrets left out of the environment;
- no network unless asked for (`--unshare-net`), a new pid namespace, no capabilities and
  no further user namespaces, a new session; when bwrap or orch dies, everything in the
  sandbox is killed (`--die-with-parent`), and when the command ends, so does whatever it
  left running (the pid namespace goes with its first process).

`RunRecords` keeps, under orch's cache folder, one file per process group running now, so
that a later orch process (a resume after a crash) kills what a dead one left behind.

The mode "off" runs the command with a plain `/bin/sh -c`, as orch did before this module:
no jail at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path

from orchestrator.errors import OrchError, UsageError

RUNS_FOLDER = "sandbox"  # under orch's cache folder (.orch/): one record per running group
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|^ANTHROPIC_|^OPENAI_|^AWS_",
    re.IGNORECASE,
)
INSTALL_HINT = (
    "the sandbox needs bubblewrap (bwrap), which is not installed: "
    "`sudo apt-get install bubblewrap` (Debian, Ubuntu), `sudo dnf install bubblewrap` "
    '(Fedora), `sudo pacman -S bubblewrap` (Arch); or set sandbox = "off" under '
    "[policy] in orch.toml to run commands without one"
)


class Mode(StrEnum):
    BWRAP = "bwrap"
    OFF = "off"


class SandboxUnavailable(OrchError):
    """The sandbox cannot run here: bwrap is missing, or fails to set up a namespace."""


def mode_of(value: str) -> Mode:
    try:
        return Mode(value)
    except ValueError:
        known = ", ".join(repr(m.value) for m in Mode)
        raise UsageError(f"[policy] sandbox must be one of {known}, not {value!r}") from None


@dataclass(frozen=True)
class Mount:
    """One bwrap mount: `option` (with `source` when it takes one) at `dest`."""

    option: str
    dest: str
    source: str | None = None

    @property
    def depth(self) -> int:
        return len(Path(self.dest).parts)

    def args(self) -> list[str]:
        return [self.option, *([self.source] if self.source is not None else []), self.dest]


# A parent is mounted before what lies under it; at the same path a tmpfs goes first.
_ORDER = {"--tmpfs": 0, "--symlink": 1, "--ro-bind": 2, "--bind": 3, "--ro-bind-try": 4}


@dataclass(frozen=True)
class Sandbox:
    """The jail for the project at `root`; `read_only` are paths under it kept read-only."""

    root: Path
    read_only: tuple[Path, ...] = ()
    mode: Mode = Mode.BWRAP
    network: bool = False
    extra_read_only: tuple[str, ...] = ()  # more host paths to show read-only (`~` allowed)
    cache: Path | None = None  # orch's cache folder: where running groups are recorded
    writable: tuple[Path, ...] = ()  # paths under a read-only one kept writable (deeper)
    home: Path = field(default_factory=lambda: Path(os.path.expanduser("~")))

    @property
    def runs(self) -> RunRecords | None:
        return RunRecords.of(self.cache) if self.cache is not None else None

    # the command line ------------------------------------------------------------------------
    def argv(self, command: str) -> list[str]:
        if self.mode is Mode.OFF:
            return ["/bin/sh", "-c", command]
        return [*self._bwrap(), "--", "/bin/sh", "-c", command]

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.mode is Mode.OFF:
            return env
        env = {k: v for k, v in env.items() if not SECRET_NAME.search(k)}
        env["HOME"] = str(self.home)
        env["TMPDIR"] = "/tmp"
        return env

    def _bwrap(self) -> list[str]:
        bwrap = _bwrap_path()
        flags = _namespace_flags(bwrap, self.network) if bwrap else []
        mounts = sorted(self.mounts(), key=lambda m: (m.depth, _ORDER.get(m.option, 9)))
        args = [bwrap or "bwrap", *flags, "--die-with-parent", "--new-session"]
        args += ["--dev", "/dev", "--tmpfs", "/dev/shm", "--proc", "/proc"]
        for mount in mounts:
            args += mount.args()
        return [*args, "--chdir", str(self.root.resolve())]

    def mounts(self) -> list[Mount]:
        root = self.root.resolve()
        out: list[Mount] = []
        for name in SYSTEM_DIRS:
            path = Path(name)
            if path.is_symlink():
                out.append(Mount("--symlink", name, os.readlink(path)))
            elif path.is_dir():
                out.append(Mount("--ro-bind", name, name))
        out += [Mount("--tmpfs", "/tmp"), Mount("--tmpfs", "/var/tmp")]
        if self.home != Path("/"):
            out.append(Mount("--tmpfs", str(self.home)))
        for tool in _tool_dirs(root, self.home):
            out.append(Mount("--ro-bind", str(tool), str(tool)))
        for extra in self.extra_read_only:
            path = Path(os.path.expanduser(extra)).absolute()
            out.append(Mount("--ro-bind-try", str(path), str(path)))
        out.append(Mount("--bind", str(root), str(root)))
        for path in self.read_only:
            out += _read_only_mounts(root, path)
        for path in self.writable:
            if path.is_dir() and _within(root, path.resolve()):
                out.append(Mount("--bind", str(path.resolve()), str(path.resolve())))
        if self.network:
            resolv = Path("/etc/resolv.conf").resolve()
            if resolv.exists() and not _within(Path("/etc"), resolv):
                out.append(Mount("--ro-bind", str(resolv), str(resolv)))
        for hidden in _state_dirs(self.home):
            if any(_within(Path(m.dest), hidden) for m in out if m.option != "--tmpfs"):
                out.append(Mount("--tmpfs", str(hidden)))
        return out

    # checks -------------------------------------------------------------------------------
    def check(self) -> None:
        """Raise SandboxUnavailable (one line) when commands cannot run in this sandbox."""
        if self.mode is Mode.OFF:
            return
        if _bwrap_path() == "":
            raise SandboxUnavailable(INSTALL_HINT)
        problem = _probe(tuple(self._bwrap()))
        if problem:
            raise SandboxUnavailable(
                f"the sandbox cannot start here ({problem}); see docs/security.md, or set "
                'sandbox = "off" under [policy] in orch.toml to run commands without one'
            )


def bwrap_installed() -> bool:
    """Whether bubblewrap is on the PATH (whether it can start here is `check`'s part)."""
    return _bwrap_path() != ""


def off_notice() -> str:
    return (
        'the sandbox is off ([policy] sandbox = "off"): the agent\'s shell commands and the '
        "gate commands run with your rights, your home folder and the network"
    )


# what bwrap can do here ---------------------------------------------------------------------


def _bwrap_path() -> str:
    return shutil.which("bwrap") or ""


@cache
def _supports_disable_userns(bwrap: str) -> bool:
    try:
        out = subprocess.run(
            [bwrap, "--help"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return "--disable-userns" in out.stdout + out.stderr


@cache
def _user_namespaces_work(bwrap: str) -> bool:
    """Whether bwrap can make a user namespace here (a setuid bwrap may refuse)."""
    argv = [bwrap, "--unshare-user", "--ro-bind", "/", "/", "--", "/bin/true"]
    try:
        return subprocess.run(argv, capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _namespace_flags(bwrap: str, network: bool) -> list[str]:
    flags = ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        flags.append("--unshare-net")
    if _user_namespaces_work(bwrap):
        # In its own user namespace root would keep every capability there, and could
        # unmount the read-only binds: drop them all, and forbid nesting another namespace.
        flags.append("--unshare-user")
        if _supports_disable_userns(bwrap):
            flags.append("--disable-userns")
    return [*flags, "--cap-drop", "ALL"]


_PROBED: dict[tuple[str, ...], str] = {}


def _probe(args: tuple[str, ...]) -> str:
    """'' when `args` can start a sandbox, else the first line bwrap printed."""
    if args not in _PROBED:
        try:
            done = subprocess.run(
                [*args, "--", "/bin/true"], capture_output=True, text=True, timeout=30, check=False
            )
            text = (done.stderr or done.stdout).strip().splitlines()
            _PROBED[args] = "" if done.returncode == 0 else (text[0] if text else "bwrap failed")
        except (OSError, subprocess.SubprocessError) as exc:
            _PROBED[args] = str(exc)
    return _PROBED[args]


# paths ---------------------------------------------------------------------------------------


def _within(parent: Path, path: Path) -> bool:
    return path == parent or path.is_relative_to(parent)


def _tool_dirs(root: Path, home: Path) -> list[Path]:
    """Host folders the project's tools need, outside the system folders and the tree."""
    found: list[Path] = []
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    prefixes.add(str(Path(sys.executable).resolve().parent.parent))
    venv_cfg = root / ".venv" / "pyvenv.cfg"
    with contextlib.suppress(OSError):
        for line in venv_cfg.read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                prefixes.add(str(Path(value.strip()).resolve().parent))
    if os.environ.get("PYENV_ROOT"):
        prefixes.add(os.environ["PYENV_ROOT"])
    candidates = [Path(p) for p in prefixes]
    candidates += [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    shown = [Path(d) for d in SYSTEM_DIRS]
    real = sorted({p.resolve() for p in candidates if p.is_absolute() and p.is_dir()})
    for path in real:  # parents sort before their children
        if any(_within(s, path) for s in [*shown, *found, root]):
            continue  # shown already, or the tree itself
        if _within(path, home) or _within(path, root):
            continue  # the whole home folder, or a folder holding the tree
        found.append(path)
    return found


def _read_only_mounts(root: Path, path: Path) -> list[Mount]:
    """`path` (under `root`) read-only; for `.git` as a file (a worktree), its git folders."""
    real = path.resolve() if path.exists() else path
    if not path.exists() or not _within(root, real):
        return []
    mounts = [Mount("--ro-bind", str(real), str(real))]
    if path.name == ".git" and path.is_file():
        for folder in _worktree_git_dirs(path):
            mounts.append(Mount("--ro-bind", str(folder), str(folder)))
    return mounts


def _worktree_git_dirs(dotgit: Path) -> list[Path]:
    try:
        text = dotgit.read_text(encoding="utf-8").strip()
    except OSError:
        return []
    if not text.startswith("gitdir:"):
        return []
    gitdir = (dotgit.parent / text.removeprefix("gitdir:").strip()).resolve()
    folders = [gitdir]
    with contextlib.suppress(OSError):
        common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
        folders.append(common)
    return [f for f in folders if f.is_dir()]


def _state_dirs(home: Path) -> list[Path]:
    """orch's state folder (its keys), wherever the environment puts it."""
    out = []
    if os.environ.get("ORCH_STATE_DIR"):
        out.append(Path(os.environ["ORCH_STATE_DIR"]))
    state_home = os.environ.get("XDG_STATE_HOME") or str(home / ".local" / "state")
    out.append(Path(state_home) / "orch")
    return [p.resolve() for p in out if p.is_absolute() and p.is_dir()]


# running groups, recorded so that a later orch process can kill what a dead one left --------


def start_time(pid: int) -> str | None:
    """The kernel's start time of `pid` (field 22 of /proc/<pid>/stat), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


@dataclass(frozen=True)
class RunRecords:
    folder: Path

    @classmethod
    def of(cls, cache: Path) -> RunRecords:
        """The records kept under orch's cache folder `cache`."""
        return cls(cache / RUNS_FOLDER)

    def add(self, pid: int, command: str) -> Path | None:
        """Record process group `pid` (a new session's leader) as running for this process."""
        record = {
            "v": 1,
            "pgid": pid,
            "start": start_time(pid),
            "orch_pid": os.getpid(),
            "orch_start": start_time(os.getpid()),
            "command": command[:300],
        }
        path = self.folder / f"{pid}.json"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(record), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            return None  # a cache we cannot write: the group is still killed at the step's end
        return path

    def remove(self, path: Path | None) -> None:
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()

    def sweep(self) -> list[int]:
        """Kill the groups recorded by dead orch processes, and this process's own; the
        groups of another live orch process are left alone. Returns the groups killed."""
        killed: list[int] = []
        try:
            paths = sorted(self.folder.glob("*.json"))
        except OSError:
            return killed
        for path in paths:
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
                pgid, start = int(record["pgid"]), record.get("start")
                owner, owner_start = int(record["orch_pid"]), record.get("orch_start")
            except (OSError, ValueError, KeyError, TypeError):
                self.remove(path)
                continue
            owner_alive = owner != os.getpid() and start_time(owner) == owner_start
            if owner_alive and owner_start is not None:
                continue
            if kill_group(pgid, start):
                killed.append(pgid)
            self.remove(path)
        return killed


def kill_group(pgid: int, start: str | None = None) -> bool:
    """SIGKILL process group `pgid`, unless its leader's pid now names another process."""
    leader_start = start_time(pgid)
    if leader_start is not None and start is not None and leader_start != start:
        return False  # the pid was reused by a process that is not ours
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True
