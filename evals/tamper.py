"""The tamper table: what an attacker does to a task's event log, and what orch makes of it.

Each attack starts from a real task: the demo's sample, `orch run` without `--yes`, so the
task waits for a person to approve its plan (the moment a forged approval is worth most).
The attack changes the log as a process with write access to the repository could (lines
appended with `>>`, lines edited, moved, repeated or cut), never orch's state folder. Then
real `orch` processes run `orch log SLUG --check` (must exit 1 and name the expected line)
and `orch resume SLUG` (must exit 1, in one line naming it), and the task must still wait
for its person, with nothing committed.

Three controls are not attacks: a torn last line (a crash in the middle of a write) is a
note, `orch resume` goes on, and the next append repairs it, after which the log verifies;
the same log checked with another key reads "unverified (other key)", not tampered; a log
written before logs were signed reads, and is marked "unverified (no MACs)".
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.engine.demo import TASK, orch_command, prepare_repo, sample_paths
from orchestrator.events.chain import line_hash
from orchestrator.events.keys import STATE_ENV, Key
from orchestrator.events.log import utc_ts

TIMEOUT = 300.0
ZERO_TRACE = "00000000-0000-4000-8000-000000000000"


@dataclass
class Scene:
    """A task waiting for its plan's approval, and a line from another run to copy."""

    repo: Path
    slug: str
    log: Path
    env: dict[str, str]
    donor: bytes = b""  # a genuine approval_given line of another run of the same task

    def lines(self) -> list[bytes]:
        return self.log.read_bytes().split(b"\n")[:-1]

    def rewrite(self, lines: list[bytes]) -> None:
        """What an editor does: the whole file written again."""
        self.log.write_bytes(b"".join(line + b"\n" for line in lines))

    def append(self, data: bytes) -> None:
        """What `>>` does."""
        with self.log.open("ab") as fh:
            fh.write(data)

    def orch(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            orch_command(*args),
            cwd=self.repo,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )


def _raw(line: bytes) -> dict[str, Any]:
    value = json.loads(line)
    assert isinstance(value, dict)
    return value


def _envelope(
    scene: Scene, payload: dict[str, Any], event_type: str = "state_change"
) -> dict[str, Any]:
    first = _raw(scene.lines()[0])
    return {
        "v": 1,
        "ts": utc_ts(),
        "trace_id": first["trace_id"],
        "task": scene.slug,
        "agent": "Orchestrator",
        "phase": None,
        "event_type": event_type,
        "payload": payload,
    }


