#!/usr/bin/env python3
"""The documentation's pitfalls (blocks marked `fails MESSAGE`, extracted by
extract_snippets.py): each must compile without its block and fail with the block, with MESSAGE
in the compiler's first error, as the compile-fail tests of tests/fail/ do.

usage: check_pitfalls.py PITFALLS.txt COMPILER [COMPILER ARGS...]
"""

import os
import subprocess
import sys
import tempfile


def main():
    listing, compiler = sys.argv[1], sys.argv[2:]
    entries = [e.strip("\n") for e in open(listing, encoding="utf-8").read().split("\f")]
    entries = [e for e in entries if e.strip()]
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        for entry in entries:
            where, expected, source = entry.split("\n", 2)
            path = os.path.join(work, "pitfall.cpp")
            with open(path, "w", encoding="utf-8") as f:
                f.write(source + "\n")
            good = subprocess.run(compiler + ["-fsyntax-only", path], capture_output=True, text=True)
            bad = subprocess.run(compiler + ["-fsyntax-only", "-DNABLA_FAIL_CASE", path],
                                 capture_output=True, text=True)
            first = next((l for l in bad.stderr.splitlines() if "error:" in l), "")
            if good.returncode != 0:
                print(f"FAILED  {where}: the setup alone does not compile:\n{good.stderr[:3000]}")
            elif bad.returncode == 0:
                print(f"FAILED  {where}: the block compiles; the text says it does not")
            elif expected not in first:
                print(f"FAILED  {where}: the first error is not {expected!r}:\n{first[:2000]}")
            else:
                print(f"ok      {where}: fails with {expected!r}")
                continue
            failed += 1
    print(f"{len(entries) - failed} of {len(entries)} pitfalls fail to compile as the text says")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
