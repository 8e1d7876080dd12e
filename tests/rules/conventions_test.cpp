// The documented conventions at points where the classical derivative does not exist, and IEEE
// propagation of NaN and infinities (docs/conventions.md).

#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <tuple>
#include <vector>

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
const auto [x, y] = nabla::variables<2>();
}  // namespace

TEST_CASE("abs and fabs have derivative 0 at 0", "[rules][conventions]") {
    CHECK(nabla::d(abs(x), x)(0.0) == 0.0);
    CHECK(nabla::d(abs(x), x)(-0.0) == 0.0);
    CHECK(nabla::d(fabs(x), x)(0.0) == 0.0);
    CHECK(nabla::grad(abs(x), 0.0)[0] == 0.0);
    CHECK(nabla::d(abs(x), x)(-3.0) == -1.0);
    CHECK(nabla::d(abs(x), x, x)(0.0) == 0.0);
}

TEST_CASE("sqrt and cbrt have infinite derivative at 0", "[rules][conventions]") {
    CHECK(nabla::d(sqrt(x), x)(0.0) == inf);
    CHECK(nabla::d(cbrt(x), x)(0.0) == inf);
    CHECK(nabla::grad(sqrt(x), 0.0)[0] == inf);
    CHECK(std::isnan(nabla::d(sqrt(x), x)(-1.0)));
}

TEST_CASE("pow at a zero base", "[rules][conventions]") {
    const auto f = pow(x, y);
    const auto fx = nabla::d(f, x);
    const auto fy = nabla::d(f, y);
    CHECK(fx(0.0, 2.0) == 0.0);
    CHECK(fx(0.0, 1.0) == 1.0);
    CHECK(fx(0.0, 0.5) == inf);
    CHECK(f(0.0, 0.0) == 1.0);
    CHECK(fx(0.0, 0.0) == 0.0);   // x^0 is the constant 1
    CHECK(fy(0.0, 2.0) == 0.0);   // 0^y = 0 for y > 0: the one-sided limit
    CHECK(fy(0.0, 0.0) == -inf);  // 0^y jumps at y = 0
    CHECK(nabla::d(pow(x, 0.0), x)(0.0) == 0.0);
    CHECK(nabla::d(pow(x, 0), x)(0.0) == 0.0);
    CHECK(nabla::d(pow(x, 2), x)(0.0) == 0.0);
    CHECK(nabla::d(pow(x, 3), x, x)(0.0) == 0.0);
    // Integer exponents are exact for negative bases; real exponents follow std::pow.
    CHECK(nabla::d(pow(x, 3), x)(-2.0) == 12.0);
    CHECK(nabla::d(pow(x, 3.0), x)(-2.0) == 12.0);
    CHECK(std::isnan(nabla::d(pow(x, 2.5), x)(-2.0)));
    CHECK(std::isnan(fy(-2.0, 2.0)));  // log of a negative base
}

TEST_CASE("pow(x, 0) has second derivative 0 at x = 0 in every mode (regression: NaN in dual "
          "numbers and on the tape, found by the random programs of tests/fuzz/)",
          "[rules][conventions]") {
    CHECK(nabla::d(pow(x, 0), x, x)(0.0) == 0.0);
    using D = nabla::dual<double, 1>;
    using DD = nabla::dual<D, 1>;
    const DD at_zero(D(0.0, {1.0}), {D(1.0)});
    const DD p = pow(at_zero, 0);
    CHECK(p.value.value == 1.0);
    CHECK(p.value.tangent[0] == 0.0);
    CHECK(p.tangent[0].value == 0.0);
    CHECK(p.tangent[0].tangent[0] == 0.0);  // was NaN: 0 * inf in the tangent of n * x^(n-1)
    const auto square_of_nothing = [](const auto& v) {
        using std::atanh, std::pow;
        return pow(atanh(v[0]), 0) + v[0];
    };
    for (const auto& h :
         {nabla::hessian(nabla::mode::forward, square_of_nothing, std::vector<double>{0.0}),
          nabla::hessian(nabla::mode::reverse, square_of_nothing, std::vector<double>{0.0})})
        CHECK(h(0, 0) == 0.0);
}

