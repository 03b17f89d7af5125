"""The high-risk command policy: the second layer behind the sandbox.

`classify(command, root)` reads a command line with `cmdline.parse` and names the first
rule it breaks. A high-risk command waits at the HIGH_RISK_APPROVAL_GATE unless a regex in
`[policy] allow_high_risk` matches the whole line (`allowed`).

What it looks through, to the program that really runs:
- wrappers (`nice`, `timeout`, `env`, `xargs`, `exec`, `nohup`, `stdbuf`, `command`,
  `busybox`, `setsid`, `flock`, `strace`, `watch`, `script`...) and keywords (`if`, `do`...);
- shells given a string (`sh -c`, `bash -lc`, `eval`, `su -c`, `env -S`), a script file
  (read and classified when it exists; one the same line writes is opaque), or their input
  (`echo ... | sh` is classified; `curl ... | sh` is a pipe into a shell);
- variables the line assigns (`x=rm; $x -rf pkg`); a program chosen at run time
  otherwise (`$(...)`, an unknown `$x`) is opaque, and so high risk;
- command substitutions, which run too;
- interpreters with inline code (`python -c`, `node -e`, `perl -e`, `ruby -e`...): code
  that deletes, writes, spawns, reaches the network or names a path outside;
- git's own options (`-C`, `-c`, `--git-dir`) before its verb, and the verbs that destroy
  work or history, or change the repository's configuration and remotes;
- publishing (npm/yarn/pnpm publish, twine upload, cargo publish, gem push...), installs
  from URLs, uploads and remote shells, `docker run --privileged` and host mounts, killing
  processes the command did not start, formatting disks, scheduling commands for later;
- paths: anything that writes orch's records or `.git`, and any path outside the tree
  (absolute, `~`, `$HOME`, `..`).

It is a guard against accidents and a tripwire for the obvious; the sandbox is what
holds when a command gets past it.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.config import PolicyConfig
from orchestrator.engine.cmdline import SUBST, Simple, Unreadable, expand, parse
from orchestrator.store.layout import Layout

SAFE_OUTSIDE = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero")
MAX_DEPTH = 6  # nested strings (sh -c "eval '...'") deeper than this are opaque
MAX_SCRIPT = 64 * 1024  # a script file read to be classified

DELETERS = {"rm", "rmdir", "unlink", "shred", "srm", "wipe"}
AS_ANOTHER_USER = {"sudo", "su", "doas", "pkexec", "runuser"}
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash"}
DISK = {"mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "blkdiscard"}
SCHEDULERS = {"crontab", "at", "batch", "systemd-run"}
REMOTE = {"ssh", "scp", "sftp", "nc", "ncat", "netcat", "socat", "telnet"}
KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}"}
LOOP_HEADS = {"for", "case", "select", "function", "esac", "in"}
URL = re.compile(r"^(?:[a-z0-9+]+://|git\+|git@)", re.IGNORECASE)


@dataclass(frozen=True)
class Risk:
    rule: str
    detail: str


@dataclass
class Context:
    """What one classification knows: the tree, orch's records, the line's variables."""

    root: Path
    records: tuple[Path, ...]
    env: dict[str, str] = field(default_factory=dict)
    written: set[Path] = field(default_factory=set)  # files the line writes by redirection
    depth: int = 0

    @classmethod
    def for_root(cls, root: Path) -> Context:
        layout = Layout(root.resolve())
        records = (layout.plans, layout.memories, layout.notes, layout.cache)
        return cls(layout.root, (*records, layout.root / ".git"))

    def nested(self) -> Context:
        return Context(self.root, self.records, dict(self.env), self.written, self.depth + 1)

    def resolve(self, value: str) -> Path:
        value = _home_word(value)
        path = Path(os.path.expanduser(value))
        return Path(os.path.normpath(path if path.is_absolute() else self.root / path))


def _home_word(value: str) -> str:
    for name in ("${HOME}", "$HOME"):
        if value == name or value.startswith(name + "/"):
            return "~" + value[len(name) :]
    return value


def allowed(command: str, policy: PolicyConfig) -> bool:
    return any(re.fullmatch(rx, command.strip()) for rx in policy.allow_high_risk)


def classify(command: str, root: Path) -> Risk | None:
    """The first high-risk rule `command` breaks, or None when it is ordinary."""
    return classify_text(command, Context.for_root(root))


def classify_text(text: str, ctx: Context) -> Risk | None:
    if ctx.depth > MAX_DEPTH:
        return Risk("opaque", "commands nested too deep to read")
    try:
        line = parse(text)
    except Unreadable as exc:
        return Risk("opaque", f"the command line cannot be read ({exc})")
    for inner in line.substitutions:
        risk = classify_text(inner, ctx.nested())
        if risk:
            return risk
    for cmd in line.commands:
        risk = _redirects(cmd, ctx) or _simple(cmd, ctx)
        if risk:
            return risk
    return None


# one simple command ----------------------------------------------------------------------------


def _redirects(cmd: Simple, ctx: Context) -> Risk | None:
    for op, target in cmd.redirects:
        if "/dev/tcp/" in target or "/dev/udp/" in target:
            return Risk("network", f"`{target}` opens a network connection")
        if op not in ("<", "<&"):
            risk = _written_path(target, ctx, "a redirection writes")
            if risk:
                return risk
            ctx.written.add(ctx.resolve(target))
    return None


def _written_path(value: str, ctx: Context, what: str) -> Risk | None:
    if value in SAFE_OUTSIDE:
        return None
    path = ctx.resolve(value)
    if _outside(path, ctx):
        return Risk("outside", f"{what} `{value}`, outside the repository")
    record = _record(path, ctx)
    if record is not None:
        return Risk("records", f"{what} `{value}`: {record.name} is orch's or git's own")
    return None


def _outside(path: Path, ctx: Context) -> bool:
    real = _real(path)
    return real != ctx.root and not real.is_relative_to(ctx.root)


def _real(path: Path) -> Path:
    """`path` with the symbolic links of its existing part resolved."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _record(path: Path, ctx: Context) -> Path | None:
    for record in ctx.records:
        if path == record or path.is_relative_to(record):
            return record
    return None


