"""What a memory claims about the repository, so the claims can be checked.

A memory's claims are its citations (the path exists; the line is within the file; the
symbol is defined there) plus what its body names in backticks:

- a repository path: `src/app.py`, `tests/memory/`, `pyproject.toml` (a span with a `/`
  whose last part has a file extension, ends with `/`, or starts with a top-level entry of
  the repository; or a bare file name with a known extension: some file has that name);
- a function: `name()`, `Class.method()`, `package.module.func()`;
- a class member: `Class.method` (the first part starts upper-case);
- an instance's member: `account.series` (a variable named after its class, `Account`),
  judged only against the commit the memory was verified at (`verify.lapsed`);
- a module path: `package.module.attr` (the first part is a top-level module of the repo);
- a class: a bare CamelCase name such as `RateLimiter` (defined or referenced in the code),
  or a single capitalised word such as `Spinner` (a type: it, or the word in any case,
  appears in the code);
- an identifier: a bare snake_case name such as `parse_config` or `max_retries` (defined or
  used anywhere in the code);
- a command-line flag: `--dry-run` alone, or a `--flag` inside a command whose program is
  the repository's own (a console script it declares, a script file it tracks, a Go
  `cmd/<name>/` command, a `bin` of its package.json, a binary of its Cargo.toml, or
  `python -m` one of its modules). Flags of other programs (`git log --oneline`) are not
  claims: nothing in this repository could confirm them.

Anything else in backticks (`pytest -q`, `os.path.join`, `x = 1`) is not a claim. Outside
backticks and links, the prose's paths (`apps/web/main.ts`, `packages/core/`) and calls
(`parse_config()`, `Loader.load()`) are claims too (`prose_claims`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from orchestrator.memory.tasksources import standard_gradle_task
from orchestrator.store.memfile import Memory

CODE_SPAN = re.compile(r"`([^`\n]+)`")
FLAG = re.compile(r"(?<![\w-])--[A-Za-z][A-Za-z0-9_-]*(?![\w-])")
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_CALL = re.compile(rf"^({_IDENT}(?:\.{_IDENT})*)\(.*\)$")
_DOTTED = re.compile(rf"^{_IDENT}(?:\.{_IDENT})+$")
_CAMEL = re.compile(r"^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+$")
_TYPE_WORD = re.compile(r"^[A-Z][a-z0-9]{2,}$")
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
# words shaped like names that name no code: naming styles and Apple's systems
_NOT_NAMES = frozenset(
    [
        "camelcase",
        "lowercamelcase",
        "uppercamelcase",
        "pascalcase",
        "snake_case",
        "screaming_snake_case",
        "upper_case",
        "macos",
        "ipados",
        "tvos",
        "watchos",
        "visionos",
    ]
)
_LOWER_CAMEL = re.compile(r"^[a-z][a-z0-9]+(?:[A-Z][a-z0-9]*)+$")  # `configureMqtt`, `useSession`
_INSTANCE = re.compile(r"^([a-z][a-z0-9]*(?:_[a-z0-9]+)*)\.([a-z_][A-Za-z0-9_]*[?!]?)$")
# A name that stands for any name (`TypeName`, `MyClass`, `foo_bar`, `method_name`,
# `test_my_mutation`): one word of it an example's own (foo, my...), or every word generic
# and one a placeholder's. Such a name is an example in a convention ("prefer [`TypeName`]
# references"), not a claim that the code defines it.
_NAME_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_PLACEHOLDER_WORDS = frozenset(
    [
        "foo",
        "bar",
        "baz",
        "qux",
        "quux",
        "my",
        "your",
        "some",
        "example",
        "sample",
        "name",
        "placeholder",
        "xxx",
        "xyz",
        "specific",
        "particular",
        "certain",
    ]
)
_EXAMPLE_WORDS = frozenset(["foo", "bar", "baz", "qux", "quux", "xyz", "my", "your"])  # any name
_EXAMPLE_LETTERS = frozenset(["x", "y", "z"])  # `test_with_x_y`: two of them stand for words
_STAND_IN_WORDS = frozenset(["model", "entity", "object", "obj", "record", "resource", "item"])
# A flag that stands for any flag ("give the right `--options`").
_PLACEHOLDER_FLAGS = frozenset(["--options", "--option", "--flags", "--flag", "--args"])
# A name a sentence gives as a git branch ("branches start with `claude/`"), not a folder.
# a sentence about how branches are named ("Branch naming: `feat/`, `fix/`"): each one-word
# span with its slash is a branch prefix
_BRANCH_NAMING = re.compile(r"\bbranch(?:es)?\s+(?:names?|naming|prefix(?:es)?)\b", re.I)
_PREFIX_ONLY = re.compile(r"[a-z][a-z0-9-]*/")  # `feat/`, `v2/`
# a span the word "branch" follows: "using a `publish/` branch", "the `release/1.x` branches"
_BRANCH_AFTER = re.compile(r"`([^`\n]+)`\s+branch(?:es)?\b", re.I)
_BRANCH_NAME = re.compile(
    r"\bbranch(?:es)?\b[^.`\n]*?\b(?:start(?:s|ing)?\s+with|prefix(?:ed)?(?:\s+(?:with|by))?"
    r"|named|called)\s+`([^`\n]+)`",
    re.I,
)
_GENERIC_WORDS = _PLACEHOLDER_WORDS | frozenset(
    [
        "type",
        "class",
        "method",
        "function",
        "func",
        "fn",
        "var",
        "variable",
        "field",
        "struct",
        "interface",
        "trait",
        "enum",
        "component",
        "module",
        "package",
        "value",
        "thing",
        "item",
        "arg",
        "param",
        "key",
    ]
)
# a file name led by a word standing for any file's name: `filename_ext.rs`, `your_file.py`
_STAND_IN_FILE = re.compile(
    r"(?:file_?name|your_?file|my_?file|some_?file)((?:[_-][\w.-]*)?\.\w+)", re.I
)
# words that say what kind of file a name is, and nothing of its own: `test-file`
_FILE_KIND_WORDS = frozenset(["test", "spec", "file", "my", "some", "example", "sample", "new"])
# the names of naming styles (`snake_case.py`, `kebab-case.ts`): a convention, no file
_CASE_STYLES = frozenset(
    ["snake_case", "kebab-case", "camelcase", "pascalcase", "screaming_snake_case", "lowercase"]
)
_PATH_PART = re.compile(r"^[\w@+.-]+$")
_STAND_IN_PATH = re.compile(r"/path/to/|/path/$", re.I)  # `path/to/x`, `./pkg/path`
_PROSE_PATH = re.compile(
    r"(?<![\w@:/.~$<{}>-])((?:\.?/|\.(?=\w))?[\w@+-][\w@+.-]*(?:/[\w@+.-]+)+/?)(?![\w<{*\[$/-])"
)
_PROSE_CALL = re.compile(
    r"(?<![\w.`])([a-z_][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Za-z0-9]+\.[a-z_][A-Za-z0-9_]*)\(\)"
)
# a file the words say is a command's output: "`x.json` is generated by ...", "`gen/` (auto-generated)"
_GENERATED = re.compile(
    r"`([^`\n]+)`\s*(?:\(\s*)?(?:(?:is|are|gets?|will be)\s+)?(?:auto-?)?generated\b"
    r"(?=\s*(?:by|from|with|\)|$|\.|,|;))",
    re.I,
)
# where the words say generated files appear: "Generated routes appear in `app/routes/`"
_GENERATED_IN = re.compile(
    r"\b(?:auto-?)?generated\b[^`\n.;]{0,40}?\b(?:appears?|are (?:written|placed|put)|goe?s|"
    r"lands?|end up)\s+(?:in|into|to|under)\s+`([^`\n]+)`",
    re.I,
)
# words of a Gradle build: a standard task named beside them is the build's, no code name
_GRADLE_WORDS = re.compile(r"\b(?:gradle|gradlew|tasks?|android)\b", re.I)
# a product named with its `.js` (Vue.js, Node.js, Next.js), not a file
_PRODUCT_JS = re.compile(r"[A-Z][A-Za-z0-9]*\.js")
# a naming style or a placement and the examples after it in parentheses: "Components:
# PascalCase (`DashboardMenu.tsx`)", "lowercase with dashes (`components/auth-wizard/`)",
# "specs colocated with the code they test (`parser.test.ts`)"
_STYLE_EXAMPLES = re.compile(
    r"\b(?:PascalCase|camelCase|snake_case|kebab-case|SCREAMING_SNAKE_CASE|lower ?case|"
    r"upper ?case|with (?:dashes|hyphens|underscores)|auxiliary verbs|naming|file ?names?|"
    r"co-?located)\b[^()\n]{0,40}\(([^()\n]*)\)",
    re.I,
)
# a code span after a product's possessive: "SwiftUI's `WindowGroup`", "Django's `F()`"
_OWNED_SPAN = re.compile(r"\b[A-Z][\w.+-]*['’]s\s+`([^`\n]+)`")


def _tool_flag(flag: str, body: str) -> bool:
    """A flag led by the name of a tool the words name with a capital ("Gradle needs
    `--gradle-user-home`"): that tool's option, not one of the project's programs."""
    tool = flag.lstrip("-").split("-", 1)[0]
    return len(tool) >= 3 and re.search(rf"\b{re.escape(tool.capitalize())}\b", body) is not None


# the marks of bold around a word, not a glob's `**` (`src/**/*.ts`)
_BOLD_MARK = re.compile(r"(?<![\w/*])\*\*(?=[\w./@])|(?<=[\w.)/])\*\*(?![\w/*])")
# a link's target or an address, whose words are no prose
LINK_TARGET = re.compile(r"\]\([^)]*\)|\bmdc:\S+|\w+://\S+")
# a repository on a forge, linked (`github.com/acme/infra`): `acme/infra` names it, no folder
_FORGE_REPO = re.compile(r"\b(?:github|gitlab)\.com/([\w.-]+/[\w.-]+)")
FILE_EXTENSIONS = frozenset(
    [
        "py",
        "pyi",
        "md",
        "mdc",
        "rst",
        "txt",
        "toml",
        "json",
        "jsonl",
        "ndjson",
        "yaml",
        "yml",
        "cfg",
        "ini",
        "conf",
        "lock",
        "env",
        "js",
        "mjs",
        "cjs",
        "ts",
        "tsx",
        "jsx",
        "go",
        "rs",
        "java",
        "kt",
        "kts",
        "scala",
        "rb",
        "php",
        "sh",
        "bash",
        "zsh",
        "fish",
        "ps1",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "cs",
        "swift",
        "m",
        "mm",
        "html",
        "htm",
        "css",
        "scss",
        "sql",
        "xml",
        "csv",
        "tsv",
        "ipynb",
        "proto",
        "graphql",
        "tf",
        "hcl",
        "gradle",
        "mk",
        "dockerfile",
        "vue",
        "svelte",
        "lua",
        "pl",
        "r",
        "jl",
        "ex",
        "exs",
        "erl",
        "hs",
        "ml",
        "el",
        "clj",
        "dart",
        "zig",
        "nim",
        "sqlite",
        "db",
        # .NET's projects and solutions (`App.csproj`, `Shop.sln`), not `Class.member`s
        "csproj",
        "fsproj",
        "vbproj",
        "sln",
        "slnx",
        "slnf",
        "razor",
    ]
)
BARE_FILES = frozenset(
    [
        "Makefile",
        "Dockerfile",
        "Containerfile",
        "Procfile",
        "Jenkinsfile",
        "Gemfile",
        "Rakefile",
        "Vagrantfile",
        "Justfile",
        "LICENSE",
        "README",
        "CHANGELOG",
        "NOTES",
    ]
)


# claims of a bare word, not a place (an identifier, a call, a flag, an environment
# variable, a class or a member), and file patterns (a kind of file, `*.vbx`): only what the
# code had and lost makes one stale
WORD_KINDS = frozenset(
    {
        "identifier",
        "function",
        "flag",
        "env",
        "class",
        "type",
        "member",
        "instance",
        "pattern",
    }
)


@dataclass(frozen=True)
class Claim:
    """One checkable statement. `kind`: path, line, symbol, function, member, module,
    class, type (a single capitalised word), identifier, flag, mention (a path in prose),
    instance (`account.series`: `Account.series`, judged against the recorded commit only). `path` is set for claims about one file (citations, body paths)."""

    kind: str
    text: str  # as the memory wrote it
    origin: str  # citation | body
    path: str | None = None
    line: int | None = None
    symbol: str | None = None
    value: str | None = None  # a stated value (a version, a timeout), for `value` claims

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind, "text": self.text, "origin": self.origin}
        if self.path is not None:
            out["path"] = self.path
        if self.line is not None:
            out["line"] = self.line
        if self.symbol is not None:
            out["symbol"] = self.symbol
        if self.value is not None:
            out["value"] = self.value
        return out


