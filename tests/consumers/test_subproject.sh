#!/usr/bin/env bash
# Consumer test: nabla as a meson subproject of another project, found with dependency('nabla')
# through the [provide] section of its wrap file (subproject/nabla.wrap.example).
set -euo pipefail
# shellcheck source=tests/consumers/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The project is copied out of the source tree, with the shared consumer program next to it.
cp -r "$consumers_dir/subproject" "$work_dir/project"
cp "$consumers_dir/main.cpp" "$work_dir/project/main.cpp"
mkdir "$work_dir/project/subprojects"
# The wrap file as a user would commit it; its directory already holds nabla (a link to this
# source tree), so meson uses that and never fetches the placeholder url.
cp "$consumers_dir/subproject/nabla.wrap.example" "$work_dir/project/subprojects/nabla.wrap"
ln -s "$nabla_source_root" "$work_dir/project/subprojects/nabla"

# --force-fallback-for: use the subproject even where an installed nabla.pc could be found.
run "${meson_cmd[@]}" setup "$work_dir/project" "$work_dir/project-build" \
    --wrap-mode=nodownload --force-fallback-for=nabla
run "${meson_cmd[@]}" compile -C "$work_dir/project-build"
run "$work_dir/project-build/consumer"
