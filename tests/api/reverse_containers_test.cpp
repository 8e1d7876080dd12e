// Reverse-mode transformations (api/reverse.hpp: vjp, hvp, hessian and grad in reverse mode) on
// each container type, std::vector, std::array and xt::xtensor, against forward mode (dual numbers,
// another code path) and a hand-written gradient. The functions branch on values, so the tape
// records whichever branch each input takes.

#include <nabla/tensor.hpp>

#include <catch2/catch.hpp>
#include <xtensor/xtensor.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace {

// f(x) = log(1 + s^2), s = sum_i (x_i x_{i+1}^2 if x_i > 0, else exp(x_i) sin(x_{i+1})), indices
// cyclic.
const auto branchy = [](const auto& x) {
    using T = std::decay_t<decltype(x[0])>;
    using std::exp, std::log, std::sin;
    const std::size_t n = x.size();
    T s = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        if (x[i] > 0.0)
            s += x[i] * x[(i + 1) % n] * x[(i + 1) % n];
        else
            s += exp(x[i]) * sin(x[(i + 1) % n]);
    }
    T f = log(1.0 + s * s);
    return f;
};

// Its gradient by hand: ds/dx, times df/ds = 2 s / (1 + s^2).
template <class Container>
std::vector<double> branchy_gradient(const Container& x) {
    const std::size_t n = x.size();
    std::vector<double> g(n, 0.0);
    double s = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double a = x[i], b = x[(i + 1) % n];
        if (a > 0.0) {
            s += a * b * b;
            g[i] += b * b;
            g[(i + 1) % n] += 2.0 * a * b;
        } else {
            s += std::exp(a) * std::sin(b);
            g[i] += std::exp(a) * std::sin(b);
            g[(i + 1) % n] += std::exp(a) * std::cos(b);
        }
    }
    for (double& v : g)
        v *= 2.0 * s / (1.0 + s * s);
    return g;
}

// Output k of a map R^n -> R^m: a sum over the inputs with a branch on each one's value.
template <class T, class Container>
T field_entry(const Container& x, std::size_t k) {
    using std::exp, std::sin;
    const std::size_t n = x.size();
    T s = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        if (x[i] > 0.0)
            s += x[i] * x[(i + k + 1) % n];
        else
            s -= sin(x[i] * (1.0 + static_cast<double>(k)));
    }
    T y = s * exp(0.1 * x[k % n]);
    return y;
}

// The map with three outputs, as a std::array and as an xtensor.
const auto to_array = [](const auto& x) {
    using T = std::decay_t<decltype(x[0])>;
    return std::array<T, 3>{field_entry<T>(x, 0), field_entry<T>(x, 1), field_entry<T>(x, 2)};
};
const auto to_xtensor = [](const auto& x) {
    using T = std::decay_t<decltype(x[0])>;
    auto y = xt::xtensor<T, 1>::from_shape({3});
    for (std::size_t k = 0; k < 3; ++k)
        y[k] = field_entry<T>(x, k);
    return y;
};

template <class Container>
Container point(Container x) {
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = 1.1 * std::sin(1.7 * static_cast<double>(i) + 0.3);  // both signs
    return x;
}

// Relative to the largest entry of the result: a sum of two terms may cancel in one entry.
bool close(double computed, double expected, double scale) {
    return std::abs(computed - expected) <= 1e-13 * std::max(std::abs(expected), scale);
}

template <class Container>
double largest(const Container& c) {
    double m = 0.0;
    for (double v : c)
        m = std::max(m, std::abs(v));
    return m;
}

// vjp's pullback against the forward-mode Jacobian: the rows pullback(e_i), twice over (each call
// sweeps the same recording again), a combination of rows, and cotangents of the wrong size.
template <class F, class Container>
void check_pullback(const F& f, const Container& x) {
    auto [y, pullback] = nabla::vjp(f, x);
    const auto J = nabla::jacobian(f, x);
    const auto plain = f(x);
    REQUIRE(y.size() == 3);
    REQUIRE(J.shape()[0] == 3);
    for (std::size_t i = 0; i < 3; ++i)
        CHECK(y[i] == Approx(plain[i]).epsilon(1e-15).margin(1e-15));
    const double scale = largest(J);
    REQUIRE(scale > 0.1);
    for (int round = 0; round < 2; ++round)
        for (std::size_t i = 0; i < 3; ++i) {
            auto e = y;
            std::fill(e.begin(), e.end(), 0.0);
            e[2 - i] = 1.0;  // rows last to first: no sweep depends on the one before
            const Container row = pullback(e);
            REQUIRE(row.size() == x.size());
            for (std::size_t k = 0; k < x.size(); ++k) {
                INFO("round " << round << ", row " << 2 - i << ", column " << k);
                CHECK(close(row[k], J(2 - i, k), scale));
            }
        }
    auto w = y;
    w[0] = 2.0;
    w[1] = -1.0;
    w[2] = 0.5;
    const Container combined = pullback(w);
    for (std::size_t k = 0; k < x.size(); ++k)
        CHECK(close(combined[k], 2.0 * J(0, k) - J(1, k) + 0.5 * J(2, k), scale));
    CHECK_THROWS_AS(pullback(std::vector<double>{1.0, 2.0}), std::invalid_argument);
    CHECK_THROWS_WITH(pullback(std::vector<double>(4, 1.0)),
                      Catch::Contains("the cotangent w has 4 entries, F has 3 outputs"));
}

}  // namespace