TEST_CASE("structural zeros are strong in every mode, across the directions of a dual number too",
          "[rules][conventions]") {
    // d/dy of sqrt(x) + y at x = 0 is 1: the tangent of sqrt(x) along y is exactly zero.
    const auto f = [](auto u, auto v) {
        using std::sqrt;
        return sqrt(u) + v;
    };
    const auto of_vector = [&](const auto& w) { return f(w[0], w[1]); };
    const std::vector<double> at{0.0, 1.0};
    const std::array<double, 2> at_array{0.0, 1.0};
    const auto statically = nabla::grad(f(x, y), 0.0, 1.0);
    const auto reverse = nabla::grad(nabla::mode::reverse, f, 0.0, 1.0);
    const auto reverse_vector = nabla::grad(nabla::mode::reverse, of_vector, at);
    // Forward mode: a plain dual number multiplies the infinite partial by the zero tangent, NaN;
    // the transformations then evaluate again on strong duals, which keep that product 0.
    const auto forward = nabla::grad(nabla::mode::forward, f, 0.0, 1.0);
    const auto forward_vector = nabla::grad(nabla::mode::forward, of_vector, at);
    const auto forward_array = nabla::grad(nabla::mode::forward, of_vector, at_array);
    const auto jacobian = nabla::jacobian(
        [&](const auto& w) {
            return std::vector{f(w[0], w[1]), f(w[1] - 1.0, w[0] + 1.0)};
        },
        at);
    for (const auto& g : {std::vector<double>(statically.begin(), statically.end()),
                          std::vector<double>(reverse.begin(), reverse.end()), reverse_vector,
                          std::vector<double>(forward.begin(), forward.end()), forward_vector,
                          std::vector<double>(forward_array.begin(), forward_array.end()),
                          std::vector<double>{jacobian(0, 0), jacobian(0, 1)},
                          std::vector<double>{jacobian(1, 1), jacobian(1, 0)}}) {
        CHECK(g[0] == inf);
        CHECK(g[1] == 1.0);
    }
    // One direction: d/dy along (0, 1) is 1, along (1, 1) inf.
    CHECK(nabla::jvp(f, std::tuple{0.0, 1.0}, std::tuple{0.0, 1.0}).tangent == 1.0);
    CHECK(nabla::jvp(f, std::tuple{0.0, 1.0}, std::tuple{1.0, 1.0}).tangent == inf);
    // Second derivatives: d2/dy2 and d2/dxdy of sqrt(x) y + y^2 at x = 0 are 2 and inf.
    const auto g = [](auto u, auto v) {
        using std::sqrt;
        return sqrt(u) * v + v * v;
    };
    const auto h = nabla::hessian(nabla::mode::forward, g, 0.0, 1.0);
    const auto h_vector = nabla::hessian(
        nabla::mode::forward, [&](const auto& w) { return g(w[0], w[1]); }, at);
    for (const auto& m : {h, h_vector}) {
        CHECK(m(1, 1) == 2.0);
        CHECK(m(0, 1) == inf);
        CHECK(m(1, 0) == inf);
    }
    // Fixed sizes in and out (one pass each), and the Hessian by forward over reverse, whose
    // strong evaluations go a column at a time; its H v.
    const auto pair = [&](const auto& w) {
        using T = std::decay_t<decltype(w[0])>;
        return std::array<T, 2>{f(w[0], w[1]), f(w[1] - 1.0, w[0] + 1.0)};
    };
    const auto [pair_value, pair_jacobian] = nabla::value_and_jacobian(pair, at_array);
    CHECK(pair_value[0] == 1.0);
    CHECK(pair_value[1] == 1.0);
    const auto check_pair = [](const auto& j) {
        CHECK(j(0, 0) == inf);
        CHECK(j(0, 1) == 1.0);
        CHECK(j(1, 1) == inf);
        CHECK(j(1, 0) == 1.0);
    };
    check_pair(nabla::jacobian(pair, at_array));
    check_pair(pair_jacobian);
    check_pair(nabla::jacobian(nabla::mode::reverse, pair, at_array));
    const auto of_pair = [&](const auto& w) { return g(w[0], w[1]); };
    const auto h_array = nabla::hessian(nabla::mode::forward, of_pair, at_array);
    const auto h_reverse = nabla::hessian(nabla::mode::reverse, of_pair, at);
    CHECK(h_array(1, 1) == 2.0);
    CHECK(h_array(0, 1) == inf);
    CHECK(h_reverse(1, 1) == 2.0);
    CHECK(h_reverse(0, 1) == inf);
    CHECK(h_reverse(1, 0) == inf);
    const auto hv = nabla::hvp(of_pair, at, std::vector<double>{0.0, 1.0});
    CHECK(hv[0] == inf);
    CHECK(hv[1] == 2.0);
    // The strong dual itself: the product with a zero tangent is 0, a NaN from the domain stays.
    using S = nabla::dual<double, 2, true>;
    const S u(0.0, {1.0, 0.0}), v(1.0, {0.0, 1.0});
    const S r = sqrt(u) + v;
    CHECK(r.tangent[0] == inf);
    CHECK(r.tangent[1] == 1.0);
    const S w(-1.0, {1.0, 0.0});
    CHECK(std::isnan(sqrt(w).tangent[0]));
    CHECK(sqrt(w).tangent[1] == 0.0);
    // A NaN that is the answer stays NaN after the second evaluation.
    const auto outside = nabla::grad(nabla::mode::forward, f, -1.0, 1.0);
    CHECK(std::isnan(outside[0]));
    CHECK(outside[1] == 1.0);
}

TEST_CASE("min and max split the derivative evenly at a tie", "[rules][conventions]") {
    for (const auto& g : {nabla::grad(min(x, y), 1.5, 1.5), nabla::grad(max(x, y), 1.5, 1.5),
                          nabla::grad(fmin(x, y), 1.5, 1.5), nabla::grad(fmax(x, y), 1.5, 1.5)}) {
        CHECK(g[0] == 0.5);
        CHECK(g[1] == 0.5);
    }
    CHECK(nabla::grad(min(x, y), 1.0, 2.0) == std::array{1.0, 0.0});
    CHECK(nabla::grad(max(x, y), 1.0, 2.0) == std::array{0.0, 1.0});
}

TEST_CASE("min and max propagate NaN; fmin and fmax skip it", "[rules][conventions]") {
    CHECK(std::isnan(min(x, y)(not_a_number, 2.0)));
    CHECK(std::isnan(max(x, y)(2.0, not_a_number)));
    CHECK(std::isnan(nabla::grad(min(x, y), not_a_number, 2.0)[1]));
    CHECK(fmin(x, y)(not_a_number, 2.0) == 2.0);
    CHECK(nabla::grad(fmin(x, y), not_a_number, 2.0) == std::array{0.0, 1.0});
    CHECK(nabla::grad(fmax(x, y), 3.0, not_a_number) == std::array{1.0, 0.0});
}

TEST_CASE("rounding functions have derivative 0, also at their jumps", "[rules][conventions]") {
    for (double at : {-2.0, -0.5, 0.0, 0.5, 1.0, 2.5}) {
        CHECK(nabla::d(floor(x), x)(at) == 0.0);
        CHECK(nabla::d(ceil(x), x)(at) == 0.0);
        CHECK(nabla::d(round(x), x)(at) == 0.0);
        CHECK(nabla::d(trunc(x), x)(at) == 0.0);
        CHECK(nabla::grad(floor(x) * x, at)[0] == std::floor(at));
    }
}

