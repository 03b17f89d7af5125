"""`orch memory verify`: check memories' claims against the working tree."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from orchestrator.commands._common import emit_json, json_option, repo
from orchestrator.errors import UsageError
from orchestrator.memory import repair
from orchestrator.memory.lint import Finding, imports, lint, report
from orchestrator.memory.record import record as record_results
from orchestrator.memory.verify import RESULTS, Verification, verify_changed, verify_store
from orchestrator.store.layout import Layout
from orchestrator.store.repo import RepoMemoryStore


@click.command("verify")
@click.argument("names", nargs=-1)
@click.option("--all", "include_all", is_flag=True, help="Also check superseded and stale ones.")
@click.option(
    "--changed",
    is_flag=True,
    help="The arguments are changed files: check only the active memories that cite them "
    "(the pre-commit hook orch-memory-verify-changed).",
)
@click.option(
    "--record",
    is_flag=True,
    help="Write `verified: {commit, at, result}` into memories whose record changes.",
)
@click.option(
    "--file",
    "lint_path",
    metavar="PATH",
    help="Lint an instruction file (AGENTS.md, CLAUDE.md, .cursorrules, any markdown): "
    "each claim that names code is ok, moved or stale. Needs no `orch init`.",
)
@click.option("--check", is_flag=True, help="With --file: exit 1 when any claim is stale.")
@click.option(
    "--fix",
    is_flag=True,
    help="Supersede each moved memory with a copy whose citations point where the code "
    "lives now (Checklist A; all in one write). Without it, moved memories are listed "
    "with the repair --fix would write.",
)
@json_option
def verify(
    names: tuple[str, ...],
    include_all: bool,
    changed: bool,
    record: bool,
    lint_path: str | None,
    check: bool,
    fix: bool,
    as_json: bool,
) -> None:
    """Check memories' claims against the working tree: ok, changed, moved or stale.

    Claims are citations (path, line, symbol) and what the body names in backticks
    (paths, `name()`, `Class.method`, `--flags`). Exit code 1 when any memory is stale.
    A memory is moved when a path it names is gone but the thing lives elsewhere (its
    fact holds): --fix supersedes it with repaired citations.
    With --changed, NAMES are changed files (as pre-commit passes the staged ones): only
    the active memories whose citations or backticked paths point at them are checked;
    `changed` alone never fails, and when no memory cites them one line says so.

    \b
    Examples:
      orch memory verify
      orch memory verify test-command --json
      orch memory verify --record
      orch memory verify --fix
      orch memory verify --changed app/store.py app/main.py
      orch memory verify --file AGENTS.md --check
    """
    if lint_path is not None:
        if names or changed or record or include_all or fix:
            raise UsageError("--file lints one file: drop the other arguments and options")
        _lint(lint_path, check, as_json)
        return
    if check:
        raise UsageError("--check goes with --file (orch memory verify exits 1 on stale anyway)")
    if fix and (changed or include_all):
        raise UsageError("--fix repairs active memories: drop --changed and --all")
    layout = repo()
    if changed:
        _verify_changed(layout, names, include_all, record, as_json)
        return
    everything, active = verify_store(layout)
    if names:
        unknown = [n for n in names if n not in active]
        if unknown:
            raise UsageError(f"no memory named {unknown[0]!r} (see `orch memory list`)")
        results = [v for v in everything if v.name in names]
    else:
        results = [v for v in everything if include_all or active[v.name]]
    _report(layout, results, record, as_json, fix=fix)


def _report(
    layout: Layout,
    results: list[Verification],
    record: bool,
    as_json: bool,
    *,
    fix: bool = False,
    **extra: int,
) -> None:
    """Print the results (and record them with --record; repair moved memories with
    --fix, or say what --fix would write); exit 1 when any is stale, or with --fix when
    a moved memory cannot be repaired."""
    written: list[str] = []
    moved = any(v.result == "moved" for v in results)
    memories = RepoMemoryStore(layout).load_all().by_name() if moved or record else {}
    repairs = repair.plan(layout, memories, results) if moved else []
    fixed = repair.apply(layout, repairs) if fix else []
    if record:
        gone = {r.old for r in fixed}
        chosen = [memories[v.name] for v in results if v.name in memories and v.name not in gone]
        written = record_results(layout, chosen, results)
    counts = {r: sum(1 for v in results if v.result == r) for r in RESULTS}
    if as_json:
        emit_json(
            {
                "v": 1,
                **extra,
                "memories": len(results),
                **counts,
                "results": [v.to_dict() for v in results],
                "recorded": written,
                "repairs": [{**r.to_dict(), "written": r in fixed} for r in repairs],
            }
        )
    else:
        for v in results:
            if v.result != "ok":
                click.echo(f"{v.result.upper():<8} {v.name}: {v.summary()}")
        _print_repairs(repairs, fixed, fix)
        what = "memories cite the changed files" if extra else "memories"
        click.echo(
            f"{len(results)} {what}: {counts['ok']} ok, {counts['changed']} changed, "
            f"{counts['moved']} moved, {counts['stale']} stale."
        )
        if record:
            click.echo(f"Recorded the verification in {len(written)} memory files.")
    if fix and len(fixed) < len(repairs):
        sys.exit(1)
    if counts["stale"]:
        if extra and not as_json:
            click.echo("Fix the code, or supersede them (orch memory supersede NAME ...).")
        sys.exit(1)


def _print_repairs(repairs: list[repair.Repair], fixed: list[repair.Repair], fix: bool) -> None:
    for r in repairs:
        if fix:
            done = "Repaired" if r in fixed else "Not repaired"
            click.echo(f"{done} {r.describe()}")
        else:
            click.echo(f"  --fix would write {r.describe()}")
    if fixed:
        click.echo(
            f"Superseded {len(fixed)} moved memories with repaired copies (the old files are "
            "kept, marked superseded)."
        )
    elif repairs and not fix:
        click.echo("Nothing was written: `orch memory verify --fix` makes these repairs.")


def _verify_changed(
    layout: Layout, files: tuple[str, ...], include_all: bool, record: bool, as_json: bool
) -> None:
    if include_all:
        raise UsageError("--changed checks active memories only: drop --all")
    if not files:
        raise UsageError("--changed needs the changed files: orch memory verify --changed FILE...")
    paths = [_repo_path(layout, f) for f in files]
    results = verify_changed(layout, paths)
    if results is None:
        if as_json:
            emit_json({"v": 1, "files": len(paths), "memories": 0, "results": []})
        else:
            some = "changed file" if len(paths) == 1 else f"{len(paths)} changed files"
            click.echo(f"No active memory cites the {some}.")
        return
    _report(layout, results, record, as_json, files=len(paths))


def _repo_path(layout: Layout, name: str) -> str:
    """A file name as given (relative to here, or absolute), relative to the repository."""
    full = os.path.normpath(os.path.join(os.getcwd(), name))
    folder = os.path.realpath(os.path.dirname(full))  # the file itself may be gone or a link
    try:
        return Path(folder, os.path.basename(full)).relative_to(layout.root.resolve()).as_posix()
    except ValueError:
        raise UsageError(f"{name} is outside the repository ({layout.root})") from None


def _lint(name: str, check: bool, as_json: bool) -> None:
    layout = repo(initialised=False)
    path = _repo_path(layout, name)
    try:
        source = (layout.root / path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from None
    # the file, then each file it imports (`@AGENTS.md` in a CLAUDE.md), linted on its own
    reports = []
    for at, text in [(path, source), *imports(layout.root, path, source)]:
        findings = lint(layout.root, at, text)
        reports.append(report(at, findings))
        if not as_json:
            _print_lint(at, findings, reports[-1]["counts"])
    out = {**reports[0], "imports": reports[1:]} if len(reports) > 1 else reports[0]
    if as_json:
        emit_json(out)
    if check and any(r["counts"]["stale"] for r in reports):
        sys.exit(1)


def _print_lint(path: str, findings: list[Finding], counts: dict[str, int]) -> None:
    for f in findings:
        if f.status != "ok":
            click.echo(f"{path}:{f.line}: {f.status.upper()} {f.text[:100]}: {f.reason}")
    click.echo(
        f"{path}: {len(findings)} claims name code: {counts['ok']} ok, {counts['moved']} moved, "
        f"{counts['stale']} stale."
    )
