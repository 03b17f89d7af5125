"""Where task runners define tasks, read as the tools themselves read them.

A `make X`, `just X` or `mise run X` claim holds when X is a task the tool would find, so
each source the tool reads is read here:

- Make: the Makefile (`Makefile`, `GNUmakefile`, `makefile`, `*.mk`) and every file it
  includes (`include`, `-include`, `sinclude`; paths relative to the Makefile's folder,
  wildcards matched against tracked files; names holding variables cannot be resolved).
- just: justfiles, the files they `import`, the modules they declare (`mod NAME` reads
  `NAME.just`, `NAME/mod.just`, `NAME/justfile`, or the path given) whose recipes run as
  `just NAME::recipe` or `just NAME recipe`, and `alias NAME := recipe`.
- mise: every config file (`mise.toml`, `.mise.toml`, `mise.local.toml`,
  `mise.<env>.toml`, `mise/config.toml`, `.mise/config.toml`, `.config/mise.toml`,
  `.config/mise/config.toml`, `.config/mise/conf.d/*.toml`) and its `[tasks]` (with each
  task's `alias`); the task folders (`mise-tasks/`, `.mise-tasks/`, `.mise/tasks/`,
  `.config/mise/tasks/`, `mise/tasks/`, or what `[task_config] includes` names instead):
  every file in them is a file task named by its path (`test/unit` -> `test:unit`, with
  and without its extension; `_default` names the folder), with the aliases its `#MISE
  alias=` (or `# mise alias=`) line gives; a `.toml` file in them, or included, is a task
  file whose top-level tables are tasks.
- Task (go-task): every Taskfile (`Taskfile.yml`, `taskfile.yaml`, `Taskfile.dist.yml`...)
  and its `tasks` with their `aliases`; each include (a path to a file or to a folder
  holding a Taskfile, relative to the including file) adds its tasks under its namespace
  and the namespace's aliases (`tools:vuln`), or bare when `flatten: true`; an include
  that cannot be followed (a URL, a templated path, an untracked file) makes the names
  unknowable (`taskfile_tasks` then says None).
- zig: the `build.zig` of the folder zig runs in (the root, or the one a `cd DIR &&`
  enters) and the steps it declares (`b.step("name", ...)`), with the steps zig gives
  every build (`install`, `uninstall`); a step whose name is not written as a literal
  makes that file's names unknowable (`zig_steps` then says None for it).
- Gradle: the build scripts (`*.gradle`, `*.gradle.kts`), the version catalogs
  (`*.versions.toml`) and the convention plugins' code (`buildSrc/`, `build-logic/` and
  every build a settings file includes with `includeBuild`). A task is known when a script
  or a convention plugin registers it by a literal name (`tasks.register("x")`,
  `tasks.create("x")`, `register<T>("x")`, `task x`, `val x by tasks.registering`), when it
  is one of Gradle's and the Java, Kotlin and Android plugins' standard tasks, or when a
  well-known plugin that adds it is named by its id anywhere in those files
  (`GRADLE_PLUGINS`). Any other task (another plugin's) is unknown, not missing.

Only the text of tracked files is read (`Reader`), through the caller.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

Reader = Callable[[str], str | None]  # a tracked file's text (None: unreadable)

MAKEFILES = ("Makefile", "GNUmakefile", "makefile")
_MAKE_TARGET = re.compile(r"^([^\s:=#.%$][^:=#]*?|\.[\w-]+)\s*::?(?!=)", re.M)
_MAKE_INCLUDE = re.compile(r"^[ \t]*(?:-|s)?include[ \t]+([^#\n]+)", re.M)
# a recipe's header: `@`? NAME, its parameters (`$`? NAME, a default after `=`: a quoted
# string, a backtick, a parenthesised expression or a variable; the last may be variadic,
# `*` or `+`), then `:` (not `:=`: an assignment, alias or setting), dependencies after it
_JUST_VALUE = r"""(?:'[^'\n]*'|"(?:[^"\\\n]|\\.)*"|`[^`\n]*`|\([^\n]*?\)|[A-Za-z_][\w-]*)"""
_JUST_PARAMETER = rf"[ \t]+[*+]?\$?[A-Za-z_][\w-]*(?:[ \t]*=[ \t]*{_JUST_VALUE})?"
_JUST_RECIPE = re.compile(rf"^@?([A-Za-z_][\w-]*)(?:{_JUST_PARAMETER})*[ \t]*:(?!=)", re.M)
_JUST_ALIAS = re.compile(r"^alias[ \t]+([A-Za-z_][\w-]*)[ \t]*:=", re.M)
_JUST_IMPORT = re.compile(r"^import\??[ \t]+['\"]([^'\"]+)['\"]", re.M)
_JUST_MOD = re.compile(r"^mod\??[ \t]+([A-Za-z_][\w-]*)(?:[ \t]+['\"]([^'\"]+)['\"])?", re.M)
JUSTFILES = ("justfile", "Justfile", ".justfile", "JUSTFILE")
MISE_TASK_DIRS = ("mise-tasks", ".mise-tasks", ".mise/tasks", ".config/mise/tasks", "mise/tasks")
_MISE_CONFIG = re.compile(
    r"(?:^|/)(?:\.?mise(?:\.[\w-]+)?\.toml|\.?mise/config(?:\.[\w-]+)?\.toml"
    r"|\.config/mise(?:\.[\w-]+)?\.toml|\.config/mise/config(?:\.[\w-]+)?\.toml"
    r"|\.config/mise/conf\.d/[^/]+\.toml)$"
)
_ZIG_STEP = re.compile(r'\.step\(\s*("[^"\\]+")?')  # a quoted name, or none: computed
ZIG_BUILTIN_STEPS = frozenset({"install", "uninstall"})
_MISE_ALIAS = re.compile(r"^\s*(?:#|//)\s*(?:MISE|mise)\s+alias\s*=\s*(.+)$", re.M)


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _join(folder: str, name: str) -> str:
    return posixpath.normpath(posixpath.join(folder, name)) if folder else posixpath.normpath(name)


