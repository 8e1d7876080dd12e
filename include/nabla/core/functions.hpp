#pragma once
// The functions of the rule table applied to expressions: sin(x) builds a node. They are found by
// argument-dependent lookup, so `sin(x)` and `using std::sin; sin(x)` both work on expressions.
// Called with plain numbers they compute the number; called with anything else they say so.

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../rules/functions.hpp"
#include "build.hpp"
#include "held.hpp"

namespace nabla {

#define NABLA_UNSUPPORTED_ARGUMENT(function)                                                       \
    static_assert(detail::always_false<Args...>,                                                   \
                  "nabla::" #function ": every argument must be a nabla expression (placeholder, " \
                  "constant or expression) or a plain number; this type is neither.")

#define NABLA_UNARY_FUNCTION(function, rule)                                                       \
    template <Expression X>                                                                        \
    constexpr auto function(const X& x) {                                                          \
        return detail::combine([](auto g) { return detail::make_node<rules::rule>(g); }, x);       \
    }                                                                                              \
    template <Number X>                                                                            \
    constexpr auto function(const X& x) {                                                          \
        return rules::rule::value(x);                                                              \
    }                                                                                              \
    template <class... Args>                                                                       \
    requires(sizeof...(Args) == 1 && !(Operand<Args> && ...)) constexpr void function(             \
        const Args&...) {                                                                          \
        NABLA_UNSUPPORTED_ARGUMENT(function);                                                      \
    }

#define NABLA_BINARY_FUNCTION(function, build)                                                     \
    template <Operand A, Operand B>                                                                \
    requires(Expression<A> || Expression<B>) constexpr auto function(const A& a, const B& b) {     \
        return detail::combine([](auto p, auto q) { return build(p, q); }, detail::wrap(a),        \
                               detail::wrap(b));                                                   \
    }                                                                                              \
    template <class... Args>                                                                       \
    requires(sizeof...(Args) == 2 && !(Operand<Args> && ...)) constexpr void function(             \
        const Args&...) {                                                                          \
        NABLA_UNSUPPORTED_ARGUMENT(function);                                                      \
    }

#define NABLA_BINARY_RULE(function, rule)                                                          \
    NABLA_BINARY_FUNCTION(function, detail::make_binary_node<rules::rule>)                         \
    template <Number A, Number B>                                                                  \
    constexpr auto function(const A& a, const B& b) {                                              \
        return rules::rule::value(a, b);                                                           \
    }

NABLA_UNARY_FUNCTIONS(NABLA_UNARY_FUNCTION)
NABLA_BINARY_FUNCTIONS(NABLA_BINARY_RULE)

// pow(x, y) with a real exponent, pow(x, n) with an integer one (int or nabla::literal<N>):
// integer exponents get their own rule, valid for negative x.
NABLA_BINARY_FUNCTION(pow, detail::power)

template <Operand A, Operand B, Operand C>
requires(Expression<A> || Expression<B> ||
         Expression<C>) constexpr auto fma(const A& a, const B& b, const C& c) {
    return detail::combine(
        [](auto p, auto q, auto r) { return detail::make_node<rules::fma_rule>(p, q, r); },
        detail::wrap(a), detail::wrap(b), detail::wrap(c));
}

template <class... Args>
requires(sizeof...(Args) == 3 && !(Operand<Args> && ...)) constexpr void fma(const Args&...) {
    NABLA_UNSUPPORTED_ARGUMENT(fma);
}

// hypot(a, b, c): three operands, as fma.
template <Operand A, Operand B, Operand C>
requires(Expression<A> || Expression<B> ||
         Expression<C>) constexpr auto hypot(const A& a, const B& b, const C& c) {
    return detail::combine(
        [](auto p, auto q, auto r) { return detail::make_node<rules::hypot3_rule>(p, q, r); },
        detail::wrap(a), detail::wrap(b), detail::wrap(c));
}

template <class... Args>
requires(sizeof...(Args) == 3 && !(Operand<Args> && ...)) constexpr void hypot(const Args&...) {
    NABLA_UNSUPPORTED_ARGUMENT(hypot);
}

// ellint_3(k, nu, phi): three operands, as fma.
template <Operand A, Operand B, Operand C>
requires(Expression<A> || Expression<B> ||
         Expression<C>) constexpr auto ellint_3(const A& k, const B& nu, const C& phi) {
    return detail::combine(
        [](auto p, auto q, auto r) { return detail::make_node<rules::ellint_3_rule>(p, q, r); },
        detail::wrap(k), detail::wrap(nu), detail::wrap(phi));
}

template <class A, class B, class C>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>&&
             std::is_arithmetic_v<C>) constexpr auto ellint_3(const A& k,
                                                              const B& nu,
                                                              const C& phi) {
    return rules::ellint_3_rule::value(k, nu, phi);
}

