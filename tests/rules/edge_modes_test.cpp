// The edge cases of every function in every mode: each function is written once, generically, and
// differentiated at its edge by the static graph (placeholders, value_and_grad), dual numbers
// (forward), the tape (reverse) and Taylor series; every mode must give the documented value and
// gradient (docs/conventions.md): the same NaN, the same infinity, the same number to 1e-15.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan_ = std::numeric_limits<double>::quiet_NaN();

// Whether a result is the expected one: both NaN, or equal (infinities included), or within
// 1e-15 relative.
bool same(double got, double expected) {
    if (std::isnan(expected))
        return std::isnan(got);
    if (std::isinf(expected) || expected == 0.0)
        return got == expected;
    return std::abs(got - expected) <= 1e-15 * std::abs(expected);
}

std::string show(double v) {
    std::ostringstream out;
    out.precision(17);
    out << v;
    return out.str();
}

// Where a function has no Taylor series (sqrt, log, a real power at 0), derivatives<K> says so
// with a std::domain_error (docs/forward.md) instead of a series of infinities and NaN.
enum class taylor { exists, none };

// f of one variable at x: value and derivative in every mode.
template <class F>
void one(const char* what,
         const F& f,
         double x,
         double value,
         double derivative,
         taylor series_exists = taylor::exists) {
    INFO(what << " at " << x);
    const auto [px] = nabla::variables<1>();
    const auto statically = nabla::value_and_grad(f(px), x);
    const auto forward = nabla::value_and_grad(nabla::mode::forward, f, x);
    const auto reverse = nabla::value_and_grad(nabla::mode::reverse, f, x);
    std::array<double, 2> series{value, derivative};
    if (series_exists == taylor::exists) {
        const auto s = nabla::derivatives<1>(f, x);
        series = {s[0], s[1]};
    } else {
        CHECK_THROWS_AS(nabla::derivatives<1>(f, x), std::domain_error);
    }
    const std::array<std::pair<const char*, std::array<double, 2>>, 4> modes{{
        {"static", {statically.value, statically.gradient[0]}},
        {"forward", {forward.value, forward.gradient[0]}},
        {"reverse", {reverse.value, reverse.gradient[0]}},
        {"Taylor", series},
    }};
    for (const auto& [mode, got] : modes) {
        INFO(mode << ": value " << show(got[0]) << ", derivative " << show(got[1]));
        CHECK(same(got[0], value));
        CHECK(same(got[1], derivative));
    }
}

// f of two variables at (x, y): value and gradient in every mode but Taylor.
template <class F>
void two(const char* what, const F& f, double x, double y, double value, double dx, double dy) {
    INFO(what << " at " << x << ", " << y);
    const auto [px, py] = nabla::variables<2>();
    const auto statically = nabla::value_and_grad(f(px, py), x, y);
    const auto forward = nabla::value_and_grad(nabla::mode::forward, f, x, y);
    const auto reverse = nabla::value_and_grad(nabla::mode::reverse, f, x, y);
    const std::array<std::pair<const char*, std::array<double, 3>>, 3> modes{{
        {"static", {statically.value, statically.gradient[0], statically.gradient[1]}},
        {"forward", {forward.value, forward.gradient[0], forward.gradient[1]}},
        {"reverse", {reverse.value, reverse.gradient[0], reverse.gradient[1]}},
    }};
    for (const auto& [mode, got] : modes) {
        INFO(mode << ": value " << show(got[0]) << ", gradient " << show(got[1]) << ", "
                  << show(got[2]));
        CHECK(same(got[0], value));
        CHECK(same(got[1], dx));
        CHECK(same(got[2], dy));
    }
}

}  // namespace

