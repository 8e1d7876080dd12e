// Cross-mode agreement: compositions written once, generically, differentiated by every mode
// that applies (the static graph's d and reverse sweep, dual numbers, nested duals, Taylor
// series, the run-time tape and forward over reverse) at random points; all must agree to near
// double precision. (Random programs over the run-time modes: tests/fuzz/.)

#include <nabla/nabla.hpp>
#include <nabla/tensor.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <tuple>

namespace {

// Compositions covering every function of the rule table, each defined on (0.5, 1.5)^2.
auto compositions() {
    return std::make_tuple(
        [](auto x, auto y) {
            using std::exp, std::log, std::sin;
            return exp(sin(x) * y) / (1.0 + x * x) + log(x + y) * sin(y);
        },
        [](auto x, auto y) {
            using std::atan2, std::cbrt, std::hypot, std::pow, std::sqrt;
            return pow(x, y) * atan2(y, x) - hypot(x, 2.0 * y) * cbrt(x - 2.0) + sqrt(x * y);
        },
        [](auto x, auto y) {
            using std::erf, std::erfc, std::lgamma, std::tgamma;
            return tgamma(x + 1.0) * erf(y) - lgamma(x * y + 0.5) * erfc(x - y);
        },
        [](auto x, auto y) {
            using std::asin, std::acos, std::atan, std::tan;
            return asin(x / 2.0) * acos(y / 2.0) + atan(x * y) * tan(x / 3.0);
        },
        [](auto x, auto y) {
            using std::acosh, std::asinh, std::atanh, std::cosh, std::sinh, std::tanh;
            return sinh(x) * cosh(y) - tanh(x * y) + asinh(y) * acosh(x + 1.0) + atanh(x / 2.0);
        },
        [](auto x, auto y) {
            using std::exp2, std::expm1, std::fma, std::log10, std::log1p, std::log2;
            return exp2(x) * log2(y) + expm1(x - y) * log10(x + 1.0) + fma(x, y, log1p(y));
        },
        [](auto x, auto y) {
            using std::abs, std::fmax, std::fmin, std::pow;
            using nabla::digamma, nabla::max, nabla::min;
            return abs(x - y) * min(x, y) + fmax(x, 2.0 * y) * fmin(y, x * x) + pow(x, 3) * y +
                   digamma(x + y);
        });
}

}  // namespace

TEST_CASE("every mode agrees on compositions of every rule", "[forward][cross-mode]") {
    std::mt19937 random(314159);
    std::uniform_real_distribution<double> coordinate(0.55, 1.45);
    // (No structured bindings: clang 14 cannot capture them in the lambdas below.)
    const auto variables = nabla::variables<2>();
    const auto x = std::get<0>(variables);
    const auto y = std::get<1>(variables);
    using D = nabla::dual<double, 2>;
    using DD = nabla::dual<D, 2>;
    std::apply(
        [&](const auto&... f) {
            const auto check = [&](const auto& g) {
                const auto expression = g(x, y);  // the static graph of the same code
                for (int trial = 0; trial < 8; ++trial) {
                    const double a = coordinate(random), b = coordinate(random);
                    INFO("f = " << nabla::to_string(expression) << " at " << a << ", " << b);
                    const auto tolerance = Approx::custom().epsilon(1e-12).margin(1e-12);
                    // Reverse sweep of the static graph, symbolic d.
                    const auto [value, gradient] = nabla::value_and_grad(expression, a, b);
                    const double dxx = nabla::d(expression, x, x)(a, b);
                    const double dxy = nabla::d(expression, x, y)(a, b);
                    // Duals and nested duals on the generic code.
                    const D fd = g(D(a, {1.0, 0.0}), D(b, {0.0, 1.0}));
                    const DD fdd = g(DD(D(a, {1.0, 0.0}), {D(1.0), D(0.0)}),
                                     DD(D(b, {0.0, 1.0}), {D(0.0), D(1.0)}));
                    // Taylor series along x.
                    const auto series =
                        nabla::derivatives<3>([&](auto t) { return g(t, b + 0.0 * t); }, a);
                    // The tape, and forward over reverse.
                    const auto taped = nabla::value_and_grad(nabla::mode::reverse, g, a, b);
                    const auto of_pair = [&](const auto& v) { return g(v[0], v[1]); };
                    const auto hessian =
                        nabla::hessian(nabla::mode::reverse, of_pair, std::vector<double>{a, b});
                    CHECK(taped.value == tolerance(value));
                    CHECK(taped.gradient[0] == tolerance(gradient[0]));
                    CHECK(taped.gradient[1] == tolerance(gradient[1]));
                    CHECK(hessian(0, 0) == tolerance(dxx));
                    CHECK(hessian(0, 1) == tolerance(dxy));
                    CHECK(hessian(1, 0) == tolerance(dxy));
                    CHECK(fd.value == tolerance(value));
                    CHECK(fd.tangent[0] == tolerance(gradient[0]));
                    CHECK(fd.tangent[1] == tolerance(gradient[1]));
                    CHECK(fdd.tangent[0].tangent[0] == tolerance(dxx));
                    CHECK(fdd.tangent[0].tangent[1] == tolerance(dxy));
                    CHECK(fdd.tangent[1].tangent[0] == tolerance(dxy));
                    CHECK(series[0] == tolerance(value));
                    CHECK(series[1] == tolerance(gradient[0]));
                    CHECK(series[2] == tolerance(dxx));
                    CHECK(series[3] == tolerance(nabla::d(expression, x, x, x)(a, b)));
                }
            };
            (check(f), ...);
        },
        compositions());
}

TEST_CASE("Taylor series and duals nest both ways", "[forward][cross-mode]") {
    const auto f = [](auto x, auto y) {
        using std::exp, std::log, std::sin, std::tgamma;
        return exp(sin(x) * y) / (1.0 + x * x) + log(x + y) + tgamma(x) * y;
    };
    const auto variables = nabla::variables<2>();
    const auto x = std::get<0>(variables);
    const auto y = std::get<1>(variables);
    const auto expression = f(x, y);
    using D = nabla::dual<double, 1>;
    using S = nabla::taylor<double, 3>;
    // taylor<dual>: the series runs along x, the tangent along y.
    nabla::taylor<D, 3> sx(D(0.7));
    sx.c[1] = D(1.0);
    const auto series_of_duals = f(sx, nabla::taylor<D, 3>(D(1.3, {1.0})));
    // dual<taylor>: the same derivatives, nested the other way.
    S tx(0.7);
    tx.c[1] = 1.0;
    const nabla::dual<S, 1> dx(tx);
    const nabla::dual<S, 1> dy(S(1.3), {S(1.0)});
    const auto duals_of_series = f(dx, dy);
    const double xxy = nabla::d(expression, x, x, y)(0.7, 1.3);
    const double xxxy = nabla::d(expression, x, x, x, y)(0.7, 1.3);
    CHECK(series_of_duals.c[2].tangent[0] * 2.0 == Approx(xxy).epsilon(1e-13));
    CHECK(duals_of_series.tangent[0].c[2] * 2.0 == Approx(xxy).epsilon(1e-13));
    CHECK(series_of_duals.c[3].tangent[0] * 6.0 == Approx(xxxy).epsilon(1e-12));
    CHECK(duals_of_series.tangent[0].c[3] * 6.0 == Approx(xxxy).epsilon(1e-12));
}
