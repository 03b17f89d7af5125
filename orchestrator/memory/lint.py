"""Lint an agent instruction file (AGENTS.md, CLAUDE.md, `.cursorrules`,
`.github/copilot-instructions.md`, any markdown): each table row, line of a code block
and sentence of a bullet or a paragraph is a claim (a line of a folder tree with the path
its nesting gives, a name listed below its folder with that folder); each claim that names
code is checked against the working tree, as a memory's body would be (see `verify` and
`kinds`).

A claim is `ok`, `moved` (a path it names is gone, but git's rename detection or a file
of the same name says where the thing lives now) or `stale` (the fact no longer holds).
It needs no `orch init`: only a git repository.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from orchestrator.memory.claims import CODE_SPAN, WORD_KINDS, Claim, imports_file
from orchestrator.memory.codeindex import git, is_code, tree_at
from orchestrator.memory.verify import (
    Verifier,
    bare_name,
    counter_examples,
    listed_entry,
    states_change,
)
from orchestrator.store.layout import Layout

STATUSES = ("ok", "moved", "stale")
_FENCE = re.compile(r"^\s*(```|~~~)")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)\s+(?=[A-Z`\[*(\"])")
# a line of a folder tree drawn in a code block: box characters or indentation, one name
# (`│   ├── hooks/`, `  main.py`), then nothing or a description after a gap or a marker
_TREE_LINE = re.compile(
    r"^(?P<lead>[\s│├└─┬┼|`+\\-]*?)(?P<name>[\w@+-][\w.@+-]*(?:/[\w.@+-]+)*/?)"
    r"(?P<rest>(?:\s{2,}|\s+(?=#|//|<-|←|-\s|—)).*)?$"
)
_BOX = re.compile(r"[├└│]")
# a line of code that enters a folder, after the commands that made it on the same line
_ENTER = re.compile(
    r"^(?:\$\s+)?(?:(?P<made>[^&;|]+?)\s*&&\s*)?cd\s+(?P<folder>[\w./@+-]+)(?:\s|$)"
)
# a line that gives the folder the names listed below it are in ("Located in `.x/skills/`,
# these are:"), and a bullet that starts with one bare name (`- **lint-rule** - what it does`)
_LIST_FOLDER = re.compile(r"`(?:\./)?((?:[\w.@+-]+/)+)`[^`]*:\s*$")
_LISTED_NAME = re.compile(r"^\s*[-*+]\s+(?:\*\*|`)([\w][\w.-]*)(?:\*\*|`)(?:\s|$|:)")


class Part(NamedTuple):
    """A claim of the file: its lines, its words, whether they are a line of code, the
    bullet or line it is a sentence of (whose whole words say whether it states a change
    or warns against a name), and a path its place gives it: a tree line's path rebuilt
    from the folders above it, or a listed name below the folder a line gave."""

    first: int
    last: int
    words: str
    code: bool
    context: str
    tree: str = ""  # `plugin/scheduler/` for `├── scheduler/` under `plugin/`
    listed: str = ""  # `.x/skills/rule-options` for `- **rule-options**` below `.x/skills/`


@dataclass(frozen=True)
class Finding:
    line: int
    text: str
    status: str  # ok | moved | stale
    reason: str = ""
    end_line: int = 0  # the claim's last line (a wrapped bullet or sentence), 0: `line`

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "end_line": self.end_line or self.line,
            "text": self.text,
            "status": self.status,
            "reason": self.reason,
        }


def split_claims(source: str) -> list[Part]:
    """Each claim of `source`. A bullet's wrapped lines are one bullet, a paragraph's
    sentences run across its lines, and each sentence of either is a claim; a line of a code
    block is one, a line of a folder tree with the path its nesting gives it."""
    out: list[Part] = []
    lines = source.splitlines()
    start = 0
    if lines and lines[0].strip() == "---":  # frontmatter (.mdc rules)
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                start = i + 1
                break
    in_code = False
    block: list[tuple[int, str]] = []  # the lines of the bullet or paragraph being read
    code: list[tuple[int, str]] = []  # the lines of the code block being read
    for number, line in enumerate(lines[start:], start=start + 1):
        text = line.strip()
        if in_code or _FENCE.match(line) or not text or _HEADING.match(line) or text[0] == "|":
            out += _block_claims(block)
            block = []
            if _FENCE.match(line):
                if in_code:
                    out += _code_claims(code)
                    code = []
                in_code = not in_code
            elif in_code:
                code.append((number, line))
            elif text[:1] == "|" and not set(text) <= set("|-: "):
                out.append(Part(number, number, text, False, text))  # a table row
            continue
        if _BULLET.match(line):
            out += _block_claims(block)
            block = []
        block.append((number, text))
    out += _code_claims(code) + _block_claims(block)
    return _listed(sorted(out, key=lambda part: part.first), lines)


def _code_claims(code: list[tuple[int, str]]) -> list[Part]:
    """A code block's lines, a folder tree's with the path each line's nesting gives it;
    a line entering a folder the block made is none (`_enters_made`)."""
    paths = tree_paths(code)
    lines = [line.strip() for _, line in code]
    return [
        Part(number, number, line.strip(), True, line.strip(), paths.get(number, ""))
        for i, (number, line) in enumerate(code)
        if line.strip() and not _enters_made(lines[i], lines[:i])
    ]


def _enters_made(line: str, before: list[str]) -> bool:
    """`cd my-app` after `npx create-app my-app`, `git clone .../tool.git` then `cd tool`,
    `mkdir out && cd out`: a folder an earlier command of the block (or of the line)
    named last, the one it makes, is the reader's new folder, not one of the repository;
    the commands run in it are about what was made there."""
    found = _ENTER.match(line)
    if found is None:
        return False
    folder = found.group("folder").removeprefix("./").split("/", 1)[0]
    made = [*before, found.group("made") or ""]
    return any(_last_named(earlier) == folder for earlier in made if earlier)


def _last_named(command: str) -> str:
    """The name a command gives last: its last word's last part, without `.git`; none
    for a comment or a change of folder."""
    words = command.split()
    if not words or words[0] == "cd" or words[0].startswith(("#", "//")):
        return ""  # a comment says what comes, it makes nothing
    return words[-1].rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")


def tree_paths(code: list[tuple[int, str]]) -> dict[int, str]:
    """{line: path} of a code block that draws a folder tree, with box characters
    (`├── src/`) or indentation alone (names only, some below a folder): each name joined
    to the folders it is drawn under (`plugin/` then `├── scheduler/`: `plugin/scheduler/`).
    A name with a deeper line below it is a folder even without its slash. Empty for any
    other block."""
    drawn = [(n, m) for n, line in code if line.strip() and (m := _TREE_LINE.match(line))]
    lines = [line for _, line in code if line.strip()]
    boxed = any(_BOX.search(line) for line in lines)
    if len(drawn) < 2 or (not boxed and len(drawn) < len(lines)):
        return {}
    columns = [len(m.group("lead")) for _, m in drawn]
    if max(columns) == min(columns):
        return {}
    out: dict[int, str] = {}
    stack: list[tuple[int, str]] = []  # (column, folder) of the folders above
    for i, (number, found) in enumerate(drawn):
        column, name = columns[i], found.group("name")
        while stack and stack[-1][0] >= column:
            stack.pop()
        deeper = i + 1 < len(drawn) and columns[i + 1] > column
        folder = name.rstrip("/") + "/" if deeper else name
        if name in (".", "./"):
            continue
        out[number] = "".join(f for _, f in stack) + folder
        if folder.endswith("/"):
            stack.append((column, folder))
    return out


def _listed(parts: list[Part], lines: list[str]) -> list[Part]:
    """Each bullet that starts with a bare bold or backticked name, in the list below a line
    that gives their folder ("Located in `.x/skills/`, these are:"), with that name below
    the folder (`listed`). The list ends at the first line that is no bullet."""
    out: list[Part] = []
    folder = ""
    for part in parts:
        if part.code or not _BULLET.match(lines[part.first - 1]):
            found = None if part.code else _LIST_FOLDER.search(part.words)
            folder = found.group(1) if found else ""
        elif folder and _BULLET.match(part.words):
            name = _LISTED_NAME.match(lines[part.first - 1])
            if name:
                part = part._replace(listed=folder + name.group(1))
        out.append(part)
    return out


def headings(source: str) -> dict[int, str]:
    """Each line's heading: the words of the last heading above it, outside code blocks."""
    out: dict[int, str] = {}
    current, in_code = "", False
    for number, line in enumerate(source.splitlines(), start=1):
        if _FENCE.match(line):
            in_code = not in_code
        elif not in_code and _HEADING.match(line):
            current = line.strip().lstrip("#").strip()
        out[number] = current
    return out


