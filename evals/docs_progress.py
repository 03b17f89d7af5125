"""Draw docs/progress.svg, the README's picture of `orch run`'s live progress on a terminal.

    python -m evals.docs_progress --write    # run the demo's task and redraw the picture
    python -m evals.docs_progress            # run it, print the frame as text

It runs the demo's sample task for real (the scripted model, the real test and lint gates)
with the live board `orch run` shows on a terminal, and keeps one frame: the moment phase
1's first test gate ends (it fails), with the event lines above the board as a terminal
of `ROWS` rows shows them. Durations differ from run to run, so the picture is not checked.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.text import Text

from orchestrator.commands._progress import LiveBoard, progress_for
from orchestrator.engine.activity import Doing
from orchestrator.engine.api import Options, start
from orchestrator.engine.demo import TASK, prepare_repo, sample_paths
from orchestrator.store.layout import Layout

ROOT = Path(__file__).resolve().parent.parent
PICTURE = ROOT / "docs" / "progress.svg"
WIDTH = 100
ROWS = 30  # the terminal's height in the picture
SHOWN_GATE = "tests_pass"


class Framed(LiveBoard):
    """The live board, keeping the lines it printed; at the first test gate's end (as the
    next step begins) it prints that frame on `picture`."""

    def __init__(self, console: Console, picture: Console) -> None:
        super().__init__(console)
        self.picture = picture
        self.printed: list[tuple[str, str]] = []
        self.framed = False

    def line(self, text: str, style: str = "") -> None:
        self.printed.extend((part, style) for part in text.split("\n"))
        super().line(text, style)

    def begin(self, kind: Doing, what: str) -> None:
        if not self.framed and self.running.startswith(SHOWN_GATE) and self.tail:
            board = self.render()
            above = ROWS - len(board.renderables) - 1
            for text, style in self.printed[-above:]:
                self.picture.print(Text(text, style=style), no_wrap=True, overflow="ellipsis")
            self.picture.print(board)
            self.framed = True
        super().begin(kind, what)


def draw() -> Console:
    """Run the demo's task with a framed board; the frame, on a recording console."""
    picture = Console(record=True, width=WIDTH, file=io.StringIO(), force_terminal=True)
    with tempfile.TemporaryDirectory() as tmp, sample_paths() as (sample, script):
        repo = prepare_repo(Path(tmp) / "wordstats", sample, python="python3")
        screen = Console(file=io.StringIO(), force_terminal=True, width=WIDTH)
        options = Options()
        board = Framed(screen, picture)
        with progress_for(options, console=screen, shown=board):
            start(
                Layout(repo),
                TASK,
                auto_approve=True,
                model=f"scripted:{script}",
                options=options,
            )
    if not board.framed:
        raise SystemExit(f"no frame: the {SHOWN_GATE} gate printed nothing")
    return picture


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {PICTURE.name}")
    args = parser.parse_args(argv)
    picture = draw()
    if args.write:
        picture.save_svg(str(PICTURE), title="orch run")
        print(f"wrote {PICTURE.relative_to(ROOT)}")
    else:
        sys.stdout.write(picture.export_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
