"""What a source file defines, through its tree-sitter grammar: definitions, class members,
re-exports, and the words of its code apart from its comments and strings.

TypeScript, TSX, JavaScript, Go, Rust and Java have a grammar here (the maintained grammar
wheels on PyPI); Python is read by `ast` in `codeindex`. A grammar is imported the first
time a file of its language is parsed, never at start-up.

A definition is named as the code names it: `name` for a top-level one, `Owner.name` for
a member (TypeScript and Java class, interface and enum members; a Go method on its
receiver's type and a struct's fields; a Rust `impl` block's items, a trait's, a struct's
fields and an enum's variants), nested owners joined by dots. Every definition counts
under its bare name as well, so `tool()` finds the method `McpServer.tool`. Re-exports are
the names a module hands on without defining them: `export { y } from`, `export * as ns`,
`pub use a::{b, c as d}`; `export * from` and `pub use a::*` hand on names this file does
not list (`Parsed.star`).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

_WORDS = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Grammar:
    """How one language's syntax tree names its definitions."""

    module: str  # the grammar wheel's module
    entry: str  # its function returning the language
    defines: frozenset[str]  # node types whose `name` field a definition names
    owners: frozenset[str]  # node types whose body holds members (`Owner.member`)
    bodies: frozenset[str]  # node types whose children are still module level
    comments: tuple[str, ...]
    strings: tuple[str, ...]


_TS_DEFINES = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "function_signature",
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "type_alias_declaration",
        "enum_declaration",
        "variable_declarator",
        "method_definition",
        "method_signature",
        "abstract_method_signature",
        "public_field_definition",
        "field_definition",
        "property_signature",
        "enum_assignment",
        "internal_module",
        "module",
    }
)
_TS_OWNERS = frozenset(
    {
        "class_declaration",
        "abstract_class_declaration",
        "class",
        "interface_declaration",
        "enum_declaration",
        "internal_module",
        "module",
        "type_alias_declaration",
    }
)
_TS_BODIES = frozenset(
    {
        "program",
        "export_statement",
        "lexical_declaration",
        "variable_declaration",
        "expression_statement",
        "ambient_declaration",
        "statement_block",
        "class_body",
        "interface_body",
        "object_type",
        "enum_body",
    }
)
_TS_STRINGS = ("string", "template_string")

GRAMMARS: dict[str, Grammar] = {
    "typescript": Grammar(
        "tree_sitter_typescript",
        "language_typescript",
        _TS_DEFINES,
        _TS_OWNERS,
        _TS_BODIES,
        ("comment",),
        _TS_STRINGS,
    ),
    "tsx": Grammar(
        "tree_sitter_typescript",
        "language_tsx",
        _TS_DEFINES,
        _TS_OWNERS,
        _TS_BODIES,
        ("comment",),
        _TS_STRINGS,
    ),
    "javascript": Grammar(
        "tree_sitter_javascript",
        "language",
        _TS_DEFINES,
        _TS_OWNERS,
        _TS_BODIES,
        ("comment",),
        _TS_STRINGS,
    ),
    "go": Grammar(
        "tree_sitter_go",
        "language",
        frozenset(
            {
                "function_declaration",
                "method_declaration",
                "type_spec",
                "type_alias",
                "var_spec",
                "const_spec",
                "field_declaration",
                "method_elem",
            }
        ),
        frozenset({"type_spec"}),
        frozenset(
            {
                "source_file",
                "type_declaration",
                "var_declaration",
                "const_declaration",
                "var_spec_list",
                "const_spec_list",
                "struct_type",
                "interface_type",
                "field_declaration_list",
            }
        ),
        ("comment",),
        ("interpreted_string_literal", "raw_string_literal"),
    ),
    "rust": Grammar(
        "tree_sitter_rust",
        "language",
        frozenset(
            {
                "function_item",
                "function_signature_item",
                "struct_item",
                "enum_item",
                "union_item",
                "trait_item",
                "type_item",
                "const_item",
                "static_item",
                "mod_item",
                "macro_definition",
                "field_declaration",
                "enum_variant",
                "associated_type",
            }
        ),
        frozenset(
            {"struct_item", "enum_item", "union_item", "trait_item", "impl_item", "mod_item"}
        ),
        frozenset(
            {
                "source_file",
                "declaration_list",
                "field_declaration_list",
                "enum_variant_list",
            }
        ),
        ("line_comment", "block_comment"),
        ("string_literal", "raw_string_literal"),
    ),
    "java": Grammar(
        "tree_sitter_java",
        "language",
        frozenset(
            {
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "annotation_type_declaration",
                "method_declaration",
                "constructor_declaration",
                "enum_constant",
                "variable_declarator",
                "annotation_type_element_declaration",
            }
        ),
        frozenset(
            {
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "annotation_type_declaration",
            }
        ),
        frozenset(
            {
                "program",
                "class_body",
                "interface_body",
                "enum_body",
                "enum_body_declarations",
                "annotation_type_body",
                "field_declaration",
                "constant_declaration",
            }
        ),
        ("line_comment", "block_comment"),
        ("string_literal",),
    ),
}