def _block_claims(block: list[tuple[int, str]]) -> list[Part]:
    """The sentences of a bullet or a paragraph, each with the lines it spans and the
    bullet's (or the sentence's own) words as its context."""
    if not block:
        return []
    text = " ".join(words for _, words in block)
    starts, at = [], 0  # where each line begins in the joined text
    for number, words in block:
        starts.append((at, number))
        at += len(words) + 1

    def line_at(offset: int) -> int:
        return max(number for begin, number in starts if begin <= offset)

    bullet = _BULLET.match(text)
    marker = bullet.end() if bullet else 0  # `1. **Name**` is no sentence `1.`
    return [
        Part(line_at(a), line_at(b - 1), text[a:b], False, text if bullet else text[a:b])
        for a, b in _sentences(text, marker)
    ]


def _sentences(text: str, after: int = 0) -> list[tuple[int, int]]:
    """Where each sentence of `text` begins and ends, never cut inside a code span nor
    before `after` (a bullet's marker)."""
    spans = [(m.start(), m.end()) for m in CODE_SPAN.finditer(text)]
    out, begin = [], 0
    for cut in _SENTENCE_END.finditer(text):
        if cut.start() < after or any(a < cut.start() < b for a, b in spans):
            continue
        out.append((begin, cut.start()))
        begin = cut.end()
    out.append((begin, len(text)))
    return [(a, b) for a, b in out if text[a:b].strip()]


