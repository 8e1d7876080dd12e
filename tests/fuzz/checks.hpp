#pragma once
// What the random-program tests (tests/fuzz/) check with: the seed range from the environment, a
// relative comparison, central differences with an error estimate and the check against it, and
// the start of a program's description.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <ostream>
#include <vector>

namespace nabla_fuzz {

// A number from the environment (NABLA_FUZZ_SEED, ...), or `fallback`.
inline std::uint64_t environment(const char* name, std::uint64_t fallback) {
    const char* value = std::getenv(name);
    return value ? std::strtoull(value, nullptr, 10) : fallback;
}

// How far apart two results may be: relative to the larger of their magnitudes and 1.
inline bool near(double a, double b, double tolerance) {
    const double scale = std::max({1.0, std::abs(a), std::abs(b)});
    return std::abs(a - b) <= tolerance * scale;
}

// The gradient by central differences with one Richardson step (error O(h^4)), with an error
// estimate for each component: the difference between the two step sizes, O(h^2), far above the
// extrapolated estimate's own error (and far below the error of a wrong derivative), times
// `widen`, plus `floor` relative to the derivative. Empty when a branch or loop of the program
// goes another way at a shifted point, a value is not finite, or the two step sizes disagree by
// more than `disagreement` relative (the function is not smooth at the scale of the step).
struct estimate {
    std::vector<double> gradient, bound;
};

struct difference_options {
    double widen = 1.0;
    double floor = 1e-8;
    double disagreement = std::numeric_limits<double>::infinity();
};

// f(x, branches) runs the program at x and records which way its branches went.
template <class F>
estimate finite_differences(const F& f,
                            const std::vector<double>& point,
                            const difference_options& options = {}) {
    std::vector<int> at;
    f(point, &at);
    estimate e;
    const double h = 1e-3;
    for (std::size_t i = 0; i < point.size(); ++i) {
        double d[2];
        for (int level = 0; level < 2; ++level) {
            const double step = level == 0 ? h : h / 2.0;
            std::vector<double> plus = point, minus = point;
            plus[i] += step;
            minus[i] -= step;
            std::vector<int> bp, bm;
            const double fp = f(plus, &bp);
            const double fm = f(minus, &bm);
            if (bp != at || bm != at || !std::isfinite(fp) || !std::isfinite(fm))
                return {};
            d[level] = (fp - fm) / (2.0 * step);
        }
        const double scale = std::max(1.0, std::abs(d[1]));
        if (std::abs(d[1] - d[0]) > options.disagreement * scale)
            return {};
        e.gradient.push_back((4.0 * d[1] - d[0]) / 3.0);
        e.bound.push_back(options.widen * std::abs(d[1] - d[0]) + options.floor * scale);
    }
    return e;
}

// Every entry of a gradient (reverse mode's) within the estimate's bound.
inline void check_within(const estimate& fd, const std::vector<double>& gradient) {
    for (std::size_t i = 0; i < gradient.size(); ++i) {
        INFO("d/dx" << i << ": reverse " << gradient[i] << ", finite differences " << fd.gradient[i]
                    << " +- " << fd.bound[i]);
        CHECK(std::abs(gradient[i] - fd.gradient[i]) <= fd.bound[i]);
    }
}

// "seed 344, at (-0.0964702):", the start of a failing program's description.
inline void
describe_point(std::ostream& out, std::uint64_t seed, const std::vector<double>& point) {
    out << "seed " << seed << ", at (";
    for (std::size_t i = 0; i < point.size(); ++i)
        out << (i ? ", " : "") << point[i];
    out << "):";
}

}  // namespace nabla_fuzz
