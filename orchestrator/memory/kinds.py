"""Claims beyond code names: what a command, a sentence or a config line says of the project.

Each kind has its own check against what the project declares now (`Project`):

- `script`: a package-manager script, `npm run X`, `pnpm X`, `yarn X`, `bun run X`: some
  package.json defines `scripts.X` (the one of the folder a `cd DIR &&` names, when it
  has one). `pnpm X` and `yarn X` without `run` may run an installed program as well, so
  there X must be a script or a dependency.
- `task`: a Make target (`make X`), a just recipe (`just X`), a mise task (`mise run X`),
  a zig build step (`zig build X`), each read from every source the tool reads (`tasksources`), a tox environment (`tox -e X`), a nox session (`nox -s X`), a hatch environment
  (`hatch run X:cmd`, `hatch -e X`).
- `extra`: an optional-dependency group or dependency group (`pip install -e ".[dev]"`,
  `uv sync --extra X`, `--group X`, `poetry install --with X`).
- `directory`: a folder a command enters (`cd client`): it exists, from the root or below
  some folder, or a Dockerfile of the project makes it in its image (`WORKDIR`, a `COPY`
  or `ADD` destination), where the command runs in the container.
- `pattern`: a file pattern (`*_test.go`, "files ending in `.spec.ts`"): some tracked
  file's name matches it. A pattern is never read as a file name; a route led by `/`
  (`/shop.api.v2.*`, or beside "route", "endpoint", "base path") is none.
- `env`: an environment variable (`$API_URL`, `API_URL=... cmd`, a backticked
  `UPPER_CASE_NAME`): the code names it somewhere. Variables every tool knows (`PATH`,
  `NODE_ENV`, `RUST_LOG`...) are no claim.
- `variable`: a variable an assignment alone sets (`PG_HOST=127.0.0.1`, as a `.env`
  example has it): judged in `verify` against the recorded commit only (code read it
  then, none reads it now), as a local setting or a secret need not be in the code.
- `value`: a stated value beside a thing the config defines: a language or tool version
  ("Python 3.10+", "Go 1.25", "Node 20", "pnpm 9", "Rust 1.80"), a dependency's version
  ("React 18"), the pytest timeout, compared with pyproject.toml, setup.cfg, package.json,
  go.mod, Cargo.toml and the version files now (a minimum: the declarations nearest the
  root); a different value is stale, with both. A named version ("Go version: 1.31.2",
  "pnpm 9") is one version: some declaration or pin (a CI workflow's `go-version:`,
  `.tool-versions`, mise's `[tools]`, `packageManager`) must have it; so is a stated
  pre-release (".NET 12.0 RC", against global.json's SDK): a pin must be a pre-release.
- `size`: a file's size stated beside its name ("`Application` (74KB)", "about 156
  lines"): the file named, defining the name, or cited, within `_SIZE_TOLERANCE`.
- `setting`: a number stated as a named setting's value ("`MAX_RETRIES` is 5", "`--jobs`
  (default 4)"): some tracked file sets the name to it (checked in `verify`, by `git grep`).
- `dependency`: a library or product named in prose with a capital inside the word
  ("Jobs: GoodJob", "uses the Vitess parser"): judged in `verify`, only against the commit the
  memory was verified at: a dependency a manifest declared then (`good_job`,
  `github.com/pingcap/tidb/...`) that none declares now is gone.
"""

from __future__ import annotations

import configparser
import fnmatch
import json
import re
import shlex
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from orchestrator.memory import tasksources
from orchestrator.memory.claims import (
    CODE_SPAN,
    FILE_EXTENSIONS,
    Claim,
    placeholder_name,
    stand_in_path,
)
from orchestrator.memory.codeindex import code_matches, git, inside

