// Results that do not depend on some or all inputs, through every transformation and mode: a
// function that returns a plain number (double, float, int), a container some of whose outputs
// are constants, and a function that ignores some of its arguments. Every derivative that does
// not depend on an input is an exact zero (never unwritten memory: valgrind's memcheck runs these
// tests, scripts/test.sh), and the entries that do depend on the inputs stay right.

#include <nabla/tensor.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xtensor.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <vector>

namespace {

// Every entry of a matrix, container or array exactly 0 (-0 counts as 0).
template <class Range>
bool all_zero(const Range& r) {
    for (const auto& v : r)
        if (!(v == 0))
            return false;
    return true;
}

template <class Matrix>
bool zero_except(const Matrix& h, std::size_t i, std::size_t j) {
    for (std::size_t r = 0; r < h.shape()[0]; ++r)
        for (std::size_t c = 0; c < h.shape()[1]; ++c)
            if (!(r == i && c == j) && !(h(r, c) == 0))
                return false;
    return true;
}

// A value built from constants only, in double, as real code computes a constant term.
const auto constant_of_three = [](auto, auto, auto) {
    using namespace std;
    return hypot(cbrt(1.25 + cos(3.0) * cos(3.0)), 3.0);
};
const auto constant_of_container = [](const auto&) { return 2.0; };

// The Hessian of x^2 z at (0.45, y, 2): [[2z, 0, 2x], [0, 0, 0], [2x, 0, 0]], its zeros exact.
template <class Matrix>
void check_x2z_hessian(const Matrix& h) {
    const double expected[3][3] = {{4.0, 0.0, 0.9}, {0.0, 0.0, 0.0}, {0.9, 0.0, 0.0}};
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 3; ++j) {
            INFO("H(" << i << ", " << j << ")");
            CHECK(h(i, j) == expected[i][j]);
        }
}

// The number type a generic function of a container is called with.
template <class X>
using number_of = std::remove_cvref_t<decltype(std::declval<const X&>()[0])>;

// Outputs {x0^2, 2}: the second is a constant of the active type.
const auto square_and_constant = [](const auto& y) {
    using T = number_of<std::remove_cvref_t<decltype(y)>>;
    return std::array<T, 2>{y[0] * y[0], T(2.0)};
};

// A function of a container that reads x[0] only: x0^3.
const auto cube_of_first = [](const auto& x) { return x[0] * x[0] * x[0]; };

}  // namespace

TEST_CASE("hessian of a function of scalars that returns a plain number is zero", "[passive]") {
    const auto h = nabla::hessian(constant_of_three, 0.45, 0.45, -0.7);
    REQUIRE(h.shape()[0] == 3);
    REQUIRE(h.shape()[1] == 3);
    CHECK(all_zero(h));
    CHECK(all_zero(nabla::hessian([](auto, auto) { return 3; }, 0.45, 0.45)));
    CHECK(all_zero(nabla::hessian([](auto, auto) { return 3.0f; }, 0.45, 0.45)));
    CHECK(all_zero(nabla::hessian([](auto) { return 3.0; }, 0.45)));
}

TEST_CASE("hessian of a function that ignores some scalar arguments", "[passive]") {
    check_x2z_hessian(
        nabla::hessian([](auto x, auto, auto z) { return x * x * z; }, 0.45, 0.5, 2.0));
}

TEMPLATE_TEST_CASE("hessian of a constant function of a container, in both modes",
                   "[passive]",
                   (std::array<double, 3>),
                   std::vector<double>,
                   (xt::xtensor<double, 1>)) {
    const TestType x = {0.45, 0.45, -0.7};
    for (const auto& h : {nabla::hessian(constant_of_container, x),
                          nabla::hessian(nabla::mode::forward, constant_of_container, x),
                          nabla::hessian(nabla::mode::reverse, constant_of_container, x)}) {
        REQUIRE(h.shape()[0] == 3);
        CHECK(all_zero(h));
    }
    // Beyond one block of forward_chunk directions: 20 inputs, every block unwritten.
    std::vector<double> long_x(20, 0.25);
    CHECK(all_zero(nabla::hessian(nabla::mode::forward, constant_of_container, long_x)));
    CHECK(all_zero(nabla::hessian(nabla::mode::reverse, constant_of_container, long_x)));
}

TEMPLATE_TEST_CASE("hessian of a function that ignores all but one element",
                   "[passive]",
                   (std::array<double, 3>),
                   std::vector<double>,
                   (xt::xtensor<double, 1>)) {
    const TestType x = {0.5, 0.45, -0.7};
    for (const auto& h : {nabla::hessian(nabla::mode::forward, cube_of_first, x),
                          nabla::hessian(nabla::mode::reverse, cube_of_first, x)}) {
        CHECK(h(0, 0) == 3.0);  // 6 x0
        CHECK(zero_except(h, 0, 0));
    }
}

