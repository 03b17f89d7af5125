"""Symbols through tree-sitter grammars: definitions, class members and re-exports of
TypeScript, JavaScript, Go, Rust and Java, Python's re-exports, names only in comments or
strings, `changed` by the definition's own text, and the `git grep` prefilter, on real
files in a real git repository."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import verify_all

from orchestrator.memory.codeindex import Facts, TreeState
from orchestrator.memory.record import record
from orchestrator.memory.verify import verify_memories
from orchestrator.store.layout import Layout
from orchestrator.store.memfile import Citation
from orchestrator.store.repo import RepoMemoryStore

SOURCES = {
    "sdk/server.ts": """\
import { Protocol } from "./protocol";

// McpLegacyServer was removed; setHandlerLegacy too.
export class McpServer extends Protocol {
  private handlers = new Map<string, Handler>();

  tool(name: string, cb: Handler): void {
    this.handlers.set(name, cb);
  }

  static create(): McpServer {
    const LocalHelper = 1;
    return new McpServer();
  }
}

export interface Handler {
  (args: unknown): Promise<void>;
  timeoutMs: number;
}

export enum Mode { Strict, Lenient = 2 }

const banner = "StringOnlyName is mentioned here";
""",
    "sdk/index.ts": """\
export { McpServer as Server, type Handler } from "./server";
export * as types from "./types";
export * from "./everything";
""",
    "web/cart.js": """\
class Cart {
  total() { return 0; }
}
module.exports = { Cart };
exports.emptyCart = () => new Cart();
""",
    "server/server.go": """\
package server

// TODO: CommentOnlyFunc should come back.
type Server struct {
	Addr, Name string
}

type Store interface {
	Get(key string) ([]byte, error)
}

func (s *Server) ListenAndServe() error {
	msg := "StringOnlyGo"
	_ = msg
	return nil
}

func New() *Server { return &Server{} }
""",
    "crates/core/src/lib.rs": """\
pub use crate::engine::{Engine, Config as EngineConfig};
use std::fmt::Display;

/// DocCommentOnly is described here.
pub struct Database {
    pub path: String,
}

impl Database {
    pub fn open(path: &str) -> Self {
        Database { path: path.to_string() }
    }
}

pub trait Storage {
    fn read(&self) -> Vec<u8>;
}

impl Storage for Database {
    fn read(&self) -> Vec<u8> { Vec::new() }
}

pub enum Level { Low, High }
""",
    "src/main/java/app/Service.java": """\
package app;

/* JavaCommentOnly */
public class Service {
    private int retries;

    public void start() {
        String s = "JavaStringOnly";
    }

    public enum State { RUNNING, STOPPED }
}
""",
    "pkg/__init__.py": """\
from pkg.client import Client as Client
from pkg import transports

