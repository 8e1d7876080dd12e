#pragma once
// An operation node: a rule applied to operand graphs. Empty: the operands are part of the type.

#include "../concepts.hpp"

namespace nabla {

template <class Rule, class... Operands>
struct node : expression_base<node<Rule, Operands...>> {
    using rule = Rule;
    static_assert(sizeof...(Operands) == Rule::arity, "nabla: wrong number of operands for a rule");
};

template <class T>
inline constexpr bool is_node_v = false;
template <class Rule, class... Operands>
inline constexpr bool is_node_v<node<Rule, Operands...>> = true;

}  // namespace nabla