@dataclass(frozen=True)
class RepoShape:
    """What claim extraction needs to know about the repository (cheap to build)."""

    top_level: frozenset[str]  # names of the root's entries
    modules: frozenset[str]  # top-level Python packages/modules ("orchestrator")
    programs: frozenset[str]  # console scripts and tracked script files


# a runtime's object whose property reads like a file's extension: `process.env` is Node's
# environment, `import.meta.env` Vite's, not a file named so
_RUNTIME_OBJECTS = frozenset(["process", "import.meta", "Deno", "Bun"])


def _has_extension(name: str) -> bool:
    if "." not in name.strip("."):
        return False
    stem, extension = name.rsplit(".", 1)
    return extension.lower() in FILE_EXTENSIONS and stem not in _RUNTIME_OBJECTS


def stand_in_path(path: str) -> bool:
    """`path/to/file.py`, `src/path/to/pkg`: any file's or folder's path, no claim; so is
    a file whose name stands for any name (`tests/unit/test_name.cc`,
    `__tests__/test-file.test.ts`: `placeholder_name`, or words of a file's kind alone,
    one of them "file", or a thing's kind and "-name": `docs/feature-name.md`;
    `tests/test_specific.py`: words of a file's kind and one that says "whichever", as in
    "run one specific test file")."""
    if _STAND_IN_PATH.search("/" + path.strip("/") + "/") is not None:
        return True
    stem = path.rstrip("/").rsplit("/", 1)[-1].split(".", 1)[0]
    if stem.lower() in _CASE_STYLES:
        return True  # `snake_case.py`: how files are named, no file
    words = [w.lower() for w in re.split(r"[-_]", stem) if w]
    if len(words) < 2:
        return False
    if "file" in words and all(w in _FILE_KIND_WORDS for w in words):
        return True
    if re.fullmatch(r"[a-z]+-names?", stem):
        return True  # `test/rule-name.js`: a file named after the rule it tests, any rule
    if all(w in _FILE_KIND_WORDS or w in _PLACEHOLDER_WORDS for w in words) and any(
        w in ("specific", "particular", "certain", "some", "example") for w in words
    ):
        return True  # `test_specific.py`, `specific_test.dart`: "run one specific test file"
    return placeholder_name(stem)


