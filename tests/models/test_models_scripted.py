"""The scripted model: queue and conversation scripts, recorded requests, failure rules,
script files that do not parse, and choosing models by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.config import Config
from orchestrator.errors import ModelError, UsageError
from orchestrator.messages import Message, Request, SystemPart, TextBlock, ToolCall, ToolResult
from orchestrator.models import get_model
from orchestrator.models.resilient import ResilientModel
from orchestrator.models.scripted import ScriptedModel, ScriptError


def request(text: str = "go", *, purpose: str = "executor", phase: int | None = 1) -> Request:
    return Request(
        [SystemPart("rules", cache=True)], [Message.user(text)], purpose=purpose, phase=phase
    )


def test_queue_replies_come_in_order_and_every_request_is_recorded() -> None:
    model = ScriptedModel.from_replies(
        {"text": "first"},
        {"tool_calls": [{"name": "read_file", "input": {"path": "a.py"}, "id": "toolu_1"}]},
    )
    one = model.complete(request("hello"))
    two = model.complete(request("next"))
    assert one.text == "first" and one.stop_reason == "end_turn"
    assert two.stop_reason == "tool_use"
    assert two.tool_calls == [ToolCall("toolu_1", "read_file", {"path": "a.py"})]
    assert [r.last_user_text for r in model.requests] == ["hello", "next"]
    with pytest.raises(ModelError, match="no reply for turn 2") as caught:
        model.complete(request())
    assert caught.value.failure_class == "escalate"


def test_conversations_answer_by_purpose_phase_and_turn_so_a_resume_gets_the_same_reply() -> None:
    model = ScriptedModel(
        {
            "conversations": [
                {"when": {"purpose": "planner"}, "replies": [{"text": "the plan"}]},
                {
                    "when": {"purpose": "executor", "phase": 2, "contains": "tests"},
                    "replies": [
                        {"tool_calls": [{"name": "run", "input": {"cmd": "pytest"}}]},
                        {"text": "phase 2 done"},
                    ],
                },
                {"when": {"purpose": "executor"}, "replies": [{"text": "any phase"}]},
            ]
        }
    )
    assert model.complete(request(purpose="planner", phase=None)).text == "the plan"
    first = request("run the tests", phase=2)
    call = model.complete(first).tool_calls[0]
    assert model.complete(first).tool_calls[0].name == "run"  # same request, same reply
    follow = Request(
        first.system,
        [
            *first.messages,
            Message("assistant", [call]),
            Message("user", [ToolResult(call.id, "ok"), TextBlock("tests pass")]),
        ],
        purpose="executor",
        phase=2,
    )
    assert model.complete(follow).text == "phase 2 done"
    assert model.complete(request("other", phase=3)).text == "any phase"
    with pytest.raises(ModelError, match="no scripted conversation matches"):
        model.complete(request(purpose="reviewer"))


def test_scripted_errors_are_raised_the_given_number_of_times() -> None:
    model = ScriptedModel.from_replies(
        {"error": {"class": "transient", "message": "overloaded", "status": 529, "times": 2}},
        {"text": "ok"},
    )
    for _ in range(2):
        with pytest.raises(ModelError) as caught:
            model.complete(request())
        assert (caught.value.failure_class, caught.value.status) == ("transient", 529)
    assert model.complete(request()).text == "ok"


@pytest.mark.parametrize(
    ("reply", "failure_class", "words"),
    [
        ({"stop_reason": "end_turn"}, "transient", "empty reply"),
        ({"text": "   \n", "stop_reason": "end_turn"}, "transient", "empty reply"),
        (
            {
                "tool_calls": [{"name": "write_file", "input": {"path": "a"}}],
                "stop_reason": "max_tokens",
            },
            "fixable",
            "cut at max_tokens in the middle of a call to 'write_file'",
        ),
        ({"text": "no", "stop_reason": "refusal"}, "escalate", "declined"),
    ],
)
def test_replies_that_are_failures_raise(reply: dict, failure_class: str, words: str) -> None:
    with pytest.raises(ModelError, match=words) as caught:
        ScriptedModel.from_replies(reply).complete(request())
    assert caught.value.failure_class == failure_class


def test_a_text_reply_cut_at_max_tokens_is_still_a_reply() -> None:
    reply = ScriptedModel.from_replies({"text": "partial", "stop_reason": "max_tokens"}).complete(
        request()
    )
    assert (reply.text, reply.stop_reason) == ("partial", "max_tokens")


def test_usage_from_the_script() -> None:
    reply = ScriptedModel.from_replies(
        {"text": "x", "usage": {"input_tokens": 10, "output_tokens": 3, "cache_read_tokens": 7}}
    ).complete(request())
    assert reply.usage.to_dict() == {
        "input_tokens": 10,
        "output_tokens": 3,
        "cache_read_tokens": 7,
        "cache_write_tokens": 0,
    }


# script files -------------------------------------------------------------------------


def test_yaml_and_json_script_files(tmp_path: Path) -> None:
    yml = tmp_path / "s.yaml"
    yml.write_text("replies:\n  - text: from yaml\n", encoding="utf-8")
    js = tmp_path / "s.json"
    js.write_text(json.dumps({"replies": [{"text": "from json"}]}), encoding="utf-8")
    assert ScriptedModel.from_file(yml).complete(request()).text == "from yaml"
    model = ScriptedModel.from_file(js)
    assert model.name == f"scripted:{js}"
    assert model.complete(request()).text == "from json"


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("bad.yaml", "replies:\n  - text: [unclosed\n", "not valid YAML"),
        ("bad.json", '{"replies": [', "not valid JSON (line 1"),
        ("list.yaml", "- text: hi\n", "must be a mapping"),
        ("both.yaml", "replies: []\nconversations: []\n", "exactly one of"),
        ("keys.yaml", "replies:\n  - txt: hi\n", "unknown keys ['txt']"),
        ("class.yaml", "replies:\n  - error: {class: oops}\n", "error needs a class"),
        (
            "times.yaml",
            "replies:\n  - error: {class: transient, times: two}\n",
            "times must be an integer",
        ),
        ("usage.yaml", "replies:\n  - text: x\n    usage: {tokens: 3}\n", "usage must map"),
        ("call.yaml", "replies:\n  - tool_calls: [{input: {}}]\n", "needs a name"),
        ("conv.yaml", "conversations:\n  - when: executor\n", "must be a mapping with a `when`"),
    ],
)
def test_a_script_that_does_not_parse_is_one_clear_line(
    tmp_path: Path, name: str, text: str, words: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScriptError) as caught:
        ScriptedModel.from_file(path)
    line = caught.value.line()
    assert words in line
    assert str(path) in line
    assert "\n" not in line
    assert caught.value.exit_code == 2


def test_a_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="cannot read it"):
        get_model(f"scripted:{tmp_path / 'missing.yaml'}")


# choosing models by name --------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["gpt-4", "anthropic:", "scripted:", "openai:", "ollama:llama3", ""]
)
def test_an_unknown_model_name_lists_the_valid_forms(name: str) -> None:
    with pytest.raises(UsageError) as caught:
        get_model(name)
    assert "anthropic:<model id>" in caught.value.message
    assert "openai:<model>" in caught.value.message
    assert "scripted:<path" in caught.value.message


def test_get_model_wraps_in_retries_without_waiting_for_scripts(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text(
        "replies:\n  - error: {class: transient, message: busy, times: 2}\n  - text: ok\n",
        encoding="utf-8",
    )
    model = get_model(f"scripted:{script}", Config(max_retries=2))
    assert isinstance(model, ResilientModel)
    waits: list[float] = []
    model.sleep = waits.append
    assert model.complete(request()).text == "ok"
    assert model.last_call.attempts == 3
    assert waits == []  # a script is never rate limited: no backoff unless it says retry_after


def test_a_scripted_model_falls_back_only_to_a_scripted_model(tmp_path: Path) -> None:
    primary = tmp_path / "p.yaml"
    primary.write_text("replies:\n  - error: {class: model_unavailable, message: gone}\n")
    backup = tmp_path / "b.yaml"
    backup.write_text("replies:\n  - text: from backup\n")
    # the default fallback is an anthropic model: a scripted run never reaches for it
    with pytest.raises(ModelError, match="gone"):
        get_model(f"scripted:{primary}").complete(request())
    model = get_model(f"scripted:{primary}", Config(fallback_model=f"scripted:{backup}"))
    assert model.complete(request()).text == "from backup"
    assert model.name == f"scripted:{backup}"


def test_a_bad_fallback_name_is_reported_up_front(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("replies:\n  - text: ok\n")
    with pytest.raises(UsageError, match="unknown fallback_model 'haiku'"):
        get_model(f"scripted:{script}", Config(fallback_model="haiku"))


def test_a_one_shot_role_is_answered_by_its_first_reply_whatever_turns_it_carries() -> None:
    model = ScriptedModel(
        {
            "conversations": [
                {"when": {"purpose": "compactor"}, "replies": [{"text": "the summary"}]},
                {"when": {"purpose": "executor"}, "replies": [{"text": "turn 0"}]},
            ]
        }
    )
    turns = [Message.user("go"), Message.assistant("one"), Message.user("more")]
    carried = Request([SystemPart("rules")], turns, purpose="compactor", phase=1)
    assert carried.turn == 1 and model.complete(carried).text == "the summary"
    # any other role still answers by its turn
    with pytest.raises(ModelError, match="no reply for turn 1"):
        model.complete(Request([SystemPart("rules")], turns, purpose="executor", phase=1))
