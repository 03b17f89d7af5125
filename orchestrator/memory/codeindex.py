"""What the code defines and mentions, by git blob, cached in `.orch/cache.sqlite`.

Checking a memory's claims needs, for each file of the working tree: its line count, the
symbols it defines, re-exports and names, and the `--flags` it spells. Python is read by
`ast`; TypeScript, JavaScript, Go, Rust and Java by their tree-sitter grammars
(`grammars`: definitions, class members, re-exports, and words apart from comments and
strings); any other file by its words. These facts depend only on the file's content, so
they are cached by git blob id (table `code-facts`): a warm run over an unchanged tree
parses nothing, and a run after one file changed parses that file only.

Claims that name no file ask the whole tree (`Facts.index`), but only the files that hold
one of the names asked for are read: one `grep -F -w -i` over the tracked code files
finds them, so a cold run parses the candidates, not the tree.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import hashlib
import io
import json
import os
import posixpath
import re
import subprocess
import tokenize
import tomllib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.checks.secrets import Patterns, secret_word
from orchestrator.errors import PathEscape
from orchestrator.memory import grammars
from orchestrator.memory.claims import Claim, RepoShape
from orchestrator.store.cache import Cache
from orchestrator.store.fs import confine

FACTS_VERSION = 12  # of the cache tables below: a change of what is stored empties them
FACTS_TABLE = "code-facts"  # git blob id -> FileFacts
DOC_EXTENSIONS = frozenset({"md", "rst", "txt", "adoc"})
SKIP_PREFIXES = ("memories/", "plans/artifacts/")
MAX_FILE_BYTES = 2_000_000
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FLAGS = re.compile(r"(?<![\w-])--[A-Za-z][A-Za-z0-9_-]*")
_GO_COMMAND = re.compile(r"(?:^|/)cmd/([A-Za-z0-9_.-]+)/main\.go$")
BUILTINS = frozenset(dir(builtins))
# the claims checked against the whole tree's index (`Facts.index`), by the names they hold
INDEX_KINDS = frozenset({"flag", "function", "identifier", "class", "type", "member", "env"})


def git(root: Path, *args: str, input: bytes | None = None) -> bytes:
    """Run git in `root`; b"" if git fails (no commits yet, not a repository)."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=root,
            input=input,
            capture_output=True,
            check=False,
        )
    except OSError:
        return b""
    return done.stdout if done.returncode == 0 else b""


