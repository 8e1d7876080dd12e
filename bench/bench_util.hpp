#pragma once
// Side-by-side timing for nabla's benchmarks: each contender runs over the same inputs in
// alternating rounds, and the best round counts (the machines are shared and noisy).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <vector>

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

inline void report(const char* title, const std::vector<contender>& contenders) {
    std::printf("%s\n", title);
    for (const auto& c : contenders) {
        std::printf("  %-28s %8.2f ns/call   %5.2fx %s\n", c.name, c.best_ns,
                    c.best_ns / contenders.front().best_ns, contenders.front().name);
    }
}

}  // namespace nabla_bench