template <class... Args>
requires(sizeof...(Args) == 3 && !(Operand<Args> && ...)) constexpr void ellint_3(const Args&...) {
    NABLA_UNSUPPORTED_ARGUMENT(ellint_3);
}

// The rules that no function names (rules/partial_of.hpp): a node, found through the tag.
namespace rules {
template <class Rule, Operand... X>
requires((Expression<X> || ...)) constexpr auto apply_rule(rule_tag<Rule>, const X&... x) {
    return nabla::detail::combine([](auto... g) { return nabla::detail::make_node<Rule>(g...); },
                                  nabla::detail::wrap(x)...);
}
}  // namespace rules

// f(n, x) of an integer constant index n (polygamma's order, hermite's degree, ...).
#define NABLA_INDEXED_FUNCTION(function, rule)                                                     \
    template <Operand N, Operand X>                                                                \
    constexpr auto function(const N& n, const X& x) {                                              \
        using index = detail::graph_t<std::remove_cvref_t<decltype(detail::wrap(n))>>;             \
        static_assert(rules::real_order<rules::rule> ||                                            \
                          (!detail::depends_on_any<index> && detail::info<index>::integer_valued), \
                      "nabla::" #function "(n, x): the index n must be a constant integer (an "    \
                      "int or nabla::literal<N>), not a floating-point number or an expression "   \
                      "of the variables.");                                                        \
        static_assert(!rules::real_order<rules::rule> || !detail::depends_on_any<index>,           \
                      "nabla::" #function "(v, x): the order v must be a constant (a number), "    \
                      "not an expression of the variables: nabla has no closed form for the "      \
                      "derivative in the order.");                                                 \
        if constexpr (Number<N> && Number<X>) {                                                    \
            return rules::rule::value(n, x);                                                       \
        } else {                                                                                   \
            return detail::combine(                                                                \
                [](auto p, auto q) { return detail::make_node<rules::rule>(p, q); },               \
                detail::wrap(n), detail::wrap(x));                                                 \
        }                                                                                          \
    }
NABLA_INDEXED_FUNCTIONS(NABLA_INDEXED_FUNCTION)

// f(n, a, x) of a constant integer degree n and a constant real parameter a (gegenbauer,
// assoc_laguerre).
#define NABLA_PARAMETRIC_FUNCTION(function, rule)                                                  \
    template <Operand N, Operand A, Operand X>                                                     \
    constexpr auto function(const N& n, const A& a, const X& x) {                                  \
        using degree = detail::graph_t<std::remove_cvref_t<decltype(detail::wrap(n))>>;            \
        using parameter = detail::graph_t<std::remove_cvref_t<decltype(detail::wrap(a))>>;         \
        static_assert(!detail::depends_on_any<degree> && detail::info<degree>::integer_valued,     \
                      "nabla::" #function "(n, a, x): the degree n must be a constant integer "    \
                      "(an int or nabla::literal<N>), not a floating-point number or an "          \
                      "expression of the variables.");                                             \
        static_assert(!detail::depends_on_any<parameter>,                                          \
                      "nabla::" #function "(n, a, x): the parameter a must be a constant (a "      \
                      "number), not an expression of the variables: nabla differentiates in x "    \
                      "only.");                                                                    \
        if constexpr (Number<N> && Number<A> && Number<X>) {                                       \
            return rules::rule::value(n, a, x);                                                    \
        } else {                                                                                   \
            return detail::combine(                                                                \
                [](auto p, auto q, auto r) { return detail::make_node<rules::rule>(p, q, r); },    \
                detail::wrap(n), detail::wrap(a), detail::wrap(x));                                \
        }                                                                                          \
    }
