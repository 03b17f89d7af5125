"""The secrets table: no secret is ever stored, whatever path it takes into orch.

Twelve formats of secret (made up here, in the shapes the vendors use; none is real) go,
one at a time, through every path that writes repo memory, notes or a task's records:

- `memory add`: `orch memory add` (a real process): must be refused in one line that names
  the kind and the field and never repeats the secret;
- `supersede`: `orch memory supersede` (a real process), refused the same way;
- `memory tool`: the model's memory tool (`create`), refused as a tool error;
- `promotion`: a task's candidate fact holding it, through Checklist C: dropped;
- `import`: a Claude Code memory folder holding it, through `orch memory import`;
- `notes set`: `orch notes set --blocker ...`, refused;

and all twelve at once through a file the agent reads during a real `orch run` (the
scripted model reads it with `read_file`, greps it with `search`, prints it with
`run_shell`, and tries to save it with the memory tool). Afterwards every file under
`plans/`, `memories/`, `NOTES.md` and `.orch/` (the SQLite files included) is searched, as
raw bytes, for the secret and for each 12-character piece of it: a row is ok when nothing
is found and the refusals said what they must.
"""

from __future__ import annotations

import base64
import json
import random
import string
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.errors import OrchError
from orchestrator.events.log import EventLog
from orchestrator.memory.candidates import append_candidate
from orchestrator.memory.importer import import_claude_code
from orchestrator.memory.promotion import promote
from orchestrator.models.memory_tool import MemoryToolHandler, ToolInputError
from orchestrator.store.layout import Layout
from orchestrator.store.scaffold import scaffold
from orchestrator.store.tasks import TaskFolder

ORCH = str(Path(sys.executable).with_name("orch"))
PATHS = ("memory add", "supersede", "memory tool", "promotion", "import", "notes set")
SCOPE = ("plans", "memories", "NOTES.md", ".orch")


def fake_secrets(seed: int = 11) -> dict[str, str]:
    """One made-up secret of each format, in the shape its vendor uses."""
    r = random.Random(seed)

    def rnd(n: int, chars: str = string.ascii_letters + string.digits) -> str:
        return "".join(r.choice(chars) for _ in range(n))

    def b64(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    key_lines = "\n".join(rnd(64, string.ascii_letters + string.digits + "+/") for _ in range(4))
    return {
        "anthropic": "sk-ant-api03-" + rnd(93, string.ascii_letters + string.digits + "-_") + "AA",
        "openai": "sk-proj-" + rnd(48),
        "aws": "AKIA" + rnd(16, string.ascii_uppercase + string.digits),
        "github": "ghp_" + rnd(36),
        "slack": f"xoxb-{rnd(10, string.digits)}-{rnd(13, string.digits)}-{rnd(24)}",
        "stripe": "sk_live_" + rnd(24),
        "google": "AIza" + rnd(35, string.ascii_letters + string.digits + "-_"),
        "private key": f"-----BEGIN RSA PRIVATE KEY-----\n{key_lines}\n-----END RSA PRIVATE KEY-----",
        "jwt": ".".join(
            (b64({"alg": "HS256", "typ": "JWT"}), b64({"sub": rnd(10, string.digits)}), rnd(43))
        ),
        "url with credentials": f"https://deploy:{rnd(14)}@db.internal.acme.io:5432/app",
        "password in words": f"the staging password is {rnd(12)}",
        "generic token": f"api_token = '{rnd(32)}'",
    }


def core(secret: str) -> str:
    """The part of a sample that is the secret itself (not the words around it)."""
    if secret.startswith("the staging password is "):
        return secret.rsplit(" ", 1)[1]
    if secret.startswith("api_token = '"):
        return secret.split("'")[1]
    if "://" in secret:
        return secret.split(":")[2].split("@")[0]
    return secret


def pieces(secret: str) -> set[str]:
    """What must not be found: the secret, and every 12-character piece of it."""
    value = core(secret)
    found = {value}
    for line in value.splitlines():
        found |= {line[i : i + 12] for i in range(0, max(1, len(line) - 11))}
    return {p for p in found if len(p) >= 12 or p == value}


def leaks(root: Path, secret: str) -> list[str]:
    """Files under the records that hold the secret or a piece of it (as raw bytes)."""
    wanted = [p.encode() for p in pieces(secret)]
    out = []
    for top in SCOPE:
        base = root / top
        files = [base] if base.is_file() else (p for p in base.rglob("*") if p.is_file())
        for path in files:
            data = path.read_bytes()
            if any(w in data for w in wanted):
                out.append(str(path.relative_to(root)))
    return sorted(out)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def make_repo(base: Path) -> Layout:
    repo = base / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "security eval")
    git(repo, "config", "user.email", "eval@orch.invalid")
    (repo / "app.py").write_text("def deploy():\n    return 'ok'\n")
    layout = Layout(repo)
    scaffold(layout)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    return layout


