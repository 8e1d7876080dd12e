#pragma once
// Recording: a statement assigned to an active variable becomes one tape entry
// (record_statement), a named intermediate used as an operand is held by copy or collapsed into
// the scratch memory once (hold, collapse), and an expression built while no tape records is
// checked to read no active variable (check_passive).

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../../config.hpp"
#include "../../rules.hpp"
#include "../../rules/functions.hpp"
#include "../../values.hpp"
#include "../tape.hpp"
#include "access.hpp"
#include "builder.hpp"
#include "operands.hpp"
#include "storage.hpp"

namespace nabla::detail {

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
struct merged_part {
    using type = E;
};
template <class E>
requires(accumulated_operand<E> >= 0) struct merged_part<E> {
    using type = std::remove_cvref_t<decltype(std::declval<const E&>().operands.*
                                              operand<1 - accumulated_operand<E>, E>)>;
};
template <class E>
using merged_part_t = typename merged_part<E>::type;

// Records e as one statement on the active tape and returns the new statement's index (a
// statement is recorded even when every variable e reads is passive: it then has no partials).
// An accumulation, sum + e with sum the statement recorded just before (sum += e), keeps sum's
// partial 1 as a bit of the statement's end instead of a pair. A statement whose partials are
// those of one collapsed intermediate (more than two), scaled, refers to them (docs/design.md,
// "Reverse mode inside").
template <class T, class E>
NABLA_ALWAYS_INLINE tape_index record_statement(tape<T>* target, const E& e) {
    using Builder = statement_builder<T, E, merged_part_t<E>>;
    constexpr bool may_refer = Builder::Slots > 0 && Builder::Leaves == 0 && Builder::Names == 0;
    Builder b{target};
    cursor<T> out = tape_access::statement_cursor(*target);
    out.open(may_refer && leaf_count<E> < 2 ? 2 : leaf_count<E>);
    // The accumulation bit of the statement's end, or 0. (A 32-bit number, not a bool: g++ kept
    // the bool in memory, stored as a byte and loaded as 32 bits, a store-forwarding stall on
    // every statement.)
    tape_index accumulation = 0;
    if constexpr (accumulated_operand<E> >= 0) {
        constexpr std::size_t k = accumulated_operand<E>;
        const active<T>& sum = e.operands.*operand<k, E>;
        // (Not before the tape's first pair: the statements before it have an end of 0, and the
        // sweep skips them.)
        if (sum.index() == tape_access::last_statement(*target) &&
            sum.generation() == b.generation && tape_access::has_pairs(*target))
            accumulation = accumulates_bit;
        // (sum's pair, when there is one, is written as it comes: the places for merging are
        // the other operand's.)
        if (accumulation == 0)
            propagate_operand_at<k, position<0, 0, unmerged_sum>>(b, out, e, T(1));
        propagate_operand_at<1 - k, first_position>(b, out, e, T(1));
        // A sum that accumulates and is also a variable the other operand reads directly
        // (s += s * x) is merged into it instead of kept as a bit.
        if (accumulation != 0 && b.merge_sum(sum))
            accumulation = 0;
    } else {
        propagate(b, out, e, T(1), walk_t<E, first_position>{});
    }
    b.expand_named(out);
    b.write_leaves(out);
    if constexpr (may_refer) {
        // (Only when nothing else was written: an accumulated sum that does not accumulate has a
        // pair of its own.)
        const std::size_t total = b.merge_collapsed();
        const auto one = b.sole_collapsed();
        if (one.found && one.count > 2 && out.written == 0) {
            out.push(one.begin, one.adjoint);
            out.push(one.count, T(0));
            out.close();
            return tape_access::finish_referring_statement(*target, accumulation, one.count);
        }
        b.write_collapsed(out, total);
    } else {
        b.expand_collapsed(out);
    }
    out.close();
    return tape_access::finish_statement(*target, accumulation);
}

// Whether an expression reads an active variable or an active intermediate.
// (By the statement's walk (builder.hpp), with no function for each variable: recursive,
// these functions cost compile time quadratic in a statement's depth; out of line, they would take
// the expression's address, and an expression whose address escapes is kept in memory, written
// and read by every statement.)
template <class E>
NABLA_ALWAYS_INLINE bool reads_active(const E& e);
template <class E, class... Nodes, class... Leaves, class... Collapsed, class... Named>
NABLA_ALWAYS_INLINE bool reads_active(const E& e,
                                      walk_kinds<type_list<Nodes...>,
                                                 type_list<Leaves...>,
                                                 type_list<Collapsed...>,
                                                 type_list<Named...>>) {
    return ((at_path(e, typename Leaves::path{}).index() != 0) || ... || false) ||
           ((at_path(e, typename Collapsed::path{}).count != 0) || ... || false) ||
           (reads_active(at_path(e, typename Named::path{}).node) || ... || false);
}
template <class E>
NABLA_ALWAYS_INLINE bool reads_active(const E& e) {
    if constexpr (ActiveOperand<E>)
        return reads_active(e, walk_t<E, first_position>{});
    else
        return false;
}

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
    NABLA_ALWAYS_INLINE void collapsed_operand(const collapsed<T>& c, const T& adjoint) {
        begins[S] = c.begin;
        counts[S] = c.count;
        generations[S] = c.generation;
        scales[S] = adjoint * c.scale;
    }
};
template <class T, std::size_t Slots, std::size_t... K>
NABLA_ALWAYS_INLINE bool
one_intermediate(const shared_uses<T, Slots>& u, T& scale, std::index_sequence<K...>) {
    scale = u.scales[0];
    ((scale += K == 0 ? T(-0.0) : u.scales[K]), ...);
    return ((u.begins[K] == u.begins[0] && u.counts[K] == u.counts[0] &&
             u.generations[K] == u.generations[0]) &&
            ...);
}