NABLA_PARAMETRIC_FUNCTIONS(NABLA_PARAMETRIC_FUNCTION)

// ldexp(x, n) = x 2^n for a constant integer n (an int or nabla::literal<N>).
template <Operand X, Operand N>
constexpr auto ldexp(const X& x, const N& n) {
    using exponent = detail::graph_t<std::remove_cvref_t<decltype(detail::wrap(n))>>;
    static_assert(!detail::depends_on_any<exponent> && detail::info<exponent>::integer_valued,
                  "nabla::ldexp(x, n): the exponent n must be a constant integer (an int or "
                  "nabla::literal<N>), not a floating-point number or an expression of the "
                  "variables.");
    if constexpr (Number<X> && Number<N>) {
        return rules::ldexp_rule::value(x, n);
    } else {
        return detail::combine(
            [](auto p, auto q) { return detail::make_node<rules::ldexp_rule>(p, q); },
            detail::wrap(x), detail::wrap(n));
    }
}

// frexp(x, e) needs x's value to write its exponent: a static expression has none until it is
// evaluated.
template <Expression X, class E>
constexpr auto frexp(const X&, E*) {
    static_assert(detail::always_false<X>,
                  "nabla::frexp(x, e) on a static expression: the exponent e depends on the value "
                  "of x, which a static expression has only when it is evaluated; call frexp in "
                  "a function that nabla differentiates with numbers (grad, derivatives, a dual "
                  "or the tape), or use ldexp with an exponent you know.");
}

template <Operand X>
constexpr auto digamma(const X& x) {
    if constexpr (Number<X>)
        return rules::digamma(x);
    else
        return polygamma(literal<0>{}, x);
}

// The Legendre and Laguerre families in every mode, as compositions of the Gegenbauer and
// associated Laguerre polynomials, whose derivatives stay in their families (no 0/0 at x = +-1):
//   legendre(l, x) = P_l(x) = C_l^(1/2)(x),   laguerre(n, x) = L_n(x) = L_n^(0)(x),
//   assoc_legendre(l, m, x) = (1 - x^2)^(m/2) d^m P_l / dx^m
//                           = (1 - x^2)^(m/2) (2m - 1)!! C_(l-m)^(m+1/2)(x)   (no Condon-Shortley
//   phase, as std::assoc_legendre), and
//   sph_legendre(l, m, theta) = (-1)^m sqrt((2l + 1) / (4 pi) (l - m)! / (l + m)!) P_l^m(cos theta)
//   with sin(theta)^m for (1 - cos^2 theta)^(m/2), analytic through the poles.
// Degrees and orders are constant integers (an int or nabla::literal<N>); a negative order m is
// a std::domain_error; an order above the degree is 0 with derivative 0 everywhere.
namespace detail {
template <class N>
concept DegreeArgument = std::is_integral_v<N> || is_literal_v<N>;
template <class N>
constexpr int degree_of(const N& n) {
    if constexpr (is_literal_v<N>)
        return static_cast<int>(N::value);
    else
        return static_cast<int>(n);
}
constexpr int legendre_order(int m, const char* function) {
    if (m < 0)
        throw std::domain_error(std::string("nabla::") + function +
                                "(l, m, x): the order m must not be negative");
    return m;
}
// Whether the polynomial families take x (a number or an operand of some mode).
template <class X>
concept PolynomialArgument = requires(const X& x) {
    gegenbauer(0, 0.5, x);
};
}  // namespace detail

