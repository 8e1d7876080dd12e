#pragma once
// Building expressions: joining the operands' graphs under a new node and their run-time
// constants into one array, with the exact simplifications that keep derivatives small.
//
// Simplification works on graph types alone: structural zeros and ones fold away (0 + e = e,
// 1 * e = e, 0 * e = 0), and operations on exact integers fold to exact integers. A structural
// zero is exact by construction (the derivative of something that does not depend on the
// variable), so 0 * e folds to 0 even where e would be infinite: symbolic zeros are strong, like
// the zeros of a sparse Jacobian.

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../rules.hpp"
#include "held.hpp"
#include "leaves.hpp"
#include "node.hpp"
#include "traits.hpp"

namespace nabla::detail {

template <class G>
inline constexpr bool is_zero = std::is_same_v<G, literal<0>>;
template <class G>
inline constexpr bool is_one = std::is_same_v<G, literal<1>>;
template <class G>
inline constexpr bool is_minus_one = std::is_same_v<G, literal<-1>>;

template <class Rule, class... Ops>
constexpr auto make_node(Ops...) {
    return node<Rule, Ops...>{};
}

template <class A>
constexpr auto negate(A a) {
    if constexpr (is_literal_v<A>)
        return literal<-A::value>{};
    else if constexpr (is_node_v<A>) {
        if constexpr (std::is_same_v<typename A::rule, rules::neg_rule>) {
            return []<class X>(node<rules::neg_rule, X>) { return X{}; }(a);
        } else {
            return make_node<rules::neg_rule>(a);
        }
    } else {
        return make_node<rules::neg_rule>(a);
    }
}

template <class G>
inline constexpr bool is_negation = false;
template <class X>
inline constexpr bool is_negation<node<rules::neg_rule, X>> = true;

template <class X>
constexpr X negated_operand(node<rules::neg_rule, X>) {
    return X{};
}

template <class A, class B>
constexpr auto subtract(A a, B b);

// Whether two graphs compute the same number bit for bit, up to the order of the operands of
// sums and products (a + b == b + a and a b == b a exactly in floating point): like terms.
template <class A, class B>
constexpr bool same_up_to_order() {
    if constexpr (std::is_same_v<A, B>) {
        return true;
    } else if constexpr (is_node_v<A> && is_node_v<B>) {
        return []<class R, class... X, class S, class... Y>(node<R, X...>, node<S, Y...>) {
            if constexpr (!std::is_same_v<R, S> || sizeof...(X) != sizeof...(Y)) {
                return false;
            } else if constexpr ((same_up_to_order<X, Y>() && ...)) {
                return true;
            } else if constexpr (sizeof...(X) == 2 && (std::is_same_v<R, rules::add_rule> ||
                                                       std::is_same_v<R, rules::mul_rule>)) {
                using x = std::tuple<X...>;
                using y = std::tuple<Y...>;
                return same_up_to_order<std::tuple_element_t<0, x>, std::tuple_element_t<1, y>>() &&
                       same_up_to_order<std::tuple_element_t<1, x>, std::tuple_element_t<0, y>>();
            } else {
                return false;
            }
        }(A{}, B{});
    } else {
        return false;
    }
}

template <class A, class B>
constexpr auto multiply(A a, B b);

template <class A, class B>
constexpr auto add(A a, B b) {
    if constexpr (is_zero<A>)
        return b;
    else if constexpr (is_zero<B>)
        return a;
    else if constexpr (is_literal_v<A> && is_literal_v<B>)
        return literal<A::value + B::value>{};
    else if constexpr (same_up_to_order<A, B>())
        return multiply(literal<2>{}, a);  // exact: a + a = 2a, also for c x + x c
    else if constexpr (is_negation<B>)
        return subtract(a, negated_operand(b));
    else if constexpr (is_negation<A>)
        return subtract(b, negated_operand(a));
    else
        return make_node<rules::add_rule>(a, b);
}

template <class A, class B>
constexpr auto subtract(A a, B b) {
    if constexpr (is_zero<B>)
        return a;
    else if constexpr (is_zero<A>)
        return negate(b);
    else if constexpr (is_literal_v<A> && is_literal_v<B>)
        return literal<A::value - B::value>{};
    else if constexpr (is_negation<B>)
        return add(a, negated_operand(b));
    else
        return make_node<rules::sub_rule>(a, b);
}

template <class G>
inline constexpr bool is_literal_multiple = false;
template <long long N, class X>
inline constexpr bool is_literal_multiple<node<rules::mul_rule, literal<N>, X>> = true;

// Signs move out of products and exact factors to the front, all exact in floating point:
// (-a) b = -(a b), 2 (3 x) = 6 x, x 2 = 2 x.
template <class A, class B>
constexpr auto multiply(A a, B b) {
    if constexpr (is_zero<A> || is_zero<B>)
        return literal<0>{};
    else if constexpr (is_one<A>)
        return b;
    else if constexpr (is_one<B>)
        return a;
    else if constexpr (is_minus_one<A>)
        return negate(b);
    else if constexpr (is_minus_one<B>)
        return negate(a);
    else if constexpr (is_literal_v<A> && is_literal_v<B>)
        return literal<A::value * B::value>{};
    else if constexpr (is_negation<A>)
        return negate(multiply(negated_operand(a), b));
    else if constexpr (is_negation<B>)
        return negate(multiply(a, negated_operand(b)));
    else if constexpr (is_literal_v<B>)
        return multiply(b, a);
    else if constexpr (is_literal_v<A> && is_literal_multiple<B>) {
        return []<long long N, class X>(node<rules::mul_rule, literal<N>, X>) {
            return multiply(literal<A::value * N>{}, X{});
        }(b);
    } else
        return make_node<rules::mul_rule>(a, b);
}

template <class A, class B>
constexpr auto divide(A a, B b) {
    if constexpr (is_one<B>)
        return a;
    else if constexpr (is_minus_one<B>)
        return negate(a);
    else if constexpr (is_zero<A>)
        return literal<0>{};
    else
        return make_node<rules::div_rule>(a, b);
}

template <class A, class B>
constexpr auto multiply_strong_zero(A a, B b) {
    if constexpr (is_zero<A> || is_zero<B>)
        return literal<0>{};
    else if constexpr (is_literal_v<A>)
        return multiply(a, b);
    else
        return make_node<rules::mul_strong_zero_rule>(a, b);
}

template <class A, class B>
constexpr auto divide_strong_zero(A a, B b) {
    if constexpr (is_zero<A>)
        return literal<0>{};
    else if constexpr (is_literal_v<A>)
        return divide(a, b);
    else
        return make_node<rules::div_strong_zero_rule>(a, b);
}

// The node of a function of two operands from the function list (rules/functions.hpp): the
// strong-zero products and quotients fold structural zeros as above.
template <class Rule, class A, class B>
constexpr auto make_binary_node(A a, B b) {
    if constexpr (std::is_same_v<Rule, rules::mul_strong_zero_rule>)
        return multiply_strong_zero(a, b);
    else if constexpr (std::is_same_v<Rule, rules::div_strong_zero_rule>)
        return divide_strong_zero(a, b);
    else
        return make_node<Rule>(a, b);
}

// Integer exponents (ints, literals, sums and products of them) get their own rule, defined for
// negative bases.
template <class A, class B>
constexpr auto power(A a, B b) {
    if constexpr (is_zero<B>)
        return literal<1>{};
    else if constexpr (is_one<B>)
        return a;
    else if constexpr (info<B>::integer_valued)
        return make_node<rules::powi_rule>(a, b);
    else
        return make_node<rules::pow_rule>(a, b);
}

// Renumbers the run-time constants of a graph by Offset, when it joins another graph's constants.
template <class G, std::size_t Offset, bool Shifts = (Offset != 0 && info<G>::has_constants)>
struct shift {
    using type = G;
};
template <std::size_t K, bool Integral, std::size_t Offset>
struct shift<pooled_constant<K, Integral>, Offset, true> {
    using type = pooled_constant<K + Offset, Integral>;
};
template <class Rule, class... Ops, std::size_t Offset>
struct shift<node<Rule, Ops...>, Offset, true> {
    using type = node<Rule, typename shift<Ops, Offset>::type...>;
};
template <class G, std::size_t Offset>
using shift_t = typename shift<G, Offset>::type;

// A plain number becomes a one-constant expression; an expression stays as it is.
template <Operand T>
constexpr auto wrap(const T& x) {
    if constexpr (Expression<T>) {
        return x;
    } else {
        using number = std::remove_cvref_t<T>;
        return held<pooled_constant<0, std::is_integral_v<number>>, number, 1>{{}, {x}};
    }
}

template <class A, class B>
struct common_of_two {
    using type = std::common_type_t<A, B>;
};
template <class A>
struct common_of_two<A, void> {
    using type = A;
};
template <class B>
struct common_of_two<void, B> {
    using type = B;
};
template <>
struct common_of_two<void, void> {
    using type = void;
};

// The common type of the run-time constants of several expressions (void for none).
template <class... Ts>
struct common_constant {
    using type = void;
};
template <class T, class... Ts>
struct common_constant<T, Ts...> {
    using type = typename common_of_two<T, typename common_constant<Ts...>::type>::type;
};

template <std::size_t... Counts>
constexpr auto exclusive_offsets() {
    constexpr std::array<std::size_t, sizeof...(Counts)> counts{Counts...};
    std::array<std::size_t, sizeof...(Counts)> offsets{};
    std::size_t running = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        offsets[i] = running;
        running += counts[i];
    }
    return offsets;
}

template <class... Es>
inline constexpr auto constant_offsets = exclusive_offsets<constant_count<Es>...>();

// Applies a graph builder to the operands' graphs, renumbered so that their run-time constants
// follow each other, and carries the joined constants along if the result still reads any.
template <class Builder, class... Es>
constexpr auto combine(Builder, const Es&... es) {
    constexpr std::size_t total = (constant_count<Es> + ... + 0);
    using graph = decltype([]<std::size_t... I>(std::index_sequence<I...>) {
        return Builder{}(shift_t<graph_t<Es>, constant_offsets<Es...>[I]> {}...);
    }(std::index_sequence_for<Es...>{}));
    if constexpr (total == 0 || !info<graph>::has_constants) {
        // Inside nabla::d the operands are bare graphs whose constants live in the expression
        // being differentiated; they stay bare.
        return graph{};
    } else {
        using T = typename common_constant<constant_type_t<Es>...>::type;
        held<graph, T, total> result{};
        std::size_t k = 0;
        const auto append = [&]<class E>(const E& e) {
            if constexpr (is_held_v<E>) {
                for (const auto& c : e.constants)
                    result.constants[k++] = static_cast<T>(c);
            }
        };
        (append(es), ...);
        return result;
    }
}

}  // namespace nabla::detail
