#pragma once
// Building nodes, with the exact simplifications that keep derivatives small: structural zeros
// and ones fold away (0 + e = e, 1 * e = e, 0 * e = 0), operations on exact integers fold to exact
// integers, and operations whose operands are all constants fold to one constant.
//
// A structural zero is exact by construction (the derivative of something that does not depend on
// the variable), so 0 * e folds to 0 even where e would be infinite: nabla's symbolic zeros are
// strong, like the zeros of a sparse Jacobian.

#include <type_traits>

#include "../rules.hpp"
#include "leaves.hpp"
#include "node.hpp"
#include "traits.hpp"

namespace nabla::detail {

template <class E>
inline constexpr bool is_zero = std::is_same_v<E, literal<0>>;
template <class E>
inline constexpr bool is_one = std::is_same_v<E, literal<1>>;
template <class E>
inline constexpr bool is_minus_one = std::is_same_v<E, literal<-1>>;

// A plain number becomes a constant leaf; an expression stays as it is.
template <Operand T>
constexpr auto wrap(const T& x) {
    if constexpr (Expression<T>) return x;
    else return constant<std::remove_cvref_t<T>>(x);
}

template <class E>
constexpr auto constant_value(const E& e) {
    if constexpr (is_constant_v<E>) return e.value;
    else return E::value;
}

template <class... Ops>
inline constexpr bool foldable =
    ((is_constant_v<Ops> || CompileTimeConstant<Ops>) && ...) && (is_constant_v<Ops> || ...);

template <class... Ops>
using folding_type = std::conditional_t<
    (is_math_constant_v<Ops> || ...),
    std::common_type_t<double, typename common_constant_of<typename info<Ops>::constant_type...>::type>,
    typename common_constant_of<typename info<Ops>::constant_type...>::type>;

template <class Rule, Expression... Ops>
constexpr auto make_node(const Ops&... ops) {
    if constexpr (foldable<Ops...>) {
        using T = folding_type<Ops...>;
        const auto v = Rule::value(static_cast<T>(constant_value(ops))...);
        return constant<std::remove_cv_t<decltype(v)>>(v);
    } else {
        return node<Rule, Ops...>(ops...);
    }
}

template <Expression A>
constexpr auto negate(const A& a) {
    if constexpr (is_literal_v<A>) return literal<-A::value>{};
    else if constexpr (is_node_v<A>) {
        if constexpr (std::is_same_v<typename A::rule, rules::neg_rule>) return std::get<0>(a.operands);
        else return make_node<rules::neg_rule>(a);
    } else {
        return make_node<rules::neg_rule>(a);
    }
}

template <Expression A, Expression B>
constexpr auto add(const A& a, const B& b) {
    if constexpr (is_zero<A>) return b;
    else if constexpr (is_zero<B>) return a;
    else if constexpr (is_literal_v<A> && is_literal_v<B>) return literal<A::value + B::value>{};
    else return make_node<rules::add_rule>(a, b);
}

template <Expression A, Expression B>
constexpr auto subtract(const A& a, const B& b) {
    if constexpr (is_zero<B>) return a;
    else if constexpr (is_zero<A>) return negate(b);
    else if constexpr (is_literal_v<A> && is_literal_v<B>) return literal<A::value - B::value>{};
    else return make_node<rules::sub_rule>(a, b);
}

template <Expression A, Expression B>
constexpr auto multiply(const A& a, const B& b) {
    if constexpr (is_zero<A> || is_zero<B>) return literal<0>{};
    else if constexpr (is_one<A>) return b;
    else if constexpr (is_one<B>) return a;
    else if constexpr (is_minus_one<A>) return negate(b);
    else if constexpr (is_minus_one<B>) return negate(a);
    else if constexpr (is_literal_v<A> && is_literal_v<B>) return literal<A::value * B::value>{};
    else return make_node<rules::mul_rule>(a, b);
}

template <Expression A, Expression B>
constexpr auto divide(const A& a, const B& b) {
    if constexpr (is_one<B>) return a;
    else if constexpr (is_minus_one<B>) return negate(a);
    else if constexpr (is_zero<A>) return literal<0>{};
    else return make_node<rules::div_rule>(a, b);
}

template <Expression A, Expression B>
constexpr auto multiply_strong_zero(const A& a, const B& b) {
    if constexpr (is_zero<A> || is_zero<B>) return literal<0>{};
    else if constexpr (is_literal_v<A>) return multiply(a, b);
    else return make_node<rules::mul_strong_zero_rule>(a, b);
}

template <Expression A, Expression B>
constexpr auto divide_strong_zero(const A& a, const B& b) {
    if constexpr (is_zero<A>) return literal<0>{};
    else if constexpr (is_literal_v<A>) return divide(a, b);
    else return make_node<rules::div_strong_zero_rule>(a, b);
}

// An exponent that is an integer: an integer number, an exact literal, or a held integer constant.
template <class B>
inline constexpr bool is_integer_exponent = is_literal_v<B>;
template <class T>
inline constexpr bool is_integer_exponent<constant<T>> = std::is_integral_v<T>;

template <Expression A, Expression B>
constexpr auto power(const A& a, const B& b) {
    if constexpr (is_zero<B>) return literal<1>{};
    else if constexpr (is_one<B>) return a;
    else if constexpr (is_integer_exponent<B>) return make_node<rules::powi_rule>(a, b);
    else return make_node<rules::pow_rule>(a, b);
}

}  // namespace nabla::detail