@dataclass
class FileFacts:
    lines: int
    # "name", "Class.member", "Class.Inner.member": Python by `ast`, other languages by their
    # grammar (`grammars`); empty for a file no parser reads
    defs: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()  # a parsed file's words outside comments
    flags: frozenset[str] = frozenset()
    python: bool = False
    parsed: bool = True  # False: a Python file that does not parse (words still searched)
    exports: frozenset[str] = frozenset()  # names re-exported: `from x import y`, `pub use`
    star: bool = False  # re-exports names it does not list (`export * from`, `import *`)
    grammar: bool = False  # read by a tree-sitter grammar
    code_words: frozenset[str] = frozenset()  # a grammar's words outside comments and strings
    # False: a file too large to read (`MAX_FILE_BYTES`) or binary, so its lines and words
    # are unknown, not empty: a claim about them is not judged
    read: bool = True

    @property
    def syntax(self) -> bool:
        """Whether a parser read the file, so `defs` is all it defines."""
        return self.grammar or (self.python and self.parsed)

    @property
    def names(self) -> frozenset[str]:
        """The words that may name code: outside comments and strings where a grammar
        tells them apart, every word otherwise."""
        return self.code_words if self.grammar else self.words

    def defines(self, symbol: str) -> bool:
        """`symbol` is defined or re-exported here (`name`, `Class.member`, or a member
        named by its last parts)."""
        return (
            symbol in self.defs
            or symbol in self.exports
            or any(d.endswith("." + symbol) for d in self.defs)
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "lines": self.lines,
                "defs": sorted(self.defs),
                "words": sorted(self.words),
                "flags": sorted(self.flags),
                "python": self.python,
                "parsed": self.parsed,
                "exports": sorted(self.exports),
                "star": self.star,
                "grammar": self.grammar,
                "code_words": sorted(self.code_words),
                "read": self.read,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> FileFacts:
        raw = json.loads(text)
        return cls(
            raw["lines"],
            frozenset(raw["defs"]),
            frozenset(raw["words"]),
            frozenset(raw["flags"]),
            raw["python"],
            raw["parsed"],
            frozenset(raw["exports"]),
            raw["star"],
            raw["grammar"],
            frozenset(raw["code_words"]),
            raw["read"],
        )


def python_defs(tree: ast.AST) -> set[str]:
    """Names a module defines: functions, classes, assignments, and `Class.member` forms
    (methods, class attributes, `self.x = ...` in methods), nested classes included."""
    out: set[str] = set()

    def targets(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Name):
            return [node.id]
        if isinstance(node, ast.Tuple | ast.List):
            return [n for elt in node.elts for n in targets(elt)]
        return []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                out.add(node.name)
                if prefix:
                    out.add(prefix + node.name)
                    for sub in ast.walk(node):
                        if isinstance(sub, ast.Assign | ast.AnnAssign):
                            tgts = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                            for t in tgts:
                                if (
                                    isinstance(t, ast.Attribute)
                                    and isinstance(t.value, ast.Name)
                                    and t.value.id == "self"
                                ):
                                    out.add(prefix + t.attr)
            elif isinstance(node, ast.ClassDef):
                out.add(node.name)
                if prefix:
                    out.add(prefix + node.name)
                visit(node.body, prefix + node.name + ".")
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                tgts = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in tgts:
                    for name in targets(t):
                        out.add(prefix + name)
                        if not prefix:
                            out.add(name)
            elif isinstance(node, ast.If | ast.Try | ast.With):
                for sub_body in ("body", "orelse", "finalbody"):
                    visit(getattr(node, sub_body, []) or [], prefix)
                for handler in getattr(node, "handlers", []) or []:
                    visit(handler.body, prefix)

    if isinstance(tree, ast.Module):
        visit(tree.body, "")
    return out


def python_exports(tree: ast.AST) -> tuple[set[str], bool]:
    """Names a module hands on without defining them (`from x import y`, `import a as b`,
    `__all__`), and whether it star-imports (`from x import *`)."""
    out: set[str] = set()
    star = False
    body = list(tree.body) if isinstance(tree, ast.Module) else []
    while body:
        node = body.pop()
        if isinstance(node, ast.ImportFrom | ast.Import):
            for alias in node.names:
                if alias.name == "*":
                    star = True
                elif alias.asname or isinstance(node, ast.ImportFrom):
                    out.add(alias.asname or alias.name)
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            tgts = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in tgts) and isinstance(
                node.value, ast.List | ast.Tuple
            ):
                out.update(
                    e.value
                    for e in node.value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                )
        elif isinstance(node, ast.If | ast.Try):
            body += node.body + node.orelse + getattr(node, "finalbody", [])
            for handler in getattr(node, "handlers", []):
                body += handler.body
    return out, star


def file_facts(data: bytes | None, path: str) -> FileFacts:
    """What the file `path` holding `data` defines and names; a file too large to read
    (`MAX_FILE_BYTES`; None: not read for that) or binary has no lines and no words, and
    is marked unread."""
    if data is None or len(data) > MAX_FILE_BYTES or b"\0" in data[:8000]:
        return FileFacts(0, read=False)
    text = data.decode("utf-8", "replace")
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    flags = frozenset(_FLAGS.findall(text))
    if path.endswith(".go"):
        flags |= frozenset("--" + name for name in _RX.go_flag.findall(text))
    language = grammars.language_of(path)
    if language is not None and data:
        parsed = grammars.parse(data, language)
        return FileFacts(
            lines,
            frozenset(parsed.defs),
            frozenset(w for w in parsed.words if not secret_word(w)),
            flags,
            exports=parsed.exports,
            star=parsed.star,
            grammar=True,
            code_words=frozenset(w for w in parsed.code_words if not secret_word(w)),
        )
    words = frozenset(w for w in _WORDS.findall(text) if not secret_word(w))
    fallback = _FALLBACKS.get(path.rsplit(".", 1)[-1].lower()) if "." in path else None
    if fallback is not None:
        patterns = (getattr(_RX, fallback[0]), getattr(_RX, fallback[1]))
        return FileFacts(lines, pattern_defs(text, patterns), words, flags, False, True)
    if path.endswith((".py", ".pyi")):
        try:
            tree = ast.parse(data, filename=path)
        except (SyntaxError, ValueError):
            return FileFacts(lines, frozenset(), words, flags, True, False)
        exports, star = python_exports(tree)
        return FileFacts(
            lines, frozenset(python_defs(tree)), words, flags, True, True, frozenset(exports), star
        )
    return FileFacts(lines, frozenset(), words, flags, False, True)


