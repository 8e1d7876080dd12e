#pragma once
// nabla::active<T>: the active scalar of reverse mode (nabla::var is active<double>), and the
// expression templates its statements are written with.
//
//   nabla::tape<> t;
//   auto recording = t.record();
//   nabla::var x = t.input(2.0), y = t.input(5.0);
//   nabla::var f = log(x) + x * y - sin(y);     // one statement: two partials (x and y)
//   t.gradient(f);                              // t.adjoint(x) == 5.5
//
// An active variable is a small handle: its value, its index on the tape and the generation of
// the recording (tape.hpp). Arithmetic on active variables builds an expression whose nodes hold
// their operands by value and compute their own value at once; assigning the expression to an
// active variable records one statement: the expression's partials with respect to the active
// variables it reads, computed from the rule table and multiplied along the expression, with no
// intermediate entry on the tape.
//
// `auto` is safe. Every node holds copies (an active variable is 16 bytes), so an expression that
// outlives the variables it was built from, or is returned from a function whose locals it read,
// still holds the values and indices it needs. A named intermediate used as an operand
//
//   auto dx = q[i] - q[j];  auto r2 = dx * dx + ...;  auto s6 = 1.0 / (r2 * r2 * r2);
//   e += 4.0 * (s6 * s6 - s6);                         // one statement for the pair energy
//
// is held in one of three ways, so that its partials are computed once however often it is used
// and the expression types stay small:
//   - a small one (dx: at most eight active variables, no other intermediate) by copy
//     (`named`); the statement merges the uses that are the same in every part (every value,
//     constant and variable: the compiler sees it for copies of one intermediate) and expands the
//     intermediate once, with the summed adjoint;
//   - a larger one (r2) collapsed the first time it is used: its partials with respect to the
//     active variables it reads go to the tape's scratch memory once, and every use refers to
//     them by offset (`collapsed`: value, offset, count, generation, scale); the statement merges
//     the uses of one offset and expands the partials once;
//   - one that is a function of a single collapsed intermediate (s6 of r2) shares its partials,
//     scaled: nothing is copied.
// A statement writes one (operand, partial) pair per variable it reads: the uses of one variable
// (x * x + x, and an accumulated sum read again: s += s * x) are summed first, compared by index,
// unless it reads more than eight (docs/reverse.md lists the uses kept apart). A statement
// whose partials are those of one collapsed intermediate, scaled, and nothing else (the pair
// energy of r2) refers to them in the scratch memory instead of expanding them (tape.hpp).
// (The statement builder works on fixed-size arrays indexed by the operand's position in the
// expression, merged by comparisons the compiler unrolls; the nodes stay small plain structs, which
// the optimiser keeps in registers: a larger member, or one with a default initialiser, can make
// it spill every node copy to memory.)

#include <array>
#include <bit>
#include <cmath>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <ostream>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../config.hpp"
#include "../core/evaluate.hpp"
#include "../core/type_list.hpp"
#include "../rules.hpp"
#include "tape.hpp"

namespace nabla {

template <class T>
class active;

using var = active<double>;

// The expression types of reverse mode. They live in namespace nabla so that argument-dependent
// lookup finds the operators and functions below for them.

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

template <class Rule, class T, class... Operands>
struct active_node;

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

namespace detail {

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

template <class E>
NABLA_ALWAYS_INLINE constexpr const auto& value_of(const E& e) {
    if constexpr (is_active_v<E> || is_active_node_v<E> || is_collapsed_v<E>)
        return e.value;
    else if constexpr (is_named_v<E>)
        return e.node.value;
    else
        return e;
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
template <class List, std::size_t K>
struct list_element;
template <class... Ts, std::size_t K>
struct list_element<type_list<Ts...>, K> {
    using type = std::tuple_element_t<K, std::tuple<Ts...>>;
};

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
    } else if constexpr (requires { a.value, a.tangent; }) {
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
inline constexpr std::size_t unplaced = std::size_t(-1);
// The leaf position of a sum that does not accumulate: written as it comes, and only when it is
// active (a sum that starts as a constant then leaves the first statement's partials to a
// reference, when they are a collapsed intermediate's).
inline constexpr std::size_t sum_place = std::size_t(-2);

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
// (Under a node whose variables are unplaced, every variable is.)
template <class P, std::size_t I, class... Operands>
using operand_position =
    position<P::slot + slots_before<I, Operands...>(),
             P::name + names_before<I, Operands...>(),
             P::leaf == unplaced ? unplaced : P::leaf + leaves_before<I, Operands...>()>;

// A statement merges the pairs of a variable it reads more than once (x[i] * x[i]) into one, when
// it reads at most this many variables: the merge compares every two of them.
inline constexpr std::size_t leaf_merge_limit = 8;

template <class P, class Builder, class Out, class T, class E>
void propagate(Builder& b, Out& out, const E& e, const T& adjoint);
template <class P, class Builder, class Out, class T, class Rule, class... Operands>
void propagate_node(Builder& b,
                    Out& out,
                    const active_node<Rule, T, Operands...>& e,
                    const T& adjoint);

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
    return (same_expression(std::get<I>(a.operands), std::get<I>(b.operands)) && ...);
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
               same_operands(a, b,
                             std::make_index_sequence<
                                 std::tuple_size_v<std::remove_cvref_t<decltype(a.operands)>>>{});
    else
        return identical(a, b);  // a constant (a held-by-copy node has no collapsed operand)
}

// Collects one statement's partials for `out` (the tape, or the scratch memory when an
// intermediate is collapsed): active leaves in places, merged by index and written after the named
// intermediates are expanded; named intermediates merged when they are the same, collapsed ones by
// offset, and both expanded at the end. (Placed: the part of E whose variables have places, all
// of E but an accumulated sum.)
template <class T, class E, class Placed = E>
struct statement_builder {
    static constexpr std::size_t Slots = collapsed_count<E>;
    using names = named_list_t<E>;
    static constexpr std::size_t Names = names::size;

