#!/usr/bin/env python3
"""Extracts every ```cpp block of README.md and docs/*.md into test programs, so that the code a
user copies from the documentation is compiled, run and checked by the test suite.

Each ```cpp block is preceded by a marker comment (invisible in the rendered page) that says how
it is tested; a block without one is an error, so nothing is skipped silently:

    <!-- doc-test: program -->        a whole program with its main: compiled and run (its main
                                      must return 0)
    <!-- doc-test: fragment           statements: compiled and run inside a function of their
    setup statements (optional)       own, after the setup the marker states (the data the text
    -->                               speaks of: arrays, a function f, ...)
    <!-- doc-test: continued -->      statements that go on in the function of the page's
                                      previous fragment (its variables in scope)
    <!-- doc-test: declarations -->   namespace-scope code (types, functions): compiled
    <!-- doc-test: fails MESSAGE      a pitfall: must fail to compile, with MESSAGE in the first
    setup statements (optional)       error; without the block, the setup compiles
    -->

A comment after a block, <!-- doc-check: statements -->, runs those statements after it (in the
same scope): the values and gradients the text states, asserted with DOC_CHECK(condition).
#include lines of a block go to the top of the generated program, which also includes
<nabla/nabla.hpp>, <nabla/array.hpp> and the standard headers of STANDARD_HEADERS. The blocks of
docs/mpi.md go into a program of their own (run under mpiexec), as do those that include an Eigen
header (built where Eigen is installed).

usage: extract_snippets.py OUT_DIR FILE.md...
writes OUT_DIR/docs_snippets.cpp, docs_mpi_snippets.cpp, docs_eigen_snippets.cpp and
docs_pitfalls.txt
(each pitfall as: location, message, then the source, separated by lines of \\f).
"""

import os
import re
import sys

# A fence of C++ in another spelling, which would be skipped: an error.
OTHER_CPP_FENCE = re.compile(r"^\s*(>\s*)*(```+|~~~+)\s*(c\+\+|cxx|cc|cpp|h|hpp)\b", re.IGNORECASE)
MARKER = re.compile(r"^\s*<!--\s*doc-test:\s*(\w[\w-]*)\s*(.*?)\s*(-->)?\s*$")
CHECK = re.compile(r"^\s*<!--\s*doc-check:\s*(.*?)\s*(-->)?\s*$")
KINDS = {"program", "fragment", "continued", "declarations", "fails"}
# What every extracted program includes besides each block's own #include lines: the blocks are
# read as parts of a program that has these.
STANDARD_HEADERS = ["algorithm", "array", "cmath", "cstddef", "cstdio", "fstream", "iostream",
                    "numbers", "span", "string", "tuple", "type_traits", "utility", "vector"]


class Block:
    def __init__(self, where, kind, argument, setup, code, check):
        self.where, self.kind, self.argument = where, kind, argument
        self.setup, self.code, self.check = setup, code, check


def comment_body(lines, i, first_rest, closed):
    """The lines of a marker comment after its first line, and the index after the comment."""
    body = []
    if closed:
        return body, i + 1
    j = i + 1
    while j < len(lines) and "-->" not in lines[j]:
        body.append(lines[j])
        j += 1
    if j == len(lines):
        sys.exit(f"unterminated doc-test comment at line {i + 1}")
    tail = lines[j].split("-->")[0]
    if tail.strip():
        body.append(tail)
    return body, j + 1


def blocks_of(path, label):
    lines = open(path, encoding="utf-8").read().splitlines()
    out, pending, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        marker = MARKER.match(line)
        if marker:
            kind, rest, closed = marker.group(1), marker.group(2), marker.group(3)
            if kind not in KINDS:
                sys.exit(f"{label}:{i + 1}: unknown doc-test kind {kind!r}")
            if kind == "fails" and not rest:
                sys.exit(f"{label}:{i + 1}: 'fails' needs the message the compiler must give")
            if kind != "fails" and rest:
                sys.exit(f"{label}:{i + 1}: text after {kind!r} on the marker's line; the setup "
                         "goes on the lines after it")
            setup, i = comment_body(lines, i, rest, closed)
            pending = (kind, rest, setup)
            continue
        fence = line.strip()
        if CHECK.match(line):
            sys.exit(f"{label}:{i + 1}: a doc-check that does not follow a ```cpp block")
        if OTHER_CPP_FENCE.match(line) and fence != "```cpp":
            sys.exit(f"{label}:{i + 1}: a fence of C++ spelled {fence!r}: write ```cpp (and mark "
                     "it) so that it is tested")
        if fence.startswith("```cpp"):
            start = i + 1
            indent = len(line) - len(line.lstrip())
            code = []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                code.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
                i += 1
            i += 1
            if pending is None:
                sys.exit(f"{label}:{start}: a ```cpp block without a <!-- doc-test: ... --> "
                         "marker before it")
            check = []
            j = i
            while j < len(lines) and lines[j].strip() == "":
                j += 1
            if j < len(lines) and CHECK.match(lines[j]):
                m = CHECK.match(lines[j])
                check, i = comment_body(lines, j, m.group(1), m.group(2))
                if m.group(1):
                    check.insert(0, m.group(1))
            kind, rest, setup = pending
            if check and kind in ("program", "fails"):
                sys.exit(f"{label}:{start}: a doc-check after a {kind!r} block, which runs none")
            out.append(Block(f"{label}:{start}", kind, rest, setup, code, check))
            pending = None
            continue
        if pending is not None and line.strip():
            sys.exit(f"{label}:{i + 1}: a doc-test marker must come right before its ```cpp block")
        i += 1
    if pending is not None:
        sys.exit(f"{label}: a doc-test marker at the end with no block")
    return out