def _matching(paths: Sequence[str], wanted: str) -> list[str]:
    if any(c in wanted for c in "*?["):
        return [p for p in paths if fnmatch.fnmatchcase(p, wanted)]
    return [wanted] if wanted in paths else []


# Make --------------------------------------------------------------------------------

_VENDORED = re.compile(r"(?:^|/)(?:vendor|third_party|third-party|node_modules)/")


def make_targets(paths: Sequence[str], read: Reader) -> dict[str, set[str]]:
    """Folder ("" for the root) -> the targets its Makefiles define, includes followed.
    A vendored project's Makefiles (`vendor/`, `third_party/`, `node_modules/`) are not the
    project's: `make build` is never theirs (an include may still read one)."""
    tracked = set(paths)
    out: dict[str, set[str]] = {}
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        if _VENDORED.search(path):
            continue
        if name in MAKEFILES or name.endswith(".mk"):
            folder = _folder(path)
            found = out.setdefault(folder, set())
            _read_makefile(path, folder, read, paths, tracked, found, set())
    return out


def _read_makefile(
    path: str,
    folder: str,
    read: Reader,
    paths: Sequence[str],
    tracked: set[str],
    found: set[str],
    seen: set[str],
) -> None:
    if path in seen or path not in tracked:
        return
    seen.add(path)
    text = read(path) or ""
    for names in _MAKE_TARGET.findall(text):
        found.update(names.split())
    unfollowed = False
    for line in _MAKE_INCLUDE.findall(text):
        for name in line.split():
            included = [] if "$" in name else _matching(paths, _join(folder, name))
            unfollowed = unfollowed or not included
            for each in included:
                _read_makefile(each, folder, read, paths, tracked, found, seen)
    if unfollowed:
        # a name only `.PHONY` lists has no recipe here, unless an include that could not
        # be followed (a variable, a file not tracked) defines it
        for phony in re.findall(r"^\.PHONY\s*:(.*)$", text, re.M):
            found.update(phony.split())


