"""LoCoMo evidence recall@k of the search index: `python -m evals.locomo --data FILE [--json]`.

Each conversation's raw turns (speaker, text, session date, image caption: nothing else
from the file) go into a fresh index as transcripts of past sessions, turn `D3:7` as
transcript ref `<conversation>/3:7`, through the same `SearchIndex` orch searches its own
memory with. Each question is then the query. The metric is LoCoMo's own: for each
question, the first k distinct turns returned; recall@k = |evidence ∩ top-k| / |evidence|,
averaged over questions (overall, per category, per conversation). Evidence ids are
read with `D\\d+:\\d+`; a question left with none is skipped.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from evals.suite import emit_json, json_option, suite
from orchestrator.errors import UsageError
from orchestrator.retrieval import Doc, Ranking, SearchIndex
from orchestrator.retrieval.text import TOKENIZER
from orchestrator.store.layout import Layout

KS = (1, 5, 10, 20, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
DIA_ID = re.compile(r"D(\d+):(\d+)")
SESSION_KEY = re.compile(r"^session_(\d+)$")


@dataclass(frozen=True)
class Turn:
    session: int
    turn: int
    speaker: str
    text: str
    date: str
    caption: str | None = None


@dataclass(frozen=True)
class Question:
    text: str
    evidence: tuple[str, ...]  # dia ids, "D3:7"
    category: int


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


class NotLocomo(UsageError):
    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"not a LoCoMo file: {why}", path=path)


def load(path: Path) -> list[Conversation]:
    """The conversations of a LoCoMo JSON file (turns and questions only)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError("no such file", path=path) from None
    except IsADirectoryError:
        raise UsageError("is a folder, not a LoCoMo JSON file", path=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read it: {exc}", path=path) from None
    except ValueError as exc:
        raise NotLocomo(path, f"not JSON ({exc})") from None
    if not isinstance(raw, list) or not raw:
        raise NotLocomo(path, "expected a non-empty JSON list of conversations")
    return [_conversation(path, n, item) for n, item in enumerate(raw)]


def _conversation(path: Path, n: int, item: Any) -> Conversation:
    if not isinstance(item, dict):
        raise NotLocomo(path, f"item {n} is not an object")
    conv, qa = item.get("conversation"), item.get("qa")
    if not isinstance(conv, dict) or not isinstance(qa, list):
        raise NotLocomo(path, f"item {n} has no 'conversation' object and 'qa' list")
    sample_id = str(item.get("sample_id") or f"conversation-{n + 1}")
    turns: list[Turn] = []
    for key, value in conv.items():
        match = SESSION_KEY.match(key)
        if not match:
            continue
        if not isinstance(value, list):
            raise NotLocomo(path, f"{sample_id}: {key} is not a list of turns")
        date = conv.get(f"{key}_date_time")
        for turn in value:
            ids = DIA_ID.search(str(turn.get("dia_id", ""))) if isinstance(turn, dict) else None
            if not isinstance(turn, dict) or ids is None or not isinstance(turn.get("text"), str):
                raise NotLocomo(path, f"{sample_id}: {key} has a turn without dia_id and text")
            caption = turn.get("blip_caption")
            turns.append(
                Turn(
                    session=int(ids.group(1)),
                    turn=int(ids.group(2)),
                    speaker=str(turn.get("speaker", "")),
                    text=turn["text"],
                    date=date if isinstance(date, str) else "",
                    caption=caption if isinstance(caption, str) and caption else None,
                )
            )
    if not turns:
        raise NotLocomo(path, f"{sample_id}: the conversation has no session_N turns")
    questions = []
    for q in qa:
        if not isinstance(q, dict) or not isinstance(q.get("question"), str):
            raise NotLocomo(path, f"{sample_id}: a qa item has no question")
        evidence = tuple(
            dict.fromkeys(
                f"D{int(m.group(1))}:{int(m.group(2))}"
                for e in _as_list(q.get("evidence"))
                for m in DIA_ID.finditer(str(e))
            )
        )
        category = q.get("category")
        questions.append(
            Question(q["question"], evidence, category if isinstance(category, int) else 0)
        )
    return Conversation(sample_id, tuple(turns), tuple(questions))


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def turn_docs(conv: Conversation, slug: str) -> list[Doc]:
    """The turns as transcript documents: turn `D3:7` is ref `<slug>/3:7`."""
    docs = []
    for t in conv.turns:
        text = t.text if t.caption is None else f"{t.text}\n[image: {t.caption}]"
        docs.append(
            Doc(
                "transcript",
                f"{slug}/{t.session}:{t.turn}",
                text,
                {"title": t.speaker, "date": t.date},
            )
        )
    return docs


def dia_id(ref: str) -> str:
    _, _, place = ref.rpartition("/")
    session, _, turn = place.partition(":")
    return f"D{session}:{turn}"


@dataclass
class Tally:
    """Sums of per-question recall@k, and the number of questions."""

    questions: int = 0
    sums: dict[int, float] = field(default_factory=lambda: dict.fromkeys(KS, 0.0))

    def add(self, recalls: dict[int, float]) -> None:
        self.questions += 1
        for k in KS:
            self.sums[k] += recalls[k]

    def recall(self) -> dict[str, float]:
        return {str(k): (self.sums[k] / self.questions if self.questions else 0.0) for k in KS}

    def to_dict(self) -> dict[str, Any]:
        return {"questions": self.questions, "recall": self.recall()}


@dataclass
class Report:
    overall: Tally = field(default_factory=Tally)
    by_category: dict[int, Tally] = field(default_factory=dict)
    by_conversation: dict[str, Tally] = field(default_factory=dict)
    skipped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "suite": "locomo",
            "questions": self.overall.questions,
            "recall": self.overall.recall(),
            "by_category": {str(c): t.to_dict() for c, t in sorted(self.by_category.items())},
            "by_conversation": {c: t.to_dict() for c, t in self.by_conversation.items()},
            "skipped": self.skipped,
        }


