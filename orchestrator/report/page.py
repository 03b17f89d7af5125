"""A `Report` as one self-contained HTML page: inline CSS, no script, nothing fetched.

Every string that comes from the task (the log, the plan, git) goes through `h()`
(`html.escape`): the log may hold hostile text. A Content-Security-Policy forbids the page
any script and any load, so nothing runs and nothing is fetched when it is viewed; the
links to the task's files are relative, so the page and its folder can move together.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from orchestrator.engine.payloads import GateRun
from orchestrator.engine.progress import Spent
from orchestrator.report.model import (
    COMPLETION,
    PLANNING,
    Commit,
    Gate,
    MemoryDecision,
    Phase,
    Report,
    Review,
    Span,
    Turn,
)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def h(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def duration(ms: int | None) -> str:
    if ms is None:
        return "–"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s" if ms < 10_000 else f"{ms // 1000} s"
    minutes, seconds = divmod(ms // 1000, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def clock(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def cost(tokens: Spent) -> str:
    text = f"${tokens.cost_usd:.4f}" if tokens.cost_usd < 1 else f"${tokens.cost_usd:.2f}"
    return text + (f" (+{tokens.unpriced} unpriced)" if tokens.unpriced else "")


def badge(word: str) -> str:
    return f'<span class="b b-{h(word.lower())}">{h(word)}</span>'


def table(head: Iterable[str], rows: Iterable[Iterable[str]], cls: str = "") -> str:
    """A table; `rows` hold HTML already escaped."""
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    if not body:
        return ""
    th = "".join(f"<th>{h(c)}</th>" for c in head)
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


# the timeline -------------------------------------------------------------------------------


class Timeline:
    def __init__(self, report: Report) -> None:
        self.start = report.start_ms
        self.total = max(1, report.end_ms - report.start_ms)

    def pct(self, ms: int) -> float:
        return max(0.0, min(100.0, (ms - self.start) * 100 / self.total))

    def bar(self, span: Span) -> str:
        left = self.pct(span.start_ms)
        width = max(0.4, self.pct(span.end_ms) - left)
        tip = f"{span.label}: {duration(span.end_ms - span.start_ms)}"
        kind = "approval" if span.lane == "approval" else span.lane.split(" ")[0]
        return (
            f'<div class="bar k-{h(kind)}" style="left:{left:.2f}%;width:{width:.2f}%"'
            f' title="{h(tip)}"></div>'
        )

    def mark(self, at: int, cls: str, tip: str) -> str:
        return f'<span class="mk {cls}" style="left:{self.pct(at):.2f}%" title="{h(tip)}"></span>'


def _lane_of_gate(gate: Gate) -> str:
    if gate.gate == "PLAN_GATE":
        return PLANNING
    if gate.phase is not None:
        return f"phase {gate.phase}"
    return COMPLETION


def timeline(report: Report) -> str:
    t = Timeline(report)
    lanes: dict[str, list[str]] = {}
    for span in report.spans:
        lanes.setdefault(span.lane, []).append(t.bar(span))
    for gate in report.gates:
        tip = f"{gate.gate} {gate.decision}: {gate.reason}"
        lanes.setdefault(_lane_of_gate(gate), []).append(
            t.mark(gate.at_ms, f"d-{h(gate.decision.lower())}", tip)
        )
    for turn in report.steps:
        if turn.step in ("phase_retry", "phase_restarted", "resumed", "blocked"):
            lane = f"phase {turn.phase}" if turn.phase is not None else PLANNING
            lanes.setdefault(lane, []).append(
                t.mark(turn.at_ms, "turn", f"{turn.step}: {turn.reason}")
            )
    order = [PLANNING, "approval"] + [f"phase {p}" for p in sorted(report.phases)] + [COMPLETION]
    rows = "".join(
        f'<div class="lane"><div class="ln">{h(name)}</div><div class="tr">{"".join(lanes[name])}'
        "</div></div>"
        for name in order
        if name in lanes
    )
    axis = (
        f'<div class="axis"><span>{h(clock(report.start_ms))}</span>'
        f"<span>+{h(duration(t.total))}</span></div>"
    )
    legend = (
        '<p class="legend"><span class="mk d-go"></span> gate GO '
        '<span class="mk d-blocked"></span> gate BLOCKED '
        '<span class="mk d-replan"></span> REPLAN '
        '<span class="mk turn"></span> retry, resume or block. '
        "Hover a bar or a mark for its detail.</p>"
    )
    return f'<section><h2>Timeline</h2><div class="tl">{rows}{axis}</div>{legend}</section>'


# parts of a phase ---------------------------------------------------------------------------


def run_rows(runs: Iterable[GateRun]) -> str:
    """The quality gates a gate ran; a failed one's output tail on a full-width row."""
    rows = []
    for run in runs:
        command = f"<code>{h(run.command)}</code>" if run.command else "–"
        exit_code = h(run.exit_code) if run.exit_code is not None else "–"
        cells = [h(run.gate), badge(run.status), command, exit_code, h(duration(run.duration_ms))]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        if run.output_tail:
            rows.append(
                f'<tr class="tail"><td colspan="5"><details open><summary>{h(run.gate)}: the end '
                f"of its output</summary><pre>{h(run.output_tail)}</pre></details></td></tr>"
            )
    if not rows:
        return ""
    head = "".join(
        f"<th>{c}</th>" for c in ("quality gate", "result", "command", "exit code", "took")
    )
    return (
        f'<table class="runs"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def gate_block(gate: Gate) -> str:
    iteration = (
        f" iteration {gate.iteration} of {gate.max_iterations}" if gate.gate == "PLAN_GATE" else ""
    )
    failure = f" · failure class {h(gate.failure_class)}" if gate.failure_class else ""
    return (
        f'<div class="gate"><div class="gh">{badge(gate.decision)} <b>{h(gate.gate)}</b>'
        f"{h(iteration)} · took {h(duration(gate.duration_ms))}{failure}"
        f' <span class="when">{h(clock(gate.at_ms))}</span></div>'
        f'<div class="reason">{h(gate.reason)}</div>'
        f'<div class="next">next: {h(gate.next_action)}</div>{run_rows(gate.runs)}</div>'
    )


def _items(title: str, items: Iterable[str]) -> str:
    lis = "".join(f"<li>{h(i)}</li>" for i in items)
    return f"<div><b>{h(title)}</b><ul>{lis}</ul></div>" if lis else ""


def review_block(review: Review) -> str:
    who = "final review" if review.kind == "final_review" else "code review"
    attempt = f", attempt {review.attempt}" if review.attempt else ""
    criteria = table(
        ["acceptance criterion", "met", "evidence"],
        ([h(c), badge("MET" if met else "UNMET"), h(e)] for c, met, e in review.criteria),
        "crit",
    )
    return (
        f'<div class="review"><div class="gh">{badge(review.verdict or "?")} <b>{h(who)}</b>'
        f'{h(attempt)}</div><div class="reason">{h(review.summary)}</div>'
        + _items("validated blocking issues", review.validated)
        + _items("blocking issues claimed", review.blocking)
        + _items("dropped (not validated)", review.demoted)
        + _items("non-blocking", review.non_blocking)
        + criteria
        + "</div>"
    )


def turn_row(turn: Turn) -> list[str]:
    what = turn.step.replace("_", " ")
    if turn.kind:
        what += f" ({turn.kind})"
    detail = [turn.reason]
    if turn.command:
        detail.append(f"command: {turn.command}")
    if turn.note:
        detail.append(f"note: {turn.note}")
    if turn.by:
        detail.append(f"by: {turn.by}")
    if turn.failure_class:
        detail.append(f"failure class: {turn.failure_class}")
    return [
        h(clock(turn.at_ms)),
        h(what),
        h(turn.attempt or ""),
        h(duration(turn.waited_ms) if turn.waited_ms is not None else ""),
        "<br>".join(h(d) for d in detail),
    ]


def turns_table(turns: Iterable[Turn]) -> str:
    return table(["when", "what", "attempt", "waited", "detail"], (turn_row(t) for t in turns))


def memory_table(decisions: Iterable[MemoryDecision]) -> str:
    rows = (
        [
            badge(d.decision),
            h(d.fact),
            h(d.memory or ""),
            h(d.type),
            h(d.source),
            h(d.reason),
        ]
        for d in decisions
    )
    return table(["decision", "fact", "memory", "type", "source", "why"], rows, "mem")


def tokens_line(tokens: Spent | None) -> str:
    if tokens is None:
        return '<p class="tok">no model call</p>'
    failed = f", {tokens.failed} failed" if tokens.failed else ""
    return (
        f'<p class="tok">{tokens.calls} model call(s){h(failed)} · {tokens.input_tokens:,} in / '
        f"{tokens.output_tokens:,} out tokens (cache {tokens.cache_read_tokens:,} read, "
        f"{tokens.cache_write_tokens:,} written) · estimated {h(cost(tokens))}</p>"
    )


# sections -----------------------------------------------------------------------------------


def _in(part: str, phase: int | None, at: int, report: Report) -> bool:
    """Whether something of `phase` at `at` belongs to the section `part`."""
    if part.startswith("phase "):
        return phase is not None and part == f"phase {phase}"
    if phase is not None:
        return False
    first = min((p.start_ms for p in report.phases.values() if p.start_ms), default=None)
    before = first is None or at < first
    return before if part == PLANNING else not before


def _part_of(phase: int | None, completion: bool) -> str | None:
    """The section of a review or a memory decision: its phase's, or completion's."""
    if phase is not None:
        return f"phase {phase}"
    return COMPLETION if completion else None


def section(report: Report, part: str, heading: str, meta: str) -> str:
    gates = [g for g in report.gates if _in(part, g.phase, g.at_ms, report)]
    turns = [t for t in report.steps if _in(part, t.phase, t.at_ms, report)]
    reviews = [r for r in report.reviews if _part_of(r.phase, r.kind == "final_review") == part]
    memory = [m for m in report.memory if _part_of(m.phase, m.phase is None) == part]
    body = "".join(gate_block(g) for g in gates) + "".join(review_block(r) for r in reviews)
    if turns:
        body += "<h4>retries, approvals and resumes</h4>" + turns_table(turns)
    if memory:
        body += "<h4>memory decisions (Checklist C)</h4>" + memory_table(memory)
    if not body and part not in report.tokens:
        return ""
    return (
        f'<section class="part" id="{h(part.replace(" ", "-"))}"><h2>{h(heading)}</h2>'
        f'<p class="meta">{meta}</p>{tokens_line(report.tokens.get(part))}{body}</section>'
    )


def phase_meta(phase: Phase) -> str:
    took = (
        duration(phase.end_ms - phase.start_ms)
        if phase.start_ms is not None and phase.end_ms is not None
        else "–"
    )
    commit = f" · commit <code>{h(phase.commit[:12])}</code>" if phase.commit else ""
    return f"{badge(phase.status)} · {phase.attempts} attempt(s) · took {h(took)}{commit}"


def commits_section(report: Report, total_files: int) -> str:
    if report.git_note:
        return f"<section><h2>Commits</h2><p>{h(report.git_note)}</p></section>"
    blocks = []
    for c in report.commits:
        blocks.append(commit_block(c))
    if not blocks:
        return "<section><h2>Commits</h2><p>no commit names this task (Orch-Task)</p></section>"
    return (
        f'<section><h2>Commits</h2><p class="meta">{len(report.commits)} commit(s), '
        f"{total_files} file change(s), found by their Orch-Task trailer</p>"
        + "".join(blocks)
        + "</section>"
    )


def commit_block(c: Commit) -> str:
    rows = []
    for f in c.files:
        added = "bin" if f.added is None else f"+{f.added}"
        deleted = "" if f.deleted is None else f"−{f.deleted}"
        scale = max(1, max((x.added or 0) + (x.deleted or 0) for x in c.files))
        green = (f.added or 0) * 100 // scale
        red = (f.deleted or 0) * 100 // scale
        bar = (
            f'<span class="ds"><i class="a" style="width:{green}%"></i>'
            f'<i class="d" style="width:{red}%"></i></span>'
        )
        rows.append([f"<code>{h(f.path)}</code>", h(added), h(deleted), bar])
    phase = f"phase {c.phase} · " if c.phase is not None else ""
    return (
        f'<div class="commit"><div class="gh"><code>{h(c.sha[:12])}</code> <b>{h(c.subject)}</b>'
        f' <span class="when">{h(phase)}{len(c.files)} file(s), +{c.added} −{c.deleted}</span>'
        f"</div>{table(['file', 'added', 'deleted', ''], rows, 'stat')}</div>"
    )


def tokens_section(report: Report) -> str:
    order = [PLANNING] + [f"phase {p}" for p in sorted(report.phases)] + [COMPLETION]
    rows = []
    for part in order + sorted(set(report.tokens) - set(order)):
        t = report.tokens.get(part)
        if t is None:
            continue
        rows.append(
            [
                h(part),
                str(t.calls),
                f"{t.input_tokens:,}",
                f"{t.output_tokens:,}",
                f"{t.cache_read_tokens:,}",
                f"{t.cache_write_tokens:,}",
                h(cost(t)),
            ]
        )
    total = report.total_tokens
    rows.append(
        [
            "<b>total</b>",
            f"<b>{total.calls}</b>",
            f"<b>{total.input_tokens:,}</b>",
            f"<b>{total.output_tokens:,}</b>",
            f"{total.cache_read_tokens:,}",
            f"{total.cache_write_tokens:,}",
            f"<b>{h(cost(total))}</b>",
        ]
    )
    head = ["part", "model calls", "input", "output", "cache read", "cache write", "est. cost"]
    note = (
        "Costs are estimates from list prices (a scripted model's estimated usage is priced "
        "as claude-sonnet-4-6; a model without a known price is counted as unpriced)."
    )
    return f'<section><h2>Tokens and cost</h2>{table(head, rows, "num")}<p class="meta">{note}</p></section>'


def links_section(report: Report, out_dir: Path) -> str:
    items = []
    for link in report.links:
        href = quote(Path(os.path.relpath(link.path, out_dir)).as_posix())
        items.append(f'<li><a href="{h(href)}">{h(link.label)}</a></li>')
    if not items:
        return ""
    return f'<section><h2>Files</h2><ul class="files">{"".join(items)}</ul></section>'


def summary(report: Report) -> str:
    committed = sum(1 for p in report.phases.values() if p.commit)
    retries = sum(1 for t in report.steps if t.step in ("phase_retry", "phase_restarted"))
    written = sum(1 for m in report.memory if m.decision == "written")
    total = report.total_tokens
    facts = [
        ("state", badge(report.state or "?")),
        ("phases committed", f"{committed} of {len(report.phases)}"),
        ("took", h(duration(report.end_ms - report.start_ms))),
        ("gates", str(len(report.gates))),
        ("retries", str(retries)),
        ("tokens", f"{total.total:,}"),
        ("est. cost", h(cost(total))),
        ("memories written", str(written)),
    ]
    cells = "".join(f'<div class="fact"><span>{h(k)}</span><b>{v}</b></div>' for k, v in facts)
    return f'<div class="facts">{cells}</div>'


def render(report: Report, out_dir: Path) -> str:
    """The page; links are relative to `out_dir`, where the page will be written."""
    parts = [section(report, PLANNING, "Planning and audit", "the plan, its audits, the PLAN_GATE")]
    for pid in sorted(report.phases):
        ph = report.phases[pid]
        parts.append(section(report, f"phase {pid}", f"Phase {pid}: {ph.title}", phase_meta(ph)))
    parts.append(
        section(report, COMPLETION, "Completion", "the final review and the COMPLETION_GATE")
    )
    files = sum(len(c.files) for c in report.commits)
    problems = (
        "<section><h2>Log problems</h2><ul>"
        + "".join(f"<li>{h(p)}</li>" for p in report.problems)
        + "</ul></section>"
        if report.problems
        else ""
    )
    title = report.title or report.task_text or report.slug
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>orch report: {h(report.slug)}</title><style>{STYLE}</style></head><body>"
        f'<header><h1>{h(title)}</h1><p class="meta">task <code>{h(report.slug)}</code> · '
        f"model <code>{h(report.model)}</code> · started {h(clock(report.start_ms))} · "
        f'{report.events} events</p><p class="task">{h(report.task_text)}</p>'
        f"{summary(report)}</header><main>{timeline(report)}"
        + "".join(parts)
        + tokens_section(report)
        + commits_section(report, files)
        + links_section(report, out_dir)
        + problems
        + "</main><footer>written by <code>orch report</code> from the task's event log, "
        "plan and git; nothing on this page is fetched or run.</footer></body></html>\n"
    )