# Claude Code's import: `@path` at a line's start or after a space, outside code
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[\w.~-]+/)*[\w.-]+)")
IMPORT_DEPTH = 5  # imports of imports, as deep as Claude Code follows them


def imports(root: Path, path: str, source: str) -> list[tuple[str, str]]:
    """(path, text) of each repository file `source` (the file at `path`) imports with Claude Code's
    `@path` (relative to its folder; `@AGENTS.md` in a CLAUDE.md), then theirs, each once,
    up to `IMPORT_DEPTH` deep. An import outside the repository (`@~/.claude/x.md`) or of
    no file is left out: the lint reads the project only."""
    out: dict[str, str] = {}
    todo = [(path, source, 0)]
    base = root.resolve()
    while todo:
        at, text, depth = todo.pop(0)
        if depth >= IMPORT_DEPTH:
            continue
        for target in _import_targets(text):
            if target.startswith("~"):
                continue
            full = (base / at).parent / target
            try:
                rel = full.resolve().relative_to(base).as_posix()
            except ValueError:
                continue
            if rel in out or rel == path or not full.is_file():
                continue
            try:
                out[rel] = full.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            todo.append((rel, out[rel], depth + 1))
    return list(out.items())


def _import_targets(source: str) -> list[str]:
    found, in_code = [], False
    for line in source.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
        elif not in_code:
            found += _IMPORT.findall(CODE_SPAN.sub(" ", line))
    return found


def _followed(root: Path, path: str, words: str, code: bool) -> str:
    """`words` without the imports the lint follows (`@docs/more.md`, linted on its own):
    an import is no claim about the code. An import of no file (a markdown file, or a
    path starting with a dot) is a path the words name, its `@` dropped and written from
    the repository's root, so that it is checked as any path is: a local file git ignores
    (`@.claude/user.md`, one's own instructions) or a submodule's file holds, a file never
    written is stale. Any other `@x/y` is an npm scope's package, left as it is."""
    if code or "@" not in words:
        return words
    folder = (root / path).parent
    base = root.resolve()

    def one(match: re.Match[str]) -> str:
        target = folder / match.group(1)
        if target.is_file():
            return ""
        if not imports_file(match.group(1)):
            return match.group(0)  # `@tolgee/react`: an npm scope's package, no import
        try:
            return target.resolve().relative_to(base).as_posix()
        except ValueError:
            return match.group(0)

    return _IMPORT.sub(one, words)


