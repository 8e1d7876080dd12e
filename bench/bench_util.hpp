#pragma once
// Side-by-side timing for nabla's benchmarks: each contender runs over the same inputs in
// alternating rounds, and the best round counts (the machines are shared and noisy).
//
// Machine-readable output: when the environment variable NABLA_BENCH_CSV names a file, every
// figure a benchmark prints is also appended to that file as one CSV row
//   program,workload,contender,measure,value,ratio
// where measure is "ns per call" for a timing (ratio: to the workload's first contender, the
// hand-written baseline) or a memory figure such as "peak MB" (ratio left empty). What is printed
// for a person stays the same. scripts/bench.sh collects the rows and plots them.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <errno.h>  // program_invocation_short_name
#endif

namespace nabla_bench {

// Keeps a number alive so the compiler cannot drop the computation that made it; the number stays
// in a register (no store, no memory clobber, so no false dependencies between calls).
inline void keep(double value) {
    asm volatile("" : : "x"(value));
}

// Keeps every number of a value-and-gradient result alive.
template <class Result>
inline void keep_all(const Result& result) {
    keep(result.value);
    for (double g : result.gradient)
        keep(g);
}

struct contender {
    const char* name;
    double best_ns = std::numeric_limits<double>::infinity();
};

// Runs each body(i) for i in [0, calls) per round, alternating contenders, `rounds` times, and
// records the best nanoseconds per call of each.
template <class... Bodies>
void race(std::vector<contender>& contenders, long calls, int rounds, Bodies... bodies) {
    for (int round = 0; round < rounds; ++round) {
        std::size_t k = 0;
        const auto time_one = [&](auto& body) {
            const auto start = std::chrono::steady_clock::now();
            for (long i = 0; i < calls; ++i)
                body(i);
            const auto stop = std::chrono::steady_clock::now();
            const double ns =
                std::chrono::duration<double, std::nano>(stop - start).count() / calls;
            contenders[k].best_ns = std::min(contenders[k].best_ns, ns);
            ++k;
        };
        (time_one(bodies), ...);
    }
}

namespace detail {

// A CSV field: quoted, with quotes inside doubled (workload titles hold commas).
inline std::string csv_field(const char* text) {
    std::string field = "\"";
    for (const char* c = text; *c != '\0'; ++c)
        field += *c == '"' ? std::string("\"\"") : std::string(1, *c);
    return field + "\"";
}

inline const char* program_name() {
#if defined(__GLIBC__)
    return program_invocation_short_name;
#else
    return "benchmark";
#endif
}

}  // namespace detail

// Appends one row to the file NABLA_BENCH_CSV names, with a header line when the file is new;
// does nothing when the variable is not set. A NaN ratio is written as an empty field.
inline void record(const char* workload,
                   const char* contender_name,
                   const char* measure,
                   double value,
                   double ratio = std::numeric_limits<double>::quiet_NaN()) {
    const char* path = std::getenv("NABLA_BENCH_CSV");
    if (path == nullptr || *path == '\0')
        return;
    std::FILE* file = std::fopen(path, "a");
    if (file == nullptr)
        return;
    std::fseek(file, 0, SEEK_END);
    if (std::ftell(file) == 0)
        std::fputs("program,workload,contender,measure,value,ratio\n", file);
    std::fprintf(file, "%s,%s,%s,%s,%.10g,", detail::csv_field(detail::program_name()).c_str(),
                 detail::csv_field(workload).c_str(), detail::csv_field(contender_name).c_str(),
                 detail::csv_field(measure).c_str(), value);
    if (!std::isnan(ratio))
        std::fprintf(file, "%.4f", ratio);
    std::fputs("\n", file);
    std::fclose(file);
}

inline void report(const char* title, const std::vector<contender>& contenders) {
    std::printf("%s\n", title);
    for (const auto& c : contenders) {
        const double ratio = c.best_ns / contenders.front().best_ns;
        std::printf("  %-28s %8.2f ns/call   %5.2fx %s\n", c.name, c.best_ns, ratio,
                    contenders.front().name);
        record(title, c.name, "ns per call", c.best_ns, ratio);
    }
}

}  // namespace nabla_bench