def orch(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ORCH, *args], cwd=repo, capture_output=True, text=True, timeout=120)


@dataclass
class Row:
    secret: str
    path: str
    refused: bool  # the write was refused or the secret dropped
    message: str  # what the user (or the model) was told, as shown
    leaks: list[str] = field(default_factory=list)
    echoed: bool = False  # the message repeats the secret

    @property
    def ok(self) -> bool:
        return self.refused and not self.leaks and not self.echoed

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def _fact(secret: str) -> str:
    return f"Deploys authenticate with {secret} from app.py."


def _through(layout: Layout, path: str, secret: str) -> tuple[bool, str]:
    """One write path with one secret: (refused or dropped, the message shown)."""
    repo = layout.root
    if path == "memory add":
        done = orch(
            repo,
            "memory",
            "add",
            "--type",
            "reference",
            "--subject",
            "deploy credentials",
            "--reason",
            "deploys need it",
            "--cite",
            "app.py",
            "--fact",
            _fact(secret),
        )
        return done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    if path == "supersede":
        orch(
            repo,
            "memory",
            "add",
            "--type",
            "reference",
            "--subject",
            "deploy entry point",
            "--reason",
            "deploys start there",
            "--cite",
            "app.py",
            "--name",
            "deploy-entry",
            "--fact",
            "Deploys start in `deploy` in app.py.",
        )
        done = orch(
            repo,
            "memory",
            "supersede",
            "deploy-entry",
            "--name",
            "deploy-entry-2",
            "--fact",
            _fact(secret),
        )
        return done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    if path == "memory tool":
        text = f"---\nname: deploy-key\ndescription: {secret.splitlines()[0]}\ntype: reference\n"
        text += "subject: deploy\nreason: deploys need it\ncitations:\n- path: app.py\n---\n"
        try:
            answer = MemoryToolHandler(layout).execute(
                {"command": "create", "path": "/memories/deploy-key.md", "file_text": text}
            )
        except ToolInputError as exc:
            return True, str(exc)
        return False, answer
    if path == "promotion":
        task = TaskFolder.create(layout, "rotate the deploy key")
        log = EventLog(task.event_log_path, task.slug)
        append_candidate(
            task,
            {
                "fact": _fact(secret),
                "subject": "deploy",
                "reason": "deploys",
                "type": "reference",
                "citations": ["app.py"],
            },
        )
        report = promote(layout, task, log)
        dropped = [d for d in report.decisions if d.decision == "excluded"]
        return bool(dropped) and not report.counts().get("written"), report.text()
    if path == "import":
        folder = layout.root.parent / "claude-memory"
        folder.mkdir(exist_ok=True)
        (folder / "deploy.md").write_text(
            "---\nname: deploy\ndescription: how deploys log in\ntype: reference\n---\n"
            f"{_fact(secret)}\n\n**Why:** deploys need it\n"
        )
        (folder / "MEMORY.md").write_text("- [deploy](deploy.md): how deploys log in\n")
        try:
            result = import_claude_code(layout, folder)
        except OrchError as exc:
            return True, exc.line()
        counts = result.counts()
        return counts["created"] + counts["superseded"] == 0, result.text()
    if path == "notes set":
        first = secret.splitlines()[0] if "PRIVATE KEY" not in secret else secret.replace("\n", " ")
        done = orch(repo, "notes", "set", "--blocker", f"rotate {first}")
        return done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    raise ValueError(path)


def one_write(name: str, secret: str, path: str) -> Row:
    with tempfile.TemporaryDirectory(prefix="orch-secrets-") as tmp:
        layout = make_repo(Path(tmp))
        refused, message = _through(layout, path, secret)
        return Row(
            name,
            path,
            refused,
            " ".join(message.split())[:200],
            leaks(layout.root, secret),
            any(p in message for p in pieces(secret)),
        )


def write_paths(secrets: dict[str, str], workers: int = 4) -> list[Row]:
    """Every secret through every write path, a fresh repository each (in parallel)."""
    cases = [(name, secret, path) for name, secret in secrets.items() for path in PATHS]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda c: one_write(*c), cases))


def agent_read(secrets: dict[str, str], script_dir: Path) -> list[Row]:
    """All the secrets in one file of the project, read by the agent during a real run."""
    with tempfile.TemporaryDirectory(prefix="orch-secrets-run-") as tmp:
        layout = make_repo(Path(tmp))
        repo = layout.root
        (repo / "deploy.env").write_text("\n".join(secrets.values()) + "\n")
        (repo / "orch.toml").write_text('test_command = "true"\n')
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "deploy settings")
        script = script_dir / "read-secrets.json"
        script.write_text(json.dumps(_run_script()))
        done = orch(
            repo, "run", "--yes", "--model", f"scripted:{script}", "read the deploy settings"
        )
        return [
            Row(name, "file the agent reads", done.returncode == 0, _tail(done), leaks(repo, s))
            for name, s in secrets.items()
        ]


