#pragma once
// What the statement builder knows of an operand from its type alone: which kind it is (an
// active variable, a node, a small named intermediate held by copy, a collapsed one, a
// constant), its value type, how many variables and intermediates it holds, and where each of
// them goes in the builder's arrays; and when two operands are copies of one intermediate.

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../../concepts.hpp"
#include "../../config.hpp"
#include "../../core/type_list.hpp"
#include "storage.hpp"

namespace nabla {

template <class T>
class active;

// The expression types of reverse mode (reverse/expression.hpp).
template <class T>
struct collapsed;
template <class Rule, class T, class... Operands>
struct active_node;
template <class Node>
struct named;

namespace detail {

// A node's operands: a plain aggregate, read through member pointers. (Not a std::tuple: its
// constructors, bases and std::get are several functions for every node type, each of which
// the compiler optimises on its own before inlining, and a long statement has hundreds of node
// types.)
template <class... Operands>
struct operand_pack;
template <class A>
struct operand_pack<A> {
    A first;
};
template <class A, class B>
struct operand_pack<A, B> {
    A first;
    B second;
};
template <class A, class B, class C>
struct operand_pack<A, B, C> {
    A first;
    B second;
    C third;
};
template <class A, class B, class C, class D>
struct operand_pack<A, B, C, D> {
    A first;
    B second;
    C third;
    D fourth;
};

template <std::size_t I, class Pack>
consteval auto operand_member_of() {
    if constexpr (I == 0)
        return &Pack::first;
    else if constexpr (I == 1)
        return &Pack::second;
    else if constexpr (I == 2)
        return &Pack::third;
    else
        return &Pack::fourth;
}
// Operand I of a node e of type E is e.operands.*operand<I, E>.
template <std::size_t I, class E>
inline constexpr auto operand = operand_member_of<I, decltype(E::operands)>();

// What a small named node keeps for its uses: nothing (its uses are merged by comparing them).
struct no_cache {};

template <class E>
inline constexpr bool is_active_v = false;
template <class T>
inline constexpr bool is_active_v<active<T>> = true;

template <class E>
inline constexpr bool is_active_node_v = false;
template <class Rule, class T, class... Operands>
inline constexpr bool is_active_node_v<active_node<Rule, T, Operands...>> = true;

template <class E>
inline constexpr bool is_collapsed_v = false;
template <class T>
inline constexpr bool is_collapsed_v<collapsed<T>> = true;

template <class E>
inline constexpr bool is_named_v = false;
template <class Node>
inline constexpr bool is_named_v<named<Node>> = true;

// Anything that takes part in a statement: an active variable, a node, a named or collapsed
// intermediate.
template <class E>
concept ActiveOperand =
    is_active_v<std::remove_cvref_t<E>> || is_active_node_v<std::remove_cvref_t<E>> ||
    is_collapsed_v<std::remove_cvref_t<E>> || is_named_v<std::remove_cvref_t<E>>;

template <class E>
concept ActiveExpression = is_active_node_v<std::remove_cvref_t<E>> ||
    is_collapsed_v<std::remove_cvref_t<E>> || is_named_v<std::remove_cvref_t<E>>;

// The value type of an active operand.
template <class E>
struct active_value_type;
template <class T>
struct active_value_type<active<T>> {
    using type = T;
};
template <class Rule, class T, class... Operands>
struct active_value_type<active_node<Rule, T, Operands...>> {
    using type = T;
};
template <class T>
struct active_value_type<collapsed<T>> {
    using type = T;
};
template <class Node>
struct active_value_type<named<Node>> : active_value_type<Node> {};
template <class E>
using active_value_t = typename active_value_type<std::remove_cvref_t<E>>::type;

// A plain number next to active operands of value type T: a constant of the expression.
template <class U, class T>
concept ConstantOf = !ActiveOperand<U> && !Expression<U> && std::is_convertible_v<U, T>;

// A node's value, in a base of its own: value_of then has one instantiation for all the nodes
// of a value type rather than one for each node type.
template <class T>
struct node_value {
    T value;
};

// The value of an operand (a constant is its own).
template <class T>
NABLA_ALWAYS_INLINE constexpr const T& value_of(const active<T>& e) {
    return e.value;
}
template <class T>
NABLA_ALWAYS_INLINE constexpr const T& value_of(const node_value<T>& e) {
    return e.value;
}
template <class T>
NABLA_ALWAYS_INLINE constexpr const T& value_of(const collapsed<T>& e) {
    return e.value;
}
template <class Node>
NABLA_ALWAYS_INLINE constexpr const auto& value_of(const named<Node>& e) {
    return value_of(e.node);
}
template <class C>
requires(!ActiveOperand<C>) NABLA_ALWAYS_INLINE constexpr const C& value_of(const C& c) {
    return c;
}

// How many collapsed operands an expression type holds (they are merged by offset when a
// statement is recorded).
template <class E>
inline constexpr std::size_t collapsed_count = 0;
template <class T>
inline constexpr std::size_t collapsed_count<collapsed<T>> = 1;
template <class Rule, class T, class... Operands>
inline constexpr std::size_t
    collapsed_count<active_node<Rule, T, Operands...>> = (collapsed_count<Operands> + ... + 0);

// How many active variables an expression type reads, counted with repetition and with the ones
// inside named intermediates (room reserved on the tape before a statement is recorded).
template <class E>
inline constexpr std::size_t leaf_count = 0;
template <class T>
inline constexpr std::size_t leaf_count<active<T>> = 1;
template <class Node>
inline constexpr std::size_t leaf_count<named<Node>> = leaf_count<Node>;
template <class Rule, class T, class... Operands>
inline constexpr std::size_t leaf_count<active_node<Rule, T, Operands...>> = (leaf_count<Operands> +
                                                                              ... + 0);

// The named intermediates an expression type holds, in the order a statement meets them.
template <class E>
struct named_list {
    using type = type_list<>;
};
template <class Node>
struct named_list<named<Node>> {
    using type = type_list<named<Node>>;
};
template <class Rule, class T, class... Operands>
struct named_list<active_node<Rule, T, Operands...>> {
    using type = concat<typename named_list<Operands>::type...>;
};
template <class E>
using named_list_t = typename named_list<E>::type;

// Whether a node with these operands, when named, is held by copy (named<Node>) rather than
// collapsed into the scratch memory: it reads few active variables and no other intermediate.
template <class... Operands>
inline constexpr bool held_by_copy = (collapsed_count<Operands> + ... + 0) == 0 &&
                                     (named_list_t<Operands>::size + ... + 0) == 0 &&
                                     (leaf_count<Operands> + ... + 0) <= 8;

// Whether an expression type holds a constant (1.0 in 1.0 - x).
template <class E>
inline constexpr bool holds_constant = !ActiveOperand<E>;
template <class Rule, class T, class... Operands>
inline constexpr bool
    holds_constant<active_node<Rule, T, Operands...>> = (holds_constant<Operands> || ...);

// Whether two numbers are the same in every part (bit for bit, and every tangent of a dual number
// included): two copies of one intermediate. (Bit for bit, so that a number compared with itself
// is known to be the same at compile time, NaN or not.)
template <class U>
NABLA_ALWAYS_INLINE constexpr bool identical(const U& a, const U& b) {
    if constexpr (std::is_same_v<U, double> && sizeof(double) == sizeof(std::uint64_t)) {
        return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
    } else if constexpr (std::is_same_v<U, float> && sizeof(float) == sizeof(std::uint32_t)) {
        return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
    } else if constexpr (std::is_floating_point_v<U>) {
        return a == b && std::signbit(a) == std::signbit(b);
    } else if constexpr (DualLike<U>) {
        if (!identical(a.value, b.value) || a.tangent.size() != b.tangent.size())
            return false;
        for (std::size_t k = 0; k < a.tangent.size(); ++k)
            if (!identical(a.tangent[k], b.tangent[k]))
                return false;
        return true;
    } else {
        return a == b;
    }
}

// The leaf position of a variable whose pair is written as it comes, not merged: a variable of a
// named intermediate after the first of its type. Its pair is written even when the variable is
// passive, with index 0 (the passive slot, whose adjoint nothing reads): a test for that would
// make the number of pairs, and every place after them, a run-time value.
inline constexpr std::size_t unmerged_leaf = std::size_t(-1);
// The leaf position of a sum that does not accumulate: written as it comes, and only when it is
// active (a sum that starts as a constant then leaves the first statement's partials to a
// reference, when they are a collapsed intermediate's).
inline constexpr std::size_t unmerged_sum = std::size_t(-2);
// The leaf position of a variable of a statement that places none (it reads more than
// leaf_merge_limit): written as it comes, and only when it is active.
inline constexpr std::size_t unplaced_leaf = std::size_t(-3);

// Where a subexpression's collapsed operands, named operands and variables go in the statement
// builder's arrays: the numbers of each before it in the statement, known from the types. (So
// every index into those arrays is a constant, and the arrays stay in registers.)
template <std::size_t Slot, std::size_t Name, std::size_t Leaf>
struct position {
    static constexpr std::size_t slot = Slot;
    static constexpr std::size_t name = Name;
    static constexpr std::size_t leaf = Leaf;
};
using first_position = position<0, 0, 0>;

// How many active variables an expression type reads directly, not inside named intermediates
// (whose variables the statement reads when it expands them, after all the direct ones).
template <class E>
inline constexpr std::size_t direct_leaf_count = 0;
template <class T>
inline constexpr std::size_t direct_leaf_count<active<T>> = 1;
template <class Rule, class T, class... Operands>
inline constexpr std::size_t
    direct_leaf_count<active_node<Rule, T, Operands...>> = (direct_leaf_count<Operands> + ... + 0);

// The collapsed and named operands of the first I of Operands.
template <std::size_t I, class... Operands>
constexpr std::size_t slots_before() {
    std::size_t n = 0, j = 0;
    ((n += j++ < I ? collapsed_count<Operands> : 0), ...);
    return n;
}
template <std::size_t I, class... Operands>
constexpr std::size_t names_before() {
    std::size_t n = 0, j = 0;
    ((n += j++ < I ? named_list_t<Operands>::size : 0), ...);
    return n;
}
template <std::size_t I, class... Operands>
constexpr std::size_t leaves_before() {
    std::size_t n = 0, j = 0;
    ((n += j++ < I ? direct_leaf_count<Operands> : 0), ...);
    return n;
}
// The position of operand I of a node at position P.
// (Under a node whose variables are unmerged or unplaced, every variable is.)
template <class P, std::size_t I, class... Operands>
using operand_position = position<P::slot + slots_before<I, Operands...>(),
                                  P::name + names_before<I, Operands...>(),
                                  P::leaf == unmerged_leaf || P::leaf == unplaced_leaf
                                      ? P::leaf
                                      : P::leaf + leaves_before<I, Operands...>()>;

// A statement merges the pairs of a variable it reads more than once (x[i] * x[i]) into one, when
// it reads at most this many variables: the merge compares every two of them.
inline constexpr std::size_t leaf_merge_limit = 8;

// Whether two expressions of one type are copies of one intermediate: copied from one named
// object (for a small named intermediate without constants) and every value, constant and
// variable the same. (Their partials are then the same, so a statement may expand one with the
// sum of both adjoints. For two copies of one named intermediate, the compiler sees the operands
// are the same and decides at compile time; for copies of two named objects alive at once, that
// their addresses differ, which their contents cannot tell it (Lennard-Jones's dx, dy and dz).
// The contents are still compared for one object at two times, a helper's local in two calls.)
template <class E>
NABLA_ALWAYS_INLINE constexpr bool same_expression(const E& a, const E& b);
template <class Rule, class T, class... Operands, std::size_t... I>
NABLA_ALWAYS_INLINE constexpr bool same_operands(const active_node<Rule, T, Operands...>& a,
                                                 const active_node<Rule, T, Operands...>& b,
                                                 std::index_sequence<I...>) {
    using E = active_node<Rule, T, Operands...>;
    return (same_expression(a.operands.*operand<I, E>, b.operands.*operand<I, E>) && ...);
}
template <class E>
NABLA_ALWAYS_INLINE constexpr bool same_expression(const E& a, const E& b) {
    if constexpr (is_active_v<E>)
        return a.index() == b.index() && a.generation() == b.generation() &&
               identical(a.value, b.value);
    else if constexpr (is_named_v<E>)
        return a.origin == b.origin && same_expression(a.node, b.node);
    else if constexpr (is_active_node_v<E>)
        return identical(a.value, b.value) &&
               same_operands(a, b, std::make_index_sequence<E::arity>{});
    else
        return identical(a, b);  // a constant (a held-by-copy node has no collapsed operand)
}

}  // namespace detail

}  // namespace nabla