def split_includes(code):
    includes = [l.strip() for l in code if l.strip().startswith("#include")]
    rest = [l for l in code if not l.strip().startswith("#include")]
    return includes, rest


def program(blocks, title, mpi=False):
    includes = ["#include <nabla/nabla.hpp>", "#include <nabla/array.hpp>"]
    includes += [f"#include <{h}>" for h in STANDARD_HEADERS]
    includes.append('#include "doc_check.hpp"')
    units, runs = [], []
    for n, b in enumerate(blocks):
        inc, code = split_includes(b.code)
        setup_inc, setup = split_includes(b.setup)
        b.setup = setup
        includes += [x for x in setup_inc + inc if x not in includes]
        name = f"block_{n}"
        if b.kind == "continued":
            if not units or units[-1][1] != "fragment":
                sys.exit(f"{b.where}: 'continued' follows no fragment")
            units[-1][2].append(f"    // {b.where}")
            units[-1][2].extend("    " + l for l in b.setup + code + b.check)
            continue
        if b.kind == "fragment":
            body = [f"    // {b.where}"] + ["    " + l for l in b.setup + code + b.check]
            units.append([name, "fragment", body, b.where])
            runs.append((name, b.where, "void"))
        elif b.kind == "program":
            units.append([name, "program", [f"// {b.where}", "#define main run"] + code +
                          ["#undef main"], b.where])
            runs.append((name, b.where, "int"))
        elif b.kind == "declarations":
            body = [f"// {b.where}"] + b.setup + code
            if b.check:
                body += ["void run() {"] + ["    " + l for l in b.check] + ["}"]
                runs.append((name, b.where, "void"))
            units.append([name, "declarations", body, b.where])
    text = [f"// {title}", "// Generated by tests/docs/extract_snippets.py; do not edit."]
    text += includes + [""]
    for name, kind, body, where in units:
        text.append(f"namespace doc_{name} {{")
        if kind == "fragment":
            text += ["void run() {"] + body + ["}"]
        else:
            text += body
        text.append(f"}}  // namespace doc_{name}")
        text.append("")
    text.append("int main([[maybe_unused]] int argc, [[maybe_unused]] char** argv) {")
    if mpi:
        text.append("    MPI_Init(&argc, &argv);")
    text.append("    int failed = 0;")
    for name, where, result in runs:
        call = f"doc_{name}::run()"
        if result == "int":
            call = f"doc_check::returns_zero(doc_check::call_main(doc_{name}::run, argc, argv))"
        text.append(f"    failed += doc_check::run(\"{where}\", [&] {{ {call}; }});")
    if mpi:
        text.append("    MPI_Finalize();")
    text.append("    return failed == 0 ? 0 : 1;")
    text.append("}")
    return "\n".join(text) + "\n"


def main():
    out_dir, pages = sys.argv[1], sys.argv[2:]
    # Every page of docs/ must be given: a new page is not left out silently.
    docs = {os.path.dirname(os.path.abspath(p)) for p in pages if os.path.basename(p) != "README.md"}
    for folder in docs:
        given = {os.path.abspath(p) for p in pages}
        for name in sorted(os.listdir(folder)):
            if name.endswith(".md") and os.path.join(folder, name) not in given:
                sys.exit(f"docs/{name} is not among the pages given (tests/docs/meson.build)")
    plain, mpi, eigen, pitfalls = [], [], [], []
    for page in pages:
        name = os.path.basename(page)
        label = name if name == "README.md" else "docs/" + name
        group = None
        for b in blocks_of(page, label):
            if b.kind == "fails":
                pitfalls.append(b)
                continue
            if b.kind != "continued":
                includes = [l for l in b.code if l.strip().startswith("#include")]
                group = mpi if name == "mpi.md" else \
                    eigen if any("eigen" in l.lower() for l in includes) else plain
            elif group is None:
                sys.exit(f"{b.where}: 'continued' follows no fragment")
            group.append(b)
    outputs = [("docs_snippets.cpp", plain, "The C++ blocks of README.md and docs/*.md "
                "(those of docs/mpi.md and those that use Eigen aside)."),
               ("docs_mpi_snippets.cpp", mpi, "The C++ blocks of docs/mpi.md, run under mpiexec."),
               ("docs_eigen_snippets.cpp", eigen, "The C++ blocks of the docs that use Eigen.")]
    for output, blocks, title in outputs:
        with open(os.path.join(out_dir, output), "w", encoding="utf-8") as f:
            f.write(program(blocks, title, mpi=blocks is mpi))
    with open(os.path.join(out_dir, "docs_pitfalls.txt"), "w", encoding="utf-8") as f:
        for b in pitfalls:
            inc, code = split_includes(b.code)
            source = "\n".join(["#include <nabla/nabla.hpp>"] + inc + ["int main() {"] +
                               b.setup + ["#ifdef NABLA_FAIL_CASE"] + code +
                               ["#endif", "}"])
            f.write(f"{b.where}\n{b.argument}\n{source}\n\f\n")


if __name__ == "__main__":
    main()
