"""plan.json: validation (schema plus the rules a schema cannot say) and its plan.md rendering."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from orchestrator.schemas import errors
from orchestrator.store.templates import fill, package_template

PLAN_SCHEMA_VERSION = 1


def plan_sha(plan: dict[str, Any]) -> str:
    """The plan's fingerprint, as the event log records it (of its canonical JSON)."""
    text = json.dumps(plan, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plan_problems(plan: Any) -> list[str]:
    """Every reason `plan` is not a valid plan; [] when it is."""
    found = errors("plan", plan)
    if found:
        return found
    ids = [p["phase_id"] for p in plan["phases"]]
    if ids != list(range(1, len(ids) + 1)):
        found.append(f"phases: phase_id must run 1..{len(ids)} in order, got {ids}")
    known = set(ids)
    for phase in plan["phases"]:
        for dep in phase["dependencies"]:
            if dep == phase["phase_id"]:
                found.append(f"phases/{phase['phase_id']}: depends on itself")
            elif dep not in known:
                found.append(f"phases/{phase['phase_id']}: depends on unknown phase {dep}")
    if not found:
        cycle = dependency_cycle({p["phase_id"]: p["dependencies"] for p in plan["phases"]})
        if cycle:
            found.append("phases: dependency cycle " + " -> ".join(map(str, cycle)))
    return found


def dependency_cycle(graph: dict[int, list[int]]) -> list[int] | None:
    """One cycle in `graph` (node -> dependencies) as a path, or None if it is acyclic."""
    state: dict[int, int] = {}  # 1: on the stack, 2: done
    stack: list[int] = []

    def visit(node: int) -> list[int] | None:
        state[node] = 1
        stack.append(node)
        for dep in graph.get(node, []):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def topological_order(plan: dict[str, Any]) -> list[int]:
    """Phase ids so that every phase comes after its dependencies (ties by id)."""
    deps = {p["phase_id"]: set(p["dependencies"]) for p in plan["phases"]}
    order: list[int] = []
    while deps:
        ready = sorted(n for n, d in deps.items() if not d - set(order))
        if not ready:
            raise ValueError("dependency cycle")
        order.append(ready[0])
        del deps[ready[0]]
    return order


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {i}" for i in items) or "- none"


def render_plan_md(plan: dict[str, Any]) -> str:
    phases = []
    for p in plan["phases"]:
        files = (
            "\n".join(f"  - `{f['path']}` ({f['action']}): {f['reason']}" for f in p["files"])
            or "  - none"
        )
        deps = ", ".join(map(str, p["dependencies"])) or "none"
        phases.append(
            f"### Phase {p['phase_id']}: {p['title']}\n\n"
            f"Objective: {p['objective']}  \nDepends on: {deps}  \n"
            f"Quality gates: {', '.join(p['quality_gates']) or 'none'}\n\n"
            f"Files:\n{files}\n\nSteps:\n{_bullets(p['steps'])}\n\nTests:\n{_bullets(p['tests'])}\n\n"
            f"Acceptance criteria:\n{_bullets(p['acceptance_criteria'])}\n"
        )
    risks = "\n".join(
        f"- [{r['severity']}] {r['description']} (mitigation: {r['mitigation']})"
        for r in plan["risks"]
    )
    review = "\n".join(
        f"- {k.replace('_', ' ')}: {v['level']}" + (f" ({v['notes']})" if v["notes"] else "")
        for k, v in plan["risk_review"].items()
    )
    return fill(
        package_template("plan.md"),
        task_title=plan["task_title"],
        slug=plan["slug"],
        status=plan["status"],
        complexity_tier=plan["complexity_tier"],
        confidence=plan["confidence"],
        summary=plan["summary"],
        phases="\n".join(phases),
        risks=risks or "- none",
        risk_review=review,
        open_questions=_bullets(plan["open_questions"]),
        success_criteria=_bullets(plan["success_criteria"]),
    )


def plan_text(plan: dict[str, Any]) -> str:
    """The plan for a terminal (`orch plan show`): phases, their files and actions, steps and
    acceptance criteria, then risks and success criteria."""
    lines = [
        f"Plan: {plan['task_title']}",
        f"  tier {plan['complexity_tier']}, confidence {plan['confidence']}, "
        f"status {plan['status']}",
        f"  {plan['summary']}",
    ]
    for p in plan["phases"]:
        deps = ", ".join(map(str, p["dependencies"])) or "none"
        lines += [
            "",
            f"Phase {p['phase_id']}: {p['title']}",
            f"  objective: {p['objective']}",
            f"  depends on: {deps}; gates: {', '.join(p['quality_gates']) or 'none'}",
            "  files:",
            *(f"    {f['action']:<9} {f['path']}: {f['reason']}" for f in p["files"]),
            "  steps:",
            *(f"    - {step}" for step in p["steps"]),
            "  acceptance criteria:",
            *(f"    - {c}" for c in p["acceptance_criteria"]),
        ]
    if plan["risks"]:
        lines += ["", "Risks:"]
        lines += [f"  [{r['severity']}] {r['description']}" for r in plan["risks"]]
    lines += ["", "Success criteria:", *(f"  - {c}" for c in plan["success_criteria"])]
    return "\n".join(lines) + "\n"