    tape<T>* on;
    std::uint32_t generation = on->generation();
    // The named intermediates, in the order of the expression: where, their names, their
    // adjoints.
    std::array<const void*, Names> name_at{};
    std::array<T, Names> name_adjoints{};
    std::array<bool, Names> name_leads{};
    // The collapsed operands, in the order of the expression: where their partials are, how
    // many, their adjoints. One with no partials (every variable it read was passive) gets a begin
    // no other has: its offset is also where the next intermediate's partials begin.
    static constexpr tape_index no_partials = std::numeric_limits<tape_index>::max();
    std::array<tape_index, Slots> begins{};
    std::array<tape_index, Slots> counts{};
    std::array<T, Slots> adjoints{};
    std::array<bool, Slots> leads{};

    // The K-th named intermediate is the first of its type in the statement: its variables get
    // places among the leaves. (A later one of the same type is almost always the same
    // intermediate, merged with it; when it is another, its pairs are written as they come.)
    template <std::size_t K, std::size_t... J>
    static constexpr bool first_of_type(std::index_sequence<J...>) {
        return (!std::is_same_v<typename list_element<names, J>::type,
                                typename list_element<names, K>::type> &&
                ... && true);
    }
    template <std::size_t K>
    static constexpr bool first_of_type() {
        return first_of_type<K>(std::make_index_sequence<K>{});
    }
    // Where the variables of the K-th named intermediate are among the leaves.
    template <std::size_t... K>
    static constexpr std::size_t named_leaves_before(std::index_sequence<K...>) {
        return direct_leaf_count<Placed> +
               ((first_of_type<K>() ? leaf_count<typename list_element<names, K>::type> : 0) + ... +
                0);
    }
    // The active variables the statement reads, in the order of the expression (the ones inside
    // named intermediates last), with their partials; index 0 for a constant or one not read (a
    // use of a named intermediate merged into an earlier one, an accumulated sum).
    static constexpr std::size_t Leaves = named_leaves_before(std::make_index_sequence<Names>{});
    std::array<tape_index, Leaves> leaf_index{};
    std::array<T, Leaves> leaf_partial{};
    std::array<bool, Leaves> leaf_leads{};

    // The variable at place L (unplaced or a sum's place: written to `out` at once).
    template <std::size_t L>
    NABLA_ALWAYS_INLINE void leaf(cursor<T>& out, const active<T>& v, const T& adjoint) {
        // A variable of another recording must be passive (index 0), or it is stale. (Two forms
        // of that check: for a placed variable, testing the index here tells the compiler that
        // past it the index is the one to write, with no select, which clang++ makes shorter
        // code of; for one written as it comes, g++ made better code of the select.)
        const bool recorded = v.generation() == generation;
        if constexpr (L == unplaced || L == sum_place) {
            if (!recorded) [[unlikely]]
                on->check(v.generation(), v.index());
        } else {
            if (!recorded && v.index() != 0) [[unlikely]]
                on->stale();
        }
        if constexpr (L == unplaced) {
            out.push(recorded ? v.index() : 0, adjoint);
        } else if constexpr (L == sum_place) {
            if (recorded)
                out.push(v.index(), adjoint);
        } else {
            std::get<L>(leaf_index) = v.index();
            std::get<L>(leaf_partial) = adjoint;
        }
    }

    // Adds the partial of the K-th variable to the J-th's when both are one variable and the K-th
    // was not merged into an earlier one (every J gets an addition, as for named operands; of -0,
    // the exact identity, when it is not the one, so the optimiser may drop it: +0 it must add,
    // as it turns -0 into +0).
    template <std::size_t K, std::size_t J>
    NABLA_ALWAYS_INLINE void merge_leaf(bool& merged) {
        const bool take = !merged && std::get<J>(leaf_index) == std::get<K>(leaf_index);
        std::get<J>(leaf_partial) += take ? std::get<K>(leaf_partial) : T(-0.0);
        merged = merged || take;
    }
    template <std::size_t K, std::size_t... J>
    NABLA_ALWAYS_INLINE void merge_leaf(std::index_sequence<J...>) {
        bool merged = false;
        if constexpr (Leaves <= leaf_merge_limit)
            (merge_leaf<K, J>(merged), ...);
        std::get<K>(leaf_leads) = !merged && std::get<K>(leaf_index) != 0;
    }
    template <std::size_t K>
    NABLA_ALWAYS_INLINE void write_leaf(cursor<T>& out) {
        out.push_if(std::get<K>(leaf_index), std::get<K>(leaf_partial), std::get<K>(leaf_leads));
    }
    template <std::size_t... K>
    NABLA_ALWAYS_INLINE void write_leaves(cursor<T>& out, std::index_sequence<K...>) {
        (merge_leaf<K>(std::make_index_sequence<K>{}), ...);
        (write_leaf<K>(out), ...);
    }
    // Writes the pairs of the variables read, one per variable (room for them was reserved).
    NABLA_ALWAYS_INLINE void write_leaves(cursor<T>& out) {
        write_leaves(out, std::make_index_sequence<Leaves>{});
    }

    // Adds the partial 1 of an accumulated sum (sum += e) to the first variable that e reads
    // directly (not inside a named intermediate) and is the same variable, if there is one;
    // whether there was. (So s = s - s has one pair of partial 0, as forward mode has a tangent of
    // exactly 0: with the sum's 1 kept apart as a bit, the sweep added the statement's adjoint to
    // s's and took it away again, which left s's own adjoint rounded to the precision of the
    // larger one: 1e-9 relative in a random program of tests/fuzz/statement_shapes_test.cpp. The
    // test comes first and the merge is on a cold path, and only the variables read directly are
    // compared: the merge made with selects in every case, or the variables inside named
    // intermediates compared too, cost every accumulating statement more instructions.)
    template <std::size_t... K>
    NABLA_ALWAYS_INLINE bool merge_sum(const active<T>& sum, std::index_sequence<K...>) {
        if constexpr (Leaves <= leaf_merge_limit && sizeof...(K) > 0) {
            const tape_index s = sum.index();
            if ((unsigned(std::get<K>(leaf_index) == s) | ...) != 0) [[unlikely]] {
                bool merged = false;
                (merge_sum_into<K>(s, merged), ...);
                return true;
            }
        }
        return false;
    }
    template <std::size_t K>
    NABLA_ALWAYS_INLINE void merge_sum_into(tape_index sum, bool& merged) {
        const bool take = !merged && std::get<K>(leaf_index) == sum;
        std::get<K>(leaf_partial) += take ? T(1) : T(-0.0);
        merged = merged || take;
    }
    NABLA_ALWAYS_INLINE bool merge_sum(const active<T>& sum) {
        return merge_sum(sum, std::make_index_sequence<direct_leaf_count<Placed>>{});
    }

