// Transformations inside transformations: grad of a function that calls grad, jacobian of
// jacobian, hessian of grad, derivatives<K> of grad, in every order of forward and reverse mode,
// checked against closed forms and against derivatives<K>.
#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <tuple>
#include <type_traits>
#include <vector>

#include "../test_functions.hpp"

namespace {

using Catch::Matchers::WithinRel;

// d/dx [x * d/dy (x + y) at y = x]: 1. A derivative that mixed up the two levels' tangents
// would count x's own tangent inside the inner derivative and give 2.
template <class Outer, class Inner>
double perturbation_example(Outer outer, Inner inner) {
    const auto f = [=](auto x) {
        const auto shift = [&](auto y) { return x + y; };
        return x * nabla::grad(inner, shift, x)[0];
    };
    return nabla::grad(outer, f, 3.0)[0];
}

// The same with the inner derivative taken at a constant of the outer derivative's number type
// (at a plain 3.0 the two levels would meet, which is a compile-time error).
template <class Outer, class Inner>
double perturbation_at_constant(Outer outer, Inner inner) {
    const auto f = [=](auto x) {
        const auto shift = [&](auto y) { return x * y + y; };  // d/dy: x + 1
        return x * nabla::grad(inner, shift, decltype(x)(3.0))[0];
    };
    return nabla::grad(outer, f, 2.0)[0];  // d/dx x (x + 1) = 2x + 1
}

// The derivative of f as a generic callable, in the given mode.
template <class Mode, class F>
auto derivative(Mode m, F f) {
    return [=](auto x) { return nabla::grad(m, f, x)[0]; };
}

template <class M1, class M2, class M3, class F>
double third_derivative(F f, double x) {
    return nabla::grad(M1{}, derivative(M2{}, derivative(M3{}, f)), x)[0];
}

using nabla_test::christoffel;
using nabla_test::mass;
using nabla_test::schwarzschild;

// The Kretschmann scalar R_abcd R^abcd at (t, r, theta, phi), the Riemann tensor from the
// Jacobian of the Christoffel symbols: in Outer mode, whose function takes the symbols' own
// Jacobian of the metric in Inner mode.
template <class Outer, class Inner, class X>
double kretschmann(const X& x) {
    const auto g = schwarzschild{}(x);
    const auto gamma = christoffel<Inner>{}(x);
    const auto dgamma = nabla::jacobian(Outer{}, christoffel<Inner>{}, x);  // row a*16+b*4+c
    double k = 0.0;
    for (std::size_t a = 0; a < 4; ++a)
        for (std::size_t b = 0; b < 4; ++b)
            for (std::size_t c = 0; c < 4; ++c)
                for (std::size_t d = 0; d < 4; ++d) {
                    double riemann = dgamma(a * 16 + d * 4 + b, c) - dgamma(a * 16 + c * 4 + b, d);
                    for (std::size_t e = 0; e < 4; ++e)
                        riemann += gamma[a * 16 + c * 4 + e] * gamma[e * 16 + d * 4 + b] -
                                   gamma[a * 16 + d * 4 + e] * gamma[e * 16 + c * 4 + b];
                    k += g[a * 5] / (g[b * 5] * g[c * 5] * g[d * 5]) * riemann * riemann;
                }
    return k;
}

}  // namespace

TEST_CASE("A derivative inside a derivative keeps the two levels apart in every mode order",
          "[compose]") {
    using nabla::mode::forward;
    using nabla::mode::reverse;
    CHECK(perturbation_example(forward, forward) == 1.0);
    CHECK(perturbation_example(forward, reverse) == 1.0);
    CHECK(perturbation_example(reverse, forward) == 1.0);
    CHECK(perturbation_example(reverse, reverse) == 1.0);
    CHECK(perturbation_at_constant(forward, forward) == 5.0);
    CHECK(perturbation_at_constant(forward, reverse) == 5.0);
    CHECK(perturbation_at_constant(reverse, forward) == 5.0);
    CHECK(perturbation_at_constant(reverse, reverse) == 5.0);
}