__all__ = ["Client", "transports", "connect"]
""",
    "pkg/client.py": "class Client:\n    def send(self):\n        return 1\n",
    "pkg/transports.py": "def connect():\n    return None\n",
}


@pytest.fixture
def polyglot(layout: Layout, commit_all: Callable[..., str]) -> Layout:
    for path, text in SOURCES.items():
        (layout.root / path).parent.mkdir(parents=True, exist_ok=True)
        (layout.root / path).write_text(text)
    commit_all(layout.root, "polyglot code")
    return layout


def cite(path: str, symbol: str) -> dict[str, Any]:
    return {"citations": (Citation(path, None, symbol),)}


HOLD = {
    "ts-class": ("The server class.", cite("sdk/server.ts", "McpServer")),
    "ts-method": ("Tools register here.", cite("sdk/server.ts", "McpServer.tool")),
    "ts-field": ("Handlers are kept in a map.", cite("sdk/server.ts", "handlers")),
    "ts-interface-member": ("`Handler.timeoutMs` bounds a call.", {}),
    "ts-enum-member": ("`Mode.Lenient` is the default.", {}),
    "ts-body-member": ("Register tools with `McpServer.tool()`.", {}),
    "ts-reexport": ("The package exports the server.", cite("sdk/index.ts", "Server")),
    "ts-namespace-export": ("Types come as one namespace.", cite("sdk/index.ts", "types")),
    "js-commonjs": ("The cart is exported.", cite("web/cart.js", "emptyCart")),
    "js-member": ("`Cart.total()` sums the cart.", {}),
    "go-method": ("`Server.ListenAndServe` blocks.", {}),
    "go-cited-method": ("It blocks.", cite("server/server.go", "Server.ListenAndServe")),
    "go-field": ("`Server.Addr` is host:port.", {}),
    "go-interface": ("`Store.Get` reads a key.", {}),
    "go-function": ("Build one with `New()`.", {}),
    "rust-impl": ("`Database.open` opens a file.", {}),
    "rust-trait-impl": ("It reads.", cite("crates/core/src/lib.rs", "Database.read")),
    "rust-pub-use": ("The engine is re-exported.", cite("crates/core/src/lib.rs", "Engine")),
    "rust-pub-use-alias": ("Config too.", cite("crates/core/src/lib.rs", "EngineConfig")),
    "rust-variant": ("`Level.High` is the loudest.", {}),
    "java-method": ("`Service.start()` starts it.", {}),
    "java-nested": ("`Service.State` has two values.", {}),
    "java-field": ("Retries.", cite("src/main/java/app/Service.java", "Service.retries")),
    "py-reexport": ("Use `pkg.Client` from callers.", {}),
    "go-cited-use": ("The server starts here.", cite("server/server.go", "ListenAndServe")),
    "ts-cited-string": ("The banner names it.", cite("sdk/server.ts", "StringOnlyName")),
    "rust-cited-import": ("It prints.", cite("crates/core/src/lib.rs", "Display")),
    "ts-cited-local": ("A helper.", cite("sdk/server.ts", "LocalHelper")),
    "py-all": ("`pkg.connect` is listed in `__all__`.", {}),
}

STALE = {
    "ts-gone-method": (
        "`McpServer.setHandlerLegacy()` registers.",
        "McpServer has no member setHandlerLegacy",
    ),
    "ts-comment-only": (
        "The old server.",
        "McpLegacyServer is not defined in sdk/server.ts",
        cite("sdk/server.ts", "McpLegacyServer"),
    ),
    "ts-string-only": (
        "`StringOnlyName` is a class.",
        "StringOnlyName is neither defined nor used in the code",
    ),
    "ts-body-comment-only": (
        "`McpLegacyServer` serves the old protocol.",
        "McpLegacyServer is neither defined nor used in the code",
    ),
    "go-gone-method": ("`Server.Shutdown` stops it.", "Server has no member Shutdown"),
    "go-comment-only": ("Call `CommentOnlyFunc()`.", "CommentOnlyFunc() is not defined in the code"),
    "go-string-only": ("Call `StringOnlyGo()`.", "StringOnlyGo() is not defined in the code"),
    "rust-gone-item": ("`Database.close` flushes.", "Database has no member close"),
    "py-not-reexported": ("`pkg.Display` is re-exported.", "pkg does not define Display"),
    "rust-doc-comment": ("`DocCommentOnly` is a type.", "DocCommentOnly is neither defined nor used in the code"),
    "java-gone-method": ("`Service.stop()` stops it.", "Service has no member stop"),
    "java-comment-only": ("`JavaCommentOnly` is a class.", "JavaCommentOnly is neither defined nor used in the code"),
    "py-gone-reexport": ("Use `pkg.Session` from callers.", "pkg does not define Session"),
}  # fmt: skip


def test_definitions_members_and_reexports_hold_and_names_in_comments_do_not(
    polyglot: Layout, put: Callable[..., Any]
) -> None:
    for name, (fact, extra) in HOLD.items():
        put(name, fact, **({"citations": ()} | extra))
    for name, (fact, _, *extra) in STALE.items():
        put(name, fact, **({"citations": ()} | (extra[0] if extra else {})))
    found = verify_all(polyglot)
    assert {n: found[n].result for n in HOLD} == dict.fromkeys(HOLD, "ok")
    assert {n: found[n].result for n in STALE} == dict.fromkeys(STALE, "stale")
    assert {n: found[n].failures[0].reason for n in STALE} == {
        n: reason for n, (_, reason, *_) in STALE.items()
    }


def test_a_star_reexport_cannot_be_checked_name_by_name(
    polyglot: Layout, put: Callable[..., Any]
) -> None:
    put("star", "Anything of everything.", citations=(Citation("sdk/index.ts", None, "Whatever"),))
    assert verify_all(polyglot)["star"].result == "ok"


@pytest.mark.parametrize(
    ("path", "symbol", "elsewhere", "inside"),
    [
        (
            "server/server.go",
            "Server.ListenAndServe",
            ("func New() *Server { return &Server{} }", "func New() *Server { return nil }"),
            ("return nil\n}\n\nfunc New", "return errServe\n}\n\nfunc New"),
        ),
        (
            "sdk/server.ts",
            "McpServer.tool",
            ("Mode { Strict, Lenient = 2 }", "Mode { Strict, Lenient = 3 }"),
            ("this.handlers.set(name, cb);", "this.handlers.set(name.trim(), cb);"),
        ),
        (
            "crates/core/src/lib.rs",
            "Database.open",
            ("pub enum Level { Low, High }", "pub enum Level { Low, Mid, High }"),
            ("path.to_string()", "path.to_owned()"),
        ),
        (
            "src/main/java/app/Service.java",
            "Service.start",
            ("RUNNING, STOPPED", "RUNNING, STOPPED, FAILED"),
            ('"JavaStringOnly"', '"started"'),
        ),
    ],
)
def test_changed_compares_the_cited_definitions_own_text(
    polyglot: Layout,
    put: Callable[..., Any],
    commit_all: Callable[..., str],
    path: str,
    symbol: str,
    elsewhere: tuple[str, str],
    inside: tuple[str, str],
) -> None:
    put("cited", "It holds.", citations=(Citation(path, None, symbol),))
    commit_all(polyglot.root, "memory")
    memories = RepoMemoryStore(polyglot).load_all().memories
    assert record(polyglot, memories, verify_memories(polyglot, memories)) == ["cited"]
    commit_all(polyglot.root, "recorded")
    memories = RepoMemoryStore(polyglot).load_all().memories

    source = polyglot.root / path
    text = source.read_text()
    assert elsewhere[0] in text and inside[0] in text
    source.write_text(text.replace(*elsewhere))
    commit_all(polyglot.root, "an edit beside the cited definition")
    assert verify_memories(polyglot, memories)[0].result == "ok"

    source.write_text(source.read_text().replace(*inside))
    commit_all(polyglot.root, "an edit of the cited definition")
    found = verify_memories(polyglot, memories)[0]
    assert (found.result, found.changed) == ("changed", (path,))


def test_the_whole_tree_index_reads_only_files_that_hold_the_names_asked_for(
    polyglot: Layout, commit_all: Callable[..., str]
) -> None:
    for i in range(20):
        (polyglot.root / "filler" / f"f{i}.go").parent.mkdir(exist_ok=True)
        (polyglot.root / "filler" / f"f{i}.go").write_text(f"package filler\n\nfunc F{i}() {{}}\n")
    commit_all(polyglot.root, "filler")
    facts = Facts(TreeState.read(polyglot.root), None)
    index = facts.index(["ListenAndServe", "Mode"])
    assert facts.indexed == {"server/server.go", "sdk/server.ts"}
    assert "Server.ListenAndServe" in index.qualified and "Mode.Strict" in index.qualified
    assert "F3" not in index.defs
    index = facts.index(["F3", "Mode"])  # only the new name is searched for
    assert facts.indexed == {"server/server.go", "sdk/server.ts", "filler/f3.go"}
    assert "F3" in index.defs


def test_a_tracked_link_to_a_folder_does_not_send_the_whole_tree_to_the_parser(
    polyglot: Layout, commit_all: Callable[..., str]
) -> None:
    (polyglot.root / "filler").mkdir()
    (polyglot.root / "filler" / "f1.go").write_text("package filler\n\nfunc F1() {}\n")
    (polyglot.root / "linked.go").symlink_to("filler", target_is_directory=True)
    commit_all(polyglot.root, "a link git tracks, to a folder, with a code file's name")
    facts = Facts(TreeState.read(polyglot.root), None)
    facts.index(["ListenAndServe"])
    assert facts.indexed == {"server/server.go"}


def test_a_tracked_link_out_of_the_repository_is_not_read(
    polyglot: Layout, commit_all: Callable[..., str], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.go").write_text("package secret\n\nfunc LeakedName() {}\n")
    (polyglot.root / "leak.go").symlink_to(outside / "secret.go")
    (polyglot.root / "filler").mkdir()
    (polyglot.root / "filler" / "f1.go").write_text("package filler\n\nfunc F1() {}\n")
    (polyglot.root / "inside.go").symlink_to("filler/f1.go")
    commit_all(polyglot.root, "links git tracks: one out of the repository, one inside it")
    facts = Facts(TreeState.read(polyglot.root), None)
    index = facts.index(["LeakedName", "F1"])
    assert "LeakedName" not in index.defs and "LeakedName" not in index.names
    assert "F1" in index.defs
    assert facts.of("leak.go") is not None and facts.of("leak.go").lines == 0
    assert facts.of("inside.go") is not None and facts.of("inside.go").lines == 3


def test_grammars_load_only_when_a_file_of_their_language_is_read(
    layout: Layout, put: Callable[..., Any]
) -> None:
    put("py", "`parse_config()` reads the config; `Loader.load` caches.")
    probe = (
        "import sys\nfrom pathlib import Path\n"
        "from orchestrator.memory.verify import verify_memories\n"
        "from orchestrator.store.layout import Layout\n"
        "from orchestrator.store.repo import RepoMemoryStore\n"
        "layout = Layout(Path.cwd())\n"
        "found = verify_memories(layout, RepoMemoryStore(layout).load_all().memories)\n"
        "print([v.result for v in found], sorted(m for m in sys.modules if 'tree_sitter' in m))\n"
    )

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", probe], cwd=layout.root, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert run().split() == ["['ok']", "[]"]  # web/cart.js holds neither name
    put("js", "`renderCart()` draws the cart.")
    out = run()
    assert "'tree_sitter_javascript'" in out and "'tree_sitter_go'" not in out