# just --------------------------------------------------------------------------------


def just_recipes(paths: Sequence[str], read: Reader) -> set[str]:
    """Every recipe, alias and module (`mod`) name of the justfiles, imports followed;
    a module's recipes also as `module::recipe`."""
    tracked = set(paths)
    out: set[str] = set()
    seen: set[str] = set()
    for path in paths:
        if path.rsplit("/", 1)[-1] in JUSTFILES:
            out |= _read_justfile(path, read, tracked, seen)
    return out


def _read_justfile(path: str, read: Reader, tracked: set[str], seen: set[str]) -> set[str]:
    if path in seen or path not in tracked:
        return set()
    seen.add(path)
    text = read(path) or ""
    folder = _folder(path)
    out = set(_JUST_RECIPE.findall(text)) | set(_JUST_ALIAS.findall(text))
    out -= {"alias", "import", "mod", "set", "export"}
    for name in _JUST_IMPORT.findall(text):
        out |= _read_justfile(_join(folder, name), read, tracked, seen)
    for module, given in _JUST_MOD.findall(text):
        out.add(module)
        places = [given] if given else [f"{module}.just", f"{module}/mod.just"]
        places += [] if given else [f"{module}/{j}" for j in JUSTFILES]
        for place in places:
            inner = _read_justfile(_join(folder, place), read, tracked, seen)
            out |= {f"{module}::{r}" for r in inner} | inner
    return out


# Task ----------------------------------------------------------------------------------

TASKFILES = tuple(
    f"{stem}{dist}.{ext}"
    for stem in ("Taskfile", "taskfile")
    for dist in ("", ".dist")
    for ext in ("yml", "yaml")
)


class _Unknowable(Exception):
    """An include a Taskfile names that cannot be read here."""


def taskfile_tasks(paths: Sequence[str], read: Reader) -> set[str] | None:
    """Every task a `task NAME` run could find in the tree's Taskfiles (see the module
    docstring); None when some include cannot be followed."""
    tracked = set(paths)
    out: set[str] = set()
    try:
        for path in paths:
            if path.rsplit("/", 1)[-1] in TASKFILES:
                out |= _read_taskfile(path, read, tracked, ())
    except _Unknowable:
        return None
    return out


def _read_taskfile(path: str, read: Reader, tracked: set[str], within: tuple[str, ...]) -> set[str]:
    if path not in tracked or path in within:
        raise _Unknowable(path)
    try:
        data = yaml.safe_load(read(path) or "")
    except yaml.YAMLError:
        raise _Unknowable(path) from None
    data = data if isinstance(data, dict) else {}
    tasks = data.get("tasks")
    out: set[str] = set()
    for name, task in (tasks if isinstance(tasks, dict) else {}).items():
        out.add(str(name))
        aliases = task.get("aliases") if isinstance(task, dict) else None
        out |= {str(a) for a in aliases} if isinstance(aliases, list) else set()
    includes = data.get("includes")
    for space, include in (includes if isinstance(includes, dict) else {}).items():
        spec = include if isinstance(include, dict) else {"taskfile": include}
        inner = _read_taskfile(
            _included(path, spec.get("taskfile"), tracked), read, tracked, (*within, path)
        )
        if spec.get("flatten") is True:
            out |= inner
        aliases = spec.get("aliases")
        for prefix in [str(space), *(map(str, aliases) if isinstance(aliases, list) else ())]:
            out |= {f"{prefix}:{name}" for name in inner}
    return out


