// The run time of the 64-leaf statement of bench/compile_time.sh: the statement recorded on
// the tape 2000 times per recording (each reading the one before, so that none is dropped), the
// best of 20 recordings, in nanoseconds per statement, next to the same statement on doubles.
// A statement this long is recorded in pieces (docs/reverse.md); its gradient is checked.
//
//   g++ -std=c++20 -O3 -Iinclude bench/compile/long_statement.cpp -o /tmp/long && /tmp/long

#include <nabla/nabla.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace {

// 32 terms, 64 leaves: f = 21 x y + 11 (x - y).
const auto statement = [](const auto& x, const auto& y) {
    return x * y + x - y + y * x + x * y + x - y + y * x + x * y + x - y + y * x + x * y + x - y +
           y * x + x * y + x - y + y * x + x * y + x - y + y * x + x * y + x - y + y * x + x * y +
           x - y + y * x + x * y + x - y + y * x + x * y + x - y + y * x + x * y + x - y;
};

template <class Run>
double best_nanoseconds(Run run) {
    double best = 1e300;
    for (int round = 0; round < 20; ++round) {
        const auto start = std::chrono::steady_clock::now();
        run();
        const auto stop = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::nano>(stop - start).count());
    }
    return best;
}

}  // namespace

int main() {
    constexpr int statements = 2000;
    nabla::tape<> t;
    nabla::var x, y;
    const double recorded = best_nanoseconds([&] {
        auto recording = t.record();
        x = t.input(1.5);
        y = t.input(-2.5);
        nabla::var f = y;
        for (int k = 0; k < statements; ++k)
            f = statement(x, f) * 1e-3;
        t.gradient(f);
    });
    double sink = 0.0;
    const double on_doubles = best_nanoseconds([&] {
        double f = -2.5;
        for (int k = 0; k < statements; ++k)
            f = statement(1.5, f) * 1e-3;
        sink += f;
    });
    // One statement alone: its gradient against 21 y + 11 and 21 x - 11.
    auto recording = t.record();
    x = t.input(1.5);
    y = t.input(-2.5);
    const nabla::var f = statement(x, y);
    t.gradient(f);
    const bool right = t.adjoint(x) == 21.0 * -2.5 + 11.0 && t.adjoint(y) == 21.0 * 1.5 - 11.0;
    std::printf("64-leaf statement: tape %.0f ns per statement (recording and sweep), doubles "
                "%.1f ns (%g)\n",
                recorded / statements, on_doubles / statements, sink);
    std::printf("gradient %s\n", right ? "right" : "WRONG");
    return right ? 0 : 1;
}