// Whether a sum continues a statement recorded in pieces (below, within_room): its first term,
// down the sum, is a collapsed piece.
template <class E>
inline constexpr bool continues_pieces = is_collapsed_v<E>;
template <class T, class A, class B>
inline constexpr bool continues_pieces<active_node<rules::add_rule, T, A, B>> = continues_pieces<A>;
template <class T, class A, class B>
inline constexpr bool continues_pieces<active_node<rules::sub_rule, T, A, B>> = continues_pieces<A>;

// The collapsed form of a node, its partials in the scratch memory, made once into `form`: a
// named node's cache, or a new form (generation 0) for a piece of a long statement (below,
// within_room). (Once made, it is returned without asking the tape: a form made in another
// recording, whose variables are then stale too, is reported by the statement that uses it, as
// making it again would be; a form without partials stays right. So the compiler sees that the
// uses of one intermediate are the same.) A form made while no tape records is kept as well, so
// a later use returns the cached form on both paths: with one path rebuilding it, every use after
// the first was a join of two forms, which g++ could not see equal, and a statement merged the
// uses of s6 = 1 / (r2 * r2 * r2) at run time.
template <class Rule, class T, class... Operands>
NABLA_ALWAYS_INLINE collapsed<T> collapse(const active_node<Rule, T, Operands...>& e,
                                          collapsed<T>& form) {
    if (form.generation != 0)
        return form;
    using Node = active_node<Rule, T, Operands...>;
    if constexpr (leaf_count<Node> == 0 && named_list_t<Node>::size == 0 &&
                  0 < collapsed_count<Node>) {
        shared_uses<T, collapsed_count<Node>> u;
        struct no_pairs {
        } out;
        propagate(u, out, e, T(1), walk_t<Node, first_position>{});
        T scale;
        if (one_intermediate(u, scale, std::make_index_sequence<collapsed_count<Node>>{})) {
            form = collapsed<T>{e.value, u.begins[0], u.counts[0], u.generations[0], scale};
            return form;
        }
    }
    tape<T>* target = active_tape<T>;
    if (target == nullptr) {
        check_passive(e);
        form = collapsed<T>{e.value, 0, 0, passive_generation, T(1)};
        return form;
    }
    using E = active_node<Rule, T, Operands...>;
    using Builder = statement_builder<T, E>;
    const std::size_t begin = tape_access::scratch(*target).size();
    Builder b{target};
    cursor<T> out = tape_access::scratch_cursor(*target);
    out.open(leaf_count<E>);
    propagate(b, out, e, T(1), walk_t<E, first_position>{});
    if constexpr (leaf_count<E> == 0 && Builder::Names == 0 && Builder::Slots > 0) {
        // A function of collapsed intermediates only that are not all one (above): when one of
        // them has partials and the others none, its partials are that one's, scaled, and
        // nothing is copied.
        const std::size_t total = b.merge_collapsed();
        const auto one = b.sole_collapsed();
        if (one.found) {
            form = collapsed<T>{e.value, one.begin, one.count, target->generation(), one.adjoint};
            return form;
        }
        b.write_collapsed(out, total);
    } else if constexpr (continues_pieces<E>) {
        // The piece before, when its partials end where these begin and it is added as it is,
        // is extended by these rather than copied: a long sum's pieces are then written once.
        std::size_t total = b.merge_collapsed();
        const bool extend = b.kept[0] && b.counts[0] != 0 && identical(b.adjoints[0], T(1)) &&
                            std::size_t(b.begins[0]) + b.counts[0] == begin;
        if (extend) {
            b.kept[0] = false;
            total -= b.counts[0];
        }
        b.expand_named(out);
        b.write_leaves(out);
        b.write_collapsed(out, total);
        if (extend) {
            out.close();
            const std::size_t count = tape_access::scratch(*target).size() - begin;
            form = collapsed<T>{e.value, b.begins[0], static_cast<tape_index>(b.counts[0] + count),
                                target->generation(), T(1)};
            return form;
        }
    } else {
        b.expand_named(out);
        b.write_leaves(out);
        b.expand_collapsed(out);
    }
    out.close();
    const std::size_t count = tape_access::scratch(*target).size() - begin;
    form = collapsed<T>{e.value, static_cast<tape_index>(begin), static_cast<tape_index>(count),
                        target->generation(), T(1)};
    return form;
}