def python_code_words(text: str) -> frozenset[str]:
    """The words of a Python module outside its comments (its names, and the words of its
    strings: keys, variables read by name, lazily exported names), as `grammars.parse`
    gives them for other languages; read only when a check needs them, every word when
    the text does not tokenize."""
    words: set[str] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME:
                words.add(token.string)
            elif token.type != tokenize.COMMENT:
                words.update(_WORDS.findall(token.string))
    except (tokenize.TokenError, SyntaxError):
        return frozenset(_WORDS.findall(text))
    return frozenset(words)


def pattern_defs(text: str, patterns: tuple[re.Pattern[str], re.Pattern[str]]) -> frozenset[str]:
    """A language without a grammar here: its type names (`class X`, `module X`,
    `interface X`...) and each function or method under the type declared last above it
    (`X.method`) as well as on its own. A fallback by patterns, not a parse: the names
    serve to find where a name is defined (`moved`, sizes), never to call one undefined."""
    types, functions = patterns
    out: set[str] = set()
    owner: str | None = None
    for line in text.splitlines():
        found = types.match(line)
        if found:
            owner = found.group(1).rsplit("::", 1)[-1].rsplit(".", 1)[-1]
            out.update({owner, found.group(1)})
            continue
        found = functions.match(line)
        if found:
            out.add(found.group(1))
            if owner is not None:
                out.add(f"{owner}.{found.group(1)}")
    return frozenset(out)


_MODIFIERS = (
    r"(?:(?:public|private|protected|internal|static|abstract|final|sealed|open|override|"
    r"readonly|partial|async|virtual|data|inline|suspend|operator|enum|value|annotation|"
    r"companion|new|unsafe|extern)\s+)*"
)
# each compiled the first time a file needs it: most trees hold no Go, PHP, Ruby, C#,
# Kotlin, Dart, Swift or Scala, and these patterns cost more to compile than the rest of
# this module's import
_RX = Patterns(
    # Go's flag and pflag (cobra) packages name a flag without its dashes:
    # flag.Int("jobs", ...), fs.StringVar(&dir, "dir", ...), cmd.Flags().BoolP("verbose", "v", ...)
    go_flag=(
        r"\.(?:Bool|Int|Int64|Uint|Uint64|String|Float64|Duration|Func|BoolFunc|Var|TextVar|"
        r"StringSlice|StringArray|IntSlice|Count)(?:Var)?P?\(\s*(?:&?[\w.\[\]]+\s*,\s*)?"
        r"\"([A-Za-z][A-Za-z0-9_-]*)\""
    ),
    c_like_types=(
        rf"^\s*{_MODIFIERS}(?:class|interface|trait|struct|record|enum|object)\s+([A-Za-z_]\w*)"
    ),
    php_function=rf"^\s*{_MODIFIERS}function\s+&?([A-Za-z_]\w*)\s*\(",
    rb_types=r"^\s*(?:class|module)\s+([A-Z][\w:]*)",
    rb_function=r"^\s*def\s+(?:self\.)?([a-z_]\w*[?!=]?)",
    cs_function=(
        rf"^\s*{_MODIFIERS}(?:[\w.<>\[\],?]+\s+)+([A-Z]\w*)\s*(?:<[^>]*>)?\s*\((?!.*;\s*$)"
    ),
    kt_function=rf"^\s*{_MODIFIERS}fun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?([A-Za-z_]\w*)\s*\(",
    dart_types=(
        r"^\s*(?:(?:abstract|sealed|base|final|interface|mixin)\s+)*"
        r"(?:class|mixin|enum|extension(?:\s+type)?|typedef)\s+([A-Za-z_$][\w$]*)"
    ),
    # a signature on one line, then its body (`{` or `=>`): a call never ends so
    dart_function=(
        r"^\s*(?:(?:static|external|abstract)\s+)*"
        r"(?!(?:return|await|else|throw|yield|new|case|final|var|const)\b)[\w<>?,\[\]]+\s+"
        r"(?:get\s+|set\s+)?([a-zA-Z_$][\w$]*)\s*(?:<[^>]*>)?\s*\([^;]*\)\s*"
        r"(?:async\*?\s*)?(?:\{|=>)"
    ),
    swift_types=(
        r"^\s*(?:(?:public|private|internal|fileprivate|open|final|indirect)\s+)*"
        r"(?:class|struct|enum|protocol|extension|actor)\s+([A-Za-z_]\w*)"
    ),
    swift_function=(
        r"^\s*(?:(?:public|private|internal|fileprivate|open|final|static|class|override|"
        r"mutating|nonisolated|@\w+)\s+)*func\s+([A-Za-z_]\w*)"
    ),
    scala_types=(
        r"^\s*(?:(?:final|sealed|abstract|case|implicit|private|protected)\s+)*"
        r"(?:class|object|trait|enum)\s+([A-Za-z_]\w*)"
    ),
    scala_function=(
        r"^\s*(?:(?:override|private|protected|final|implicit|inline)\s+)*def\s+([A-Za-z_]\w*)"
    ),
)
# a language without a grammar here: the names in `_RX` of (its types, its functions)
_FALLBACKS = {
    "php": ("c_like_types", "php_function"),
    "rb": ("rb_types", "rb_function"),
    "cs": ("c_like_types", "cs_function"),
    "kt": ("c_like_types", "kt_function"),
    "kts": ("c_like_types", "kt_function"),
    "dart": ("dart_types", "dart_function"),
    "swift": ("swift_types", "swift_function"),
    "scala": ("scala_types", "scala_function"),
    "sc": ("scala_types", "scala_function"),
}