KINDS = (
    "script",
    "task",
    "extra",
    "directory",
    "pattern",
    "env",
    "value",
    "import",
    "size",
    "setting",
    "test-class",
)
_SEPARATORS = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
# what a command's first word looks like (`npm`, `./scripts/x.sh`, `python3.12`), and the
# words that open a line of code rather than run a program
_PROGRAM = re.compile(r"[\w.~/@+-]*\w[\w.~/@+-]*")
_CODE_WORDS = frozenset(
    [
        "import",
        "export",
        "from",
        "const",
        "let",
        "var",
        "return",
        "def",
        "class",
        "use",
        "require",
        "include",
        "package",
        "func",
        "fn",
        "pub",
        "type",
        "interface",
        "new",
    ]
)
_NAME = r"[A-Za-z0-9_][\w.:@/-]*"
_ENV_REF = re.compile(r"\$\{?([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\}?")
_ENV_ASSIGN = re.compile(r"^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)=")
_SUFFIX_WORDS = re.compile(
    r"(?:end(?:s|ing)?\s+(?:in|with)|suffix(?:ed)?(?:\s+with)?|named\s+like)\s+`([^`\s]+)`", re.I
)
_VERSION = r"v?(\d+(?:\.\d+){0,2})(?:\.x|\+)?"
_EMPHASIS = r"(?:\*\*|__|\*|_)?"
_STATED = re.compile(
    rf"(?:\b|(?=\.NET\b))(Python|Go|Golang|Node(?:\.js|JS)?|pnpm|npm|yarn|Rust|Ruby|PHP|Java|Bun"
    rf"|Deno|\.NET|dotnet)"
    rf"{_EMPHASIS}\s*:?\s*(?:(?P<named>version){_EMPHASIS}\s*:?\s*{_EMPHASIS}\s*)?"
    rf"(?:>=|≥|\^|~)?\s*{_VERSION}"
    rf"(?![\w%]|\.\d)(?P<pre>\s+(?:RC|preview|beta|alpha)\b)?",
    re.I,
)
# Rust's minimum supported version, named so ("MSRV: 1.87.0", "(MSRV 1.80)"): `rust-version`
_MSRV = re.compile(r"\bMSRV\b\)?\s*(?:is\s+|of\s+|[:=]\s*)?v?(\d+\.\d+(?:\.\d+)?)(?!\w|\.\d)")
# a declared version that is a pre-release (`12.0.100-rc.2.31207.4`, `19.0.0-beta.2`)
_PRERELEASE = re.compile(r"\d-(?:rc|preview|beta|alpha)\b", re.I)
# "Go version: 1.31.2" names one version: CI's setup, a tool pin, or the config's own
_CI_VERSION = {"go": "go", "golang": "go", "node": "node", "python": "python", "ruby": "ruby"}
_ASDF = {"go": ("golang", "go"), "golang": ("golang", "go"), "node": ("nodejs", "node")}
# a file's size stated beside its name, as an approximation: "(74KB, highly complex)",
# "about 156 lines" ("has 57 lines" is a count of the moment: the audit's excluded content)
_SIZE = re.compile(
    r"(?:\(\s*(?:~\s*|(?:about|around|roughly)\s+)?|\b(?:about|around|roughly|approximately)\s+|~\s*)"
    r"(\d+(?:\.\d+)?)\s*(KB|KiB|kB|MB|MiB|lines|LOC)\b(?!\s*(?:/|per\b))"
)
# a value stated beside a name the code or config sets: "`MAX_RETRIES` is 5", "`timeout`
# defaults to 30", "`--jobs` (default 4)", "`PORT=3000`"
_SETTING = re.compile(
    r"`(--?[A-Za-z][\w-]*|[A-Za-z_][\w-]*)`\s*(?:\(\s*)?"
    r"(?:is|=|:|of|defaults?\s+(?:to|is)|is\s+set\s+to|set\s+to|\(?default:?)\s*`?"
    r"(-?\d+(?:\.\d+)?)(?![\w.]*\.\d)"
)
_SETTING_SPAN = re.compile(r"^([A-Za-z_][\w-]*)\s*[=:]\s*(-?\d+(?:\.\d+)?)$")
_DIGIT = re.compile(r"\d")
_SIZE_TOLERANCE = 0.15  # a stated size holds within 15% of the file's (sizes are rounded)
_SIZE_UNITS = {"kb": 1024, "kib": 1024, "mb": 1024 * 1024, "mib": 1024 * 1024}
# "React 18", "Tailwind CSS v3" (a product of two words: `tailwindcss`), and a package list's
# "symfony/console (SYMFONY) - v7", "vue - v3": a name, an alias in parentheses, a dash
_DEP_STATED = re.compile(
    r"(?<![\w@/.-])((?:[A-Z][A-Za-z0-9]*\s+)?@?[A-Za-z][\w./-]*[A-Za-z0-9])"
    rf"\s+(?:\([^()\n]{{1,40}}\)\s+)?(?:[-–—]\s+)?{_VERSION}(?![\w%]|\.\d)"
)
# a markdown link or image written in a code span, as text to copy
_SHOWN_LINK = re.compile(r"`!?\[[^\]`]*\]\([^)`]*\)`")
_LINK = re.compile(r"\]\((?:mdc:)?([^)\s#]+)(?:#[^)]*)?\)")
_MDC = re.compile(r"(?<![\w(])mdc:([\w./@+-]+)")
# a sentence about generated files: the patterns it gives are of outputs ("Generated files
# (`*.g.dart`) are excluded from analysis")
_GENERATED_FILES = re.compile(r"\bgenerated\s+(?:files?|code|sources?|outputs?|artifacts?)\b", re.I)
_ROUTE_WORDS = re.compile(r"\b(?:base\s+path|routes?|endpoints?|urls?)\b", re.I)
_ALIAS_IMPORT = re.compile(r"\bfrom\s+[\"'](?:@|~)/([\w./-]+)[\"']")
_MINIMUM = re.compile(r"\+|>=|≥|\.x\b|[\^~]\s*v?\d")
_REQUIRES = re.compile(
    r"\b(?:requires?|required|minimum|at least|or (?:later|newer|higher|above)|"
    r"requires-python|go\.mod|engines|MSRV|toolchain|supports?)\b",
    re.I,
)
_TIMEOUT = re.compile(r"\btimeout\b[^.;]*?\b(\d+)\s*(?:s|sec|seconds)\b", re.I)
_INSTALL_EXTRAS = re.compile(r"\[([\w,\s-]+)\]")
# the options of a Gradle run that take a value (`-x test`, `--tests org.acme.CartTest`)
_GRADLE_VALUED = (
    *("--tests", "-x", "--exclude-task", "-p", "--project-dir", "-b", "--build-file", "-c"),
    *("--settings-file", "-g", "--gradle-user-home", "-I", "--init-script", "--console"),
    *("--warning-mode", "--include-build", "--priority", "-D", "-P"),
)
# A name with a capital inside the word ("GoodJob", "TiDB", "MySQL"), not part of a path,
# a URL or a package name: how prose names a library or a product.
_PRODUCT = re.compile(r"(?<![\w./@:-])([A-Za-z][a-z0-9]*(?:[A-Z][A-Za-z0-9]*)+)(?![\w/@-])")
# A capitalised word after a lower-case word, a comma, a colon, `+`, `&` or `/` ("run the
# tests with Jest", "Formatting: Prettier, ESLint", "Ruff + Flake8"), after a bold label
# ("**Tooling:** Prettier") or in bold ("**Tinypool**"): how prose names a tool
# mid-sentence (a sentence's first word is any word).
_TOOL = re.compile(
    r"(?:(?<=[a-z,:+&/] )|(?<=\*\*)|(?<=[a-z,:] \*\*)|(?<=:\*\* ))([A-Z][a-z]{2,}\d*)(?:\.js)?"
    r"(?![\w/@-])"
)
# Two capitalised words ("Strong Migrations", "Factory Bot"): a package whose name joins
# them, where a manifest declared one so named; any other pair of words is no claim.
_TWO_WORDS = re.compile(r"(?<![\w./@:-])([A-Z][a-z]{2,} [A-Z][a-z]{2,})(?![\w/@-])")
# A hyphenated lower-case name ("the binary-compatibility-validator plugin", "Jest with
# ts-jest"): a package's, where a manifest declared one so named.
_HYPHENATED = re.compile(r"(?<![\w./@:-])([a-z][a-z0-9]+(?:-[a-z0-9]{2,})+)(?![\w/@.-])")
# A line that denies, forbids or replaces: the names it gives need not be dependencies.
_DENIES = re.compile(
    r"\b(?:not|never|avoid|don't|instead|no longer|without|removed|replaced|deprecated)\b", re.I
)
_PACKAGE_NAME = re.compile(r"@[a-z0-9][\w.-]*/[a-z0-9][\w.-]*|[a-z0-9][a-z0-9_.]*(?:-[a-z0-9_.]+)+")
# a scoped npm package in prose, not an e-mail address or a path's part (`@acme/ui`)
_SCOPED = re.compile(r"(?<![\w.@/-])@[a-z0-9][\w.-]*/[a-z0-9][\w.-]*(?![\w/@-]|\*(?!\*))")
# three names or more joined by dots, the last a capitalised one: a chain of members, not
# a file's name (`Helpers.Instance.CreateServices`; `Specification.Tests` may be a folder's)
_MEMBER_CHAIN = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\.[A-Z]\w*")
# a package-qualified name cut short by `*` (`service.MustRegister*`, `pkg.errors.New*`):
# the package's names that start so, not files (no extension starts with a capital)
_QUALIFIED_PREFIX = re.compile(r"[a-z_]\w*(?:\.[a-z_]\w*)*\.[A-Z]\w*\*")
# a capital X or N among lower-case letters, standing for a number or a word (`vX_*`)
# a part of a pattern that stands for a name (`PluginName`, `ModuleName`): a template
_NAME_SLOT = re.compile(r"(?:^|[.*_-])(?:[A-Z][a-z]+)+Name(?=$|[.*_-])")
_STAND_IN_LETTER = re.compile(r"(?:^|[a-z0-9_.-])[XN](?:$|[a-z0-9_.*-])")
_GEM = re.compile(r"^\s*gem\s+[\"']([\w.-]+)[\"']", re.M)
# Python requirement files (`requirements-dev.txt`, `requirements/test.in`) and their
# requirements, one a line; the hooks a pre-commit configuration runs (`- id: black`)
_REQUIREMENTS_FILE = re.compile(r"(?:^|/)requirements(?:[\w.-]*|/[\w.-]+)\.(?:txt|in)$")
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][\w.-]*)", re.M)
_HOOK_ID = re.compile(r"^\s*-?\s*id:\s*[\"']?([\w.-]+)", re.M)
# Variables that tools, shells and CI define: the project need not name them.
KNOWN_ENV = frozenset(
    [
        "PATH",
        "HOME",
        "USER",
        "SHELL",
        "PWD",
        "TMPDIR",
        "LANG",
        "CI",
        "DEBUG",
        "NODE_ENV",
        "NODE_OPTIONS",
        "RUST_LOG",
        "RUST_BACKTRACE",
        "RUSTFLAGS",
        "CARGO_HOME",
        "GOPATH",
        "GOOS",
        "GOARCH",
        "GOFLAGS",
        "CGO_ENABLED",
        "PYTHONPATH",
        "VIRTUAL_ENV",
        "PYTHONDONTWRITEBYTECODE",
        "UV_PYTHON",
        "GITHUB_TOKEN",
        "GITHUB_ACTIONS",
        "EDITOR",
        "XDG_CONFIG_HOME",
        "TERM",
        "NO_COLOR",
        "FORCE_COLOR",
        "LOG_LEVEL",
        "PORT",
        "HOST",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
        "GOPROXY",
        "GOROOT",
        "GOBIN",
        "GOCACHE",
        "GOMODCACHE",
        "GOPRIVATE",
        "GOTOOLCHAIN",
        "JAVA_HOME",
        "ANDROID_HOME",
        "LD_LIBRARY_PATH",
        "PKG_CONFIG_PATH",
        "SSH_AUTH_SOCK",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
        "XDG_STATE_HOME",
        "XDG_RUNTIME_DIR",
        "LC_ALL",
        "DOCKER_HOST",
        "KUBECONFIG",
        "CARGO_TARGET_DIR",
        "NPM_TOKEN",
        "PYTHONUNBUFFERED",
    ]
)
# A sentence about domains, hosts or URLs: `*.test`, `*.example.com` are host patterns.
_VARIABLE_FOLDER = re.compile(r"\$\{?\w+\}?/([\w.@+/-]+)")  # `$project_dir/benchmarks/rust`
_JVM_SOURCES = frozenset(["java", "kt", "scala", "groovy"])
_HOSTS = re.compile(r"\b(?:domains?|hosts?|hostnames?|subdomains?|URLs?|DNS|e-?mails?)\b", re.I)
_HOST_PATTERN = re.compile(r"^\*\.[a-z][a-z0-9-]*(?:\.[a-z][a-z0-9-]*)*$")
_PNPM_BUILTINS = frozenset(
    [
        "add",
        "audit",
        "bin",
        "config",
        "create",
        "dedupe",
        "deploy",
        "dlx",
        "env",
        "exec",
        "fetch",
        "i",
        "import",
        "init",
        "install",
        "install-test",
        "it",
        "licenses",
        "link",
        "list",
        "ln",
        "ls",
        "outdated",
        "pack",
        "patch",
        "patch-commit",
        "prune",
        "publish",
        "rb",
        "rebuild",
        "remove",
        "rm",
        "root",
        "run",
        "server",
        "setup",
        "store",
        "un",
        "uninstall",
        "unlink",
        "up",
        "update",
        "upgrade",
        "why",
        "approve-builds",
        "cache",
        "self-update",
        "help",
        "info",
        "view",
        "set-script",
        "workspace",
        "workspaces",
        "global",
        "node",
        "dedupe",
        "version",
        "login",
        "logout",
        "whoami",
    ]
)


