"""The LoCoMo suite (`python -m evals.locomo`): the recall@k arithmetic on a hand-made LoCoMo-shaped file, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evals.locomo import evaluate, load, locomo, recall_at

TURNS_1 = [
    ("Ann", "Hi Bo, long time!"),
    ("Bo", "I bought a cello at the flea market last weekend."),
    ("Ann", "Nice. I started pottery classes."),
]
TURNS_2 = [
    ("Bo", "The weather has been grey."),
    ("Ann", "My kiln finally arrived."),
    ("Bo", "I adopted a greyhound named Pixel."),
]


def locomo_file(tmp_path: Path) -> Path:
    conversation = {
        "speaker_a": "Ann",
        "speaker_b": "Bo",
        "session_1_date_time": "1:00 pm on 2 May, 2023",
        "session_1": [
            {"speaker": s, "dia_id": f"D1:{n}", "text": t} for n, (s, t) in enumerate(TURNS_1, 1)
        ],
        "session_2_date_time": "3:00 pm on 9 June, 2023",
        "session_2": [
            {"speaker": s, "dia_id": f"D2:{n}", "text": t} for n, (s, t) in enumerate(TURNS_2, 1)
        ],
    }
    # an image turn: its caption is indexed, its search `query` field is not
    conversation["session_2"].append(
        {
            "speaker": "Ann",
            "dia_id": "D2:4",
            "text": "Look at this!",
            "blip_caption": "a photo of a lighthouse on a cliff",
            "query": "marmalade",
        }
    )
    qa = [
        {
            "question": "Where did Bo find the cello?",
            "answer": "a cello",
            "evidence": ["D1:2"],
            "category": 4,
        },
        # two evidence turns, one of which shares no word with the question; malformed list
        {
            "question": "What was bought at the flea market?",
            "answer": "x",
            "evidence": ["D1:2; D2:1"],
            "category": 1,
        },
        {
            "question": "What photo did Ann share of a lighthouse?",
            "answer": "x",
            "evidence": ["D2:4"],
            "category": 4,
        },
        {"question": "Who is marmalade?", "answer": "x", "evidence": ["D1:1"], "category": 5},
        {
            "question": "What did Ann say about volcanoes?",
            "adversarial_answer": "x",
            "evidence": [],
            "category": 5,
        },
        {
            "question": "What was the session summary about penguins?",
            "answer": "x",
            "evidence": ["D2:2"],
            "category": 2,
        },
    ]
    data = [
        {
            "sample_id": "conv-x",
            "conversation": conversation,
            "qa": qa,
            "observation": {"session_2_observation": [["penguins everywhere", "D2:2"]]},
            "session_summary": {"session_2_summary": "They talked about penguins."},
            "event_summary": {"events_session_2": {"Ann": ["penguins"]}},
        }
    ]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_recall_at_counts_the_first_k_distinct_ids() -> None:
    ranked = ["D1:1", "D1:1", "D2:3", "D1:2", "D3:1"]
    r = recall_at(ranked, ["D1:2", "D2:3", "D9:9", "D9:8"])
    assert r == {1: 0.0, 5: 0.5, 10: 0.5, 20: 0.5, 50: 0.5}
    assert recall_at(["D1:2"], ["D1:2"])[1] == 1.0


def test_recall_on_a_hand_made_file(tmp_path: Path) -> None:
    report = evaluate(load(locomo_file(tmp_path)))
    data = report.to_dict()
    assert data["questions"] == 5 and data["skipped"] == 1
    # q1: the cello turn first (1.0 at every k); q2: the flea market turn first, the
    # weather turn never (0.5 at every k); q3: the caption is indexed (1.0 at every k);
    # q4: "marmalade" is only in the image search query, which is not indexed (0.0);
    # q5: "penguins" is only in the summaries, which are not indexed (0.0).
    assert data["recall"] == {"1": 0.5, "5": 0.5, "10": 0.5, "20": 0.5, "50": 0.5}
    assert data["by_category"] == {
        "1": {"questions": 1, "recall": dict.fromkeys(["1", "5", "10", "20", "50"], 0.5)},
        "2": {"questions": 1, "recall": dict.fromkeys(["1", "5", "10", "20", "50"], 0.0)},
        "4": {"questions": 2, "recall": dict.fromkeys(["1", "5", "10", "20", "50"], 1.0)},
        "5": {"questions": 1, "recall": dict.fromkeys(["1", "5", "10", "20", "50"], 0.0)},
    }
    assert data["by_conversation"]["conv-x"]["questions"] == 5


def test_cli_json_and_text(tmp_path: Path) -> None:
    path = locomo_file(tmp_path)
    result = CliRunner().invoke(locomo, ["--data", str(path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["v"] == 1 and data["suite"] == "locomo" and data["questions"] == 5
    assert set(data["recall"]) == {"1", "5", "10", "20", "50"}
    assert all(0.0 <= r <= 1.0 for r in data["recall"].values())
    result = CliRunner().invoke(locomo, ["--data", str(path)])
    assert result.exit_code == 0
    assert result.output.splitlines()[1].split() == [
        "all",
        "5",
        "0.500",
        "0.500",
        "0.500",
        "0.500",
        "0.500",
    ]
    assert "1 questions without evidence skipped" in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("{not json", "not a LoCoMo file: not JSON"),
        ('{"a": 1}', "not a LoCoMo file: expected a non-empty JSON list"),
        ('[{"sample_id": "c", "qa": []}]', "not a LoCoMo file: item 0 has no 'conversation'"),
        ('[{"conversation": {"session_1": [{"text": "hi"}]}, "qa": []}]', "without dia_id"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "data.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(locomo, ["--data", str(path)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and str(path) in lines[0]


def test_cli_unknown_conversation(tmp_path: Path) -> None:
    path = locomo_file(tmp_path)
    result = CliRunner().invoke(locomo, ["--data", str(path), "--conversation", "conv-y"])
    assert result.exit_code == 2 and "no conversation conv-y" in result.output
