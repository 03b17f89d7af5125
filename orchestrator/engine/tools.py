"""The tools an agent may call (the `ToolSet` protocol).

`ReadOnlyTools` (list, read, search) serve the Planner, the PlanAuditor and the
CodeReviewer. `ExecutorTools` add edits, the shell (behind the high-risk policy), the
task list, and the memory tool when a handler is given. A tool's own failure is a
ToolResult with `is_error` set, which the model sees; a high-risk command without an
approval raises `NeedsApproval`, which stops the workflow at the HIGH_RISK_APPROVAL_GATE.

Paths are repository-relative and confined to the repository. orch's own records
(plans/, memories/, NOTES.md, .orch/) and .git/ are read-only here: memories are written
through the memory tool, the task list through `tasks`.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from orchestrator.config import PolicyConfig
from orchestrator.engine import faults, shell, tasklist
from orchestrator.engine.enums import ApprovalKind, Decision, Gate, SafetyCheck, WorkflowState
from orchestrator.engine.exceptions import NeedsApproval
from orchestrator.engine.payloads import Diagnosis, GateEvent
from orchestrator.engine.vcs import ProjectRepo
from orchestrator.errors import OrchError
from orchestrator.events.keys import load_key
from orchestrator.messages import ToolCall, ToolResult, ToolSpec
from orchestrator.store.fs import atomic_write, confine, readable

Handler = Callable[[dict[str, Any]], str]  # a tool: its input -> the text the model sees
MAX_LIST = 500
MAX_READ_LINES = 2000
MAX_MATCHES = 200


class ToolFailed(Exception):
    """A tool's own failure: its message goes back to the model as an error result."""


class MemoryHandler(Protocol):
    """The model layer's `MemoryToolHandler` (docs/seams.md)."""

    def spec(self) -> ToolSpec: ...

    def execute(self, command: dict[str, Any]) -> str: ...


