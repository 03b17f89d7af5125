"""Instruction-file shapes the lint reads as people write them: a route beside words of
web routes, a placeholder class in a test selector, a bullet of several sentences (each
finding carries the sentence it came from), a folder a container image makes, a folder
tree drawn in a code block, and names listed below the folder a line gives. Each is
linted (`orchestrator.memory.lint`) in a real git repository, beside the same shape where
the rule must still report what is gone."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import commit, git, lost

from orchestrator.memory.lint import lint


@pytest.fixture
def repo(git_repo: Path) -> Path:
    root = git_repo
    for folder in ("addons/cron", "addons/mailer", "web/src/state"):
        (root / folder).mkdir(parents=True)
    (root / "addons" / "cron" / "jobs.go").write_text("package cron\n\nfunc Tick() {}\n")
    (root / "addons" / "mailer" / "send.go").write_text("package mailer\n\nfunc Send() {}\n")
    (root / "web" / "src" / "state" / "session.ts").write_text("export const session = 1;\n")
    (root / "web" / "src" / "state" / "filters.ts").write_text("export const filters = 2;\n")
    (root / "web" / "package.json").write_text('{"name": "web"}\n')
    (root / "proto").mkdir()
    (root / "proto" / "shop.proto").write_text('syntax = "proto3";\n')
    commit(root, "code")
    return root


def findings(root: Path, text: str) -> dict[int, list[tuple[str, str, str]]]:
    (root / "AGENTS.md").write_text(text)
    out: dict[int, list[tuple[str, str, str]]] = {}
    for f in lint(root, "AGENTS.md", text):
        out.setdefault(f.line, []).append((f.status, f.text, f.reason))
    return out


def statuses(root: Path, text: str) -> dict[int, str]:
    """The worst status of each line's findings."""
    order = ("ok", "moved", "stale")
    return {
        line: max((s for s, _, _ in found), key=order.index)
        for line, found in findings(root, text).items()
    }


def test_a_route_beside_words_of_routes_is_no_file_pattern(repo: Path) -> None:
    lost(repo, "syntax = 1\n", "messages.protobuf")
    found = statuses(
        repo,
        "- Base path: `/shop.api.v2.*`\n"
        "- Served under `/checkout*` endpoints.\n"
        "- Messages live in the `*.protobuf` files.\n",
    )
    assert found.get(1, "ok") == "ok" and found.get(2, "ok") == "ok"
    assert found[3] == "stale"


def test_a_placeholder_test_class_selects_no_class(repo: Path) -> None:
    found = findings(
        repo,
        '- One test: `./gradlew :core:jvmTest --tests "fully.qualified.TestClassName"`\n'
        '- Cart: `./gradlew :core:jvmTest --tests "org.acme.CartTest"`\n'
        "- Copy the template to `path/to/config.yaml` first.\n",
    )
    assert all(s == "ok" for s, _, _ in found.get(1, [])) and 3 not in found
    assert found[2][0][0] == "stale" and "org.acme.CartTest" in found[2][0][2]


def test_each_sentence_of_a_bullet_is_judged_and_reported_alone(repo: Path) -> None:
    found = findings(
        repo,
        "- Jobs are in `addons/queue/worker.go` (see `addons/queue/`). Mail goes out\n"
        "  through `addons/mailer/send.go`, wrapped.\n",
    )
    assert [(s, t) for s, t, _ in found[1]] == [
        ("stale", "- Jobs are in `addons/queue/worker.go` (see `addons/queue/`)."),
        ("ok", "Mail goes out through `addons/mailer/send.go`, wrapped."),
    ]


def test_a_folder_a_container_image_makes_is_entered_there(repo: Path) -> None:
    text = "```bash\ncd relay-daemon && make check\ncd relay-gone && make check\n```\n"
    assert statuses(repo, text)[3] == "stale"
    (repo / "deploy").mkdir()
    (repo / "deploy" / "Dockerfile").write_text(
        "FROM debian\nENV HOME_DIR=/home/app\nCOPY --chown=app addons $HOME_DIR/relay-daemon\n"
    )
    commit(repo, "image")
    found = statuses(repo, text)
    assert found.get(2, "ok") == "ok" and found[3] == "stale"


TREE = """\
```
addons/              # optional parts
├── cron/            # timed jobs
└── mailer/          # outgoing mail
web/
└── src/
    └── state/
        ├── session.ts   # who is signed in
        └── filters.ts   # the active filters
```
"""


