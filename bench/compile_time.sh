#!/usr/bin/env bash
# Compile time and compiler memory of representative translation units, with g++ and clang++ at
# -O3 (as the benchmarks build): the flagship example, the Lennard-Jones program, and a function
# that solves a linear system with Eigen's LU compiled on doubles and differentiated in each mode
# (bench/compile/eigen_lu.cpp). Prints seconds and peak megabytes per unit; the figures in
# bench/RESULTS.md come from here. Run on an idle machine: the times are wall-clock.
#
# Usage: bash bench/compile_time.sh [runs]   (the best of `runs` per unit, default 3)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-3}
if [[ ! -x /usr/bin/time ]]; then
    echo "bench/compile_time.sh: /usr/bin/time measures the compiler's memory: apt-get install time" >&2
    exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
eigen_flags=$(pkg-config --cflags eigen3 2>/dev/null || echo "-I/usr/include/eigen3")

# unit name, source, extra flags
units=(
    "seed_function|examples/seed_function.cpp|"
    "lennard_jones_cluster|examples/lennard_jones_cluster.cpp|"
    "eigen_lu_doubles|bench/compile/eigen_lu.cpp|-DNABLA_COMPILE_MODE=0 $eigen_flags"
    "eigen_lu_forward|bench/compile/eigen_lu.cpp|-DNABLA_COMPILE_MODE=1 $eigen_flags"
    "eigen_lu_reverse|bench/compile/eigen_lu.cpp|-DNABLA_COMPILE_MODE=2 $eigen_flags"
    "eigen_lu_taylor|bench/compile/eigen_lu.cpp|-DNABLA_COMPILE_MODE=3 $eigen_flags"
    "eigen_lu_all_three|bench/compile/eigen_lu.cpp|-DNABLA_COMPILE_MODE=4 $eigen_flags"
)

printf "%-24s %-9s %9s %9s\n" unit compiler seconds "peak MB"
for compiler in g++ clang++; do
    for unit in "${units[@]}"; do
        IFS='|' read -r name source flags <<<"$unit"
        best_time=""
        best_memory=""
        for ((run = 0; run < runs; ++run)); do
            # shellcheck disable=SC2086
            /usr/bin/time -f "%e %M" -o "$out/time" "$compiler" -std=c++20 -O3 -Iinclude $flags \
                -c "$source" -o "$out/unit.o"
            read -r seconds kilobytes <"$out/time"
            if [[ -z "$best_time" ]] || awk "BEGIN { exit !($seconds < $best_time) }"; then
                best_time=$seconds
            fi
            if [[ -z "$best_memory" ]] || ((kilobytes < best_memory)); then
                best_memory=$kilobytes
            fi
        done
        printf "%-24s %-9s %9.1f %9.0f\n" "$name" "$compiler" "$best_time" \
            "$(awk "BEGIN { print $best_memory / 1024 }")"
    done
done