def looks_like_path(span: str, shape: RepoShape) -> bool:
    if " " in span or "://" in span or span.startswith(("-", "~", "$", "@", "self.", "this.")):
        return False  # `self.tools.java`: an attribute, not a file
    parts = span.strip("/").split("/")
    if not all(_PATH_PART.match(p) for p in parts) or any(p in ("", "..") for p in parts):
        return False
    if stand_in_path(span):
        return False  # `path/to/file.py`: any file's path
    if span.startswith("/") and parts[0] not in shape.top_level:
        return False  # a route (`/api/v1/`) or a path of the machine (`/etc/hosts`)
    if "/" in span.strip("/") or span.endswith("/"):
        return span.endswith("/") or _has_extension(parts[-1]) or parts[0] in shape.top_level
    return _has_extension(span) or span in BARE_FILES


def _own_program(words: list[str], shape: RepoShape) -> bool:
    """The command runs a program of this repository (a console script, a tracked script,
    `python -m` one of its modules)."""
    program = words[0]
    if program in ("python", "python3", "uv", "poetry") and len(words) > 2:
        if words[1] == "-m" and words[2].split(".")[0] in shape.modules:
            return True
        program = words[2] if words[1] == "run" else words[1]
    return program.removeprefix("./") in shape.programs


def _program_flags(span: str, shape: RepoShape) -> list[str]:
    words = span.split()
    return FLAG.findall(span) if words and _own_program(words, shape) else []