TEST_CASE("Third derivatives by three nested grads agree with derivatives<3> in all eight mode "
          "orders",
          "[compose]") {
    using F = nabla::mode::forward_t;
    using R = nabla::mode::reverse_t;
    const auto f = [](auto x) {
        using std::exp, std::sin;
        return exp(sin(x)) * x / (1.0 + x * x);
    };
    const double x = 0.7;
    const double expected = nabla::derivatives<3>(f, x)[3];
    CHECK_THAT((third_derivative<F, F, F>(f, x)), WithinRel(expected, 1e-13));
    CHECK_THAT((third_derivative<F, F, R>(f, x)), WithinRel(expected, 1e-13));
    CHECK_THAT((third_derivative<F, R, F>(f, x)), WithinRel(expected, 1e-13));
    CHECK_THAT((third_derivative<F, R, R>(f, x)), WithinRel(expected, 1e-13));
    CHECK_THAT((third_derivative<R, F, F>(f, x)), WithinRel(expected, 1e-13));
    CHECK_THAT((third_derivative<R, F, R>(f, x)), WithinRel(expected, 1e-13));
    CHECK_THAT((third_derivative<R, R, F>(f, x)), WithinRel(expected, 1e-13));
    CHECK_THAT((third_derivative<R, R, R>(f, x)), WithinRel(expected, 1e-13));
}

TEST_CASE("The Schwarzschild metric's Christoffel symbols by jacobian match their closed forms",
          "[compose]") {
    const double r = 5.0, theta = 1.1;
    const std::array<double, 4> x{0.3, r, theta, 0.4};
    const auto gamma = christoffel<nabla::mode::forward_t>{}(x);
    const auto at = [&](std::size_t a, std::size_t b, std::size_t c) {
        return gamma[a * 16 + b * 4 + c];
    };
    const double m = mass;
    CHECK_THAT(at(1, 0, 0), WithinRel(m * (r - 2 * m) / (r * r * r), 1e-14));
    CHECK_THAT(at(0, 0, 1), WithinRel(m / (r * (r - 2 * m)), 1e-14));
    CHECK_THAT(at(0, 1, 0), WithinRel(m / (r * (r - 2 * m)), 1e-14));
    CHECK_THAT(at(1, 1, 1), WithinRel(-m / (r * (r - 2 * m)), 1e-14));
    CHECK_THAT(at(2, 1, 2), WithinRel(1.0 / r, 1e-14));
    CHECK_THAT(at(3, 2, 3), WithinRel(std::cos(theta) / std::sin(theta), 1e-14));
    CHECK_THAT(at(1, 2, 2), WithinRel(-(r - 2 * m), 1e-14));
    CHECK_THAT(at(1, 3, 3), WithinRel(-(r - 2 * m) * std::sin(theta) * std::sin(theta), 1e-14));
    CHECK_THAT(at(2, 3, 3), WithinRel(-std::sin(theta) * std::cos(theta), 1e-14));
    CHECK(at(0, 0, 0) == 0.0);
    CHECK(at(2, 2, 2) == 0.0);

    const auto reverse =
        christoffel<nabla::mode::reverse_t>{}(std::vector<double>(x.begin(), x.end()));
    for (std::size_t i = 0; i < 64; ++i)
        CHECK_THAT(reverse[i],
                   WithinRel(gamma[i], 1e-14) || Catch::Matchers::WithinAbs(0.0, 1e-15));
}

TEST_CASE("The Riemann tensor from nested jacobians gives the Kretschmann scalar 48 M^2 / r^6",
          "[compose]") {
    using F = nabla::mode::forward_t;
    using R = nabla::mode::reverse_t;
    for (const double r : {2.5, 5.0, 40.0}) {
        const std::array<double, 4> x{0.0, r, 0.9, 0.2};
        const std::vector<double> xv(x.begin(), x.end());
        const double expected = 48.0 * mass * mass / std::pow(r, 6);
        CHECK_THAT((kretschmann<F, F>(x)), WithinRel(expected, 1e-12));
        CHECK_THAT((kretschmann<F, R>(xv)), WithinRel(expected, 1e-12));
        CHECK_THAT((kretschmann<R, F>(xv)), WithinRel(expected, 1e-12));
        CHECK_THAT((kretschmann<R, R>(xv)), WithinRel(expected, 1e-12));
    }
}