@dataclass
class Project:
    """What the tree declares (read from the working tree, each file once)."""

    root: Path
    paths: Sequence[str]  # tracked files
    _texts: dict[str, str | None] = field(default_factory=dict)
    _removed: dict[tuple[str, ...], bool] = field(default_factory=dict)

    def text(self, path: str) -> str | None:
        """A tracked file's text (None when it cannot be read, or is a link out of the
        repository: its target is not read)."""
        if path not in self._texts:
            full = self.root / path
            try:
                held = not full.is_symlink() or inside(self.root, path)
                text = full.read_text(encoding="utf-8", errors="replace") if held else None
            except OSError:
                text = None
            self._texts[path] = text
        return self._texts[path]

    def named(self, *names: str) -> list[str]:
        """Tracked files whose base name is one of `names`, outside vendored folders."""
        wanted = set(names)
        return [
            p for p in self.paths if p.rsplit("/", 1)[-1] in wanted and "node_modules/" not in p
        ]

    def once_had(self, *names: str) -> bool:
        """Whether git's history removed a file of one of these names (a project with no
        Makefile now may never have had one: `make X` then says nothing checkable)."""
        if names not in self._removed:
            specs = [f":(glob)**/{n}" for n in names]
            found = git(
                self.root,
                "log",
                "-1",
                "--format=%H",
                "--full-history",
                "--diff-filter=D",
                "--",
                *specs,
            )
            self._removed[names] = bool(found.strip())
        return self._removed[names]

    def names_match(self, glob: str) -> bool:
        """Some tracked code file (prose aside) spells a whole name matching the name
        pattern `glob` (`data-*-value`)."""
        literal = max(glob.split("*"), key=len)
        return code_matches(self.root, name_regex(glob), holding=literal)

    def _json(self, path: str) -> dict[str, Any]:
        try:
            data = json.loads(self.text(path) or "")
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def _toml(self, path: str) -> dict[str, Any]:
        try:
            return tomllib.loads(self.text(path) or "")
        except ValueError:
            return {}

    @cached_property
    def packages(self) -> dict[str, dict[str, Any]]:
        """Folder ("" for the root) -> its package.json."""
        return {_folder(p): self._json(p) for p in self.named("package.json")}

    @cached_property
    def scripts(self) -> dict[str, set[str]]:
        out = {}
        for folder, data in self.packages.items():
            scripts = data.get("scripts")
            out[folder] = set(scripts) if isinstance(scripts, dict) else set()
        return out

    @cached_property
    def dependencies(self) -> dict[str, list[str]]:
        """Dependency name (lower case, also its last part, and a scoped one's scope:
        `@angular` for `@angular/core`) -> every version it is given."""
        out: dict[str, list[str]] = {}

        def add(name: str, version: object) -> None:
            if not isinstance(version, str):
                version = version.get("version", "") if isinstance(version, dict) else ""
            keys = {name.lower()}
            if name.startswith("@"):
                keys.add(name.lower().rsplit("/", 1)[-1])  # "@prisma/client" -> "client"
                keys.add(name.lower().split("/", 1)[0])  # and "@prisma", its family
            for key in keys:
                out.setdefault(key, []).append(str(version))

        for data in self.packages.values():
            for group in ("dependencies", "devDependencies", "peerDependencies"):
                deps = data.get(group)
                if isinstance(deps, dict):
                    for name, version in deps.items():
                        add(name, version)
        for path in self.named("pyproject.toml"):
            project = self._toml(path).get("project", {})
            reqs = list(project.get("dependencies", []) or [])
            for group in (project.get("optional-dependencies", {}) or {}).values():
                reqs += list(group or [])
            for req in reqs:
                found = re.match(r"\s*([A-Za-z0-9][\w.-]*)\s*(?:\[[^\]]*\])?\s*([^;]*)", str(req))
                if found:
                    add(found.group(1), found.group(2))
        for path in self.named("Cargo.toml"):
            data = self._toml(path)
            for group in ("dependencies", "dev-dependencies"):
                for name, version in (data.get(group, {}) or {}).items():
                    add(name, version)
            workspace = data.get("workspace", {}).get("dependencies", {}) or {}
            for name, version in workspace.items():
                add(name, version)
        for path in self.named("go.mod"):  # full module paths only: never "React 18"
            for name, version in re.findall(
                r"^\s*(?:require\s+)?([\w.-]+/[\w./-]+)\s+v(\S+)", self.text(path) or "", re.M
            ):
                add(name, version)
        for path in self.named("composer.json"):
            data = self._json(path)
            for group in ("require", "require-dev"):
                deps = data.get(group)
                for name, version in (deps if isinstance(deps, dict) else {}).items():
                    add(name, version)
        for path in self.named("libs.versions.toml"):
            for name, version in _catalog_entries(self._toml(path)):
                add(name, version)
        return out

    def declared(self, name: str) -> tuple[str, list[str]]:
        """A dependency named as prose names it (`vue`, `symfony/console`, `Bootstrap`
        for `tailwindcss` or `tailwind-css`, else its last word: `Install Vue` -> `vue`),
        and the versions the manifests give it (none: not declared)."""
        words = name.split()
        if len(words) > 1 and dependency_key(name) in self._keyed:
            return name, self._keyed[dependency_key(name)]
        return words[-1], self.dependencies.get(words[-1], [])

    @cached_property
    def _keyed(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for name, versions in self.dependencies.items():
            out.setdefault(dependency_key(name), []).extend(versions)
        return out

    @cached_property
    def dependency_names(self) -> set[str]:
        """Every dependency a manifest declares, as `dependency_key`s: the names above, each
        part of a module path or a scoped package after its host (`pingcap`, `tidb`), the
        gems of a Gemfile, the packages of composer.json (vendor and name), and the tools
        of Python's development: requirement files, dependency groups (PEP 735, Poetry's)
        and pre-commit hooks."""
        names = set(self.dependencies) | self._python_tools
        for path in self.named("Gemfile"):
            names.update(_GEM.findall(self.text(path) or ""))
        for path in self.named("composer.json"):
            data = self._json(path)
            for group in ("require", "require-dev"):
                deps = data.get(group)
                names.update(deps if isinstance(deps, dict) else ())
        out = set()
        for name in names:
            out.add(dependency_key(name))
            out.update(dependency_key(part) for part in name.split("/") if "." not in part)
        out.discard("")
        return out

    @cached_property
    def _python_tools(self) -> set[str]:
        """The names requirement files, dependency groups and pre-commit hooks give."""
        names: set[str] = set()
        for path in self.paths:
            if path.endswith((".txt", ".in")) and _REQUIREMENTS_FILE.search(path):
                names.update(_REQUIREMENT.findall(self.text(path) or ""))
        for path in self.named(".pre-commit-config.yaml"):
            names.update(_HOOK_ID.findall(self.text(path) or ""))
        for path in self.named("pyproject.toml"):
            data = self._toml(path)
            groups = data.get("dependency-groups", {})
            for reqs in groups.values() if isinstance(groups, dict) else ():
                for req in reqs if isinstance(reqs, list) else ():
                    names.update(_REQUIREMENT.findall(req) if isinstance(req, str) else ())
            poetry = _table(_table(data.get("tool")).get("poetry"))
            tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
            tables += [_table(g).get("dependencies") for g in _table(poetry.get("group")).values()]
            for table in tables:
                names.update(table if isinstance(table, dict) else ())
        return names

    @cached_property
    def package_names(self) -> set[str]:
        """The names the project's own packages publish under (package.json `name`,
        Cargo.toml `[package] name`, pyproject.toml `[project] name`), lower case."""
        names = [data.get("name") for data in self.packages.values()]
        for path in self.named("Cargo.toml"):
            names.append((self._toml(path).get("package", {}) or {}).get("name"))
        for path in self.named("pyproject.toml"):
            names.append((self._toml(path).get("project", {}) or {}).get("name"))
        return {n.lower() for n in names if isinstance(n, str) and n}

    @cached_property
    def makefiles(self) -> dict[str, set[str]]:
        return tasksources.make_targets(self.paths, self.text)

    @cached_property
    def just_recipes(self) -> set[str]:
        return tasksources.just_recipes(self.paths, self.text)

    @cached_property
    def taskfile_tasks(self) -> set[str] | None:
        return tasksources.taskfile_tasks(self.paths, self.text)

    @cached_property
    def cargo_packages(self) -> set[str]:
        """The package names the tree's Cargo.toml files declare, `-` and `_` as one."""
        names = (_table(self._toml(p).get("package")).get("name") for p in self.named("Cargo.toml"))
        return {_norm(n) for n in names if isinstance(n, str)}

    @cached_property
    def zig_steps(self) -> dict[str, frozenset[str] | None]:
        return tasksources.zig_steps(self.paths, self.text)

    @cached_property
    def gradle_build(self) -> tasksources.GradleBuild | None:
        return tasksources.gradle_build(self.paths, self.text)

    @cached_property
    def mise_tasks(self) -> set[str]:
        return tasksources.mise_tasks(self.paths, self.text)

    @cached_property
    def tox_envs(self) -> set[str]:
        out: set[str] = set()
        for path in self.named("tox.ini", "setup.cfg"):
            parser = configparser.ConfigParser(interpolation=None, strict=False)
            try:
                parser.read_string(self.text(path) or "")
            except configparser.Error:
                continue
            for section in parser.sections():
                if section.startswith("testenv:"):
                    out.update(tox_names(section[8:]))
            envlist = parser.get("tox", "envlist", fallback="") or parser.get(
                "tox:tox", "envlist", fallback=""
            )
            out.update(tox_names(envlist))
        for path in self.named("pyproject.toml", "tox.toml"):
            data = self._toml(path)
            tox = data.get("tool", {}).get("tox", data)
            out.update((tox.get("env", {}) or {}) if isinstance(tox, dict) else {})
            legacy = tox.get("legacy_tox_ini", "") if isinstance(tox, dict) else ""
            out.update(re.findall(r"^\[testenv:([^\]]+)\]", str(legacy), re.M))
        return out

    @cached_property
    def nox_sessions(self) -> set[str]:
        out: set[str] = set()
        for path in self.named("noxfile.py"):
            out.update(re.findall(r"def\s+(\w+)\s*\(", self.text(path) or ""))
            out.update(re.findall(r"name\s*=\s*[\"']([\w-]+)[\"']", self.text(path) or ""))
        return out

    @cached_property
    def hatch_envs(self) -> set[str]:
        out = {"default"}
        for path in self.named("pyproject.toml", "hatch.toml"):
            data = self._toml(path)
            envs = data.get("tool", {}).get("hatch", {}).get("envs", {}) or data.get("envs", {})
            out.update(envs if isinstance(envs, dict) else {})
        return out

    @cached_property
    def extras(self) -> set[str]:
        out: set[str] = set()
        for path in self.named("pyproject.toml"):
            data = self._toml(path)
            out.update(data.get("project", {}).get("optional-dependencies", {}) or {})
            out.update(data.get("dependency-groups", {}) or {})
            poetry = data.get("tool", {}).get("poetry", {})
            out.update(poetry.get("extras", {}) or {})
            out.update(poetry.get("group", {}) or {})
        for path in self.named("setup.cfg"):
            section = re.search(
                r"^\[options\.extras_require\]\n((?:[^\[].*\n?)*)", self.text(path) or "", re.M
            )
            if section:
                out.update(re.findall(r"^(\w[\w-]*)\s*=", section.group(1), re.M))
        return {_norm(e) for e in out}

    @cached_property
    def folders(self) -> set[str]:
        return {p.rsplit("/", k)[0] for p in self.paths for k in range(1, p.count("/") + 1)}

    @cached_property
    def folder_suffixes(self) -> set[str]:
        out: set[str] = set()
        for folder in self.folders:
            parts = folder.split("/")
            out.update("/".join(parts[k:]) for k in range(len(parts)))
        return out

    @cached_property
    def names(self) -> list[str]:
        return sorted({p.rsplit("/", 1)[-1] for p in self.paths})

    @cached_property
    def folder_names(self) -> list[str]:
        """Every folder's own name (`EFCore.Specification.Tests` of `test/EFCore...`)."""
        return sorted({part for p in self.paths for part in p.split("/")[:-1]})

    # versions ------------------------------------------------------------------------

    def versions(self, tool: str) -> list[tuple[str, str]]:
        """(where, version) pairs the project declares for a language or tool."""
        tool = tool.lower().replace(".js", "").replace("js", "") if tool.lower() != "js" else tool
        out: list[tuple[str, str]] = []
        if tool == "python":
            for path in self.named("pyproject.toml"):
                req = self._toml(path).get("project", {}).get("requires-python")
                if isinstance(req, str):
                    out.append((f"{path} requires-python", req))
            out += self._version_files(".python-version")
        elif tool in ("go", "golang"):
            for path in self.named("go.mod"):
                found = re.search(r"^go\s+(\S+)", self.text(path) or "", re.M)
                if found:
                    out.append((f"{path} go", found.group(1)))
        elif tool == "node":
            out += self._version_files(".nvmrc", ".node-version")
            for folder, data in self.packages.items():
                engines = data.get("engines")
                if isinstance(engines, dict) and isinstance(engines.get("node"), str):
                    out.append((_join(folder, "package.json") + " engines.node", engines["node"]))
        elif tool in ("pnpm", "npm", "yarn", "bun"):
            for folder, data in self.packages.items():
                manager = data.get("packageManager")
                if isinstance(manager, str) and manager.startswith(tool + "@"):
                    out.append(
                        (
                            _join(folder, "package.json") + " packageManager",
                            manager[len(tool) + 1 :],
                        )
                    )
                engines = data.get("engines")
                if isinstance(engines, dict) and isinstance(engines.get(tool), str):
                    out.append((_join(folder, "package.json") + f" engines.{tool}", engines[tool]))
        elif tool == "rust":
            for path in self.named("Cargo.toml"):
                data = self._toml(path)
                version = data.get("package", {}).get("rust-version") or data.get(
                    "workspace", {}
                ).get("package", {}).get("rust-version")
                if isinstance(version, str):
                    out.append((f"{path} rust-version", version))
            for path in self.named("rust-toolchain.toml"):
                channel = self._toml(path).get("toolchain", {}).get("channel")
                if isinstance(channel, str) and channel[:1].isdigit():
                    out.append((f"{path} channel", channel))
        elif tool == "ruby":
            out += self._version_files(".ruby-version")
        return out

    def pins(self, tool: str) -> list[tuple[str, str]]:
        """(where, version) pairs that pin a tool's version outside the package config: a
        CI workflow's `<tool>-version:` (each of a matrix), `.tool-versions`, mise's
        `[tools]`, global.json's `sdk.version` (the .NET SDK)."""
        tool = tool.lower().removesuffix(".js").removesuffix("js")
        out: list[tuple[str, str]] = []
        for path in self.named("global.json") if tool in (".net", "dotnet") else []:
            sdk = self._json(path).get("sdk")
            version = sdk.get("version") if isinstance(sdk, dict) else None
            if isinstance(version, str):
                out.append((f"{path} sdk.version", version))
        ci = _CI_VERSION.get(tool)
        workflows = [
            p
            for p in self.paths
            if p.startswith(".github/workflows/") and p.endswith((".yml", ".yaml"))
        ]
        for path in workflows if ci else []:
            for raw in re.findall(rf"^\s*-?\s*{ci}-version:\s*(.+)$", self.text(path) or "", re.M):
                for value in re.split(r"[,\[\]\s]+", raw.split("#", 1)[0]):
                    value = value.strip("'\"")
                    if value[:1].isdigit():
                        out.append((f"{path} {ci}-version", value))
        names = _ASDF.get(tool, (tool,))
        for path in self.named(".tool-versions"):
            for line in (self.text(path) or "").splitlines():
                words = line.split("#", 1)[0].split()
                if len(words) > 1 and words[0] in names:
                    out += [(path, v) for v in words[1:] if v[:1].isdigit()]
        for path in tasksources.mise_configs(self.paths):
            tools = self._toml(path).get("tools", {})
            for name in names:
                value = tools.get(name) if isinstance(tools, dict) else None
                for v in value if isinstance(value, list) else [value]:
                    if isinstance(v, str | int | float) and str(v)[:1].isdigit():
                        out.append((f"{path} tools.{name}", str(v)))
        return out

    def _version_files(self, *names: str) -> list[tuple[str, str]]:
        out = []
        for path in self.named(*names):
            text = (self.text(path) or "").strip().removeprefix("v")
            if text:
                out.append((path, text.split()[0]))
        return out

    @cached_property
    def pytest_timeout(self) -> list[tuple[str, str]]:
        out = []
        for path in self.named("pyproject.toml"):
            options = self._toml(path).get("tool", {}).get("pytest", {}).get("ini_options", {})
            if "timeout" in options:
                out.append((f"{path} [tool.pytest.ini_options] timeout", str(options["timeout"])))
        for path in self.named("pytest.ini", "setup.cfg", "tox.ini"):
            found = re.search(
                r"^\[(?:tool:)?pytest\][^\[]*?^timeout\s*=\s*(\S+)",
                self.text(path) or "",
                re.M | re.S,
            )
            if found:
                out.append((f"{path} pytest timeout", found.group(1)))
        return out


@dataclass
class PastProject(Project):
    """What the tree of an older commit declared: its tracked files' texts read from git by
    blob id (`blobs`: path -> blob of that commit)."""

    blobs: dict[str, str] = field(default_factory=dict)

    def text(self, path: str) -> str | None:
        if path not in self._texts:
            blob = self.blobs.get(path)
            data = git(self.root, "cat-file", "blob", blob) if blob else b""
            self._texts[path] = data.decode("utf-8", "replace") if data else None
        return self._texts[path]


def _catalog_entries(data: dict[str, Any]) -> Iterable[tuple[str, object]]:
    """A Gradle version catalog's libraries and plugins: each by its alias and by the
    artifact or the plugin id's last part (`org.jetbrains.kotlinx.binary-compatibility-
    validator` is the binary-compatibility-validator plugin), with its version."""
    versions = data.get("versions", {}) or {}
    for group, key in (("libraries", "module"), ("plugins", "id")):
        for alias, entry in (data.get(group, {}) or {}).items():
            if isinstance(entry, str):  # "group:artifact:version"
                coords = entry.split(":")
                yield alias, coords[2] if len(coords) > 2 else ""
                if len(coords) > 1:
                    yield coords[1], coords[2] if len(coords) > 2 else ""
                continue
            if not isinstance(entry, dict):
                continue
            version = entry.get("version", "")
            if isinstance(version, dict):
                version = versions.get(version.get("ref", ""), "")
            yield alias, version
            name = str(entry.get(key) or entry.get("name") or "")
            last = name.rsplit(":", 1)[-1] if key == "module" else name.rsplit(".", 1)[-1]
            if last:
                yield last, version


def dependency_key(name: str) -> str:
    """A dependency's name as prose may spell it: `good_job`, `GoodJob` and `good-job`
    are all `goodjob`."""
    return re.sub(r"[-_.\s]+", "", name).lower()


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# extraction ------------------------------------------------------------------------------


def text_claims(text: str) -> list[Claim]:
    """The claims of these kinds that a memory body or a claim's words make."""
    claims: list[Claim] = []
    hosts: bool | None = None  # whether the text speaks of hosts, once a span could be one
    for span in (m.group(1) for m in CODE_SPAN.finditer(text)):
        if _HOST_PATTERN.match(span) and span.rsplit(".", 1)[-1].lower() not in FILE_EXTENSIONS:
            if hosts is None:
                hosts = _HOSTS.search(text) is not None
            if hosts:
                continue  # "test domains we own (`example.org`, `*.invalid`)"
        claims += _command_claims(span) + _span_claims(span, text)
    if "enerated" in text and _GENERATED_FILES.search(text):
        claims = [c for c in claims if c.kind != "pattern"]  # outputs need not be tracked
    # each pattern below runs only where a word every match of it holds is in the text
    # (lower-cased words hold no `i` or `s`: case-blind matching reads `ı` and `ſ` as those)
    low = text.lower()
    generated = "enerated" in text and _GENERATED_FILES.search(text) is not None
    if "`" in text and not generated and ("end" in low or "uff" in low or "named" in low):
        for suffix in _SUFFIX_WORDS.findall(text):
            pattern = suffix if "*" in suffix else "*" + suffix
            claims.append(Claim("pattern", pattern, "body", symbol=pattern))
    claims += _value_claims(CODE_SPAN.sub(" ", text)) + size_claims(text) + setting_claims(text)
    if "from" in text and ("@/" in text or "~/" in text):
        for alias in _ALIAS_IMPORT.findall(text):
            claims.append(Claim("import", alias, "body", symbol=alias))
    if "$" in text:
        claims += [
            Claim("env", n, "body", symbol=n) for n in _ENV_REF.findall(text) if n not in KNOWN_ENV
        ]
    found: dict[tuple[str, str, str | None], Claim] = {}
    for claim in claims:
        found.setdefault((claim.kind, claim.text, claim.symbol), claim)
    return list(found.values())


def product_claims(text: str) -> list[Claim]:
    """Libraries, products and tools named in prose: with a capital inside the word ("Jobs:
    GoodJob", "uses the Vitess parser"), capitalised mid-sentence ("run the tests with
    Jest"), or as a name of three hyphenated parts ("the binary-compatibility-validator
    plugin"), outside code spans, links and lines that deny or replace; judged by `verify`
    against the dependencies of the memory's recorded commit, so a word no manifest
    declared then is no claim at all."""
    prose = _LINK.sub(" ", CODE_SPAN.sub(" ", text))
    out: dict[str, Claim] = {}
    for line in prose.splitlines():
        if _DENIES.search(line):
            continue
        words = [
            w
            for w in _PRODUCT.findall(line)
            if any(c.islower() for c in w) and sum(c.isupper() for c in w) >= 2
        ]
        joined = _TWO_WORDS.findall(line)  # "Strong Migrations": the gem strong_migrations
        for word in [*words, *_TOOL.findall(line), *_HYPHENATED.findall(line), *joined]:
            out.setdefault(word, Claim("dependency", word, "body", symbol=dependency_key(word)))
    return list(out.values())


def denies(line: str) -> bool:
    """The line denies, forbids or replaces ("not", "instead", "no longer"...): the names
    it gives need not be what the project has."""
    return _DENIES.search(line) is not None


def package_spans(text: str) -> list[str]:
    """Package names as published (`@acme/ui`, or two hyphenated parts at least:
    `react-dom-legacy`) in code spans, and scoped ones in prose too (`import x from
    "@acme/ui"`: no other word is written so), outside lines that deny or replace; judged by
    `verify` against the project's own packages and dependencies at the memory's recorded
    commit, so a span that was neither then is no claim."""
    out: dict[str, None] = {}
    for line in text.splitlines():
        if _DENIES.search(line):
            continue
        for match in CODE_SPAN.finditer(line):
            span = match.group(1).strip()
            if _PACKAGE_NAME.fullmatch(span):
                out[span] = None
        for name in _SCOPED.findall(_LINK.sub(" ", CODE_SPAN.sub(" ", line))):
            out[name.rstrip(".")] = None
    return list(out)


def _span_claims(span: str, text: str) -> list[Claim]:
    """A file pattern in a code span (`*_test.go`, `**/*.spec.ts`). A name ending in `.*`
    (`z.iso.*`, `*.5.*`, `/shop.api.v2.*`) stands for a namespace's, a version's or a
    route's members, and a span led by one `/` beside words of web routes ("base path",
    "endpoint") is a route: no file pattern."""
    span = span.strip()
    if span.endswith(".*") and span != "*.*":
        return []  # `z.iso.*`, `*.5.*`: a namespace's or a version's members, no file names
    route = span[:1] == "/" and span[1:2] not in ("*", "/")
    if route and _ROUTE_WORDS.search(text):
        return []
    if "*" in span and " " not in span and "/" not in span.strip("*/"):
        name = span.lstrip("*/")
        if _MEMBER_CHAIN.fullmatch(name):
            return []  # `*Helpers.Instance.CreateServices`: members of any such class
        if _QUALIFIED_PREFIX.fullmatch(name):
            return []  # `service.MustRegister*`: a package's names that start so
        if _STAND_IN_LETTER.search(name) and not re.search(r"[A-Z]", re.sub("[XN]", "", name)):
            return []  # `vX_*`, `api_vN_*`: X and N stand for a number in a lower-case name
        if _NAME_SLOT.search(name):
            return []  # `Shop.*.PluginName`: a template, the part any plugin's name fills
        if name and re.fullmatch(r"[\w.*-]+", name):
            return [Claim("pattern", span, "body", symbol=name)]
    return []


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=True)
    except ValueError:
        return command.split()


