#pragma once
// Facts about a graph type, computed once per type by the compiler: which placeholders it depends
// on, whether it reads run-time constants, whether its value is always an integer.

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "../rules/arithmetic.hpp"
#include "leaves.hpp"
#include "node.hpp"

namespace nabla::detail {

template <class G>
struct info {
    // Exact constants.
    static constexpr std::size_t placeholder_bound = 0;
    static constexpr bool depends_on_any = false;
    static constexpr bool has_constants = false;
    static constexpr bool integer_valued = is_literal_v<G>;
    template <std::size_t I>
    static constexpr bool depends_on = false;
};

template <std::size_t I>
struct info<placeholder<I>> {
    static constexpr std::size_t placeholder_bound = I + 1;
    static constexpr bool depends_on_any = true;
    static constexpr bool has_constants = false;
    static constexpr bool integer_valued = false;
    template <std::size_t J>
    static constexpr bool depends_on = I == J;
};

template <std::size_t K, bool Integral>
struct info<pooled_constant<K, Integral>> {
    static constexpr std::size_t placeholder_bound = 0;
    static constexpr bool depends_on_any = false;
    static constexpr bool has_constants = true;
    static constexpr bool integer_valued = Integral;
    template <std::size_t>
    static constexpr bool depends_on = false;
};

template <class Rule>
inline constexpr bool keeps_integers =
    std::is_same_v<Rule, rules::add_rule> || std::is_same_v<Rule, rules::sub_rule> ||
    std::is_same_v<Rule, rules::mul_rule> || std::is_same_v<Rule, rules::neg_rule>;

template <class Rule, class... Ops>
struct info<node<Rule, Ops...>> {
    static constexpr std::size_t placeholder_bound =
        std::max({std::size_t{0}, info<Ops>::placeholder_bound...});
    static constexpr bool depends_on_any = (info<Ops>::depends_on_any || ...);
    static constexpr bool has_constants = (info<Ops>::has_constants || ...);
    static constexpr bool integer_valued =
        keeps_integers<Rule> && (info<Ops>::integer_valued && ...);
    template <std::size_t I>
    static constexpr bool depends_on = (info<Ops>::template depends_on<I> || ...);
};

template <class G>
inline constexpr bool depends_on_any = info<G>::depends_on_any;

template <class G, std::size_t I>
inline constexpr bool depends_on = info<G>::template depends_on<I>;

}  // namespace nabla::detail