// A node holds at most path_limit subexpressions, so that every statement is walked by paths
// (builder.hpp): an operand that would make it larger, a temporary node of more than its share of
// them, is collapsed first, in a function of its own. A statement beyond that size (a sum of many
// products) is then recorded in pieces: the first of up to path_limit subexpressions, and the
// sums that continue it (the first term, down the sum, is the collapsed piece before) of up to
// piece_limit each. Small pieces of one shape share one function, and the terms of a long sum
// come in a few shapes, so a statement's compile time grows with its length, and slowly.
inline constexpr std::size_t piece_limit = 10;
// A temporary node, held by the node made of it as it is (a named one is held as one operand,
// whatever it continues).
template <class E>
inline constexpr bool is_temporary_node =
    is_active_node_v<std::remove_cvref_t<E>> && !std::is_lvalue_reference_v<E>;
template <class E>
inline constexpr bool continues_temporary_pieces =
    !std::is_lvalue_reference_v<E> && continues_pieces<std::remove_cvref_t<E>>;
template <class E>
inline constexpr std::size_t node_limit = continues_temporary_pieces<E> ? piece_limit : path_limit;
// The subexpressions of an operand as a node holds it.
template <class E>
inline constexpr std::size_t held_walk_size = is_temporary_node<E>
                                                  ? walk_size<std::remove_cvref_t<E>>
                                                  : (ActiveOperand<E> ? 1 : 0);
template <class E>
[[gnu::noinline]] collapsed<active_value_t<E>> collapse_piece(const E& e) {
    collapsed<active_value_t<E>> form{};
    return collapse(e, form);
}
template <std::size_t Room, class E>
NABLA_ALWAYS_INLINE constexpr decltype(auto) within_room(E&& e) {
    if constexpr (is_temporary_node<E> && Room < held_walk_size<E>)
        return collapse_piece(e);
    else
        return static_cast<E&&>(e);
}