def is_code(path: str) -> bool:
    """Files the whole-tree search reads: tracked, not memory or task records, not prose."""
    if path.startswith(SKIP_PREFIXES):
        return False
    name = path.rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return ext not in DOC_EXTENSIONS


def inside(root: Path, path: str) -> bool:
    """The repository-relative `path`, links followed, stays inside `root` (`confine`)."""
    try:
        confine(root, path)
    except PathEscape:
        return False
    return True


def code_matches(root: Path, regex: str, holding: str = "") -> bool:
    """Some tracked code file (not prose: see `is_code`) has a match of the extended
    regular expression `regex` (`git grep -E`). `holding`, a string every match holds,
    lets a fixed-string search find the few files worth the regular expression first (git's
    regular expressions test every position of every file: seconds on a large tree)."""
    paths: list[str] = []
    if holding:
        listed = git(root, "grep", "-l", "-I", "-F", "-e", holding, "--")
        paths = [p for p in listed.decode("utf-8", "replace").splitlines() if is_code(p)]
        if not paths:
            return False
        paths = paths if len(paths) <= GREP_BATCH else []  # too many to name: every file
    listed = git(root, "grep", "-l", "-I", "-E", "-e", regex, "--", *paths)
    return any(is_code(p) for p in listed.decode("utf-8", "replace").splitlines())


@dataclass
class CodeIndex:
    """The union of the facts of the code files that hold any of the words asked for so
    far (`Facts.index`): exact for those words, since a file that defines or names a word
    holds it."""

    defs: set[str] = field(default_factory=set)  # every language a parser reads
    qualified: set[str] = field(default_factory=set)  # the dotted "Class.member" forms only
    py_words: set[str] = field(default_factory=set)
    other_words: set[str] = field(default_factory=set)  # a grammar's outside comments
    names: set[str] = field(default_factory=set)  # non-Python words that may name code
    flags: set[str] = field(default_factory=set)
    _lower: frozenset[str] | None = None

    def add(self, facts: FileFacts) -> None:
        self.flags |= facts.flags
        if facts.syntax:  # names a parser found: what no file defines is undefined
            self.defs |= facts.defs
            self.qualified.update(d for d in facts.defs if "." in d)
        if facts.python:
            self.py_words |= facts.words
        else:
            self.other_words |= facts.words
            self.names |= facts.names
        self._lower = None

    def lower(self) -> frozenset[str]:
        """Every word of the code, lower-cased (for single-word type names)."""
        if self._lower is None:
            self._lower = frozenset(w.lower() for w in self.py_words | self.other_words)
        return self._lower


