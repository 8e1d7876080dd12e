#pragma once
// nabla::d(f, x): the symbolic derivative, a transformation from one expression type to another.
//
// The chain rule over the rule table: d(node(ops...), x) = sum_i partial_i(node, ops...) * d(op_i, x),
// where partial_i is the rule's own derivative, built as an expression. Operands that do not depend
// on x contribute nothing and are never visited; structural zeros and ones fold away as the terms
// are built (core/build.hpp), so d(x * y, x) is just y and d(3 * x, y) is the type literal<0>.
// The compiler instantiates the derivative once per distinct subexpression type, so shared
// subexpressions are differentiated once, and pure ones stay shared in the result.

#include <cstddef>
#include <tuple>
#include <utility>

#include "build.hpp"

namespace nabla {

namespace detail {

template <std::size_t I, class E>
constexpr auto derivative(const E& e);

template <class A>
constexpr auto sum(const A& a) {
    return a;
}
template <class A, class B, class... Rest>
constexpr auto sum(const A& a, const B& b, const Rest&... rest) {
    return sum(add(a, b), rest...);
}

template <std::size_t I, std::size_t K, class Rule, class... Ops>
constexpr auto chain_term(const node<Rule, Ops...>& e) {
    using operand = std::tuple_element_t<K, std::tuple<Ops...>>;
    if constexpr (!depends_on<operand, I>) {
        return literal<0>{};
    } else {
        const auto partial = std::apply(
            [&](const auto&... ops) { return Rule::template partial<K>(e, ops...); }, e.operands);
        return multiply(partial, derivative<I>(std::get<K>(e.operands)));
    }
}

template <std::size_t I, class E>
constexpr auto derivative(const E& e) {
    if constexpr (!depends_on<E, I>) {
        return literal<0>{};
    } else if constexpr (is_placeholder_v<E>) {
        return literal<1>{};
    } else {
        return [&]<std::size_t... K>(std::index_sequence<K...>) {
            return sum(chain_term<I, K>(e)...);
        }(std::make_index_sequence<E::rule::arity>{});
    }
}

}  // namespace detail

// The derivative of f with respect to the placeholder x, as an expression; d(f, x, y) is
// d(d(f, x), y), and any order follows by composition.
template <class F, class X, class... More>
constexpr auto d(const F& f, const X& x, const More&... more) {
    static_assert(Expression<F>,
                  "nabla::d(f, x): f must be a nabla expression built from placeholders "
                  "(auto [x, y] = nabla::variables<2>(); auto f = x * y;).");
    static_assert(is_placeholder_v<X>,
                  "nabla::d(f, x): x must be a placeholder from nabla::variables<N>(); "
                  "derivatives are taken with respect to a variable, not an expression or a "
                  "number.");
    if constexpr (!Expression<F> || !is_placeholder_v<X>) {
        return literal<0>{};
    } else if constexpr (sizeof...(More) == 0) {
        (void)x;
        return detail::derivative<X::index>(f);
    } else {
        return d(detail::derivative<X::index>(f), more...);
    }
}

}  // namespace nabla
