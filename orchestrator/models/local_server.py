"""A scripted model API on 127.0.0.1: what every local server orch tests against shares.

A `LocalServer` listens on 127.0.0.1 (port 0: the system picks one), records every request
(method, path, headers, JSON body), and answers each from a step its subclass picks
(`next_step`); its handler (a `ScriptedHandler` subclass) turns the step into bytes. This
module holds the lifecycle (start, stop hanging up every open connection, a stop-aware
wait), the `Slow` step both protocols know, and the byte-level answers: a JSON body, any
bytes, and a chunked stream that can end cleanly or be cut in the middle of an event.

The Messages API server (`messages_server.py`) is one; the tests' Chat Completions server
is the other.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Slow:
    """Wait `seconds` before answering `then` (for client timeouts)."""

    seconds: float
    then: Any


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def betas(self) -> list[str]:
        value = self.headers.get("anthropic-beta", "")
        return [b.strip() for b in value.split(",") if b.strip()]


class LocalServer:
    """Lifecycle and records; subclasses choose the step for a request (`next_step`)."""

    handler: type[ScriptedHandler]

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.unexpected: list[str] = []
        self.connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        handler = type("Handler", (self.handler,), {"owner": self})
        self.httpd = _QuietServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> LocalServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and hang up every open connection: the server is gone."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        with self._lock:
            open_connections = list(self.connections)
        for conn in open_connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self.thread.join(timeout=5)

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True if the server is stopping."""
        return self._stopping.wait(seconds)

    def next_step(self, path: str, body: Any) -> Any:
        raise NotImplementedError


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, *_: Any) -> None:
        return  # a client that hung up (a killed CLI, a timeout test) is not the server's failure


class ScriptedHandler(BaseHTTPRequestHandler):
    """Reads and records a request, waits out `Slow` steps, and hands the step to `answer`."""

    owner: LocalServer
    protocol_version = "HTTP/1.1"
    request_id_header = "request-id"

    def log_message(self, *_: Any) -> None:  # keep test output clean
        return

    def setup(self) -> None:
        super().setup()
        with self.owner._lock:
            self.owner.connections.add(self.connection)

    def finish(self) -> None:
        with self.owner._lock:
            self.owner.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = self.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.owner.requests.append(Recorded(self.command, path, headers, body))
        step = self.owner.next_step(path, body)
        try:
            while isinstance(step, Slow):
                if self.owner.wait(step.seconds):
                    return
                step = step.then
            self.answer(step, body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (a timeout test)

    do_GET = do_POST

    def answer(self, step: Any, body: Any) -> None:
        raise NotImplementedError

    def send_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self.send_bytes(status, json.dumps(data).encode(), "application/json", headers)

    def send_bytes(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.send_header(self.request_id_header, "req_local")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def open_stream(self, extra: dict[str, str] | None = None) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("cache-control", "no-cache")
        self.send_header(self.request_id_header, "req_local")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()

    def send_chunks(self, pieces: Iterable[bytes]) -> None:
        for data in pieces:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    def close_stream(self, cut: bytes | None = None) -> None:
        """End the chunked body, or, given `cut`, announce a whole event, send half of it
        (`cut` is that half) and hang up: a stream cut mid-event."""
        if cut is not None:
            self.wfile.write(f"{len(cut) * 2:x}\r\n".encode() + cut)
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