def as_body(words: str, code: bool) -> str:
    """A claim's words as a memory body: a line of code becomes a code span, its trailing
    `# comment` kept as prose."""
    if not code:
        return words
    if words.startswith(("#", "//")):
        return words.lstrip("#/ ")
    command, _, comment = words.partition(" # ")
    return f"`{command.strip().replace('`', '')}`" + (f" ({comment})" if comment else "")


def lint(root: Path, path: str, source: str) -> list[Finding]:
    """The findings of every claim of `source` (the file at `path`) that names code."""
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    findings = []
    written = written_at(root, path, source)
    # the words not committed yet were written against the last commit
    baseline = written or (
        git(root, "rev-parse", "-q", "--verify", "HEAD").decode().strip() or None
    )
    gone = folder_gone(root, path, written)
    parts = split_claims(source)
    # the tree the file was written against, read once only for trees and listed names
    placed = written and any(part.tree or part.listed for part in parts)
    before = (tree_at(root, written) if written and placed else None) or {}
    with Verifier(Layout(root), use_cache=False) as verifier:
        split = []
        for part in parts:
            body = _body(root, path, part, before)
            claims = verifier.body_claims(body) + _listed_claims(part, before)
            split.append((part, body, claims))
        # one search of the tree for every name the file's claims ask about
        verifier.answer(c for *_, claims in split for c in claims)
        heading = headings(source)
        for part, body, claims in split:
            lapsed = {}
            if written is not None:
                about = heading.get(part.first, "")
                lapsed = {f.claim: f.reason for f in verifier.lapsed(body, claims, written, about)}
            if not claims and not lapsed:
                continue
            status, reasons = _judged(verifier, part, claims, lapsed, written, folder, baseline)
            if gone is not None and claims:
                status, reasons = "stale", [gone]
            findings.append(Finding(part.first, part.words, status, "; ".join(reasons), part.last))
    return findings


def _judged(
    verifier: Verifier,
    part: Part,
    claims: list[Claim],
    lapsed: dict[Claim, str],
    written: str | None,
    folder: str,
    baseline: str | None,
) -> tuple[str, list[str]]:
    """The status of one claim of the file and its reasons: stale when a name fails and
    did not move, moved when every failing path lives elsewhere now. A bare word
    (`WORD_KINDS`) fails only where `baseline`, the commit the file was written against,
    had it."""
    status, reasons = "ok", []
    # a removal or a replacement ("use `a` instead of `b`"): its names may be gone;
    # a name a rule warns against ("never name tests `TestBug4821`") is expected gone
    warned = counter_examples(part.context)
    every = [*claims, *(c for c in lapsed if c not in claims)]
    failing: list[tuple[Claim, str]] = []
    for claim in [] if states_change(part.context) else every:
        if warned(claim):
            continue
        reason = lapsed.get(claim) or _failure(verifier, claim, part.context, folder)
        if reason is not None:
            failing.append((claim, reason))
    # a word the code lacks now and lacked where the file was written (the last commit,
    # for words not committed yet) was never this code's: another tool's, an example's
    words = [c for c, _ in failing if c.kind in WORD_KINDS and c not in lapsed]
    foreign = verifier.never_held(words, baseline) if baseline else set()
    for claim, reason in failing:
        if claim in foreign:
            continue
        moved = verifier.moved_since(claim.path, written) if claim.path else None
        if moved is not None:
            reasons.append(f"{claim.path} moved to {moved}")
            status = "stale" if status == "stale" else "moved"
        else:
            reasons.append(reason)
            status = "stale"
    if status == "stale":
        reasons = [r for r in reasons if " moved to " not in r] or reasons
    return status, reasons