TEST_CASE("atan2 and hypot at the origin have zero gradient", "[rules][conventions]") {
    CHECK(atan2(x, y)(0.0, 0.0) == 0.0);
    CHECK(nabla::grad(atan2(x, y), 0.0, 0.0) == std::array{0.0, 0.0});
    CHECK(nabla::grad(hypot(x, y), 0.0, 0.0) == std::array{0.0, 0.0});
    CHECK(nabla::grad(atan2(x, y), 0.0, 2.0) == std::array{0.5, 0.0});
    CHECK(nabla::grad(hypot(x, y), 3.0, 4.0) == std::array{0.6, 0.8});
}

TEST_CASE("NaN and infinities propagate as IEEE arithmetic does", "[rules][conventions]") {
    const auto [value, gradient] = nabla::value_and_grad(sin(x) * y, not_a_number, 2.0);
    CHECK(std::isnan(value));
    CHECK(std::isnan(gradient[0]));
    CHECK(std::isnan(gradient[1]));
    CHECK(exp(x)(inf) == inf);
    CHECK(nabla::grad(exp(x), inf)[0] == inf);
    CHECK(nabla::grad(exp(x), -inf)[0] == 0.0);
    CHECK(log(x)(0.0) == -inf);
    CHECK(nabla::grad(log(x), 0.0)[0] == inf);
    CHECK(std::isnan(log(x)(-1.0)));
    CHECK(nabla::grad(atan(x), inf)[0] == 0.0);
    CHECK(nabla::grad(tanh(x), 800.0)[0] == 0.0);
}

TEST_CASE("an infinite constant factor keeps the structural zeros of higher derivatives in every "
          "mode",
          "[rules][conventions]") {
    // x * inf at x = 0: the value is 0 * inf, the first derivative inf, the higher ones are
    // structurally 0.
    const auto f = x * inf;
    CHECK(std::isnan(f(0.0, 0.0)));
    CHECK(nabla::d(f, x)(0.0, 0.0) == inf);
    CHECK(nabla::to_string(nabla::d(nabla::d(f, x), x)) == "0");
    const auto scaled = [](auto t) {
        t *= inf;
        return t;
    };
    const auto h = nabla::hessian(scaled, 0.0);  // nested dual numbers, strong where NaN
    CHECK(h(0, 0) == 0.0);
    using third = nabla::dual<nabla::dual<nabla::dual<double, 1, true>, 1, true>, 1, true>;
    third t(0.0);
    t.value.value.tangent[0] = 1.0;
    t.value.tangent[0].value = 1.0;
    t.tangent[0].value.value = 1.0;
    const third d3 = scaled(t);
    CHECK(std::isnan(d3.value.value.value));
    CHECK(d3.value.value.tangent[0] == inf);
    CHECK(d3.value.tangent[0].tangent[0] == 0.0);
    CHECK(d3.tangent[0].tangent[0].tangent[0] == 0.0);
    // Taylor mode: a constant factor leaves zero coefficients zero, also written t * inf and
    // inf * t; a product of two series keeps IEEE products (docs/conventions.md).
    for (const auto& series : {nabla::derivatives<3>(scaled, 0.0),
                               nabla::derivatives<3>([](auto t) { return t * inf; }, 0.0),
                               nabla::derivatives<3>([](auto t) { return inf * t; }, 0.0)}) {
        CHECK(std::isnan(series[0]));
        CHECK(series[1] == inf);
        CHECK(series[2] == 0.0);
        CHECK(series[3] == 0.0);
    }
    using series_type = nabla::taylor<double, 3>;
    const auto by_series = nabla::derivatives<3>([](auto t) { return t * series_type(inf); }, 0.0);
    CHECK(by_series[1] == inf);
    CHECK(std::isnan(by_series[2]));
}

TEST_CASE("polygamma at its poles and outside its orders", "[rules][conventions]") {
    CHECK(std::isnan(digamma(x)(0.0)));
    CHECK(std::isnan(digamma(x)(-3.0)));
    CHECK(polygamma(1, x)(0.0) == inf);
    CHECK(polygamma(1, x)(-2.0) == inf);
    CHECK(std::isnan(polygamma(2, x)(-1.0)));
    CHECK(std::isnan(nabla::rules::polygamma(63, 1.5)));
    CHECK(nabla::d(lgamma(x), x)(1.0) == Approx(-0.5772156649015329).epsilon(1e-15));
}

TEST_CASE("structural zeros are strong", "[rules][conventions]") {
    // d(f, y) of an f without y is the exact zero, even where f is infinite or NaN.
    const auto f = log(x);
    CHECK(nabla::d(f, y)(-1.0, 2.0) == 0.0);
    CHECK(nabla::grad(f * 1.0 + y, 0.0, 1.0)[1] == 1.0);
}

// One function at one point in every first-order mode: the static graph, dual numbers, the tape.
template <class F>
void check_edge(const F& f, double at, double value, double derivative) {
    INFO("at " << at);
    const auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
    CHECK(same(f(x)(at), value));
    CHECK(same(nabla::d(f(x), x)(at), derivative));
    const auto dual = f(nabla::dual<double, 1>(at, {1.0}));
    CHECK(same(dual.value, value));
    CHECK(same(dual.tangent[0], derivative));
    nabla::tape<> tape;
    auto recording = tape.record();
    const nabla::var v = tape.input(at);
    const nabla::var r = f(v);
    tape.gradient(r);
    CHECK(same(r.value, value));
    CHECK(same(tape.adjoint(v), derivative));
}

