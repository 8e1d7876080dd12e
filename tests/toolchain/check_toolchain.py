#!/usr/bin/env python3
"""Whether the compiler that builds nabla has a known wrong-code bug: compiles ipa_sra.cpp at -O2
(Debian 12's g++ 12.2 miscompiles it through IPA-SRA) and runs it. A compiler that has the bug is
reported with the flag that avoids it; this is a warning, not a failure, since nabla's own tests
do not hit it (docs/guide.md, "Pitfalls").

usage: check_toolchain.py SOURCE COMPILER [COMPILER ARGS...]
"""

import os
import subprocess
import sys
import tempfile


def main():
    source, compiler = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as work:
        program = os.path.join(work, "ipa_sra")
        built = subprocess.run(compiler + ["-O2", source, "-o", program],
                               capture_output=True, text=True)
        if built.returncode != 0:
            print(f"the toolchain check did not compile:\n{built.stderr[:2000]}")
            return 1
        ran = subprocess.run([program], capture_output=True, text=True)
        if ran.stdout.strip() == "same":
            print(f"{' '.join(compiler)}: no IPA-SRA wrong code at -O2")
        else:
            print(f"WARNING: {' '.join(compiler)} miscompiles at -O2 and -O3 a generic lambda "
                  "returning a std::array called through k ? f<true>(x) : f<false>(x) "
                  "(IPA-SRA; Debian 12's g++ 12.2): compile code of that shape with "
                  "-fno-ipa-sra (docs/guide.md, Pitfalls)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
