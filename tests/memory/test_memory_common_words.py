"""Near-duplicates among a project's common words, and what task state pairs with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestrator.memory import compare
from orchestrator.memory.audit import AuditReport, audit
from orchestrator.memory.rarity import RARE_DF, rare_pairs
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Memory

Put = Callable[..., Any]

# words of one name each: a filler fact carries one topic word and one of these
OWN = [
    "abacus", "bramble", "cobalt", "dervish", "ember", "fjord", "gannet", "hollyhock",
    "ibis", "juniper", "kestrel", "lichen", "marten", "nettle", "osprey", "plover",
    "quince", "rowan", "sorrel", "tansy", "umber", "vetch", "wren", "yarrow", "zander",
    "alder", "bittern", "curlew", "dunlin", "eider", "fulmar", "godwit", "heron",
    "jackdaw", "knot", "linnet", "merlin", "nightjar", "ouzel", "pipit", "quail",
    "redstart", "shrike", "twite", "veery", "wigeon", "yellowhammer", "avocet", "bunting",
    "chough", "dipper", "egret", "fieldfare", "garganey", "hobby", "jay", "kittiwake",
    "lapwing", "moorhen", "nuthatch", "oriole", "petrel", "razorbill", "siskin", "teal",
]  # fmt: skip
TOPICS = ["responsive", "design", "screen", "layout"]


def found(report: AuditReport) -> set[frozenset[str]]:
    return {
        frozenset({f.memory or "", *f.related[:1]})
        for f in report.findings
        if f.kind == "near_duplicate"
    }


def plant_topics(put: Put, per_topic: int = RARE_DF + 1) -> None:
    """The project's topics, each in more facts than `RARE_DF`: common in this store."""
    words = iter(OWN)
    for topic in TOPICS:
        for k in range(per_topic):
            put(f"filler-{topic}-{k}", f"The {next(words)} part is {topic}.", subject=topic)


def test_paraphrases_in_the_projects_common_words_are_near_duplicates(
    layout: Layout, put: Put
) -> None:
    plant_topics(put)
    # one durable fact in two pages, sharing no rare word: every word is a topic's
    put("resp-a", "Responsive design for every screen layout", subject="key features")
    put(
        "resp-b",
        "**Responsive Design**: the application adapts each screen layout to phones and "
        "tablets by design.",
        subject="ui patterns",
    )
    # one item of work in two plan lists, worded apart: task state shares most of its
    # weight with task state
    put("todo-a", "Responsive layout for the screen design", subject="next steps")
    put("todo-b", "❌ Responsive layout for screen design", subject="what is left")
    dups = found(audit(layout))
    assert frozenset({"resp-a", "resp-b"}) in dups
    assert frozenset({"todo-a", "todo-b"}) in dups
    assert not any(name.startswith("filler") for pair in dups for name in pair)


def test_task_state_pairs_with_task_state_only(layout: Layout, put: Put) -> None:
    # a durable fact and the item of work on it say two things: what the product is and
    # where work on it stands
    put(
        "palette",
        "A custom Tailwind colour palette lives in tailwind.config.js.",
        subject="styling",
    )
    put("palette-done", "✅ Custom Tailwind colour palette", subject="completed")
    # one topic in two milestones, worded by its stage, is two stages of work
    plant_topics(put)
    put("stage-a", "Defining the responsive screen layout", subject="focus areas")
    put("stage-b", "Responsive screen layout validation", subject="milestone 1")
    # a fact saying nothing but two common words is not held in a longer one
    put("key-a", "The deploy key is:", subject="credentials")
    put("key-b", "The staging deploy uses the key AKIAEXAMPLE.", subject="staging deploy")
    assert found(audit(layout)) == set()


def test_common_words_join_in_pairs_and_postings_stay_bounded(mk: Callable[..., Memory]) -> None:
    # forty facts share two common words and nothing else: each pair is a candidate
    memories = [mk(f"m{k}", f"The {OWN[k]} widget shows every cart item.") for k in range(40)]
    # a word more than COMMON_DF memories carry joins nothing, even with another one
    memories += [mk(f"w{k}", f"The {OWN[k % 60]} invoice total is rounded.") for k in range(60)]
    scores = rare_pairs(memories, compare.Readings())
    names = {(memories[a].name, memories[b].name) for a, b in scores}
    assert ("m0", "m1") in names
    assert not any(a.startswith("w") and b.startswith("w") for a, b in names)
