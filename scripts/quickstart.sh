#!/usr/bin/env bash
# From a fresh checkout to a running example: installs what the flagship example needs (Debian 12,
# only the packages that are missing), configures nabla in build/ without the test suite and the
# benchmarks, builds the flagship example alone and runs it. scripts/test.sh builds and runs
# everything else.
#
# Usage: bash scripts/quickstart.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh --quickstart

options=(-Dtests=false -Dbench=false -Dexamples=true)
if [[ -f build/meson-private/coredata.dat ]]; then
    meson setup --reconfigure build "${options[@]}"
else
    meson setup build "${options[@]}"
fi
meson compile -C build examples/seed_function

example=build/examples/seed_function
echo "+ $example build/seed_function.dot"
"$example" build/seed_function.dot