def test_a_folder_tree_names_each_path_its_nesting_gives(repo: Path) -> None:
    (repo / "AGENTS.md").write_text(TREE)
    commit(repo, "instructions")
    git(repo, "mv", "addons", "internal")
    git(repo, "rm", "-q", "web/src/state/filters.ts")
    commit(repo, "move the addons, drop the filters")
    found = findings(repo, TREE)
    assert found[3][0][0] == "moved" and "addons/cron/ moved to internal/cron" in found[3][0][2]
    assert found[4][0][0] == "moved"
    assert found[8][0][0] == "ok"
    assert found[9][0] == (
        "stale",
        "└── filters.ts   # the active filters",
        "web/src/state/filters.ts does not exist",
    )


def test_a_tree_drawn_under_the_project_s_own_name_starts_at_the_root(repo: Path) -> None:
    text = "```\nmyshop/\n├── addons/\n│   └── cron/\n└── addons/gone/\n```\n"
    found = statuses(repo, text)
    assert found[3] == "ok" and found[4] == "ok" and found[5] == "stale"


def test_a_nesting_the_tree_it_was_written_against_did_not_have_claims_nothing(
    repo: Path,
) -> None:
    # drawn one level off: `cron/` sits under `addons/`, not under `web/`
    text = "```\nweb/\n├── cron/\n└── src/\n    └── state/\n```\n"
    (repo / "AGENTS.md").write_text(text)
    commit(repo, "instructions")
    git(repo, "rm", "-q", "-r", "web/src/state")
    commit(repo, "no client state")
    found = statuses(repo, text)
    assert 3 not in found or found[3] == "ok"  # web/cron/ never was: a misread drawing
    assert found[5] == "stale"  # web/src/state/ was there when the file was written


LISTED = """\
Located in `.agents/skills/`, these guide the work:

- **review** - Reading a change
- **release** - Cutting a version
- **planning-poker** - Not a file of the folder

Located in `.agents/roles/`, ask them for help:

- **planner** - Breaks the work down
"""


def test_names_listed_below_their_folder_are_paths_there(repo: Path) -> None:
    for folder in ("review", "release"):
        (repo / ".agents" / "skills" / folder).mkdir(parents=True)
        (repo / ".agents" / "skills" / folder / "SKILL.md").write_text("# Steps\n")
    (repo / ".agents" / "roles").mkdir()
    (repo / ".agents" / "roles" / "planner.md").write_text("# Planner\n")
    (repo / "AGENTS.md").write_text(LISTED)
    commit(repo, "instructions")
    assert all(status == "ok" for status in statuses(repo, LISTED).values())
    git(repo, "rm", "-q", "-r", ".agents/skills/release", ".agents/roles/planner.md")
    commit(repo, "drop a skill and a role")
    found = findings(repo, LISTED)
    assert found[3][0][0] == "ok"
    assert found[4][0] == (
        "stale",
        "- **release** - Cutting a version",
        ".agents/skills/release/ does not exist",
    )
    assert 5 not in found
    assert found[9][0][0] == "stale" and ".agents/roles/planner.md" in found[9][0][2]


HEADED = """\
### Ledger service (`svc/ledger/`)

- **journal**: the append-only log of entries
- **api**: the service's calls
"""


def test_names_listed_under_a_heading_that_names_their_folder_are_entries_there(
    repo: Path,
) -> None:
    for folder in ("journal", "api"):
        (repo / "svc" / "ledger" / folder).mkdir(parents=True)
        (repo / "svc" / "ledger" / folder / "Cargo.toml").write_text("[package]\n")
    (repo / "AGENTS.md").write_text(HEADED)
    commit(repo, "instructions")
    assert all(status == "ok" for status in statuses(repo, HEADED).values())
    git(repo, "rm", "-q", "-r", "svc/ledger/journal")
    commit(repo, "the journal left")
    found = statuses(repo, HEADED)
    assert found[3] == "stale"
    assert found.get(4, "ok") == "ok"


def test_a_folder_the_block_made_is_entered_without_a_claim(repo: Path) -> None:
    """`cd heron-demo` after the command that makes it (a clone, a starter copied, a
    `mkdir` on the same line) enters the reader's new folder; `cd addons/gone` after a
    comment naming it, and `cd toolkit` after a command naming nothing, are still checked."""
    text = (
        "```sh\n"
        "npx degit acme/starters/heron heron-demo\n"
        "cd heron-demo\n"
        "git clone https://example.invalid/acme/quill.git\n"
        "cd quill && make\n"
        "mkdir scratch-out && cd scratch-out\n"
        "# then into addons\n"
        "cd addons/gone\n"
        "ls\n"
        "cd toolkit\n"
        "cd addons/cron\n"
        "```\n"
    )
    found = statuses(repo, text)
    assert [line for line, status in sorted(found.items()) if status != "ok"] == [8, 10]