// An operand as a node holds it: variables, named and collapsed intermediates and constants by
// value, a temporary node moved in, a named node (an lvalue) held by copy (`named`) when it is
// small and collapsed otherwise.
//
// An integer stays an integer only for the rules that read it as one (an integer power's
// exponent, the index of an indexed function such as polygamma); elsewhere it becomes a number of
// the tape's type, as in the other modes, so that a rule never computes with it in integer
// arithmetic (1 / b of x / 8).
template <class Rule>
inline constexpr bool integer_operands = false;
template <>
inline constexpr bool integer_operands<rules::powi_rule> = true;
template <>
inline constexpr bool integer_operands<rules::ldexp_rule> = true;
#define NABLA_INTEGER_INDEX(function, rule)                                                        \
    template <>                                                                                    \
    inline constexpr bool integer_operands<rules::rule> = !rules::real_order<rules::rule>;
NABLA_INDEXED_FUNCTIONS(NABLA_INTEGER_INDEX)
#undef NABLA_INTEGER_INDEX
#define NABLA_INTEGER_DEGREE(function, rule)                                                       \
    template <>                                                                                    \
    inline constexpr bool integer_operands<rules::rule> = true;
NABLA_PARAMETRIC_FUNCTIONS(NABLA_INTEGER_DEGREE)
#undef NABLA_INTEGER_DEGREE

template <class T, class E, bool KeepIntegers = false>
NABLA_ALWAYS_INLINE constexpr decltype(auto) hold(E&& e) {
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
            return collapse(e, e.cache);
    } else if constexpr (ActiveOperand<D> && (std::is_lvalue_reference_v<E> ||
                                              std::is_const_v<std::remove_reference_t<E>>))
        return D(e);
    else if constexpr (ActiveOperand<D>)
        // A temporary, moved once: into the node that holds it.
        return static_cast<D&&>(e);
    else if constexpr (std::is_integral_v<D> && KeepIntegers)
        return D(e);
    else if constexpr (DualLike<D>)
        // A dual number is a variable of an enclosing forward derivative (forward over reverse):
        // it keeps its tangents.
        return static_cast<T>(e);
    else
        // The plain number under any nesting of dual numbers, so no rule ever computes a partial
        // with respect to a constant (in pow(x, 2.0) on duals, the exponent's tangent would
        // otherwise meet log of a negative base and turn into NaN).
        return static_cast<primal_type_t<T>>(e);
}

template <class T, class E>
using held_t = std::remove_cvref_t<decltype(hold<T, E>(std::declval<E>()))>;
template <class Rule, class T, class E>
using held_by_rule_t =
    std::remove_cvref_t<decltype(hold<T, E, integer_operands<Rule>>(std::declval<E>()))>;

// (Sized: the operands are already within room, and are held as they are.)
template <class Rule, bool Sized = false, class A, class B>
NABLA_ALWAYS_INLINE constexpr auto make_binary(A&& a, B&& b) {
    constexpr std::size_t limit = node_limit<A>;
    if constexpr (!Sized && held_walk_size<A> + held_walk_size<B> + 1 > limit) {
        // A sum that continues pieces: the sum so far is the next piece, and the term stays
        // (collapsed too, it would come between the pieces, which could then not be extended).
        constexpr bool continues = continues_temporary_pieces<A>;
        constexpr std::size_t room_a = continues ? 0 : (limit - 1) / 2;
        constexpr std::size_t room_b = continues ? path_limit - 2 : (limit - 1) / 2;
        return make_binary<Rule, true>(within_room<room_a>(std::forward<A>(a)),
                                       within_room<room_b>(std::forward<B>(b)));
    } else {
        using T = active_value_t<std::conditional_t<ActiveOperand<A>, A, B>>;
        using N = active_node<Rule, T, held_by_rule_t<Rule, T, A>, held_by_rule_t<Rule, T, B>>;
        return N(hold<T, A, integer_operands<Rule>>(std::forward<A>(a)),
                 hold<T, B, integer_operands<Rule>>(std::forward<B>(b)));
    }
}

template <class Rule, class A>
NABLA_ALWAYS_INLINE constexpr auto make_unary(A&& a) {
    if constexpr (held_walk_size<A> + 1 > node_limit<A>) {
        return make_unary<Rule>(within_room<node_limit<A> - 1>(std::forward<A>(a)));
    } else {
        using T = active_value_t<A>;
        using N = active_node<Rule, T, held_t<T, A>>;
        return N(hold<T>(std::forward<A>(a)));
    }
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

}  // namespace nabla::detail