def _schema(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


_STR = {"type": "string"}
_INT = {"type": "integer"}

READ_SPECS = [
    ToolSpec(
        "list_files",
        "List the repository's files (tracked and untracked, minus git-ignored ones) under "
        "a folder, optionally filtered by a glob such as '*.py'.",
        _schema({"path": _STR, "glob": _STR}, []),
    ),
    ToolSpec(
        "read_file",
        "Read a text file with line numbers. `offset` is the first line (1-based), "
        "`limit` the number of lines.",
        _schema({"path": _STR, "offset": _INT, "limit": _INT}, ["path"]),
    ),
    ToolSpec(
        "search",
        "Search file contents with a Python regular expression; prints path:line: text. "
        "`path` limits the search to a folder or file, `glob` to file names.",
        _schema(
            {"pattern": _STR, "path": _STR, "glob": _STR, "ignore_case": {"type": "boolean"}},
            ["pattern"],
        ),
    ),
]

WRITE_SPECS = [
    ToolSpec(
        "write_file",
        "Create or replace a whole file with `content`.",
        _schema({"path": _STR, "content": _STR}, ["path", "content"]),
    ),
    ToolSpec(
        "edit_file",
        "Replace `old_string` with `new_string` in a file. `old_string` must occur exactly "
        "once unless `replace_all` is true.",
        _schema(
            {
                "path": _STR,
                "old_string": _STR,
                "new_string": _STR,
                "replace_all": {"type": "boolean"},
            },
            ["path", "old_string", "new_string"],
        ),
    ),
    ToolSpec(
        "run_shell",
        "Run a shell command in the repository root (time limit and output cap apply). "
        "Commands that delete files, force-push, rewrite history or touch paths outside "
        "the repository wait for a person's approval.",
        _schema({"command": _STR, "timeout": {"type": "number"}}, ["command"]),
    ),
    ToolSpec(
        "tasks",
        "Your task list, kept on disk. op=add (title, blockedBy: [ids]), op=update (id, "
        "status: pending|in_progress|completed|cancelled, notes), op=list. One item is in "
        "progress at a time; an item cannot start before the items blocking it are done.",
        _schema(
            {
                "op": {"enum": ["add", "update", "list"]},
                "title": _STR,
                "id": _STR,
                "status": {"enum": list(tasklist.STATUSES)},
                "blockedBy": {"type": "array", "items": _STR},
                "notes": _STR,
            },
            ["op"],
        ),
    ),
]


class ReadOnlyTools:
    def __init__(self, repo: ProjectRepo, *, output_cap: int = 20_000) -> None:
        self.repo = repo
        self.root = repo.layout.root
        self.output_cap = output_cap

    # the ToolSet protocol -----------------------------------------------------------------
    def specs(self) -> list[ToolSpec]:
        return list(READ_SPECS)

    def handlers(self) -> dict[str, Handler]:
        """Each tool's function, by the tool's name."""
        return {
            "list_files": self._t_list_files,
            "read_file": self._t_read_file,
            "search": self._t_search,
        }

    def run(self, call: ToolCall) -> ToolResult:
        handler = self.handlers().get(call.name)
        if handler is None or call.name not in {s.name for s in self.specs()}:
            known = ", ".join(s.name for s in self.specs())
            return ToolResult(call.id, f"unknown tool {call.name!r} (tools: {known})", True)
        try:
            text = handler(dict(call.input))
        except (ToolFailed, OrchError) as exc:
            return ToolResult(call.id, str(exc), True)
        except (KeyError, TypeError, ValueError) as exc:
            return ToolResult(call.id, f"bad input for {call.name}: {exc}", True)
        except OSError as exc:
            return ToolResult(call.id, f"{call.name} failed: {exc.strerror or exc}", True)
        return ToolResult(call.id, shell.cap_output(text, self.output_cap))

    # helpers --------------------------------------------------------------------------------
    def _path(self, raw: Any) -> Path:
        if not isinstance(raw, str) or not raw.strip():
            raise ToolFailed("`path` must be a non-empty repository-relative path")
        return confine(self.root, raw.strip().removeprefix("./") or ".")

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root.resolve()).as_posix() if path.is_absolute() else str(path)

    def _files(self, under: str = ".") -> list[str]:
        out = self.repo._git(
            "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", under, strip=False
        )
        files = sorted({f for f in out.split("\0") if f})
        # what is there, links and FIFOs included: reading them is `readable`'s to refuse
        return [f for f in files if os.path.lexists(self.root / f) and not (self.root / f).is_dir()]

    def listing(self) -> str:
        """The repository's files, as `list_files` shows them (for a first prompt)."""
        return self._t_list_files({})

    # tools ---------------------------------------------------------------------------------
    def _t_list_files(self, args: dict[str, Any]) -> str:
        base = self._path(args.get("path") or ".")
        rel = "." if base == self.root.resolve() else self._rel(base)
        files = self._files(rel)
        glob = args.get("glob")
        if glob:
            files = [
                f
                for f in files
                if fnmatch.fnmatch(PurePosixPath(f).name, glob) or fnmatch.fnmatch(f, glob)
            ]
        if not files:
            return f"no files under {rel}" + (f" matching {glob}" if glob else "")
        shown = files[:MAX_LIST]
        more = f"\n[... {len(files) - MAX_LIST} more ...]" if len(files) > MAX_LIST else ""
        return "\n".join(shown) + more

    def _t_read_file(self, args: dict[str, Any]) -> str:
        path = self._path(args["path"])
        if not path.exists() and not path.is_symlink():
            raise ToolFailed(f"no file {args['path']!r}")
        why, _ = readable(self.root, path)
        if why is not None:
            raise ToolFailed(f"{args['path']}: {why}")
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            raise ToolFailed(f"{args['path']} is a binary file")
        lines = data.decode("utf-8", "replace").splitlines()
        start = max(1, int(args.get("offset") or 1))
        limit = min(MAX_READ_LINES, max(1, int(args.get("limit") or MAX_READ_LINES)))
        chunk = lines[start - 1 : start - 1 + limit]
        if not chunk:
            return f"{args['path']} has {len(lines)} lines; nothing at line {start}"
        body = "\n".join(f"{n:>6}\t{text}" for n, text in enumerate(chunk, start))
        end = start + len(chunk) - 1
        if end < len(lines):
            body += f"\n[lines {start}-{end} of {len(lines)}; use offset={end + 1} for more]"
        return body

    def _t_search(self, args: dict[str, Any]) -> str:
        try:
            rx = re.compile(str(args["pattern"]), re.IGNORECASE if args.get("ignore_case") else 0)
        except re.error as exc:
            raise ToolFailed(f"bad regular expression: {exc}") from None
        base = self._path(args.get("path") or ".")
        rel = "." if base == self.root.resolve() else self._rel(base)
        glob = args.get("glob")
        hits: list[str] = []
        skipped: list[str] = []
        for name in self._files(rel):
            if glob and not fnmatch.fnmatch(PurePosixPath(name).name, glob):
                continue
            why, _ = readable(self.root, self.root / name)
            if why is not None:
                skipped.append(f"[skipped {name}: {why}]")
                continue
            try:
                data = (self.root / name).read_bytes()
            except OSError:
                continue
            if b"\0" in data[:8192]:
                continue
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if rx.search(line):
                    hits.append(f"{name}:{number}: {line.strip()[:300]}")
                    if len(hits) >= MAX_MATCHES:
                        return "\n".join([*hits, *skipped, f"[stopped at {MAX_MATCHES} matches]"])
        return "\n".join([*(hits or ["no matches"]), *skipped])


