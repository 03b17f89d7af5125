"""`ContextManager`: keeps one phase's working context small without losing a turn.

Every turn (`prepare`): old tool results are masked, in batches (tier 1); when the
estimated prompt passes `compact_threshold_tokens`, every result but the newest round's
is masked at once if that brings it back under, and only otherwise are the older turns
summarised (tier 2). `compact` summarises on request (tier 3: the model's `compact`
tool, `orch compact SLUG`).

Nothing is lost: before a tool result is masked or a turn is dropped, the raw turns up to
it are appended to the open transcript (`transcripts/<n>.jsonl`, fsynced). A compaction
closes that transcript; the next turns go to a new one. Placeholders and the compaction
head name the turns they stand for, so a resumed process knows how far the raw turns are
already saved without reading the transcripts.

A compaction that fails (model error, empty, cut or unusable summary) leaves the
conversation as it was and is logged; `max_failed_compactions` of them in a row raise
`CompactionStalled`, which the engine turns into WAITING_APPROVAL.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Concatenate, ParamSpec, TypeVar

from orchestrator.config import ContextConfig
from orchestrator.context.assembly import MAX_L2_EPISODES, PromptParts
from orchestrator.context.compaction import (
    COMPACT_HEADER,
    ExecutorRequest,
    choose_cut,
    first_raw,
    head_message,
    previous_request,
    read_head,
    summary_problem,
    summary_turn,
)
from orchestrator.context.folding import Folder, FoldResult, episodes, summaries
from orchestrator.context.indexing import Indexer
from orchestrator.context.masking import fingerprint, mask_messages, masked_turn, rounds_to_mask
from orchestrator.context.render import prompt, render_turns
from orchestrator.context.semantic import load_items, ranked
from orchestrator.context.transcripts import (
    Segment,
    iter_lines,
    line_dict,
    relative_name,
    transcript_numbers,
)
from orchestrator.errors import ModelError, OrchError, UsageError
from orchestrator.events.log import EventLog, utc_ts
from orchestrator.messages import Message, Request, SystemPart, ToolSpec
from orchestrator.protocols import Model
from orchestrator.store.tasks import TaskFolder
from orchestrator.tokens import estimate_message

AGENT = "Compactor"
FOLDING = ("episodic", "cascading")
SUMMARY_TOKENS = 2048
COMPACT_TOOL = "compact"


def compact_tool_spec() -> ToolSpec:
    """The `compact` tool the executor is offered (what `ContextManager.compact_tool_spec`
    returns; a function so that docs/scripted-model.md can list it without a task)."""
    return ToolSpec(
        COMPACT_TOOL,
        "Compact your working context. The earlier turns of this conversation are saved "
        "to the task's transcripts and replaced by a structured summary (task overview, "
        "current state, important discoveries, next steps, context to preserve); the "
        "repository rules, the phase card and the user's last instruction are kept "
        "word for word, and so are your most recent turns. Use it when the early turns "
        "are no longer needed verbatim.",
        {
            "type": "object",
            "properties": {
                "reason": {
                    "type": "string",
                    "description": "Why compact now, in a few words.",
                }
            },
            "additionalProperties": False,
        },
    )


class CompactionStalled(OrchError):
    """Compaction failed `max_failed_compactions` times in a row: a human must decide.

    `event_type` and `payload` are the event the engine logs before it goes to
    WAITING_APPROVAL.
    """

    event_type = "error"

    def __init__(self, failures: Sequence[str], phase: int | None) -> None:
        self.failures = list(failures)
        self.phase = phase
        self.payload: dict[str, Any] = {
            "kind": "compaction_stalled",
            "detail": f"{len(self.failures)} compactions failed in a row; "
            f"last: {self.failures[-1] if self.failures else 'unknown'}",
            "failures": self.failures,
        }
        super().__init__(
            f"context compaction failed {len(self.failures)} times in a row "
            f"(last: {self.failures[-1] if self.failures else 'unknown'})"
        )


@dataclass(frozen=True)
class CompactionResult:
    messages: list[Message]
    kind: str  # auto | tool | manual
    outcome: str  # ok | failed | nothing
    tokens_before: int
    tokens_after: int
    reason: str
    transcript: str | None = None
    turns: tuple[int, int] | None = None  # raw turns dropped by this compaction
    error: str | None = None
    folds: tuple[FoldResult, ...] = field(default=())


def failures_in_row(log: EventLog) -> list[str]:
    """Errors of the compactions that failed since the last success or state change."""
    failures: list[str] = []
    for event in log.read().events:
        if event.event_type == "state_change":
            failures = []
        elif event.event_type == "compaction" and event.payload.get("kind") != "fold":
            outcome = event.payload.get("outcome")
            if outcome == "ok":
                failures = []
            elif outcome == "failed":
                failures.append(str(event.payload.get("error", "unknown")))
    return failures


P = ParamSpec("P")
R = TypeVar("R")


def _indexed(
    method: Callable[Concatenate[ContextManager, P], R],
) -> Callable[Concatenate[ContextManager, P], R]:
    """Hand the files a call wrote to the search index when it ends, however it ends."""

    @functools.wraps(method)
    def wrapper(self: ContextManager, *args: P.args, **kw: P.kwargs) -> R:
        try:
            return method(self, *args, **kw)
        finally:
            self.indexer.flush()

    return wrapper


def _tokens(messages: Sequence[Message]) -> int:
    return sum(estimate_message(m) for m in messages)


class ContextManager:
    def __init__(
        self,
        task: TaskFolder,
        model: Model,
        config: ContextConfig,
        log: EventLog,
        *,
        rules: str,
        phase_card: str,
        compactor: Model | None = None,
    ) -> None:
        """`model` is the executor's; `compactor` summarises and folds (default: `model`)."""
        if config.folding not in FOLDING:
            raise UsageError(
                f"context.folding: {config.folding!r} is not one of {', '.join(FOLDING)}"
            )
        if config.compact_threshold_tokens <= 0:
            raise UsageError("context.compact_threshold_tokens must be above 0")
        self.task = task
        self.model = model
        self.compactor = compactor or model
        self.config = config
        self.log = log
        self.rules = rules
        self.phase_card = phase_card
        self.indexer = Indexer(task.layout)
        self.folder = Folder(task, self.compactor, config, log, self.indexer)
        self.last_result: CompactionResult | None = None
        self._failures = failures_in_row(log)
        self._segment: Segment | None = None
        self._saved_phase: int | None = None
        self._saved: dict[int, str] = {}  # turn -> transcript, for turns saved by this process
        self._last_saved: tuple[int | None, int, str] | None = None  # (phase, turn, fingerprint)

    # the seam ----------------------------------------------------------------------------
    @_indexed
    def prepare(
        self,
        messages: Sequence[Message],
        *,
        phase: int | None,
        last_instruction: str,
        system_tokens: int = 0,
        executor: ExecutorRequest | None = None,
    ) -> list[Message]:
        """The conversation to send, and to keep: masked, and compacted past the threshold.

        `system_tokens` is the estimate of the system prompt and tool definitions, so the
        threshold applies to the whole prompt. `executor` is the rest of the executor's
        request of this turn: a compaction on its model sends that request with a summary
        turn after `messages` (compaction.py).
        """
        self.last_result = None
        before = system_tokens + _tokens(self._masked_view(messages))
        if before <= self.config.compact_threshold_tokens:
            return self._mask(messages, phase)
        # tier 1 first: masking every result but the newest round's may be enough
        pressed = system_tokens + _tokens(self._masked_view(messages, keep=1, batch=1))
        if pressed <= self.config.compact_threshold_tokens:
            return self._mask(messages, phase, keep=1, batch=1)
        result = self._compact(
            messages,
            phase=phase,
            last_instruction=last_instruction,
            kind="auto",
            reason=f"estimated prompt of {before} tokens passed the threshold of "
            f"{self.config.compact_threshold_tokens}",
            system_tokens=system_tokens,
            min_head=2,
            executor=executor,
        )
        return result.messages if result.outcome == "ok" else self._mask(messages, phase)

    @_indexed
    def compact(
        self,
        messages: Sequence[Message],
        *,
        phase: int | None,
        last_instruction: str,
        reason: str,
        kind: str = "tool",
        system_tokens: int = 0,
        executor: ExecutorRequest | None = None,
    ) -> list[Message]:
        """Compact now (the `compact` tool, or `orch compact` with kind="manual").

        `last_result` says what happened: ok, failed or nothing (too few turns to compact);
        unless ok, the messages come back as they were and nothing was written but the event.
        `executor` as for `prepare`.
        """
        result = self._compact(
            messages,
            phase=phase,
            last_instruction=last_instruction,
            kind=kind,
            reason=reason,
            system_tokens=system_tokens,
            min_head=1,
            executor=executor,
        )
        return result.messages

    def compact_tool_spec(self) -> ToolSpec:
        return compact_tool_spec()

    @_indexed
    def close_phase(self, messages: Sequence[Message], *, phase: int | None) -> list[FoldResult]:
        """At a phase's end: save the remaining raw turns and fold what is not folded yet."""
        start, _ = first_raw(messages)
        if len(messages) > start:
            self._save_through(messages, phase, len(messages) - 1)
        self._segment = None
        return self.folder.run(phase, None, force=True)

    def prompt_parts(
        self,
        *,
        base: str,
        tools: Sequence[ToolSpec] = (),
        memory_index: str = "",
        related: Sequence[str] = (),
        phase_card: str | None = None,
    ) -> PromptParts:
        """PromptParts with this task's L3 items and L2 digest read from disk."""
        return PromptParts(
            base=base,
            phase_card=self.phase_card if phase_card is None else phase_card,
            tools=tuple(tools),
            memory_index=memory_index,
            l3=tuple(item.render() for item in ranked(load_items(self.task))),
            l2=tuple(l2_digest(self.task, self.config)),
            related=tuple(related),
        )

    # tier 1 --------------------------------------------------------------------------------
    @property
    def local_masking(self) -> bool:
        """False when the Anthropic model clears old tool results server-side instead: the
        setting is on and the adapter sends the edit for this model."""
        kind, _, model_id = self.model.name.partition(":")
        if not self.config.server_context_editing or kind != "anthropic":
            return True
        # the SDK is already loaded when the model is an Anthropic one
        from orchestrator.models.anthropic_adapter import CONTEXT_EDITING_MODELS, supports

        return not supports(model_id, CONTEXT_EDITING_MODELS)

    def _masked_view(
        self, messages: Sequence[Message], *, keep: int | None = None, batch: int | None = None
    ) -> list[Message]:
        """What masking would send, without saving anything (for measuring); `keep` and
        `batch` default to `mask_keep_rounds` and `mask_batch_rounds`."""
        if not self.local_masking:
            return list(messages)
        start, base = first_raw(messages)
        segment = self._segment.name if self._segment else None
        where = segment or relative_name((transcript_numbers(self.task) or [0])[-1] + 1)
        return mask_messages(
            messages,
            self.config.mask_keep_rounds if keep is None else keep,
            lambda pos: pos + base - start,
            lambda pos: self._saved.get(pos + base - start, where),
            self.config.mask_batch_rounds if batch is None else batch,
        )

    def _mask(
        self,
        messages: Sequence[Message],
        phase: int | None,
        *,
        keep: int | None = None,
        batch: int | None = None,
    ) -> list[Message]:
        """Mask old tool results, after saving the raw turns they are in (`keep`, `batch`
        as for `_masked_view`)."""
        if not self.local_masking:
            return list(messages)
        keep = self.config.mask_keep_rounds if keep is None else keep
        batch = self.config.mask_batch_rounds if batch is None else batch
        targets = rounds_to_mask(messages, keep, batch)
        if not targets:
            return list(messages)
        self._save_through(messages, phase, max(targets))
        start, base = first_raw(messages)
        shift = base - start
        return mask_messages(
            messages,
            keep,
            turn_of=lambda pos: pos + shift,
            where=lambda pos: self._saved.get(pos + shift),
            batch=batch,
        )

    # transcripts -----------------------------------------------------------------------------
    def _saved_through(self, messages: Sequence[Message], phase: int | None, shift: int) -> int:
        """The last turn of `messages` whose raw form is known to be on disk (-1: none)."""
        done = -1
        head = read_head(messages)
        if head:
            done = head.last_turn
        for message in messages:
            for result in message.tool_results:
                turn = masked_turn(result)
                if turn is not None:
                    done = max(done, turn)
        if self._last_saved and self._last_saved[0] == phase:
            _, turn, print_ = self._last_saved
            pos = turn - shift
            if 0 <= pos < len(messages) and fingerprint(messages[pos]) == print_:
                done = max(done, turn)
        return done

    def _save_through(self, messages: Sequence[Message], phase: int | None, last_pos: int) -> None:
        """Append the raw messages up to `last_pos` not yet on disk to the open transcript."""
        start, base = first_raw(messages)
        shift = base - start
        first_pos = max(start, self._saved_through(messages, phase, shift) - shift + 1)
        if first_pos > last_pos:
            return
        if phase != self._saved_phase:
            self._saved, self._saved_phase, self._segment = {}, phase, None
        if self._segment is None:
            self._segment = Segment.open_new(self.task, phase)
        segment = self._segment
        now = utc_ts()
        lines = [
            line_dict(phase, pos + shift, messages[pos], now)
            for pos in range(first_pos, last_pos + 1)
        ]
        segment.append(lines)
        for pos in range(first_pos, last_pos + 1):
            self._saved[pos + shift] = segment.name
        self._last_saved = (phase, last_pos + shift, fingerprint(messages[last_pos]))
        self.indexer.written(segment.path)

    def _where(self, phase: int | None, turn: int) -> str | None:
        if self._saved_phase == phase and turn in self._saved:
            return self._saved[turn]
        found = None
        for entry in iter_lines(self.task):
            if entry.phase == phase and entry.turn == turn:
                found = entry.file
        return found

    # tier 2 and 3 ----------------------------------------------------------------------------
    def _compact(
        self,
        messages: Sequence[Message],
        *,
        phase: int | None,
        last_instruction: str,
        kind: str,
        reason: str,
        system_tokens: int,
        min_head: int,
        executor: ExecutorRequest | None = None,
    ) -> CompactionResult:
        """Summarise the older turns of `messages`; on success save them, then drop them.

        The cut and the token figures are taken on the masked view (what would be sent);
        the compactor reads the turns as the caller holds them. Nothing is written before
        the summary is known to be usable, so a failure leaves no trace but its event.
        """
        view = self._masked_view(messages)
        before = system_tokens + _tokens(view)
        unchanged = list(messages)
        cut = choose_cut(
            view,
            keep_turns=self.config.keep_recent_turns,
            max_tail_tokens=self.config.compact_threshold_tokens // 2,
            min_head=min_head,
        )
        if cut is None:
            result = CompactionResult(unchanged, kind, "nothing", before, before, reason)
            if kind != "auto":
                self._event(result, phase)
            self.last_result = result
            return result
        start, base = first_raw(messages)
        shift = base - start
        head = read_head(messages)
        first_turn, last_turn = base, cut - 1 + shift
        request = self._compactor_request(messages, cut, phase, executor)
        try:
            reply = self.compactor.complete(request)
            problem = summary_problem(reply)
        except ModelError as exc:
            problem = f"model error ({exc.failure_class}): {exc.message}"
        if problem is not None:
            return self._failed(
                unchanged, kind, reason, before, problem, phase, (first_turn, last_turn)
            )

        # The raw turns reach the disk before anything is dropped.
        self._save_through(messages, phase, cut - 1)
        transcript = self._where(phase, last_turn) or (head.transcript if head else None)
        self._segment = None  # this compaction closes the transcript
        compacted = [
            head_message(
                reply.text,
                compactions=(head.compactions if head else 0) + 1,
                first_turn=head.first_turn if head else first_turn,
                last_turn=last_turn,
                transcript=transcript or "",
                rules=self.rules,
                phase_card=self.phase_card,
                last_instruction=last_instruction,
            ),
            *messages[cut:],
        ]
        new = self._mask(compacted, phase)
        self._failures = []
        result = CompactionResult(
            new,
            kind,
            "ok",
            before,
            system_tokens + _tokens(new),
            reason,
            transcript,
            (first_turn, last_turn),
        )
        self._event(result, phase, messages_before=len(messages), messages_after=len(new))
        folds = tuple(
            self.folder.run(
                phase, last_turn, executor=executor, conversation=previous_request(messages)
            )
        )
        result = replace(result, folds=folds)
        self.last_result = result
        return result

    def _compactor_request(
        self,
        messages: Sequence[Message],
        cut: int,
        phase: int | None,
        executor: ExecutorRequest | None,
    ) -> Request:
        """The executor's request with a summary turn after it when the compactor is the
        executor's model (its conversation is then read from the cache); else the turns as
        text under the compactor's own system prompt."""
        start, base = first_raw(messages)
        shift = base - start
        if executor is not None and executor.model == self.compactor.name:
            return Request(
                system=list(executor.system),
                messages=summary_turn(
                    previous_request(messages),
                    cut,
                    first_turn=base,
                    last_turn=cut - 1 + shift,
                    volatile=executor.volatile,
                ),
                tools=list(executor.tools),
                purpose="compactor",
                phase=phase,
                max_tokens=SUMMARY_TOKENS,
            )
        return Request(
            system=[SystemPart(prompt("compactor"), label="compactor")],
            messages=[Message.user(self._compactor_input(messages, start, cut, shift, phase))],
            purpose="compactor",
            phase=phase,
            max_tokens=SUMMARY_TOKENS,
        )

    def _compactor_input(
        self, messages: Sequence[Message], start: int, cut: int, shift: int, phase: int | None
    ) -> str:
        head = read_head(messages)
        parts = [
            f"{COMPACT_HEADER} (task {self.task.slug}, phase {phase}, turns "
            f"{start + shift}-{cut - 1 + shift})."
        ]
        if head:
            parts.append(f"<previous-summary>\n{head.summary}\n</previous-summary>")
        turns = render_turns((pos + shift, messages[pos]) for pos in range(start, cut))
        parts.append(f"<turns>\n{turns}\n</turns>")
        return "\n\n".join(parts)

    def _failed(
        self,
        unchanged: list[Message],
        kind: str,
        reason: str,
        before: int,
        error: str,
        phase: int | None,
        turns: tuple[int, int],
    ) -> CompactionResult:
        self._failures.append(error)
        result = CompactionResult(
            unchanged, kind, "failed", before, before, reason, turns=turns, error=error
        )
        self._event(result, phase)
        self.last_result = result
        if len(self._failures) >= self.config.max_failed_compactions:
            raise CompactionStalled(self._failures, phase)
        return result

    def _event(self, result: CompactionResult, phase: int | None, **extra: Any) -> None:
        payload: dict[str, Any] = {
            "kind": result.kind,
            "outcome": result.outcome,
            "reason": result.reason,
            "tokens_before": result.tokens_before,
            "tokens_after": result.tokens_after,
            "threshold": self.config.compact_threshold_tokens,
            **extra,
        }
        if result.transcript:
            payload["transcript"] = result.transcript
        if result.turns:
            payload["turns"] = {"first": result.turns[0], "last": result.turns[1]}
        if result.error:
            payload["error"] = result.error
            payload["failures_in_row"] = len(self._failures)
        self.log.append("compaction", payload, agent=AGENT, phase=phase)


def l2_digest(task: TaskFolder, config: ContextConfig) -> list[str]:
    """The L2 part of the prompt, oldest first: the newest episodes, or with cascading
    folding the latest long-term summary and the latest short-term summary."""
    if config.folding == "cascading":
        out = []
        longs = summaries(task, "long")
        if longs:
            out.append(f"Long-term summary ({longs[-1]['id']}):\n{longs[-1]['text']}")
        shorts = summaries(task, "short")
        if shorts:
            out.append(_episode_digest(shorts[-1], "Short-term summary"))
        return out
    return [_episode_digest(e, "Episode") for e in episodes(task)[-MAX_L2_EPISODES:]]


def _episode_digest(data: dict[str, Any], label: str) -> str:
    turns = data["turns"]
    lines = [
        f"{label} {data['id']} (phase {data.get('phase')}, turns {turns['first']}-{turns['last']}): {data['summary']}"
    ]
    lines += [
        f"  decided: {d['decision']} (because {d['reason']})" for d in data.get("decisions", [])
    ]
    lines += [f"  ruled out: {e['approach']} ({e['why']})" for e in data.get("eliminated", [])]
    lines += [f"  open: {q}" for q in data.get("open_questions", [])]
    return "\n".join(lines)
