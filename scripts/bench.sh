#!/usr/bin/env bash
# Runs nabla's benchmark programs with g++ and clang++, collects their figures as CSV and draws
# the charts of bench/RESULTS.md.
#
# Usage, from anywhere in the repository:
#   bash scripts/bench.sh                          # every program once per compiler
#   NABLA_BENCH_WAIT=60 bash scripts/bench.sh 6    # six times each, on a quiet machine (below)
#
# Steps:
#   1. configures (once) and builds the benchmark programs in build-bench/ with g++ and in
#      build-bench-clang/ with clang++: buildtype release (-O3, no -march), tests and examples off;
#   2. prints the processor (lscpu's model name), its cores and the compilers;
#   3. runs every program the given number of times per compiler, the two compilers in turn, with
#      NABLA_BENCH_CSV set, so that every figure a program prints is also a CSV row
#      (bench/bench_util.hpp): build-bench/results-gcc.csv and build-bench-clang/results-clang.csv,
#      what the programs print next to them in results-gcc.txt and results-clang.txt;
#   4. draws docs/images/bench_ratios.png and docs/images/bench_scaling.png from the CSV with
#      scripts/plot_results.py (Python 3 with matplotlib, Debian's python3-matplotlib; only the
#      charts need it). The figures as the Markdown tables of bench/RESULTS.md:
#        python3 scripts/plot_results.py --tables --gcc build-bench/results-gcc.csv \
#            --clang build-bench-clang/results-clang.csv
#
# The programs time in alternating rounds and keep the best, but a machine busy with other work
# still moves the figures. With NABLA_BENCH_WAIT=minutes, each run waits (at most that long in
# all) until no compiler, linker or valgrind runs and the processors are idle, and a run during
# which other processes took processor time is repeated (up to five times).
#
# The graph pictures of docs/guide.md come from nabla::to_dot and Graphviz (apt-get install
# graphviz):
#   meson setup build && ninja -C build examples/seed_function
#   build/examples/seed_function seed.dot
#   dot -Tpng seed.dot -o docs/images/seed_function_graph.png
# and docs/images/derivative_graph.png the same way from the three lines shown in docs/guide.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

runs=${1:-1}
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: bash scripts/bench.sh [runs]" >&2
    exit 2
fi
wait_limit=$((${NABLA_BENCH_WAIT:-0} * 60))
waited=0

# build directory, compiler, short name
builds=(
    "build-bench g++ gcc"
    "build-bench-clang clang++ clang"
)
programs=(static_gradient forward_gradient forward_gradient_no_simd taylor_derivatives taylor_ode
          reverse_gradient)

for build in "${builds[@]}"; do
    read -r dir compiler _ <<<"$build"
    if [[ ! -f "$dir/meson-private/coredata.dat" ]]; then
        CXX=$compiler meson setup "$dir" -Dbuildtype=release -Dtests=false -Dexamples=false \
            -Dbench=true
    fi
    ninja -C "$dir"
done