def _command_claims(span: str) -> list[Claim]:
    if " " not in span.strip():
        # `PG_HOST=127.0.0.1` alone, a line of a `.env` example: a local setting or a
        # secret need not be in the code, so it is judged against the recorded commit only
        return [replace(c, kind="variable") for c in _assignment_claims(span.strip())]
    out: list[Claim] = []
    where: str | None = None
    for part in _SEPARATORS.split(span.strip()):
        words = _words(part)
        while words and _ENV_ASSIGN.match(words[0]):
            out += _assignment_claims(words[0])
            words = words[1:]
        if not words:
            continue
        program, args = words[0], words[1:]
        if program == "cd" and args:
            folder = args[0].removeprefix("./").rstrip("/")
            if _plain_folder(folder):
                out.append(Claim("directory", f"cd {args[0]}", "body", path=folder))
                where = folder if where is None else f"{where}/{folder}"
            else:
                out += _below_variable(args[0])
                where = None
            continue
        out += _program_claims(program, args, where, part)
    return out


def _below_variable(arg: str) -> list[Claim]:
    """`cd $project_dir/benchmarks/rust`: the folder below a variable's folder, some folder
    of the repository whatever the variable holds. Its last two parts at least are named
    (`benchmarks/rust`): one name alone (`$dir/tests`) says too little to check."""
    found = _VARIABLE_FOLDER.fullmatch(arg)
    rest = found.group(1).rstrip("/") if found else ""
    if "/" not in rest or not _plain_folder(rest):
        return []
    return [Claim("directory", f"cd {arg}", "body", path=rest)]