def _simple(cmd: Simple, ctx: Context) -> Risk | None:
    words = _assignments(list(cmd.words), ctx)
    while words and (words[0] in KEYWORDS or words[0] in LOOP_HEADS):
        if words[0] in LOOP_HEADS:
            return None  # `for x in a b`: the loop's body is its own command
        words = words[1:]
    if not words:
        return None
    program = words[0]
    if "$" in program or SUBST in program:
        expanded = _expanded_program(words, ctx)
        if expanded is None:
            return Risk("opaque", f"the program is chosen at run time (`{program}`)")
        return _simple(Simple(expanded, [], cmd.pipe_from, cmd.stdin_text), ctx)
    return _program(words, cmd, ctx)


def _assignments(words: list[str], ctx: Context) -> list[str]:
    """Drop leading NAME=VALUE words, remembering them (and `export NAME=VALUE`)."""
    declare = words[:1] in (["export"], ["declare"], ["local"], ["readonly"], ["typeset"])
    rest = words[1:] if declare else words
    while rest and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", rest[0]):
        name, _, value = rest[0].partition("=")
        known = expand(value, ctx.env)
        ctx.env[name] = known if known is not None else f"${{{name}}}"
        if known is None:
            ctx.env.pop(name)
        rest = rest[1:]
    return [] if declare else rest


def _expanded_program(words: list[str], ctx: Context) -> list[str] | None:
    if SUBST in words[0] or words[0] in ('"$@"', "$@", "$*"):
        return None
    value = expand(words[0], ctx.env)
    if value is None or "$" in value:
        return None
    split = value.split(ctx.env.get("IFS", " \t\n")[0] if "IFS" in ctx.env else None)
    return [*split, *words[1:]] if split else None


# programs --------------------------------------------------------------------------------------


