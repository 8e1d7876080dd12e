#!/usr/bin/env bash
# Installs the Debian 12 packages nabla's build, tests and examples need, and only those that are
# missing: when everything is present it returns at once, without calling apt.
#
# Usage: bash scripts/install-deps.sh        (as root, or as a user with sudo)
set -euo pipefail

packages=(
    meson ninja-build pkg-config cmake   # build, and the pkg-config / CMake consumer tests
    g++ clang libstdc++-12-dev           # the two compilers; clang++ uses g++ 12's library
    libboost-dev                         # Boost.Hana for type-level programming
    catch2                               # unit tests (Catch2 v2, catch2/catch.hpp)
    xtensor-dev xtl-dev libxsimd-dev     # arrays: matrix results of nabla/tensor.hpp
    libeigen3-dev libceres-dev           # benchmark peers only (Eigen AutoDiffScalar, Ceres Jet,
    libadolc-dev libtrilinos-sacado-dev  #   ADOL-C, Sacado; Sacado's headers include Kokkos's
    libtrilinos-kokkos-dev               #   and Teuchos's, which the Sacado package does not
    libtrilinos-teuchos-dev              #   pull in without recommends)
    python3 python3-mpmath               # generator scripts for reference values
    valgrind                             # the tape and random-program tests under memcheck
)

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps: not a Debian system (no dpkg-query); install these yourself:" >&2
    echo "  ${packages[*]}" >&2
    exit 0
fi

missing=()
for package in "${packages[@]}"; do
    # A removed package can leave "deinstall ok config-files" behind: only count installed ones.
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    if [[ "$status" != "install ok installed" ]]; then
        missing+=("$package")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install-deps: run as root (or install sudo) to install: ${missing[*]}" >&2
        exit 1
    fi
    sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