TEST_CASE("hessian, jvp, derivatives<K> and static expressions compose with grad", "[compose]") {
    using nabla::mode::forward;
    using nabla::mode::reverse;
    const double a = 0.7, b = 1.3, e = std::exp(a);
    const auto g = [](const auto& v) {
        using std::exp;
        return exp(v[0]) * v[1] * v[1];
    };
    // h(v) = sum of g's gradient = e^a b^2 + 2 e^a b.
    const auto gradient_sum = [&](const auto& v) {
        const auto gradient = nabla::grad(g, v);
        return gradient[0] + gradient[1];
    };
    const double h00 = e * b * b + 2 * e * b, h01 = 2 * e * b + 2 * e, h11 = 2 * e;

    SECTION("hessian of a function that calls grad, forward and reverse outside") {
        const auto hf = nabla::hessian(gradient_sum, std::array<double, 2>{a, b});
        CHECK_THAT(hf(0, 0), WithinRel(h00, 1e-14));
        CHECK_THAT(hf(0, 1), WithinRel(h01, 1e-14));
        CHECK_THAT(hf(1, 0), WithinRel(h01, 1e-14));
        CHECK_THAT(hf(1, 1), WithinRel(h11, 1e-14));
        const auto hr = nabla::hessian(reverse, gradient_sum, std::vector<double>{a, b});
        CHECK_THAT(hr(0, 1), WithinRel(h01, 1e-14));
        CHECK_THAT(hr(1, 1), WithinRel(h11, 1e-14));
    }
    SECTION("grad of an entry of a hessian, forward and reverse") {
        const auto entry = [](const auto& v) {
            const auto q = [](const auto& w) {
                using std::exp;
                return exp(w[0]) * w[1] * w[1] * w[1];
            };
            return nabla::hessian(q, v)(1, 1);  // 6 e^w0 w1
        };
        const auto gf = nabla::grad(entry, std::array<double, 2>{0.5, 2.0});
        const auto gr = nabla::grad(reverse, entry, std::vector<double>{0.5, 2.0});
        CHECK_THAT(gf[0], WithinRel(12.0 * std::exp(0.5), 1e-14));
        CHECK_THAT(gf[1], WithinRel(6.0 * std::exp(0.5), 1e-14));
        CHECK_THAT(gr[0], WithinRel(12.0 * std::exp(0.5), 1e-14));
        CHECK_THAT(gr[1], WithinRel(6.0 * std::exp(0.5), 1e-14));
    }
    SECTION("derivatives<K> of grad") {
        const auto derivative_of = [](auto t) {
            const auto s = [](auto u) {
                using std::exp;
                return exp(u) * u;
            };
            return nabla::grad(s, t)[0];  // e^t (t + 1)
        };
        const auto d = nabla::derivatives<3>(derivative_of, 0.4);
        const double et = std::exp(0.4);
        CHECK_THAT(d[0], WithinRel(et * 1.4, 1e-14));
        CHECK_THAT(d[1], WithinRel(et * 2.4, 1e-14));
        CHECK_THAT(d[2], WithinRel(et * 3.4, 1e-14));
        CHECK_THAT(d[3], WithinRel(et * 4.4, 1e-14));
    }
    SECTION("jvp inside grad") {
        const auto directional = [](auto x) {
            const auto s = [](auto t) {
                using std::sin;
                return sin(t) * t;
            };
            return nabla::jvp(s, std::tuple{x}, std::tuple{2.0}).tangent;  // 2 (cos x x + sin x)
        };
        const double x = 0.3, expected = 2.0 * (2.0 * std::cos(x) - x * std::sin(x));
        CHECK_THAT(nabla::grad(directional, x)[0], WithinRel(expected, 1e-14));
        CHECK_THAT(nabla::grad(reverse, directional, x)[0], WithinRel(expected, 1e-14));
    }
    SECTION("a static expression's gradient inside forward and reverse mode") {
        auto [x1, x2] = nabla::variables<2>();
        using std::log, std::sin;
        const auto f = log(x1) + x1 * x2 - sin(x2);
        const auto df_dx1 = [&](auto p, auto q) { return nabla::grad(f, p, q)[0]; };  // 1/p + q
        const auto hf = nabla::grad(forward, df_dx1, 2.0, 5.0);
        const auto hr = nabla::grad(reverse, df_dx1, 2.0, 5.0);
        CHECK(hf[0] == -0.25);
        CHECK(hf[1] == 1.0);
        CHECK(hr[0] == -0.25);
        CHECK(hr[1] == 1.0);
    }
}

TEST_CASE("The guide's second derivative as the derivative of the derivative", "[compose]") {
    auto f = [](auto x) {
        using std::exp, std::sin;
        return exp(sin(x)) * x;
    };
    auto df = [&](auto x) { return nabla::grad(f, x)[0]; };
    double d2 = nabla::grad(df, 0.7)[0];                        // forward over forward
    double r2 = nabla::grad(nabla::mode::reverse, df, 0.7)[0];  // reverse over forward
    const double expected = nabla::derivatives<2>(f, 0.7)[2];
    CHECK_THAT(d2, WithinRel(expected, 1e-14));
    CHECK_THAT(r2, WithinRel(expected, 1e-14));
}