TEST_CASE("gradients of a function that returns a plain number are zero", "[passive]") {
    using nabla::mode::forward, nabla::mode::reverse;
    const auto f = nabla::value_and_grad(constant_of_three, 0.45, 0.45, -0.7);
    CHECK(f.value == constant_of_three(0.0, 0.0, 0.0));
    CHECK(all_zero(f.gradient));
    CHECK(all_zero(nabla::grad(forward, constant_of_three, 0.45, 0.45, -0.7)));
    CHECK(all_zero(nabla::grad(reverse, constant_of_three, 0.45, 0.45, -0.7)));
    CHECK(nabla::value_and_grad(reverse, constant_of_three, 0.45, 0.45, -0.7).value == f.value);
    // An integer and a float result.
    const auto i = nabla::value_and_grad([](auto, auto) { return 7; }, 1.0, 2.0);
    CHECK(i.value == 7.0);
    CHECK(all_zero(i.gradient));
    const auto g = nabla::value_and_grad(
        reverse, [](auto, auto) { return 0.5f; }, 1.0, 2.0);
    CHECK(g.value == 0.5);
    CHECK(all_zero(g.gradient));
    // Ignored arguments: exact zeros next to the derivative that exists.
    const auto h = nabla::grad([](auto, auto y, auto) { return y * y; }, 1.0, 3.0, 2.0);
    CHECK(h[0] == 0);
    CHECK(h[1] == 6.0);
    CHECK(h[2] == 0);
    const auto r = nabla::grad(
        reverse, [](auto, auto y, auto) { return y * y; }, 1.0, 3.0, 2.0);
    CHECK(r[0] == 0);
    CHECK(r[1] == 6.0);
    CHECK(r[2] == 0);
}

TEMPLATE_TEST_CASE("gradients of constant functions of containers, in both modes",
                   "[passive]",
                   (std::array<double, 3>),
                   std::vector<double>,
                   (xt::xtensor<double, 1>)) {
    using nabla::mode::forward, nabla::mode::reverse;
    const TestType x = {0.45, 0.45, -0.7};
    const auto v = nabla::value_and_grad(constant_of_container, x);
    CHECK(v.value == 2.0);
    CHECK(all_zero(v.gradient));
    CHECK(all_zero(nabla::grad(forward, constant_of_container, x)));
    CHECK(all_zero(nabla::grad(reverse, constant_of_container, x)));
    CHECK(all_zero(nabla::grad(
        reverse, [](const auto&) { return 4; }, x)));
    for (const auto& g :
         {nabla::grad(forward, cube_of_first, x), nabla::grad(reverse, cube_of_first, x)}) {
        CHECK(g[0] == Approx(3.0 * 0.45 * 0.45));  // 3 x0^2
        CHECK(g[1] == 0);
        CHECK(g[2] == 0);
    }
}

TEST_CASE("a tape variable assigned from constants only is passive", "[passive]") {
    // y = c * c + 1 with c a constant active variable: nothing depends on the inputs.
    const auto f = [](const auto& x) {
        using T = number_of<std::remove_cvref_t<decltype(x)>>;
        const T c = 1.5;
        const T y = c * c + 1.0;
        return y;
    };
    const std::vector<double> x{1.0, 2.0};
    const auto r = nabla::value_and_grad(nabla::mode::reverse, f, x);
    CHECK(r.value == 3.25);
    CHECK(all_zero(r.gradient));
    CHECK(all_zero(nabla::hvp(f, x, x)));
    CHECK(all_zero(nabla::hessian(nabla::mode::reverse, f, x)));
}

TEST_CASE("jvp of a constant function is zero", "[passive]") {
    const auto j =
        nabla::jvp(constant_of_three, std::tuple{0.45, 0.45, -0.7}, std::tuple{1.0, 2.0, 3.0});
    CHECK(j.value == constant_of_three(0.0, 0.0, 0.0));
    CHECK(j.tangent == 0);
    const auto k =
        nabla::jvp([](auto x, auto) { return x * x; }, std::tuple{3.0, 1.0}, std::tuple{0.0, 1.0});
    CHECK(k.tangent == 0);
}

TEST_CASE("vjp and hvp of constant functions and of constant outputs", "[passive]") {
    const std::vector<double> x{0.45, 0.45, -0.7};
    auto [value, pullback] = nabla::vjp(constant_of_container, x);
    CHECK(value == 2.0);
    CHECK(all_zero(pullback(1.0)));
    CHECK(all_zero(nabla::hvp(constant_of_container, x, x)));
    CHECK(all_zero(nabla::hvp(constant_of_container, std::array{1.0, 2.0}, std::array{1.0, 0.5})));

    auto [values, rows] = nabla::vjp(square_and_constant, x);
    CHECK(values[0] == x[0] * x[0]);
    CHECK(values[1] == 2.0);
    const std::vector<double> row0 = rows(std::array{1.0, 0.0});
    CHECK(row0[0] == 0.9);
    CHECK(row0[1] == 0);
    CHECK(row0[2] == 0);
    CHECK(all_zero(rows(std::array{0.0, 1.0})));

    // Outputs that are plain numbers.
    const auto plain = [](const auto&) { return std::vector<double>{1.0, 2.0}; };
    auto [plain_values, plain_rows] = nabla::vjp(plain, x);
    CHECK(plain_values == std::vector<double>{1.0, 2.0});
    CHECK(all_zero(plain_rows(std::vector<double>{1.0, 1.0})));
}