def placeholder_name(name: str) -> bool:
    """Whether `name` stands for any name (see `_PLACEHOLDER_WORDS`): also one that says
    what it stands for, `fully.qualified.Name`, or a class's (`TestClassName`: a capital,
    then a kind of name, then `Name`)."""
    words = [w.lower() for w in _NAME_WORD.findall(name)]
    if len(words) < 2:
        return False
    if "fully qualified" in " ".join(words):
        return True
    if name[:1].isupper() and words[-1] == "name" and words[-2] in _GENERIC_WORDS:
        return True
    if words == ["test", "name"]:  # `go test -run TestName`: any test's name
        return True
    if any(w in _EXAMPLE_WORDS for w in words):  # `test_my_mutation`, `FooService`
        return True
    if sum(w in _EXAMPLE_LETTERS for w in words) >= 2:  # `test_with_x_y`
        return True
    if words[0] == "test" and len(words) > 2:
        words = words[1:]  # `TestSpecificFunction`: a test of any specific function
    return all(w in _GENERIC_WORDS for w in words) and any(w in _PLACEHOLDER_WORDS for w in words)


def stand_in_rest(name: str) -> str | None:
    """What follows a first word that stands for the thing a name is about
    (`model_qs_select_for_update`: each model's `order_qs_select_for_update`), else None."""
    first, _, rest = name.partition("_")
    return rest if first in _STAND_IN_WORDS and "_" in rest else None


