#pragma once
// The statement builder: one statement's partials, multiplied along the expression down to the
// active variables it reads (propagate), merged where a variable or an intermediate is used more
// than once, and written as (operand, partial) pairs to the tape or, for a collapsed
// intermediate, to the scratch memory. Every index into the builder's arrays is a constant known
// from the types, so the arrays stay in registers (docs/design.md, "Reverse mode inside").

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../../config.hpp"
#include "../../core/evaluate.hpp"
#include "../tape.hpp"
#include "access.hpp"
#include "operands.hpp"
#include "storage.hpp"

namespace nabla::detail {

template <auto... Members>
struct member_path;
template <class E, std::size_t Id, class P, class Path>
struct walk_list;
// How many subexpressions a walk visits in an expression.
template <class E>
inline constexpr std::size_t walk_size = ActiveOperand<E> ? 1 : 0;
template <class Rule, class T, class... Operands>
inline constexpr std::size_t walk_size<active_node<Rule, T, Operands...>> = (walk_size<Operands> +
                                                                             ... + 1);
// The most subexpressions a node holds: a path's type grows with its depth, and so does the
// compile time of each entry (the nodes see to it: record.hpp, within_room).
inline constexpr std::size_t path_limit = 32;
template <class E, class P>
using walk_t = typename walk_list<E, 0, P, member_path<>>::type;
template <class Nodes, class Leaves, class Collapsed, class Named>
struct walk_kinds;
template <class Builder,
          class Out,
          class T,
          class E,
          class... Nodes,
          class... Leaves,
          class... Collapsed,
          class... Named>
void propagate(Builder& b,
               Out& out,
               const E& e,
               const T& adjoint,
               walk_kinds<type_list<Nodes...>,
                          type_list<Leaves...>,
                          type_list<Collapsed...>,
                          type_list<Named...>>);

// Collects one statement's partials for `out` (the tape, or the scratch memory when an
// intermediate is collapsed): active leaves in places, merged by index and written after the named
// intermediates are expanded; named intermediates merged when they are the same, collapsed ones by
// offset, and both expanded at the end. (Merged: the part of E whose variables have places, all
// of E but an accumulated sum.)
//
// Its type holds only what it needs of E's (so that the many small functions of a long
// statement do not each carry the statement's whole type): the number of collapsed operands,
// the number of variables the merged part reads directly, and the named intermediates' types.
template <class T, std::size_t SlotCount, std::size_t DirectLeaves, class NamedList>
struct statement_builder_of {
    static constexpr std::size_t Slots = SlotCount;
    using names = NamedList;
    static constexpr std::size_t Names = names::size;

    tape<T>* target;
    std::uint32_t generation = target->generation();
    // The named intermediates, in the order of the expression: where, their names, their
    // adjoints.
    std::array<const void*, Names> name_at{};
    std::array<T, Names> name_adjoints{};
    std::array<bool, Names> name_kept{};
    // The collapsed operands, in the order of the expression: where their partials are, how
    // many, their adjoints. One with no partials (every variable it read was passive) gets a begin
    // no other has: its offset is also where the next intermediate's partials begin.
    static constexpr tape_index no_partials = std::numeric_limits<tape_index>::max();
    std::array<tape_index, Slots> begins{};
    std::array<tape_index, Slots> counts{};
    std::array<T, Slots> adjoints{};
    std::array<bool, Slots> kept{};

    // The K-th named intermediate is the first of its type in the statement: its variables get
    // places among the leaves. (A later one of the same type is almost always the same
    // intermediate, merged with it; when it is another, its pairs are written as they come.)
    template <std::size_t K, std::size_t... J>
    static constexpr bool first_of_type(std::index_sequence<J...>) {
        return (!std::is_same_v<at<J, names>, at<K, names>> && ... && true);
    }
    template <std::size_t K>
    static constexpr bool first_of_type() {
        return first_of_type<K>(std::make_index_sequence<K>{});
    }
    // Where the variables of the K-th named intermediate are among the leaves.
    template <std::size_t... K>
    static constexpr std::size_t named_leaves_before(std::index_sequence<K...>) {
        return DirectLeaves + ((first_of_type<K>() ? leaf_count<at<K, names>> : 0) + ... + 0);
    }
    // The active variables the statement reads, in the order of the expression (the ones inside
    // named intermediates last), with their partials; index 0 for a constant or one not read (a
    // use of a named intermediate merged into an earlier one, an accumulated sum).
    // A statement that reads more than leaf_merge_limit variables writes them as they come:
    // merging them would compare every two, and places for them cost the compiler several
    // functions each.
    static constexpr bool places_leaves =
        named_leaves_before(std::make_index_sequence<Names>{}) <= leaf_merge_limit;
    static constexpr std::size_t Leaves =
        places_leaves ? named_leaves_before(std::make_index_sequence<Names>{}) : 0;
    std::array<tape_index, Leaves> leaf_index{};
    std::array<T, Leaves> leaf_partial{};
    std::array<bool, Leaves> leaf_kept{};

