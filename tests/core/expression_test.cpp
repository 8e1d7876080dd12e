// Building and calling expressions: ownership (auto is always safe), run-time constants that share
// a type, argument handling and promotion, and evaluation of shared subexpressions once.

#include <nabla/nabla.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <type_traits>

namespace {

const auto [x, y, z] = nabla::variables<3>();

template <class T>
auto square(T a) {
    return a * a;
}

// An expression that holds a constant of a function that has returned.
auto spring_energy(double stiffness, double rest_length) {
    const auto [q] = nabla::variables<1>();
    const auto stretch = q - rest_length;
    return 0.5 * stiffness * stretch * stretch;
}

// A rule that counts its evaluations, to see how often a shared node is computed.
struct counted_exp_rule : nabla::rules::exp_rule {
    static inline int evaluations = 0;
    template <class X>
    static auto value(const X& v) {
        ++evaluations;
        return std::exp(v);
    }
};

template <class E>
auto counted_exp(const E& e) {
    return nabla::detail::combine(
        [](auto g) { return nabla::detail::make_node<counted_exp_rule>(g); }, e);
}

}  // namespace

TEST_CASE("expressions built in helper functions returning auto are right", "[core][auto]") {
    const auto f = square(x + 2.0);
    CHECK(f(1.0) == 9.0);
    CHECK(nabla::grad(f, 1.0)[0] == 6.0);
    const auto inline_f = (x + 2.0) * (x + 2.0);
    CHECK(nabla::value_and_grad(f, 1.5).gradient == nabla::value_and_grad(inline_f, 1.5).gradient);
    CHECK(nabla::d(f, x, x)(0.0) == 2.0);

    const auto e = spring_energy(4.0, 1.5);  // the function's locals are gone
    CHECK(e(2.0) == Approx(0.5));
    CHECK(nabla::grad(e, 2.0)[0] == Approx(2.0));
    CHECK(nabla::d(e, nabla::placeholder<0>{}, nabla::placeholder<0>{})(7.0) == Approx(4.0));
}

TEST_CASE("run-time constants of the same type keep their own values", "[core][constants]") {
    const auto a = x * 2.0;
    const auto b = x * 3.0;
    static_assert(std::is_same_v<decltype(a), decltype(b)>);
    const auto f = a + b;
    CHECK(f(1.0) == 5.0);
    CHECK(nabla::grad(f, 1.0)[0] == 5.0);
    CHECK(nabla::d(f, x)(1.0) == 5.0);
    CHECK(nabla::to_string(f) == "x0*2 + x0*3");
    const auto g = sin(x * 2.0) + sin(x * 3.0);
    CHECK(g(0.5) == Approx(std::sin(1.0) + std::sin(1.5)));
    CHECK(nabla::d(g, x)(0.5) == Approx(2 * std::cos(1.0) + 3 * std::cos(1.5)));
    CHECK(nabla::d(g, x, x)(0.5) == Approx(-4 * std::sin(1.0) - 9 * std::sin(1.5)));
}

TEST_CASE("arguments for unused placeholders are ignored", "[core][call]") {
    const auto f = sin(x);
    CHECK(f(1.0, 2.0, 3.0) == std::sin(1.0));
    const auto only_z = z * z;
    CHECK(only_z(100.0, -7.0, 3.0) == 9.0);
    const auto zero = nabla::d(x * y, z);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(zero)>, nabla::literal<0>>);
    CHECK(zero(2.0, 5.0, 1.0) == 0.0);
    CHECK(nabla::grad(f, 1.0, 2.0, 3.0) == std::array{std::cos(1.0), 0.0, 0.0});
}

TEST_CASE("arguments promote as the usual arithmetic would", "[core][call]") {
    const auto f = log(x) + x * y - sin(y);
    static_assert(std::is_same_v<decltype(f(2.0f, 5.0f)), float>);
    static_assert(std::is_same_v<decltype(f(2.0f, 5.0)), double>);
    static_assert(std::is_same_v<decltype(f(2, 5)), double>);
    static_assert(std::is_same_v<decltype(f(2.0L, 5.0)), long double>);
    static_assert(std::is_same_v<decltype((x * 2.0)(1.0f)), double>);
    static_assert(std::is_same_v<decltype((x * 2)(1.0f)), float>);
    CHECK(f(2.0f, 5.0f) == Approx(11.652071455).epsilon(1e-6));
    CHECK(f(2, 5) == f(2.0, 5.0));
    CHECK(nabla::grad(f, 2.0f, 5.0f)[0] == 5.5f);
}

TEST_CASE("a shared subexpression is evaluated once", "[core][dag]") {
    counted_exp_rule::evaluations = 0;
    const auto u = counted_exp(x * y);
    const auto f = u + u * u + sin(u);
    const double expected = std::exp(6.0) + std::exp(12.0) + std::sin(std::exp(6.0));
    CHECK(f(2.0, 3.0) == Approx(expected));
    CHECK(counted_exp_rule::evaluations == 1);
    counted_exp_rule::evaluations = 0;
    const auto [value, gradient] = nabla::value_and_grad(f, 2.0, 3.0);
    CHECK(counted_exp_rule::evaluations == 1);
    CHECK(value == Approx(expected));
    const double du = std::exp(6.0) * (1 + 2 * std::exp(6.0) + std::cos(std::exp(6.0)));
    CHECK(gradient[0] == Approx(3.0 * du));
    CHECK(gradient[1] == Approx(2.0 * du));
    // The schedule holds each distinct node once: x, y, x*y, exp, exp*exp, +, sin, +.
    using schedule = nabla::detail::schedule<std::remove_cvref_t<decltype(f)>>;
    CHECK(schedule::size == 8);
}

TEST_CASE("exact constants", "[core][constants]") {
    const auto two = nabla::literal<2>{};
    const auto f = two * x * x;
    static_assert(std::is_empty_v<decltype(f)>, "no run-time constant: nothing is stored");
    CHECK(f(3.0) == 18.0);
    CHECK(nabla::to_string(nabla::d(f, x)) == "4*x0");  // x0*2 + 2*x0, simplified exactly
    CHECK((nabla::pi * x)(1.0) == Approx(3.141592653589793));
    CHECK(nabla::literal<2>{} * 3.0 == 6.0);  // with a plain number: plain arithmetic
}