def span_claims(span: str, shape: RepoShape) -> list[Claim]:
    """The claims one backtick span makes (most spans make none)."""
    span = span.strip()
    if not span or placeholder_name(span.removesuffix("()")) or span.lower() in _NOT_NAMES:
        return []
    if FLAG.fullmatch(span):
        return [] if span in _PLACEHOLDER_FLAGS else [Claim("flag", span, "body", symbol=span)]
    if " " in span or "\t" in span:
        return [Claim("flag", f, "body", symbol=f) for f in _program_flags(span, shape)]
    call = _CALL.match(span)
    if call:
        name = call.group(1)
        if "." not in name:
            return [Claim("function", span, "body", symbol=name)]
        return _dotted(span, name, shape)
    stand_in = _STAND_IN_FILE.fullmatch(span)
    if stand_in:  # `filename_ext.rs`: any file named so, `*_ext.rs`
        return [Claim("pattern", span, "body", symbol="*" + stand_in.group(1))]
    if span.endswith("/..."):  # Go's packages below a folder (`sdk/go/...`): the folder
        below = span.removesuffix("/...").removeprefix("./")
        if below.split("/", 1)[0] not in shape.top_level:
            return []  # every package (`./...`), or a module's import path (`k8s.io/x/...`)
        return [Claim("path", span, "body", path=below + "/")]
    if looks_like_path(span, shape):
        return [Claim("path", span, "body", path=span)]
    folder = pattern_folder(span)
    if folder is not None and folder.split("/", 1)[0] in shape.top_level:
        return [Claim("path", span, "body", path=f"{folder}/")]
    if _DOTTED.match(span):
        return _dotted(span, span, shape)
    if _CAMEL.match(span):
        return [Claim("class", span, "body", symbol=span)]
    if _TYPE_WORD.match(span) and span not in BARE_FILES:
        return [Claim("type", span, "body", symbol=span)]
    if _SNAKE.match(span) or _LOWER_CAMEL.match(span):
        return [Claim("identifier", span, "body", symbol=span)]
    return []