def _test_classes(program: str, args: list[str], text: str) -> list[Claim]:
    """The test classes a Maven or Gradle run selects (`-Dtest=org.acme.CartTest`,
    `-Dtest=CartTest#total`, `--tests org.acme.CartTest.total`): a qualified name is the
    class's source file below its package's folders (`org/acme/CartTest`), a bare one a
    class of the code. Patterns (`*Test`, `!Slow`) and placeholders select no one class."""
    if program.rsplit("/", 1)[-1] in ("mvn", "mvnw"):
        _, values = _options(args, ())
        names = values.get("-Dtest", "").split(",")
    else:
        _, values = _options(args, ("--tests",))
        names = [values.get("--tests", "")]
    out = []
    for name in (n.strip().split("#", 1)[0] for n in names):
        parts = name.split(".")
        if not name or not all(p.isidentifier() for p in parts) or placeholder_name(name):
            continue  # `fully.qualified.TestClassName`: any test class
        while len(parts) > 1 and not parts[-1][:1].isupper():
            parts.pop()  # a method after its class (Gradle's `Class.method`)
        if not parts[-1][:1].isupper():
            continue
        if len(parts) == 1:
            out.append(Claim("class", text, "body", symbol=parts[0]))
        else:
            source = "/".join(parts)
            out.append(Claim("test-class", text, "body", path=f"{source}.java", symbol=source))
    return out


def _gradle_task_claims(args: list[str], text: str) -> list[Claim]:
    """The tasks a Gradle run names (`apiDump`, `:app:jvmTest`: the task of that project),
    judged against the recorded commit only: a task a plugin adds is known only for the
    well-known plugins (`tasksources.GRADLE_PLUGINS`)."""
    positional, _ = _options(args, _GRADLE_VALUED)
    return [
        Claim("task", text, "body", symbol=f"gradle:{name.rsplit(':', 1)[-1]}")
        for name in positional
        if re.fullmatch(r":?(?:[\w.-]+:)*[A-Za-z_]\w*", name)
    ]


def _assignment_claims(span: str) -> list[Claim]:
    """`API_URL=http://localhost:3000`: the variable it sets."""
    found = _ENV_ASSIGN.match(span)
    name = found.group(1) if found else ""
    if not name or name in KNOWN_ENV or "_" not in name:
        return []
    return [Claim("env", name, "body", symbol=name)]


def _plain_folder(folder: str) -> bool:
    return (
        bool(folder)
        and bool(re.fullmatch(r"[\w.@+-]+(?:/[\w.@+-]+)*", folder))
        and ".." not in folder.split("/")
    )


def _options(args: list[str], takes_value: Iterable[str]) -> tuple[list[str], dict[str, str]]:
    """Positional arguments and the values of the options that take one."""
    valued = set(takes_value)
    positional: list[str] = []
    values: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            positional += args[i + 1 :]
            break
        if arg.startswith("-"):
            key, eq, value = arg.partition("=")
            if eq:
                values[key] = value
            elif key in valued and i + 1 < len(args):
                values[key] = args[i + 1]
                i += 1
            elif not positional and key not in valued:
                values.setdefault(key, "")
        else:
            positional.append(arg)
        i += 1
    return positional, values


def _program_claims(program: str, args: list[str], where: str | None, text: str) -> list[Claim]:
    if program in ("uvx", "pipx", "npx", "bunx") and args:  # `uvx hatch run ...`
        program, args = args[0], args[1:]
    if not _PROGRAM.fullmatch(program) or program in _CODE_WORDS:
        return []  # a line of code or of a patch (`import x from "../y"`, `--- a/x.py`)
    # a script run by its path (`./scripts/check.sh <suite>`) is a file, as an argument is
    ran = [program] if program.startswith("./") and _path_arg(program) else []
    out = [Claim("path", a, "body", path=a.removeprefix("./")) for a in ran + args if _path_arg(a)]
    return out + _tool_claims(program, args, where, text)


