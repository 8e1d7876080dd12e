#pragma once
// The arithmetic operators on expressions, and readable errors for the operators a static graph
// cannot have (comparisons and %, which need values the graph does not have until it is called).

#include "build.hpp"

namespace nabla {

// Operands that build a graph node: at least one is an expression, and the pair is not an exact
// constant meeting a plain number (that pair is plain arithmetic, see nabla/literal.hpp).
template <class A, class B>
concept GraphOperands = Operand<A> && Operand<B> &&
    (Expression<A> ||
     Expression<B>)&&!(CompileTimeConstant<std::remove_cvref_t<A>> &&
                       Number<B>)&&!(Number<A> && CompileTimeConstant<std::remove_cvref_t<B>>);

template <class A, class B>
requires GraphOperands<A, B>
constexpr auto operator+(const A& a, const B& b) {
    return detail::combine([](auto p, auto q) { return detail::add(p, q); }, detail::wrap(a),
                           detail::wrap(b));
}

template <class A, class B>
requires GraphOperands<A, B>
constexpr auto operator-(const A& a, const B& b) {
    return detail::combine([](auto p, auto q) { return detail::subtract(p, q); }, detail::wrap(a),
                           detail::wrap(b));
}

template <class A, class B>
requires GraphOperands<A, B>
constexpr auto operator*(const A& a, const B& b) {
    return detail::combine([](auto p, auto q) { return detail::multiply(p, q); }, detail::wrap(a),
                           detail::wrap(b));
}

template <class A, class B>
requires GraphOperands<A, B>
constexpr auto operator/(const A& a, const B& b) {
    return detail::combine([](auto p, auto q) { return detail::divide(p, q); }, detail::wrap(a),
                           detail::wrap(b));
}

template <Expression A>
constexpr auto operator-(const A& a) {
    return detail::combine([](auto p) { return detail::negate(p); }, a);
}

template <Expression A>
constexpr A operator+(const A& a) {
    return a;
}

namespace detail {
template <class A, class B>
concept ComparedExpressions = (Expression<A> || Expression<B>);

}  // namespace detail

#define NABLA_FORBIDDEN_COMPARISON(op)                                                             \
    template <class A, class B>                                                                    \
    requires detail::ComparedExpressions<A, B>                                                     \
    constexpr bool operator op(const A&, const B&) {                                               \
        static_assert(detail::always_false<A, B>,                                                  \
                      "nabla: static expressions cannot be compared: they have no value until "    \
                      "they are called. Compare the numbers instead (f(2.0, 5.0) < 1.0); code "    \
                      "that branches on values needs a run-time graph, not a static one.");        \
        return false;                                                                              \
    }

NABLA_FORBIDDEN_COMPARISON(<)
NABLA_FORBIDDEN_COMPARISON(>)
NABLA_FORBIDDEN_COMPARISON(<=)
NABLA_FORBIDDEN_COMPARISON(>=)
NABLA_FORBIDDEN_COMPARISON(==)
NABLA_FORBIDDEN_COMPARISON(!=)
#undef NABLA_FORBIDDEN_COMPARISON

template <class A, class B>
requires detail::ComparedExpressions<A, B>
constexpr auto operator%(const A&, const B&) {
    static_assert(detail::always_false<A, B>,
                  "nabla: operator% is not supported on expressions: it is an integer operation "
                  "with no derivative. Use floor/trunc to build a remainder if you need one.");
}

}  // namespace nabla
