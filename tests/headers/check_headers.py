#!/usr/bin/env python3
"""Every public header compiles on its own.

Compiles, for each header under include/nabla/, a translation unit that includes only that header
(-fsyntax-only, the project's warnings as errors), two at a time. A header that relies on another
one being included first fails here with the compiler's message.

Usage: check_headers.py <c++ compiler> <include directory> [--skip=nabla/header.hpp ...]
                       [--skip=nabla/folder/ ...] [extra compiler arguments...]
"""

import concurrent.futures
import pathlib
import subprocess
import sys


def check(compiler, include, header, extra):
    relative = header.relative_to(include).as_posix()
    source = f"#include <{relative}>\n"
    command = [compiler, "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Wpedantic",
               "-Werror", f"-I{include}", *extra, "-x", "c++", "-"]
    result = subprocess.run(command, input=source, text=True, capture_output=True)
    return relative, result.returncode, result.stderr


def main():
    compiler, include = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
    skip = {a[len("--skip="):] for a in sys.argv[3:] if a.startswith("--skip=")}
    extra = [a for a in sys.argv[3:] if not a.startswith("--skip=")]
    def skipped(relative):
        return relative in skip or any(s.endswith("/") and relative.startswith(s) for s in skip)

    headers = [h for h in sorted(include.glob("nabla/**/*.hpp"))
               if not skipped(h.relative_to(include).as_posix())]
    if not headers:
        print(f"no headers found under {include}/nabla")
        return 1
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for relative, code, errors in pool.map(lambda h: check(compiler, include, h, extra),
                                               headers):
            if code != 0:
                failed += 1
                print(f"FAILED: <{relative}> does not compile on its own:\n{errors}")
    print(f"{len(headers) - failed} of {len(headers)} headers compile on their own")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
