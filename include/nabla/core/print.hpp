#pragma once
// Text forms of an expression: nabla::to_string (infix, with the fewest parentheses that keep the
// meaning) and nabla::to_dot (Graphviz text of the forward graph and of the reverse, adjoint graph).

#include <array>
#include <charconv>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

#include "derivative.hpp"
#include "evaluate.hpp"
#include "graph.hpp"

namespace nabla {

namespace detail {

// Binding strength of a printed piece: sums 1, products 2, prefix minus 3, atoms 4.
struct printed {
    std::string text;
    int precedence;
};

inline constexpr int atom_precedence = 4;
inline constexpr int prefix_precedence = 3;

template <class T>
std::string number_text(T value) {
    if constexpr (std::is_floating_point_v<T>) {
        std::array<char, 64> buffer{};
        const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
        return std::string(buffer.data(), result.ptr);
    } else {
        return std::to_string(value);
    }
}

template <class T>
printed number_piece(T value) {
    const bool negative = value < T(0);
    return {number_text(value), negative ? prefix_precedence : atom_precedence};
}

inline std::string parenthesised(const printed& piece, bool needed) {
    return needed ? "(" + piece.text + ")" : piece.text;
}

template <class E>
printed print(const E& e);

template <class Rule, class... Ops>
printed print_node(const node<Rule, Ops...>& e) {
    if constexpr (requires { Rule::symbol; } && sizeof...(Ops) == 2) {
        const printed left = print(std::get<0>(e.operands));
        const printed right = print(std::get<1>(e.operands));
        constexpr int p = Rule::precedence;
        // Subtraction and division do not associate: a - (b - c), a / (b * c) keep parentheses.
        constexpr bool strict = std::is_same_v<Rule, rules::sub_rule> ||
                                std::is_same_v<Rule, rules::div_rule>;
        const bool right_needs = right.precedence < p || (strict && right.precedence == p);
        return {parenthesised(left, left.precedence < p) + Rule::symbol +
                    parenthesised(right, right_needs),
                p};
    } else if constexpr (requires { Rule::symbol; } && sizeof...(Ops) == 1) {
        const printed operand = print(std::get<0>(e.operands));
        return {Rule::symbol + parenthesised(operand, operand.precedence <= prefix_precedence),
                prefix_precedence};
    } else {
        std::string text = Rule::name;
        text += '(';
        bool first = true;
        std::apply(
            [&](const auto&... ops) {
                ((text += (first ? "" : ", ") + print(ops).text, first = false), ...);
            },
            e.operands);
        text += ')';
        return {text, atom_precedence};
    }
}

template <class E>
printed print(const E& e) {
    if constexpr (is_placeholder_v<E>) return {"x" + std::to_string(E::index), atom_precedence};
    else if constexpr (is_pooled_constant_v<E>) return {"c" + std::to_string(E::index), atom_precedence};
    else if constexpr (is_constant_v<E>) return number_piece(e.value);
    else if constexpr (is_literal_v<E>) return number_piece(E::value);
    else if constexpr (is_math_constant_v<E>) {
        using tag = decltype([]<class Tag>(math_constant<Tag>) { return Tag{}; }(e));
        return {tag::name, atom_precedence};
    } else return print_node(e);
}

template <class T>
std::string dot_label(const T&) {
    if constexpr (is_node_v<T>) return T::rule::name;
    else return print(T{}).text;
}

template <class S, class... Ts, std::size_t... Is, class Pool>
void dot_forward(std::string& out, type_list<Ts...>, std::index_sequence<Is...>, const Pool& pool) {
    const auto one_node = [&]<class T>(std::size_t k, const T& t) {
        std::string label = dot_label(t);
        if constexpr (is_pooled_constant_v<T>) label += " = " + number_text(pool[T::index]);
        out += "    n" + std::to_string(k) + " [label=\"" + label + "\"];\n";
        if constexpr (is_node_v<T>) {
            [&]<class Rule, class... Ops>(const node<Rule, Ops...>*) {
                ((out += "    n" + std::to_string(index_of<S, Ops>) + " -> n" + std::to_string(k) + ";\n"), ...);
            }(static_cast<const T*>(nullptr));
        }
    };
    (one_node(Is, Ts{}), ...);
}

template <class S, class... Ts, std::size_t... Is>
void dot_reverse(std::string& out, type_list<Ts...>, std::index_sequence<Is...>) {
    const auto one_node = [&]<class T>(std::size_t k, const T& t) {
        if constexpr (depends_on_any<T>) {
            out += "    a" + std::to_string(k) + " [label=\"adjoint of " + dot_label(t) + "\"];\n";
        }
        if constexpr (is_node_v<T> && depends_on_any<T>) {
            [&]<class Rule, class... Ops>(const node<Rule, Ops...>* n) {
                [&]<std::size_t... I>(std::index_sequence<I...>) {
                    const auto edge = [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {
                        using operand = std::tuple_element_t<J, std::tuple<Ops...>>;
                        if constexpr (depends_on_any<operand>) {
                            const auto partial = Rule::template partial<J>(*n, Ops{}...);
                            out += "    a" + std::to_string(k) + " -> a" +
                                   std::to_string(index_of<S, operand>) + " [label=\"" +
                                   print(partial).text + "\"];\n";
                        }
                    };
                    (edge(std::integral_constant<std::size_t, I>{}), ...);
                }(std::index_sequence_for<Ops...>{});
            }(&t);
        }
    };
    (one_node(Is, Ts{}), ...);
}

}  // namespace detail

// Infix text of an expression: placeholders print as x0, x1, ...
template <Expression E>
std::string to_string(const E& e) {
    return detail::print(e).text;
}

// Graphviz text with two clusters: the forward graph (each distinct node once, run-time constants
// as c0, c1, ... with their values) and the reverse graph (one adjoint per node that depends on a
// variable; each edge is labelled with the local partial derivative it multiplies by).
template <Expression E>
std::string to_dot(const E& e) {
    using P = detail::pooled_t<E>;
    using S = detail::schedule<P>;
    const auto pool = detail::make_pool<double>(e);
    std::string out = "digraph nabla {\n  rankdir=BT;\n";
    out += "  subgraph cluster_forward {\n    label=\"forward: values\";\n";
    detail::dot_forward<S>(out, S{}, std::make_index_sequence<S::size>{}, pool);
    out += "  }\n  subgraph cluster_reverse {\n    label=\"reverse: adjoints\";\n";
    detail::dot_reverse<S>(out, S{}, std::make_index_sequence<S::size>{});
    out += "  }\n}\n";
    return out;
}

}  // namespace nabla