def _included(path: str, given: object, tracked: set[str]) -> str:
    """The tracked Taskfile an include names: the file, or a Taskfile in the folder."""
    if not isinstance(given, str) or "{{" in given or "://" in given:
        raise _Unknowable(str(given))
    target = posixpath.normpath(_join(_folder(path), given.removeprefix("./")))
    if target in tracked:
        return target
    found = [_join(target, name) for name in TASKFILES if _join(target, name) in tracked]
    if not found:
        raise _Unknowable(target)
    return found[0]


# mise --------------------------------------------------------------------------------


def _toml(read: Reader, path: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(read(path) or "")
    except ValueError:
        return {}
    return data


def _task_names(tasks: object) -> set[str]:
    """The names of a TOML table of tasks, with their aliases."""
    if not isinstance(tasks, dict):
        return set()
    out = set(tasks)
    for task in tasks.values():
        alias = task.get("alias") if isinstance(task, dict) else None
        out |= {alias} if isinstance(alias, str) else {a for a in alias or () if isinstance(a, str)}
    return out


def _project_root(config: str) -> str:
    """The project folder of a mise config file (`a/.config/mise/config.toml` -> `a`)."""
    for marker in ("/.config/mise/conf.d/", "/.config/mise/", "/.config/", "/.mise/", "/mise/"):
        cut = ("/" + config).rfind(marker)
        if cut >= 0:
            return ("/" + config)[:cut].strip("/")
    return _folder(config)


def mise_configs(paths: Sequence[str]) -> list[str]:
    """The mise config files among `paths` (see the module docstring)."""
    return [p for p in paths if _MISE_CONFIG.search(p)]


def mise_tasks(paths: Sequence[str], read: Reader) -> set[str]:
    """Every mise task the configs, task files and task folders define (see the module
    docstring)."""
    out: set[str] = set()
    included: list[str] = []
    overridden: set[str] = set()  # project folders whose config names its own task folders
    for path in paths:
        if not _MISE_CONFIG.search(path):
            continue
        data = _toml(read, path)
        out |= _task_names(data.get("tasks"))
        includes = (data.get("task_config") or {}).get("includes")
        if isinstance(includes, list):
            root = _project_root(path)
            overridden.add(root)
            included += [_join(root, i) for i in includes if isinstance(i, str)]
    for path in paths:
        top = _task_folder(path, included, overridden)
        if top is None:
            continue
        if path.endswith(".toml"):
            if not _MISE_CONFIG.search(path):
                out |= _task_names(_toml(read, path))
            continue
        out |= _file_task_names(path[len(top) + 1 :], read(path) or "")
    return out


def _task_folder(path: str, included: Sequence[str], overridden: set[str]) -> str | None:
    """The task folder (or included task file) `path` is in, if any."""
    for top in included:
        if path == top or path.startswith(top + "/"):
            return top
    slashed = "/" + path
    for folder in MISE_TASK_DIRS:
        cut = slashed.find("/" + folder + "/")
        if cut >= 0 and slashed[:cut].strip("/") not in overridden:
            return slashed[: cut + len(folder) + 1].strip("/")
    return None


def _file_task_names(name: str, text: str) -> set[str]:
    """A file task's names: its path in the task folder with `:` for `/` (with and without
    its extension; `_default` names its folder), and the aliases its header gives."""
    out: set[str] = set()
    if not name:
        return out
    stem = name.rsplit(".", 1)[0] if "." in name.rsplit("/", 1)[-1] else name
    for task in {name, stem}:
        parts = task.split("/")
        if parts[-1] == "_default":
            parts = parts[:-1]
        if parts:
            out.add(":".join(parts))
    for line in _MISE_ALIAS.findall(text[:4000]):
        out |= set(re.findall(r"[\"']([^\"']+)[\"']", line))
    return out


# zig ---------------------------------------------------------------------------------


def zig_steps(paths: Sequence[str], read: Reader) -> dict[str, frozenset[str] | None]:
    """Folder ("" for the root) -> the steps its `build.zig` declares, zig's own included;
    None for a file naming a step by a computed name (no list of its names is complete)."""
    out: dict[str, frozenset[str] | None] = {}
    for path in paths:
        if path.rsplit("/", 1)[-1] != "build.zig":
            continue
        literals = _ZIG_STEP.findall(read(path) or "")
        out[_folder(path)] = (
            None if not all(literals) else ZIG_BUILTIN_STEPS | {n[1:-1] for n in literals}
        )
    return out


# Gradle ------------------------------------------------------------------------------

GRADLE_STANDARD_TASKS = frozenset(
    {
        *("build", "assemble", "check", "clean", "test", "tasks", "help", "dependencies"),
        *("dependencyInsight", "projects", "properties", "buildEnvironment", "wrapper", "init"),
        *("javaToolchains", "outgoingVariants", "resolvableConfigurations", "buildNeeded"),
        *("buildDependents", "jar", "javadoc", "classes", "testClasses", "sourcesJar"),
        *("javadocJar", "run", "installDist", "distZip", "distTar", "startScripts"),
        *("assembleDist", "publish", "publishToMavenLocal", "allTests", "lint", "lintFix"),
        *("connectedCheck", "deviceCheck", "kotlinUpgradeYarnLock", "kotlinStoreYarnLock"),
    }
)
# the task families the Java, Kotlin (one per target: `jvmTest`, `iosX64Test`) and Android
# (one per variant: `assembleDebug`, `testReleaseUnitTest`) plugins add
_GRADLE_STANDARD_FAMILY = re.compile(
    r"(?:compile|process|assemble|bundle|install|uninstall|connected|lint|publish)[A-Z]\w*"
    r"|\w+(?:Test|Tests|Jar|Classes|MainClasses)"
)


def standard_gradle_task(name: str) -> bool:
    """One of the tasks Gradle and its Java, Kotlin and Android plugins add to any build
    (`check`, `assembleDebug`, `connectedAndroidTest`)."""
    return name in GRADLE_STANDARD_TASKS or _GRADLE_STANDARD_FAMILY.fullmatch(name) is not None


# Well-known plugins: a name, the words that name the plugin in a build file (its id, its
# artifact), and the tasks it adds (a pattern of their names).
GRADLE_PLUGINS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "binary-compatibility-validator",
        ("binary-compatibility-validator",),
        r"(?:api|\w+Api)(?:Dump|Check|Build)",
    ),
    ("kover", ("org.jetbrains.kotlinx.kover", "kover-gradle-plugin"), r"kover[A-Z]\w*"),
    (
        "kotlinter",
        ("org.jmailen.kotlinter", "kotlinter-gradle"),
        r"(?:lint|format)Kotlin\w*|installKotlinterPre(?:Commit|Push)Hook",
    ),
    ("ktlint", ("org.jlleitschuh.gradle.ktlint", "ktlint-gradle"), r"(?:add)?[kK]tlint\w*"),
    ("spotless", ("com.diffplug.spotless", "spotless-plugin-gradle"), r"spotless\w*"),
    ("detekt", ("io.gitlab.arturbosch.detekt", "dev.detekt", "detekt-gradle-plugin"), r"detekt\w*"),
    ("dokka", ("org.jetbrains.dokka",), r"dokka\w*"),
    (
        "shadow",
        ("com.github.johnrengelman.shadow", "com.gradleup.shadow", "io.github.goooler.shadow"),
        r"shadowJar|shadowDist\w*|runShadow|installShadowDist|startShadowScripts",
    ),
    ("jacoco", ("jacoco",), r"jacoco\w*"),
    ("checkstyle", ("checkstyle",), r"checkstyle\w*"),
    ("spotbugs", ("com.github.spotbugs",), r"spotbugs\w*"),
    ("versions", ("com.github.ben-manes.versions",), r"dependencyUpdates"),
    ("dependency-check", ("org.owasp.dependencycheck",), r"dependencyCheck\w*"),
    ("nexus-publish", ("io.github.gradle-nexus.publish-plugin",), r"\w*Sonatype\w*"),
    ("sonarqube", ("org.sonarqube",), r"sonar(?:qube)?"),
    ("plugin-publish", ("com.gradle.plugin-publish",), r"publishPlugins"),
)
_GRADLE_REGISTERED = re.compile(
    r"""(?:\b(?:tasks|getTasks\(\))\s*\.\s*(?:register|create|maybeCreate)|\b(?:register|create)\s*<[^>\n]*>"""
    r"""|\btask)\s*(?:<[^>\n]*>)?\s*\(\s*["']([A-Za-z_][\w-]*)["']"""
    r"""|^[ \t]*task[ \t]+([A-Za-z_]\w*)"""
    r"""|\bval\s+([A-Za-z_]\w*)(?:\s*:[^=\n]*)?\s+by\s+tasks\s*\.\s*(?:registering|creating)""",
    re.M,
)
_GRADLE_INCLUDED = re.compile(r"""\bincludeBuild\s*\(?\s*["']([^"'\n]+)["']""")
_QUOTED_NAME = re.compile(r"""["']([A-Za-z_][\w-]*)["']""")


