#pragma once
// The right-hand sides of reverse mode's statements: expression nodes that hold their operands by
// value and compute their value at once, the named intermediates (held by copy or collapsed),
// and the operators and functions that build them, generated from the function list
// (rules/functions.hpp). Nothing is recorded until an expression is assigned to an active
// variable (reverse/active.hpp). They live in namespace nabla so that argument-dependent lookup
// finds the operators and functions for them.

#include <cmath>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../config.hpp"
#include "../core/evaluate.hpp"
#include "../rules.hpp"
#include "../rules/functions.hpp"
#include "detail/operands.hpp"
#include "detail/record.hpp"
#include "detail/storage.hpp"

namespace nabla {

// A collapsed named subexpression: its value and where its partials are in the scratch memory,
// times a scale (an intermediate that is a function of one other, s6 = 1 / (r2 * r2 * r2), shares
// that one's partials, scaled, instead of copying them).
template <class T>
struct collapsed {
    T value;
    detail::tape_index begin;
    detail::tape_index count;
    std::uint32_t generation;
    T scale;
};

// A small named subexpression held by copy: a node that reads at most eight active variables
// and no other named intermediate. A statement merges the uses that are copies of one named
// object, the same in every part.
template <class Node>
struct named {
    Node node;
    // The named node it was copied from (compared, never read); null for a node that holds a
    // constant (below, hold).
    const void* origin;
};

template <class Rule, class T, class... Operands>
struct active_node : detail::node_value<T> {
    // Whether this node, named, is held by copy (a small intermediate) or collapsed.
    static constexpr bool held_by_copy = detail::held_by_copy<Operands...>;
    using rule = Rule;
    static constexpr std::size_t arity = sizeof...(Operands);

    detail::operand_pack<Operands...> operands;
    // The collapsed form, made the first time this node is used as a named operand (nothing for a
    // small one).
    [[no_unique_address]] mutable std::conditional_t<held_by_copy, detail::no_cache, collapsed<T>>
        cache{};