TEMPLATE_TEST_CASE("jacobians with constant outputs, in both modes",
                   "[passive]",
                   (std::array<double, 3>),
                   std::vector<double>,
                   (xt::xtensor<double, 1>)) {
    using nabla::mode::forward, nabla::mode::reverse;
    const TestType x = {0.5, 0.45, -0.7};
    for (const auto& j : {nabla::jacobian(forward, square_and_constant, x),
                          nabla::jacobian(reverse, square_and_constant, x)}) {
        REQUIRE(j.shape()[0] == 2);
        REQUIRE(j.shape()[1] == 3);
        CHECK(j(0, 0) == 1.0);
        CHECK(zero_except(j, 0, 0));
    }
    // Every output a plain number: doubles and integers.
    const auto doubles = [](const auto&) { return std::vector<double>{1.0, 2.0}; };
    const auto integers = [](const auto&) { return std::array<int, 3>{1, 2, 3}; };
    for (const auto& j :
         {nabla::jacobian(forward, doubles, x), nabla::jacobian(reverse, doubles, x)}) {
        REQUIRE(j.shape()[0] == 2);
        REQUIRE(j.shape()[1] == 3);
        CHECK(all_zero(j));
    }
    for (const auto& j :
         {nabla::jacobian(forward, integers, x), nabla::jacobian(reverse, integers, x)}) {
        REQUIRE(j.shape()[0] == 3);
        CHECK(all_zero(j));
    }
    // More inputs than one chunk of directions.
    const std::vector<double> long_x(19, 0.5);
    CHECK(all_zero(nabla::jacobian(forward, doubles, long_x)));
}

TEST_CASE("derivatives<K> of a function that returns a plain number", "[passive]") {
    const auto d = nabla::derivatives<4>([](auto) { return 2.0; }, 0.3);
    CHECK(d[0] == 2.0);
    CHECK(d[1] == 0);
    CHECK(d[2] == 0);
    CHECK(d[3] == 0);
    CHECK(d[4] == 0);
    const auto i = nabla::derivatives<3>([](auto) { return 5; }, 0.3);
    CHECK(i[0] == 5.0);
    CHECK(all_zero(std::array{i[1], i[2], i[3]}));
    const auto f = nabla::derivatives<3>([](auto) { return 0.25f; }, 0.3);
    CHECK(f[0] == 0.25);
    CHECK(all_zero(std::array{f[1], f[2], f[3]}));
}

TEST_CASE("static expressions that do not use some variables", "[passive]") {
    auto [x, y, z] = nabla::variables<3>();
    const auto f = x * x * z;
    const auto g = nabla::value_and_grad(f, 0.45, 0.5, 2.0);
    CHECK(g.value == 0.45 * 0.45 * 2.0);
    CHECK(g.gradient[0] == 2.0 * 0.45 * 2.0);
    CHECK(g.gradient[1] == 0);
    CHECK(g.gradient[2] == 0.45 * 0.45);
    const auto fy = nabla::grad(nabla::mode::forward, f, 0.45, 0.5, 2.0);
    CHECK(fy[1] == 0);
    check_x2z_hessian(nabla::hessian(f, 0.45, 0.5, 2.0));
    // jvp along the unused variable alone, and Taylor series of an expression of x alone.
    const auto along_y = nabla::jvp(f, std::tuple{0.45, 0.5, 2.0}, std::tuple{0.0, 1.0, 0.0});
    CHECK(along_y.value == g.value);
    CHECK(along_y.tangent == 0);
    const auto series = nabla::derivatives<3>(x * x, 0.5);
    CHECK(series[0] == 0.25);
    CHECK(series[1] == 1.0);
    CHECK(series[2] == 2.0);
    CHECK(series[3] == 0);
    // d(f, y) is the constant 0: its value and gradient are exact zeros.
    const auto dy = nabla::d(f, y);
    CHECK(nabla::to_string(dy) == "0");
    const auto d2 = nabla::value_and_grad(x * y + nabla::d(f, y), 1.0, 2.0, 3.0);
    CHECK(d2.value == 2.0);
    CHECK(d2.gradient[0] == 2.0);
    CHECK(d2.gradient[1] == 1.0);
    CHECK(d2.gradient[2] == 0);
}
