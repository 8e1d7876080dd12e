#!/usr/bin/env bash
# From a fresh checkout to a running example: installs what is missing (Debian 12), configures
# and builds nabla in build/, and runs the flagship example.
#
# Usage: bash scripts/quickstart.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

if [[ -f build/meson-private/coredata.dat ]]; then
    meson setup --reconfigure build
else
    meson setup build
fi
meson compile -C build

example=build/examples/seed_function
if [[ ! -x "$example" ]]; then
    echo "quickstart: $example was not built (is examples/meson.build there?)" >&2
    exit 1
fi
echo "+ $example"
"$example"