    template <class... Args>
    requires(sizeof...(Args) == sizeof...(Operands)) NABLA_ALWAYS_INLINE
        constexpr explicit active_node(Args&&... args)
        : detail::node_value<T>{detail::to_number<T>(Rule::value(detail::value_of(args)...))},
          operands{std::forward<Args>(args)...} {}
};

// Arithmetic: each operator builds a node; nothing is recorded until a node is assigned.
#define NABLA_ACTIVE_OPERATOR(op, rule)                                                            \
    template <class A, class B>                                                                    \
    requires detail::ActivePair<A, B> NABLA_ALWAYS_INLINE constexpr auto operator op(A&& a,        \
                                                                                     B&& b) {      \
        return detail::make_binary<rules::rule>(std::forward<A>(a), std::forward<B>(b));           \
    }
NABLA_ACTIVE_OPERATOR(+, add_rule)
NABLA_ACTIVE_OPERATOR(-, sub_rule)
NABLA_ACTIVE_OPERATOR(*, mul_rule)
NABLA_ACTIVE_OPERATOR(/, div_rule)
#undef NABLA_ACTIVE_OPERATOR

// Active operands of two value types (active<double> with active<float>) record on two different
// tapes, so they cannot meet in one expression: said at compile time.
template <class A, class B>
concept MixedActiveTypes = detail::ActiveOperand<A> && detail::ActiveOperand<B> &&
    !std::is_same_v<detail::active_value_t<A>, detail::active_value_t<B>>;

#define NABLA_ACTIVE_MIXED(op)                                                                     \
    template <class A, class B>                                                                    \
    requires MixedActiveTypes<A, B>                                                                \
    auto operator op(A&&, B&&) {                                                                   \
        static_assert(detail::always_false<A, B>,                                                  \
                      "nabla: active variables of different value types (active<double> and "      \
                      "active<float>, say) cannot be mixed in one expression: each value type "    \
                      "records on a tape of its own. Use one value type for all the active "       \
                      "variables of a recording.");                                                \
    }
NABLA_ACTIVE_MIXED(+)
NABLA_ACTIVE_MIXED(-)
NABLA_ACTIVE_MIXED(*)
NABLA_ACTIVE_MIXED(/)
#undef NABLA_ACTIVE_MIXED

template <detail::ActiveOperand A>
NABLA_ALWAYS_INLINE constexpr auto operator-(A&& a) {
    return detail::make_unary<rules::neg_rule>(std::forward<A>(a));
}
template <detail::ActiveOperand A>
NABLA_ALWAYS_INLINE constexpr auto operator+(A&& a) {
    return std::remove_cvref_t<A>(std::forward<A>(a));
}

// Comparisons compare values, so code that branches on values (if (x[i] > 0)) works.
template <class A, class B>
requires detail::ActivePair<A, B>
constexpr bool operator==(const A& a, const B& b) {
    return detail::value_of(a) == detail::value_of(b);
}
template <class A, class B>
requires detail::ActivePair<A, B>
constexpr auto operator<=>(const A& a, const B& b) {
    return detail::value_of(a) <=> detail::value_of(b);
}

// The functions of the rule table.
#define NABLA_ACTIVE_UNARY(function, rule)                                                         \
    template <detail::ActiveOperand X>                                                             \
    NABLA_ALWAYS_INLINE constexpr auto function(X&& x) {                                           \
        return detail::make_unary<rules::rule>(std::forward<X>(x));                                \
    }
#define NABLA_ACTIVE_BINARY(function, rule)                                                        \
    template <class A, class B>                                                                    \
    requires detail::ActivePair<A, B> NABLA_ALWAYS_INLINE constexpr auto function(A&& a, B&& b) {  \
        return detail::make_binary<rules::rule>(std::forward<A>(a), std::forward<B>(b));           \
    }

NABLA_UNARY_FUNCTIONS(NABLA_ACTIVE_UNARY)
NABLA_BINARY_FUNCTIONS(NABLA_ACTIVE_BINARY)
#undef NABLA_ACTIVE_UNARY
#undef NABLA_ACTIVE_BINARY

// pow with an integer exponent has its own rule, exact for negative bases.
template <class A, class B>
requires detail::ActivePair<A, B> NABLA_ALWAYS_INLINE constexpr auto pow(A&& a, B&& b) {
    if constexpr (std::is_integral_v<std::remove_cvref_t<B>>)
        return detail::make_binary<rules::powi_rule>(std::forward<A>(a), std::forward<B>(b));
    else
        return detail::make_binary<rules::pow_rule>(std::forward<A>(a), std::forward<B>(b));
}

// f(n, x) of a constant index n: an integer, or a number for a real order. An active index is
// a compile-time error: nabla has no derivative in it.
#define NABLA_ACTIVE_INDEXED(function, rule)                                                       \
    template <class I, detail::ActiveOperand X>                                                    \
    requires rules::index_argument<rules::rule, std::remove_cvref_t<I>>                            \
        NABLA_ALWAYS_INLINE constexpr auto function(I n, X&& x) {                                  \
        return detail::make_binary<rules::rule>(n, std::forward<X>(x));                            \
    }                                                                                              \
    template <detail::ActiveOperand N, class X>                                                    \
    auto function(N&&, X&&) {                                                                      \
        static_assert(rules::real_order<rules::rule> || sizeof(N) == 0,                            \
                      "nabla::" #function "(n, x): the index n must be a constant integer, not "   \
                      "a variable on the tape.");                                                  \
        static_assert(!rules::real_order<rules::rule> || sizeof(N) == 0,                           \
                      "nabla::" #function "(v, x): the order v must be a constant number, not a "  \
                      "variable on the tape: nabla has no closed form for the derivative in the "  \
                      "order.");                                                                   \
    }
NABLA_INDEXED_FUNCTIONS(NABLA_ACTIVE_INDEXED)
#undef NABLA_ACTIVE_INDEXED
// fma(a, b, c) and hypot(a, b, c): every operand active or a constant, at least one active.
namespace detail {
template <class Rule, bool Sized = false, class A, class B, class C>
NABLA_ALWAYS_INLINE constexpr auto make_ternary(A&& a, B&& b, C&& c) {
    constexpr std::size_t limit = node_limit<A>;
    if constexpr (!Sized && held_walk_size<A> + held_walk_size<B> + held_walk_size<C> + 1 > limit) {
        constexpr std::size_t room = (limit - 1) / 3;
        return make_ternary<Rule, true>(within_room<room>(std::forward<A>(a)),
                                        within_room<room>(std::forward<B>(b)),
                                        within_room<room>(std::forward<C>(c)));
    } else {
        using T = active_value_t<
            std::conditional_t<ActiveOperand<A>, A, std::conditional_t<ActiveOperand<B>, B, C>>>;
        using N = active_node<Rule, T, held_by_rule_t<Rule, T, A>, held_by_rule_t<Rule, T, B>,
                              held_by_rule_t<Rule, T, C>>;
        return N(hold<T, A, integer_operands<Rule>>(std::forward<A>(a)),
                 hold<T, B, integer_operands<Rule>>(std::forward<B>(b)),
                 hold<T, C, integer_operands<Rule>>(std::forward<C>(c)));
    }
}
}  // namespace detail
template <class A, class B, class C>
requires(detail::ActiveOperand<A> || detail::ActiveOperand<B> ||
         detail::ActiveOperand<C>) NABLA_ALWAYS_INLINE constexpr auto fma(A&& a, B&& b, C&& c) {
    return detail::make_ternary<rules::fma_rule>(std::forward<A>(a), std::forward<B>(b),
                                                 std::forward<C>(c));
}
template <class A, class B, class C>
requires(detail::ActiveOperand<A> || detail::ActiveOperand<B> ||
         detail::ActiveOperand<C>) NABLA_ALWAYS_INLINE constexpr auto hypot(A&& a, B&& b, C&& c) {
    return detail::make_ternary<rules::hypot3_rule>(std::forward<A>(a), std::forward<B>(b),
                                                    std::forward<C>(c));
}
template <class A, class B, class C>
requires(detail::ActiveOperand<A> || detail::ActiveOperand<B> ||
         detail::ActiveOperand<C>) NABLA_ALWAYS_INLINE
    constexpr auto ellint_3(A&& k, B&& nu, C&& phi) {
    return detail::make_ternary<rules::ellint_3_rule>(std::forward<A>(k), std::forward<B>(nu),
                                                      std::forward<C>(phi));
}

// The rules that no function names (rules/partial_of.hpp): a node, found through the tag.
namespace rules {
template <class Rule, class... X>
requires((nabla::detail::ActiveOperand<X> || ...)) constexpr auto apply_rule(rule_tag<Rule>,
                                                                             const X&... x) {
    if constexpr (sizeof...(X) == 1)
        return nabla::detail::make_unary<Rule>(x...);
    else if constexpr (sizeof...(X) == 2)
        return nabla::detail::make_binary<Rule>(x...);
    else
        return nabla::detail::make_ternary<Rule>(x...);
}
}  // namespace rules

// f(n, a, x) of a constant integer degree n and a constant parameter a. An active degree or
// parameter is a compile-time error: nabla has no derivative in them.
#define NABLA_ACTIVE_PARAMETRIC(function, rule)                                                    \
    template <class I, class A, detail::ActiveOperand X>                                           \
    requires std::is_integral_v<std::remove_cvref_t<I>> &&                                         \
        std::is_arithmetic_v<std::remove_cvref_t<A>>                                               \
            NABLA_ALWAYS_INLINE constexpr auto function(I n, A a, X&& x) {                         \
        return detail::make_ternary<rules::rule>(n, a, std::forward<X>(x));                        \
    }                                                                                              \
    template <class I, class A, class X>                                                           \
    requires(detail::ActiveOperand<I> || detail::ActiveOperand<A>) auto function(I&&, A&&, X&&) {  \
        static_assert(sizeof(I) == 0,                                                              \
                      "nabla::" #function "(n, a, x): the degree n and the parameter a must be "   \
                      "constants (an integer and a number), not variables on the tape: nabla "     \
                      "differentiates in x only.");                                                \
    }
NABLA_PARAMETRIC_FUNCTIONS(NABLA_ACTIVE_PARAMETRIC)
#undef NABLA_ACTIVE_PARAMETRIC

// ldexp(x, n) = x 2^n for a constant integer n; frexp(x, e) = ldexp(x, -e) with e the exponent
// of x's value.
template <detail::ActiveOperand X, class I>
requires std::is_integral_v<std::remove_cvref_t<I>> NABLA_ALWAYS_INLINE constexpr auto ldexp(X&& x,
                                                                                             I n) {
    return detail::make_binary<rules::ldexp_rule>(std::forward<X>(x), static_cast<int>(n));
}
template <detail::ActiveOperand X>
NABLA_ALWAYS_INLINE auto frexp(X&& x, int* e) {
    using std::frexp;
    frexp(x.value, e);
    return ldexp(std::forward<X>(x), -*e);
}

template <detail::ActiveOperand X>
NABLA_ALWAYS_INLINE constexpr auto digamma(X&& x) {
    return polygamma(0, std::forward<X>(x));
}

template <detail::ActiveOperand X>
bool isfinite(const X& x) {
    using std::isfinite;
    return isfinite(detail::value_of(x));
}
template <detail::ActiveOperand X>
bool isnan(const X& x) {
    using std::isnan;
    return isnan(detail::value_of(x));
}
template <detail::ActiveOperand X>
bool isinf(const X& x) {
    using std::isinf;
    return isinf(detail::value_of(x));
}

}  // namespace nabla