def _body(root: Path, path: str, part: Part, before: dict[str, str]) -> str:
    """The claim's words as a memory body; a tree line's, the path its nesting gives it."""
    folder = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
    rooted = _tree_rooted(root, folder, part.tree, before) if part.tree else ""
    if not rooted or (before and not _had(before, rooted)):
        # a nesting the tree the file was written against does not confirm is read no
        # further than the line's own words: a misread drawing is no claim of ours
        return as_body(_followed(root, path, part.words, part.code), part.code)
    return f"`{rooted}`"


def _had(before: dict[str, str], path: str) -> bool:
    """The tree the file was written against had `path`, as a file or a folder."""
    path = path.rstrip("/")
    return path in before or any(p.startswith(path + "/") for p in before)


def _tree_rooted(root: Path, folder: str, tree: str, before: dict[str, str]) -> str:
    """A tree line's path from the repository's root (or the linted file's `folder`): a
    tree drawn under the project's own name (`myapp/` then `├── src/`), a folder neither
    has nor had where the file was written, is drawn from the root."""
    first, _, rest = tree.partition("/")
    if not rest or any((root / at / first).exists() for at in {"", folder}):
        return tree
    if any(p.startswith((first + "/", folder + first + "/")) for p in before):
        return tree
    return rest


def _listed_claims(part: Part, before: dict[str, str]) -> list[Claim]:
    """A listed name below the folder its list gives (`.x/skills/` then `- **review**`): the
    file or folder of that name (or of that name and an extension) the folder held where
    the file was written, which must still be there. A name the folder did not hold then
    is no claim: the list may name what is not a file."""
    listed = listed_entry(before, part.listed) if part.listed and before else None
    if listed is None:
        return []
    return [Claim("path", part.listed.rsplit("/", 1)[-1], "body", path=listed)]


def _failure(verifier: Verifier, claim: Claim, words: str, folder: str) -> str | None:
    """Why the claim fails in the tree, or None when it holds: from the root, or from the
    linted file's own folder for a path (`src/App.tsx` in `frontend/AGENTS.md`); a file
    name given beside a folder git ignores is a build's output, not the repository's."""
    reason = verifier.check_claim(claim)
    if reason is not None and claim.path and folder:
        reason = None if verifier.check_claim(_within(claim, folder)) is None else reason
    if reason is not None and bare_name(claim) and verifier.names_build_output(words):
        return None
    return reason


def written_at(root: Path, path: str, source: str) -> str | None:
    """The commit that last wrote the file at `path` with exactly this text (None: never
    committed so): its claims held there, as far as their author knew."""
    blob = git(root, "hash-object", "--stdin", input=source.encode()).decode().strip()
    if not blob:
        return None
    listed = git(root, "log", "--format=%H", f"--find-object={blob}", "--", path).decode()
    for commit in listed.split():
        if git(root, "rev-parse", "-q", "--verify", f"{commit}:{path}").decode().strip() == blob:
            return commit
    return None


def folder_gone(root: Path, path: str, written: str | None) -> str | None:
    """Why every claim of a nested instruction file fails when the folder it describes was
    deleted since the file was written (`tools/legacy/AGENTS.md` left alone in its folder,
    which held code then), else None: what it says of that folder's code is gone. A folder
    that held only prose and instruction files (`is_code` says no, or `.mdc` rules:
    `.cursor/rules/`) described no code of its own."""
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    if not folder or written is None:
        return None
    if any(entry.name != path.rsplit("/", 1)[1] for entry in (root / folder).iterdir()):
        return None
    held = git(root, "ls-tree", "-r", "--name-only", written, "--", f"{folder}/").decode()
    if not any(is_code(name) and not name.endswith(".mdc") for name in held.splitlines()):
        return None
    return f"its folder {folder}/ was deleted since {written[:12]}"


def _within(claim: Claim, folder: str) -> Claim:
    path = f"{folder}/{(claim.path or '').lstrip('/')}"
    return Claim(claim.kind, claim.text, claim.origin, path, claim.line, claim.symbol, claim.value)


def report(path: str, findings: list[Finding]) -> dict[str, Any]:
    counts = {s: sum(1 for f in findings if f.status == s) for s in STATUSES}
    return {"file": path, "claims": [f.to_dict() for f in findings], "counts": counts}