template <detail::DegreeArgument N, detail::PolynomialArgument X>
constexpr auto legendre(const N& l, const X& x) {
    return gegenbauer(detail::degree_of(l), 0.5, x);
}
template <detail::DegreeArgument N, detail::PolynomialArgument X>
constexpr auto laguerre(const N& n, const X& x) {
    return assoc_laguerre(detail::degree_of(n), 0.0, x);
}
template <detail::DegreeArgument L, detail::DegreeArgument M, detail::PolynomialArgument X>
constexpr auto assoc_legendre(const L& l, const M& m, const X& x) {
    using std::pow;
    const int degree = detail::degree_of(l);
    const int order = detail::legendre_order(detail::degree_of(m), "assoc_legendre");
    // (2m - 1)!! overflows a double beyond m = 150. An order above the degree is 0 with no power
    // (whose derivative at +-1 would meet the zero as inf * 0).
    double double_factorial = order <= degree ? 1.0 : 0.0;
    for (int j = 1; j <= order && order <= degree; ++j)
        double_factorial *= 2 * j - 1;
    const double exponent = order <= degree ? 0.5 * order : 0.0;
    // (1 - x^2)^(m/2) as (1 - x)^(m/2) (1 + x)^(m/2): 1 - x * x loses the digits of 1 - x near
    // +-1, and a product (1 - x)(1 + x) under one power makes the tape's adjoint inf * 0 there.
    return double_factorial * gegenbauer(degree - order, order + 0.5, x) *
           (pow(1 - x, exponent) * pow(1 + x, exponent));
}
template <detail::DegreeArgument L, detail::DegreeArgument M, detail::PolynomialArgument X>
constexpr auto sph_legendre(const L& l, const M& m, const X& theta) {
    using std::cos;
    using std::pow;
    using std::sin;
    const int degree = detail::degree_of(l);
    const int order = detail::legendre_order(detail::degree_of(m), "sph_legendre");
    // The normalisation times (2m - 1)!!: sqrt((2l + 1) / (4 pi)) times factors
    // (2j - 1) / sqrt((l - m + 2j - 1)(l - m + 2j)) of at most about 1. Their product underflows
    // only where the polynomial overflows (degrees beyond about 1000): NaN there, not 0.
    double factor = 0.0;
    if (order <= degree) {
        factor =
            (order % 2 == 0 ? 1.0 : -1.0) * std::sqrt((2 * degree + 1) / (4 * std::numbers::pi));
        for (int j = 1; j <= order; ++j)
            factor *= (2 * j - 1) /
                      std::sqrt(double(degree - order + 2 * j - 1) * (degree - order + 2 * j));
        if (factor == 0.0)
            factor = std::numeric_limits<double>::quiet_NaN();
    }
    return factor * pow(sin(theta), order) * gegenbauer(degree - order, order + 0.5, cos(theta));
}

// A degree or an order that is not a constant integer.
template <class N, class X>
requires(!detail::DegreeArgument<N>) constexpr auto legendre(const N&, const X&) {
    static_assert(detail::always_false<N>, "nabla::legendre(l, x): the degree l must be a "
                                           "constant integer (an int or nabla::literal<N>).");
}
template <class N, class X>
requires(!detail::DegreeArgument<N>) constexpr auto laguerre(const N&, const X&) {
    static_assert(detail::always_false<N>, "nabla::laguerre(n, x): the degree n must be a "
                                           "constant integer (an int or nabla::literal<N>).");
}
template <class L, class M, class X>
requires(!detail::DegreeArgument<L> ||
         !detail::DegreeArgument<M>) constexpr auto assoc_legendre(const L&, const M&, const X&) {
    static_assert(detail::always_false<L>,
                  "nabla::assoc_legendre(l, m, x): the degree l and the order m must be constant "
                  "integers (an int or nabla::literal<N>).");
}
template <class L, class M, class X>
requires(!detail::DegreeArgument<L> ||
         !detail::DegreeArgument<M>) constexpr auto sph_legendre(const L&, const M&, const X&) {
    static_assert(detail::always_false<L>,
                  "nabla::sph_legendre(l, m, theta): the degree l and the order m must be "
                  "constant integers (an int or nabla::literal<N>).");
}

#undef NABLA_UNARY_FUNCTION
#undef NABLA_BINARY_FUNCTION
#undef NABLA_BINARY_RULE
#undef NABLA_INDEXED_FUNCTION
#undef NABLA_PARAMETRIC_FUNCTION
#undef NABLA_UNSUPPORTED_ARGUMENT

}  // namespace nabla
