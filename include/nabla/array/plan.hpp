#pragma once
// The plan of an array expression, made at compile time from its graph type.
//
// Reductions end loops. The graph is cut at each reduction: the reduction's operand becomes an
// element expression (its body) in which every inner reduction is a scalar leaf, read once per
// loop, so `x - max(x)` computes max once. A reduction's level is one more than the deepest
// reduction its body reads; the reductions of one level over arrays of the same length share one
// loop (horizontal fusion: sum(x * x) and sum(x) read x once). What is left above the reductions
// (the top) is a scalar expression of their results.
//
// Each body is relabelled to dense placeholders 0, 1, ... in its own schedule's order, so the
// core's forward_values and adjoint_sweep (core/evaluate.hpp) evaluate it on SIMD lanes as they
// evaluate any static expression on numbers: the same schedule, the same preaccumulated sweep.

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../core/graph.hpp"
#include "../core/held.hpp"
#include "../core/leaves.hpp"
#include "../core/node.hpp"
#include "../core/type_list.hpp"
#include "expression.hpp"

namespace nabla::detail {

template <template <class> class Predicate, class List>
struct filter;
template <template <class> class Predicate, class... Ts>
struct filter<Predicate, type_list<Ts...>> {
    using type = concat<std::conditional_t<Predicate<Ts>::value, type_list<Ts>, type_list<>>...>;
};
template <template <class> class Predicate, class List>
using filter_t = typename filter<Predicate, List>::type;

template <class G>
struct reduction_predicate : std::bool_constant<is_reduction_v<G>> {};
template <class G>
struct placeholder_predicate : std::bool_constant<is_placeholder_v<G>> {};

template <class Reductions, class G>
struct cut {
    using type = G;
};
template <class Reductions, class Rule, class... Ops>
struct cut<Reductions, node<Rule, Ops...>> {
    using type = node<Rule, typename cut<Reductions, Ops>::type...>;
};
template <class Reductions, class Kind, class B>
struct cut<Reductions, node<reduce_rule<Kind>, B>> {
    using type = placeholder<scalar_leaf_flag | index_of<Reductions, node<reduce_rule<Kind>, B>>>;
};

template <class Leaves, class G>
struct relabel {
    using type = G;
};
template <class Leaves, std::size_t Code>
struct relabel<Leaves, placeholder<Code>> {
    using type = placeholder<index_of<Leaves, placeholder<Code>>>;
};
template <class Leaves, class Rule, class... Ops>
struct relabel<Leaves, node<Rule, Ops...>> {
    using type = node<Rule, typename relabel<Leaves, Ops>::type...>;
};

template <class G>
struct operand_of;
template <class Kind, class B>
struct operand_of<node<reduce_rule<Kind>, B>> {
    using type = B;
};

template <class List>
struct codes_of;
template <std::size_t... Codes>
struct codes_of<type_list<placeholder<Codes>...>> {
    static constexpr std::array<std::size_t, sizeof...(Codes)> value{Codes...};
};

// One element expression with its leaves: Cut is the graph with inner reductions as scalar leaves,
// Leaves its placeholders in schedule order, Dense the graph over placeholders 0 .. Leaves::size-1.
template <class Reductions, class G>
struct element_expression {
    using cut_graph = typename cut<Reductions, G>::type;
    using leaves = filter_t<placeholder_predicate, schedule<cut_graph>>;
    using dense = typename relabel<leaves, cut_graph>::type;
    static constexpr std::size_t leaf_count = leaves::size;
    static constexpr auto codes = codes_of<leaves>::value;
};

// Which arguments are two-dimensional is known once the arrays are: bit k of TwoD for argument
// k. A one-dimensional argument read in a two-dimensional loop is broadcast along its rows.
// Bit k of Constants: argument k takes no gradient (a pullback's cotangent). Value false: only
// the gradient is wanted, so a fused sum need not accumulate. Accumulate: the gradients are added
// into what the arrays hold (nabla::add_vjp_into), so no loop stores them.
template <class G,
          std::uint64_t TwoD = 0,
          std::uint64_t Constants = 0,
          bool Value = true,
          bool Accumulate = false>
struct program {
    static constexpr std::uint64_t two_d_mask = TwoD;
    static constexpr bool value_wanted = Value;
    static constexpr bool accumulate = Accumulate;
    static constexpr bool two_d(std::size_t argument) {
        return argument < 64 && ((TwoD >> argument) & 1) != 0;
    }
    static constexpr bool constant(std::size_t argument) {
        return argument < 64 && ((Constants >> argument) & 1) != 0;
    }