TEST_CASE("special functions at their edges", "[rules][conventions]") {
    constexpr double pi = std::numbers::pi;
    const double branch = -1.0 / std::numbers::e;
    const auto k = [](const auto& v) { return comp_ellint_1(v); };
    const auto e = [](const auto& v) { return comp_ellint_2(v); };
    // The complete elliptic integrals: derivative 0 at k = 0 (where libstdc++'s value is pi/2
    // within a unit in the last place), K infinite at |k| = 1.
    CHECK(nabla::comp_ellint_1(0.0) == Approx(pi / 2).epsilon(1e-15));
    check_edge(k, 0.0, std::comp_ellint_1(0.0), 0.0);
    check_edge(e, 0.0, std::comp_ellint_2(0.0), 0.0);
    check_edge(k, 1.0, inf, inf);
    check_edge(k, -1.0, inf, -inf);
    check_edge(e, 1.0, 1.0, -inf);
    check_edge(k, 1.5, not_a_number, not_a_number);
    // Lambert W: -1 at the branch point, with the derivative of each branch's side.
    const auto w0 = [](const auto& v) { return lambert_w0(v); };
    const auto wm1 = [](const auto& v) { return lambert_wm1(v); };
    check_edge(w0, branch, -1.0, inf);
    check_edge(wm1, branch, -1.0, -inf);
    check_edge(w0, 0.0, 0.0, 1.0);
    check_edge(w0, -0.5, not_a_number, not_a_number);
    check_edge(wm1, 0.5, not_a_number, not_a_number);
    CHECK(nabla::lambert_wm1(0.0) == -inf);
    // Ei's logarithmic singularity, sqrt1pm1's root at -1.
    check_edge([](const auto& v) { return expint(v); }, 0.0, -inf, inf);
    check_edge([](const auto& v) { return sqrt1pm1(v); }, -1.0, -1.0, inf);
    // sin_pi and cos_pi vanish exactly where sin(pi x) and cos(pi x) do, however large x.
    check_edge([](const auto& v) { return sin_pi(v); }, 3.0, 0.0, -pi);
    check_edge([](const auto& v) { return cos_pi(v); }, 2.5, 0.0, -pi);
    CHECK(nabla::sin_pi(1e15) == 0.0);
    CHECK(nabla::cos_pi(1e15 + 0.5) == 0.0);
    CHECK(nabla::sin_pi(-2.0) == 0.0);
    CHECK(std::signbit(nabla::sin_pi(-2.0)));
    CHECK(nabla::cos_pi(1e15) == 1.0);
}

TEST_CASE("hypot of three operands: 0 at the origin with zero partials, no overflow on the way",
          "[rules][conventions]") {
    const auto [a, b, c] = nabla::variables<3>();
    const auto h = hypot(a, b, c);
    CHECK(h(0.0, 0.0, 0.0) == 0.0);
    CHECK(nabla::d(h, a)(0.0, 0.0, 0.0) == 0.0);
    CHECK(nabla::d(h, c)(0.0, 0.0, 0.0) == 0.0);
    using D = nabla::dual<double, 3>;
    const D at_origin =
        hypot(D(0.0, {1.0, 0.0, 0.0}), D(0.0, {0.0, 1.0, 0.0}), D(0.0, {0.0, 0.0, 1.0}));
    CHECK(at_origin.tangent == std::array<double, 3>{0.0, 0.0, 0.0});
    nabla::tape<> tape;
    auto recording = tape.record();
    const nabla::var u = tape.input(0.0), v = tape.input(0.0), w = tape.input(0.0);
    tape.gradient(hypot(u, v, w));
    CHECK(tape.adjoint(u) == 0.0);
    CHECK(tape.adjoint(w) == 0.0);
    // 1e300 and 1e-300 in every operand: the squares would overflow and underflow.
    CHECK(h(1e300, 1e300, 1e300) == Approx(std::sqrt(3.0) * 1e300).epsilon(1e-15));
    CHECK(nabla::d(h, b)(1e-300, 1e-300, 1e-300) == Approx(1.0 / std::sqrt(3.0)).epsilon(1e-15));
    // An infinite operand gives +inf even beside a NaN, as hypot of two.
    CHECK(h(inf, 1.0, not_a_number) == inf);
    CHECK(h(not_a_number, -inf, 0.0) == inf);
}

TEST_CASE("ldexp and frexp: exact scaling by powers of two, derivatives 2^n and 2^-e",
          "[rules][conventions]") {
    const auto [x] = nabla::variables<1>();
    CHECK(ldexp(x, 3)(1.5) == 12.0);
    CHECK(nabla::d(ldexp(x, 3), x)(1.5) == 8.0);
    CHECK(nabla::d(ldexp(x * x, -2), x, x)(1.5) == 0.5);
    // Subnormal results and derivatives stay exact; a derivative 2^n beyond the range is 0 or inf.
    CHECK(nabla::ldexp(1.5, -1060) == std::ldexp(1.5, -1060));
    const auto scaled = [](const auto& v) { return ldexp(v, -1074); };
    check_edge(scaled, 1.0, std::ldexp(1.0, -1074), std::ldexp(1.0, -1074));
    check_edge([](const auto& v) { return ldexp(v, 1100); }, 1e-300, std::ldexp(1e-300, 1100), inf);
    // frexp: the mantissa in [1/2, 1), derivative 2^-e; at 0 the mantissa is 0, e = 0, slope 1.
    const auto mantissa = [](const auto& v) {
        int e = 0;
        return frexp(v, &e);
    };
    const auto d6 = mantissa(nabla::dual<double, 1>(6.0, {1.0}));
    CHECK(d6.value == 0.75);
    CHECK(d6.tangent[0] == 0.125);
    const auto d0 = mantissa(nabla::dual<double, 1>(0.0, {1.0}));
    CHECK(d0.value == 0.0);
    CHECK(d0.tangent[0] == 1.0);
    nabla::tape<> tape;
    auto recording = tape.record();
    const nabla::var v = tape.input(-10.0);
    int e = 0;
    const nabla::var m = frexp(v, &e);
    tape.gradient(m);
    CHECK(e == 4);
    CHECK(m.value == -0.625);
    CHECK(tape.adjoint(v) == 0.0625);
    const auto series = nabla::derivatives<2>(mantissa, 3.0);
    CHECK(series[0] == 0.75);
    CHECK(series[1] == 0.25);
    CHECK(series[2] == 0.0);
}

