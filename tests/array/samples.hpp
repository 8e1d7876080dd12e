#pragma once
// Arrays for the array tests: the SIMD width, lengths around it, and deterministic samples.

#include <nabla/array.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

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

}  // namespace nabla_test