    // The variable at place L (an unmerged leaf or sum: written to `out` at once).
    template <std::size_t L>
    NABLA_ALWAYS_INLINE void leaf(cursor<T>& out, const active<T>& v, const T& adjoint) {
        // A variable of another recording must be passive (index 0), or it is stale. (Two forms
        // of that check: for a placed variable, testing the index here tells the compiler that
        // past it the index is the one to write, with no select, which clang++ makes shorter
        // code of; for one written as it comes, g++ made better code of the select.)
        const bool recorded = v.generation() == generation;
        if constexpr (L == unmerged_leaf || L == unmerged_sum || L == unplaced_leaf) {
            if (!recorded) [[unlikely]]
                tape_access::check(*target, v.generation(), v.index());
        } else {
            if (!recorded && v.index() != 0) [[unlikely]]
                throw_stale();
        }
        if constexpr (L == unmerged_leaf) {
            out.push(recorded ? v.index() : 0, adjoint);
        } else if constexpr (L == unmerged_sum) {
            if (recorded)
                out.push(v.index(), adjoint);
        } else if constexpr (L == unplaced_leaf) {
            // (Past the check, a variable of another recording is passive: index 0.)
            out.push_if(v.index(), adjoint, recorded && v.index() != 0);
        } else {
            leaf_index[L] = v.index();
            leaf_partial[L] = adjoint;
        }
    }

    // Adds the partial of the K-th variable to the J-th's when both are one variable and the K-th
    // was not merged into an earlier one (every J gets an addition, as for named operands; of -0,
    // the exact identity, when it is not the one, so the optimiser may drop it: +0 it must add,
    // as it turns -0 into +0).
    template <std::size_t K, std::size_t J>
    NABLA_ALWAYS_INLINE void merge_leaf(bool& merged) {
        const bool take = !merged && leaf_index[J] == leaf_index[K];
        leaf_partial[J] += take ? leaf_partial[K] : T(-0.0);
        merged = merged || take;
    }
    template <std::size_t K, std::size_t... J>
    NABLA_ALWAYS_INLINE void merge_leaf(std::index_sequence<J...>) {
        bool merged = false;
        (merge_leaf<K, J>(merged), ...);
        leaf_kept[K] = !merged && leaf_index[K] != 0;
    }
    template <std::size_t K>
    NABLA_ALWAYS_INLINE void write_leaf(cursor<T>& out) {
        out.push_if(leaf_index[K], leaf_partial[K], leaf_kept[K]);
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
        if constexpr (places_leaves && sizeof...(K) > 0) {
            const tape_index s = sum.index();
            if ((unsigned(leaf_index[K] == s) | ...) != 0) [[unlikely]] {
                bool merged = false;
                (merge_sum_into<K>(s, merged), ...);
                return true;
            }
        }
        return false;
    }
    template <std::size_t K>
    NABLA_ALWAYS_INLINE void merge_sum_into(tape_index sum, bool& merged) {
        const bool take = !merged && leaf_index[K] == sum;
        leaf_partial[K] += take ? T(1) : T(-0.0);
        merged = merged || take;
    }
    NABLA_ALWAYS_INLINE bool merge_sum(const active<T>& sum) {
        return merge_sum(sum, std::make_index_sequence<DirectLeaves>{});
    }

