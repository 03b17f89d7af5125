"""The source of one cited symbol or line, so `changed` means the cited code changed.

A citation with a symbol changed when the symbol's own source changed: Python through
`ast` (the definition's text, `Class.method` included); TypeScript, JavaScript, Go, Rust
and Java through their grammars (the definition node's text, `Owner.member` included:
see `grammars`); other files by the block that starts at the line defining the name (a
line holding the name and a definition keyword, or `name:` / `"name":` / `[name]` for
config files and Makefiles) and runs while the lines are indented deeper, closing line
included. A citation with a line and no symbol changed
when that line's text is no longer in the file. When the symbol cannot be found on either
side, the whole file is compared.
"""

from __future__ import annotations

import ast
import re

from orchestrator.memory import grammars

_DEF_WORDS = (
    r"(?:def|class|func|function|fn|struct|interface|type|enum|trait|impl|const|let|var|"
    r"export|pub|module|macro_rules!|static|final|public|private|protected|async|val)"
)


def symbol_source(text: str, symbol: str, path: str) -> str | None:
    """The text of `symbol`'s definition in `text` (the file at `path`); None if absent."""
    symbol = symbol.strip().removesuffix("()")
    if path.endswith((".py", ".pyi")):
        found = _python_source(text, symbol)
        if found is not None:
            return found
    language = grammars.language_of(path)
    if language is not None and symbol.replace(".", "").isidentifier():
        found = grammars.source_of(text.encode(), symbol, language)
        if found is not None:
            return found
    return _block_source(text, symbol)


def line_text(text: str, line: int) -> str | None:
    lines = text.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else None


def _python_source(text: str, symbol: str) -> str | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    parts = symbol.split(".")
    body: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for part in parts:
        node = next((n for n in body if _defines(n, part)), None)
        if node is None:
            return None
        body = getattr(node, "body", [])
    return ast.get_source_segment(text, node) if node is not None else None


def _defines(node: ast.stmt, name: str) -> bool:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name == name
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and node.target.id == name
    return False


def _block_source(text: str, symbol: str) -> str | None:
    name = re.escape(symbol.rsplit(".", 1)[-1])
    head = re.compile(
        rf"^\s*(?:{_DEF_WORDS}\b.*?(?<![\w-]){name}(?![\w-])|[\"']?{name}[\"']?\s*[:=(]"
        rf"|\[(?:[\w.-]+\.)?[\"']?{name}[\"']?\])"
    )
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not head.match(line):
            continue
        indent = len(line) - len(line.lstrip())
        end = i + 1
        while end < len(lines):
            nxt = lines[end]
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                if nxt.strip()[:1] in "})]" or nxt.strip() == "end":
                    end += 1
                break
            end += 1
        return "\n".join(lines[i:end]).strip()
    return None


def symbol_line(text: str, symbol: str, path: str) -> int | None:
    """The line where `symbol` is defined in `text` (the file at `path`); None if absent."""
    source = symbol_source(text, symbol, path)
    if source is None:
        return None
    head = source.splitlines()[0].strip() if source.strip() else ""
    found = [i for i, line in enumerate(text.splitlines(), start=1) if line.strip() == head]
    return found[0] if len(found) == 1 else None