    // The collapsed operand at slot S.
    template <std::size_t S>
    NABLA_ALWAYS_INLINE void shared(const collapsed<T>& c, const T& adjoint) {
        // (Past the check, a collapsed operand of another recording has no partials.)
        if (c.generation != generation) [[unlikely]]
            on->check(c.generation, c.count == 0 ? 0 : 1);  // passive, or a stale one: throws
        std::get<S>(begins) = c.count != 0 ? c.begin : no_partials;
        std::get<S>(counts) = c.count;
        std::get<S>(adjoints) = adjoint * c.scale;
    }

    // The named operand at place K.
    template <std::size_t K, class Node>
    NABLA_ALWAYS_INLINE void named_operand(const named<Node>& n, const T& adjoint) {
        std::get<K>(name_at) = &n;
        std::get<K>(name_adjoints) = adjoint;
    }

    // Adds the adjoint of the K-th named operand to the J-th's when both are the same
    // intermediate (the same in every part) and it was not merged into an earlier one. (Every J
    // gets an addition, of 0 when it is not the one: choosing the J to add to would make the
    // compiler address the adjoints through a pointer, in memory.)
    template <std::size_t K, std::size_t J>
    NABLA_ALWAYS_INLINE void merge_into(bool& merged) {
        if constexpr (std::is_same_v<typename list_element<names, J>::type,
                                     typename list_element<names, K>::type>) {
            using N = typename list_element<names, K>::type;
            const bool take =
                !merged && same_expression(*static_cast<const N*>(std::get<J>(name_at)),
                                           *static_cast<const N*>(std::get<K>(name_at)));
            std::get<J>(name_adjoints) += take ? std::get<K>(name_adjoints) : T(-0.0);
            merged = merged || take;
        }
    }
    template <std::size_t K, std::size_t... J>
    NABLA_ALWAYS_INLINE void merge_named(std::index_sequence<J...>) {
        bool merged = false;
        (merge_into<K, J>(merged), ...);
        std::get<K>(name_leads) = !merged;
    }
    template <std::size_t K>
    NABLA_ALWAYS_INLINE void expand_one(cursor<T>& out) {
        using N = typename list_element<names, K>::type;
        using P = position<0, 0,
                           first_of_type<K>() ? named_leaves_before(std::make_index_sequence<K>{})
                                              : unplaced>;
        if (name_leads[K])
            propagate_node<P>(*this, out, static_cast<const N*>(name_at[K])->node,
                              name_adjoints[K]);
    }
    template <std::size_t... K>
    NABLA_ALWAYS_INLINE void expand_named(cursor<T>& out, std::index_sequence<K...>) {
        (merge_named<K>(std::make_index_sequence<K>{}), ...);
        (expand_one<K>(out), ...);
    }
    // Writes the partials of the named operands, merged, times their adjoints (room for them
    // was reserved with the leaves).
    NABLA_ALWAYS_INLINE void expand_named(cursor<T>& out) {
        if constexpr (Names > 0)
            expand_named(out, std::make_index_sequence<Names>{});
    }

    // Adds the adjoint of the K-th collapsed operand to the J-th's when both are the same
    // intermediate (the same partials); every J gets an addition, as for named operands. (Apart
    // from merge_leaf: one helper for both merges was slower on Lennard-Jones with either
    // compiler; the code the compilers make of these folds is fragile.)
    template <std::size_t K, std::size_t J>
    NABLA_ALWAYS_INLINE void merge_slot(bool& merged) {
        const bool take = !merged && std::get<J>(begins) == std::get<K>(begins);
        std::get<J>(adjoints) += take ? std::get<K>(adjoints) : T(0);
        merged = merged || take;
    }
    template <std::size_t K, std::size_t... J>
    NABLA_ALWAYS_INLINE void merge_collapsed(std::index_sequence<J...>) {
        bool merged = false;
        (merge_slot<K, J>(merged), ...);
        std::get<K>(leads) = !merged;
    }
    template <std::size_t... K>
    NABLA_ALWAYS_INLINE std::size_t merge_collapsed(std::index_sequence<K...>) {
        (merge_collapsed<K>(std::make_index_sequence<K>{}), ...);
        return ((leads[K] ? std::size_t(counts[K]) : 0) + ...);
    }

    // Merges the collapsed operands that are one intermediate; how many partials they have.
    NABLA_ALWAYS_INLINE std::size_t merge_collapsed() {
        if constexpr (Slots > 0)
            return merge_collapsed(std::make_index_sequence<Slots>{});
        else
            return 0;
    }
    // After merge_collapsed: the one collapsed operand with partials, if there is exactly one.
    struct single {
        bool found;
        tape_index begin;
        tape_index count;
        T adjoint;
    };
    template <std::size_t K>
    NABLA_ALWAYS_INLINE void note_single(single& one, std::size_t& with_partials) const {
        if (std::get<K>(leads) && std::get<K>(counts) != 0) {
            ++with_partials;
            one = single{true, std::get<K>(begins), std::get<K>(counts), std::get<K>(adjoints)};
        }
    }
    template <std::size_t... K>
    NABLA_ALWAYS_INLINE single single_collapsed(std::index_sequence<K...>) const {
        single one{false, 0, 0, T(0)};
        std::size_t with_partials = 0;
        (note_single<K>(one, with_partials), ...);
        one.found = with_partials == 1;
        return one;
    }
    NABLA_ALWAYS_INLINE single single_collapsed() const {
        return single_collapsed(std::make_index_sequence<Slots>{});
    }