def tox_names(listed: str) -> set[str]:
    """The environments a tox list names, its factor groups expanded as tox does:
    `{py3.12,py3.13}-common, lint` is `py3.12-common`, `py3.13-common` and `lint`."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(listed + ","):
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0 and (ch in ",\n" or ch.isspace()):
            items.append(listed[start:i].strip())
            start = i + 1
    out: set[str] = set()
    for item in filter(None, items):
        names = [""]
        for literal, group in re.findall(r"([^{}]*)(?:\{([^{}]*)\})?", item):
            choices = [c.strip() for c in group.split(",")] if group else [""]
            names = [n + literal + c for n in names for c in choices]
        out.update(n for n in names if n)
    return out


def _table(value: object) -> dict[str, Any]:
    """A TOML table, or an empty one where the file holds something else."""
    return value if isinstance(value, dict) else {}


def _go_packages(args: list[str], where: str | None, text: str) -> list[Claim]:
    """The package folders a `go` command names (`./internal/http/`, `./cmd/...`; `./...`
    is every package, no one folder), below the folder a `cd` entered."""
    out = []
    for arg in args:
        folder = arg.removeprefix("./").removesuffix("...").rstrip("/")
        if arg.startswith("./") and folder and _plain_folder(folder) and not stand_in_path(folder):
            path = folder if where is None else f"{where}/{folder}"
            out.append(Claim("directory", text, "body", path=path))
    return out


def _path_arg(arg: str) -> bool:
    """A command's argument naming a file of the repository (`src/__tests__/lru.test.ts`)."""
    if arg.startswith(("-", "/", "~", "$", "@", "../")) or any(c in arg for c in "=*<>{}:"):
        return False  # an option, a path of the machine, a package's (`@types/x/...`), a
        # path from a folder the words do not give (`../lib/x.ts`)
    if "/" not in arg:
        return False
    name = arg.rstrip("/").rsplit("/", 1)[-1]
    if stand_in_path(arg):
        return False  # `tests/test_name.py`: any test's file
    return "." in name and name.rsplit(".", 1)[1].lower() in FILE_EXTENSIONS


def _tool_claims(program: str, args: list[str], where: str | None, text: str) -> list[Claim]:
    if program == "go" and args[:1] in (["build"], ["run"], ["vet"], ["install"], ["generate"]):
        return _go_packages(args[1:], where, text)
    if program == "go" and args[:1] == ["test"]:
        _, values = _options(args[1:], ("-run", "-tags", "-timeout", "-count", "-p"))
        name = values.get("-run", "")
        if name and placeholder_name(name):
            return []  # `go test -run TestFoo ./pkg/...`: a template, any test of any package
        packages = _go_packages(args[1:], where, text)
        return packages + (
            [Claim("identifier", name, "body", symbol=name)]
            if re.fullmatch(r"Test\w+", name)
            else []
        )
    if program in ("npm", "pnpm", "yarn", "bun"):
        return _script_claims(program, args, where, text)
    if program.rsplit("/", 1)[-1] in ("mvn", "mvnw"):
        return _test_classes(program, args, text)
    if program.rsplit("/", 1)[-1] in ("gradle", "gradlew", "gradlew.bat"):
        return _test_classes(program, args, text) + _gradle_task_claims(args, text)
    if program in ("make", "gmake", "just", "mise", "tox", "nox", "hatch"):
        return _task_claims(program, args, where, text)
    if program == "cargo":
        return _cargo_claims(args, text)
    if program == "task":  # go-task: `task lint`, `task tools:vuln PKG=./x`
        positional, _ = _options(args, ("-d", "--dir", "-t", "--taskfile", "-o", "--output"))
        names = [a for a in positional if "=" not in a][:1]
        return [
            Claim("task", text, "body", symbol=f"task:{n}")
            for n in names
            if re.fullmatch(r"[\w.-]+(?::[\w.-]+)*", n) and not placeholder_name(n)
        ]
    if program == "zig" and args[:1] == ["build"]:
        ours = args[1 : args.index("--")] if "--" in args else args[1:]  # then the run's
        steps, _ = _options(ours, ("-p", "--prefix", "--build-file", "--cache-dir", "-j"))
        return [
            Claim("task", text, "body", path=where, symbol=f"zig:{s}")
            for s in steps
            if re.fullmatch(r"[\w.-]+", s)
        ]
    if program in ("pip", "pip3", "uv", "poetry") or (
        program in ("python", "python3") and args[:2] == ["-m", "pip"]
    ):
        return _extra_claims(args, text)
    return []


def _script_claims(program: str, args: list[str], where: str | None, text: str) -> list[Claim]:
    positional, values = _options(
        args, ("--filter", "-F", "-C", "--dir", "--prefix", "-w", "--workspace", "--cwd")
    )
    if not positional:
        return []
    folder = (
        values.get("-C") or values.get("--dir") or values.get("--prefix") or values.get("--cwd")
    )
    folder = folder.removeprefix("./").rstrip("/") if folder else where
    scoped = any(k in values for k in ("--filter", "-F", "-w", "--workspace", "-r", "--recursive"))
    first = positional[0]
    if first in ("run", "run-script") and len(positional) > 1:
        name, direct = positional[1], False
    elif program == "npm":
        if first not in ("test", "t", "tst"):
            return []
        name, direct = "test", False
    elif (
        program == "bun"
        or first in _PNPM_BUILTINS
        or first in ("workspace", "dlx", "exec", "why", "node")
    ):
        return []
    else:
        name, direct = first, True
    if not re.fullmatch(r"[\w:.@/-]+", name) or name.startswith("-"):
        return []
    symbol = name + ("?" if direct else "")
    return [Claim("script", text, "body", path=None if scoped else folder, symbol=symbol)]


def _task_claims(program: str, args: list[str], where: str | None, text: str) -> list[Claim]:
    if program in ("make", "gmake"):
        positional, values = _options(args, ("-C", "-f", "--directory", "-j"))
        folder = values.get("-C") or values.get("--directory") or where
        names = [a for a in positional if "=" not in a]
        return [Claim("task", text, "body", path=folder, symbol=f"make:{n}") for n in names]
    if program == "just":
        return _just_claims(args, text)
    if program == "mise":
        positional, _ = _options(args, ("-C", "--cd", "-E", "--env", "-j"))
        if positional[:1] in (["run"], ["r"]) and len(positional) > 1:
            return [Claim("task", text, "body", symbol=f"mise:{positional[1]}")]
        return []
    if program == "tox":
        _, values = _options(args, ("-e", "-f", "-c", "--conf"))
        envs = [e for e in (values.get("-e") or "").split(",") if e]
        return [Claim("task", text, "body", symbol=f"tox:{e}") for e in envs if "{" not in e]
    if program == "nox":
        _, values = _options(args, ("-s", "--session", "--sessions", "-e", "-f", "-k"))
        session = values.get("-s") or values.get("--session") or values.get("--sessions")
        return [Claim("task", text, "body", symbol=f"nox:{session}")] if session else []
    if program == "hatch":
        positional, values = _options(args, ("-e", "--env"))
        positional = [a for a in positional if not a.startswith("+")]  # `+py=3.12`
        env = values.get("-e") or values.get("--env")
        if positional[:1] == ["run"] and len(positional) > 1 and ":" in positional[1]:
            env = positional[1].split(":", 1)[0]
        return [Claim("task", text, "body", symbol=f"hatch:{env}")] if env else []
    return []


def _cargo_claims(args: list[str], text: str) -> list[Claim]:
    """The workspace packages a cargo run selects (`cargo test -p oxc_parser`,
    `--package=app`); a `name@version` spec or a pattern is no one package's name."""
    _, values = _options(args, ("-p", "--package"))
    name = values.get("-p") or values.get("--package") or ""
    if not re.fullmatch(r"[A-Za-z][\w-]*", name) or placeholder_name(name):
        return []
    return [Claim("task", text, "body", symbol=f"cargo:{name}")]


def _just_claims(args: list[str], text: str) -> list[Claim]:
    """The recipe a just run names: its first argument, after any overrides of variables
    (`just mode=fast build`)."""
    positional, _ = _options(args, ("-f", "--justfile", "-d"))
    positional = [a for a in positional if "=" not in a]
    return [Claim("task", text, "body", symbol=f"just:{positional[0]}")] if positional else []


def _extra_claims(args: list[str], text: str) -> list[Claim]:
    names: list[str] = []
    positional, values = _options(args, ("--extra", "--group", "--with", "--only", "-E", "-G"))
    if "install" in positional or "-e" in values:
        for arg in [*positional, values.get("-e", "")]:
            if arg.startswith((".", "-e")) or arg.startswith(("'.", '".')):
                found = _INSTALL_EXTRAS.search(arg)
                if found:
                    names += [n.strip() for n in found.group(1).split(",") if n.strip()]
    for key in ("--extra", "--group", "--with", "-E", "-G"):
        if values.get(key):
            names += [n for n in values[key].split(",") if n]
    return [Claim("extra", text, "body", symbol=n) for n in dict.fromkeys(names)]


def _value_claims(prose: str) -> list[Claim]:
    out: list[Claim] = []
    if not _DIGIT.search(prose):
        return out  # every stated value is a number
    for found in _STATED.finditer(prose):
        tool, version = found.group(1), found.group(3)
        if found.group("pre"):
            stated = f"={version}-pre"  # ".NET 12.0 RC": a pre-release of that version
        elif _MINIMUM.search(found.group(0)) or _REQUIRES.search(prose):
            stated = version
        elif found.group("named") or tool.lower() in ("pnpm", "yarn", "bun"):
            # "Go version: 1.31.2", "pnpm 9" (packageManager pins one): that version
            stated = "=" + version
        else:
            continue  # "runs Python 3.12": not what a minimum in the config says
        out.append(
            Claim(
                "value",
                found.group(0).replace("*", "").strip(),
                "body",
                symbol=tool.lower(),
                value=stated,
            )
        )
    # one sentence giving a tool two versions gives what is pinned, then what else works
    # ("`.nvmrc` says Node 24.x; Node 22.x works for builds"): the first is the claim
    firsts: dict[str | None, Claim] = {}
    for claim in out:
        firsts.setdefault(claim.symbol, claim)
    out = list(firsts.values())
    stated_rust = {c.value for c in out if c.symbol == "rust"}
    for found in _MSRV.finditer(prose) if "MSRV" in prose else ():
        if found.group(1) not in stated_rust:  # "Rust 1.80 (MSRV)" is read above
            out.append(Claim("value", found.group(0), "body", symbol="rust", value=found.group(1)))
    if re.search(r"\bpytest\b", prose, re.I):
        timeout = _TIMEOUT.search(prose)
        if timeout:
            out.append(
                Claim(
                    "value",
                    timeout.group(0),
                    "body",
                    symbol="pytest-timeout",
                    value=timeout.group(1),
                )
            )
    tools = {c.text for c in out}
    for found in _DEP_STATED.finditer(prose):
        # "React 18", "Prisma 5.x": checked only where the project depends on the name
        if found.group(0) not in tools and not _STATED.match(found.group(0)):
            name = found.group(1).lower().removesuffix(".js")
            if name.split()[-1] in ("version", "versions"):
                continue  # "Go version 1.31": the tool's, above
            minimum = "+" if found.group(0).endswith("+") else ""  # "Bootstrap 6.2+"
            out.append(
                Claim(
                    "value",
                    found.group(0),
                    "body",
                    symbol="dep:" + name,
                    value=found.group(2) + minimum,
                )
            )
    return out