def pattern_folder(span: str) -> str | None:
    """The folder a file pattern lies in (`docs/guide/**`, `src/*.ts`: `docs/guide`,
    `src`), the plain parts before its first wildcard; None for a pattern that starts
    with one (`**/*.ts`) or is no pattern. The pattern holds no file once it is gone."""
    if "*" not in span or "/" not in span:
        return None
    lead: list[str] = []
    for part in span.split("/"):
        if "*" in part:
            break
        if not _PATH_PART.match(part) or part in (".", ".."):
            return None
        lead.append(part)
    return "/".join(lead) or None


def _dotted(span: str, name: str, shape: RepoShape) -> list[Claim]:
    first = name.split(".", 1)[0]
    if first[0].isupper():
        return [Claim("member", span, "body", symbol=name)]
    if first in shape.modules:
        return [Claim("module", span, "body", symbol=name)]
    instance = _INSTANCE.match(name)
    if instance and first not in ("self", "this", "cls"):
        # `account.series`: a member of the class the variable is named after (`Account`)
        owner = "".join(w.capitalize() for w in first.split("_"))
        return [Claim("instance", span, "body", symbol=f"{owner}.{instance.group(2)}")]
    own = name.split(".")[1] if first in ("self", "this") else ""
    if _SNAKE.match(own) or _LOWER_CAMEL.match(own):
        # `self.sys_addons`, `this.userStore.load()`: a member some class of ours has
        return [Claim("identifier", span, "body", symbol=own)]
    return []  # `os.path.join`, `self.store`: nothing this repository could confirm


def citation_claims(memory: Memory) -> list[Claim]:
    """A citation's file, line and symbol (a line claim knows the symbol cited beside
    it: a file that shrank may have moved both up)."""
    out: list[Claim] = []
    for c in memory.citations:
        where = c.path + (f":{c.line}" if c.line else "") + (f"#{c.symbol}" if c.symbol else "")
        out.append(Claim("path", where, "citation", path=c.path))
        if c.line is not None:
            out.append(Claim("line", where, "citation", path=c.path, line=c.line, symbol=c.symbol))
        if c.symbol:
            out.append(Claim("symbol", where, "citation", path=c.path, symbol=c.symbol))
    return out


def _foreign_command(span: str, shape: RepoShape) -> bool:
    """A command of a program that is not this repository's own (`php artisan route:list`,
    `git log`): the bare flags the same text gives are that program's."""
    words = span.split()
    if len(words) < 2 or not re.fullmatch(r"[a-z][\w.-]*", words[0]):
        return False
    return not _own_program(words, shape)


@lru_cache(maxsize=32768)
def body_claims(body: str, shape: RepoShape) -> tuple[Claim, ...]:
    """The claims of a body's code spans and prose. A branch name (`claude/`, a span the
    word "branch" follows, or each one-word prefix of a sentence on branch naming: `feat/`,
    `fix/`, `v2/`) is no path,
    nor is a file the words say is generated (`` `docs/names.json` is generated by ...``:
    a command's output need not be tracked), nor are the examples of a naming style
    ("PascalCase (`DashboardMenu.tsx`)"); with a command of another program in the same
    body, a bare `--flag` is that program's, not one this repository could confirm."""
    found: dict[tuple[str, str], Claim] = {}
    spans = [m.group(1).strip() for m in CODE_SPAN.finditer(body)]
    branches = (
        {b.strip() for b in _BRANCH_NAME.findall(body)} if "branch" in body.lower() else set()
    )
    if "branch" in body.lower():
        branches |= {b.strip() for b in _BRANCH_AFTER.findall(body)}
    if _BRANCH_NAMING.search(body):
        branches |= {span for span in spans if _PREFIX_ONLY.fullmatch(span)}
    if "generat" in body.lower():
        branches |= {m.group(1).strip() for m in _GENERATED.finditer(body)}
        branches |= {m.group(1).strip() for m in _GENERATED_IN.finditer(body)}
    if _GRADLE_WORDS.search(body):  # "no emulator for `connectedAndroidTest`": a task
        branches |= {span for span in spans if standard_gradle_task(span)}
    if "(" in body:
        for style in _STYLE_EXAMPLES.finditer(body):
            branches |= {m.group(1).strip() for m in CODE_SPAN.finditer(style.group(1))}
    if "'s" in body or "’s" in body:  # "SwiftUI's `WindowGroup`": the library's own name
        branches |= {m.group(1).strip() for m in _OWNED_SPAN.finditer(body)}
    branches |= _linked_repositories(body, spans)
    foreign = any(_foreign_command(span, shape) for span in spans)
    for span in spans:
        if span in branches or (FLAG.fullmatch(span) and (foreign or _tool_flag(span, body))):
            continue
        for claim in span_claims(span, shape):
            found.setdefault((claim.kind, claim.text), claim)
    for claim in prose_claims(body, shape):
        found.setdefault((claim.kind, claim.text), claim)
    return tuple(found.values())