    // Writes the merged collapsed operands' partials, times their adjoints, after the leaves.
    NABLA_ALWAYS_INLINE void expand(cursor<T>& out) { write_collapsed(out, merge_collapsed()); }
    // The K-th collapsed operand's partials, unless it was merged into an earlier one. (Every
    // index into the builder's arrays is a constant: a loop over them kept them in memory.)
    template <std::size_t K>
    NABLA_ALWAYS_INLINE void write_one(cursor<T>& out, const tape_index* index, const T* partial) {
        if (!std::get<K>(leads))
            return;
        const T a = std::get<K>(adjoints);
        const tape_index begin = std::get<K>(begins);
        const std::size_t n = std::get<K>(counts);
        tape_index* to_index = out.index + out.written;
        T* to_partial = out.partial + out.written;
        const tape_index* from_index = index + begin;
        const T* from_partial = partial + begin;
        for (std::size_t k = 0; k < n; ++k) {
            to_index[k] = from_index[k];
            to_partial[k] = from_partial[k] * a;
            NABLA_SCALAR_LOOP(k);
        }
        out.written += n;
    }
    template <std::size_t... K>
    NABLA_ALWAYS_INLINE void write_all(cursor<T>& out,
                                       const tape_index* index,
                                       const T* partial,
                                       std::index_sequence<K...>) {
        (write_one<K>(out, index, partial), ...);
    }
    // The same after merge_collapsed, which gave `total`.
    NABLA_ALWAYS_INLINE void write_collapsed(cursor<T>& out, std::size_t total) {
        if constexpr (Slots > 0) {
            if (total == 0)
                return;
            out.close();
            out.open(total);
            write_all(out, on->scratch().indices(), on->scratch().partials(),
                      std::make_index_sequence<Slots>{});
        }
    }
};

// The partials of a statement, multiplied along the expression down to its leaves; P is where e
// is in the statement, and out where the builder writes the pairs of variables as they come (a
// cursor; nothing for a builder that sees only collapsed operands).
template <class P, class Builder, class Out, class T, class E>
NABLA_ALWAYS_INLINE void propagate(Builder& b, Out& out, const E& e, const T& adjoint) {
    if constexpr (is_active_v<E>) {
        b.template leaf<P::leaf>(out, e, adjoint);
    } else if constexpr (is_collapsed_v<E>) {
        b.template shared<P::slot>(e, adjoint);
    } else if constexpr (is_named_v<E>) {
        b.template named_operand<P::name>(e, adjoint);
    } else if constexpr (is_active_node_v<E>) {
        propagate_node<P>(b, out, e, adjoint);
    }
    // constants: nothing
}

// The partial of a node with respect to its J-th operand, from the rule table and the values the
// node holds (no lambdas here or below: every step of a statement is forced inline, so the
// compiler's inlining budget never splits a statement into calls).
template <std::size_t J, class Rule, class T, class... Operands, std::size_t... K>
NABLA_ALWAYS_INLINE T node_partial(const active_node<Rule, T, Operands...>& e,
                                   std::index_sequence<K...>) {
    return to_number<T>(Rule::template partial<J>(e.value, value_of(std::get<K>(e.operands))...));
}

// Operand I of e, at position Q.
template <std::size_t I, class Q, class Builder, class Out, class T, class Rule, class... Operands>
NABLA_ALWAYS_INLINE void propagate_operand_at(Builder& b,
                                              Out& out,
                                              const active_node<Rule, T, Operands...>& e,
                                              const T& adjoint) {
    using Op = std::tuple_element_t<I, std::tuple<Operands...>>;
    if constexpr (ActiveOperand<Op>)
        propagate<Q>(b, out, std::get<I>(e.operands),
                     node_partial<I>(e, std::index_sequence_for<Operands...>{}) * adjoint);
}

// Operand I of e, with e at position P.
template <std::size_t I, class P, class Builder, class Out, class T, class Rule, class... Operands>
NABLA_ALWAYS_INLINE void propagate_operand(Builder& b,
                                           Out& out,
                                           const active_node<Rule, T, Operands...>& e,
                                           const T& adjoint) {
    propagate_operand_at<I, operand_position<P, I, Operands...>>(b, out, e, adjoint);
}

template <class P,
          class Builder,
          class Out,
          class T,
          class Rule,
          class... Operands,
          std::size_t... I>
NABLA_ALWAYS_INLINE void propagate_operands(Builder& b,
                                            Out& out,
                                            const active_node<Rule, T, Operands...>& e,
                                            const T& adjoint,
                                            std::index_sequence<I...>) {
    (propagate_operand<I, P>(b, out, e, adjoint), ...);
}

template <class P, class Builder, class Out, class T, class Rule, class... Operands>
NABLA_ALWAYS_INLINE void
propagate_node(Builder& b, Out& out, const active_node<Rule, T, Operands...>& e, const T& adjoint) {
    propagate_operands<P>(b, out, e, adjoint, std::index_sequence_for<Operands...>{});
}

// Which operand of E is an active variable that E adds with partial 1 (v + e, e + v, v - e):
// 0 or 1, or -1 when there is none.
template <class E>
inline constexpr int accumulated_operand = -1;
template <class T, class A, class B>
inline constexpr int accumulated_operand<active_node<rules::add_rule, T, A, B>> =
    is_active_v<A> ? 0 : (is_active_v<B> ? 1 : -1);
template <class T, class A, class B>
inline constexpr int accumulated_operand<active_node<rules::sub_rule, T, A, B>> =
    is_active_v<A> ? 0 : -1;

// The part of a statement whose variables have places for merging: all of it but an accumulated
// sum.
template <class E>
struct placed {
    using type = E;
};
template <class E>
requires(accumulated_operand<E> >= 0) struct placed<E> {
    using type = std::tuple_element_t<1 - accumulated_operand<E>, decltype(E::operands)>;
};
template <class E>
using placed_t = typename placed<E>::type;

// Records e as one statement on the active tape and returns the new statement's index (a
// statement is recorded even when every variable e reads is passive: it then has no partials).
// An accumulation, sum + e with sum the statement recorded just before (sum += e), keeps sum's
// partial 1 as a bit of the statement's end instead of a pair. A statement whose partials are
// those of one collapsed intermediate (more than two), scaled, refers to them (tape.hpp).
template <class T, class E>
NABLA_ALWAYS_INLINE tape_index record_statement(tape<T>* on, const E& e) {
    using Builder = statement_builder<T, E, placed_t<E>>;
    constexpr bool may_refer = Builder::Slots > 0 && Builder::Leaves == 0 && Builder::Names == 0;
    Builder b{on};
    cursor<T> out = on->statement_cursor();
    out.open(may_refer && leaf_count<E> < 2 ? 2 : leaf_count<E>);
    // The accumulation bit of the statement's end, or 0. (A 32-bit number, not a bool: g++ kept
    // the bool in memory, stored as a byte and loaded as 32 bits, a store-forwarding stall on
    // every statement.)
    tape_index accumulation = 0;
    if constexpr (accumulated_operand<E> >= 0) {
        constexpr std::size_t k = accumulated_operand<E>;
        const active<T>& sum = std::get<k>(e.operands);
        // (Not before the tape's first pair: the statements before it have an end of 0, and the
        // sweep skips them.)
        if (sum.index() == on->last_statement() && sum.generation() == b.generation &&
            on->pairs_size() != 0)
            accumulation = accumulates_bit;
        // (sum's pair, when there is one, is written as it comes: the places for merging are
        // the other operand's.)
        if (accumulation == 0)
            propagate_operand_at<k, position<0, 0, sum_place>>(b, out, e, T(1));
        propagate_operand_at<1 - k, first_position>(b, out, e, T(1));
        // A sum that accumulates and is also a variable the other operand reads directly
        // (s += s * x) is merged into it instead of kept as a bit.
        if (accumulation != 0 && b.merge_sum(sum))
            accumulation = 0;
    } else {
        propagate<first_position>(b, out, e, T(1));
    }
    b.expand_named(out);
    b.write_leaves(out);
    if constexpr (may_refer) {
        // (Only when nothing else was written: an accumulated sum that does not accumulate has a
        // pair of its own.)
        const std::size_t total = b.merge_collapsed();
        const auto one = b.single_collapsed();
        if (one.found && one.count > 2 && out.written == 0) {
            out.push(one.begin, one.adjoint);
            out.push(one.count, T(0));
            out.close();
            return on->finish_referring_statement(accumulation, one.count);
        }
        b.write_collapsed(out, total);
    } else {
        b.expand(out);
    }
    out.close();
    return on->finish_statement(accumulation);
}

// Whether an expression reads an active variable or an active intermediate.
template <class E>
NABLA_ALWAYS_INLINE constexpr bool reads_active(const E& e);
template <class Rule, class T, class... Operands, std::size_t... I>
NABLA_ALWAYS_INLINE constexpr bool operands_read_active(const active_node<Rule, T, Operands...>& e,
                                                        std::index_sequence<I...>) {
    return (reads_active(std::get<I>(e.operands)) || ... || false);
}
template <class E>
NABLA_ALWAYS_INLINE constexpr bool reads_active(const E& e) {
    if constexpr (is_active_v<E>)
        return e.index() != 0;
    else if constexpr (is_collapsed_v<E>)
        return e.count != 0;
    else if constexpr (is_named_v<E>)
        return reads_active(e.node);
    else if constexpr (is_active_node_v<E>)
        return operands_read_active(
            e, std::make_index_sequence<
                   std::tuple_size_v<std::remove_cvref_t<decltype(e.operands)>>>{});
    else
        return false;
}

// An expression with no active tape: every variable it reads must be passive. (Forced inline,
// reading values only: a call that took the expression's address, even on this cold path, would
// keep the expression in memory on the hot path too.)
template <class E>
NABLA_ALWAYS_INLINE void check_passive(const E& e) {
    if (reads_active(e)) [[unlikely]]
        throw_no_tape();
}

// The generation a collapsed form made without a tape carries (it has no partials, so the number
// matters only in being not 0, which marks a form not yet made).
inline constexpr std::uint32_t passive_generation = std::numeric_limits<std::uint32_t>::max();

// The uses of collapsed intermediates in an expression that reads nothing else (s6 = 1 / r2^3):
// where each one's partials are, and its adjoint in the expression. No tape is needed for that:
// when every use is one intermediate, the expression's collapsed form is that one's, scaled, and
// it carries that one's generation (a stale one is reported by the statement that uses it, as
// for any cached form). (Not through the statement builder, which would ask the tape for its
// generation and for room that nothing here writes.)
template <class T, std::size_t Slots>
struct shared_uses {
    std::array<tape_index, Slots> begins;
    std::array<tape_index, Slots> counts;
    std::array<std::uint32_t, Slots> generations;
    std::array<T, Slots> scales;

