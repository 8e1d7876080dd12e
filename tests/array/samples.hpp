#pragma once
// Arrays for the array tests: the SIMD width, lengths around it, and deterministic samples.

#include <nabla/array.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#if __has_include(<xtensor/xtensor.hpp>)
#include <xtensor/xtensor.hpp>
#endif

namespace nabla_test {

inline constexpr std::size_t lanes_width = nabla::detail::width<nabla::detail::lanes>;

// n values spread over [lo, hi) by the golden ratio, a different order for each salt.
inline std::vector<double> sample(std::size_t n, double lo, double hi, unsigned salt) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double t = std::fmod(0.6180339887 * static_cast<double>(i * 7 + salt * 13 + 1), 1.0);
        v[i] = lo + (hi - lo) * t;
    }
    return v;
}

#if __has_include(<xtensor/xtensor.hpp>)
// rows x cols samples in [lo, hi).
inline xt::xtensor<double, 2>
grid(std::size_t rows, std::size_t cols, double lo, double hi, unsigned salt) {
    const std::vector<double> v = sample(rows * cols, lo, hi, salt);
    xt::xtensor<double, 2> g = xt::xtensor<double, 2>::from_shape({rows, cols});
    std::copy(v.begin(), v.end(), g.begin());
    return g;
}

// A well-conditioned n x n matrix: samples in [-1, 1) plus 3 on the diagonal.
inline xt::xtensor<double, 2> conditioned(std::size_t n, unsigned salt) {
    xt::xtensor<double, 2> a = grid(n, n, -1.0, 1.0, salt);
    for (std::size_t i = 0; i < n; ++i)
        a(i, i) += 3.0;
    return a;
}
#endif

}  // namespace nabla_test
