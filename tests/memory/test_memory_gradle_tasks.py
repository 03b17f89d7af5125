"""`./gradlew X` claims: the tasks a Gradle build registers, Gradle's standard tasks, and
the tasks well-known plugins add, judged against the commit the words were recorded at."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import commit, file_statuses, git, recorded_ok, verify_all, write_files

from orchestrator.memory.kinds import text_claims
from orchestrator.memory.tasksources import gradle_build
from orchestrator.store.layout import Layout

CATALOG = """\
[versions]
abi-check = "0.9.1"
coverage = "0.8.4"

[plugins]
abi-check = { id = "org.jetbrains.kotlinx.binary-compatibility-validator", version.ref = "abi-check" }
coverage = { id = "org.jetbrains.kotlinx.kover", version.ref = "coverage" }
"""
SETTINGS = 'rootProject.name = "parcel"\nincludeBuild("gradle/conventions")\ninclude(":core")\n'
CONVENTION = """\
plugins {
    id("org.jetbrains.kotlinx.binary-compatibility-validator")
}
"""
PLUGIN_CLASS = """\
class DocsConventionPlugin : Plugin<Project> {
    override fun apply(target: Project) {
        target.tasks.register("bundleGuides") { group = "docs" }
    }
}
"""
CORE = """\
plugins {
    alias(libs.plugins.coverage)
}

val stampVersion by tasks.registering {
    doLast { println("stamped") }
}

tasks.register<Copy>("copyFixtures") {
    from("fixtures")
}
"""
BUILD = (
    "task printTree {\n    doLast { println 'tree' }\n}\n"
    "tasks.create('zipSamples', Zip) {\n    from 'samples'\n}\n"
)
FILES = {
    "settings.gradle.kts": SETTINGS,
    "gradle/libs.versions.toml": CATALOG,
    "gradle/conventions/src/main/kotlin/parcel.abi.gradle.kts": CONVENTION,
    "gradle/conventions/src/main/kotlin/DocsConventionPlugin.kt": PLUGIN_CLASS,
    "core/build.gradle.kts": CORE,
    "build.gradle": BUILD,
}


def test_tasks_come_from_registrations_standard_names_and_known_plugins(tmp_path: Path) -> None:
    write_files(tmp_path, FILES)
    build = gradle_build(sorted(FILES), lambda p: (tmp_path / p).read_text())
    assert build is not None
    assert build.registered == {
        "bundleGuides",  # a convention plugin of an included build, in Kotlin code
        "stampVersion",
        "copyFixtures",
        "printTree",
        "zipSamples",
    }
    assert build.plugins == {"binary-compatibility-validator", "kover"}
    assert build.origin(":core:jvmApiDump") == "a task of the binary-compatibility-validator plugin"
    assert build.origin("koverHtmlReport") == "a task of the kover plugin"
    assert build.origin("assemble") == build.origin("iosX64Test") == "a standard Gradle task"
    assert build.origin("spotlessApply") is None  # spotless is not applied: unknown, not gone
    assert gradle_build(["package.json"], lambda p: "{}") is None  # no Gradle build


def test_gradle_runs_name_their_tasks_not_option_values() -> None:
    found = text_claims(
        "`./gradlew :core:jvmTest --tests org.parcel.Wrapper -x lintKotlin apiCheck`"
    )
    assert [c.symbol for c in found if c.kind == "task"] == ["gradle:jvmTest", "gradle:apiCheck"]


def test_a_task_of_a_plugin_the_build_dropped_since_the_record_is_stale(
    layout: Layout, put: Callable[..., Any], commit_all: Callable[..., str]
) -> None:
    write_files(layout.root, FILES)
    commit_all(layout.root, "gradle build")
    verified = recorded_ok(layout)
    facts = {
        "abi": "After an API change run `./gradlew apiDump`.",
        "abi-module": "One module: `./gradlew :core:jvmApiDump`.",
        "coverage": "Coverage: `./gradlew koverXmlReport`.",
        "stamp": "Stamp with `./gradlew stampVersion`.",
        "guides": "Guides: `./gradlew bundleGuides`.",
        "unknown": "Fat jar: `./gradlew shadowJar`.",
        "standard": "Build with `./gradlew clean build`.",
    }
    for name, fact in facts.items():
        put(name, fact, verified=verified)
    catalog = CATALOG.replace("binary-compatibility-validator", "abi-tools")
    (layout.root / "gradle" / "libs.versions.toml").write_text(catalog)
    (layout.root / "gradle/conventions/src/main/kotlin/parcel.abi.gradle.kts").unlink()
    (layout.root / "core" / "build.gradle.kts").write_text(CORE.replace("stampVersion", "stamp"))
    commit_all(layout.root, "the validator plugin goes; stampVersion is now stamp")

    results = verify_all(layout)
    assert {n: r.result for n, r in results.items() if n in facts} == {
        "abi": "stale",
        "abi-module": "stale",
        "coverage": "ok",  # kover is still applied
        "stamp": "stale",  # registered then, nowhere now
        "guides": "ok",
        "unknown": "ok",  # no known source then: not judged
        "standard": "ok",
    }
    [failure] = results["abi"].failures
    assert failure.reason == (
        f"apiDump: a task of the binary-compatibility-validator plugin at "
        f"{verified['commit'][:10]}; the build has no such task now"
    )


def test_an_instruction_file_naming_a_dropped_plugin_task_is_stale_only_after(
    tmp_path: Path,
) -> None:
    root = tmp_path / "plain"
    write_files(root, {**FILES, "AGENTS.md": "# Build\n\n- API dumps: `./gradlew apiDump`\n"})
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    commit(root, "build")
    assert file_statuses(root) == {3: "ok"}
    (root / "gradle/conventions/src/main/kotlin/parcel.abi.gradle.kts").unlink()
    (root / "gradle" / "libs.versions.toml").write_text("[versions]\n")
    commit(root, "no more validator plugin")
    assert file_statuses(root) == {3: "stale"}