    // (What propagate calls for a collapsed operand at slot S.)
    template <std::size_t S>
    NABLA_ALWAYS_INLINE void shared(const collapsed<T>& c, const T& adjoint) {
        std::get<S>(begins) = c.begin;
        std::get<S>(counts) = c.count;
        std::get<S>(generations) = c.generation;
        std::get<S>(scales) = adjoint * c.scale;
    }
};
template <class T, std::size_t Slots, std::size_t... K>
NABLA_ALWAYS_INLINE bool
one_intermediate(const shared_uses<T, Slots>& u, T& scale, std::index_sequence<K...>) {
    scale = std::get<0>(u.scales);
    ((scale += K == 0 ? T(-0.0) : std::get<K>(u.scales)), ...);
    return ((std::get<K>(u.begins) == std::get<0>(u.begins) &&
             std::get<K>(u.counts) == std::get<0>(u.counts) &&
             std::get<K>(u.generations) == std::get<0>(u.generations)) &&
            ...);
}

// The collapsed form of a named node: its partials in the scratch memory, made once. (Once made,
// it is returned without asking the tape: a form made in another recording, whose variables are
// then stale too, is reported by the statement that uses it, as making it again would be; a form
// without partials stays right. So the compiler sees that the uses of one intermediate are the
// same.) A form made while no tape records is kept as well, so a later use returns the cached form
// on both paths: with one path rebuilding it, every use after the first was a join of two forms,
// which g++ could not see equal, and a statement merged the uses of s6 = 1 / (r2 * r2 * r2) at run
// time.
template <class Rule, class T, class... Operands>
NABLA_ALWAYS_INLINE collapsed<T> collapse(const active_node<Rule, T, Operands...>& e) {
    if (e.cache.generation != 0)
        return e.cache;
    using Node = active_node<Rule, T, Operands...>;
    if constexpr (leaf_count<Node> == 0 && named_list_t<Node>::size == 0 &&
                  0 < collapsed_count<Node>) {
        shared_uses<T, collapsed_count<Node>> u;
        struct no_pairs {
        } out;
        propagate<first_position>(u, out, e, T(1));
        T scale;
        if (one_intermediate(u, scale, std::make_index_sequence<collapsed_count<Node>>{})) {
            e.cache = collapsed<T>{e.value, std::get<0>(u.begins), std::get<0>(u.counts),
                                   std::get<0>(u.generations), scale};
            return e.cache;
        }
    }
    tape<T>* on = active_tape<T>;
    if (on == nullptr) {
        check_passive(e);
        e.cache = collapsed<T>{e.value, 0, 0, passive_generation, T(1)};
        return e.cache;
    }
    using E = active_node<Rule, T, Operands...>;
    using Builder = statement_builder<T, E>;
    const std::size_t begin = on->scratch().size();
    Builder b{on};
    cursor<T> out = on->scratch_cursor();
    out.open(leaf_count<E>);
    propagate<first_position>(b, out, e, T(1));
    if constexpr (leaf_count<E> == 0 && Builder::Names == 0 && Builder::Slots > 0) {
        // A function of collapsed intermediates only that are not all one (above): when one of
        // them has partials and the others none, its partials are that one's, scaled, and
        // nothing is copied.
        const std::size_t total = b.merge_collapsed();
        const auto one = b.single_collapsed();
        if (one.found) {
            e.cache = collapsed<T>{e.value, one.begin, one.count, on->generation(), one.adjoint};
            return e.cache;
        }
        b.write_collapsed(out, total);
    } else {
        b.expand_named(out);
        b.write_leaves(out);
        b.expand(out);
    }
    out.close();
    const std::size_t count = on->scratch().size() - begin;
    e.cache = collapsed<T>{e.value, static_cast<tape_index>(begin), static_cast<tape_index>(count),
                           on->generation(), T(1)};
    return e.cache;
}

// The type a constant operand is held as: the plain number under any nesting of dual numbers, so
// no rule ever computes a partial with respect to a constant (in pow(x, 2.0) on duals, the
// exponent's tangent would otherwise meet log of a negative base and turn into NaN).
template <class T>
struct constant_type {
    using type = T;
};
template <class T>
requires requires(const T& t) {
    t.value;
    t.tangent;
}
struct constant_type<T> {
    using type = typename constant_type<typename T::value_type>::type;
};

// An operand as a node holds it: variables, named and collapsed intermediates and constants by
// value, a temporary node moved in, a named node (an lvalue) held by copy (`named`) when it is
// small and collapsed otherwise.
template <class T, class E>
NABLA_ALWAYS_INLINE constexpr auto hold(E&& e) {
    using D = std::remove_cvref_t<E>;
    if constexpr (is_active_node_v<D> && std::is_lvalue_reference_v<E>) {
        // (A node that holds a constant keeps no origin, so its uses are told apart by their
        // contents alone: with its address kept, g++ built every statement that used it in
        // memory, storing the constant into each copy, as for Rosenbrock's b = 1.0 - x[i].)
        if constexpr (D::held_by_copy && holds_constant<D>)
            return named<D>{e, nullptr};
        else if constexpr (D::held_by_copy)
            return named<D>{e, &e};
        else
            return collapse(e);
    } else if constexpr (ActiveOperand<D>)
        return D(std::forward<E>(e));
    else if constexpr (std::is_integral_v<D>)
        return D(e);  // an integer stays exact (pow(x, 3))
    else
        return static_cast<typename constant_type<T>::type>(e);
}

template <class T, class E>
using held_t = decltype(hold<T>(std::declval<E>()));

template <class Rule, class A, class B>
NABLA_ALWAYS_INLINE constexpr auto make_binary(A&& a, B&& b) {
    if constexpr (ActiveOperand<A>) {
        using T = active_value_t<A>;
        using N = active_node<Rule, T, held_t<T, A>, held_t<T, B>>;
        return N(hold<T>(std::forward<A>(a)), hold<T>(std::forward<B>(b)));
    } else {
        using T = active_value_t<B>;
        using N = active_node<Rule, T, held_t<T, A>, held_t<T, B>>;
        return N(hold<T>(std::forward<A>(a)), hold<T>(std::forward<B>(b)));
    }
}

template <class Rule, class A>
NABLA_ALWAYS_INLINE constexpr auto make_unary(A&& a) {
    using T = active_value_t<A>;
    using N = active_node<Rule, T, held_t<T, A>>;
    return N(hold<T>(std::forward<A>(a)));
}

// Two operands of which at least one is active and the other is active of the same value type
// or a constant.
template <class A, class B>
concept ActivePair = (ActiveOperand<A> && ActiveOperand<B> &&
                      std::is_same_v<active_value_t<A>, active_value_t<B>>) ||
                     (ActiveOperand<A> && !ActiveOperand<B> &&
                      ConstantOf<std::remove_cvref_t<B>, active_value_t<A>>) ||
                     (ActiveOperand<B> && !ActiveOperand<A> &&
                      ConstantOf<std::remove_cvref_t<A>, active_value_t<B>>);

}  // namespace detail

template <class Rule, class T, class... Operands>
struct active_node {
    // Whether this node, named, is held by copy (a small intermediate) or collapsed.
    static constexpr bool held_by_copy = detail::held_by_copy<Operands...>;
    using rule = Rule;

