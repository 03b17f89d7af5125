"""Folded memory: raw turns (L1, in transcripts) -> L2 episodes -> L3 semantic memory.

Folding runs when a compaction has moved at least `fold_every_turns` transcribed turns out
of the window (or at the end of a phase), never every turn. The turns are read back from
the transcripts, so each episode records exactly which lines (and byte offsets) it came
from.

- `episodic` (default): one model call makes an episode `episodes/ep-<n>.json` (summary,
  decisions with reasons, eliminated approaches with why, open questions, tool results worth
  keeping, the durable facts it offers to L3 under `l3`, patterns, turn range, transcript
  sources); its facts, decisions, eliminated approaches and patterns are merged into L3
  (`l3.json`). The folding prompt asks for the facts as `facts`; the record keeps them
  under `l3`, where Checklist C also looks for candidates.
- `cascading`: the same call makes a short-term summary `summaries/short-<n>.json` of the
  turns just outside the window; the short-term summary it replaces is then folded into the
  long-term summary by a second call. Every version is kept with its timestamp
  (`summaries/long-versions/long-<n>.json`; the newest also as `summaries/long.json`, the
  only long-term version the search index holds, so old versions do not crowd its
  results). L3 is merged from the short-term summaries the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.checks.secrets import redact_data
from orchestrator.config import ContextConfig
from orchestrator.context.compaction import (
    ExecutorRequest,
    ask_turn,
    before_last,
    first_raw,
    read_head,
)
from orchestrator.context.indexing import Indexer, episode_text
from orchestrator.context.render import prompt, render_turns
from orchestrator.context.semantic import Candidate, MergeReport, merge_into_task
from orchestrator.context.transcripts import TranscriptLine, iter_lines
from orchestrator.errors import ModelError
from orchestrator.events.log import EventLog, utc_ts
from orchestrator.messages import Message, Request, SystemPart
from orchestrator.protocols import Model
from orchestrator.schemas import errors
from orchestrator.store.fs import atomic_write
from orchestrator.store.tasks import TaskFolder
from orchestrator.tokens import estimate_message, estimate_text

AGENT = "Compactor"
FOLD_TOKENS = 4096
LONG_TOKENS = 2048
MIN_FOLD_LINES = 2  # a phase's remainder is folded at its end only if it holds an exchange
FOLD_HEADER = "Turns to fold"
LONG_HEADER = "Fold into the long-term summary"
LONG_VERSIONS = "long-versions"
_ID = re.compile(r"^(ep|short|long)-(\d+)\.json$")


@dataclass(frozen=True)
class FoldResult:
    id: str  # ep-0003 or short-0003
    path: Path
    phase: int | None
    turns: tuple[int, int]
    long_id: str | None = None
    l3: MergeReport = field(default_factory=MergeReport)


class FoldError(ValueError):
    """A folding reply that cannot be used."""


def parse_fold_reply(text: str) -> dict[str, Any]:
    """The JSON object in a folding reply, normalised; FoldError says what is wrong."""
    body = text.strip()
    fence = re.match(r"^```(?:json)?\s*\n(.*)\n```$", body, re.DOTALL)
    if fence:
        body = fence[1]
    start, end = body.find("{"), body.rfind("}")
    if start == -1 or end < start:
        raise FoldError("the folding reply holds no JSON object")
    try:
        raw = json.loads(body[start : end + 1])
    except json.JSONDecodeError as exc:
        raise FoldError(f"the folding reply is not valid JSON ({exc.msg})") from None
    if not isinstance(raw, dict):
        raise FoldError("the folding reply is not a JSON object")
    summary = raw.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        raise FoldError("the folding reply has no summary")

    def items(key: str, needs: tuple[str, ...], optional: tuple[str, ...] = ()) -> list[Any]:
        out = []
        for entry in raw.get(key) or []:
            if isinstance(entry, dict) and all(
                isinstance(entry.get(k), str) and entry[k].strip() for k in needs
            ):
                kept = {k: entry[k].strip() for k in needs}
                for k in optional:
                    if isinstance(entry.get(k), str) and entry[k].strip():
                        kept[k] = entry[k].strip()
                if isinstance(entry.get("citations"), list):
                    kept["citations"] = [
                        {k: c[k] for k in ("path", "line", "symbol") if k in c}
                        for c in entry["citations"]
                        if isinstance(c, dict) and isinstance(c.get("path"), str)
                    ]
                out.append(kept)
        return out

    return {
        "summary": summary.strip(),
        "decisions": items("decisions", ("decision", "reason"), ("subject",)),
        "eliminated": items("eliminated", ("approach", "why"), ("subject",)),
        "open_questions": [
            q.strip() for q in raw.get("open_questions") or [] if isinstance(q, str) and q.strip()
        ],
        "tool_results": items("tool_results", ("tool", "input", "result")),
        "l3": items("facts", ("subject", "fact"), ("reason",))
        + items("l3", ("subject", "fact"), ("reason",)),
        "patterns": items("patterns", ("subject", "pattern"), ("reason",)),
    }


def candidates(body: dict[str, Any]) -> list[Candidate]:
    """The L3 candidates an episode (or short-term summary) carries."""

    def subject_of(entry: dict[str, Any], text: str) -> str:
        return entry.get("subject") or " ".join(text.split()[:8])

    found = [
        Candidate(
            "fact",
            f["subject"],
            f["fact"],
            f.get("reason"),
            tuple(f.get("citations", ())),
        )
        for f in body["l3"]
    ]
    found += [
        Candidate("decision", subject_of(d, d["decision"]), d["decision"], d["reason"])
        for d in body["decisions"]
    ]
    found += [
        Candidate("eliminated", subject_of(e, e["approach"]), e["approach"], e["why"])
        for e in body["eliminated"]
    ]
    found += [
        Candidate("pattern", p["subject"], p["pattern"], p.get("reason")) for p in body["patterns"]
    ]
    return found


def sources_of(lines: Sequence[TranscriptLine]) -> list[dict[str, Any]]:
    """Contiguous runs of lines per transcript file, with line numbers and byte offsets."""
    runs: list[dict[str, Any]] = []
    for entry in lines:
        last = runs[-1] if runs else None
        if last and last["transcript"] == entry.file and last["last_line"] + 1 == entry.line:
            last.update(last_line=entry.line, byte_end=entry.byte_end, last_turn=entry.turn)
            continue
        runs.append(
            {
                "transcript": entry.file,
                "first_line": entry.line,
                "last_line": entry.line,
                "byte_start": entry.byte_start,
                "byte_end": entry.byte_end,
                "first_turn": entry.turn,
                "last_turn": entry.turn,
            }
        )
    return runs


def fold_request(
    slug: str,
    lines: Sequence[TranscriptLine],
    executor: ExecutorRequest | None = None,
    conversation: Sequence[Message] = (),
) -> Request:
    """The request that folds `lines` (one phase's, in order).

    With the executor's request of this turn (`executor`, same model) and the messages it
    held (`conversation`), the turns still in that conversation are not written out: the
    request is the executor's again with one more user turn (`ask_turn`) naming them and
    carrying the folding instructions, so all of the conversation is a cache read. Lines
    from before the conversation's first raw turn (earlier compactions dropped them) are
    written out in that turn. Without it, or when no line is in the conversation, the
    turns go as text under the folding prompt; so they do when the lines start after the
    conversation's first raw turn (the ask could not say where in it they begin).
    """
    phase = lines[0].phase
    first, last = lines[0].turn, lines[-1].turn
    start, base = first_raw(conversation)
    end = base + len(conversation) - start - 1  # the raw turn of the last message
    if executor is None or not first <= base <= last <= end:
        return Request(
            system=[SystemPart(prompt("folding"), label="folding")],
            messages=[
                Message.user(
                    f"{FOLD_HEADER} (task {slug}, phase {phase}, turns {first}-{last}).\n\n"
                    f"<turns>\n{render_turns((e.turn, e.message) for e in lines)}\n</turns>"
                )
            ],
            purpose="compactor",
            phase=phase,
            max_tokens=FOLD_TOKENS,
        )
    kept = sum(1 for m in conversation[last - base + start + 1 :] if m.role == "assistant")
    earlier = [e for e in lines if e.turn < base]
    where = before_last(kept) + (
        ", after the summary it starts with" if read_head(conversation) else ""
    )
    if earlier:
        where = (
            f"the turns {earlier[0].turn}-{earlier[-1].turn}, which already left this "
            f"conversation and are written out below, then {where}"
        )
    ask = (
        f"{FOLD_HEADER}: raw turns {first}-{last} of phase {phase}: {where}.\n\n"
        f"{prompt('fold_turn').strip()}\n\n<folding-instructions>\n"
        f"{prompt('folding').strip()}\n</folding-instructions>"
    )
    if earlier:
        turns = render_turns((e.turn, e.message) for e in earlier)
        ask += f"\n\n<turns>\n{turns}\n</turns>"
    return Request(
        system=list(executor.system),
        messages=ask_turn(conversation, ask, executor.volatile),
        tools=list(executor.tools),
        purpose="compactor",
        phase=phase,
        max_tokens=FOLD_TOKENS,
    )


def _ids(folder: Path, prefix: str) -> list[int]:
    if not folder.is_dir():
        return []
    found = (_ID.match(p.name) for p in folder.iterdir())
    return sorted(int(m[2]) for m in found if m and m[1] == prefix)


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _write_record(path: Path, schema: str, data: dict[str, Any]) -> None:
    problems = errors(schema, data)
    if problems:
        raise FoldError(f"{path.name} would fail its schema: {problems[0]}")
    atomic_write(path, json.dumps(redact_data(data), indent=2, ensure_ascii=False) + "\n")


def episodes(task: TaskFolder) -> list[dict[str, Any]]:
    """Every episode of the task, oldest first."""
    return [_load(task.episodes / f"ep-{n:04d}.json") for n in _ids(task.episodes, "ep")]


def _folder(task: TaskFolder, kind: str) -> Path:
    """Short-term summaries lie in `summaries/`; long-term versions in `summaries/long-versions/`
    with a copy of the newest as `summaries/long.json`, so the search index holds one
    long-term summary, not every version of it."""
    return task.summaries / LONG_VERSIONS if kind == "long" else task.summaries


def summaries(task: TaskFolder, kind: str) -> list[dict[str, Any]]:
    """Every cascading summary version of `kind` (short | long), oldest first."""
    folder = _folder(task, kind)
    return [_load(folder / f"{kind}-{n:04d}.json") for n in _ids(folder, kind)]


def fold_pointer(task: TaskFolder) -> tuple[int, int]:
    """(transcript number, line) of the last line already folded; (0, 0) when none is."""
    pointer = (0, 0)
    for record in [*episodes(task), *summaries(task, "short")]:
        for source in record.get("sources", []):
            number = int(Path(source["transcript"]).stem)
            pointer = max(pointer, (number, int(source["last_line"])))
    return pointer


class Folder:
    """Folds transcribed turns into L2 (episodes or cascading summaries) and L3."""

    def __init__(
        self,
        task: TaskFolder,
        model: Model,
        config: ContextConfig,
        log: EventLog,
        indexer: Indexer,
    ) -> None:
        self.task = task
        self.model = model
        self.config = config
        self.log = log
        self.indexer = indexer

    def due(
        self, phase: int | None, through_turn: int | None, *, force: bool
    ) -> list[list[TranscriptLine]]:
        """Groups of unfolded lines to fold now, one per phase, in transcript order.

        Lines of `phase` past `through_turn` are still in the window and wait. Lines left
        over from an earlier phase are folded whatever their number; the current phase's
        only once there are `fold_every_turns` of them (or `force`, at the phase's end).
        """
        groups: list[list[TranscriptLine]] = []
        for entry in iter_lines(self.task, after=fold_pointer(self.task)):
            if entry.phase == phase and through_turn is not None and entry.turn > through_turn:
                break
            if groups and groups[-1][-1].phase == entry.phase:
                groups[-1].append(entry)
            else:
                groups.append([entry])
        ready = []
        for group in groups:
            current = group[0].phase == phase
            enough = len(group) >= max(1, self.config.fold_every_turns)
            if current and not enough and not (force and len(group) >= MIN_FOLD_LINES):
                break
            ready.append(group)
        return ready

    def run(
        self,
        phase: int | None,
        through_turn: int | None,
        *,
        force: bool = False,
        executor: ExecutorRequest | None = None,
        conversation: Sequence[Message] = (),
    ) -> list[FoldResult]:
        """Fold what is due. `executor` and `conversation`: the executor's request of this
        turn and the messages it held (phase `phase`); a fold on that model sends them
        again with a fold turn after them, so the turns still in the conversation are read
        from the prompt cache instead of being written out (`fold_request`)."""
        results = []
        for group in self.due(phase, through_turn, force=force):
            same = executor is not None and executor.model == self.model.name
            cached = executor if same and group[0].phase == phase else None
            result = self._fold(group, fold_request(self.task.slug, group, cached, conversation))
            if result is None:
                break  # logged; the same lines are tried again at the next fold point
            results.append(result)
        return results

    # one fold ----------------------------------------------------------------------------
    def _fold(self, lines: list[TranscriptLine], request: Request) -> FoldResult | None:
        phase = lines[0].phase
        turns = (lines[0].turn, lines[-1].turn)
        cascading = self.config.folding == "cascading"
        try:
            reply = self.model.complete(request)
            if reply.stop_reason == "max_tokens":
                raise FoldError("the folding reply was cut off at max_tokens")
            body = parse_fold_reply(reply.text)
            if cascading:
                record_id, path, data = self._write_short(body, lines)
            else:
                record_id, path, data = self._write_episode(body, lines)
        except (ModelError, FoldError) as exc:
            detail = (
                f"model error ({exc.failure_class}): {exc.message}"
                if isinstance(exc, ModelError)
                else str(exc)
            )
            self._event(
                {
                    "outcome": "failed",
                    "error": detail,
                    "turns": {"first": turns[0], "last": turns[1]},
                },
                phase,
            )
            return None
        _, report = merge_into_task(self.task, candidates(body), record_id)
        if report.added or report.updated:
            self.indexer.written(self.task.l3)
        long_id = self._fold_long() if cascading else None
        self._event(
            {
                "outcome": "ok",
                "tokens_before": sum(estimate_message(e.message) for e in lines),
                "tokens_after": estimate_text(episode_text(data)),
                "turns": {"first": turns[0], "last": turns[1]},
                "transcript": lines[-1].file,
                "record": record_id,
                "long": long_id,
                "l3": {"added": len(report.added), "updated": len(report.updated)},
            },
            phase,
        )
        return FoldResult(record_id, path, phase, turns, long_id, report)

    def _record(
        self, body: dict[str, Any], lines: list[TranscriptLine], **head: Any
    ) -> dict[str, Any]:
        return {
            "v": 1,
            **head,
            "task": self.task.slug,
            "phase": lines[0].phase,
            "created": utc_ts(),
            **body,
            "turns": {"first": lines[0].turn, "last": lines[-1].turn},
            "sources": sources_of(lines),
        }

    def _write_episode(
        self, body: dict[str, Any], lines: list[TranscriptLine]
    ) -> tuple[str, Path, dict[str, Any]]:
        number = (_ids(self.task.episodes, "ep") or [0])[-1] + 1
        record_id = f"ep-{number:04d}"
        data = self._record(body, lines, id=record_id)
        path = self.task.episodes / f"{record_id}.json"
        _write_record(path, "episode", data)
        self.indexer.written(path)
        return record_id, path, data

    def _write_short(
        self, body: dict[str, Any], lines: list[TranscriptLine]
    ) -> tuple[str, Path, dict[str, Any]]:
        number = (_ids(self.task.summaries, "short") or [0])[-1] + 1
        record_id = f"short-{number:04d}"
        data = self._record(body, lines, kind="short", id=record_id, version=number)
        path = self.task.summaries / f"{record_id}.json"
        _write_record(path, "summary", data)
        self.indexer.written(path)
        return record_id, path, data

    def _fold_long(self) -> str | None:
        """Fold every short-term summary older than the newest into the long-term one."""
        shorts = summaries(self.task, "short")
        longs = summaries(self.task, "long")
        folded = set(longs[-1]["folded"]) if longs else set()
        made = None
        for short in shorts[:-1]:
            if short["id"] in folded:
                continue
            previous = longs[-1] if longs else None
            text = self._long_text(previous, short)
            if text is None:
                break
            versions = _folder(self.task, "long")
            number = (_ids(versions, "long") or [0])[-1] + 1
            long_id = f"long-{number:04d}"
            record: dict[str, Any] = {
                "v": 1,
                "kind": "long",
                "id": long_id,
                "version": number,
                "task": self.task.slug,
                "phase": short.get("phase"),
                "created": utc_ts(),
                "text": text,
                "folded": [*(previous["folded"] if previous else []), short["id"]],
                "previous": previous["id"] if previous else None,
            }
            _write_record(versions / f"{long_id}.json", "summary", record)
            current = self.task.summaries / "long.json"
            _write_record(current, "summary", record)
            self.indexer.written(current)
            longs.append(record)
            made = long_id
        return made

    def _long_text(self, previous: dict[str, Any] | None, short: dict[str, Any]) -> str | None:
        old = previous["text"] if previous else "(none yet)"
        request = Request(
            system=[SystemPart(prompt("cascade"), label="cascade")],
            messages=[
                Message.user(
                    f"{LONG_HEADER} (task {self.task.slug}).\n\n"
                    f"<long-term-summary>\n{old}\n</long-term-summary>\n\n"
                    f'<short-term-summary id="{short["id"]}" turns="{short["turns"]["first"]}-'
                    f'{short["turns"]["last"]}" phase="{short.get("phase")}">\n'
                    f"{episode_text(short)}\n</short-term-summary>"
                )
            ],
            purpose="compactor",
            phase=short.get("phase"),
            max_tokens=LONG_TOKENS,
        )
        try:
            reply = self.model.complete(request)
        except ModelError as exc:
            error = f"model error ({exc.failure_class}): {exc.message}"
        else:
            if reply.text.strip() and reply.stop_reason != "max_tokens":
                return reply.text.strip()
            error = "the long-term summary came back empty or cut off"
        self._event(
            {"outcome": "failed", "error": error, "record": short["id"]}, short.get("phase")
        )
        return None

    def _event(self, payload: dict[str, Any], phase: int | None) -> None:
        payload = {"kind": "fold", "folding": self.config.folding, **payload}
        self.log.append("compaction", payload, agent=AGENT, phase=phase)