def module_name(path: str) -> str | None:
    """ "pkg/sub/mod.py" -> "pkg.sub.mod"; "pkg/__init__.py" -> "pkg"; None for others."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    # a src/ layout: "src/pkg/mod.py" is the module "pkg.mod"
    if parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    return ".".join(parts)


@dataclass
class TreeState:
    """The working tree as git sees it: every tracked file's blob id (working-tree content).

    A `stored` tree is a past commit's, in a repository of its own whose index is that
    commit and whose files are not written (see `past`): its files are read from git's
    objects by blob id, and a link (`links`) is read as the tracked file it leads to."""

    root: Path
    head: str | None
    blobs: dict[str, str]  # path -> blob id of the working-tree content
    missing: set[str] = field(default_factory=set)  # tracked but deleted in the working tree
    stored: bool = False  # the files are in git's objects, not on disk
    links: dict[str, str] = field(default_factory=dict)  # stored link -> its file's blob, or ""
    _folders: set[str] | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def read(cls, root: Path, *, stored: bool = False) -> TreeState:
        head = git(root, "rev-parse", "--verify", "-q", "HEAD").decode().strip() or None
        blobs: dict[str, str] = {}
        links: list[str] = []
        for entry in git(root, "ls-files", "-s", "-z").split(b"\0"):
            if not entry:
                continue
            meta, _, raw_path = entry.partition(b"\t")
            fields = meta.split()
            if len(fields) >= 2 and fields[0] != b"160000":  # skip submodules
                blobs[raw_path.decode("utf-8", "replace")] = fields[1].decode()
                if fields[0] == b"120000":
                    links.append(raw_path.decode("utf-8", "replace"))
        if stored:
            return cls(root, head, blobs, stored=True, links=_followed(root, blobs, links))
        dirty = [
            p.decode("utf-8", "replace")
            for p in git(root, "diff-files", "--name-only", "-z").split(b"\0")
            if p
        ]
        missing: set[str] = set()
        present = []
        for path in dirty:
            if (root / path).is_file():
                present.append(path)
            else:
                missing.add(path)
                blobs.pop(path, None)
        if present:
            hashed = git(root, "hash-object", "--stdin-paths", input="\n".join(present).encode())
            for path, blob in zip(present, hashed.decode().split(), strict=False):
                blobs[path] = blob
        return cls(root, head, blobs, missing)

    def blob_of(self, path: str) -> str | None:
        """The blob id of a working-tree file, tracked or not (None if it is not a file)."""
        if path in self.blobs:
            return self.blobs[path]
        full = self.root / path
        if not full.is_file():
            return None
        try:
            data = full.read_bytes()
        except OSError:
            return None
        digest = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's blob id
        self.blobs[path] = digest
        return digest

    def content(self, path: str) -> str | None:
        """The blob a stored file's bytes are (a link's: its file's); None when none."""
        return self.links.get(path, self.blobs.get(path)) or None

    def data(self, path: str) -> bytes | None:
        """A file's bytes (None when it cannot be read; a stored link out of the tree
        cannot)."""
        if self.stored:
            blob = self.content(path)
            return read_blobs(self.root, [blob]).get(blob) if blob else None
        try:
            return (self.root / path).read_bytes()
        except OSError:
            return None

    def size(self, path: str) -> int | None:
        """A file's size in bytes (None when it is not one)."""
        if not self.stored:
            try:
                return (self.root / path).stat().st_size
            except OSError:
                return None
        blob = self.content(path)
        found = git(self.root, "cat-file", "-s", blob) if blob else b""
        return int(found) if found.strip().isdigit() else None

    def exists(self, path: str) -> bool:
        """A file or folder at repository-relative `path`: on disk, or in a stored tree
        (PathEscape when it leaves the tree)."""
        full = confine(self.root, path)
        if self.stored:
            rel = full.relative_to(self.root.resolve()).as_posix()
            if rel in self.blobs or rel in self.folders():
                return True
        return os.path.exists(full)

    def is_file(self, path: str) -> bool:
        """A tracked file, or (on disk) any file, at repository-relative `path`."""
        if path in self.blobs:
            return True
        try:
            full = confine(self.root, path)
        except PathEscape:
            return False
        if self.stored and full.relative_to(self.root.resolve()).as_posix() in self.blobs:
            return True
        return full.is_file()

    def folders(self) -> set[str]:
        """Every folder holding a tracked file (`.` for the root)."""
        if self._folders is None:
            self._folders = {"."}
            for path in self.blobs:
                parts = path.split("/")[:-1]
                self._folders.update("/".join(parts[:k]) for k in range(1, len(parts) + 1))
        return self._folders

    def signature(self, *, code_only: bool = True) -> str:
        """A digest of every (path, blob) pair: of the code files, or of all tracked files
        outside memory and task records (which change with every write of orch's own)."""
        digest = hashlib.sha1()
        for path in sorted(self.blobs):
            if is_code(path) if code_only else not path.startswith(SKIP_PREFIXES):
                digest.update(f"{path}\0{self.blobs[path]}\n".encode())
        return digest.hexdigest()

    def shape(self) -> RepoShape:
        top = {p.split("/", 1)[0] for p in self.blobs}
        with contextlib.suppress(OSError):
            top |= set(os.listdir(self.root))
        modules = set()
        for path in self.blobs:
            name = module_name(path)
            if name:
                modules.add(name.split(".", 1)[0])
        programs = {p for p in self.blobs if p.endswith((".sh", ".py", ".bash"))}
        programs |= _console_scripts(self.text)
        programs |= {m.group(1) for m in map(_GO_COMMAND.search, self.blobs) if m}
        programs |= _package_bins(self.text, self.is_file("src/main.rs"))
        return RepoShape(frozenset(top), frozenset(modules), frozenset(programs))

    def text(self, path: str) -> str:
        """A file's text ("" when it cannot be read)."""
        return (self.data(path) or b"").decode("utf-8", "replace")


