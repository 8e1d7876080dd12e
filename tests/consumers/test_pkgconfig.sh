#!/usr/bin/env bash
# Consumer test: nabla installed into a prefix and found with pkg-config.
set -euo pipefail
# shellcheck source=tests/consumers/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_tool pkg-config

install_nabla
export PKG_CONFIG_PATH="$work_dir/prefix/share/pkgconfig"

# The installed .pc file must carry the header's version.
expected_version=$(sh "$nabla_source_root/scripts/version.sh" \
    "$nabla_source_root/include/nabla/version.hpp")
found_version=$(run pkg-config --modversion nabla)
if [[ "$found_version" != "$expected_version" ]]; then
    echo "pkg-config reports nabla $found_version, the header says $expected_version" >&2
    exit 1
fi

# No -std flag of the consumer's own: the .pc file's Cflags carry -std=c++20.
read -r -a cflags <<<"$(run pkg-config --cflags nabla)"
run "${cxx_cmd[@]}" -Wall -Wextra -Wpedantic -Werror "${cflags[@]}" \
    "$consumers_dir/main.cpp" -o "$work_dir/consumer"
run "$work_dir/consumer"
