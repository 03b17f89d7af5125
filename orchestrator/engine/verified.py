"""Verified items (`verified_items.md`), as a projection of the event log.

Items come from three places: the PlanAuditor's checks (`PLAN-<check id>`), the quality
gates a phase passed (`P<n>-<gate>`) and the acceptance criteria the reviewer found met
(`P<n>-AC<k>`). An item is VERIFIED when it first passes. Later runs re-check it: a plan
check in a later audit iteration, a gate item whenever the same gate runs again in a
later phase (the test command runs the whole suite). An item that was verified and fails
a re-check is REGRESSED, and blocking, until it passes again.

The file is rewritten from the log after each step that changes it, so a crash between
the two can never leave them disagreeing for long: the next write is the same projection.
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.events.log import Event
from orchestrator.store.tasks import VerifiedItem


@dataclass
class _Item:
    item_id: str
    description: str
    first: str = ""
    last: str = ""
    status: str = "PENDING"

    def observe(self, passed: bool, ts: str) -> None:
        if passed:
            self.first = self.first or ts
            self.last = ts
            self.status = "VERIFIED"
        elif self.status in ("VERIFIED", "REGRESSED"):
            self.status = "REGRESSED"


def project(events: list[Event]) -> dict[str, _Item]:
    items: dict[str, _Item] = {}

    def seen(item_id: str, description: str, passed: bool, ts: str) -> None:
        item = items.setdefault(item_id, _Item(item_id, description))
        item.description = description or item.description
        item.observe(passed, ts)

    for event in events:
        p = event.payload
        if event.event_type == "plan_audit":
            for check in p.get("checks") or []:
                seen(
                    f"PLAN-{check['id']}",
                    check.get("description", ""),
                    bool(check["passed"]),
                    event.ts,
                )
        elif event.event_type == "verdict" and p.get("kind") == "quality_gate":
            if p.get("status") == "NOT_RUN" or event.phase is None:
                continue
            gate = p["gate"]
            own = f"P{event.phase}-{gate}"
            if p["passed"]:
                seen(own, f"phase {event.phase}: {gate} passes", True, event.ts)
            elif own in items:
                items[own].observe(False, event.ts)
            # the same gate in a later phase re-checks what earlier phases verified
            for item in items.values():
                if item.item_id.endswith(f"-{gate}") and item.item_id != own:
                    item.observe(bool(p["passed"]), event.ts)
        elif event.event_type == "verdict" and p.get("kind") == "review" and event.phase:
            for k, crit in enumerate(p.get("criteria") or [], 1):
                seen(
                    f"P{event.phase}-AC{k}",
                    crit.get("criterion", ""),
                    bool(crit.get("met")),
                    event.ts,
                )
    return items


def regressed(events: list[Event]) -> list[str]:
    return [i.item_id for i in project(events).values() if i.status == "REGRESSED"]


def plan_check_history(events: list[Event]) -> dict[str, bool]:
    """Plan checks that passed in some earlier audit (id -> True)."""
    passed: dict[str, bool] = {}
    for event in events:
        if event.event_type == "plan_audit":
            for check in event.payload.get("checks") or []:
                if check["passed"]:
                    passed[check["id"]] = True
    return passed


def rows(events: list[Event]) -> list[VerifiedItem]:
    return [
        VerifiedItem(i.item_id, i.description, i.first or "-", i.last or "-", i.status)
        for i in project(events).values()
    ]
