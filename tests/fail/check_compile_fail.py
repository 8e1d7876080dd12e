#!/usr/bin/env python3
"""A compile-fail test, built twice (as Eigen does): the source must compile without
NABLA_FAIL_CASE defined, and must fail to compile with it, with the expected message in the
compiler's output as its first error. That proves the failure comes from the intended line, and
that a user reads the message before anything else.

usage: check_compile_fail.py SOURCE EXPECTED_MESSAGE COMPILER [COMPILER ARGS...]
"""

import subprocess
import sys


def compile_source(command):
    return subprocess.run(command, capture_output=True, text=True)


def main():
    source, expected, compiler = sys.argv[1], sys.argv[2], sys.argv[3:]
    good = compile_source(compiler + ["-fsyntax-only", source])
    if good.returncode != 0:
        print(f"{source} does not compile even without NABLA_FAIL_CASE:\n{good.stderr}")
        return 1
    bad = compile_source(compiler + ["-fsyntax-only", "-DNABLA_FAIL_CASE", source])
    if bad.returncode == 0:
        print(f"{source} compiled with NABLA_FAIL_CASE; it must not")
        return 1
    if expected not in bad.stderr:
        print(f"{source} failed to compile, but without the message {expected!r}:\n{bad.stderr[:4000]}")
        return 1
    # The message must be the first error the compiler reports, not one after pages of others.
    first = next((line for line in bad.stderr.splitlines() if "error:" in line), "")
    if expected not in first:
        print(f"{source}: the first error is not the message {expected!r}:\n{first[:2000]}")
        return 1
    print(f"{source}: fails as intended with {expected!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
