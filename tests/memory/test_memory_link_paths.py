"""A markdown link's destination is percent-encoded (`docs/Testing%20Guide.md` names
`docs/Testing Guide.md`): the path a link claims is the decoded one, in an instruction
file as in a memory's body."""

from __future__ import annotations

from pathlib import Path

from conftest import commit

from orchestrator.memory.kinds import link_claims
from orchestrator.memory.lint import lint


def test_a_link_names_the_decoded_path() -> None:
    claims = link_claims("See [the guide](docs/Testing%20Guide.md) and [ADRs](docs/adr%20notes/).")
    assert [c.path for c in claims] == ["docs/Testing Guide.md", "docs/adr notes/"]
    assert [c.text for c in claims] == ["docs/Testing%20Guide.md", "docs/adr%20notes/"]


def test_an_encoded_link_to_a_file_with_a_space_holds_and_a_missing_one_is_stale(
    git_repo: Path,
) -> None:
    (git_repo / "docs").mkdir()
    (git_repo / "docs" / "Testing Guide.md").write_text("# Testing\n")
    commit(git_repo, "docs")
    text = (
        "- [Testing Guide](docs/Testing%20Guide.md): how to test\n"
        "- [Old Spec](docs/Old%20Spec.md): what to build\n"
    )
    (git_repo / "AGENTS.md").write_text(text)
    found = {f.line: (f.status, f.reason) for f in lint(git_repo, "AGENTS.md", text)}
    assert found[1][0] == "ok"
    assert found[2][0] == "stale" and "docs/Old Spec.md does not exist" in found[2][1]
