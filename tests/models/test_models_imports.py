"""The SDKs stay out of the commands that do not call a model, and bad input is one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from orchestrator.store.layout import Layout

PROBE = """
import sys
{prelude}
from orchestrator.cli import main
sys.argv = ["orch", *{args!r}]
try:
    main()
except SystemExit:
    pass
SDKS = (
    "anthropic",
    "httpx2",
    "openai",
    "orchestrator.models.anthropic_adapter",
    "orchestrator.models.openai_adapter",
)
loaded = sorted(m for m in SDKS if m in sys.modules)
print("LOADED", ",".join(loaded) or "-", file=sys.stderr)
"""


def loaded_after(args: list[str], cwd: Path, prelude: str = "") -> str:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args, prelude=prelude)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
    )
    lines = [line for line in result.stderr.splitlines() if line.startswith("LOADED ")]
    assert lines, result.stderr
    return lines[-1].split(" ", 1)[1]


def test_orch_help_does_not_import_the_sdk(layout: Layout) -> None:
    assert loaded_after(["--help"], layout.root) == "-"
    # the probe does see the SDK when something imports it
    seen = loaded_after(["--help"], layout.root, "import orchestrator.models.anthropic_adapter")
    assert seen == "anthropic,httpx2,orchestrator.models.anthropic_adapter"
    seen = loaded_after(["--help"], layout.root, "import orchestrator.models.openai_adapter")
    assert seen == "httpx2,openai,orchestrator.models.openai_adapter"


def test_memory_commands_do_not_import_the_sdk(layout: Layout) -> None:
    assert loaded_after(["memory", "list"], layout.root) == "-"
    assert loaded_after(["memory", "--help"], layout.root) == "-"


def test_a_scripted_model_does_not_import_the_sdk(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("replies:\n  - text: hi\n", encoding="utf-8")
    code = (
        "import sys\n"
        "from orchestrator.models import get_model\n"
        "from orchestrator.messages import Message, Request\n"
        f"reply = get_model('scripted:{script}').complete(Request([], [Message.user('x')]))\n"
        "print(reply.text, 'anthropic' in sys.modules, 'openai' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "hi False False"


def test_building_an_openai_model_imports_only_the_openai_sdk(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from orchestrator.models import get_model\n"
        "from orchestrator.config import Config\n"
        "get_model('openai:llama3.1', Config(fallback_model=None))\n"
        "print('openai' in sys.modules, 'anthropic' in sys.modules)\n"
    )
    env = {**os.environ, "OPENAI_API_KEY": "unused"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    ).stdout
    assert out.strip() == "True False"
