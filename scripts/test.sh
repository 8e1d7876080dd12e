#!/usr/bin/env bash
# The whole test suite, with g++ and clang++: configures (or reconfigures) build-gcc/ and
# build-clang/ at warning_level=3 with werror, builds both, runs every test in both, and prints
# the compile time of each build directory. The consumer tests (subproject, pkg-config, CMake)
# run in build-gcc only. Then the sanitizer stage: the unit tests built with clang++ at -O0
# (instrumented, the template-heavy tests compile several times faster than at -O1) under
# AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer included) in build-asan/, the
# random-program tests (fuzz_tests), the special functions' edges (edge_tests) and the
# documentation's code blocks (docs_snippets, docs_eigen_snippets) too, and the threaded tests
# under ThreadSanitizer in build-tsan/ (at -O1); any report fails the test. Last,
# valgrind's memcheck on the tape tests, the tests of results that do not depend on the inputs,
# the random programs and the random programs of statement shapes of build-gcc.
#
# The last line of output is the total over both builds:
#   N passed, N failed, N skipped
# "failed" counts failed tests, tests that could not be built, and each configure or compile
# step that failed. The exit status is non-zero when anything failed.
#
# Usage: bash scripts/test.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

# name, compiler, compiler id as meson reports it, extra options
builds=(
    "build-gcc g++ gcc -Dconsumer_tests=true"
    "build-clang clang++ clang -Dconsumer_tests=false"
)
# -Dmpi=enabled: nabla/mpi.hpp's tests run under mpiexec with 1 to 4 ranks, and a missing MPI
# fails the configuration instead of leaving them out.
common_options=(-Dwarning_level=3 -Dwerror=true -Dtests=true -Dexamples=true -Dbench=true -Dmpi=enabled)

total_passed=0
total_failed=0
total_skipped=0
summaries=()

# Prints the id of the C++ compiler a configured build directory uses (gcc, clang, ...), from
# the line "C++ compiler for the host machine: g++ (gcc 12.2.0 ...)" of its setup log (meson 1.0
# cannot introspect compilers).
configured_compiler() {
    sed -n -E 's/^C\+\+ compiler for the host machine: [^(]*\(([a-z]+) .*/\1/p' \
        "$1/meson-logs/meson-log.txt" 2>/dev/null | head -n 1 || true
}

# Sets up $1 with compiler $2 (expected id $3) and options $4...: reconfigures a directory that
# is already set up for that compiler, starts afresh otherwise.
configure() {
    local dir=$1 compiler=$2 compiler_id=$3
    shift 3
    if [[ -f "$dir/meson-private/coredata.dat" ]]; then
        if [[ "$(configured_compiler "$dir")" == "$compiler_id" ]]; then
            CXX=$compiler meson setup --reconfigure "$dir" "$@" && return 0
            echo "test.sh: reconfiguring $dir failed; wiping it and starting afresh" >&2
        else
            echo "test.sh: $dir was set up for another compiler; wiping it" >&2
        fi
        CXX=$compiler meson setup --wipe "$dir" "$@"
    else
        if [[ -e "$dir" ]]; then
            echo "test.sh: $dir exists but is not a meson build directory; replacing it" >&2
            rm -rf "$dir"
        fi
        CXX=$compiler meson setup "$dir" "$@"
    fi
}

# Prints the names of the tests in build directory $1 that can run: after a failed compile,
# tests whose program was not (re)built are left out, so one broken test file does not hide the
# results of all the others.
runnable_tests() {
    local dir=$1
    # ninja's dry run lists what is still out of date, including every program that failed.
    ninja -C "$dir" -n 2>/dev/null | sed -n -E 's/^\[[0-9]+\/[0-9]+\] Linking target (.*)$/\1/p' \
        >"$dir/meson-logs/stale-targets.txt" || true
    meson introspect --tests "$dir" | python3 -c '
import json, os, sys
build_dir = sys.argv[1]
with open(os.path.join(build_dir, "meson-logs", "stale-targets.txt")) as f:
    stale = {os.path.normpath(line.strip()) for line in f if line.strip()}
for test in json.load(sys.stdin):
    program = test["cmd"][0]
    relative = os.path.normpath(os.path.relpath(program, build_dir))
    if os.path.exists(program) and relative not in stale:
        print(test["name"])
' "$dir"
}

# Prints "passed failed skipped" for the test log of build directory $1.
count_results() {
    python3 - "$1/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
try:
    with open(sys.argv[1]) as log:
        for line in log:
            if not line.strip():
                continue
            result = json.loads(line).get("result")
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
except FileNotFoundError:
    pass
print(passed, failed, skipped)
PY
}