class ExecutorTools(ReadOnlyTools):
    def __init__(
        self,
        repo: ProjectRepo,
        *,
        phase: int,
        trace_id: str,
        policy: PolicyConfig,
        approvals: dict[str, bool],
        tasklist_path: Path,
        memory: MemoryHandler | None = None,
        record_gate: Callable[[GateEvent], object] = lambda _gate: None,
    ) -> None:
        super().__init__(repo, output_cap=policy.shell_output_cap)
        self.phase = phase
        self.trace_id = trace_id
        self.policy = policy
        self.approvals = approvals
        self.tasklist_path = tasklist_path
        self.memory = memory
        self.record_gate = record_gate  # Journal.gate: a high-risk command that goes ahead
        self.sandbox = shell.sandbox_for(repo.layout, policy)

    def handlers(self) -> dict[str, Handler]:
        return {
            **super().handlers(),
            "write_file": self._t_write_file,
            "edit_file": self._t_edit_file,
            "run_shell": self._t_run_shell,
            "tasks": self._t_tasks,
        }

    def specs(self) -> list[ToolSpec]:
        specs = [*READ_SPECS, *WRITE_SPECS]
        if self.memory is not None:
            specs.append(self.memory.spec())
        return specs

    def run(self, call: ToolCall) -> ToolResult:
        if call.name == "memory" and self.memory is not None:
            try:
                return ToolResult(call.id, self.memory.execute(dict(call.input)))
            except Exception as exc:  # the handler's input errors go back to the model
                return ToolResult(call.id, f"memory: {exc}", True)
        return super().run(call)

    def _writable(self, raw: Any) -> Path:
        path = self._path(raw)
        rel = PurePosixPath(self._rel(path))
        protected = [*self.repo.own_paths(), ".git"]
        for own in protected:
            if rel == PurePosixPath(own) or PurePosixPath(own) in rel.parents:
                raise ToolFailed(
                    f"{rel} is one of orch's own records ({own}); it is not edited with file "
                    "tools (use the memory tool for memories, `tasks` for the task list)"
                )
        return path

    def _t_write_file(self, args: dict[str, Any]) -> str:
        path = self._writable(args["path"])
        content = args["content"]
        if not isinstance(content, str):
            raise ToolFailed("`content` must be a string")
        if path.is_dir():
            raise ToolFailed(f"{args['path']} is a folder")
        existed = path.exists()
        atomic_write(path, content)
        verb = "replaced" if existed else "created"
        return f"{verb} {self._rel(path)} ({len(content.encode('utf-8'))} bytes)"

    def _t_edit_file(self, args: dict[str, Any]) -> str:
        path = self._writable(args["path"])
        old, new = args["old_string"], args["new_string"]
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            raise ToolFailed("`old_string` (non-empty) and `new_string` must be strings")
        if not path.is_file():
            raise ToolFailed(f"no file {args['path']!r}")
        text = path.read_text(encoding="utf-8")
        count = text.count(old)
        if count == 0:
            raise ToolFailed(f"`old_string` does not occur in {args['path']}; read the file again")
        if count > 1 and not args.get("replace_all"):
            raise ToolFailed(
                f"`old_string` occurs {count} times in {args['path']}; give more context or "
                "set replace_all"
            )
        atomic_write(path, text.replace(old, new))
        return f"edited {self._rel(path)} ({count} replacement{'s' if count > 1 else ''})"

    def _t_run_shell(self, args: dict[str, Any]) -> str:
        command = str(args["command"]).strip()
        if not command:
            raise ToolFailed("`command` is empty")
        risk = shell.classify(command, self.root)
        if risk is not None:
            self._high_risk(command, risk)
        timeout = min(
            float(args.get("timeout") or self.policy.shell_timeout), self.policy.shell_timeout
        )
        result = shell.run_command(
            command,
            self.root,
            timeout=timeout,
            output_cap=self.policy.shell_output_cap,
            sandbox=self.sandbox,
            on_start=lambda: faults.point("shell.running"),
        )
        head = "timed out" if result.timed_out else f"exit code {result.exit_code}"
        text = f"{head}\n{result.output}".rstrip()
        if not result.ok:
            raise ToolFailed(text)
        return text

    def _high_risk(self, command: str, risk: shell.Risk) -> None:
        """Pass the HIGH_RISK_APPROVAL_GATE, or stop at it until a person answers."""

        def gate(decision: Decision, reason: str, next_action: str) -> GateEvent:
            return GateEvent(
                Gate.HIGH_RISK_APPROVAL_GATE,
                WorkflowState.ACTING,
                decision,
                reason,
                next_action,
                phase=self.phase,
                requires_human_approval=decision is not Decision.GO,
                safety_checks=(SafetyCheck.DESTRUCTIVE_ACTION, SafetyCheck.POLICY),
                diagnosis=Diagnosis(command=command, rule=risk.rule, detail=risk.detail),
            )

        key = approval_key(self.trace_id, self.phase, command)
        if shell.allowed(command, self.policy):
            reason = f"allowed by configuration (allow_high_risk): {risk.detail}"
        elif self.approvals.get(key) is True:
            reason = f"approved by a person: {risk.detail}"
        elif self.approvals.get(key) is False:
            raise ToolFailed(f"a person denied this command ({risk.detail}); do without it")
        else:
            raise NeedsApproval(
                ApprovalKind.HIGH_RISK,
                f"high-risk command needs approval ({risk.detail}): {command}",
                key=key,
                command=command,
                rule=risk.rule,
                phase=self.phase,
                gate=gate(
                    Decision.BLOCKED,
                    f"high-risk command ({risk.detail}): {command}",
                    "a person approves or denies it: orch approve",
                ),
            )
        self.record_gate(gate(Decision.GO, reason, "run the command"))

    def _t_tasks(self, args: dict[str, Any]) -> str:
        op = args.get("op")
        tasks = tasklist.load(self.tasklist_path)
        if op == "add":
            item = tasks.add(
                str(args.get("title", "")), phase=self.phase, blocked_by=args.get("blockedBy")
            )
            message = f"added item {item.id}"
        elif op == "update":
            item = tasks.set_status(
                str(args.get("id", "")), str(args.get("status", "")), args.get("notes")
            )
            message = f"item {item.id} is {item.status}"
        elif op == "list":
            message = "task list"
        else:
            raise ToolFailed("op must be add, update or list")
        if op != "list":
            tasklist.save(self.tasklist_path, tasks)
        return f"{message}\n{tasks.render(self.phase)}"


def approval_key(trace_id: str, phase: int, command: str) -> str:
    """An approval covers one exact command for the rest of its phase, in one task. It is
    an HMAC with orch's key, which nothing inside the sandbox can read: the agent cannot
    compute it."""
    key = load_key()
    assert key is not None  # load_key creates it or raises
    return key.approval(trace_id, phase, command)
