#pragma once
// Functions the API tests differentiate, written once, generically, as a user would.

#include <nabla/nabla.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <type_traits>

namespace nabla_test {

inline const auto seed_function = [](auto x, auto y) {
    using std::log, std::sin;
    return log(x) + x * y - sin(y);
};

// The extended Rosenbrock function of a container of any number type.
inline const auto rosenbrock = [](const auto& x) {
    using T = std::decay_t<decltype(x[0])>;
    T sum = 0;
    for (std::size_t i = 0; i + 1 < x.size(); ++i) {
        const auto a = x[i + 1] - x[i] * x[i];
        const auto b = 1.0 - x[i];
        sum += 100.0 * a * a + b * b;
    }
    return sum;
};

// Schwarzschild's metric in coordinates (t, r, theta, phi), mass M, row-major 4 x 4.
constexpr double mass = 1.0;

struct schwarzschild {
    template <class X>
    auto operator()(const X& x) const {
        using std::sin;
        using T = std::remove_cvref_t<decltype(x[0])>;
        const T r = x[1];
        const T s = sin(x[2]);
        const T f = 1.0 - 2.0 * mass / r;
        std::array<T, 16> g{};
        g[0] = -f;
        g[5] = 1.0 / f;
        g[10] = r * r;
        g[15] = r * r * s * s;
        return g;
    }
};

// The Christoffel symbols Gamma^a_bc at x, index a * 16 + b * 4 + c, from the Jacobian of the
// metric (row a * 4 + b, column c: d g_ab / d x^c). The metric is diagonal, so its inverse is too.
template <class Mode>
struct christoffel {
    template <class X>
    auto operator()(const X& x) const {
        using T = std::remove_cvref_t<decltype(x[0])>;
        const auto g = schwarzschild{}(x);
        const auto dg = nabla::jacobian(Mode{}, schwarzschild{}, x);
        std::array<T, 64> gamma{};
        for (std::size_t a = 0; a < 4; ++a)
            for (std::size_t b = 0; b < 4; ++b)
                for (std::size_t c = 0; c < 4; ++c)
                    gamma[a * 16 + b * 4 + c] =
                        0.5 / g[a * 5] * (dg(a * 4 + c, b) + dg(a * 4 + b, c) - dg(b * 4 + c, a));
        return gamma;
    }
};

}  // namespace nabla_test
