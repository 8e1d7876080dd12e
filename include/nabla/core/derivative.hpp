#pragma once
// nabla::d(f, x): the symbolic derivative, a transformation from one expression type to another.
//
// The chain rule over the rule table: d(node(ops...), x) = sum_i partial_i(node, ops...) * d(op_i,
// x), where partial_i is the rule's own derivative, built as a graph. Operands that do not depend
// on x contribute nothing and are never visited; structural zeros and ones fold away as the terms
// are built (core/build.hpp), so d(x * y, x) is just y and d(3 * x, y) is the type literal<0>. d
// works on graph types only (run-time constants stay where they are), and the compiler instantiates
// it once per distinct subexpression type: shared subexpressions are differentiated once and stay
// shared in the result, at every order.

#include <cstddef>
#include <tuple>
#include <utility>

#include "build.hpp"
#include "held.hpp"

namespace nabla {

namespace detail {

template <std::size_t I, class G>
constexpr auto derivative(G g);

template <class A>
constexpr auto sum(A a) {
    return a;
}
template <class A, class B, class... Rest>
constexpr auto sum(A a, B b, Rest... rest) {
    return sum(add(a, b), rest...);
}

// Operand K's term of the chain rule at node g: the rule's partial K times d, the operand's
// derivative (or tangent). A strong-zero product (mul_strong_zero(a, b): 0 when a == 0) stays
// strong in its derivative: a db and da b are 0 when a, or da, is 0, whatever b or db is.
template <std::size_t K, class Rule, class... Ops, class D>
constexpr auto chain_term_with(node<Rule, Ops...> g, D d) {
    if constexpr (requires { Rule::strong_zero; }) {
        if constexpr (K == 0)
            return multiply_strong_zero(d, Rule::template partial<K>(g, Ops{}...));
        else
            return multiply_strong_zero(Rule::template partial<K>(g, Ops{}...), d);
    } else {
        return multiply(Rule::template partial<K>(g, Ops{}...), d);
    }
}

template <std::size_t I, std::size_t K, class Rule, class... Ops>
constexpr auto chain_term(node<Rule, Ops...> g) {
    using operand = std::tuple_element_t<K, std::tuple<Ops...>>;
    if constexpr (!depends_on<operand, I>)
        return literal<0>{};
    else
        return chain_term_with<K>(g, derivative<I>(operand{}));
}

// The derivative of a graph type with respect to placeholder I, as a graph type.
template <std::size_t I, class G>
constexpr auto derivative(G g) {
    if constexpr (!depends_on<G, I>) {
        return literal<0>{};
    } else if constexpr (is_placeholder_v<G>) {
        return literal<1>{};
    } else {
        return [&]<std::size_t... K>(std::index_sequence<K...>) {
            return sum(chain_term<I, K>(g)...);
        }
        (std::make_index_sequence<G::rule::arity>{});
    }
}

// The derivative of an expression: the graph is differentiated, the run-time constants stay.
template <std::size_t I, class E>
constexpr auto differentiate(const E& e) {
    using graph = decltype(derivative<I>(graph_t<E>{}));
    if constexpr (is_held_v<E> && info<graph>::has_constants) {
        return held<graph, constant_type_t<E>, constant_count<E>>{{}, e.constants};
    } else {
        return graph{};
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
        return detail::differentiate<X::index>(f);
    } else {
        return d(detail::differentiate<X::index>(f), more...);
    }
}

}  // namespace nabla