def size_claims(text: str) -> list[Claim]:
    """A file's size stated beside its name (`` `Application` (74KB) ``, "`src/app.ts`,
    about 156 lines"): the name is the code span or link nearest before the size (else the
    first after it), a path or a name some file defines (else the memory's one cited
    file: `verify`)."""
    if not any(unit in text for unit in ("KB", "KiB", "kB", "MB", "MiB", "lines", "LOC")):
        return []  # every size names its unit
    sizes = list(_SIZE.finditer(CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)))
    if not sizes:
        return []
    names = [(m.start(), m.group(1).strip()) for m in CODE_SPAN.finditer(text)]
    names += [(m.start(), m.group(1)) for m in _LINK.finditer(text)]
    names = sorted((at, n) for at, n in names if n and " " not in n)
    out = []
    for found in sizes:
        before = [n for at, n in names if at < found.start()]
        after = [n for at, n in names if at > found.start()]
        name = before[-1] if before else after[0] if after else None
        if name is not None:
            value = f"{found.group(1)} {found.group(2)}"
            out.append(Claim("size", f"{name} {value}", "body", symbol=name, value=value))
    return out


def setting_claims(text: str) -> list[Claim]:
    """A number stated as the value a named setting has: "`MAX_RETRIES` is 5", "`--jobs`
    (default 4)", `` `timeout = 30` ``."""
    out = []
    for found in _SETTING.finditer(text):
        name, value = found.group(1), found.group(2)
        out.append(Claim("setting", f"{name} {value}", "body", symbol=name, value=value))
    for span in CODE_SPAN.findall(text):
        assigned = _SETTING_SPAN.match(span.strip())
        if assigned and not _ENV_ASSIGN.match(span.strip()):
            name, value = assigned.group(1), assigned.group(2)
            out.append(Claim("setting", f"{name} {value}", "body", symbol=name, value=value))
    return out


def setting_values(name: str, lines: Iterable[str]) -> list[str]:
    """The numbers these lines set `name` to: `NAME = 5`, `name: 5`, `"name": 5`,
    `NAME := 5`, `name = "5"`, or a flag's `default=5` on the line that defines it."""
    if name.startswith("-"):
        pattern = re.compile(
            rf"{re.escape(name)}\b.*?\bdefault\w*\s*[=:(,]\s*[\"']?(-?\d+(?:\.\d+)?)\b"
        )
    else:
        pattern = re.compile(
            rf"(?<![\w-]){re.escape(name)}[\"']?\s*(?::\s*[\w.\[\]| <>]{{1,40}}?)?\s*"
            rf"(?::=|=|:)\s*[\"']?(-?\d+(?:\.\d+)?)(?![\w.]*\.\d)\b"
        )
    return [m.group(1) for line in lines for m in pattern.finditer(line)]


def setting_check(claim: Claim, found: list[tuple[str, str]]) -> str | None:
    """None when some place sets the name to the stated number (or none sets it), else
    both values. A number in another unit (30 s against 30000 ms) counts as the same."""
    stated = float(claim.value or 0)
    if not found or any(
        float(v) in (stated, stated * 1000, stated / 1000, stated * 60) for _, v in found
    ):
        return None
    where = "; ".join(f"{path} sets {v}" for path, v in found[:3])
    return f"states {claim.symbol} is {claim.value}; {where}"


def size_check(claim: Claim, path: str, size: int, lines: int) -> str | None:
    """None when the stated size is within `_SIZE_TOLERANCE` of the file's, else why not."""
    number, unit = (claim.value or "0 lines").split()
    stated = float(number) * _SIZE_UNITS.get(unit.lower(), 1)
    actual = lines if unit.lower() in ("lines", "loc") else size
    if stated <= 0 or abs(actual - stated) <= _SIZE_TOLERANCE * stated:
        return None
    now = f"{lines} lines" if actual == lines else f"{size / 1024:.0f} KB"
    return f"states {claim.symbol} is {number} {unit}; {path} is now {now}"


def link_claims(words: str) -> list[Claim]:
    """Paths a markdown link names (`[x](src/app.ts)`, Cursor's `mdc:src/app.ts`); a
    destination is percent-encoded (`docs/Testing%20Guide.md` names `Testing Guide.md`).
    A link in a code span (`` `![a diagram](flow.png)` ``) shows markdown's syntax: no link;
    nor is any code span's text that reads as one (a regular expression's
    `` `[A-Z]([a-z]+)` ``): markdown renders no link inside a code span."""
    spans = words
    if "`" in words:
        words = _SHOWN_LINK.sub(" ", words)
        spans = CODE_SPAN.sub(" ", words)
    out = []
    for path in _LINK.findall(spans) + _MDC.findall(words):
        if "://" in path or path.startswith(("#", "mailto:")) or ".." in path.split("/"):
            continue
        out.append(Claim("path", path, "body", path=unquote(path).removeprefix("./")))
    return out


# checking ------------------------------------------------------------------------------


def _same_version(stated: str, declared: str) -> bool:
    """ "3.10" against ">=3.10,<4" or "^3.10.2": the stated components match the first
    version the declaration names, as far as both go."""
    found = re.search(r"\d+(?:\.\d+)*", declared)
    if not found:
        return True  # "latest", "workspace:*": nothing to compare
    have = found.group(0).split(".")
    want = stated.split(".")
    n = min(len(have), len(want))
    return have[:n] == want[:n]


def _satisfies(stated: str, declared: str) -> bool:
    """A dependency's stated version against its declaration: a stated minimum (`4.1+`)
    the declared version reaches; a version within a lower bound (`8.3.28` against
    `>=8.2`) or a caret range (`8.4` against `^8.3`: the same major, no lower); else the
    same as far as both go (`12` against `^12.0`)."""
    found = re.search(r"\d+(?:\.\d+)*", declared)
    if found is None:
        return True  # "latest", "workspace:*": nothing to compare
    have = [int(x) for x in found.group(0).split(".")]
    want = [int(x) for x in stated.removesuffix("+").split(".")]
    if stated.endswith("+"):
        return have[: len(want)] >= want
    if re.match(r"\s*>", declared):
        return have[: len(want)] <= want
    if re.match(r"\s*\^", declared) and have[0] > 0 and want[0] == have[0]:
        return want >= have[: len(want)]
    return _same_version(stated, declared)


# where a version is pinned, not bounded: the one version the project runs
_PIN_FILES = (".nvmrc", ".node-version", ".python-version", ".ruby-version")


def _pinned(where: str) -> bool:
    """The declaration `Project.versions` labels `where` pins one version rather than
    bounding them (its file, or its key, says so)."""
    return where.endswith((" packageManager", " channel")) or where.endswith(_PIN_FILES)


def _at_least(stated: str, declared: str) -> bool:
    """A stated minimum ("Go 1.25+", "requires Python 3.10") still holds when the config's
    own minimum is no higher: a module declaring go 1.24 builds with 1.25."""
    found = re.search(r"\d+(?:\.\d+)*", declared)
    if not found:
        return True
    have = [int(x) for x in found.group(0).split(".")]
    want = [int(x) for x in stated.split(".")]
    n = min(len(have), len(want))
    return have[:n] <= want[:n]


def check(claim: Claim, project: Project) -> str | None:
    """None when the claim holds (or cannot be judged), else why it does not."""
    kind = claim.kind
    if kind == "script":
        return _check_script(claim, project)
    if kind == "task":
        return _check_task(claim, project)
    if kind == "extra":
        name = claim.symbol or ""
        if not project.named("pyproject.toml", "setup.cfg") or _norm(name) in project.extras:
            return None
        return f"no optional-dependency or dependency group named {name}"
    if kind == "directory":
        return _check_directory(claim.path or "", project)
    if kind == "pattern":
        return _check_pattern(claim.symbol or "", project)
    if kind == "value":
        return _check_value(claim, project)
    if kind == "import":
        return _check_import(claim.symbol or "", project)
    if kind == "test-class":
        return _check_test_class(claim, project)
    return None


def _check_script(claim: Claim, project: Project) -> str | None:
    symbol = claim.symbol or ""
    name, direct = symbol.rstrip("?"), symbol.endswith("?")
    if not project.packages:
        gone = project.once_had("package.json")
        return f"package.json was removed (script {name})" if gone else None
    folder = claim.path
    if folder is not None and folder in project.scripts:
        if name in project.scripts[folder]:
            return None
    elif any(name in scripts for scripts in project.scripts.values()):
        return None
    if direct and name.lower() in project.dependencies:
        return None  # `pnpm vitest`: an installed program
    if (
        direct
        and not re.search(r"[:-]", name)
        and name not in ("build", "lint", "test", "dev", "format", "typecheck", "check", "start")
    ):
        return None  # `pnpm tsc`: perhaps a program; nothing here says otherwise
    where = (
        f"{folder}/package.json"
        if folder is not None and folder in project.scripts
        else "any package.json"
    )
    return f"no script {name} in {where}"