def _followed(root: Path, blobs: dict[str, str], links: list[str]) -> dict[str, str]:
    """Each link of a stored tree -> the blob of the tracked file it leads to, through
    other links; "" when it leads out of the tree, to a folder, or nowhere."""
    targets = read_blobs(root, [blobs[p] for p in links])
    out: dict[str, str] = {}
    linked = set(links)
    for link in links:
        path, seen = link, set()
        while path in linked and path not in seen:
            seen.add(path)
            target = targets.get(blobs[path], b"").decode("utf-8", "replace")
            path = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        out[link] = "" if path in seen or path.startswith(("../", "/")) else blobs.get(path, "")
    return out


def read_blobs(root: Path, blobs: Iterable[str]) -> dict[str, bytes]:
    """The bytes of these blobs, by id, read with one `git cat-file --batch` (a blob git
    does not have is left out)."""
    wanted = list(dict.fromkeys(blobs))
    if not wanted:
        return {}
    out: dict[str, bytes] = {}
    raw = git(root, "cat-file", "--batch", input="\n".join(wanted).encode() + b"\n")
    at = 0
    for blob in wanted:
        end = raw.find(b"\n", at)
        if end < 0:
            break
        header = raw[at:end].split()
        at = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            out[blob] = raw[at : at + size]
            at += size + 1
    return out


def _console_scripts(read: Callable[[str], str]) -> set[str]:
    try:
        data = tomllib.loads(read("pyproject.toml"))
    except ValueError:
        return set()
    project = data.get("project", {})
    names = set(project.get("scripts", {}) or {}) | set(project.get("gui-scripts", {}) or {})
    poetry = data.get("tool", {}).get("poetry", {}).get("scripts", {}) or {}
    return names | set(poetry)


def _package_bins(read: Callable[[str], str], main_rs: bool) -> set[str]:
    """Programs a package.json (`bin`) or a Cargo.toml (`[[bin]]`, the package, when it
    has a `src/main.rs`) installs."""
    names: set[str] = set()
    try:
        package = json.loads(read("package.json") or "null")
    except ValueError:
        package = None
    if isinstance(package, dict):
        bins = package.get("bin")
        if isinstance(bins, dict):
            names |= {str(k) for k in bins}
        elif isinstance(bins, str) and isinstance(package.get("name"), str):
            names.add(package["name"].rsplit("/", 1)[-1])
    try:
        cargo = tomllib.loads(read("Cargo.toml"))
    except ValueError:
        cargo = {}
    for entry in cargo.get("bin", []) or []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            names.add(entry["name"])
    name = (cargo.get("package") or {}).get("name")
    if isinstance(name, str) and main_rs:
        names.add(name)
    return names


def tree_at(root: Path, sha: str) -> dict[str, str] | None:
    """{path: blob} of commit `sha` (None if git does not know it): one `git ls-tree` of
    the commit, which fails when `sha` names no commit."""
    try:
        done = subprocess.run(
            ["git", "ls-tree", "-r", "-z", f"{sha}^{{commit}}"], cwd=root, capture_output=True
        )
    except OSError:
        return None
    if done.returncode != 0:
        return None
    listing = {}
    for entry in done.stdout.split(b"\0"):
        if entry:
            meta, _, raw_path = entry.partition(b"\t")
            listing[raw_path.decode("utf-8", "replace")] = meta.split()[2].decode()
    return listing