    // The collapsed operand at slot S.
    template <std::size_t S>
    NABLA_ALWAYS_INLINE void collapsed_operand(const collapsed<T>& c, const T& adjoint) {
        // (Past the check, a collapsed operand of another recording has no partials.)
        if (c.generation != generation) [[unlikely]]
            tape_access::check(*target, c.generation,
                               c.count == 0 ? 0 : 1);  // passive, or a stale one: throws
        begins[S] = c.count != 0 ? c.begin : no_partials;
        counts[S] = c.count;
        adjoints[S] = adjoint * c.scale;
    }

    // The named operand at place K.
    template <std::size_t K, class Node>
    NABLA_ALWAYS_INLINE void named_operand(const named<Node>& n, const T& adjoint) {
        name_at[K] = &n;
        name_adjoints[K] = adjoint;
    }

    // Adds the adjoint of the K-th named operand to the J-th's when both are the same
    // intermediate (the same in every part) and it was not merged into an earlier one. (Every J
    // gets an addition, of 0 when it is not the one: choosing the J to add to would make the
    // compiler address the adjoints through a pointer, in memory.)
    template <std::size_t K, std::size_t J>
    NABLA_ALWAYS_INLINE void merge_into(bool& merged) {
        if constexpr (std::is_same_v<at<J, names>, at<K, names>>) {
            using N = at<K, names>;
            const bool take = !merged && same_expression(*static_cast<const N*>(name_at[J]),
                                                         *static_cast<const N*>(name_at[K]));
            name_adjoints[J] += take ? name_adjoints[K] : T(-0.0);
            merged = merged || take;
        }
    }
    template <std::size_t K, std::size_t... J>
    NABLA_ALWAYS_INLINE void merge_named(std::index_sequence<J...>) {
        bool merged = false;
        (merge_into<K, J>(merged), ...);
        name_kept[K] = !merged;
    }
    template <std::size_t K>
    NABLA_ALWAYS_INLINE void expand_one(cursor<T>& out) {
        using N = at<K, names>;
        using P = position<0, 0,
                           !places_leaves       ? unplaced_leaf
                           : first_of_type<K>() ? named_leaves_before(std::make_index_sequence<K>{})
                                                : unmerged_leaf>;
        if (name_kept[K])
            propagate(*this, out, static_cast<const N*>(name_at[K])->node, name_adjoints[K],
                      walk_t<decltype(N::node), P>{});
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
    // intermediate (the same partials: the same range of the scratch memory, which only grows
    // within a recording; a piece of a long statement extended in place shares its begin with the
    // piece before); every J gets an addition, as for named operands. (Apart
    // from merge_leaf: one helper for both merges was slower on Lennard-Jones with either
    // compiler; the code the compilers make of these folds is fragile.)
    template <std::size_t K, std::size_t J>
    NABLA_ALWAYS_INLINE void merge_slot(bool& merged) {
        const bool take = !merged && begins[J] == begins[K] && counts[J] == counts[K];
        adjoints[J] += take ? adjoints[K] : T(0);
        merged = merged || take;
    }
    template <std::size_t K, std::size_t... J>
    NABLA_ALWAYS_INLINE void merge_collapsed(std::index_sequence<J...>) {
        bool merged = false;
        (merge_slot<K, J>(merged), ...);
        kept[K] = !merged;
    }
    template <std::size_t... K>
    NABLA_ALWAYS_INLINE std::size_t merge_collapsed(std::index_sequence<K...>) {
        (merge_collapsed<K>(std::make_index_sequence<K>{}), ...);
        return ((kept[K] ? std::size_t(counts[K]) : 0) + ...);
    }

    // Merges the collapsed operands that are one intermediate; how many partials they have.
    NABLA_ALWAYS_INLINE std::size_t merge_collapsed() {
        if constexpr (Slots > 0)
            return merge_collapsed(std::make_index_sequence<Slots>{});
        else
            return 0;
    }
    // After merge_collapsed: the one collapsed operand with partials, if there is exactly one.
    struct sole_intermediate {
        bool found;
        tape_index begin;
        tape_index count;
        T adjoint;
    };
    template <std::size_t K>
    NABLA_ALWAYS_INLINE void note_sole(sole_intermediate& one, std::size_t& with_partials) const {
        if (kept[K] && counts[K] != 0) {
            ++with_partials;
            one = sole_intermediate{true, begins[K], counts[K], adjoints[K]};
        }
    }
    template <std::size_t... K>
    NABLA_ALWAYS_INLINE sole_intermediate sole_collapsed(std::index_sequence<K...>) const {
        sole_intermediate one{false, 0, 0, T(0)};
        std::size_t with_partials = 0;
        (note_sole<K>(one, with_partials), ...);
        one.found = with_partials == 1;
        return one;
    }
    NABLA_ALWAYS_INLINE sole_intermediate sole_collapsed() const {
        return sole_collapsed(std::make_index_sequence<Slots>{});
    }

    // Writes the merged collapsed operands' partials, times their adjoints, after the leaves.
    NABLA_ALWAYS_INLINE void expand_collapsed(cursor<T>& out) {
        write_collapsed(out, merge_collapsed());
    }
    // The K-th collapsed operand's partials, unless it was merged into an earlier one. (Every
    // index into the builder's arrays is a constant: a loop over them kept them in memory.)
    template <std::size_t K>
    NABLA_ALWAYS_INLINE void
    write_collapsed_operand(cursor<T>& out, const tape_index* index, const T* partial) {
        if (!kept[K])
            return;
        const T a = adjoints[K];
        const tape_index begin = begins[K];
        const std::size_t n = counts[K];
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
    NABLA_ALWAYS_INLINE void write_collapsed_operands(cursor<T>& out,
                                                      const tape_index* index,
                                                      const T* partial,
                                                      std::index_sequence<K...>) {
        (write_collapsed_operand<K>(out, index, partial), ...);
    }
    // The same after merge_collapsed, which gave `total`.
    NABLA_ALWAYS_INLINE void write_collapsed(cursor<T>& out, std::size_t total) {
        if constexpr (Slots > 0) {
            if (total == 0)
                return;
            out.close();
            out.open(total);
            write_collapsed_operands(out, tape_access::scratch(*target).indices(),
                                     tape_access::scratch(*target).partials(),
                                     std::make_index_sequence<Slots>{});
        }
    }
};

template <class T, class E, class Merged = E>
using statement_builder =
    statement_builder_of<T, collapsed_count<E>, direct_leaf_count<Merged>, named_list_t<E>>;

// The partial of a node with respect to its J-th operand, from the rule table and the values the
// node holds (no lambdas here or below: every step of a statement is forced inline, so the
// compiler's inlining budget never splits a statement into calls).
template <std::size_t J, class Rule, class T, class... Operands, std::size_t... K>
NABLA_ALWAYS_INLINE T node_partial(const active_node<Rule, T, Operands...>& e,
                                   std::index_sequence<K...>) {
    using E = active_node<Rule, T, Operands...>;
    return to_number<T>(Rule::template partial<J>(e.value, value_of(e.operands.*operand<K, E>)...));
}

// A statement's active subexpressions in pre-order (a node before its operands; constants are
// left out), each with its number in that order, its position in the statement builder and its
// path from the statement: the member pointers that reach it, root .* ... .* Path. The walk below
// visits this list with folds instead of recursing down the expression: a recursion makes one
// function per level, and the compiler optimises each before inlining it into the next, which
// costs compile time quadratic in the depth of a statement.
//
// A path of constant member pointers lets the compiler keep the expression in registers, where
// addresses kept in an array make it store the expression to memory and read it back (three
// times the recording time of Lennard-Jones's statements).
template <auto... Members>
struct member_path {};

template <class E, std::size_t Id, class P, class Path, std::size_t... Children>
struct walk_entry {
    using type = E;
    using position = P;
    using path = Path;
    static constexpr std::size_t id = Id;
};

// The subexpression at a path from the root.
template <class E, auto... Members>
NABLA_ALWAYS_INLINE constexpr const auto& at_path(const E& root, member_path<Members...>) {
    return (root.*....*Members);
}

template <std::size_t I, class... Operands>
constexpr std::size_t walk_size_before() {
    std::size_t n = 0, j = 0;
    ((n += j++ < I ? walk_size<Operands> : 0), ...);
    return n;
}

// A walk's entries by kind, each in pre-order.
template <class Nodes, class Leaves, class Collapsed, class Named>
struct walk_kinds {};

template <class... Kinds>
struct concat_kinds;
template <class... N, class... L, class... C, class... M>
struct concat_kinds<walk_kinds<N, L, C, M>...> {
    using type = walk_kinds<concat<N...>, concat<L...>, concat<C...>, concat<M...>>;
};

// The path of operand I of the node Node at Path.
template <class Path, class Node, std::size_t I>
struct operand_path;
template <auto... Members, class Node, std::size_t I>
struct operand_path<member_path<Members...>, Node, I> {
    using type = member_path<Members..., &Node::operands, operand<I, Node>>;
};

template <class E, std::size_t Id, class P, class Path>
struct walk_list {
    // (A constant: no entry.)
    using type = walk_kinds<type_list<>, type_list<>, type_list<>, type_list<>>;
};
template <class T, std::size_t Id, class P, class Path>
struct walk_list<active<T>, Id, P, Path> {
    using type = walk_kinds<type_list<>,
                            type_list<walk_entry<active<T>, Id, P, Path>>,
                            type_list<>,
                            type_list<>>;
};
template <class T, std::size_t Id, class P, class Path>
struct walk_list<collapsed<T>, Id, P, Path> {
    using type = walk_kinds<type_list<>,
                            type_list<>,
                            type_list<walk_entry<collapsed<T>, Id, P, Path>>,
                            type_list<>>;
};
template <class Node, std::size_t Id, class P, class Path>
struct walk_list<named<Node>, Id, P, Path> {
    using type = walk_kinds<type_list<>,
                            type_list<>,
                            type_list<>,
                            type_list<walk_entry<named<Node>, Id, P, Path>>>;
};
template <class Node, std::size_t Id, class P, class Path, class Indices>
struct node_walk_list;
template <class Rule,
          class T,
          class... Operands,
          std::size_t Id,
          class P,
          class Path,
          std::size_t... I>
struct node_walk_list<active_node<Rule, T, Operands...>, Id, P, Path, std::index_sequence<I...>> {
    using Node = active_node<Rule, T, Operands...>;
    using type = typename concat_kinds<
        walk_kinds<
            type_list<
                walk_entry<Node, Id, P, Path, Id + 1 + walk_size_before<I, Operands...>()...>>,
            type_list<>,
            type_list<>,
            type_list<>>,
        typename walk_list<Operands,
                           Id + 1 + walk_size_before<I, Operands...>(),
                           operand_position<P, I, Operands...>,
                           typename operand_path<Path, Node, I>::type>::type...>::type;
};
template <class Rule, class T, class... Operands, std::size_t Id, class P, class Path>
struct walk_list<active_node<Rule, T, Operands...>, Id, P, Path>
    : node_walk_list<active_node<Rule, T, Operands...>,
                     Id,
                     P,
                     Path,
                     std::index_sequence_for<Operands...>> {};

// Operand I of a node: its adjoint, at the number Child (a constant has no entry).
template <std::size_t I, std::size_t Child, class Rule, class T, class... Operands, std::size_t N>
NABLA_ALWAYS_INLINE void pass_down_one(const active_node<Rule, T, Operands...>& e,
                                       const T& adjoint,
                                       std::array<T, N>& adjoints) {
    if constexpr (ActiveOperand<std::tuple_element_t<I, std::tuple<Operands...>>>)
        adjoints[Child] = node_partial<I>(e, std::index_sequence_for<Operands...>{}) * adjoint;
}
template <std::size_t... Children, class E, class T, std::size_t N, std::size_t... I>
NABLA_ALWAYS_INLINE void pass_down_each(const E& e,
                                        const T& adjoint,
                                        std::array<T, N>& adjoints,
                                        std::index_sequence<I...>) {
    (pass_down_one<I, Children>(e, adjoint, adjoints), ...);
}
// A node's entry: the adjoints of its operands, whose numbers are Children. (Unary and binary
// nodes written out, with no function for each operand: most nodes are those.)
template <class Root,
          class T,
          std::size_t N,
          class E,
          std::size_t Id,
          class P,
          auto... Members,
          std::size_t... Children>
NABLA_ALWAYS_INLINE void pass_down(const Root& root,
                                   std::array<T, N>& adjoints,
                                   walk_entry<E, Id, P, member_path<Members...>, Children...>*) {
    const E& e = at_path(root, member_path<Members...>{});
    pass_down_from(e, adjoints,
                   static_cast<walk_entry<E, Id, P, member_path<>, Children...>*>(nullptr));
}
// The adjoints of the operands of the node e of an entry.
template <class T, std::size_t N, class E, std::size_t Id, class P, std::size_t... Children>
NABLA_ALWAYS_INLINE void pass_down_from(const E& e,
                                        std::array<T, N>& adjoints,
                                        walk_entry<E, Id, P, member_path<>, Children...>*) {
    const T adjoint = adjoints[Id];
    using Rule = typename E::rule;
    constexpr std::size_t child[] = {Children...};
    const auto& o = e.operands;
    if constexpr (E::arity == 1) {
        adjoints[child[0]] =
            to_number<T>(Rule::template partial<0>(e.value, value_of(o.first))) * adjoint;
    } else if constexpr (E::arity == 2) {
        if constexpr (ActiveOperand<decltype(o.first)>)
            adjoints[child[0]] = to_number<T>(Rule::template partial<0>(e.value, value_of(o.first),
                                                                        value_of(o.second))) *
                                 adjoint;
        if constexpr (ActiveOperand<decltype(o.second)>)
            adjoints[child[1]] = to_number<T>(Rule::template partial<1>(e.value, value_of(o.first),
                                                                        value_of(o.second))) *
                                 adjoint;
    } else {
        pass_down_each<Children...>(e, adjoint, adjoints, std::make_index_sequence<E::arity>{});
    }
}

// Where a leaf at position P writes its pair: its place, or as it comes in a statement that does
// not place its variables.
template <class Builder, class P>
inline constexpr std::size_t
    statement_leaf_place = P::leaf == unmerged_sum || Builder::places_leaves
                               ? P::leaf
                               : (P::leaf == unmerged_leaf ? unmerged_leaf : unplaced_leaf);

// The partials of a statement, multiplied along the expression down to its leaves: the entries
// are walk_t<E, P>'s, for e at position P in the statement, and out is where the builder writes
// the pairs of variables as they come (a cursor; nothing for a builder that sees only collapsed
// operands). The nodes in pre-order pass every operand its adjoint; then each leaf, collapsed
// and named operand is handed to the builder by a fold (the leaves in pre-order, so that the
// pairs written as they come keep the expression's order). (The callers name the entries, so
// that no function stands between them and the folds: each such level is one more copy of the
// whole statement for the compiler to optimise.)
template <class Builder,
          class Out,
          class T,
          class E,
          class... Nodes,
          class... Leaves,
          class... Collapsed,
          class... Named>
NABLA_ALWAYS_INLINE void propagate(Builder& b,
                                   Out& out,
                                   const E& e,
                                   const T& adjoint,
                                   walk_kinds<type_list<Nodes...>,
                                              type_list<Leaves...>,
                                              type_list<Collapsed...>,
                                              type_list<Named...>>) {
    constexpr std::size_t n =
        sizeof...(Nodes) + sizeof...(Leaves) + sizeof...(Collapsed) + sizeof...(Named);
    if constexpr (n > 0) {
        std::array<T, n> adjoints;
        adjoints[0] = adjoint;
        (pass_down(e, adjoints, static_cast<Nodes*>(nullptr)), ...);
        (b.template leaf<statement_leaf_place<Builder, typename Leaves::position>>(
             out, at_path(e, typename Leaves::path{}), adjoints[Leaves::id]),
         ...);
        (b.template collapsed_operand<Collapsed::position::slot>(
             at_path(e, typename Collapsed::path{}), adjoints[Collapsed::id]),
         ...);
        (b.template named_operand<Named::position::name>(at_path(e, typename Named::path{}),
                                                         adjoints[Named::id]),
         ...);
    }
}

// Operand I of e, at position Q.
template <std::size_t I, class Q, class Builder, class Out, class T, class Rule, class... Operands>
NABLA_ALWAYS_INLINE void propagate_operand_at(Builder& b,
                                              Out& out,
                                              const active_node<Rule, T, Operands...>& e,
                                              const T& adjoint) {
    using Op = std::tuple_element_t<I, std::tuple<Operands...>>;
    if constexpr (ActiveOperand<Op>)
        propagate(b, out, e.operands.*operand<I, active_node<Rule, T, Operands...>>,
                  node_partial<I>(e, std::index_sequence_for<Operands...>{}) * adjoint,
                  walk_t<Op, Q>{});
}

}  // namespace nabla::detail