// The tables below stay one case a line.
// clang-format off
TEST_CASE("edge cases agree in every mode: roots and powers at 0", "[rules][conventions][modes]") {
    one("sqrt", [](auto t) { using std::sqrt; return sqrt(t); }, 0.0, 0.0, inf, taylor::none);
    one("sqrt", [](auto t) { using std::sqrt; return sqrt(t); }, -1.0, nan_, nan_);
    one("cbrt", [](auto t) { using std::cbrt; return cbrt(t); }, 0.0, 0.0, inf, taylor::none);
    one("pow(x, 2.5)", [](auto t) { using std::pow; return pow(t, 2.5); }, 0.0, 0.0, 0.0,
        taylor::none);
    one("pow(x, 0.5)", [](auto t) { using std::pow; return pow(t, 0.5); }, 0.0, 0.0, inf,
        taylor::none);
    one("pow(x, 1.0)", [](auto t) { using std::pow; return pow(t, 1.0); }, 0.0, 0.0, 1.0);
    one("pow(x, 2.0)", [](auto t) { using std::pow; return pow(t, 2.0); }, 0.0, 0.0, 0.0);
    one("pow(x, 0.0)", [](auto t) { using std::pow; return pow(t, 0.0); }, 0.0, 1.0, 0.0);
    one("pow(x, 0)", [](auto t) { using std::pow; return pow(t, 0); }, 0.0, 1.0, 0.0);
    one("pow(x, 1)", [](auto t) { using std::pow; return pow(t, 1); }, 0.0, 0.0, 1.0);
    one("pow(x, 3)", [](auto t) { using std::pow; return pow(t, 3); }, -2.0, -8.0, 12.0);
    one("pow(x, -1)", [](auto t) { using std::pow; return pow(t, -1); }, 0.0, inf, -inf,
        taylor::none);
    // pow(0, y): 0^y jumps at y = 0.
    one("pow(0, y)", [](auto t) { using std::pow; return pow(0.0, t); }, 0.0, 1.0, -inf,
        taylor::none);
    one("pow(0, y)", [](auto t) { using std::pow; return pow(0.0, t); }, 2.0, 0.0, 0.0);
    two("pow(x, y)", [](auto a, auto b) { using std::pow; return pow(a, b); }, 0.0, 2.0, 0.0,
        0.0, 0.0);
    two("pow(x, y)", [](auto a, auto b) { using std::pow; return pow(a, b); }, 0.0, 0.0, 1.0,
        0.0, -inf);
}

TEST_CASE("edge cases agree in every mode: kinks and ties", "[rules][conventions][modes]") {
    one("abs", [](auto t) { using std::abs; return abs(t); }, 0.0, 0.0, 0.0);
    one("abs", [](auto t) { using std::abs; return abs(t); }, -0.0, 0.0, 0.0);
    two("min", [](auto a, auto b) { using std::min; return min(a, b); }, 1.5, 1.5, 1.5, 0.5, 0.5);
    two("max", [](auto a, auto b) { using std::max; return max(a, b); }, 1.5, 1.5, 1.5, 0.5, 0.5);
    two("fmin", [](auto a, auto b) { using std::fmin; return fmin(a, b); }, 1.5, 1.5, 1.5, 0.5,
        0.5);
    two("fmax", [](auto a, auto b) { using std::fmax; return fmax(a, b); }, 1.5, 1.5, 1.5, 0.5,
        0.5);
    two("hypot", [](auto a, auto b) { using std::hypot; return hypot(a, b); }, 0.0, 0.0, 0.0,
        0.0, 0.0);
    two("atan2", [](auto a, auto b) { using std::atan2; return atan2(a, b); }, 0.0, 0.0, 0.0,
        0.0, 0.0);
}

