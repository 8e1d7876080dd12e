// Every function of the function list (rules/functions.hpp), and every function each mode binds
// by hand, reaches its rule in every mode: static graphs, dual numbers, Taylor series and the
// tape give the rule's value and the rule's partials at one point. The list is expanded here
// with the macro the modes use, so a function a mode lacks does not compile.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>

namespace {

using nabla::detail::to_number;

// A point inside every listed function's domain (acosh needs x > 1, atanh |x| < 1, Lambert W's
// lower branch -1/e <= x < 0).
constexpr double unary_point(const char* name) {
    if (std::string_view(name) == "acosh")
        return 1.3;
    if (std::string_view(name) == "lambert_wm1")
        return -0.3;
    return 0.3;
}

// f applied to x in every mode: the value and d f / d x against the rule's.
template <class Rule, class F>
void check_unary(const std::string& name, const F& f, double x) {
    INFO(name << " at " << x);
    const double value = to_number<double>(Rule::value(x));
    const double partial = to_number<double>(Rule::template partial<0>(value, x));

    const auto [p] = nabla::variables<1>();
    CHECK(f(p)(x) == Approx(value).epsilon(1e-15));
    CHECK(nabla::d(f(p), p)(x) == Approx(partial).epsilon(1e-15));

    const auto dual = f(nabla::dual<double, 1>(x, {1.0}));
    CHECK(dual.value == value);
    CHECK(dual.tangent[0] == partial);

    nabla::taylor<double, 1> series(x);
    series.c[1] = 1.0;
    const auto taylor = f(series);
    CHECK(taylor.c[0] == Approx(value).epsilon(1e-15));
    CHECK(taylor.c[1] == Approx(partial).epsilon(1e-15).margin(1e-300));

    nabla::tape<> tape;
    auto recording = tape.record();
    const nabla::var v = tape.input(x);
    const nabla::var y = f(v);
    tape.gradient(y);
    CHECK(y.value == value);
    CHECK(tape.adjoint(v) == partial);
}

// f applied to (a, b) in every mode: the value and both partials against the rule's.
template <class Rule, class F>
void check_binary(const std::string& name, const F& f, double a, double b) {
    INFO(name << " at " << a << ", " << b);
    const double value = to_number<double>(Rule::value(a, b));
    const double da = to_number<double>(Rule::template partial<0>(value, a, b));
    const double db = to_number<double>(Rule::template partial<1>(value, a, b));

    const auto [p, q] = nabla::variables<2>();
    CHECK(f(p, q)(a, b) == Approx(value).epsilon(1e-15));
    CHECK(nabla::d(f(p, q), p)(a, b) == Approx(da).epsilon(1e-15));
    CHECK(nabla::d(f(p, q), q)(a, b) == Approx(db).epsilon(1e-15));

    using D = nabla::dual<double, 2>;
    const auto dual = f(D(a, {1.0, 0.0}), D(b, {0.0, 1.0}));
    CHECK(dual.value == value);
    CHECK(dual.tangent[0] == da);
    CHECK(dual.tangent[1] == db);
    CHECK(f(D(a, {1.0, 0.0}), b).tangent[0] == da);
    CHECK(f(a, D(b, {0.0, 1.0})).tangent[1] == db);

    nabla::taylor<double, 1> sa(a), sb(b);
    sa.c[1] = 1.0;
    sb.c[1] = 1.0;
    CHECK(f(sa, nabla::taylor<double, 1>(b)).c[0] == Approx(value).epsilon(1e-15));
    CHECK(f(sa, nabla::taylor<double, 1>(b)).c[1] == Approx(da).epsilon(1e-15).margin(1e-300));
    CHECK(f(nabla::taylor<double, 1>(a), sb).c[1] == Approx(db).epsilon(1e-15).margin(1e-300));
    CHECK(f(sa, b).c[1] == Approx(da).epsilon(1e-15).margin(1e-300));

    nabla::tape<> tape;
    auto recording = tape.record();
    const nabla::var u = tape.input(a), v = tape.input(b);
    const nabla::var y = f(u, v);
    tape.gradient(y);
    CHECK(y.value == value);
    CHECK(tape.adjoint(u) == da);
    CHECK(tape.adjoint(v) == db);
    const nabla::var z = f(u, b);
    tape.gradient(z);
    CHECK(tape.adjoint(u) == da);
}

// A rule with one operand fixed to the integer C, first or last (polygamma(1, x), pow(x, 3)).
template <class Rule, int C>
struct first_fixed {
    template <class X>
    static constexpr auto value(const X& x) {
        return Rule::value(C, x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X& x) {
        return Rule::template partial<I + 1>(y, C, x);
    }
};
template <class Rule, int C>
struct last_fixed {
    template <class X>
    static constexpr auto value(const X& x) {
        return Rule::value(x, C);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X& x) {
        return Rule::template partial<I>(y, x, C);
    }
};

// A rule of three operands with the first two fixed to the integer C and the number Half / 2
// (gegenbauer(3, 1.5, x)).
template <class Rule, int C, int Half>
struct two_fixed {
    template <class X>
    static constexpr auto value(const X& x) {
        return Rule::value(C, Half / 2.0, x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X& x) {
        return Rule::template partial<I + 2>(y, C, Half / 2.0, x);
    }
};

}  // namespace

TEST_CASE("every listed function of one operand reaches its rule in every mode", "[rules]") {
#define NABLA_CHECK_UNARY(function, rule)                                                          \
    check_unary<nabla::rules::rule>(                                                               \
        #function, [](const auto& x) { return function(x); }, unary_point(#function));
    NABLA_UNARY_FUNCTIONS(NABLA_CHECK_UNARY)
#undef NABLA_CHECK_UNARY
}

TEST_CASE("every listed function of two operands reaches its rule in every mode", "[rules]") {
#define NABLA_CHECK_BINARY(function, rule)                                                         \
    check_binary<nabla::rules::rule>(                                                              \
        #function, [](const auto& a, const auto& b) { return function(a, b); }, 0.3, 0.7);
    NABLA_BINARY_FUNCTIONS(NABLA_CHECK_BINARY)
#undef NABLA_CHECK_BINARY
}

TEST_CASE("every listed function of an integer index reaches its rule in every mode", "[rules]") {
#define NABLA_CHECK_INDEXED(function, rule)                                                        \
    check_unary<first_fixed<nabla::rules::rule, 2>>(                                               \
        #function "(2, x)", [](const auto& x) { return function(2, x); }, 0.3);
    NABLA_INDEXED_FUNCTIONS(NABLA_CHECK_INDEXED)
#undef NABLA_CHECK_INDEXED
}

TEST_CASE("every listed function of a degree and a parameter reaches its rule in every mode",
          "[rules]") {
#define NABLA_CHECK_PARAMETRIC(function, rule)                                                     \
    check_unary<two_fixed<nabla::rules::rule, 3, 3>>(                                              \
        #function "(3, 1.5, x)", [](const auto& x) { return function(3, 1.5, x); }, 0.3);
    NABLA_PARAMETRIC_FUNCTIONS(NABLA_CHECK_PARAMETRIC)
#undef NABLA_CHECK_PARAMETRIC
}

TEST_CASE("the functions each mode binds by hand reach their rules in every mode", "[rules]") {
    using namespace nabla::rules;
    check_unary<neg_rule>(
        "neg", [](const auto& x) { return -x; }, 0.3);
    check_binary<add_rule>(
        "add", [](const auto& a, const auto& b) { return a + b; }, 0.3, 0.7);
    check_binary<sub_rule>(
        "sub", [](const auto& a, const auto& b) { return a - b; }, 0.3, 0.7);
    check_binary<mul_rule>(
        "mul", [](const auto& a, const auto& b) { return a * b; }, 0.3, 0.7);
    check_binary<div_rule>(
        "div", [](const auto& a, const auto& b) { return a / b; }, 0.3, 0.7);
    check_binary<pow_rule>(
        "pow", [](const auto& a, const auto& b) { return pow(a, b); }, 0.3, 0.7);
    check_unary<last_fixed<powi_rule, 3>>(
        "pow(x, 3)", [](const auto& x) { return pow(x, 3); }, 0.3);
    check_unary<first_fixed<polygamma_rule, 0>>(
        "digamma", [](const auto& x) { return digamma(x); }, 0.3);
    check_unary<last_fixed<ldexp_rule, -3>>(
        "ldexp(x, -3)", [](const auto& x) { return ldexp(x, -3); }, 0.3);

    // fma(a, b, c): three operands, every mode.
    const double a = 0.3, b = 0.7, c = 0.5, value = fma_rule::value(a, b, c);
    const auto [p, q, r] = nabla::variables<3>();
    CHECK(fma(p, q, r)(a, b, c) == value);
    CHECK(nabla::d(fma(p, q, r), p)(a, b, c) == b);
    CHECK(nabla::d(fma(p, q, r), q)(a, b, c) == a);
    CHECK(nabla::d(fma(p, q, r), r)(a, b, c) == 1.0);
    using D = nabla::dual<double, 3>;
    const D dual = fma(D(a, {1.0, 0.0, 0.0}), D(b, {0.0, 1.0, 0.0}), D(c, {0.0, 0.0, 1.0}));
    CHECK(dual.value == value);
    CHECK(dual.tangent == std::array<double, 3>{b, a, 1.0});
    nabla::taylor<double, 1> sa(a);
    sa.c[1] = 1.0;
    const auto series = fma(sa, nabla::taylor<double, 1>(b), nabla::taylor<double, 1>(c));
    CHECK(series.c[0] == value);
    CHECK(series.c[1] == b);
    nabla::tape<> tape;
    auto recording = tape.record();
    const nabla::var u = tape.input(a), v = tape.input(b), w = tape.input(c);
    const nabla::var y = fma(u, v, w);
    tape.gradient(y);
    CHECK(y.value == value);
    CHECK(tape.adjoint(u) == b);
    CHECK(tape.adjoint(v) == a);
    CHECK(tape.adjoint(w) == 1.0);

    // hypot(a, b, c): three operands, every mode.
    const double h = hypot3_rule::value(a, b, c);
    CHECK(hypot(p, q, r)(a, b, c) == h);
    CHECK(nabla::d(hypot(p, q, r), q)(a, b, c) == b / h);
    const D dual_h = hypot(D(a, {1.0, 0.0, 0.0}), D(b, {0.0, 1.0, 0.0}), D(c, {0.0, 0.0, 1.0}));
    CHECK(dual_h.value == h);
    CHECK(dual_h.tangent == std::array<double, 3>{a / h, b / h, c / h});
    const auto series_h = hypot(sa, nabla::taylor<double, 1>(b), nabla::taylor<double, 1>(c));
    CHECK(series_h.c[0] == h);
    CHECK(series_h.c[1] == Approx(a / h).epsilon(1e-15));
    const nabla::var yh = hypot(u, v, w);
    tape.gradient(yh);
    CHECK(yh.value == h);
    CHECK(tape.adjoint(w) == c / h);

    // ellint_3(k, nu, phi): three operands, every mode, constants beside variables.
    const double pi3 = ellint_3_rule::value(a, b, c);
    const auto partial3 = [&](auto i) {
        return to_number<double>(ellint_3_rule::partial<decltype(i)::value>(pi3, a, b, c));
    };
    const double dk = partial3(std::integral_constant<std::size_t, 0>{});
    const double dnu = partial3(std::integral_constant<std::size_t, 1>{});
    const double dphi = partial3(std::integral_constant<std::size_t, 2>{});
    CHECK(nabla::ellint_3(a, b, c) == pi3);
    CHECK(ellint_3(p, q, r)(a, b, c) == pi3);
    CHECK(nabla::d(ellint_3(p, q, r), p)(a, b, c) == Approx(dk).epsilon(1e-15));
    CHECK(nabla::d(ellint_3(p, b, r), r)(a, b, c) == Approx(dphi).epsilon(1e-15));
    const D dual3 = ellint_3(D(a, {1.0, 0.0, 0.0}), D(b, {0.0, 1.0, 0.0}), D(c, {0.0, 0.0, 1.0}));
    CHECK(dual3.value == pi3);
    CHECK(dual3.tangent == std::array<double, 3>{dk, dnu, dphi});
    CHECK(ellint_3(a, D(b, {0.0, 1.0, 0.0}), c).tangent[1] == dnu);
    const auto series3 = ellint_3(sa, b, nabla::taylor<double, 1>(c));
    CHECK(series3.c[0] == pi3);
    CHECK(series3.c[1] == Approx(dk).epsilon(1e-15));
    const nabla::var y3 = ellint_3(u, v, w);
    tape.gradient(y3);
    CHECK(y3.value == pi3);
    CHECK(tape.adjoint(u) == dk);
    CHECK(tape.adjoint(v) == dnu);
    CHECK(tape.adjoint(w) == dphi);
    const nabla::var z3 = ellint_3(a, v, c);
    tape.gradient(z3);
    CHECK(tape.adjoint(v) == dnu);
}