class Facts:
    """File facts for a tree state, from the cache (None: no cache) or computed (and then
    cached)."""

    def __init__(self, state: TreeState, cache: Cache | None) -> None:
        self.state = state
        self.facts = cache.table(FACTS_TABLE, FACTS_VERSION) if cache is not None else None
        self._by_blob: dict[str, FileFacts] = {}
        self._index = CodeIndex()
        self._covered: set[str] = set()  # words the index answers for
        self.indexed: set[str] = set()  # the paths whose facts the index holds
        self._whole = False  # every code file is in the index
        self._as_is = False  # see `as_is`
        self._modules: dict[str, str] | None = None
        self._code: tuple[int, list[str]] = (-1, [])  # (files of the tree, its code files)

    def _compute(self, paths: list[str]) -> None:
        blobs = {self.state.blob_of(p): p for p in paths}
        blobs.pop(None, None)
        want = [b for b in blobs if b is not None and b not in self._by_blob]
        cached = self.facts.get_many(want) if self.facts is not None else {}
        stored = self._stored([blobs[b] for b in want if b not in cached])
        fresh = []
        for blob in want:
            if blob in cached:
                self._by_blob[blob] = FileFacts.from_json(cached[blob])
                continue
            path = blobs[blob]
            if self.state.stored:
                if path not in stored:
                    continue
                data: bytes | None = stored[path]
            else:
                try:
                    full = self.state.root / path
                    data = full.read_bytes() if full.stat().st_size <= MAX_FILE_BYTES else None
                except OSError:
                    continue
                if full.is_symlink() and not inside(self.state.root, path):
                    data = b""  # a tracked link out of the repository: its target is not read
            facts = file_facts(data, path)
            self._by_blob[blob] = facts
            fresh.append((blob, facts.to_json()))
        if self.facts is not None:
            self.facts.put_many(fresh)

    def _stored(self, paths: list[str]) -> dict[str, bytes]:
        """A stored tree's files (see `TreeState`), path -> bytes, read at once; a link
        out of the tree is read as empty, as on disk; {} for the working tree."""
        if not self.state.stored:
            return {}
        blobs = {p: self.state.content(p) for p in paths}
        read = read_blobs(self.state.root, [b for b in blobs.values() if b])
        return {p: read[b] if b else b"" for p, b in blobs.items() if not b or b in read}

    def of_blob(self, blob: str, path: str, data: Callable[[], bytes]) -> FileFacts:
        """The facts of a blob that is not in the working tree (a past commit's file named
        `path`, its bytes given by `data`), computed once and cached by the blob's id."""
        if blob not in self._by_blob:
            cached = self.facts.get_many([blob]) if self.facts is not None else {}
            if blob in cached:
                self._by_blob[blob] = FileFacts.from_json(cached[blob])
            else:
                self._by_blob[blob] = file_facts(data(), path)
                if self.facts is not None:
                    self.facts.put_many([(blob, self._by_blob[blob].to_json())])
        return self._by_blob[blob]

    def of(self, path: str) -> FileFacts | None:
        blob = self.state.blob_of(path)
        if blob is None:
            return None
        if blob not in self._by_blob:
            self._compute([path])
        return self._by_blob.get(blob)

    def index(self, words: Iterable[str]) -> CodeIndex:
        """The index, answering for `words` (and every word asked for before): only the
        code files holding one of them are read, found by one `grep -F -w -i` over the
        tracked code files not read yet. Inside `as_is`, the index as it stands."""
        wanted = {w for w in words if w and "\n" not in w} - self._covered
        if wanted and not self._whole and not self._as_is:
            self.add(self.holding(wanted))
        if not self._as_is:
            self._covered |= wanted
        return self._index

    def holding(
        self, words: Iterable[str], *, exact: bool = False, among: Iterable[str] | None = None
    ) -> list[str]:
        """The code files not read yet (of `among`, else of the tree) that hold one of
        `words` as a whole word, in any case or `exact`ly; every one of them when grep
        cannot search."""
        wanted = sorted({w for w in words if w and "\n" not in w} - self._covered)
        if not wanted:
            return []
        if among is None and self._code[0] != len(self.state.blobs):  # `blob_of` adds files
            self._code = (len(self.state.blobs), sorted(p for p in self.state.blobs if is_code(p)))
        pool = self._code[1] if among is None else sorted(p for p in among if is_code(p))
        code = [p for p in pool if p not in self.indexed]
        if not code:
            return []
        found = _grep(self.state, code, wanted, exact=exact)
        if found is None:  # grep could not search: read every code file
            if among is None:
                self._whole = True
            return code
        return sorted(found)

    def spellings(self, words: Iterable[str], among: Iterable[str]) -> dict[str, set[str]]:
        """How the files of `among` not read yet spell `words` as whole words, in any case:
        each spelling -> the files holding it. A guide to what to read first, not a proof
        (a word that is also the head of a longer one asked about, `dry` of `dry-run`, may
        go unlisted where only the longer is matched); empty when grep cannot search."""
        code = sorted(p for p in among if p not in self.indexed)
        wanted = sorted({w for w in words if w and "\n" not in w})
        if not code or not wanted:
            return {}
        return _spellings(self.state, code, wanted) or {}

    def add(self, paths: Iterable[str]) -> None:
        """Read these files' facts into the index."""
        paths = sorted(set(paths) - self.indexed)
        self._compute(paths)
        for path in paths:
            facts = self._by_blob.get(self.state.blobs[path])
            if facts is not None:
                self._index.add(facts)
        self.indexed.update(paths)

    def cover(self, words: Iterable[str]) -> None:
        """The index answers for `words` from now on: every file holding one is read."""
        self._covered |= {w for w in words if w and "\n" not in w}

    @contextlib.contextmanager
    def as_is(self) -> Iterator[None]:
        """Within it, `index` reads no file: it answers from the files read so far (the
        search for words it must answer for comes later, or never)."""
        self._as_is = True
        try:
            yield
        finally:
            self._as_is = False

    def module_files(self) -> dict[str, str]:
        """Dotted Python module name -> its path, for every tracked Python file."""
        if self._modules is None:
            self._modules = {}
            for path in self.state.blobs:
                name = module_name(path)
                if name and is_code(path):
                    self._modules[name] = path
        return self._modules


