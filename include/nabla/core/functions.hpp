#pragma once
// The functions of the rule table applied to expressions: sin(x) builds a node. They are found by
// argument-dependent lookup, so `sin(x)` and `using std::sin; sin(x)` both work on expressions.
// Called with plain numbers they compute the number; called with anything else they say so.

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

#undef NABLA_UNARY_FUNCTION
#undef NABLA_BINARY_FUNCTION
#undef NABLA_BINARY_RULE
#undef NABLA_INDEXED_FUNCTION
#undef NABLA_UNSUPPORTED_ARGUMENT

}  // namespace nabla