def _dump(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


COMPLETE = {"from": "WAITING_APPROVAL", "to": "COMPLETE", "step": "complete", "reason": "done"}


def _edit(scene: Scene, number: int, change: Callable[[dict[str, Any]], None]) -> None:
    """Re-serialise line `number` with one field changed, keeping its seal as it was."""
    lines = scene.lines()
    raw = _raw(lines[number - 1])
    change(raw)
    lines[number - 1] = _dump(raw)
    scene.rewrite(lines)


# the attacks: (name, what it does, how, the line orch must name: from the log's length n)
def copied_approval(scene: Scene) -> None:
    scene.append(scene.donor + b"\n")


def forged_approval(scene: Scene) -> None:
    request = next(
        _raw(line) for line in reversed(scene.lines()) if b'"approval_requested"' in line
    )
    payload = {
        **request["payload"],
        "from": "WAITING_APPROVAL",
        "to": "PLAN_REVIEW",
        "step": "approval_given",
        "reason": "a person approved",
        "by": "orch approve",
    }
    scene.append(_dump(_envelope(scene, payload)) + b"\n")


def forged_complete(scene: Scene) -> None:
    scene.append(_dump(_envelope(scene, COMPLETE)) + b"\n")


def forged_complete_sealed(scene: Scene) -> None:
    """The format known, the key not: the right prev and key id, a made-up MAC."""
    last = _raw(scene.lines()[-1])
    sealed = {
        **_envelope(scene, COMPLETE),
        "prev": line_hash(scene.lines()[-1]),
        "kid": last["kid"],
        "mac": secrets.token_hex(32),
    }
    scene.append(_dump(sealed) + b"\n")


def forged_complete_own_key(scene: Scene) -> None:
    """Signed properly, with a key of the attacker's own."""
    key = Key.of(secrets.token_bytes(32))
    body = _dump(
        {**_envelope(scene, COMPLETE), "prev": line_hash(scene.lines()[-1]), "kid": key.kid}
    )
    scene.append(body[:-1] + b',"mac":"' + key.mac(body).encode() + b'"}\n')


def edited_payload(scene: Scene) -> None:
    _edit(scene, 5, lambda raw: raw["payload"].update(reason="approved by a person"))


def reordered(scene: Scene) -> None:
    lines = scene.lines()
    lines[2], lines[3] = lines[3], lines[2]
    scene.rewrite(lines)


def replayed(scene: Scene) -> None:
    scene.append(scene.lines()[4] + b"\n")


def repeated_in_place(scene: Scene) -> None:
    lines = scene.lines()
    scene.rewrite([*lines[:5], lines[4], *lines[5:]])


def removed_line(scene: Scene) -> None:
    lines = scene.lines()
    scene.rewrite(lines[:2] + lines[3:])


def zeroed_trace(scene: Scene) -> None:
    _edit(scene, 2, lambda raw: raw.update(trace_id=ZERO_TRACE))


def other_task(scene: Scene) -> None:
    _edit(scene, 2, lambda raw: raw.update(task="another-task"))


def ts_2001(scene: Scene) -> None:
    _edit(scene, len(scene.lines()), lambda raw: raw.update(ts="2001-01-01T00:00:00.000Z"))


def cut_end(scene: Scene) -> None:
    scene.rewrite(scene.lines()[:-2])


def cut_last(scene: Scene) -> None:
    scene.rewrite(scene.lines()[:-1])


@dataclass(frozen=True)
class Attack:
    name: str
    what: str
    apply: Callable[[Scene], None]
    line: Callable[[int], int]  # the line orch must name, from the log's length before


ATTACKS: tuple[Attack, ...] = (
    Attack(
        "copied approval",
        "a genuine approval_given line of another run appended with >>",
        copied_approval,
        lambda n: n + 1,
    ),
    Attack(
        "forged approval",
        "the approval request copied as approval_given, appended",
        forged_approval,
        lambda n: n + 1,
    ),
    Attack(
        "forged COMPLETE",
        'a {"to": "COMPLETE"} state_change appended, no seal',
        forged_complete,
        lambda n: n + 1,
    ),
    Attack(
        "forged COMPLETE, sealed",
        "the same with the right prev and key id and a made-up MAC",
        forged_complete_sealed,
        lambda n: n + 1,
    ),
    Attack(
        "forged COMPLETE, own key",
        "the same signed with a key of the attacker's own",
        forged_complete_own_key,
        lambda n: n + 1,
    ),
    Attack("edited payload", "line 5's reason rewritten", edited_payload, lambda n: 5),
    Attack("reordered lines", "lines 3 and 4 swapped", reordered, lambda n: 3),
    Attack("replayed line", "line 5 appended again at the end", replayed, lambda n: n + 1),
    Attack("repeated line", "line 5 repeated after itself", repeated_in_place, lambda n: 6),
    Attack("removed line", "line 3 deleted", removed_line, lambda n: 3),
    Attack("zeroed trace_id", "line 2's trace_id set to zeros", zeroed_trace, lambda n: 2),
    Attack("another task's name", "line 2's task set to another task", other_task, lambda n: 2),
    Attack("timestamp from 2001", "the last line's ts set to 2001", ts_2001, lambda n: n),
    Attack("lines cut from the end", "the last two lines deleted", cut_end, lambda n: n - 1),
    Attack("last line cut", "the last line deleted", cut_last, lambda n: n),
)


@dataclass
class Row:
    attack: str
    what: str
    expected_line: int | None
    check_exit: int  # orch log SLUG --check
    verdict: str  # its verdict line
    named_line: int | None
    resume_exit: int  # orch resume SLUG
    resume_says: str
    resume_wrote: bool  # whether orch resume changed the log
    status_says: str  # the log check orch status shows
    commits_after: int
    detected: bool = False
    refused: bool = False
    ok: bool = False
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _verdict(stderr: str) -> str:
    """The verdict line of `orch log --check`, without the log's path."""
    lines = [line for line in stderr.splitlines() if not line.startswith(("warning:", "note:"))]
    last = lines[-1].removeprefix("error: ") if lines else ""
    return last.split(".ndjson: ", 1)[-1]


def _named(text: str) -> int | None:
    found = re.search(r"\bline (\d+)\b", text)
    return int(found.group(1)) if found else None


def _status(scene: Scene, env: dict[str, str] | None = None) -> tuple[str, int]:
    """(the log check `orch status` shows, the repository's commit count)."""
    out = scene.orch("status", scene.slug, "--json", env=env)
    says = (
        json.loads(out.stdout)["log_check"]["summary"]
        if out.returncode == 0
        else f"status exit {out.returncode}"
    )
    commits = subprocess.run(
        ["git", "rev-list", "--count", "HEAD"], cwd=scene.repo, capture_output=True, text=True
    ).stdout.strip()
    return says, int(commits or 0)


def _check_and_resume(
    scene: Scene, what: tuple[str, str], expected: int | None, env: dict[str, str] | None = None
) -> Row:
    check = scene.orch("log", scene.slug, "--check", env=env)
    before = scene.log.read_bytes()
    resume = scene.orch("resume", scene.slug, env=env)
    wrote = scene.log.read_bytes() != before
    says, commits = _status(scene, env)
    verdict = _verdict(check.stderr)
    return Row(
        what[0],
        what[1],
        expected,
        check.returncode,
        verdict,
        _named(verdict),
        resume.returncode,
        resume.stderr.strip(),
        wrote,
        says,
        commits,
    )


def make_scene(where: Path, env: dict[str, str]) -> Scene:
    """A fresh copy of the sample with its task waiting for plan approval."""
    with sample_paths() as (sample, script):
        repo = prepare_repo(where, sample)
        out = subprocess.run(
            orch_command("run", TASK, "--model", f"scripted:{script}", "--json"),
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    if out.returncode != 0:
        raise RuntimeError(f"the scenario did not start: {out.stderr.strip()[-300:]}")
    logs = sorted(repo.glob("plans/artifacts/*/observability/*.ndjson"))
    return Scene(repo, logs[0].stem, logs[0], env)


def donor_line(where: Path, env: dict[str, str]) -> bytes:
    """A genuine approval_given line, signed on this machine, from another run."""
    scene = make_scene(where, env)
    out = scene.orch("approve", scene.slug, "--no-run", "--json")
    if out.returncode != 0:
        raise RuntimeError(f"the donor run was not approved: {out.stderr.strip()[-300:]}")
    return next(line for line in scene.lines() if b'"approval_given"' in line)


def run_attack(attack: Attack, scene: Scene) -> Row:
    before = len(scene.lines())
    attack.apply(scene)
    row = _check_and_resume(scene, (attack.name, attack.what), attack.line(before))
    row.detected = row.check_exit == 1 and row.named_line == row.expected_line
    row.refused = (
        row.resume_exit == 1
        and len(row.resume_says.splitlines()) == 1
        and _named(row.resume_says) == row.expected_line
        and not row.resume_wrote
    )
    row.ok = (
        row.detected
        and row.refused
        and row.status_says.startswith("tampered")
        and row.commits_after == 1  # nothing of the plan was carried out
    )
    return row


def run_controls(scene: Scene, other_env: dict[str, str]) -> list[Row]:
    """The log checked with another key, a torn last line, and an old log without MACs, in
    turn on one task."""
    rows = []
    row = _check_and_resume(
        scene,
        ("another key", "the log checked on a machine that did not write it"),
        None,
        other_env,
    )
    row.detected = row.verdict.startswith("unverified (other key)")
    row.refused = row.resume_exit == 1 and "unverified (other key)" in row.resume_says
    row.ok = (
        row.detected
        and row.refused
        and not row.resume_wrote
        and row.status_says.startswith("unverified (other key)")
        and "tampered" not in row.verdict + row.resume_says
    )
    rows.append(row)

    scene.append(b'{"v":1,"ts":"' + utc_ts().encode() + b'","trace_id":"')  # a cut write
    row = _check_and_resume(scene, ("torn last line", "half a line left by a crash"), None)
    approve = scene.orch("approve", scene.slug, "--no-run")  # the next append repairs it
    after = scene.orch("log", scene.slug, "--check")
    repaired = b'"torn_line"' in scene.log.read_bytes()
    row.notes = [
        f"orch approve --no-run: exit {approve.returncode}; then orch log --check: "
        f"{_verdict(after.stderr)} (exit {after.returncode})"
    ]
    row.detected = row.verdict.startswith("verified")
    row.refused = False
    row.ok = (
        row.detected
        and row.resume_exit == 0
        and approve.returncode == 0
        and repaired
        and after.returncode == 0
        and _verdict(after.stderr).startswith("verified")
    )
    rows.append(row)

    lines = []
    for line in scene.lines():
        raw = _raw(line)
        for key in ("prev", "kid", "mac"):
            raw.pop(key, None)
        lines.append(_dump(raw))
    scene.rewrite(lines)
    shutil.rmtree(Path(scene.env[STATE_ENV]) / "heads", ignore_errors=True)
    plain = scene.orch("log", scene.slug)
    row = _check_and_resume(scene, ("old log, no MACs", "every seal removed, no head record"), None)
    accept = scene.orch("resume", scene.slug, "--accept-log", "--json")
    after = scene.orch("log", scene.slug, "--check")
    row.notes = [
        f"orch log prints {len(plain.stdout.splitlines())} of {len(lines)} events "
        f"(exit {plain.returncode})",
        f"orch resume --accept-log: exit {accept.returncode}; then orch log --check: "
        f"{_verdict(after.stderr)}",
    ]
    row.detected = row.verdict.startswith("unverified (no MACs)")
    row.refused = row.resume_exit == 1 and "unverified (no MACs)" in row.resume_says
    row.ok = (
        row.detected
        and row.refused
        and not row.resume_wrote
        and plain.returncode == 0
        and len(plain.stdout.splitlines()) == len(lines)
        and accept.returncode == 0
        and after.returncode == 0
    )
    rows.append(row)
    return rows


def tamper_table(
    workdir: Path | None = None, *, attacks: tuple[Attack, ...] = ATTACKS
) -> list[dict[str, Any]]:
    """One row per attack and control (see `Row`); each attack on a fresh task."""
    own = workdir is None
    root = Path(tempfile.mkdtemp(prefix="orch-tamper-")) if workdir is None else workdir
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ORCH_")}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env[STATE_ENV] = str(root / "state")  # this machine's key, for the table only
        other = {**env, STATE_ENV: str(root / "other-state")}
        donor = donor_line(root / "donor", env)
        rows = []
        for n, attack in enumerate(attacks):
            scene = make_scene(root / f"attack-{n}", env)
            scene.donor = donor
            rows.append(run_attack(attack, scene).to_dict())
        rows += [row.to_dict() for row in run_controls(make_scene(root / "controls", env), other)]
        return rows
    finally:
        if own:
            shutil.rmtree(root, ignore_errors=True)