EXTENSIONS = {
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "go": "go",
    "rs": "rust",
    "java": "java",
}


def language_of(path: str) -> str | None:
    """The grammar for a file, by its extension (None: no grammar, word search)."""
    name = path.rsplit("/", 1)[-1]
    if "." not in name:
        return None
    return EXTENSIONS.get(name.rsplit(".", 1)[1].lower())


@cache
def _parser(language: str) -> tuple[Any, Any]:
    """(parser, query for comments and strings) of a language; its grammar is imported
    here, on the first file of that language."""
    import tree_sitter

    grammar = GRAMMARS[language]
    lang = tree_sitter.Language(getattr(importlib.import_module(grammar.module), grammar.entry)())
    kinds = [f"({t}) @c" for t in grammar.comments] + [f"({t}) @s" for t in grammar.strings]
    query = tree_sitter.Query(lang, f"[{' '.join(kinds)}]")
    return tree_sitter.Parser(lang), query


@dataclass(frozen=True)
class Parsed:
    defs: dict[str, tuple[int, int]]  # "name" / "Owner.member" -> the node's byte span
    exports: frozenset[str]  # names re-exported (not defined here)
    star: bool  # re-exports names it does not list (`export * from`, `pub use a::*`)
    words: frozenset[str]  # the words outside comments (strings kept: keys, variables)
    code_words: frozenset[str]  # the words outside comments and strings


def parse(data: bytes, language: str) -> Parsed:
    """The definitions, re-exports and words of one file of `language`."""
    parser, query = _parser(language)
    tree = parser.parse(data)
    import tree_sitter

    captured = tree_sitter.QueryCursor(query).captures(tree.root_node)
    comments = sorted(
        (n.start_byte, n.end_byte)
        for n in captured.get("c", [])
        if not data.startswith(b"//go:", n.start_byte)  # a directive the Go tools run
    )
    strings = sorted((n.start_byte, n.end_byte) for n in captured.get("s", []))
    no_comments = _blank(data, comments)
    walker = _Walker(GRAMMARS[language], language)
    walker.visit(tree.root_node, "")
    return Parsed(
        walker.defs,
        frozenset(walker.exports),
        walker.star,
        frozenset(w.decode() for w in _WORDS.findall(no_comments)),
        frozenset(w.decode() for w in _WORDS.findall(_blank(no_comments, strings))),
    )


def _blank(data: bytes, spans: list[tuple[int, int]]) -> bytes:
    """`data` with each span replaced by spaces (lines and offsets kept)."""
    if not spans:
        return data
    out = bytearray(data)
    for start, end in spans:
        out[start:end] = re.sub(rb"[^\n]", b" ", data[start:end])
    return bytes(out)


def source_of(data: bytes, symbol: str, language: str) -> str | None:
    """The text of `symbol`'s definition node (`name` or `Owner.member`); None if absent."""
    parsed = parse(data, language)
    span = parsed.defs.get(symbol)
    if span is None and "." in symbol:
        span = next((s for d, s in parsed.defs.items() if d.endswith("." + symbol)), None)
    if span is None:
        return None
    return data[span[0] : span[1]].decode("utf-8", "replace")


def _text(node: Any) -> str:
    return bytes(node.text or b"").decode("utf-8", "replace")