TEST_CASE("the Riemann zeta function at its pole, its trivial zeros and infinity",
          "[rules][conventions]") {
    const auto zeta = [](const auto& v) { return nabla::riemann_zeta(v); };
    // The pole at 1: +inf (as mpmath), derivative -inf (-1 / (s-1)^2 from both sides), the second
    // derivative NaN (its sign differs by side).
    check_edge(zeta, 1.0, inf, -inf);
    CHECK(std::isnan(nabla::zeta_derivative(2, 1.0)));
    CHECK(nabla::zeta_derivative(3, 1.0) == -inf);
    // Trivial zeros are exact zeros; the derivative there is not 0.
    CHECK(nabla::riemann_zeta(-2.0) == 0.0);
    CHECK(nabla::riemann_zeta(-200.0) == 0.0);
    CHECK(nabla::zeta_derivative(1, -2.0) == Approx(-0.030448457058393270780).epsilon(1e-14));
    // zeta(0) = -1/2 and zeta'(0) = -ln(2 pi) / 2, on either side of 0.
    const double slope = -0.5 * std::log(2.0 * std::numbers::pi);
    CHECK(nabla::riemann_zeta(0.0) == Approx(-0.5).epsilon(1e-15));
    CHECK(nabla::d(zeta(x), x)(0.0) == Approx(slope).epsilon(1e-14));
    CHECK(nabla::zeta_derivative(1, -1e-10) == Approx(slope).epsilon(1e-9));
    CHECK(nabla::zeta_derivative(1, 1e-10) == Approx(slope).epsilon(1e-9));
    // 1 at +inf with derivatives 0; NaN at -inf and for a negative order.
    check_edge(zeta, inf, 1.0, 0.0);
    CHECK(std::isnan(nabla::riemann_zeta(-inf)));
    CHECK(std::isnan(nabla::zeta_derivative(-1, 2.0)));
}

TEST_CASE("cylindrical Bessel functions at 0, at infinity, for negative orders and arguments, "
          "and with an order that varies",
          "[rules][conventions]") {
    const auto j = [](double v) {
        return [v](const auto& u) { return nabla::cyl_bessel_j(v, u); };
    };
    const auto y = [](double v) { return [v](const auto& u) { return nabla::cyl_neumann(v, u); }; };
    const auto i = [](double v) {
        return [v](const auto& u) { return nabla::cyl_bessel_i(v, u); };
    };
    const auto k = [](double v) {
        return [v](const auto& u) { return nabla::cyl_bessel_k(v, u); };
    };
    // At 0: J_0 = I_0 = 1 with derivative 0, J_1 and I_1 0 with derivative 1/2 (the recurrence
    // (f_(v-1) -+ f_(v+1)) / 2 is exact there), J_(1/2) 0 with an infinite derivative.
    check_edge(j(0.0), 0.0, 1.0, 0.0);
    check_edge(i(0.0), 0.0, 1.0, 0.0);
    check_edge(j(1.0), 0.0, 0.0, 0.5);
    check_edge(i(1.0), 0.0, 0.0, 0.5);
    check_edge(j(0.5), 0.0, 0.0, inf);
    // Y_v and K_v have poles at 0: Y -inf, K +inf with derivative -inf; Y_0' = -Y_1 = +inf, and
    // Y_v' for v != 0 is NaN there (inf - inf in the recurrence).
    check_edge(y(0.0), 0.0, -inf, inf);
    check_edge(y(1.5), 0.0, -inf, not_a_number);
    check_edge(k(2.5), 0.0, inf, -inf);
    // At infinity J, Y, K tend to 0 and I to infinity.
    check_edge(j(2.5), inf, 0.0, 0.0);
    check_edge(k(1.0), inf, 0.0, 0.0);
    CHECK(nabla::cyl_neumann(3.0, inf) == 0.0);
    CHECK(nabla::cyl_bessel_i(3.0, inf) == inf);
    // Negative x: J_n and I_n of integer order by parity; the others are complex (NaN).
    CHECK(nabla::cyl_bessel_j(3.0, -1.5) == -nabla::cyl_bessel_j(3.0, 1.5));
    CHECK(nabla::cyl_bessel_i(2.0, -1.5) == nabla::cyl_bessel_i(2.0, 1.5));
    CHECK(std::isnan(nabla::cyl_bessel_j(0.5, -1.5)));
    CHECK(std::isnan(nabla::cyl_neumann(1.0, -1.5)));
    CHECK(std::isnan(nabla::cyl_bessel_k(1.0, -1.5)));
    // Negative orders by reflection: J_(-n) = (-1)^n J_n, K_(-v) = K_v, J_(-1/2) = Y_(1/2)...
    CHECK(nabla::cyl_bessel_j(-3.0, 1.5) == -nabla::cyl_bessel_j(3.0, 1.5));
    CHECK(nabla::cyl_bessel_k(-2.5, 1.5) == nabla::cyl_bessel_k(2.5, 1.5));
    CHECK(nabla::cyl_bessel_j(-0.5, 1.5) == Approx(-nabla::cyl_neumann(0.5, 1.5)).epsilon(1e-15));
    CHECK(nabla::cyl_neumann(-0.5, 1.5) == Approx(nabla::cyl_bessel_j(0.5, 1.5)).epsilon(1e-15));
    // ... and J_(-v)(0) is infinite for non-integer v, with the sign of 1 / Gamma(1 - v).
    CHECK(nabla::cyl_bessel_j(-7.7, 0.0) == -inf);
    CHECK(nabla::cyl_bessel_j(-0.5, 0.0) == inf);
    // Far out, the phase x - (v/2 + 1/4) pi is kept exact: J_0 and J_1 at 1e17 differ (libstdc++
    // returns the same number for every order there).
    CHECK(nabla::cyl_bessel_j(0.0, 1e17) != nabla::cyl_bessel_j(1.0, 1e17));
    CHECK(nabla::cyl_bessel_j(0.0, 1e17) == Approx(-2.4087235483673831e-09).epsilon(1e-13));
    // Subnormal x: the power series' leading terms (libstdc++ returns NaN or throws).
    CHECK(nabla::cyl_bessel_j(0.0, 5e-324) == 1.0);
    CHECK(nabla::cyl_bessel_k(0.0, 5e-324) == Approx(744.55600343703967).epsilon(1e-15));
    CHECK(nabla::cyl_neumann(50.0, 1e-10) == -inf);
    // An order given as a dual or Taylor number must be a constant.
    const nabla::dual<double, 1> varying(0.5, {1.0}), constant(0.5, {0.0});
    CHECK_THROWS_AS(nabla::cyl_bessel_j(varying, nabla::dual<double, 1>(1.5, {1.0})),
                    std::domain_error);
    CHECK(nabla::cyl_bessel_j(constant, nabla::dual<double, 1>(1.5, {1.0})).value ==
          nabla::cyl_bessel_j(0.5, 1.5));
    // (A static expression evaluated on nested duals or series holds its constants so.)
    using D = nabla::dual<double, 1>;
    using DD = nabla::dual<D, 1>;
    const DD nested(D(1.5, {1.0}), {D(1.0, {0.0})});
    CHECK(nabla::cyl_neumann(DD(D(0.5, {0.0}), {}), nested).value.value ==
          nabla::cyl_neumann(0.5, 1.5));
    CHECK(nabla::hermite(DD(D(2.0, {0.0}), {}), nested).tangent[0].value ==
          Approx(8.0 * 1.5).epsilon(1e-15));
    nabla::taylor<double, 2> order(2.0), at(0.7);
    at.c[1] = 1.0;
    CHECK(nabla::hermite(order, at).c[1] == Approx(8.0 * 0.7).epsilon(1e-15));
    CHECK(nabla::cyl_bessel_k(nabla::taylor<double, 2>(1.5), at).c[0] ==
          nabla::cyl_bessel_k(1.5, 0.7));
    order.c[1] = 1.0;
    CHECK_THROWS_AS(nabla::cyl_bessel_j(order, at), std::domain_error);
}

