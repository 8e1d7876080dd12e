#!/bin/sh
# Prints nabla's version (MAJOR.MINOR.PATCH) as written in include/nabla/version.hpp, the single
# source of the version number. meson.build calls this to set the project version, so the
# pkg-config and CMake package files always agree with the header.
#
# Usage: sh scripts/version.sh [path/to/version.hpp]
set -eu

header=${1:-include/nabla/version.hpp}
if [ ! -r "$header" ]; then
    echo "version.sh: cannot read $header" >&2
    exit 1
fi

component() {
    value=$(sed -n -E "s/^[[:space:]]*#[[:space:]]*define[[:space:]]+NABLA_VERSION_$1[[:space:]]+([0-9]+)[[:space:]]*(\/\/.*)?$/\1/p" "$header")
    case $value in
        '' | *[!0-9]*)
            echo "version.sh: expected one '#define NABLA_VERSION_$1 <number>' in $header" >&2
            exit 1
            ;;
    esac
    echo "$value"
}

major=$(component MAJOR)
minor=$(component MINOR)
patch=$(component PATCH)
echo "$major.$minor.$patch"
