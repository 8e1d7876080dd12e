#pragma once
// The rows of tests/data/taylor.txt (derivatives of order 0..8 of a composition of each rule with
// an inner function, from mpmath) and the accuracy they are checked to, shared by the tests of
// nabla::taylor and of the order-by-order series tape.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "../test_data.hpp"

namespace nabla_test {

constexpr std::size_t order = 8;

struct taylor_row {
    std::string name;
    std::vector<double> parameters;
    std::array<double, 6> inner{};
    double x0 = 0.0;
    std::array<double, order + 1> derivatives{};
    std::string text;
};

inline std::vector<taylor_row> read_taylor_rows() {
    std::vector<taylor_row> rows;
    for (const auto& line : nabla_test::data_lines("taylor.txt")) {
        std::istringstream in(line);
        taylor_row r;
        r.text = line;
        std::size_t count = 0;
        const auto number = [&] { return nabla_test::read_number(in); };
        in >> r.name >> count;
        for (std::size_t i = 0; i < count; ++i)
            r.parameters.push_back(number());
        for (double& a : r.inner)
            a = number();
        r.x0 = number();
        for (double& d : r.derivatives)
            d = number();
        rows.push_back(r);
    }
    return rows;
}

// Normwise relative accuracy: each derivative to 1e-11 of itself or of the largest derivative
// of the row divided by 1e3, whichever is larger (a derivative that nearly cancels is a
// difference of terms of the row's scale).
inline bool close_derivatives(const std::array<double, order + 1>& computed,
                              const std::array<double, order + 1>& expected,
                              std::size_t k) {
    double scale = 0.0;
    for (double d : expected)
        scale = std::max(scale, std::abs(d));
    return std::abs(computed[k] - expected[k]) <=
           1e-11 * std::max(std::abs(expected[k]), 1e-3 * scale);
}

// The row's function composed with its inner functions, generic in the number type:
// x -> build(parameters, u1(x), u2(x), u3(x)), u1 = a0 + a1 sin x, u2 = a2 + a3 cos x,
// u3 = a4 + a5 sin 2x.
template <class Build>
auto composition(const taylor_row& r, Build build) {
    return [&r, build](auto x) {
        using std::sin, std::cos;
        const auto u1 = r.inner[0] + r.inner[1] * sin(x);
        const auto u2 = r.inner[2] + r.inner[3] * cos(x);
        const auto u3 = r.inner[4] + r.inner[5] * sin(2.0 * x);
        return build(r.parameters, u1, u2, u3);
    };
}

}  // namespace nabla_test