def _tail(done: subprocess.CompletedProcess[str]) -> str:
    return " ".join((done.stdout + done.stderr).split())[-200:]


def _run_script() -> dict[str, Any]:
    """A scripted model for a one-phase task whose executor reads deploy.env every way."""

    def fenced(obj: Any) -> dict[str, Any]:
        return {"text": "```json\n" + json.dumps(obj) + "\n```"}

    plan = {
        "schema_version": 1,
        "task_title": "Read the deploy settings",
        "slug": "x",
        "summary": "Read them.",
        "status": "READY_FOR_EXECUTION",
        "confidence": 0.9,
        "complexity_tier": "TRIVIAL",
        "phases": [
            {
                "phase_id": 1,
                "title": "Read settings",
                "objective": "Read deploy.env.",
                "files": [{"path": "deploy.env", "action": "review", "reason": "read it"}],
                "steps": ["read"],
                "tests": [],
                "acceptance_criteria": ["read"],
                "quality_gates": ["tests_pass"],
                "dependencies": [],
            }
        ],
        "open_questions": [],
        "risks": [],
        "risk_review": {
            k: {"level": "none", "notes": ""}
            for k in (
                "data_volume",
                "performance",
                "concurrency",
                "access_control",
                "migration_rollback",
                "dependency",
                "operability",
            )
        },
        "success_criteria": ["read"],
    }
    verdict = {
        "verdict": "APPROVED",
        "score": 0.9,
        "summary": "ok",
        "findings": [],
        "checks": [{"id": "c", "description": "c", "passed": True}],
    }
    review = {
        "verdict": "PASS",
        "summary": "ok",
        "blocking_issues": [],
        "validated_blocking_issues": [],
        "non_blocking": [],
        "criteria": [{"criterion": "read", "met": True, "evidence": "read"}],
    }
    memory = (
        "---\nname: deploy-secrets\ndescription: the deploy settings\ntype: reference\n"
        "subject: deploy\nreason: deploys\ncitations:\n- path: deploy.env\n---\n"
    )
    executor = [
        {"tool_calls": [{"name": "read_file", "input": {"path": "deploy.env"}}]},
        {"tool_calls": [{"name": "search", "input": {"pattern": "KEY|sk-|ghp_|AKIA|xox|AIza"}}]},
        {"tool_calls": [{"name": "run_shell", "input": {"command": "cat deploy.env"}}]},
        {
            "tool_calls": [
                {
                    "name": "memory",
                    "input": {
                        "command": "create",
                        "path": "/memories/deploy-secrets.md",
                        "file_text": memory + "The deploy settings: see deploy.env.",
                    },
                }
            ]
        },
        {"text": "Read them; nothing to change."},
    ]
    return {
        "conversations": [
            {"when": {"purpose": "planner"}, "replies": [fenced(plan)]},
            {"when": {"purpose": "auditor"}, "replies": [fenced(verdict)]},
            {"when": {"purpose": "executor", "phase": 1}, "replies": executor},
            {"when": {"purpose": "reviewer"}, "replies": [fenced(review), fenced(review)]},
        ]
    }


def secrets_table() -> list[dict[str, Any]]:
    secrets = fake_secrets()
    rows = [row.to_dict() for row in write_paths(secrets)]
    with tempfile.TemporaryDirectory(prefix="orch-secrets-script-") as tmp:
        rows += [row.to_dict() for row in agent_read(secrets, Path(tmp))]
    return rows


def render(rows: list[dict[str, Any]]) -> str:
    paths = list(dict.fromkeys(r["path"] for r in rows))
    names = list(dict.fromkeys(r["secret"] for r in rows))
    cell = {(r["secret"], r["path"]): r for r in rows}
    width = max(len(n) for n in names)
    out = [f"{'secret':<{width}}  " + "  ".join(f"{p:>12}"[-12:] for p in paths)]
    for n in names:
        marks = ("ok" if cell[(n, p)]["ok"] else "LEAK" for p in paths)
        out.append(f"{n:<{width}}  " + "  ".join(f"{m:>12}" for m in marks))
    bad = [r for r in rows if not r["ok"]]
    for r in bad:
        out.append(
            f"  {r['secret']} via {r['path']}: refused={r['refused']} leaks={r['leaks']}"
            f" echoed={r['echoed']}: {r['message']}"
        )
    out.append(f"\n{len(rows) - len(bad)} of {len(rows)} rows: nothing stored, nothing echoed")
    return "\n".join(out)


if __name__ == "__main__":
    table = secrets_table()
    print(json.dumps(table, indent=1) if "--json" in sys.argv else render(table))
    sys.exit(0 if all(r["ok"] for r in table) else 1)
