"""Progress at the terminal while a task runs (`orch run`, `approve`, `resume`, `plan`).

Three ways to show it, picked by `progress_for`:
- `Lines`: one plain line per event that matters (and one when a gate starts), no ANSI
  codes: for a pipe, CI, a test;
- `LiveBoard`: the same lines with colour, under them a live panel: the current phase, what
  runs now and for how long (a model call, a tool, a gate), the last lines a running gate
  printed, the model calls and tokens so far;
- `Silent` (`--quiet`): nothing until the summary.

They read the engine's events (as a listener of the journal) and its `Activity` (what
starts now, what a gate prints); they never raise into the engine, and a closed stdout
ends the printing, not the task.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

import click
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

from orchestrator.checks.secrets import redact
from orchestrator.engine.activity import Doing
from orchestrator.engine.api import Options
from orchestrator.engine.enums import Step
from orchestrator.engine.progress import Spent, describe
from orchestrator.engine.state import TaskState
from orchestrator.events.log import Event

TAIL = 6  # lines of a running gate's output on the live panel
OUTPUT_REFRESH = 0.1  # seconds between two refreshes for a gate's output
PARTIAL = 1000  # characters kept of a line not ended yet
# the events that end what was running (the panel then shows no running step until the next)
ENDS = {"model_call", "tool_call", "verdict"}


class _Console(Console):
    """rich's console, except that a closed stdout ends the printing, not the process
    (rich's default exits with code 1, and would leave the task half-way)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        silence_stdout()


def silence_stdout() -> None:
    """Point stdout at the null device (Python's recipe for a closed pipe): later writes,
    and the interpreter's last flush, then succeed quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def make_console(file: TextIO | None = None) -> Console:
    return _Console(file=file, highlight=False, soft_wrap=True)


class Lines:
    """One line per event that matters, and one when a gate starts (a slow suite does not
    look hung); colour only on a terminal."""

    def __init__(self, console: Console, *, tools: bool = True) -> None:
        self.console = console
        self.tools = tools

    def __call__(self, event: Event, state: TaskState) -> None:
        if event.event_type == "tool_call" and not self.tools:
            return
        shown = describe(event)
        if shown is not None:
            self.line(*shown)

    def line(self, text: str, style: str = "") -> None:
        self.console.print(text, style=style or None, markup=False)

    def note(self, text: str) -> None:
        self.line(f"note: {text}", "yellow")

    def begin(self, kind: Doing, what: str) -> None:
        if kind is Doing.GATE:
            self.line(f"  running {what}", "dim")

    def output(self, text: str) -> None:
        return None

    def close(self) -> None:
        return None


class Silent(Lines):
    """`--quiet`: no progress; notes go to stderr, the summary comes at the end."""

    def __call__(self, event: Event, state: TaskState) -> None:
        return None

    def note(self, text: str) -> None:
        click.echo(f"note: {text}", err=True)

    def begin(self, kind: Doing, what: str) -> None:
        return None


class LiveBoard(Lines):
    """The event lines, and under them a panel that says what runs now and for how long."""

    def __init__(self, console: Console, *, tools: bool = True) -> None:
        super().__init__(console, tools=tools)
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.phase = ""  # "Phase 2 of 3: <title>"
        self.state = ""
        self.running = ""
        self.since = self.started
        self.tail: list[str] = []
        self.partial = ""  # the gate output's last line, not ended yet
        self.spent = Spent()
        self.spinner = Spinner("dots", style="cyan")
        self.shown_output = 0.0  # when the running step's output was last shown
        self.live = Live(
            console=console,
            get_renderable=self.render,
            refresh_per_second=4,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.live.start()

    def __call__(self, event: Event, state: TaskState) -> None:
        with self.lock:
            if event.event_type == "model_call":
                self.spent.add(event.payload)
            self.state = str(state.state or "")
            if event.payload.get("step") in (Step.PHASE_STARTED, Step.PHASE_RESTARTED):
                shown = describe(event)
                of = f" of {len(state.order)}" if state.order else ""
                self.phase = shown[0].replace(":", of + ":", 1) if shown else ""
            if event.event_type in ENDS:
                self.running = ""
        super().__call__(event, state)

    def begin(self, kind: Doing, what: str) -> None:
        with self.lock:
            self.running = what
            self.since = time.monotonic()
            self.tail, self.partial = [], ""
            self.shown_output = 0.0
        self.live.refresh()

    def output(self, text: str) -> None:
        """Keep the output's last lines (a carriage return ends a line too: progress bars);
        show them at once (at most ten times a second, and always the first output of a
        step)."""
        with self.lock:
            text = (self.partial + text).replace("\r\n", "\n").replace("\r", "\n")
            *ended, partial = text.split("\n")
            self.partial = partial[-PARTIAL:]
            self.tail = [*self.tail, *(line for line in ended if line.strip())][-TAIL:]
        now = time.monotonic()
        if now - self.shown_output >= OUTPUT_REFRESH:
            self.shown_output = now
            self.live.refresh()

    def close(self) -> None:
        self.live.stop()

    def render(self) -> Group:
        with self.lock:
            now = time.monotonic()
            head = Text.assemble(
                (self.phase or self.state or "Starting", "bold cyan"),
                ("  " + self.state if self.phase and self.state else "", "dim"),
            )
            rows: list[RenderableType] = [head]
            if self.running:
                self.spinner.update(
                    text=Text.assemble(
                        ("running ", "dim"), self.running, (f"  {now - self.since:.1f} s", "yellow")
                    )
                )
                rows.append(self.spinner)
                shown = [*self.tail, self.partial] if self.partial.strip() else self.tail
                for line in shown[-TAIL:]:
                    rows.append(
                        Text(
                            "  | " + redact(line.rstrip()),
                            style="dim",
                            no_wrap=True,
                            overflow="ellipsis",
                        )
                    )
            rows.append(
                Text(f"{self.spent.text()}, {clock(now - self.started)} so far", style="dim")
            )
        return Group(*rows)


def clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


@contextmanager
def progress_for(
    options: Options,
    *,
    quiet: bool = False,
    tools: bool = True,
    console: Console | None = None,
    shown: Lines | None = None,
) -> Iterator[Lines]:
    """Show a run's progress through `options` while the block runs: a live board on a
    terminal, plain lines otherwise, nothing with `quiet` (or `shown`, made by the caller)."""
    console = console or make_console()
    if shown is None:
        if quiet:
            shown = Silent(console)
        elif console.is_terminal:
            shown = LiveBoard(console, tools=tools)
        else:
            shown = Lines(console, tools=tools)
    options.listeners.append(shown)
    options.activity = shown
    options.notices = shown.note
    try:
        yield shown
    finally:
        shown.close()
