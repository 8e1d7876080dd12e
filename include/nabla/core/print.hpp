#pragma once
// Text forms of an expression: nabla::to_string (infix, with the fewest parentheses that keep the
// meaning) and nabla::to_dot (Graphviz text of the forward graph and of the reverse, adjoint
// graph).

#include <array>
#include <charconv>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

#include "derivative.hpp"
#include "evaluate.hpp"
#include "graph.hpp"
#include "held.hpp"

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

// A negative number binds like a sum, so that it is parenthesised as an operand: x0*(-2.5).
template <class T>
printed number_piece(T value) {
    const bool negative = value < T(0);
    return {number_text(value), negative ? 1 : atom_precedence};
}

// Appends the parts to one string. (Built with append rather than operator+, which trips a false
// -Wrestrict warning of g++ 12 at -O3.)
template <class... Parts>
std::string join(const Parts&... parts) {
    std::string out;
    (out.append(parts), ...);
    return out;
}

inline std::string parenthesised(const printed& piece, bool needed) {
    return needed ? join("(", piece.text, ")") : piece.text;
}

// The name a placeholder prints as: x0, x1, ... (array expressions name their leaves by what they
// read, array/print.hpp).
template <std::size_t Index>
struct placeholder_name {
    static std::string text() { return join("x", std::to_string(Index)); }
};

// Prints a graph type; run-time constants are read from `constants` (empty: printed as c0, c1...).
template <class G, class Constants>
printed print(G g, const Constants& constants);

template <class Rule, class... Ops, class Constants>
printed print_node(node<Rule, Ops...>, const Constants& constants) {
    if constexpr (requires { Rule::symbol; } && sizeof...(Ops) == 2) {
        using left_type = std::tuple_element_t<0, std::tuple<Ops...>>;
        using right_type = std::tuple_element_t<1, std::tuple<Ops...>>;
        const printed left = print(left_type{}, constants);
        const printed right = print(right_type{}, constants);
        constexpr int p = Rule::precedence;
        // Subtraction and division do not associate: a - (b - c), a / (b * c) keep parentheses.
        constexpr bool strict =
            std::is_same_v<Rule, rules::sub_rule> || std::is_same_v<Rule, rules::div_rule>;
        const bool right_needs = right.precedence < p || (strict && right.precedence == p);
        return {join(parenthesised(left, left.precedence < p), Rule::symbol,
                     parenthesised(right, right_needs)),
                p};
    } else if constexpr (requires { Rule::symbol; } && sizeof...(Ops) == 1) {
        const printed operand = print(Ops{}..., constants);
        return {join(Rule::symbol, parenthesised(operand, operand.precedence <= prefix_precedence)),
                prefix_precedence};
    } else {
        std::string text = Rule::name;
        text += '(';
        bool first = true;
        ((text.append(first ? "" : ", ").append(print(Ops{}, constants).text), first = false), ...);
        text += ')';
        return {text, atom_precedence};
    }
}

template <class G, class Constants>
printed print(G g, const Constants& constants) {
    if constexpr (is_placeholder_v<G>) {
        return {placeholder_name<G::index>::text(), atom_precedence};
    } else if constexpr (is_pooled_constant_v<G>) {
        if constexpr (std::tuple_size_v<Constants> == 0)
            return {join("c", std::to_string(G::index)), atom_precedence};
        else
            return number_piece(constants[G::index]);
    } else if constexpr (is_literal_v<G>) {
        return number_piece(G::value);
    } else if constexpr (is_math_constant_v<G>) {
        using tag = decltype([]<class Tag>(math_constant<Tag>) { return Tag{}; }(g));
        return {tag::name, atom_precedence};
    } else {
        return print_node(g, constants);
    }
}

inline constexpr std::array<double, 0> no_constants{};

template <class G>
std::string dot_label(G g) {
    if constexpr (is_node_v<G>)
        return G::rule::name;
    else
        return print(g, no_constants).text;
}

// The forward graph's nodes, named prefix + k for schedule slot k, and their edges.
template <class S, class... Ts, std::size_t... Is, class Constants>
void dot_forward(std::string& out,
                 type_list<Ts...>,
                 std::index_sequence<Is...>,
                 const Constants& constants,
                 const std::string& prefix = "n") {
    const auto one_node = [&]<class T>(std::size_t k, T t) {
        std::string label = dot_label(t);
        if constexpr (is_pooled_constant_v<T>)
            label.append(" = ").append(number_text(constants[T::index]));
        out.append(join("    ", prefix, std::to_string(k), " [label=\"", label, "\"];\n"));
        if constexpr (is_node_v<T>) {
            [&]<class Rule, class... Ops>(node<Rule, Ops...>) {
                (out.append(join("    ", prefix, std::to_string(index_of<S, Ops>), " -> ", prefix,
                                 std::to_string(k), ";\n")),
                 ...);
            }(t);
        }
    };
    (one_node(Is, Ts{}), ...);
}

template <class S, class... Ts, std::size_t... Is>
void dot_reverse(std::string& out, type_list<Ts...>, std::index_sequence<Is...>) {
    const auto one_node = [&]<class T>(std::size_t k, T t) {
        if constexpr (depends_on_any<T>) {
            out.append(
                join("    a", std::to_string(k), " [label=\"adjoint of ", dot_label(t), "\"];\n"));
        }
        if constexpr (is_node_v<T> && depends_on_any<T>) {
            [&]<class Rule, class... Ops>(node<Rule, Ops...> n) {
                const auto edge = [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {
                    using operand = std::tuple_element_t<J, std::tuple<Ops...>>;
                    if constexpr (depends_on_any<operand>) {
                        const auto partial = Rule::template partial<J>(n, Ops{}...);
                        out.append(join("    a", std::to_string(k), " -> a",
                                        std::to_string(index_of<S, operand>), " [label=\"",
                                        print(graph_t<decltype(partial)>{}, no_constants).text,
                                        "\"];\n"));
                    }
                };
                [&]<std::size_t... J>(std::index_sequence<J...>) {
                    (edge(std::integral_constant<std::size_t, J>{}), ...);
                }
                (std::index_sequence_for<Ops...>{});
            }(t);
        }
    };
    (one_node(Is, Ts{}), ...);
}

}  // namespace detail

// Infix text of an expression: placeholders print as x0, x1, ..., run-time constants as numbers.
template <Expression E>
std::string to_string(const E& e) {
    if constexpr (is_held_v<E>)
        return detail::print(detail::graph_t<E>{}, e.constants).text;
    else
        return detail::print(e, detail::no_constants).text;
}

// Graphviz text with two clusters: the forward graph (each distinct node once; run-time constants
// as c0, c1, ... with their values) and the reverse graph (one adjoint per node that depends on a
// variable; each edge is labelled with the local partial derivative it multiplies by).
template <Expression E>
std::string to_dot(const E& e) {
    using S = detail::schedule<detail::graph_t<E>>;
    const auto constants = detail::constants_as<double>(e);
    std::string out = "digraph nabla {\n  rankdir=BT;\n";
    out += "  subgraph cluster_forward {\n    label=\"forward: values\";\n";
    detail::dot_forward<S>(out, S{}, std::make_index_sequence<S::size>{}, constants);
    out += "  }\n  subgraph cluster_reverse {\n    label=\"reverse: adjoints\";\n";
    detail::dot_reverse<S>(out, S{}, std::make_index_sequence<S::size>{});
    out += "  }\n}\n";
    return out;
}

}  // namespace nabla
