#!/usr/bin/env bash
# Compile time and compiler memory of representative translation units, with g++ and clang++ at
# -O3 (as the benchmarks build): the flagship example, the Lennard-Jones program, the pendulum
# example, a function that solves a linear system with Eigen's LU compiled on doubles and
# differentiated in each mode (bench/compile/eigen_lu.cpp), the largest test file, and one
# statement that reads two variables N times (a sum of N/2 products and differences of x and y,
# N = 4 ... 128) recorded on the tape, built as a static expression and its gradient, and
# computed on doubles, so that the cost of a statement's size shows. Prints seconds and peak
# megabytes per unit; the figures in bench/RESULTS.md come from here. Run on an idle machine:
# the times are wall-clock.
#
# Usage: bash bench/compile_time.sh [runs] [units]   (the best of `runs` per unit, default 3;
# units: all, or statements for the statement sizes alone)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-3}
which_units=${2:-all}
if [[ ! -x /usr/bin/time ]]; then
    echo "bench/compile_time.sh: /usr/bin/time measures the compiler's memory: apt-get install time" >&2
    exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
eigen_flags=$(pkg-config --cflags eigen3 2>/dev/null || echo "-I/usr/include/eigen3")

# One statement of n leaves: x * y, x - y and y * x in turn, n / 2 of them added.
statement() {
    local n=$1 terms="" i
    for ((i = 0; i < n / 2; ++i)); do
        case $((i % 3)) in
        0) terms+="x * y" ;;
        1) terms+="x - y" ;;
        2) terms+="y * x" ;;
        esac
        if ((i + 1 < n / 2)); then
            terms+=" + "
        fi
    done
    echo "$terms"
}
for n in 4 8 16 32 64 128; do
    terms=$(statement "$n")
    cat >"$out/tape_$n.cpp" <<EOF
#include <nabla/nabla.hpp>
#include <cstdio>
int main() {
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var x = t.input(1.5), y = t.input(2.5);
    const nabla::var f = $terms;
    t.gradient(f);
    std::printf("%g %g\n", t.adjoint(x), t.adjoint(y));
}
EOF
    cat >"$out/static_$n.cpp" <<EOF
#include <nabla/nabla.hpp>
#include <cstdio>
int main() {
    const auto [x, y] = nabla::variables<2>();
    const auto f = $terms;
    const auto r = nabla::value_and_grad(f, 1.5, 2.5);
    std::printf("%g %g\n", r.gradient[0], r.gradient[1]);
}
EOF
    cat >"$out/doubles_$n.cpp" <<EOF
#include <nabla/nabla.hpp>
#include <cstdio>
int main(int argc, char**) {
    const double x = 1.5 * argc, y = 2.5;
    const double f = $terms;
    std::printf("%g\n", f);
}
EOF
done

# Three statements of 32 leaves in one function (the autodiff library's identity tests are of
# this shape), on the tape and on doubles.
first=$(statement 32)
second=$(statement 32 | sed 's/x \* y/y * y/g; s/x - y/y - x/g')
third=$(statement 32 | sed 's/x \* y/x * x/g; s/y \* x/x + y/g')
cat >"$out/tape_3x32.cpp" <<EOF
#include <nabla/nabla.hpp>
#include <cstdio>
int main() {
    nabla::tape<> t;
    auto recording = t.record();
    const nabla::var x = t.input(1.5), y = t.input(2.5);
    const nabla::var f = $first;
    const nabla::var g = $second;
    const nabla::var h = $third;
    const nabla::var s = f + g + h;
    t.gradient(s);
    std::printf("%g %g\n", t.adjoint(x), t.adjoint(y));
}
EOF
cat >"$out/doubles_3x32.cpp" <<EOF
#include <nabla/nabla.hpp>
#include <cstdio>
int main(int argc, char**) {
    const double x = 1.5 * argc, y = 2.5;
    const double f = $first;
    const double g = $second;
    const double h = $third;
    std::printf("%g\n", f + g + h);
}
EOF

# unit name, source, extra flags
units=(
    "seed_function|examples/seed_function.cpp|"
    "lennard_jones_cluster|examples/lennard_jones_cluster.cpp|"
    "pendulum_period|examples/pendulum_period.cpp|"
    "eigen_lu_doubles|bench/compile/eigen_lu.cpp|-DNABLA_COMPILE_MODE=0 $eigen_flags"
    "eigen_lu_forward|bench/compile/eigen_lu.cpp|-DNABLA_COMPILE_MODE=1 $eigen_flags"
    "eigen_lu_reverse|bench/compile/eigen_lu.cpp|-DNABLA_COMPILE_MODE=2 $eigen_flags"
    "eigen_lu_taylor|bench/compile/eigen_lu.cpp|-DNABLA_COMPILE_MODE=3 $eigen_flags"
    "eigen_lu_all_three|bench/compile/eigen_lu.cpp|-DNABLA_COMPILE_MODE=4 $eigen_flags"
    "static_programs_test|tests/fuzz/static_programs_test.cpp|-Itests -DNABLA_TEST_DATA_DIR=\"tests/data\""
)
if [[ $which_units == statements ]]; then
    units=()
fi
units+=("three_statements_32_doubles|$out/doubles_3x32.cpp|"
    "three_statements_32_tape|$out/tape_3x32.cpp|")
for n in 4 8 16 32 64 128; do
    units+=("statement_${n}_doubles|$out/doubles_$n.cpp|"
        "statement_${n}_tape|$out/tape_$n.cpp|"
        "statement_${n}_static|$out/static_$n.cpp|")
done

printf "%-28s %-9s %9s %9s\n" unit compiler seconds "peak MB"
for compiler in g++ clang++; do
    for unit in "${units[@]}"; do
        IFS='|' read -r name source flags <<<"$unit"
        best_time=""
        best_memory=""
        for ((run = 0; run < runs; ++run)); do
            # shellcheck disable=SC2086
            /usr/bin/time -f "%e %M" -o "$out/time" "$compiler" -std=c++20 -O3 -pthread -Iinclude \
                $flags -c "$source" -o "$out/unit.o"
            read -r seconds kilobytes <"$out/time"
            if [[ -z "$best_time" ]] || awk "BEGIN { exit !($seconds < $best_time) }"; then
                best_time=$seconds
            fi
            if [[ -z "$best_memory" ]] || ((kilobytes < best_memory)); then
                best_memory=$kilobytes
            fi
        done
        printf "%-28s %-9s %9.2f %9.0f\n" "$name" "$compiler" "$best_time" \
            "$(awk "BEGIN { print $best_memory / 1024 }")"
    done
done
