#!/usr/bin/env bash
# Installs the Debian 12 packages nabla's build needs, and only those that are missing: when
# everything is present it returns at once, without calling apt.
#
#   bash scripts/install-deps.sh               everything the test suite, the examples and the
#                                              benchmarks need (scripts/test.sh runs this)
#   bash scripts/install-deps.sh --quickstart  what the flagship example needs, and no more
#                                              (scripts/quickstart.sh runs this)
#
# Run it as root, or as a user with sudo. Using nabla itself needs only a C++20 compiler.
set -euo pipefail

# The flagship example: a build system, a compiler, and the optional headers nabla uses when it
# finds them (xsimd for SIMD tangents, xtensor for nabla/tensor.hpp).
quickstart=(
    meson ninja-build pkg-config g++
    xtensor-dev xtl-dev libxsimd-dev
)
# The whole test suite and the benchmarks, in addition.
everything=(
    cmake                                # the CMake consumer test
    clang libstdc++-12-dev               # the second compiler; clang++ uses g++ 12's library
    libclang-rt-14-dev                   #   and its sanitizer runtimes (ASan, UBSan)
    catch2                               # unit tests (Catch2 v2, catch2/catch.hpp)
    python3 python3-mpmath               # generator scripts for reference values, test helpers
    valgrind                             # the tape and random-program tests under memcheck
    libopenmpi-dev openmpi-bin           # nabla/mpi.hpp's tests, examples and benchmarks (mpiexec)
    libboost-dev                         # benchmark peers only: Boost.Math's autodiff,
    libeigen3-dev libceres-dev           #   Eigen's AutoDiffScalar, Ceres's Jet,
    libadolc-dev libtrilinos-sacado-dev  #   ADOL-C and Sacado; Sacado's headers include Kokkos's
    libtrilinos-kokkos-dev               #   and Teuchos's, which the Sacado package does not
    libtrilinos-teuchos-dev              #   pull in without recommends
)

case "${1:-}" in
    --quickstart) packages=("${quickstart[@]}") ;;
    "") packages=("${quickstart[@]}" "${everything[@]}") ;;
    *)
        echo "usage: bash scripts/install-deps.sh [--quickstart]" >&2
        exit 2
        ;;
esac

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