def index_words(claims: Iterable[Claim]) -> set[str]:
    """The names the index must answer for to check `claims`: `Class.member` by its class
    (a file defining the member names the class), a `--flag` by its name (Go's flag
    packages spell it without dashes)."""
    return {index_word(c) for c in claims if c.kind in INDEX_KINDS and c.symbol}


def index_word(claim: Claim) -> str:
    """The name the index must answer for to check `claim` (see `index_words`); a negated
    flag by the flag it negates (`--no-cache` by `cache`: a file declaring `--cache` as a
    boolean option spells that, and a file spelling `--no-cache` holds it as a word too)."""
    symbol = claim.symbol or ""
    name = symbol.lstrip("-")
    if claim.kind == "flag" and symbol.startswith("--no-") and len(name) > 3:
        return name[3:]
    return name.split(".", 1)[0] if claim.kind == "member" else name


GREP_BATCH = 2000  # paths one `grep` is given at most


def _grep(
    tree: TreeState, paths: list[str], words: list[str], exact: bool = False
) -> set[str] | None:
    """The `paths` that hold one of `words` as a whole word, in any case or `exact`ly
    (None when grep cannot search). GNU and BSD grep match fixed strings with one automaton
    for all the words; `git grep` tries each word in turn, a second of CPU per 500 files at
    2,000 words. In the C locale, as `-i` in a UTF-8 one costs grep several times more. A
    tracked symbolic link to a folder is skipped (`-d skip`), not an error that would
    send every code file of the tree to the parser."""
    case = [] if exact else ["-i"]
    found = _run_grep(tree, paths, words, ["-l", *case])
    if found is None:
        return None
    return {p.decode("utf-8", "replace") for p in found.split(b"\0") if p} & set(paths)


def _spellings(tree: TreeState, paths: list[str], words: list[str]) -> dict[str, set[str]] | None:
    """Each whole-word match of `words` in `paths`, in any case, as the files spell it ->
    the paths holding that spelling (None when grep cannot search)."""
    found = _run_grep(tree, paths, words, ["-o", "-H", "-i"])
    if found is None:
        return None
    out: dict[str, set[str]] = {}
    wanted = set(paths)
    for row in found.splitlines():
        raw, _, match = row.partition(b"\0")
        path = raw.decode("utf-8", "replace")
        if path in wanted:
            out.setdefault(match.decode("utf-8", "replace"), set()).add(path)
    return out


def _run_grep(
    tree: TreeState, paths: list[str], words: list[str], options: list[str]
) -> bytes | None:
    """grep's output for fixed whole `words` in `paths` (see `_grep`), or more; None when
    it fails. A stored tree's files are searched by one `git grep` of the whole tree in
    its objects (the same options and output; naming thousands of paths to it costs more
    than searching them all)."""
    out = b""
    patterns = "\n".join(words).encode()
    flags = [*options, "--null", "-I", "-F", "-w"]
    if tree.stored:
        commands = [["git", "grep", *flags, "-f", "-"]]
    else:
        command = ["grep", *flags, "-d", "skip", "-f", "-", "--"]
        commands = [
            [*command, *paths[start : start + GREP_BATCH]]
            for start in range(0, len(paths), GREP_BATCH)
        ]
    for args in commands:
        try:
            done = subprocess.run(
                args,
                cwd=tree.root,
                input=patterns,
                capture_output=True,
                check=False,
                env={**os.environ, "LC_ALL": "C"},  # names are ASCII: a byte-wise search
            )
        except OSError:
            return None
        if done.returncode not in (0, 1):
            return None
        out += done.stdout
    return out