TEST_CASE("vjp and hvp inside grad, and grad inside jvp, in forward and reverse mode",
          "[compose]") {
    using nabla::mode::forward;
    using nabla::mode::reverse;
    const auto q = [](const auto& w) {
        using std::exp;
        return exp(w[0]) * w[1] * w[1] * w[1];
    };
    const double e = std::exp(0.5), b = 2.0;
    // The sum of q's gradient by a vjp with cotangent 1, and the sum of H (1, 1) by an hvp.
    const auto vjp_sum = [&](const auto& v) {
        using T = std::remove_cvref_t<decltype(v[0])>;
        const std::vector<T> w(v.begin(), v.end());
        const auto [y, pullback] = nabla::vjp(q, w);
        const auto g = pullback(T(1.0));
        return g[0] + g[1];
    };
    const auto hvp_sum = [&](const auto& v) {
        using T = std::remove_cvref_t<decltype(v[0])>;
        const std::vector<T> w(v.begin(), v.end());
        const auto hv = nabla::hvp(q, w, std::vector<double>{1.0, 1.0});
        return hv[0] + hv[1];
    };
    const std::array<double, 2> xa{0.5, b};
    const std::vector<double> xv{0.5, b};
    const std::array<double, 2> vjp_expected{e * b * b * b + 3 * e * b * b,
                                             3 * e * b * b + 6 * e * b};
    const std::array<double, 2> hvp_expected{e * b * b * b + 6 * e * b * b + 6 * e * b,
                                             3 * e * b * b + 12 * e * b + 6 * e};
    for (std::size_t k = 0; k < 2; ++k) {
        CHECK_THAT(nabla::grad(forward, vjp_sum, xa)[k], WithinRel(vjp_expected[k], 1e-14));
        CHECK_THAT(nabla::grad(reverse, vjp_sum, xv)[k], WithinRel(vjp_expected[k], 1e-14));
        CHECK_THAT(nabla::grad(forward, hvp_sum, xa)[k], WithinRel(hvp_expected[k], 1e-14));
        CHECK_THAT(nabla::grad(reverse, hvp_sum, xv)[k], WithinRel(hvp_expected[k], 1e-14));
    }
    // A vjp of a vector function inside a reverse derivative: the cotangent's length is checked.
    const auto pair = [](const auto& w) {
        using T = std::remove_cvref_t<decltype(w[0])>;
        return std::vector<T>{w[0] * w[1], w[0] + w[1]};
    };
    const auto weighted = [&](const auto& v) {
        using T = std::remove_cvref_t<decltype(v[0])>;
        const std::vector<T> w(v.begin(), v.end());
        const auto [y, pullback] = nabla::vjp(pair, w);
        const auto g = pullback(std::vector<double>{2.0, 3.0});  // (2 w1 + 3, 2 w0 + 3)
        return g[0] * g[1];
    };
    const auto gw = nabla::grad(reverse, weighted, xv);  // (2 (2 w0 + 3) ... ) by the product rule
    CHECK_THAT(gw[0], WithinRel((2 * b + 3) * 2.0, 1e-14));
    CHECK_THAT(gw[1], WithinRel(2.0 * (2 * 0.5 + 3), 1e-14));
    const auto wrong = [&](const auto& v) {
        using T = std::remove_cvref_t<decltype(v[0])>;
        const std::vector<T> w(v.begin(), v.end());
        const auto [y, pullback] = nabla::vjp(pair, w);
        return pullback(std::vector<double>{2.0})[0];
    };
    CHECK_THROWS_AS(nabla::grad(reverse, wrong, xv), std::invalid_argument);
    // grad inside jvp: the directional derivative of the sum of q's gradient along (1, 0).
    const auto gradient_sum = [&](auto a, auto c) {
        const std::array<decltype(a), 2> w{a, c};
        const auto g = nabla::grad(q, w);
        return g[0] + g[1];
    };
    const auto t = nabla::jvp(gradient_sum, std::tuple{0.5, b}, std::tuple{1.0, 0.0});
    CHECK_THAT(t.tangent, WithinRel(vjp_expected[0], 1e-14));
}
