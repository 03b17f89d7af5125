"""Raw turns on disk: `transcripts/<n>.jsonl` in the task folder, append-only, never deleted.

One line per message, in turn order: the message's own `Message.to_dict()` (`role`,
`content`), with where it stood:

    {"role": "user", "content": [...], "v": 1, "phase": 2, "turn": 37, "ts": "..."}

`turn` is the message's position in the phase's conversation, counting from 0 and
continuing across compactions. A file is opened with O_APPEND and every append is fsynced
(and the folder too when the file is new) before the caller drops or masks anything: a
crash leaves the raw turns on disk. A torn last line (power cut mid-write) is skipped by
the reader.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.checks.secrets import redact_data
from orchestrator.messages import Message
from orchestrator.store.fs import fsync_dir
from orchestrator.store.tasks import TaskFolder

_NAME = re.compile(r"^(\d+)\.jsonl$")


@dataclass(frozen=True)
class LineRef:
    """Where one appended line landed: 1-based line number and its byte span."""

    line: int
    byte_start: int
    byte_end: int


@dataclass(frozen=True)
class TranscriptLine:
    number: int  # transcript file number (the n of <n>.jsonl)
    line: int  # 1-based line number in that file
    byte_start: int
    byte_end: int  # exclusive, after the newline
    phase: int | None
    turn: int
    message: Message

    @property
    def file(self) -> str:
        return relative_name(self.number)


def relative_name(number: int) -> str:
    """`transcripts/3.jsonl`: how events, placeholders and episodes name a transcript."""
    return f"transcripts/{number}.jsonl"


def transcript_numbers(task: TaskFolder) -> list[int]:
    try:
        names = os.listdir(task.transcripts)
    except FileNotFoundError:
        return []
    return sorted(int(m[1]) for m in map(_NAME.match, names) if m)


def transcript_path(task: TaskFolder, number: int) -> Path:
    return task.transcripts / f"{number}.jsonl"


def line_dict(phase: int | None, turn: int, message: Message, ts: str) -> dict[str, Any]:
    return {**message.to_dict(), "v": 1, "phase": phase, "turn": turn, "ts": ts}


class Segment:
    """One transcript file being appended to by this process (never rewritten)."""

    def __init__(self, task: TaskFolder, number: int, phase: int | None) -> None:
        self.task = task
        self.number = number
        self.phase = phase
        self.path = transcript_path(task, number)
        self.lines = 0
        self.size = 0

    @classmethod
    def open_new(cls, task: TaskFolder, phase: int | None) -> Segment:
        """The next free transcript number, claimed by creating the file exclusively."""
        task.transcripts.mkdir(parents=True, exist_ok=True)
        number = (transcript_numbers(task) or [0])[-1] + 1
        while True:
            path = transcript_path(task, number)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                number += 1
                continue
            os.close(fd)
            fsync_dir(task.transcripts)
            return cls(task, number, phase)

    @property
    def name(self) -> str:
        return relative_name(self.number)

    def append(self, lines: list[dict[str, Any]]) -> list[LineRef]:
        """Append whole lines, fsync, and say where each one landed."""
        if not lines:
            return []
        refs = []
        chunks = []
        offset = self.size
        for raw in lines:
            data = (
                json.dumps(redact_data(raw), ensure_ascii=False, separators=(",", ":")) + "\n"
            ).encode()
            self.lines += 1
            refs.append(LineRef(self.lines, offset, offset + len(data)))
            offset += len(data)
            chunks.append(data)
        payload = b"".join(chunks)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        self.size = offset
        return refs


def read_transcript(task: TaskFolder, number: int) -> list[TranscriptLine]:
    """Every whole line of transcript `number` (a torn or unreadable line is skipped)."""
    try:
        data = transcript_path(task, number).read_bytes()
    except FileNotFoundError:
        return []
    return list(_parse(number, data))


def _parse(number: int, data: bytes) -> Iterator[TranscriptLine]:
    start = 0
    line = 0
    while start < len(data):
        end = data.find(b"\n", start)
        if end == -1:
            return  # a torn last line: the write was cut
        line += 1
        try:
            raw = json.loads(data[start:end])
            message = Message.from_dict(raw)
            yield TranscriptLine(
                number, line, start, end + 1, raw.get("phase"), int(raw["turn"]), message
            )
        except (ValueError, KeyError, TypeError):
            pass
        start = end + 1


def read_span(task: TaskFolder, file: str, byte_start: int, byte_end: int) -> list[dict[str, Any]]:
    """The decoded lines between two byte offsets of a transcript (provenance look-up)."""
    found = _NAME.match(Path(file).name)
    if not found:
        raise ValueError(f"not a transcript name: {file}")
    with transcript_path(task, int(found[1])).open("rb") as fh:
        fh.seek(byte_start)
        data = fh.read(byte_end - byte_start)
    return [json.loads(chunk) for chunk in data.split(b"\n") if chunk.strip()]


def iter_lines(task: TaskFolder, *, after: tuple[int, int] = (0, 0)) -> Iterator[TranscriptLine]:
    """Lines of every transcript in order, starting after (file number, line number)."""
    for number in transcript_numbers(task):
        if number < after[0]:
            continue
        for entry in read_transcript(task, number):
            if (number, entry.line) > after:
                yield entry