TEST_CASE("Hermite polynomials, spherical Bessel functions, sinc and elliptic integrals at their "
          "edges",
          "[rules][conventions]") {
    const auto j0 = [](const auto& v) { return nabla::sph_bessel(0, v); };
    const auto j1 = [](const auto& v) { return nabla::sph_bessel(1, v); };
    const auto y0 = [](const auto& v) { return nabla::sph_neumann(0, v); };
    // j_n at 0: j_0 = 1 with derivative 0 (the strong zero of 0 j_(-1), j_(-1)(0) infinite),
    // j_1 = 0 with derivative 1/3.
    check_edge(j0, 0.0, 1.0, 0.0);
    check_edge(j1, 0.0, 0.0, 1.0 / 3.0);
    // y_n has a pole at 0: y_0 = -inf with derivative +inf.
    check_edge(y0, 0.0, -inf, inf);
    CHECK(nabla::sph_neumann(3, 0.0) == -inf);
    // Both tend to 0 at infinity; NaN stays NaN.
    check_edge(j1, inf, 0.0, 0.0);
    CHECK(nabla::sph_neumann(2, -inf) == 0.0);
    CHECK(std::isnan(nabla::sph_bessel(2, not_a_number)));
    // Negative arguments by parity, negative indices by j_(-n-1) = (-1)^(n+1) y_n.
    CHECK(nabla::sph_bessel(3, -1.5) == -nabla::sph_bessel(3, 1.5));
    CHECK(nabla::sph_bessel(2, -1.5) == nabla::sph_bessel(2, 1.5));
    CHECK(nabla::sph_neumann(2, -1.5) == -nabla::sph_neumann(2, 1.5));
    CHECK(nabla::sph_bessel(-1, 0.8) == Approx(std::cos(0.8) / 0.8).epsilon(1e-15));
    CHECK(nabla::sph_neumann(-1, 0.8) == Approx(std::sin(0.8) / 0.8).epsilon(1e-15));
    // sinc = j_0: 1 at 0 with derivative 0, 0 at infinity.
    check_edge([](const auto& v) { return nabla::sinc(v); }, 0.0, 1.0, 0.0);
    check_edge([](const auto& v) { return nabla::sinc(v); }, inf, 0.0, 0.0);
    // The incomplete elliptic integrals are phi at k = 0, their k-derivatives 0 there.
    check_edge([](const auto& v) { return nabla::ellint_1(v, 0.7); }, 0.0, 0.7, 0.0);
    check_edge([](const auto& v) { return nabla::ellint_2(v, 0.7); }, 0.0, 0.7, 0.0);
    check_edge([](const auto& v) { return nabla::ellint_1(0.0, v); }, 0.7, 0.7, 1.0);
    check_edge([](const auto& v) { return nabla::ellint_1(v, 0.7); }, 1.5, not_a_number,
               not_a_number);
    // H_n = 0 for n < 0, which closes H_n' = 2n H_(n-1); H_0 = 1 everywhere.
    CHECK(nabla::hermite(-1, 2.0) == 0.0);
    check_edge([](const auto& v) { return nabla::hermite(0, v); }, 3.0, 1.0, 0.0);
    check_edge([](const auto& v) { return nabla::hermite(2, v); }, 0.5, -1.0, 4.0);
}