    T value;
    std::tuple<Operands...> operands;
    // The collapsed form, made the first time this node is used as a named operand (nothing for a
    // small one).
    [[no_unique_address]] mutable std::conditional_t<held_by_copy, detail::no_cache, collapsed<T>>
        cache{};

    template <class... Args>
    requires(sizeof...(Args) == sizeof...(Operands)) NABLA_ALWAYS_INLINE
        constexpr explicit active_node(Args&&... args)
        : value(compute(args...)),
          operands(std::forward<Args>(args)...) {}

private:
    template <class... Args>
    NABLA_ALWAYS_INLINE static constexpr T compute(const Args&... args) {
        return detail::to_number<T>(Rule::value(detail::value_of(args)...));
    }
};

template <class T>
class active {
public:
    using value_type = T;

    // The value. Writing it directly changes no recorded statement.
    T value{};

    // A passive constant (index 0): never recorded.
    constexpr active() = default;
    template <class U>
    requires(std::is_convertible_v<U, T> && !detail::ActiveOperand<U> &&
             !Expression<U>) constexpr active(const U& v)
        : value(static_cast<T>(v)) {}

    // Assigning an expression records one statement.
    template <detail::ActiveExpression E>
    requires std::is_same_v<detail::active_value_t<E>, T> NABLA_ALWAYS_INLINE active(const E& e) {
        assign(e);
    }
    template <detail::ActiveExpression E>
    requires std::is_same_v<detail::active_value_t<E>, T> NABLA_ALWAYS_INLINE active&
    operator=(const E& e) {
        assign(e);
        return *this;
    }
    template <class U>
    requires(std::is_convertible_v<U, T> && !detail::ActiveOperand<U> && !Expression<U>) active&
    operator=(const U& v) {
        value = static_cast<T>(v);
        index_ = 0;
        generation_ = 0;
        return *this;
    }