def recall_at(ranked: Sequence[str], evidence: Iterable[str]) -> dict[int, float]:
    """recall@k for every k in KS: the share of `evidence` among the first k distinct ids."""
    wanted = set(evidence)
    distinct = list(dict.fromkeys(ranked))
    return {k: len(wanted & set(distinct[:k])) / len(wanted) for k in KS}


def evaluate(
    conversations: Iterable[Conversation],
    ranking: Ranking | None = None,
    *,
    tokenizer: str = TOKENIZER,
) -> Report:
    """Index each conversation in a fresh index, ask its questions, tally recall@k.

    `ranking` and `tokenizer` default to the index's own; other values are for ablations.
    """
    report = Report()
    depth = max(KS)
    for conv in conversations:
        slug = re.sub(r"[^a-z0-9]+", "-", conv.sample_id.lower()).strip("-") or "conversation"
        with tempfile.TemporaryDirectory(prefix="orch-locomo-") as tmp:
            index = SearchIndex(Layout(Path(tmp)), ranking=ranking, tokenizer=tokenizer)
            try:
                index.update_many(turn_docs(conv, slug))
                for q in conv.questions:
                    if not q.evidence:
                        report.skipped += 1
                        continue
                    hits = index.search(q.text, k=depth, kinds={"transcript"})
                    recalls = recall_at([dia_id(h.ref) for h in hits], q.evidence)
                    report.overall.add(recalls)
                    report.by_category.setdefault(q.category, Tally()).add(recalls)
                    report.by_conversation.setdefault(conv.sample_id, Tally()).add(recalls)
            finally:
                index.close()
    return report


def render(report: Report) -> str:
    head = "".join(f"{'R@' + str(k):>8}" for k in KS)
    lines = [f"{'':<22}{'questions':>10}{head}"]

    def row(label: str, tally: Tally) -> str:
        cells = "".join(f"{tally.recall()[str(k)]:>8.3f}" for k in KS)
        return f"{label:<22}{tally.questions:>10}{cells}"

    lines.append(row("all", report.overall))
    for cat, tally in sorted(report.by_category.items()):
        lines.append(row(f"  {cat} {CATEGORIES.get(cat, '?')}", tally))
    for conv, tally in report.by_conversation.items():
        lines.append(row(f"  {conv}", tally))
    if report.skipped:
        lines.append(f"({report.skipped} questions without evidence skipped)")
    return "\n".join(lines)


@suite("locomo")
@click.option(
    "--data",
    "data",
    required=True,
    metavar="PATH",
    help="A LoCoMo JSON file (e.g. locomo10.json or its development split).",
)
@click.option(
    "--conversation",
    "only",
    multiple=True,
    metavar="ID",
    help="Evaluate only this conversation (its sample_id; repeatable).",
)
@json_option
def locomo(data: str, only: tuple[str, ...], as_json: bool) -> None:
    """Evidence recall@k (k = 1, 5, 10, 20, 50) of the search index on LoCoMo.

    No model and no network: each conversation's turns are indexed as transcripts and each
    question is a query; recall is LoCoMo's turn-level evidence recall.

    \b
    Example:
      python -m evals.locomo --data ../shared/data/locomo/locomo-dev.json --json
    """
    conversations = load(Path(data))
    if only:
        unknown = sorted(set(only) - {c.sample_id for c in conversations})
        if unknown:
            raise UsageError(f"no conversation {', '.join(unknown)} in {data}")
        conversations = [c for c in conversations if c.sample_id in only]
    report = evaluate(conversations)
    if as_json:
        emit_json(report.to_dict())
    else:
        click.echo(render(report))


if __name__ == "__main__":
    locomo()
