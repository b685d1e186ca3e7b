#!/usr/bin/env python3
"""Checks that no C++ function in the given folders is longer than a limit.

A function's length is counted from the first line of its declaration (template line
included) to the line of its closing brace. The parser is a brace matcher, not a C++
parser: comments, string and character literals (raw strings too) and preprocessor lines
are blanked first; then at namespace or class scope a `{` whose declaration head holds a
`(` opens a function body (lambdas and initialisers at namespace scope with a call in them
count too: they are code), a head with `namespace`, `class`, `struct`, `union` or
`extern "C"` opens a scope searched in turn, and any other brace (an initialiser, an enum)
is skipped whole. Nested functions (lambdas, local classes) count as part of the function
that holds them.

Exit 0 when every function is within the limit; 1 with one line per longer function
(file:line, its name, its length) otherwise.

Usage: scripts/check_function_length.py [--max N] [--root DIR] [--except FILE]... FOLDER...
       (folders and files relative to the root, default the repository; default N 120;
       --except leaves a file out)
"""
import re
import sys
from pathlib import Path

SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cc", ".cu", ".cuh"}
SCOPE_WORDS = re.compile(r'\b(namespace|class|struct|union)\b|extern\s+"')
NAME_BEFORE_PAREN = re.compile(r"(~?[A-Za-z_][A-Za-z_0-9:]*(?:\s*operator\s*[^\s(]+)?|\])\s*$")


def blank(text: str) -> str:
    """The text with comments, literals and preprocessor lines replaced by spaces (newlines
    kept, so offsets map to the same lines). Literals keep their quotes."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its continuations.
            j = i
            while j < n and text[j] != "\n":
                j = j + 2 if text[j] == "\\" and j + 1 < n else j + 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            delim_end = text.find("(", i + 2)
            delim = text[i + 2:delim_end]
            close = text.find(")" + delim + '"', delim_end)
            j = n if close < 0 else close + len(delim) + 2
            out.append('R"' + re.sub(r"[^\n]", " ", text[i + 2:j - 1]) + '"')
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # 1'000 is a number
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(text: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


def strip_template_heads(head: str) -> str:
    """`template <class T> int f(T)` -> ` int f(T)`: a `class` inside the template
    parameters does not make a class."""
    while True:
        m = re.search(r"\btemplate\s*<", head)
        if not m:
            return head
        depth, j = 0, m.end() - 1
        while j < len(head):
            depth += {"<": 1, ">": -1}.get(head[j], 0)
            if depth == 0:
                break
            j += 1
        head = head[:m.start()] + " " + head[j + 1:]


def functions(text: str):
    """(name, first line, last line) of each function at namespace or class scope."""
    code = blank(text)
    line_of = lambda pos: code.count("\n", 0, pos) + 1  # noqa: E731
    found = []

    def scan(start: int, end: int):
        head_start = start
        i = start
        while i < end:
            c = code[i]
            if c in ";}":
                head_start = i + 1
            elif c == "{":
                head = code[head_start:i]
                close = matching_brace(code, i)
                plain = strip_template_heads(head)
                if SCOPE_WORDS.search(plain) and "(" not in plain.split("=")[0]:
                    scan(i + 1, close)
                elif "(" in plain:
                    first = head_start + (len(head) - len(head.lstrip()))
                    name_part = plain[:plain.find("(")] if plain.find("(") >= 0 else plain
                    m = NAME_BEFORE_PAREN.search(name_part.rstrip())
                    name = (m.group(1) if m else name_part.strip().split()[-1:] or ["?"])
                    name = name if isinstance(name, str) else name[0]
                    found.append((("lambda" if name == "]" else name), line_of(first), line_of(close)))
                i = close
                head_start = close + 1
            i += 1

    scan(0, len(code))
    return found


def main(argv):
    limit, root, folders, excepted = 120, Path(__file__).resolve().parent.parent, [], set()
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--max":
            limit = int(args.pop(0))
        elif a == "--root":
            root = Path(args.pop(0)).resolve()
        elif a == "--except":
            excepted.add(Path(args.pop(0)).as_posix())
        else:
            folders.append(a)
    if not folders:
        print("check_function_length: name at least one folder")
        return 2
    problems, count = [], 0
    for folder in folders:
        base = root / folder
        if not base.is_dir():
            print(f"check_function_length: {base} is not a folder")
            return 2
        for path in sorted(p for p in base.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file()):
            if path.relative_to(root).as_posix() in excepted:
                continue
            for name, first, last in functions(path.read_text(errors="replace")):
                count += 1
                length = last - first + 1
                if length > limit:
                    problems.append(f"{path.relative_to(root).as_posix()}:{first}: {name} is {length} lines "
                                    f"(at most {limit})")
    for p in problems:
        print(p)
    if not problems:
        print(f"check_function_length: {count} functions, none over {limit} lines")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