    template <class E>
    requires detail::ActivePair<active&, E> NABLA_ALWAYS_INLINE active& operator+=(E&& e) {
        return *this = detail::make_binary<rules::add_rule>(*this, std::forward<E>(e));
    }
    template <class E>
    requires detail::ActivePair<active&, E> NABLA_ALWAYS_INLINE active& operator-=(E&& e) {
        return *this = detail::make_binary<rules::sub_rule>(*this, std::forward<E>(e));
    }
    template <class E>
    requires detail::ActivePair<active&, E> NABLA_ALWAYS_INLINE active& operator*=(E&& e) {
        return *this = detail::make_binary<rules::mul_rule>(*this, std::forward<E>(e));
    }
    template <class E>
    requires detail::ActivePair<active&, E> NABLA_ALWAYS_INLINE active& operator/=(E&& e) {
        return *this = detail::make_binary<rules::div_rule>(*this, std::forward<E>(e));
    }

    // The variable's index on its tape (0 for a constant) and its recording's generation.
    detail::tape_index index() const { return index_; }
    std::uint32_t generation() const { return generation_; }
    // Whether this variable is recorded on a tape (false for constants).
    bool is_active() const { return index_ != 0; }

    // An explicit conversion to a plain number drops the derivative information.
    template <class U>
    requires std::is_arithmetic_v<U>
    explicit operator U() const { return static_cast<U>(primal_of(value)); }

private:
    template <class>
    friend class tape;

    active(const T& v, detail::tape_index index, std::uint32_t generation)
        : value(v),
          index_(index),
          generation_(generation) {}

    template <class V>
    static auto primal_of(const V& v) {
        if constexpr (requires { v.value; })
            return primal_of(v.value);
        else
            return v;
    }

    template <class E>
    NABLA_ALWAYS_INLINE void assign(const E& e) {
        const T v = detail::value_of(e);
        tape<T>* on = detail::active_tape<T>;
        if (on == nullptr) [[unlikely]] {
            detail::check_passive(e);
            value = v;
            index_ = 0;
            generation_ = 0;
            return;
        }
        index_ = detail::record_statement(on, e);
        generation_ = on->generation();
        value = v;
    }