# The processors' busy and total time so far, in clock ticks (the first line of /proc/stat).
processor_ticks() {
    local fields
    read -r -a fields < <(head -n 1 /proc/stat)
    local total=0 i
    for ((i = 1; i < ${#fields[@]}; ++i)); do
        total=$((total + fields[i]))
    done
    echo $((total - fields[4] - fields[5])) "$total"  # less idle and iowait
}

# True while a compiler, a linker or valgrind runs (clang compiles in its own process; valgrind
# runs as its tool's, memcheck-amd64-linux), or while the processors were more than 10% busy over
# 5 seconds.
busy() {
    pgrep -f '^([^ ]*/)?(cc1plus|cc1|clang|clang\+\+|clang-[0-9]+|collect2|ld|ld\.[a-z]+)( |$)' \
        >/dev/null && return 0
    pgrep -f 'valgrind|memcheck' >/dev/null && return 0
    local busy0 total0 busy1 total1
    read -r busy0 total0 < <(processor_ticks)
    sleep 5
    read -r busy1 total1 < <(processor_ticks)
    ((100 * (busy1 - busy0) > 10 * (total1 - total0)))
}

wait_for_quiet() {
    while ((waited < wait_limit)) && busy; do
        sleep 15
        waited=$((waited + 20))
    done
}

# The processor seconds used by this shell's finished children so far, from the second line of
# the `times` builtin, which the caller writes to file $1 (a builtin in a command substitution
# would report the subshell's children instead).
children_seconds() {
    awk 'NR == 2 {
        total = 0
        for (i = 1; i <= 2; ++i) {
            split($i, part, "m")
            sub("s", "", part[2])
            total += part[1] * 60 + part[2]
        }
        print total
    }' "$1"
}

# Runs bench/$2 of build directory $1, appending its CSV rows to $3 and its output to $4. With
# NABLA_BENCH_WAIT set, a run during which other processes took more processor time than 5% of
# its wall time (and half a second) is repeated, up to five times.
run_program() {
    local dir=$1 program=$2 csv=$3 text=$4 try rows output times
    rows=$(mktemp) output=$(mktemp) times=$(mktemp)
    for ((try = 1; try <= 5; ++try)); do
        wait_for_quiet
        rm -f "$rows"
        local busy0 total0 busy1 total1 own0 own1 start end others
        times >"$times"
        own0=$(children_seconds "$times")
        read -r busy0 total0 < <(processor_ticks)
        start=$(date +%s.%N)
        # ADOL-C keeps large traces in files of the working directory: the build directory.
        (cd "$dir" && NABLA_BENCH_CSV="$rows" "bench/$program" >"$output")
        end=$(date +%s.%N)
        read -r busy1 total1 < <(processor_ticks)
        times >"$times"
        own1=$(children_seconds "$times")
        others=$(awk -v busy="$((busy1 - busy0))" -v hz="$(getconf CLK_TCK)" -v own0="$own0" \
            -v own1="$own1" 'BEGIN { printf "%.2f", busy / hz - (own1 - own0) }')
        if ((wait_limit == 0 || try == 5)) || awk -v others="$others" -v start="$start" \
            -v end="$end" 'BEGIN { exit !(others < 0.05 * (end - start) + 0.5) }'; then
            break
        fi
        echo "bench.sh: other processes took $others s of processor time during $program;" \
            "running it again" >&2
    done
    {
        echo "== $program"
        cat "$output"
    } | tee -a "$text"
    if [[ -f "$csv" ]]; then
        tail -n +2 "$rows" >>"$csv"
    else
        cp "$rows" "$csv"
    fi
    rm -f "$rows" "$output" "$times"
}

echo "processor: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
for build in "${builds[@]}"; do
    read -r _ compiler _ <<<"$build"
    echo "compiler: $("$compiler" --version | head -n 1)"
done

for build in "${builds[@]}"; do
    read -r dir _ name <<<"$build"
    rm -f "$dir/results-$name.csv" "$dir/results-$name.txt"
done
for ((run = 1; run <= runs; ++run)); do
    for program in "${programs[@]}"; do
        for build in "${builds[@]}"; do
            read -r dir _ name <<<"$build"
            if [[ ! -x "$dir/bench/$program" ]]; then
                echo "$dir/bench/$program was not built (a peer is missing); left out" >&2
                continue
            fi
            echo "-- $name, run $run of $runs" >>"$root/$dir/results-$name.txt"
            run_program "$dir" "$program" "$root/$dir/results-$name.csv" \
                "$root/$dir/results-$name.txt"
        done
    done
    echo "run $run of $runs done"
done
if ((waited > 0)); then
    echo "bench.sh: waited about $waited s in all for a quiet machine"
fi

# Debian's matplotlib is installed for the system's python3, which a pyenv shim may hide.
python=python3
if ! "$python" -c 'import matplotlib' 2>/dev/null && [[ -x /usr/bin/python3 ]]; then
    python=/usr/bin/python3
fi
"$python" scripts/plot_results.py --images docs/images \
    --gcc build-bench/results-gcc.csv --gcc-name "g++ $(g++ -dumpfullversion)" \
    --clang build-bench-clang/results-clang.csv --clang-name "clang++ $(clang++ -dumpversion)"