TEST_CASE("edge cases agree in every mode: logarithms, overflow, saturation",
          "[rules][conventions][modes]") {
    one("log", [](auto t) { using std::log; return log(t); }, 0.0, -inf, inf, taylor::none);
    one("log", [](auto t) { using std::log; return log(t); }, -1.0, nan_, -1.0);
    one("log1p", [](auto t) { using std::log1p; return log1p(t); }, -1.0, -inf, inf,
        taylor::none);
    // exp overflows: the derivative is inf, not NaN.
    one("exp", [](auto t) { using std::exp; return exp(t); }, 800.0, inf, inf);
    one("exp2", [](auto t) { using std::exp2; return exp2(t); }, 2000.0, inf, inf);
    one("sinh", [](auto t) { using std::sinh; return sinh(t); }, 800.0, inf, inf);
    // tanh and erf saturate: the value is exactly 1, the derivative a tiny number or 0, not NaN
    // (and not 1 - tanh^2, which is 0 from |x| = 19 on).
    one("tanh", [](auto t) { using std::tanh; return tanh(t); }, 30.0, 1.0,
        1.0 / (std::cosh(30.0) * std::cosh(30.0)));
    one("tanh", [](auto t) { using std::tanh; return tanh(t); }, 400.0, 1.0, 0.0);
    one("erf", [](auto t) { using std::erf; return erf(t); }, 30.0, 1.0, 0.0);
    one("erf", [](auto t) { using std::erf; return erf(t); }, 5.0, std::erf(5.0),
        2.0 / std::sqrt(M_PI) * std::exp(-25.0));
    one("erfc", [](auto t) { using std::erfc; return erfc(t); }, 10.0, std::erfc(10.0),
        -2.0 / std::sqrt(M_PI) * std::exp(-100.0));
}

TEST_CASE("edge cases agree in every mode: no cancellation near 0", "[rules][conventions][modes]") {
    // log1p and expm1 at 1e-300: value x, derivative 1, both exact (no 1 + x rounding).
    one("log1p", [](auto t) { using std::log1p; return log1p(t); }, 1e-300, 1e-300, 1.0);
    one("expm1", [](auto t) { using std::expm1; return expm1(t); }, 1e-300, 1e-300, 1.0);
    one("log1p", [](auto t) { using std::log1p; return log1p(t); }, 1e-10, std::log1p(1e-10),
        1.0 / (1.0 + 1e-10));
    one("expm1", [](auto t) { using std::expm1; return expm1(t); }, -1e-10, std::expm1(-1e-10),
        std::exp(-1e-10));
}

TEST_CASE("edge cases agree in every mode: the gamma functions at and near their poles",
          "[rules][conventions][modes]") {
    // At a pole: the value as std:: gives it, the derivative NaN.
    one("lgamma", [](auto t) { using std::lgamma; return lgamma(t); }, 0.0, inf, nan_);
    one("lgamma", [](auto t) { using std::lgamma; return lgamma(t); }, -2.0, inf, nan_);
    one("tgamma", [](auto t) { using std::tgamma; return tgamma(t); }, -1.0, nan_, nan_);
    // Near a pole: large and finite (digamma(x) is about -1 / (x + 1) just right of -1).
    const double near_pole = -1.0 + 1e-8;
    const double lgamma_derivative = nabla::rules::digamma(near_pole);
    one("lgamma", [](auto t) { using std::lgamma; return lgamma(t); }, near_pole,
        std::lgamma(near_pole), lgamma_derivative);
    CHECK(lgamma_derivative < -9e7);
}

TEST_CASE("edge cases agree in every mode: x - x and x / x", "[rules][conventions][modes]") {
    // The derivatives the algebra gives, exactly: d(x - x) = 0 and d(x / x) = 0 wherever the
    // value is finite; NaN where it is not (inf - inf).
    one("x - x", [](auto t) { return t - t; }, 3.7, 0.0, 0.0);
    one("x / x", [](auto t) { return t / t; }, 3.7, 1.0, 0.0);
    one("x / x", [](auto t) { return t / t; }, 1e-300, 1.0, 0.0);
    one("(x - x) * exp(x)", [](auto t) { using std::exp; return (t - t) * exp(t); }, 800.0, nan_,
        nan_);
    one("x * x - x * x", [](auto t) { return t * t - t * t; }, 1e200, nan_, 0.0);
}
// clang-format on