    detail::tape_index index_ = 0;
    std::uint32_t generation_ = 0;
};

template <class T>
NABLA_ALWAYS_INLINE active<T> tape<T>::input(const T& value) {
    return active<T>(value, finish_statement(), generation_);
}

namespace detail {
inline void check_sizes(const char* what, std::size_t values, std::size_t variables) {
    if (values != variables)
        throw_tape_error(std::string(what) + ": " + std::to_string(values) + " values for " +
                         std::to_string(variables) +
                         " variables (the two spans must have one "
                         "size)");
}
}  // namespace detail

template <class T>
void tape<T>::inputs(std::span<const T> values, std::span<active<T>> variables) {
    detail::check_sizes("tape::inputs(values, variables)", values.size(), variables.size());
    const std::size_t n = values.size();
    const std::size_t first = ends_.size();
    ends_.reserve_more(n);
    detail::tape_index* const end = ends_.data() + first;
    const auto pairs_end = static_cast<detail::tape_index>(pairs_.size());
    const std::uint32_t generation = generation_;
    for (std::size_t k = 0; k < n; ++k) {
        end[k] = pairs_end;
        variables[k] = active<T>(values[k], static_cast<detail::tape_index>(first + k), generation);
    }
    ends_.advance(n);
}

template <class T>
void tape<T>::adjoints(std::span<const active<T>> variables, std::span<T> adjoints) const {
    detail::check_sizes("tape::adjoints(variables, adjoints)", adjoints.size(), variables.size());
    if (adjoints_.size() != ends_.size())
        detail::throw_not_swept("adjoints()");
    const T* const adjoint_of = adjoints_.data();
    const std::uint32_t generation = generation_;
    for (std::size_t k = 0; k < variables.size(); ++k) {
        const active<T>& v = variables[k];
        if (v.generation() != generation) [[unlikely]]
            adjoints[k] = adjoint(v);  // a constant (0), or stale: throws
        else
            adjoints[k] = adjoint_of[v.index()];
    }
}

template <class T>
std::span<const T> tape<T>::adjoints_from(const active<T>& first, std::size_t n) const {
    if (adjoints_.size() != ends_.size())
        detail::throw_not_swept("adjoints_from()");
    check(first.generation(), first.index());
    if (first.index() == 0 || n > adjoints_.size() - first.index())
        detail::throw_tape_error("adjoints_from(first, n): the " + std::to_string(n) +
                                 " variables from `first` on are not all on this tape");
    return {adjoints_.data() + first.index(), n};
}

template <class T>
void tape<T>::seed(const active<T>& v, const T& adjoint) {
    if (adjoints_.size() != ends_.size())
        detail::throw_tape_error("seed() before zero_adjoints(): the adjoints are not set up for "
                                 "this recording");
    if (v.index() == 0)
        return;  // a constant: nothing depends on it
    check(v.generation(), v.index());
    adjoints_[v.index()] += adjoint;
}

template <class T>
NABLA_ALWAYS_INLINE T tape<T>::adjoint(const active<T>& v) const {
    if (v.generation() == generation_ && adjoints_.size() == ends_.size()) [[likely]]
        return adjoints_[v.index()];
    if (v.index() == 0)
        return T(0);  // a constant
    check(v.generation(), v.index());
    detail::throw_not_swept("adjoint()");
}

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
    void operator op(A&&, B&&) {                                                                   \
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

NABLA_ACTIVE_UNARY(exp, exp_rule)
NABLA_ACTIVE_UNARY(exp2, exp2_rule)
NABLA_ACTIVE_UNARY(expm1, expm1_rule)
NABLA_ACTIVE_UNARY(log, log_rule)
NABLA_ACTIVE_UNARY(log2, log2_rule)
NABLA_ACTIVE_UNARY(log10, log10_rule)
NABLA_ACTIVE_UNARY(log1p, log1p_rule)
NABLA_ACTIVE_UNARY(sqrt, sqrt_rule)
NABLA_ACTIVE_UNARY(cbrt, cbrt_rule)
NABLA_ACTIVE_UNARY(sin, sin_rule)
NABLA_ACTIVE_UNARY(cos, cos_rule)
NABLA_ACTIVE_UNARY(tan, tan_rule)
NABLA_ACTIVE_UNARY(asin, asin_rule)
NABLA_ACTIVE_UNARY(acos, acos_rule)
NABLA_ACTIVE_UNARY(atan, atan_rule)
NABLA_ACTIVE_UNARY(sinh, sinh_rule)
NABLA_ACTIVE_UNARY(cosh, cosh_rule)
NABLA_ACTIVE_UNARY(tanh, tanh_rule)
NABLA_ACTIVE_UNARY(asinh, asinh_rule)
NABLA_ACTIVE_UNARY(acosh, acosh_rule)
NABLA_ACTIVE_UNARY(atanh, atanh_rule)
NABLA_ACTIVE_UNARY(erf, erf_rule)
NABLA_ACTIVE_UNARY(erfc, erfc_rule)
NABLA_ACTIVE_UNARY(tgamma, tgamma_rule)
NABLA_ACTIVE_UNARY(lgamma, lgamma_rule)
NABLA_ACTIVE_UNARY(abs, abs_rule)
NABLA_ACTIVE_UNARY(fabs, abs_rule)
NABLA_ACTIVE_UNARY(sign, sign_rule)
NABLA_ACTIVE_UNARY(floor, floor_rule)
NABLA_ACTIVE_UNARY(ceil, ceil_rule)
NABLA_ACTIVE_UNARY(round, round_rule)
NABLA_ACTIVE_UNARY(trunc, trunc_rule)

NABLA_ACTIVE_BINARY(atan2, atan2_rule)
NABLA_ACTIVE_BINARY(hypot, hypot_rule)
NABLA_ACTIVE_BINARY(min, min_rule)
NABLA_ACTIVE_BINARY(max, max_rule)
NABLA_ACTIVE_BINARY(fmin, fmin_rule)
NABLA_ACTIVE_BINARY(fmax, fmax_rule)
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

template <class I, detail::ActiveOperand X>
requires std::is_integral_v<I> NABLA_ALWAYS_INLINE constexpr auto polygamma(I n, X&& x) {
    return detail::make_binary<rules::polygamma_rule>(n, std::forward<X>(x));
}
// fma(a, b, c): every operand active or a constant, at least one active.
template <class A, class B, class C>
requires(detail::ActiveOperand<A> || detail::ActiveOperand<B> ||
         detail::ActiveOperand<C>) NABLA_ALWAYS_INLINE constexpr auto fma(A&& a, B&& b, C&& c) {
    using T = detail::active_value_t<std::conditional_t<
        detail::ActiveOperand<A>, A, std::conditional_t<detail::ActiveOperand<B>, B, C>>>;
    using N = active_node<rules::fma_rule, T, detail::held_t<T, A>, detail::held_t<T, B>,
                          detail::held_t<T, C>>;
    return N(detail::hold<T>(std::forward<A>(a)), detail::hold<T>(std::forward<B>(b)),
             detail::hold<T>(std::forward<C>(c)));
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

template <class T>
std::ostream& operator<<(std::ostream& out, const active<T>& x) {
    return out << x.value;
}

}  // namespace nabla

template <class T, class U>
requires std::is_arithmetic_v<U>
struct std::common_type<nabla::active<T>, U> {
    using type = nabla::active<T>;
};
template <class T, class U>
requires std::is_arithmetic_v<U>
struct std::common_type<U, nabla::active<T>> {
    using type = nabla::active<T>;
};

// The limits of the value type.
template <class T>
struct std::numeric_limits<nabla::active<T>> : std::numeric_limits<T> {
    using value_type = nabla::active<T>;
    static constexpr value_type min() noexcept { return std::numeric_limits<T>::min(); }
    static constexpr value_type max() noexcept { return std::numeric_limits<T>::max(); }
    static constexpr value_type lowest() noexcept { return std::numeric_limits<T>::lowest(); }
    static constexpr value_type epsilon() noexcept { return std::numeric_limits<T>::epsilon(); }
    static constexpr value_type infinity() noexcept { return std::numeric_limits<T>::infinity(); }
    static constexpr value_type quiet_NaN() noexcept { return std::numeric_limits<T>::quiet_NaN(); }
};