class _Walker:
    """Walks the module-level part of a syntax tree (never into a function's body)."""

    def __init__(self, grammar: Grammar, language: str) -> None:
        self.grammar = grammar
        self.language = language
        self.defs: dict[str, tuple[int, int]] = {}
        self.exports: set[str] = set()
        self.star = False

    def add(self, name: str, prefix: str, node: Any) -> None:
        span = (node.start_byte, node.end_byte)
        self.defs.setdefault(name, span)
        if prefix:
            self.defs.setdefault(prefix + name, span)

    def visit(self, node: Any, prefix: str) -> None:
        for child in node.named_children:
            kind = child.type
            if kind == "export_statement":
                self._export(child)
            elif kind == "use_declaration":
                self._use(child)
            elif kind == "method_declaration" and self.language == "go":
                self._go_method(child)
                continue
            elif kind == "impl_item":
                owner = _base_type(child.child_by_field_name("type"))
                body = child.child_by_field_name("body")
                if owner and body is not None:
                    self.visit(body, prefix + owner + ".")
                continue
            elif kind == "assignment_expression":
                self._commonjs(child)
            elif kind == "property_identifier" and node.type == "enum_body":
                self.add(_text(child), prefix, child)  # a TypeScript enum member
            names = self._names(child)
            if names and kind in self.grammar.defines:
                for name in names:
                    self.add(name, prefix, child)
            if names and kind in self.grammar.owners:
                body = next(
                    (
                        b
                        for f in ("body", "value", "type")
                        if (b := child.child_by_field_name(f)) is not None
                    ),
                    None,
                )
                if body is not None:
                    self.visit(body, prefix + names[0] + ".")
                continue
            if kind in self.grammar.bodies:
                self.visit(child, prefix)

    def _names(self, node: Any) -> list[str]:
        """The identifiers a node's `name` fields hold (Go's `var a, b = ...`: two)."""
        return [
            _text(n).lstrip("#")
            for n in node.children_by_field_name("name")
            if n.type.endswith("identifier")
        ]

    def _commonjs(self, node: Any) -> None:
        """`exports.x = ...`, `module.exports.x = ...`, `module.exports = { a, b: ... }`."""
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        target = _text(left) if left is not None else ""
        if target.startswith(("exports.", "module.exports.")):
            self.add(target.rsplit(".", 1)[1], "", node)
        elif target == "module.exports" and right is not None and right.type == "object":
            for entry in right.named_children:
                key = entry.child_by_field_name("key") or entry
                if key.type in ("property_identifier", "shorthand_property_identifier"):
                    self.exports.add(_text(key))

    def _go_method(self, node: Any) -> None:
        name = node.child_by_field_name("name")
        receiver = node.child_by_field_name("receiver")
        if name is None:
            return
        owner = None
        if receiver is not None:
            for param in receiver.named_children:
                owner = _base_type(param.child_by_field_name("type"))
        self.add(_text(name), f"{owner}." if owner else "", node)

    def _export(self, node: Any) -> None:
        """`export { a, b as c } from "m"`, `export { a }`, `export * as ns from "m"`,
        `export * from "m"`; an exported declaration is visited as a definition."""
        source = node.child_by_field_name("source")
        for child in node.named_children:
            if child.type == "export_clause":
                for spec in child.named_children:
                    alias = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                    if alias is not None:
                        self.exports.add(_text(alias).strip("\"'"))
            elif child.type == "namespace_export":
                self.exports.update(_text(n) for n in child.named_children)
        if source is not None and not any(
            c.type in ("export_clause", "namespace_export") for c in node.named_children
        ):
            self.star = True

    def _use(self, node: Any) -> None:
        """`pub use a::b::C;`, `pub use a::{B, c as D};`, `pub use a::*;` (a plain `use`
        imports for this file only: not a re-export)."""
        if not any(c.type == "visibility_modifier" for c in node.named_children):
            return
        stack = [node.child_by_field_name("argument")]
        while stack:
            arg = stack.pop()
            if arg is None:
                continue
            if arg.type in ("identifier", "type_identifier"):
                self.exports.add(_text(arg))
            elif arg.type == "scoped_identifier":
                name = arg.child_by_field_name("name")
                if name is not None:
                    self.exports.add(_text(name))
            elif arg.type == "use_as_clause":
                alias = arg.child_by_field_name("alias")
                if alias is not None:
                    self.exports.add(_text(alias))
            elif arg.type == "use_wildcard":
                self.star = True
            elif arg.type == "scoped_use_list":
                stack.append(arg.child_by_field_name("list"))
            elif arg.type == "use_list":
                stack.extend(arg.named_children)


def _base_type(node: Any) -> str | None:
    """`*Server`, `Server[T]`, `Gen<X>`, `crate::a::S` -> the type's own name."""
    while node is not None:
        if node.type == "type_identifier":
            return _text(node)
        if node.type in ("scoped_type_identifier", "scoped_identifier"):
            node = node.child_by_field_name("name")
            continue
        inner = node.child_by_field_name("type")
        if inner is None:
            named = [c for c in node.named_children if c.type != "type_arguments"]
            inner = named[0] if named else None
        node = inner
    return None
