#!/usr/bin/env bash
# Consumer test: nabla installed into a prefix and found with CMake's find_package.
set -euo pipefail
# shellcheck source=tests/consumers/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_tool cmake

install_nabla

# The project is copied out of the source tree, with the shared consumer program next to it.
cp -r "$consumers_dir/cmake" "$work_dir/project"
cp "$consumers_dir/main.cpp" "$work_dir/project/main.cpp"

expected_version=$(sh "$nabla_source_root/scripts/version.sh" \
    "$nabla_source_root/include/nabla/version.hpp")
generator=()
if command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
fi
run cmake -S "$work_dir/project" -B "$work_dir/project-build" "${generator[@]}" \
    -DCMAKE_PREFIX_PATH="$work_dir/prefix" -DNABLA_EXPECTED_VERSION="$expected_version"
run cmake --build "$work_dir/project-build"
run "$work_dir/project-build/app"