    using reductions = filter_t<reduction_predicate, schedule<G>>;
    static constexpr std::size_t count = reductions::size;

    template <std::size_t J>
    using reduction = at<J, reductions>;
    template <std::size_t J>
    using kind = typename reduction<J>::rule::kind;
    template <std::size_t J>
    using body = element_expression<reductions, typename operand_of<reduction<J>>::type>;
    using top = element_expression<reductions, G>;

    static constexpr bool scalar = !array_valued<G>::value;

    // codes[J]: body J's leaf codes, padded; leaf_counts[J] how many.
    static constexpr std::size_t max_leaves = [] {
        std::size_t m = 0;
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            ((m = body<J>::leaf_count > m ? body<J>::leaf_count : m), ...);
        }
        (std::make_index_sequence<count>{});
        return m;
    }();

    static constexpr auto leaf_codes = [] {
        std::array<std::array<std::size_t, max_leaves + 1>, count + 1> codes{};
        std::array<std::size_t, count + 1> sizes{};
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            (
                [&] {
                    for (std::size_t k = 0; k < body<J>::leaf_count; ++k)
                        codes[J][k] = body<J>::codes[k];
                    sizes[J] = body<J>::leaf_count;
                }(),
                ...);
        }
        (std::make_index_sequence<count>{});
        return std::pair{codes, sizes};
    }();

    // level[J]: 1 + the deepest level among the reductions body J reads (as scalar leaves).
    static constexpr auto level = [] {
        std::array<std::size_t, count + 1> level{};
        const auto& [codes, sizes] = leaf_codes;
        for (std::size_t j = 0; j < count; ++j) {
            std::size_t deepest = 0;
            for (std::size_t k = 0; k < sizes[j]; ++k)
                if ((codes[j][k] & scalar_leaf_flag) != 0) {
                    const std::size_t inner = codes[j][k] & ~scalar_leaf_flag;
                    deepest = level[inner] > deepest ? level[inner] : deepest;
                }
            level[j] = deepest + 1;
        }
        return level;
    }();

    // The first two-dimensional array leaf of body J, else its first array leaf: whether it is
    // two-dimensional, its argument and how many elements its view drops on each axis. Two
    // bodies of one level whose keys agree have the same shape.
    static constexpr auto length_key = [] {
        std::array<std::array<std::size_t, 4>, count + 1> keys{};
        const auto& [codes, sizes] = leaf_codes;
        for (std::size_t j = 0; j < count; ++j) {
            bool found = false;
            for (std::size_t pass = 0; pass < 2 && !found; ++pass)
                for (std::size_t k = 0; k < sizes[j] && !found; ++k)
                    if (is_array_leaf_code(codes[j][k])) {
                        const leaf_view v = decode_leaf(codes[j][k]);
                        if (pass == 0 && !two_d(v.argument))
                            continue;
                        keys[j] = {pass == 0 ? std::size_t{1} : std::size_t{0}, v.argument,
                                   v.begin + v.trim, v.begin1 + v.trim1};
                        found = true;
                    }
        }
        return keys;
    }();

    // group[J]: the loop reduction J is computed in. Groups are numbered by level, so running
    // them in order computes every scalar leaf before it is read.
    static constexpr auto grouping = [] {
        std::array<std::size_t, count + 1> group{};
        std::array<std::size_t, count + 1> group_level{};
        std::array<std::array<std::size_t, 4>, count + 1> group_key{};
        std::size_t groups = 0;
        std::size_t deepest = 0;
        for (std::size_t j = 0; j < count; ++j)
            deepest = level[j] > deepest ? level[j] : deepest;
        for (std::size_t l = 1; l <= deepest; ++l)
            for (std::size_t j = 0; j < count; ++j) {
                if (level[j] != l)
                    continue;
                std::size_t g = 0;
                while (g < groups && !(group_level[g] == l && group_key[g] == length_key[j]))
                    ++g;
                if (g == groups) {
                    group_level[g] = l;
                    group_key[g] = length_key[j];
                    ++groups;
                }
                group[j] = g;
            }
        return std::pair{group, groups};
    }();
    static constexpr std::size_t group_count = grouping.second;

    template <std::size_t J, std::size_t Group>
    static constexpr bool in_group = grouping.first[J] == Group;
};

}  // namespace nabla::detail
