#!/usr/bin/env python3
"""Functions that fit on a screen: fails when a C++ or CUDA function body in the tree is longer
than MAX_LINES lines, naming each with its file, line and length.

A function is a brace block opened at namespace or class scope whose head (the text since the
previous ';', '{' or '}') has a parameter list and is no class, struct, union, enum or namespace.
Comments, string and character literals are blanked before braces are counted; preprocessor
lines are skipped.

Usage: function_length.py SOURCE_DIR     check the tree (tests/, build folders and fetched code left out)
       function_length.py --self-test    check the checker on made-up sources
"""
import os
import re
import sys

MAX_LINES = 120  # a screen and a half: room for a case table, not for three jobs
SUFFIXES = (".cpp", ".cu", ".h", ".cuh")
SKIP_DIRS = {"tests", "build", ".git", ".deps", ".venv"}
SCOPE_HEAD = re.compile(r"\b(namespace|class|struct|union|enum)\b")


def blank(text):
    """The text with comments, string and character literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
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
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # 1'000 digit separators
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(text, limit=MAX_LINES):
    """(first line, length in lines, head) of every function body longer than `limit`."""
    lines = [("" if l.lstrip().startswith("#") else l) for l in blank(text).split("\n")]
    code = "\n".join(lines)
    found, stack, head_start = [], [], 0  # stack: (kind, line of '{', head)
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == ";":
            head_start = i + 1
        elif c == "{":
            head = " ".join(code[head_start:i].split())
            inner = all(kind == "scope" for kind, _, _ in stack)
            is_function = inner and "(" in head and ")" in head and not SCOPE_HEAD.match(head) and \
                not re.search(r"\b(namespace|class|struct|union|enum)\b[^(]*$", head)
            kind = "function" if is_function else ("scope" if inner and not head.endswith((")", "=")) and
                                                   not re.search(r"=\s*$", head) else "block")
            stack.append((kind, line, head))
            head_start = i + 1
        elif c == "}":
            if stack:
                kind, start, head = stack.pop()
                if kind == "function" and line - start + 1 > limit:
                    found.append((start, line - start + 1, head[-80:]))
            head_start = i + 1
    return found


def check_tree(root):
    bad = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build"))
        for f in sorted(files):
            if f.endswith(SUFFIXES):
                path = os.path.join(d, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for start, length, head in long_functions(fh.read()):
                        bad.append(f"{os.path.relpath(path, root)}:{start}: {length} lines: {head}")
    return bad


def self_test():
    body = "  x += 1;\n" * (MAX_LINES + 5)
    long_fn = "namespace a {\nint f(int x) {\n" + body + "  return x;\n}\n}\n"
    assert [(s, n) for s, n, _ in long_functions(long_fn)] == [(2, MAX_LINES + 8)], long_functions(long_fn)
    short = "struct S {\n  int g() const { return 1; }\n};\nvoid h() {\n  if (1) {\n  }\n}\n"
    assert long_functions(short) == [], long_functions(short)
    # braces in strings, comments and macros are not counted; a class body is not a function
    tricky = 'class C {\n public:\n  void m() {\n    const char* s = "}}{";  // }\n' + body + "  }\n};\n" + \
             "#define X {\nint t[] = {1, 2};\n"
    got = long_functions(tricky)
    assert [(s, n) for s, n, _ in got] == [(3, MAX_LINES + 8)], got
    enum = "enum class E {\n" + "  a,\n" * (MAX_LINES + 5) + "};\n"
    assert long_functions(enum) == [], long_functions(enum)
    print("function_length self-test: ok")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    bad = check_tree(sys.argv[1])
    for b in bad:
        print(b)
    print(f"function_length: {len(bad)} function(s) longer than {MAX_LINES} lines")
    sys.exit(1 if bad else 0)