TEST_CASE("the elliptic integrals of the third kind at their edges", "[rules][conventions]") {
    // nu = 0 is the first kind, exactly, so that the derivatives' numerators cancel exactly.
    CHECK(nabla::comp_ellint_3(0.6, 0.0) == nabla::comp_ellint_1(0.6));
    CHECK(nabla::ellint_3(0.6, 0.0, 1.2) == nabla::ellint_1(0.6, 1.2));
    // Even in k: the k-derivative is exactly 0 at k = 0, for every nu.
    const auto complete_in_k = [](const auto& v) { return comp_ellint_3(v, 0.4); };
    check_edge(complete_in_k, 0.0, nabla::comp_ellint_3(0.0, 0.4), 0.0);
    check_edge([](const auto& v) { return comp_ellint_3(v, 0.0); }, 0.0, std::comp_ellint_1(0.0),
               0.0);
    check_edge([](const auto& v) { return ellint_3(v, 0.4, 0.7); }, 0.0,
               nabla::ellint_3(0.0, 0.4, 0.7), 0.0);
    // Pi(n, k) = pi / (2 sqrt(1 - n)) at k = 0.
    CHECK(nabla::comp_ellint_3(0.0, 0.4) ==
          Approx(std::numbers::pi / (2 * std::sqrt(0.6))).epsilon(1e-15));
    // The pole nu = 1 and the modulus 1: +inf, increasing; beyond them NaN (libstdc++ throws).
    const auto complete_in_nu = [](const auto& v) { return comp_ellint_3(0.5, v); };
    check_edge(complete_in_nu, 1.0, inf, inf);
    check_edge(complete_in_nu, 2.0, not_a_number, not_a_number);
    check_edge([](const auto& v) { return comp_ellint_3(v, 0.5); }, 1.0, inf, inf);
    check_edge([](const auto& v) { return comp_ellint_3(v, 0.5); }, 1.5, not_a_number,
               not_a_number);
    // The incomplete integral: 0 at phi = 0 with slope 1; for nu > 1 defined up to the pole
    // at sin^2 phi = 1 / nu, NaN beyond it (no Cauchy principal value).
    check_edge([](const auto& v) { return ellint_3(0.5, 0.3, v); }, 0.0, 0.0, 1.0);
    CHECK(nabla::ellint_3(0.5, 2.0, 0.3) == Approx(std::ellint_3(0.5, 2.0, 0.3)).epsilon(1e-14));
    CHECK(std::isnan(nabla::ellint_3(0.5, 2.0, 1.3)));
    CHECK(nabla::ellint_3(0.5, 1.0, std::numbers::pi / 2) == inf);
    // A large negative characteristic: Pi tends to 0 as pi / (2 sqrt(-nu)), without the
    // cancellation of the textbook Carlson form (mpmath's values).
    CHECK(nabla::comp_ellint_3(0.5, -1e16) == Approx(1.570796328977778e-8).epsilon(1e-14));
    CHECK(nabla::ellint_3(0.5, -1e16, 1.0) == Approx(1.5707963216947358e-8).epsilon(1e-14));
    CHECK(nabla::comp_ellint_3(0.5, -inf) == 0.0);
    // dPi/dnu at nu = 0, and both derivatives on nu = k^2, where the closed forms divide 0 by 0:
    // nabla's own series give them in every mode, static graphs included (mpmath's values).
    using D = nabla::dual<double, 1>;
    const auto numeric_modes = [](const auto& f, double at, double derivative) {
        INFO("at " << at);
        CHECK(f(D(at, {1.0})).tangent[0] == Approx(derivative).epsilon(1e-14));
        nabla::taylor<double, 2> series(at);
        series.c[1] = 1.0;
        CHECK(f(series).c[1] == Approx(derivative).epsilon(1e-14));
        nabla::tape<> tape;
        auto recording = tape.record();
        const nabla::var v = tape.input(at);
        tape.gradient(f(v));
        CHECK(tape.adjoint(v) == Approx(derivative).epsilon(1e-14));
        CHECK(nabla::d(f(x), x)(at) == Approx(derivative).epsilon(1e-14));
    };
    // (K - E) / k^2 at nu = 0; (2E - k'^2 K) / (2 k'^4) in nu and its k-partner on nu = k^2.
    numeric_modes(complete_in_nu, 0.0, 0.87315258189267554964);
    numeric_modes(complete_in_nu, 0.25, 1.3511466561536874955);
    numeric_modes([](const auto& v) { return comp_ellint_3(v, 0.25); }, 0.5,
                  0.67557332807684374776);
    numeric_modes([](const auto& v) { return ellint_3(0.5, v, 0.7); }, 0.0, 0.10716529006202977122);
    // Inside a quarter period the modulus 1 is an ordinary point of Pi (mpmath's dPi/dk); past a
    // pole of nu > 1 the derivatives are NaN with the value; for a large negative nu dPi/dk comes
    // from the closed form, where the series cancel (mpmath's value).
    CHECK(ellint_3(D(1.0, {1.0}), 0.5, 1.0).tangent[0] ==
          Approx(1.1424661196723427).epsilon(1e-14));
    CHECK(std::isnan(ellint_3(0.5, 2.0, D(2.0, {1.0})).tangent[0]));
    CHECK(comp_ellint_3(D(0.5, {1.0}), -1e6).tangent[0] ==
          Approx(9.7752238836244503e-7).epsilon(1e-14));
}