@dataclass(frozen=True)
class GradleBuild:
    """What a Gradle build's files say of its tasks."""

    registered: frozenset[str]  # tasks registered by a literal name
    plugins: frozenset[str]  # the `GRADLE_PLUGINS` some file names
    literals: frozenset[str]  # every quoted name (a task registered through a constant)

    def origin(self, task: str) -> str | None:
        """Where the build gets `task` from (`:app:jvmApiDump` is `jvmApiDump`), in words;
        None when nothing here says (another plugin may add it)."""
        name = task.rsplit(":", 1)[-1]
        if name in self.registered:
            return "a task the build registers"
        for plugin, _, tasks in GRADLE_PLUGINS:
            if plugin in self.plugins and re.fullmatch(tasks, name):
                return f"a task of the {plugin} plugin"
        if standard_gradle_task(name):
            return "a standard Gradle task"
        return None

    def has(self, task: str) -> bool:
        """Whether the build may well have `task` now: known, or a name some file quotes."""
        return self.origin(task) is not None or task.rsplit(":", 1)[-1] in self.literals


def gradle_build(paths: Sequence[str], read: Reader) -> GradleBuild | None:
    """The tasks and well-known plugins of the Gradle build (see the module docstring); None
    when no build script is tracked."""
    scripts = [
        p for p in paths if p.endswith((".gradle", ".gradle.kts")) and "node_modules/" not in p
    ]
    if not scripts:
        return None
    catalogs = [p for p in paths if p.endswith(".versions.toml")]
    code = _convention_code(paths, scripts, read)
    text = "\n".join(read(p) or "" for p in [*scripts, *catalogs, *code])
    registered = {name for found in _GRADLE_REGISTERED.findall(text) for name in found if name}
    return GradleBuild(
        registered=frozenset(registered),
        plugins=frozenset(name for name, ids, _ in GRADLE_PLUGINS if any(i in text for i in ids)),
        literals=frozenset(_QUOTED_NAME.findall(text)),
    )


def _convention_code(paths: Sequence[str], scripts: Sequence[str], read: Reader) -> list[str]:
    """The code files of the builds that hold convention plugins: `buildSrc/`,
    `build-logic/`, and every build a settings script includes (`includeBuild("x")`,
    relative to its folder)."""
    builds = {"buildSrc", "build-logic"}
    for path in scripts:
        if path.rsplit("/", 1)[-1].startswith("settings.gradle"):
            found = _GRADLE_INCLUDED.findall(read(path) or "")
            builds.update(_join(_folder(path), f) for f in found)
    return [
        p
        for p in paths
        if p.endswith((".kt", ".java", ".groovy"))
        and any(f"/{build}/" in "/" + p for build in builds)
    ]