def _check_make(name: str, folder: str | None, project: Project) -> str | None:
    """`make X` (in `folder`, when a `-C` or `cd` names one): a target some Makefile of that
    folder, else of any, defines, a `%` pattern rule included."""
    if not project.makefiles:
        gone = project.once_had("Makefile", "GNUmakefile", "makefile")
        return f"the Makefile was removed (target {name})" if gone else None
    pools = (
        [project.makefiles[folder]]
        if folder in project.makefiles
        else list(project.makefiles.values())
    )
    for targets in pools:
        if name in targets or any(
            "%" in t and fnmatch.fnmatch(name, t.replace("%", "*")) for t in targets
        ):
            return None
    return f"no Make target {name}"


def _check_zig(name: str, folder: str, project: Project) -> str | None:
    """`zig build X` run in `folder` ("" for the root): a step its build.zig declares."""
    builds = project.zig_steps
    if not builds:
        gone = project.once_had("build.zig")
        return f"the build.zig was removed (step {name})" if gone else None
    if folder not in builds:
        return None  # zig looks for a build.zig in the folders above: not judged here
    steps = builds[folder]
    return None if steps is None or name in steps else f"no zig build step {name}"


def _check_task(claim: Claim, project: Project) -> str | None:
    tool, _, name = (claim.symbol or "").partition(":")
    if tool == "make":
        return _check_make(name, claim.path, project)
    if tool == "zig":
        return _check_zig(name, claim.path or "", project)
    check = _TASK_CHECKS.get(tool)
    return check(name, project) if check else None


def _check_just(name: str, project: Project) -> str | None:
    if not project.named("justfile", "Justfile", ".justfile"):
        gone = project.once_had("justfile", "Justfile", ".justfile")
        return f"the justfile was removed (recipe {name})" if gone else None
    return None if name in project.just_recipes else f"no just recipe {name}"


def _check_go_task(name: str, project: Project) -> str | None:
    """`task X`: a task some Taskfile defines (or a wildcard task matches); a Taskfile
    whose includes cannot all be read judges nothing."""
    if not project.named(*tasksources.TASKFILES):
        gone = project.once_had(*tasksources.TASKFILES)
        return f"the Taskfile was removed (task {name})" if gone else None
    known = project.taskfile_tasks
    if known is None or name in known or any(fnmatch.fnmatch(name, t) for t in known):
        return None
    return f"no task {name} in the Taskfiles"


def _check_cargo(name: str, project: Project) -> str | None:
    if not project.named("Cargo.toml"):
        gone = project.once_had("Cargo.toml")
        return f"the Cargo.toml was removed (package {name})" if gone else None
    found = _norm(name) in project.cargo_packages
    return None if found else f"no Cargo package {name} in the workspace"


def _check_mise(name: str, project: Project) -> str | None:
    if not project.mise_tasks:
        return None
    return None if name in project.mise_tasks or "*" in name else f"no mise task {name}"


def _check_tox(name: str, project: Project) -> str | None:
    if not project.named("tox.ini", "setup.cfg", "pyproject.toml", "tox.toml"):
        return None
    base = re.sub(r"^py\d+$", "", name)
    return None if not base or name in project.tox_envs else f"no tox environment {name}"


def _check_nox(name: str, project: Project) -> str | None:
    if not project.named("noxfile.py"):
        return None
    return None if name in project.nox_sessions else f"no nox session {name}"


def _check_hatch(name: str, project: Project) -> str | None:
    return None if name in project.hatch_envs else f"no hatch environment {name}"


# the check of a task named by its runner (`tool:name`), Make's and zig's aside
_TASK_CHECKS: dict[str, Callable[[str, Project], str | None]] = {
    "just": _check_just,
    "task": _check_go_task,
    "cargo": _check_cargo,
    "mise": _check_mise,
    "tox": _check_tox,
    "nox": _check_nox,
    "hatch": _check_hatch,
}


def _check_directory(folder: str, project: Project) -> str | None:
    """A folder a command enters: in the tree, or one a container image of the project
    makes (a Dockerfile's `WORKDIR` or the destination of its `COPY`/`ADD`), where commands
    run in the container enter it."""
    folder = folder.strip("/")
    if folder in project.folders or folder in project.folder_suffixes:
        return None
    if (project.root / folder).is_dir() or _image_folder(folder, project):
        return None
    return f"no folder {folder} in the repository"


def _image_folder(folder: str, project: Project) -> bool:
    """Whether some Dockerfile (Containerfile) of the project makes `folder` in its image:
    a `WORKDIR` or a `COPY`/`ADD` destination that is it or ends with it
    (`$APP_HOME/service`)."""
    for path in project.paths:
        name = path.rsplit("/", 1)[-1].lower()
        if not (name.startswith(("dockerfile", "containerfile")) or name.endswith(".dockerfile")):
            continue
        for line in (project.text(path) or "").splitlines():
            words = line.split()
            if len(words) < 2 or words[0].upper() not in ("WORKDIR", "COPY", "ADD"):
                continue
            made = words[-1].rstrip("/")
            if made == folder or made.endswith("/" + folder):
                return True
    return False


def _check_import(module: str, project: Project) -> str | None:
    """`from "@/utils/logNever"`: a file of that path, any extension, or its index file."""
    module = module.strip("/")
    for path in project.paths:
        stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
        if stem.endswith("/" + module) or stem.endswith("/" + module + "/index"):
            return None
    return f"no module file for @/{module}"


def _check_test_class(claim: Claim, project: Project) -> str | None:
    """`org/acme/CartTest`: a JVM source file of that name below those package folders
    (`src/test/java/org/acme/CartTest.java`, `.kt` too); or, where a move put it, the
    file the claim's path names."""
    source = claim.symbol or ""
    for path in project.paths:
        stem, _, extension = path.rpartition(".")
        if path == claim.path or (
            extension in _JVM_SOURCES and (stem == source or stem.endswith("/" + source))
        ):
            return None
    return f"no class {source.replace('/', '.')} in the code"


def _check_pattern(pattern: str, project: Project) -> str | None:
    """A file pattern: some tracked file's or folder's name matches it. A pattern without
    `.` or `/` (`create_access_token*`, `data-*-value`) may as well be a pattern of names:
    then a name the code spells matching it does too."""
    name = pattern.lstrip("*/") if "*" in pattern else pattern
    glob = name if "*" in name else "*" + name
    if any(fnmatch.fnmatchcase(n, glob) for n in project.names):
        return None
    if any(fnmatch.fnmatchcase(n, glob) for n in project.folder_names):
        return None  # `EFCore.*Specification.Tests`: folders (projects) of that pattern
    if "." not in glob and "/" not in glob:
        if not re.fullmatch(r"[\w*-]+", glob) or project.names_match(glob):
            return None
        return f"no file or name in the code matches {glob}"
    return f"no file matches {glob}"


def name_regex(glob: str) -> str:
    """A name pattern (`data-*-value`) as an extended regular expression for whole names."""
    edge = "[^A-Za-z0-9_-]"
    body = "[A-Za-z0-9_-]*".join(glob.split("*"))
    return f"(^|{edge}){body}($|{edge})"


def _check_value(claim: Claim, project: Project) -> str | None:
    key, stated = claim.symbol or "", claim.value or ""
    if key == "pytest-timeout":
        declared = project.pytest_timeout
    elif key.startswith("dep:"):
        name, versions = project.declared(key[4:])
        # a product's scoped packages are its own (`@angular/core` for Angular)
        versions = versions + project.dependencies.get("@" + name.lower(), [])
        if not versions or any(_satisfies(stated, v) for v in versions):
            return None
        return (
            f"states {name} {stated}; the project now declares {', '.join(sorted(set(versions)))}"
        )
    elif stated.startswith("="):
        stated, pre = stated[1:].removesuffix("-pre"), stated.endswith("-pre")
        declared = project.versions(key) + project.pins(key)
        if not declared or any(
            _same_version(stated, v) and (not pre or _PRERELEASE.search(v)) for _, v in declared
        ):
            return None
        found = "; ".join(f"{where} says {value}" for where, value in declared[:3])
        return f"states {claim.text.strip()}; now {found}"
    else:
        declared = _shallowest(project.versions(key))
    if key == "pytest-timeout":
        holds = any(_same_version(stated, v) for _, v in declared)
    elif bounds := [(w, v) for w, v in declared if not _pinned(w)]:
        # a declared minimum (`engines`, `requires-python`, go.mod's `go`) speaks for the
        # project's minimum: the stated one holds where that is no higher
        declared = bounds
        holds = any(_at_least(stated, v) for _, v in declared)
    else:
        # only pins (`packageManager`, `.nvmrc`, a toolchain's channel): one no lower than
        # the stated minimum meets it ("pnpm v10+" against `pnpm@11.0.1`)
        holds = any(_satisfies(stated + "+", v) for _, v in declared)
    if not declared or holds:
        return None
    where, value = declared[0]
    return f"states {claim.text.strip()}; {where} now says {value}"


def _shallowest(declared: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The declarations nearest the root: the project's own minimum is its root config's
    (a nested go.mod or package.json is a test fixture's, an example's or a sub-package's)."""
    if not declared:
        return declared
    depth = min(where.split(" ", 1)[0].count("/") for where, _ in declared)
    return [(w, v) for w, v in declared if w.split(" ", 1)[0].count("/") == depth]


__all__ = [
    "KINDS",
    "KNOWN_ENV",
    "Project",
    "check",
    "link_claims",
    "name_regex",
    "setting_check",
    "setting_claims",
    "setting_values",
    "size_check",
    "size_claims",
    "text_claims",
]