TEST_CASE("the Legendre, Gegenbauer and Laguerre families at their edges", "[rules][conventions]") {
    // P_l(1) = 1 and P_l'(1) = l (l + 1) / 2 exactly, P_l(-1) = (-1)^l: the derivative is
    // C_(l-1)^(3/2), with no 0/0 at +-1.
    check_edge([](const auto& v) { return nabla::legendre(3, v); }, 1.0, 1.0, 6.0);
    check_edge([](const auto& v) { return nabla::legendre(3, v); }, -1.0, -1.0, 6.0);
    // Beyond [-1, 1] the polynomial: P_2(2) = (3 * 4 - 1) / 2; L_n of a negative x too
    // (libstdc++ throws there).
    check_edge([](const auto& v) { return nabla::legendre(2, v); }, 2.0, 5.5, 6.0);
    check_edge([](const auto& v) { return nabla::laguerre(2, v); }, -1.0, 3.5, -3.0);
    CHECK_THROWS_AS(std::laguerre(2, -1.0), std::domain_error);
    // A negative degree is the zero polynomial, which closes the derivatives at degree 0.
    CHECK(nabla::gegenbauer(-1, 1.5, 0.3) == 0.0);
    CHECK(nabla::assoc_laguerre(-2, 0.5, 0.3) == 0.0);
    check_edge([](const auto& v) { return nabla::laguerre(0, v); }, 3.0, 1.0, 0.0);
    check_edge([](const auto& v) { return nabla::laguerre(1, v); }, 3.0, -2.0, -1.0);
    // assoc_legendre: order 0 is P_l, with its derivative at +-1 (the strong zero of the power
    // 0); order 1 is sqrt(1 - x^2) P_l', whose derivative is -inf at 1 (P_l'(1) > 0); an even
    // order is a polynomial with a finite derivative there; an order above the degree is 0.
    check_edge([](const auto& v) { return nabla::assoc_legendre(3, 0, v); }, 1.0, 1.0, 6.0);
    check_edge([](const auto& v) { return nabla::assoc_legendre(2, 1, v); }, 1.0, 0.0, -inf);
    check_edge([](const auto& v) { return nabla::assoc_legendre(2, 1, v); }, -1.0, 0.0, -inf);
    check_edge([](const auto& v) { return nabla::assoc_legendre(3, 1, v); }, -1.0, 0.0, inf);
    check_edge([](const auto& v) { return nabla::assoc_legendre(2, 2, v); }, 1.0, 0.0, -6.0);
    check_edge([](const auto& v) { return nabla::assoc_legendre(3, 3, v); }, 1.0, 0.0, 0.0);
    check_edge([](const auto& v) { return nabla::assoc_legendre(2, 3, v); }, 0.5, 0.0, 0.0);
    check_edge([](const auto& v) { return nabla::assoc_legendre(0, 1, v); }, 1.0, 0.0, 0.0);
    CHECK(nabla::assoc_legendre(2, 3, 1.5) == 0.0);
    // Near +-1, (1 - x)(1 + x) keeps the digits 1 - x * x would lose.
    CHECK(nabla::assoc_legendre(5, 3, 1.0 - 1e-10) ==
          Approx(std::assoc_legendre(5, 3, 1.0 - 1e-10)).epsilon(1e-13));
    // Beyond [-1, 1]: NaN for an odd order ((1 - x^2)^(m/2) is not real), the formula for an
    // even one (libstdc++: NaN for both).
    CHECK(std::isnan(nabla::assoc_legendre(3, 1, 1.5)));
    CHECK(nabla::assoc_legendre(2, 2, 1.5) == Approx(3.0 * (1.0 - 1.5 * 1.5)).epsilon(1e-15));
    CHECK_THROWS_AS(nabla::assoc_legendre(3, -1, 0.5), std::domain_error);
    CHECK_THROWS_AS(nabla::sph_legendre(3, -1, 0.5), std::domain_error);
    // sph_legendre: Y_l^0(0) = sqrt((2l + 1) / (4 pi)), Y_l^m(0) = 0 for m >= 1 with a finite
    // slope (sin(theta)^m, analytic through the pole: Y_l^m(-theta) = (-1)^m Y_l^m(theta)).
    const auto y31 = [](const auto& v) { return nabla::sph_legendre(3, 1, v); };
    CHECK(nabla::sph_legendre(3, 0, 0.0) == Approx(std::sqrt(7.0 / (4.0 * std::numbers::pi))));
    CHECK(nabla::sph_legendre(3, 1, 0.0) == 0.0);
    const double slope = nabla::grad(y31, 0.0)[0];
    CHECK(std::isfinite(slope));
    CHECK(slope == Approx(nabla::grad(y31, 1e-7)[0]).epsilon(1e-6));
    CHECK(nabla::sph_legendre(3, 1, -0.4) ==
          Approx(-nabla::sph_legendre(3, 1, 0.4)).epsilon(1e-15));
    CHECK(nabla::sph_legendre(3, 2, 0.4) == Approx(std::sph_legendre(3, 2, 0.4)).epsilon(1e-14));
    // High degrees: the normalisation is multiplied up factor by factor; beyond about 1000 the
    // polynomial overflows, and the value is NaN, not a wrong number.
    CHECK(nabla::sph_legendre(1000, 500, std::numbers::pi / 2) ==
          Approx(std::sph_legendre(1000, 500, std::numbers::pi / 2)).epsilon(1e-11));
    CHECK(nabla::sph_legendre(800, 400, 1.0) ==
          Approx(std::sph_legendre(800, 400, 1.0)).epsilon(1e-11));
    CHECK(std::isnan(nabla::sph_legendre(2000, 1000, 1.0)));
}
