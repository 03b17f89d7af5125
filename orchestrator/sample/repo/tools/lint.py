"""A small linter with the standard library only: run from the repository root.

Checks every .py file under wordstats/, tests/ and tools/: it compiles, uses spaces (no
tabs), has no trailing whitespace, keeps lines to 99 characters and ends with a newline;
the library (wordstats/) does not call print(). Exit 1 and one line a problem otherwise.
"""

import pathlib
import sys

FOLDERS = ("wordstats", "tests", "tools")
MAX_LINE = 99


def problems_in(path):
    text = path.read_text(encoding="utf-8")
    found = []
    try:
        compile(text, str(path), "exec")
    except SyntaxError as exc:
        found.append(f"{path}:{exc.lineno}: does not compile: {exc.msg}")
    if text and not text.endswith("\n"):
        found.append(f"{path}: no newline at the end of the file")
    for number, line in enumerate(text.splitlines(), 1):
        if "\t" in line:
            found.append(f"{path}:{number}: tab character")
        if line != line.rstrip():
            found.append(f"{path}:{number}: trailing whitespace")
        if len(line) > MAX_LINE:
            found.append(f"{path}:{number}: line longer than {MAX_LINE} characters")
        if path.parts[0] == "wordstats" and "print(" in line:
            found.append(f"{path}:{number}: print() in the library; write to sys.stdout")
    return found


def main():
    found = []
    for folder in FOLDERS:
        for path in sorted(pathlib.Path(folder).rglob("*.py")):
            found.extend(problems_in(path))
    for line in found:
        sys.stdout.write(line + "\n")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