STYLE = """
:root{--fg:#1d232b;--mute:#5b6573;--line:#dde2e8;--bg:#f6f8fa;--go:#1a7f37;--bad:#cf222e;
--warn:#9a6700;--blue:#0969da}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:#fff}
header,main,footer{max-width:1180px;margin:0 auto;padding:0 20px}
header{padding-top:18px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid
var(--line);padding-bottom:4px}h4{margin:12px 0 4px;font-size:13px;color:var(--mute)}
.meta,.when,.next,footer{color:var(--mute);font-size:12.5px}.task{margin:6px 0}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--bg);border:1px solid var(--line);padding:8px;overflow:auto;max-height:260px;
margin:4px 0;white-space:pre-wrap;word-break:break-word}
.facts{display:flex;flex-wrap:wrap;gap:8px;margin:12px 0}
.fact{border:1px solid var(--line);border-radius:6px;padding:6px 12px;min-width:110px;background:var(--bg)}
.fact span{display:block;font-size:11.5px;color:var(--mute)}.fact b{font-size:16px}
.b{display:inline-block;padding:0 7px;border-radius:10px;font-size:11.5px;font-weight:600;
background:#eaeef2;color:var(--fg)}
.b-go,.b-pass,.b-met,.b-written,.b-committed,.b-closed,.b-complete,.b-approved{background:#dafbe1;color:var(--go)}
.b-blocked,.b-fail,.b-unmet,.b-rejected{background:#ffebe9;color:var(--bad)}
.b-replan,.b-needs_revision,.b-waiting_approval,.b-incomplete,.b-abstain{background:#fff8c5;color:var(--warn)}
.tl{border:1px solid var(--line);border-radius:6px;padding:8px 10px}
.lane{display:flex;align-items:center;height:24px}
.ln{width:150px;flex:none;font-size:12px;color:var(--mute);white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.tr{position:relative;flex:1;height:16px;background:var(--bg);border-radius:3px}
.bar{position:absolute;top:2px;height:12px;border-radius:3px;background:#8cb4e6}
.k-planning{background:#b6a4e8}.k-approval{background:repeating-linear-gradient(45deg,#f0d58c,#f0d58c 4px,#f7e7b8 4px,#f7e7b8 8px)}
.k-completion{background:#8fd3a5}
.mk{position:absolute;top:1px;width:10px;height:10px;margin-left:-5px;transform:rotate(45deg);
border:1px solid #fff;background:var(--mute);display:inline-block}
.legend .mk{position:static;margin:0 2px 0 8px;vertical-align:middle}
.d-go{background:var(--go)}.d-blocked{background:var(--bad)}.d-replan,.d-abstain{background:var(--warn)}
.turn{background:var(--blue);border-radius:50%;transform:none}
.axis{display:flex;justify-content:space-between;margin-left:150px;font-size:11.5px;color:var(--mute)}
.gate,.review,.commit{border:1px solid var(--line);border-radius:6px;padding:8px 10px;margin:8px 0}
.gh{margin-bottom:2px}.reason{margin:2px 0}
table{border-collapse:collapse;width:100%;margin:6px 0;font-size:12.5px}
th,td{border-bottom:1px solid var(--line);padding:4px 6px;text-align:left;vertical-align:top}
th{color:var(--mute);font-weight:600;background:var(--bg)}
table.num td:not(:first-child),table.num th:not(:first-child){text-align:right}
.ds{display:inline-flex;width:120px;height:8px;background:var(--bg)}.ds i{display:block;height:8px}
.ds .a{background:var(--go)}.ds .d{background:var(--bad)}
ul{margin:4px 0;padding-left:20px}.files{columns:3}a{color:var(--blue)}
footer{margin:28px auto 24px;border-top:1px solid var(--line);padding-top:8px}
"""
