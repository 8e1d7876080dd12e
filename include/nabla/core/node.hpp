#pragma once
// An operation node: a rule applied to operands, each an expression held by value. The node is a
// pure description; evaluation lives in core/evaluate.hpp.

#include <tuple>
#include <utility>

#include "../concepts.hpp"

namespace nabla {

template <class Rule, class... Operands>
struct node : expression_base<node<Rule, Operands...>> {
    using rule = Rule;
    static_assert(sizeof...(Operands) == Rule::arity, "nabla: wrong number of operands for a rule");

    std::tuple<Operands...> operands;

    constexpr node() = default;
    constexpr explicit node(Operands... ops) : operands(std::move(ops)...) {}
};

template <class T>
inline constexpr bool is_node_v = false;
template <class Rule, class... Operands>
inline constexpr bool is_node_v<node<Rule, Operands...>> = true;

}  // namespace nabla