for build in "${builds[@]}"; do
    read -r dir compiler compiler_id extra <<<"$build"
    read -r -a extra_options <<<"$extra"
    echo
    echo "=== $dir ($compiler) ==="
    not_built=0

    if ! configure "$dir" "$compiler" "$compiler_id" "${common_options[@]}" "${extra_options[@]}"; then
        echo "test.sh: $dir: configuration failed" >&2
        summaries+=("$dir: configuration FAILED")
        total_failed=$((total_failed + 1))
        continue
    fi

    start=$EPOCHREALTIME
    compiled=true
    # -k0: keep going after an error, so every test that can be built is built and run.
    meson compile -C "$dir" -j 2 --ninja-args=-k0 || compiled=false
    compile_seconds=$(python3 -c "print(f'{$EPOCHREALTIME - $start:.1f}')")
    echo "$dir: compile time ${compile_seconds} s"

    rm -f "$dir/meson-logs/testlog.json"
    tests_ok=true
    if $compiled; then
        meson test -C "$dir" --no-rebuild --print-errorlogs || tests_ok=false
    else
        mapfile -t runnable < <(runnable_tests "$dir")
        all_count=$(meson introspect --tests "$dir" |
            python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
        not_built=$((all_count - ${#runnable[@]}))
        echo "test.sh: $dir: compilation failed; $not_built test(s) could not be built" >&2
        if [[ ${#runnable[@]} -gt 0 ]]; then
            meson test -C "$dir" --no-rebuild --print-errorlogs "${runnable[@]}" || tests_ok=false
        fi
    fi

    read -r passed failed skipped < <(count_results "$dir")
    if ! $tests_ok && [[ $failed -eq 0 ]]; then
        # meson test failed without recording a failed test: count the harness error itself.
        failed=1
    fi
    # A failed compile shows as the tests it left unbuilt, or as one failure if those were
    # none (a broken example or benchmark program).
    if ! $compiled; then
        failed=$((failed + (not_built > 0 ? not_built : 1)))
    fi
    total_passed=$((total_passed + passed))
    total_failed=$((total_failed + failed))
    total_skipped=$((total_skipped + skipped))
    status="compiled in ${compile_seconds} s"
    $compiled || status="compilation FAILED after ${compile_seconds} s"
    summaries+=("$dir: $passed passed, $failed failed, $skipped skipped; $status")
done

# The sanitizer stage: directory, compiler, compiler id, sanitizers, optimization level, program
# targets, test suites (lists separated by commas), MPI (enabled or disabled). nabla/mpi.hpp's
# tests stay out: under AddressSanitizer they cost the stage 110 s of compiling, time .ci/run
# cannot spare (they pass there, with LeakSanitizer off for Open MPI's own allocations).
sanitizer_builds=(
    "build-asan clang++ clang address,undefined 0 unit_tests,fuzz_tests,edge_tests,docs_snippets,docs_eigen_snippets unit,fuzz,edges,docs disabled"
    "build-tsan g++ gcc thread 1 thread_tests threads disabled"
)
# halt_on_error: the first report fails the test. alloc_dealloc_mismatch=0: Catch2 2.13's own
# test registry frees with free() what it allocated with new(std::nothrow) when built with
# clang; that report comes from Catch2's teardown, not from nabla.
export ASAN_OPTIONS=alloc_dealloc_mismatch=0:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS=halt_on_error=1
for build in "${sanitizer_builds[@]}"; do
    read -r dir compiler compiler_id sanitize optimization target suite mpi <<<"$build"
    echo
    echo "=== $dir ($compiler, -fsanitize=$sanitize) ==="
    if ! configure "$dir" "$compiler" "$compiler_id" -Dwarning_level=3 -Dwerror=true \
        -Dtests=true -Dexamples=false -Dbench=false -Dconsumer_tests=false "-Dmpi=$mpi" \
        "-Doptimization=$optimization" "-Db_sanitize=$sanitize" -Db_lundef=false; then
        summaries+=("$dir: configuration FAILED")
        total_failed=$((total_failed + 1))
        continue
    fi
    start=$EPOCHREALTIME
    IFS=, read -r -a targets <<<"$target"
    IFS=, read -r -a suites <<<"$suite"
    suite_options=()
    for s in "${suites[@]}"; do
        suite_options+=(--suite "$s")
    done
    if ! meson compile -C "$dir" -j 2 "${targets[@]}"; then
        summaries+=("$dir: compilation FAILED")
        total_failed=$((total_failed + 1))
        continue
    fi
    compile_seconds=$(python3 -c "print(f'{$EPOCHREALTIME - $start:.1f}')")
    rm -f "$dir/meson-logs/testlog.json"
    tests_ok=true
    meson test -C "$dir" --no-rebuild --print-errorlogs "${suite_options[@]}" || tests_ok=false
    read -r passed failed skipped < <(count_results "$dir")
    if ! $tests_ok && [[ $failed -eq 0 ]]; then
        failed=1
    fi
    total_passed=$((total_passed + passed))
    total_failed=$((total_failed + failed))
    total_skipped=$((total_skipped + skipped))
    summaries+=("$dir ($sanitize): $passed passed, $failed failed, $skipped skipped; compiled in ${compile_seconds} s")
done

# Valgrind's memcheck on the tape tests, the tests of results that do not depend on the inputs
# and the random programs of the g++ build: no invalid access, no read of uninitialised memory
# that decides a branch or an output, no leak (--errors-for-leak-kinds=definite,indirect,possible
# counts leaks as errors); --error-exitcode makes any of these fail the stage.
echo
echo "=== valgrind (build-gcc: [reverse] and [passive] unit tests, random programs, statement shapes) ==="
valgrind_ok=true
for run in "tests/unit_tests [reverse],[passive]" "tests/fuzz_tests" "tests/shapes_tests"; do
    read -r program filter <<<"$run"
    if [[ ! -x "build-gcc/$program" ]]; then
        valgrind_ok=false
        continue
    fi
    # (somalloc=nouserintercepts: the allocation-counting test replaces operator new and
    # delete; valgrind leaves them as written instead of redirecting only some of their calls.)
    valgrind --quiet --soname-synonyms=somalloc=nouserintercepts --leak-check=full --errors-for-leak-kinds=definite,indirect,possible \
        --error-exitcode=3 "build-gcc/$program" ${filter:+"$filter"} --reporter compact ||
        valgrind_ok=false
done
if $valgrind_ok; then
    total_passed=$((total_passed + 1))
    summaries+=("valgrind (memcheck): 1 passed, 0 failed")
else
    total_failed=$((total_failed + 1))
    summaries+=("valgrind (memcheck): 0 passed, 1 failed")
fi

echo
echo "=== summary ==="
printf '%s\n' "${summaries[@]}"
echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
[[ $total_failed -eq 0 ]]