def _linked_repositories(body: str, spans: list[str]) -> set[str]:
    """Spans that name another repository beside its link ("`acme/infra` on GitHub", linked
    to github.com/acme/infra): its `owner/name`, no folder of this tree."""
    if ".com/" not in body:
        return set()
    linked = {m.group(1).removesuffix(".git").lower() for m in _FORGE_REPO.finditer(body)}
    return {span for span in spans if span.lower().strip("/") in linked}


def prose_claims(body: str, shape: RepoShape) -> list[Claim]:
    """Names the prose gives outside code spans and links: a repository path (a file with
    an extension under a folder, `apps/web/src/main.ts`, or a folder below a top-level
    entry written with its slash, `packages/core/`, or three parts deep, `web/assets/img`)
    and a call (`parse_config()`, `Loader.load()`)."""
    prose = CODE_SPAN.sub(" ", body) if "`" in body else body
    if "](" in prose or "mdc:" in prose or "://" in prose:
        prose = LINK_TARGET.sub(" ", prose)
    if "**" in prose:
        prose = _BOLD_MARK.sub(" ", prose)  # `**docs/setup.md**`: the path, not `docs/setup`
    out: list[Claim] = []
    for word in _PROSE_PATH.findall(prose) if "/" in prose else ():
        word = word.rstrip(".,;:)")
        if word.startswith("@") and imports_file(word[1:]):
            word = word[1:]  # Claude Code's import of a file (`@.claude/notes.md`): its path
        parts = word.strip("/").split("/")
        if len(parts) < 2 or word.startswith("//") or not all(parts):
            continue
        if stand_in_path(word) or (len(parts) == 2 and _PRODUCT_JS.fullmatch(parts[1])):
            continue  # `path/to/x`; "TypeScript/Vue.js": two products, no path
        # below a top-level entry: a folder written with its slash, or three parts deep
        # without it (`web/assets/img`); two bare parts are as often words ("public/exported")
        below = parts[0] in shape.top_level and (word.endswith("/") or len(parts) > 2)
        if _has_extension(parts[-1]) or below:
            out.append(Claim("mention", word, "body", path=word))
    for call in _PROSE_CALL.findall(prose) if "()" in prose else ():
        out += span_claims(call + "()", shape)
    return out


def imports_file(target: str) -> bool:
    """`target` of an `@target` is a file Claude Code imports (a markdown file, or a path
    starting with a dot: `@docs/x.md`, `@.claude/notes.md`), not an npm scope's package
    (`@tolgee/react`)."""
    return target.startswith(".") or target.endswith(".md")


def memory_claims(memory: Memory, shape: RepoShape) -> list[Claim]:
    """Every claim of `memory`: its citations first, then its body's, without repeats."""
    return citation_claims(memory) + list(body_claims(memory.body, shape))


def claim_paths(claims: list[Claim]) -> list[str]:
    """The repository files the claims depend on directly (for the `changed` result)."""
    return list(dict.fromkeys(c.path for c in claims if c.path is not None))