def _program(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    name = os.path.basename(words[0])
    unwrap = WRAPPERS.get(name)
    if unwrap is not None:
        inner = unwrap(words[1:], ctx)
        if isinstance(inner, Risk) or inner is None:
            return inner
        if not inner:
            return None
        return _simple(Simple(inner, [], cmd.pipe_from, cmd.stdin_text), ctx)
    check = _checker(name)
    if check is not None:
        risk = check(words, cmd, ctx)
        if risk:
            return risk
    if "/" in words[0]:
        risk = _script(words[0], ctx, f"`{words[0]}`")
        if risk:
            return risk
    return _paths(name, words[1:], ctx)


def _checker(name: str) -> Checker | None:
    if name in PROGRAMS:
        return PROGRAMS[name]
    if re.fullmatch(r"python[0-9.]*|pypy[0-9.]*", name):
        return _python
    if name.startswith("mkfs") or name in DISK:
        return _disk
    return None


def _paths(name: str, args: list[str], ctx: Context) -> Risk | None:
    """What the arguments name: orch's records for a writer, anything outside for all."""
    for value in write_targets(name, args):
        risk = _written_path(_home_word(value), ctx, f"`{name}` changes")
        if risk:
            return risk
    values = [a.split("=", 1)[1] if a.startswith("-") and "=" in a else a for a in args]
    for value in [_home_word(v) for v in values if v and not v.startswith("-")]:
        if value in SAFE_OUTSIDE or "://" in value:
            continue
        if _names_outside(value, ctx, cd=name in ("cd", "pushd")):
            return Risk("outside", f"`{value}` is outside the repository")
    return None


def _names_outside(value: str, ctx: Context, *, cd: bool = False) -> bool:
    if not (value.startswith(("/", "~")) or ".." in Path(value).parts or cd):
        return False
    path = Path(os.path.expanduser(value))
    if value.startswith("/") and not Path("/", *path.parts[1:2]).exists():
        return False  # "/api/v1" in a grep pattern is not a path on this machine
    return _outside(ctx.resolve(value), ctx)


def _script(path: str, ctx: Context, what: str) -> Risk | None:
    """A script the command runs: one this line writes is opaque; one in the tree is read."""
    resolved = ctx.resolve(path)
    if resolved in ctx.written:
        return Risk("opaque", f"{what} runs a file the same command line writes")
    if _outside(resolved, ctx) or not resolved.is_file():
        return None
    try:
        data = resolved.read_bytes()[:MAX_SCRIPT]
    except OSError:
        return None
    first = data.split(b"\n", 1)[0]
    if b"\0" in data[:1024] or (first.startswith(b"#!") and b"sh" not in first):
        return None
    return classify_text(data.decode("utf-8", "replace"), ctx.nested())


Checker = Callable[[list[str], Simple, Context], Risk | None]
Unwrap = Callable[[list[str], Context], "list[str] | Risk | None"]


# options ---------------------------------------------------------------------------------------


def options(
    args: list[str], takes_value: frozenset[str] = frozenset(), positional: int = 0
) -> tuple[dict[str, str], list[str]]:
    """(the options before the first operand, the words from it on); `positional` operands
    belong to the program itself (timeout's duration, flock's lock file) and are skipped."""
    found: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg.startswith("--"):
            key, eq, value = arg.partition("=")
            if not eq and key in takes_value and i + 1 < len(args):
                value, i = args[i + 1], i + 1
            found[key] = value
        elif arg.startswith("-") and len(arg) > 1:
            i = _short_cluster(args, i, takes_value, found)
        elif positional:
            positional -= 1
        else:
            break
        i += 1
    return found, args[i:][positional:]


def _short_cluster(
    args: list[str], i: int, takes_value: frozenset[str], found: dict[str, str]
) -> int:
    arg = args[i]
    for j in range(1, len(arg)):
        flag = "-" + arg[j]
        if flag in takes_value:
            attached = arg[j + 1 :]
            if attached:
                found[flag] = attached
                return i
            found[flag] = args[i + 1] if i + 1 < len(args) else ""
            return i + 1
        found[flag] = ""
    return i


def _opts(*names: str) -> frozenset[str]:
    return frozenset(names)


# wrappers: the words of the command they run --------------------------------------------------


def _plain(takes: frozenset[str] = frozenset(), positional: int = 0) -> Unwrap:
    def unwrap(args: list[str], ctx: Context) -> list[str] | Risk | None:
        return options(args, takes, positional)[1]

    return unwrap


def _with_string(takes: frozenset[str], string_opt: str, positional: int = 0) -> Unwrap:
    """A wrapper whose `string_opt` holds a whole shell command (flock -c, script -c)."""

    def unwrap(args: list[str], ctx: Context) -> list[str] | Risk | None:
        found, rest = options(args, takes | {string_opt}, positional)
        if string_opt in found:
            return classify_text(found[string_opt], ctx.nested()) or []
        return rest

    return unwrap


def _env(args: list[str], ctx: Context) -> list[str] | Risk | None:
    found, rest = options(args, _opts("-u", "--unset", "-C", "--chdir", "-S", "--split-string"))
    split = found.get("-S", found.get("--split-string"))
    while rest and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", rest[0]):
        rest = rest[1:]
    if split is not None:
        try:
            return [*shlex.split(split), *rest]
        except ValueError:
            return Risk("opaque", "`env -S` with a string that cannot be read")
    return rest


def _xargs(args: list[str], ctx: Context) -> list[str] | Risk | None:
    takes = _opts(
        "-I", "-n", "-P", "-L", "-s", "-d", "-E", "-a", "--arg-file", "--max-args",
        "--max-procs", "--delimiter", "--replace", "--max-lines", "--eof",
    )  # fmt: skip
    return options(args, takes)[1] or ["echo"]


def _command(args: list[str], ctx: Context) -> list[str] | Risk | None:
    found, rest = options(args)
    return [] if "-v" in found or "-V" in found else rest


def _watch(args: list[str], ctx: Context) -> list[str] | Risk | None:
    rest = options(args, _opts("-n", "--interval", "-d", "-q"))[1]
    return classify_text(" ".join(rest), ctx.nested()) or []


WRAPPERS: dict[str, Unwrap] = {
    "nice": _plain(_opts("-n", "--adjustment")),
    "timeout": _plain(_opts("-s", "--signal", "-k", "--kill-after"), positional=1),
    "env": _env,
    "xargs": _xargs,
    "exec": _plain(_opts("-a")),
    "busybox": _plain(),
    "nohup": _plain(),
    "builtin": _plain(),
    "command": _command,
    "time": _plain(_opts("-f", "--format", "-o", "--output")),
    "stdbuf": _plain(_opts("-i", "-o", "-e", "--input", "--output", "--error")),
    "ionice": _plain(_opts("-c", "-n", "-p", "-P", "-u", "--class", "--classdata")),
    "setsid": _plain(),
    "chrt": _plain(positional=1),
    "taskset": _plain(positional=1),
    "flock": _with_string(_opts("-w", "-E", "--timeout", "--conflict-exit-code"), "-c", 1),
    "strace": _plain(_opts("-o", "-e", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-I", "-O", "-S")),
    "ltrace": _plain(_opts("-o", "-e", "-p", "-s", "-u", "-E", "-a", "-n")),
    "watch": _watch,
    "script": _with_string(_opts("-E", "-T", "-B", "-I", "-O", "--command"), "-c"),
    "unbuffer": _plain(),
    "chronic": _plain(),
    "fakeroot": _plain(),
    "caffeinate": _plain(),
    "catchsegv": _plain(),
}


# programs: the rules ---------------------------------------------------------------------------


def _positional(args: list[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


def _privilege(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    return Risk("privilege", f"`{os.path.basename(words[0])}` runs a command as another user")


def _delete(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    return Risk("delete", f"`{os.path.basename(words[0])}` deletes files")


def _overwrite(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    name = os.path.basename(words[0])
    if name == "dd" and not any(a.startswith("of=") for a in words[1:]):
        return None
    return Risk("delete", f"`{name}` overwrites file contents")


def _disk(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    return Risk("disk", f"`{os.path.basename(words[0])}` formats or partitions a disk")


def _find(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    args = words[1:]
    if "-delete" in args:
        return Risk("delete", "`find -delete` deletes files")
    for i, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
            risk = _simple(Simple(args[i + 1 : end]), ctx.nested())
            if risk:
                return risk
    return None


def _shell(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    name = os.path.basename(words[0])
    found, rest = options(words[1:], _opts("-o", "+o", "-O", "--rcfile", "--init-file"))
    if "-c" in found:
        return classify_text(rest[0] if rest else "", ctx.nested())
    if rest and "-s" not in found:
        if SUBST in rest[0]:
            return Risk("opaque", f"`{name}` runs a script made at run time")
        return _script(rest[0], ctx, f"`{name}`")
    return _stdin(cmd, ctx, name, lambda text: classify_text(text, ctx.nested()))


def _stdin(
    cmd: Simple, ctx: Context, name: str, judge: Callable[[str], Risk | None]
) -> Risk | None:
    """A shell or an interpreter reading its program from its input."""
    if cmd.stdin_text is not None:
        return judge(cmd.stdin_text)
    source = cmd.pipe_from
    if source is None or not source.words:
        return None
    program = os.path.basename(source.words[0])
    if program in ("echo", "printf") and not any(SUBST in w for w in source.words):
        args = [w for w in source.words[1:] if not re.fullmatch(r"-[neE]+", w)]
        return judge(" ".join(args).replace("\\n", "\n").replace("\\t", "\t"))
    return Risk("pipe-shell", f"pipes the output of `{program}` into `{name}`")


def _eval(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    return classify_text(" ".join(words[1:]), ctx.nested())


def _source(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    if len(words) < 2:
        return None
    if SUBST in words[1]:
        return Risk("opaque", f"`{words[0]}` runs code made at run time")
    return _script(words[1], ctx, f"`{words[0]}`")


# inline code of interpreters ---------------------------------------------------------------------

EFFECTS = (
    (
        "deletes files",
        r"rmtree|\bremove\(|unlink|rmdir|removedirs|rmSync|rm_rf|rm_r\b|File::Path|"
        r"\btruncate\b|\.rename\(|os\.replace|renameSync|FileUtils|shutil\.move",
    ),
    (
        "writes files",
        r"open\([^)]*,\s*['\"][^'\"]*[wax+]|write_text|write_bytes|writeFile|appendFile|"
        r"createWriteStream|File\.write|IO\.write|open\s*\(?\s*\w*\s*,?\s*['\"]\s*[>+]",
    ),
    (
        "starts other programs",
        r"subprocess|os\.system|os\.exec|os\.spawn|popen|child_process|execSync|spawn|"
        r"\bsystem\s*\(|\bexec\w*\s*\(|\beval\s*\(|__import__|importlib|\bqx\b|`|Kernel\.",
    ),
    (
        "reaches the network",
        r"socket|urllib|requests|http\.client|httpx|aiohttp|\bfetch\(|['\"](?:node:)?"
        r"(?:https?|net|dgram|tls)['\"]|IO::Socket|LWP|Net::|open-uri|ftplib|smtplib|paramiko",
    ),
    (
        "names a path outside the repository",
        r"expanduser|homedir|environ\[.HOME|ENV\[.HOME|~/|['\"]/|\.\./|\$HOME",
    ),
)
_EFFECTS = tuple((what, re.compile(rx)) for what, rx in EFFECTS)
CODE_OPTIONS = {
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "deno": ("eval",),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "php": ("-r",),
    "lua": ("-e",),
    "Rscript": ("-e",),
    "osascript": ("-e",),
}


def _code_risk(code: str, name: str) -> Risk | None:
    if SUBST in code:
        return Risk("opaque", f"`{name}` runs code made at run time")
    for what, rx in _EFFECTS:
        if rx.search(code):
            return Risk("interpreter", f"`{name}` runs inline code that {what}")
    return None


def _interpreter(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    name = os.path.basename(words[0])
    flags = CODE_OPTIONS.get(name, ())
    args = words[1:]
    for i, arg in enumerate(args):
        if arg in flags and i + 1 < len(args):
            return _code_risk(args[i + 1], name) or _in_place(args, ctx, name)
        if name in ("perl", "ruby") and re.fullmatch(r"-[a-zA-Z]*[eE]", arg) and i + 1 < len(args):
            return _code_risk(args[i + 1], name) or _in_place(args, ctx, name)
    if not _positional(args) or "-" in args:
        return _stdin(cmd, ctx, name, lambda code: _code_risk(code, name))
    return _in_place(args, ctx, name)


def _in_place(args: list[str], ctx: Context, name: str) -> Risk | None:
    """`perl -pi`, `sed -i`: the files named are written."""
    if not any(re.fullmatch(r"-[a-zA-Z]*i\S*|--in-place\S*", a) for a in args):
        return None
    for value in _positional(args):
        risk = _written_path(value, ctx, f"`{name} -i` changes")
        if risk:
            return risk
    return None


def _sed(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    return _in_place(words[1:], ctx, "sed")


def _python(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    name = os.path.basename(words[0])
    found, rest = options(words[1:], _opts("-c", "-m", "-W", "-X", "-Q"))
    if "-c" in found:
        return _code_risk(found["-c"], name)
    if "-m" in found:
        module = found["-m"]
        check = PROGRAMS.get(module)
        return check([module, *rest], cmd, ctx) if check is not None else None
    if not rest or rest[0] == "-":
        return _stdin(cmd, ctx, name, lambda code: _code_risk(code, name))
    return None


def _awk(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    found, rest = options(words[1:], _opts("-f", "-v", "-F", "--file", "--assign"))
    program = "" if "-f" in found or "--file" in found or not rest else rest[0]
    if re.search(r"\bsystem\s*\(|\|\s*getline|print[^;}]*[|>]", program):
        return Risk("interpreter", f"`{words[0]}` runs a program that starts commands or writes")
    return None


# packages, publishing, the network -------------------------------------------------------------

INDEX_OPTIONS = {"-i", "-f", "--index-url", "--extra-index-url", "--find-links", "--source", "-s"}
UPLOAD = re.compile(
    r"-d|--data.*|-F|--form.*|-T|--upload-file|--json|--post-(file|data)|--body-(file|data)"
)
SENDING = {"POST", "PUT", "DELETE", "PATCH"}
HOST_ACCESS = re.compile(
    r"--privileged|--(pid|net|network|ipc|uts|userns)=?host|--cap-add.*|--device.*|--security-opt.*"
)
PUBLISH_VERBS = {"publish", "unpublish", "deprecate", "upload", "push", "deploy", "release"}


def _publish(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    verbs = [a for a in words[1:3] if not a.startswith("-")]
    hit = next((v for v in verbs if v in PUBLISH_VERBS), None)
    if hit is not None:
        return Risk("publish", f"`{os.path.basename(words[0])} {hit}` publishes a package")
    return _install_url(words, cmd, ctx)


def _install_url(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    name = os.path.basename(words[0])
    args = words[1:]
    sub = next((a for a in args if not a.startswith("-")), "")
    if sub == "pip":  # uv pip install ...
        return _install_url(args, cmd, ctx)
    if sub not in ("install", "i", "add", "download", "wheel", "ci", "update", "upgrade"):
        return None
    for i, arg in enumerate(args):
        value = arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg
        if arg in INDEX_OPTIONS and i + 1 < len(args):
            value = args[i + 1]
        if URL.match(value):
            return Risk("install-url", f"`{name} {sub}` installs from a URL ({value})")
    if name in ("npm", "yarn", "pnpm", "bun") and ({"-g", "--global"} & set(args)):
        return Risk("outside", f"`{name} {sub} -g` installs outside the repository")
    return None


def _http(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    name = os.path.basename(words[0])
    args = words[1:]
    for i, arg in enumerate(args):
        flag, _, method = arg.partition("=")
        if UPLOAD.fullmatch(flag):
            return Risk("network", f"`{name} {flag}` sends data over the network")
        if not method and i + 1 < len(args):
            method = args[i + 1]
        if flag in ("-X", "--request", "--method") and method.upper() in SENDING:
            return Risk("network", f"`{name}` sends a {method.upper()} request")
    return None


def _remote(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    return Risk("network", f"`{os.path.basename(words[0])}` talks to another machine")


def _rsync(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    args = words[1:]
    if any(re.match(r"^[^/\s]*:", a) for a in _positional(args)):
        return Risk("network", "`rsync` copies to or from another machine")
    if any(a.startswith("--delete") for a in args):
        return Risk("delete", "`rsync --delete` deletes files")
    return None


def _docker(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    name = os.path.basename(words[0])
    args = words[1:]
    sub = next((a for a in args if not a.startswith("-")), "")
    if sub == "push":
        return Risk("publish", f"`{name} push` publishes an image")
    if sub in ("rm", "rmi", "kill") or (sub in DOCKER_GROUPS and "prune" in args):
        return Risk("delete", f"`{name} {sub}` deletes containers, images or volumes")
    if sub not in ("run", "create", "exec"):
        return None
    for i, arg in enumerate(args):
        pair = f"{arg}={args[i + 1]}" if i + 1 < len(args) else arg
        if HOST_ACCESS.fullmatch(arg) or HOST_ACCESS.fullmatch(pair):
            return Risk("docker", f"`{name} {sub} {arg}` gives the container the host")
        if arg in ("-v", "--volume", "--mount") and i + 1 < len(args):
            source = args[i + 1].replace("source=", "").split(":")[0].split(",")[0]
            if source.startswith(("/", "~")) and _outside(ctx.resolve(source), ctx):
                return Risk("docker", f"`{name} {sub}` mounts `{source}` from the host")
    return None


DOCKER_GROUPS = {"system", "volume", "image", "container", "network", "builder", "buildx"}


def _kill(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    name = os.path.basename(words[0])
    if name in ("pkill", "killall", "killall5"):
        return Risk("kill", f"`{name}` kills processes by name")
    args = words[1:]
    if args and args[0] in ("-s", "-n"):
        args = args[2:]
    elif args and args[0].startswith("-") and args[0] != "--":
        args = args[1:]
    targets = [a for a in args if a != "--"]
    for target in targets:
        if target in ("1", "0", "$PPID", "$$", "-$$") or re.fullmatch(r"-\d+", target):
            return Risk("kill", f"`{name} {target}` kills processes the command did not start")
    return None


def _schedule(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    name = os.path.basename(words[0])
    if name == "crontab" and words[1:] == ["-l"]:
        return None
    return Risk("persistence", f"`{name}` runs commands after this step ends")


def _make(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    found, _ = options(words[1:], _opts("-f", "--file", "--makefile", "-C", "--directory"))
    for key in ("-f", "--file", "--makefile"):
        if key in found and ctx.resolve(found[key]) in ctx.written:
            return Risk("opaque", "`make` runs a makefile the same command line writes")
    return None


# git ---------------------------------------------------------------------------------------------

GIT_VALUE_OPTIONS = _opts(
    "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env",
    "--super-prefix",
)  # fmt: skip
GIT_RUNS = re.compile(
    r"alias\..*|core\.(hookspath|sshcommand|pager|editor|fsmonitor|gitproxy|askpass|worktree)|"
    r"credential\..*|diff\..*|filter\..*|gpg\..*|sequence\.editor|protocol\..*|include.*|"
    r"uploadpack\..*|receive\..*|remote\..*|url\..*",
    re.IGNORECASE,
)


def _git(words: list[str], cmd: Simple, ctx: Context) -> Risk | None:
    found, rest = options(words[1:], GIT_VALUE_OPTIONS)
    for key in ("-C", "--git-dir", "--work-tree"):
        if key in found and _outside(ctx.resolve(found[key]), ctx):
            return Risk("outside", f"`git {key} {found[key]}` works outside the repository")
    for setting in [v for k, v in found.items() if k in ("-c", "--config-env")]:
        key = setting.split("=", 1)[0]
        if GIT_RUNS.fullmatch(key):
            return Risk("history", f"`git -c {key}` makes git run a command or go elsewhere")
    if not rest:
        return None
    verb, args = rest[0], rest[1:]
    rule = GIT_VERBS.get(verb)
    reason = rule(args) if rule is not None else None
    return Risk("history", reason) if reason else None


def _flags(args: list[str]) -> set[str]:
    return set(args)


def _git_push(args: list[str]) -> str | None:
    force = {"-f", "--force", "--force-with-lease", "--mirror", "--delete", "-d", "--prune"}
    if _flags(args) & force or any(a.startswith(("+", "--force", ":")) for a in args):
        return "force-push or remote delete"
    if any(URL.match(a) or a.startswith("/") for a in _positional(args)):
        return "git push to a URL or path that is not a configured remote"
    return None


def _git_reset(args: list[str]) -> str | None:
    hard = _flags(args) & {"--hard", "--merge", "--keep"}
    return f"git reset {min(hard)} discards work" if hard else None


def _git_checkout(args: list[str]) -> str | None:
    if "--" in args or "." in args or _flags(args) & {"-f", "--force", "--discard-changes"}:
        return "git checkout discards changes"
    return None


def _git_restore(args: list[str]) -> str | None:
    flags = _flags(args)
    staged_only = flags & {"--staged", "-S"} and not flags & {"--worktree", "-W"}
    return None if staged_only else "git restore discards changes"


def _git_branch(args: list[str]) -> str | None:
    if _flags(args) & {"-D", "-d", "--delete", "-M", "-m", "--move", "-f", "--force", "-C"}:
        return "git branch deletes, moves or overwrites a branch"
    return None


def _git_tag(args: list[str]) -> str | None:
    return "git tag deletes or moves a tag" if _flags(args) & {"-d", "--delete", "-f"} else None


def _git_stash(args: list[str]) -> str | None:
    return "git stash drop/clear deletes stashed work" if {"drop", "clear"} & _flags(args) else None


def _git_reflog(args: list[str]) -> str | None:
    return (
        "git reflog expire/delete deletes history" if {"expire", "delete"} & _flags(args) else None
    )


def _git_gc(args: list[str]) -> str | None:
    return "git gc --prune deletes objects" if any(a.startswith("--prune") for a in args) else None


GIT_CONFIG_READS = {"--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch"}
GIT_CONFIG_WRITES = {"--unset", "--unset-all", "--add", "--replace-all", "-e", "--edit"}


def _git_config(args: list[str]) -> str | None:
    flags = _flags(args)
    if flags & GIT_CONFIG_READS:
        return None
    if len(_positional(args)) >= 2 or flags & GIT_CONFIG_WRITES:
        return "git config changes the repository's configuration"
    return None


def _git_remote(args: list[str]) -> str | None:
    verbs = {"add", "set-url", "remove", "rm", "rename", "set-head", "set-branches", "prune"}
    return "git remote changes where the repository pushes" if verbs & _flags(args) else None


def _git_symbolic_ref(args: list[str]) -> str | None:
    if len(_positional(args)) >= 2 or _flags(args) & {"-d", "--delete"}:
        return "git symbolic-ref moves HEAD"
    return None


def _git_worktree(args: list[str]) -> str | None:
    return "git worktree remove deletes files" if {"remove", "prune"} & _flags(args) else None


def _git_submodule(args: list[str]) -> str | None:
    return "git submodule deinit discards a submodule" if "deinit" in args else None


def _always(reason: str) -> Callable[[list[str]], str | None]:
    return lambda args: reason


def _when(flag: str, reason: str) -> Callable[[list[str]], str | None]:
    return lambda args: reason if flag in args else None


GIT_VERBS: dict[str, Callable[[list[str]], str | None]] = {
    "push": _git_push,
    "reset": _git_reset,
    "rebase": _always("git rebase rewrites history"),
    "filter-branch": _always("git filter-branch rewrites history"),
    "filter-repo": _always("git filter-repo rewrites history"),
    "replace": _always("git replace rewrites history"),
    "commit": _when("--amend", "git commit --amend rewrites history"),
    "clean": _always("git clean deletes untracked files"),
    "rm": _always("git rm deletes files"),
    "checkout": _git_checkout,
    "switch": _git_checkout,
    "restore": _git_restore,
    "branch": _git_branch,
    "tag": _git_tag,
    "stash": _git_stash,
    "reflog": _git_reflog,
    "gc": _git_gc,
    "prune": _always("git prune deletes objects"),
    "update-ref": _always("git update-ref moves or deletes a ref"),
    "symbolic-ref": _git_symbolic_ref,
    "config": _git_config,
    "remote": _git_remote,
    "worktree": _git_worktree,
    "submodule": _git_submodule,
}


# what writers write ------------------------------------------------------------------------------


def write_targets(name: str, args: list[str]) -> list[str]:
    """The paths program `name` writes, from its arguments (empty for a reader)."""
    operands = _positional(args)
    if name in ("cp", "install", "ln", "rsync"):
        target = [a.split("=", 1)[1] for a in args if a.startswith("--target-directory=")]
        return target or operands[-1:]
    if name in ("tee", "touch", "mkdir", "chmod", "chown", "chgrp", "truncate", "mv"):
        return operands
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if name in ("tar", "unzip"):
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-C", "-d", "--directory")]
    return []


PROGRAMS: dict[str, Checker] = {
    **dict.fromkeys(AS_ANOTHER_USER, _privilege),
    **dict.fromkeys(DELETERS, _delete),
    **dict.fromkeys(SHELLS, _shell),
    **dict.fromkeys(REMOTE, _remote),
    **dict.fromkeys(SCHEDULERS, _schedule),
    **dict.fromkeys(("truncate", "dd"), _overwrite),
    **dict.fromkeys(("kill", "pkill", "killall", "killall5"), _kill),
    **dict.fromkeys(("docker", "podman", "nerdctl"), _docker),
    **dict.fromkeys(("curl", "wget"), _http),
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _awk),
    **dict.fromkeys(("eval",), _eval),
    **dict.fromkeys(("source", "."), _source),
    **dict.fromkeys(CODE_OPTIONS, _interpreter),
    **dict.fromkeys(("pip", "pip3", "pipx", "uv"), _publish),
    **dict.fromkeys(("npm", "yarn", "pnpm", "bun", "cargo", "gem"), _publish),
    **dict.fromkeys(("twine", "poetry", "flit", "hatch", "mvn", "gradle", "gh"), _publish),
    "find": _find,
    "git": _git,
    "sed": _sed,
    "rsync": _rsync,
    "make": _make,
}
