#!/usr/bin/env python3
"""Writes the C++ code blocks of README.md's tour (after the `<!-- tour -->` marker) into one
source file, so the tour is compiled and run as a test and cannot go stale.

usage: extract_tour.py README.md OUTPUT.cpp
"""

import sys


def main():
    readme, output = sys.argv[1], sys.argv[2]
    text = open(readme, encoding="utf-8").read()
    marker = text.find("<!-- tour -->")
    if marker < 0:
        sys.exit("README.md has no <!-- tour --> marker")
    blocks, inside, lines = [], False, []
    for line in text[marker:].splitlines():
        if not inside and line.strip() == "```cpp":
            inside, lines = True, []
        elif inside and line.strip() == "```":
            inside = False
            blocks.append("\n".join(lines))
        elif inside:
            lines.append(line)
    if not blocks:
        sys.exit("README.md's tour has no ```cpp block")
    with open(output, "w", encoding="utf-8") as out:
        out.write("// Generated from README.md by tests/readme/extract_tour.py.\n")
        out.write("\n".join(blocks) + "\n")


if __name__ == "__main__":
    main()