TEST_CASE("vjp of a function of a std::vector to one number: the pullback takes a number",
          "[api][reverse]") {
    // A scalar F: the cotangent is a number, and pullback(w) = w grad f, in x's type. Against the
    // hand-written gradient, and forward mode.
    const auto x = point(std::vector<double>(7));
    auto [y, pullback] = nabla::vjp(branchy, x);
    static_assert(std::is_same_v<decltype(y), double>);
    CHECK(y == Approx(branchy(x)).epsilon(1e-15));
    const std::vector<double> hand = branchy_gradient(x);
    const std::vector<double> forward = nabla::grad(nabla::mode::forward, branchy, x);
    const double scale = largest(hand);
    REQUIRE(scale > 0.1);
    for (const double w : {1.0, -2.5, 1.0}) {
        const std::vector<double> g = pullback(w);
        REQUIRE(g.size() == x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            INFO("w = " << w << ", entry " << i);
            CHECK(close(g[i], w * hand[i], std::abs(w) * scale));
            CHECK(close(g[i], w * forward[i], std::abs(w) * scale));
        }
    }
}

TEST_CASE("vjp of std::array to std::array, std::vector to std::array and xtensor to xtensor",
          "[api][reverse][tensor]") {
    // Each input container is recorded through its own path (spans of std::array and xtensor
    // storage, a lent std::vector), each output container is recorded element by element; the
    // rows of the Jacobian come out the same as forward mode's.
    SECTION("std::array<double, 6> to std::array<double, 3>") {
        check_pullback(to_array, point(std::array<double, 6>{}));
    }
    SECTION("std::vector<double> to std::array<double, 3>") {
        check_pullback(to_array, point(std::vector<double>(9)));
    }
    SECTION("xt::xtensor<double, 1> to xt::xtensor<double, 1>") {
        check_pullback(to_xtensor, point(xt::xtensor<double, 1>::from_shape({8})));
    }
}

TEST_CASE("hvp and the reverse-mode Hessian of std::array and xtensor inputs", "[api][reverse]") {
    // Forward over reverse (dual numbers on the tape; the Hessian forward_chunk columns per
    // recording, so forward_chunk + 2 inputs take a second, partial, block) against forward over
    // forward, and H v against the forward Hessian times v.
    const auto check = [](const auto& x) {
        using Container = std::remove_cvref_t<decltype(x)>;
        const auto forward = nabla::hessian(nabla::mode::forward, branchy, x);
        const auto reverse = nabla::hessian(nabla::mode::reverse, branchy, x);
        const std::size_t n = x.size();
        REQUIRE(reverse.shape()[0] == n);
        REQUIRE(reverse.shape()[1] == n);
        const double scale = largest(forward);
        REQUIRE(scale > 0.1);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                INFO("H(" << i << ", " << j << ")");
                CHECK(close(reverse(i, j), forward(i, j), scale));
            }
        Container v = x;
        for (std::size_t k = 0; k < n; ++k)
            v[k] = std::cos(0.9 * static_cast<double>(k));
        const Container hv = nabla::hvp(branchy, x, v);
        for (std::size_t i = 0; i < n; ++i) {
            double expected = 0.0;
            for (std::size_t j = 0; j < n; ++j)
                expected += forward(i, j) * v[j];
            INFO("(H v)" << i);
            CHECK(close(hv[i], expected, scale));
        }
        CHECK_THROWS_AS(nabla::hvp(branchy, x, std::vector<double>(n + 1)), std::invalid_argument);
    };
    constexpr std::size_t n = nabla::forward_chunk + 2;
    check(point(std::array<double, n>{}));
    check(point(xt::xtensor<double, 1>::from_shape({n})));
}

TEST_CASE("grad in reverse mode of xtensor and std::array<double, 40> inputs", "[api][reverse]") {
    // An xtensor goes to forward mode by default (xtensor's reductions need duals), so reverse
    // mode is forced; a std::array of 40 goes to reverse mode by default. Both against forward
    // mode and the hand-written gradient; the gradient has the input's type.
    const auto xt_point = point(xt::xtensor<double, 1>::from_shape({12}));
    const auto [value, g] = nabla::value_and_grad(nabla::mode::reverse, branchy, xt_point);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(g)>, xt::xtensor<double, 1>>);
    CHECK(value == Approx(branchy(xt_point)).epsilon(1e-15));
    const xt::xtensor<double, 1> forward = nabla::grad(nabla::mode::forward, branchy, xt_point);
    const std::vector<double> hand = branchy_gradient(xt_point);
    const double scale = largest(hand);
    REQUIRE(scale > 0.1);
    REQUIRE(g.size() == 12);
    for (std::size_t i = 0; i < 12; ++i) {
        INFO("entry " << i);
        CHECK(close(g[i], forward[i], scale));
        CHECK(close(g[i], hand[i], scale));
    }

    const auto a_point = point(std::array<double, 40>{});
    const std::array<double, 40> by_default = nabla::grad(branchy, a_point);
    const std::array<double, 40> reverse = nabla::grad(nabla::mode::reverse, branchy, a_point);
    const std::array<double, 40> forward40 = nabla::grad(nabla::mode::forward, branchy, a_point);
    const std::vector<double> hand40 = branchy_gradient(a_point);
    const double scale40 = largest(hand40);
    CHECK(nabla::value_and_grad(nabla::mode::reverse, branchy, a_point).value ==
          Approx(branchy(a_point)).epsilon(1e-15));
    for (std::size_t i = 0; i < 40; ++i) {
        INFO("entry " << i);
        CHECK(reverse[i] == by_default[i]);
        CHECK(close(reverse[i], forward40[i], scale40));
        CHECK(close(reverse[i], hand40[i], scale40));
    }
}
