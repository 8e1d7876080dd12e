# shellcheck shell=bash
# Shared by the consumer tests; sourced, not run.
#
# Each test works in a fresh temporary directory, removed on exit (set NABLA_KEEP_TMP=1 to keep
# it for a look). Inputs, all optional, so a test can also be run by hand from anywhere:
#   NABLA_SOURCE_ROOT  the nabla source tree (default: two levels above this file)
#   MESON              the meson command (default: meson)
#   CXX                the C++ compiler, also honoured by meson and CMake (default: g++)

set -euo pipefail

consumers_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nabla_source_root=$(cd "${NABLA_SOURCE_ROOT:-$consumers_dir/../..}" && pwd)
read -r -a meson_cmd <<<"${MESON:-meson}"
read -r -a cxx_cmd <<<"${CXX:-g++}"
export CXX="${cxx_cmd[*]}"

# meson test treats exit status 77 as "skipped": used when a tool the route needs is absent.
require_tool() {
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "SKIPPED: '$1' is not installed; this consumer route cannot be tested" >&2
        exit 77
    fi
}

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/nabla-consumer-XXXXXX")
cleanup() {
    local status=$?
    if [[ "${NABLA_KEEP_TMP:-0}" == 1 ]]; then
        echo "kept $work_dir"
    else
        rm -rf "$work_dir"
    fi
    if [[ $status -ne 0 && $status -ne 77 ]]; then
        echo "FAILED (exit status $status): see the output above" >&2
    fi
}
trap cleanup EXIT

# Prints each command before running it, so a failing step is easy to find in the log.
run() {
    echo "+ $*" >&2
    "$@"
}

# Installs nabla from the source tree into $work_dir/prefix, the way a packager would.
install_nabla() {
    run "${meson_cmd[@]}" setup "$nabla_source_root" "$work_dir/nabla-build" \
        --prefix="$work_dir/prefix" -Dtests=false -Dexamples=false -Dbench=false
    run "${meson_cmd[@]}" install -C "$work_dir/nabla-build" --quiet
    echo "installed into $work_dir/prefix:" >&2
    (cd "$work_dir/prefix" && find . -name '*.pc' -o -name '*.cmake' -o -name 'nabla.hpp') >&2
}
