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

template <class P, class Builder, class Out, class T, class E>
void propagate(Builder& b, Out& out, const E& e, const T& adjoint);
template <class P, class Builder, class Out, class T, class Rule, class... Operands>
void propagate_node(Builder& b,
                    Out& out,
                    const active_node<Rule, T, Operands...>& e,
                    const T& adjoint);

// Collects one statement's partials for `out` (the tape, or the scratch memory when an
// intermediate is collapsed): active leaves in places, merged by index and written after the named
// intermediates are expanded; named intermediates merged when they are the same, collapsed ones by
// offset, and both expanded at the end. (Merged: the part of E whose variables have places, all
// of E but an accumulated sum.)
template <class T, class E, class Merged = E>
struct statement_builder {
    static constexpr std::size_t Slots = collapsed_count<E>;
    using names = named_list_t<E>;
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
        return direct_leaf_count<Merged> +
               ((first_of_type<K>() ? leaf_count<at<K, names>> : 0) + ... + 0);
    }
    // The active variables the statement reads, in the order of the expression (the ones inside
    // named intermediates last), with their partials; index 0 for a constant or one not read (a
    // use of a named intermediate merged into an earlier one, an accumulated sum).
    static constexpr std::size_t Leaves = named_leaves_before(std::make_index_sequence<Names>{});
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
        if constexpr (L == unmerged_leaf || L == unmerged_sum) {
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
        std::get<K>(leaf_kept) = !merged && std::get<K>(leaf_index) != 0;
    }
    template <std::size_t K>
    NABLA_ALWAYS_INLINE void write_leaf(cursor<T>& out) {
        out.push_if(std::get<K>(leaf_index), std::get<K>(leaf_partial), std::get<K>(leaf_kept));
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
        return merge_sum(sum, std::make_index_sequence<direct_leaf_count<Merged>>{});
    }

    // The collapsed operand at slot S.
    template <std::size_t S>
    NABLA_ALWAYS_INLINE void collapsed_operand(const collapsed<T>& c, const T& adjoint) {
        // (Past the check, a collapsed operand of another recording has no partials.)
        if (c.generation != generation) [[unlikely]]
            tape_access::check(*target, c.generation,
                               c.count == 0 ? 0 : 1);  // passive, or a stale one: throws
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
        if constexpr (std::is_same_v<at<J, names>, at<K, names>>) {
            using N = at<K, names>;
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
        std::get<K>(name_kept) = !merged;
    }
    template <std::size_t K>
    NABLA_ALWAYS_INLINE void expand_one(cursor<T>& out) {
        using N = at<K, names>;
        using P = position<0, 0,
                           first_of_type<K>() ? named_leaves_before(std::make_index_sequence<K>{})
                                              : unmerged_leaf>;
        if (name_kept[K])
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
        std::get<K>(kept) = !merged;
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
        if (std::get<K>(kept) && std::get<K>(counts) != 0) {
            ++with_partials;
            one = sole_intermediate{true, std::get<K>(begins), std::get<K>(counts),
                                    std::get<K>(adjoints)};
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
        if (!std::get<K>(kept))
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

// The partials of a statement, multiplied along the expression down to its leaves; P is where e
// is in the statement, and out where the builder writes the pairs of variables as they come (a
// cursor; nothing for a builder that sees only collapsed operands).
template <class P, class Builder, class Out, class T, class E>
NABLA_ALWAYS_INLINE void propagate(Builder& b, Out& out, const E& e, const T& adjoint) {
    if constexpr (is_active_v<E>) {
        b.template leaf<P::leaf>(out, e, adjoint);
    } else if constexpr (is_collapsed_v<E>) {
        b.template collapsed_operand<P::slot>(e, adjoint);
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

}  // namespace nabla::detail
