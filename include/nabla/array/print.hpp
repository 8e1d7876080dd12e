#pragma once
// Text forms of an array expression: nabla::to_string (infix; leaves print as the arrays and views
// they read, x0, x1[1:], x0[:-1]) and nabla::to_dot (Graphviz text of the plan: one cluster per
// loop, holding the element expressions of the reductions computed in it, then the top
// expression; an edge from each reduction's result to the loops that read it). Matrix products
// (matvec, matmul, solve) are boxes of their own, computed before the loops: their values are
// extra arrays the loops read, named after the arguments; so are their operands that are
// expressions, computed before them.
//
//   auto [x] = nabla::array_variables<1>();
//   std::cout << nabla::to_dot(log(sum(exp(x - max(x)))) + max(x));   // two loops

#include <cstddef>
#include <string>
#include <utility>

#include "../core/print.hpp"
#include "evaluate.hpp"
#include "expression.hpp"
#include "operands.hpp"  // the products, their operands that are expressions too
#include "plan.hpp"

namespace nabla {

namespace detail {

// An array leaf prints as its argument and view (numpy's slice), a scalar leaf (a reduction's
// result, in a plan) as r and the reduction's number.
template <std::size_t Code>
requires(is_array_leaf_code(Code)) struct placeholder_name<Code> {
    static std::string text() {
        constexpr leaf_view v = decode_leaf(Code);
        const auto axis = [](std::size_t begin, std::size_t trim) {
            std::string a = begin != 0 ? std::to_string(begin) : std::string();
            a += ':';
            if (trim != 0)
                a += join("-", std::to_string(trim));
            return a;
        };
        std::string name = join("x", std::to_string(v.argument));
        if (v.begin1 != 0 || v.trim1 != 0)
            name += join("[", axis(v.begin, v.trim), ", ", axis(v.begin1, v.trim1), "]");
        else if (v.begin != 0 || v.trim != 0)
            name += join("[", axis(v.begin, v.trim), "]");
        return name;
    }
};
template <std::size_t Code>
requires((Code & scalar_leaf_flag) != 0) struct placeholder_name<Code> {
    static std::string text() { return join("r", std::to_string(Code & ~scalar_leaf_flag)); }
};

// The nodes of one element expression (its cut graph), named prefix + slot, with an edge from
// each reduction result it reads, and from each product (the arguments from FirstProduct on).
template <class Cut, std::size_t FirstProduct, class Constants>
void dot_element(std::string& out, const Constants& constants, const std::string& prefix) {
    using S = schedule<Cut>;
    dot_forward<S>(out, S{}, std::make_index_sequence<S::size>{}, constants, prefix);
    [&]<class... Ts>(type_list<Ts...>) {
        const auto edge = [&]<class T>(T) {
            if constexpr (is_placeholder_v<T>) {
                if constexpr ((T::index & scalar_leaf_flag) != 0)
                    out.append(join("    r", std::to_string(T::index & ~scalar_leaf_flag), " -> ",
                                    prefix, std::to_string(index_of<S, T>), ";\n"));
                else if constexpr (is_array_leaf_code(T::index) &&
                                   decode_leaf(T::index).argument >= FirstProduct)
                    out.append(join("    p",
                                    std::to_string(decode_leaf(T::index).argument - FirstProduct),
                                    " -> ", prefix, std::to_string(index_of<S, T>), ";\n"));
            }
        };
        (edge(Ts{}), ...);
    }(S{});
}

}  // namespace detail

template <class Body>
std::string to_string(const array_expression<Body>& f) {
    return to_string(f.body);
}

template <class Body>
std::string to_dot(const array_expression<Body>& f) {
    using Original = detail::graph_t<Body>;
    // Operands of products that are expressions, then the products, read as the arguments
    // after those the expression reads.
    using operands = typename detail::operand_graphs<Original>::type;
    constexpr std::size_t first_operand = detail::arguments_read<Original>;
    using Substituted = decltype(detail::substitute_stages<operands, first_operand>(Original{}));
    using products = detail::filter_t<detail::product_predicate, detail::schedule<Substituted>>;
    constexpr std::size_t first = first_operand + operands::size;
    using G = typename detail::substitute<products, first, Substituted>::type;
    using P = detail::program<G>;
    using detail::join;
    const auto constants = detail::constants_as<double>(f.body);
    std::string out = "digraph nabla {\n  rankdir=BT;\n";
    if constexpr (operands::size > 0) {
        out.append("  subgraph cluster_operands {\n    label=\"operands of products: each "
                   "computed into an array first\";\n");
        [&]<class... Os>(detail::type_list<Os...>) {
            std::size_t k = 0;
            const auto box = [&]<class Operand>(Operand) {
                const auto e = detail::stage_plan<Body>::template expression<Operand>(f.body);
                out.append(join("    o", std::to_string(k), " [shape=box, label=\"x",
                                std::to_string(first_operand + k), " = ", to_string(e), "\"];\n"));
                ++k;
            };
            (box(Os{}), ...);
        }(operands{});
        out.append("  }\n");
    }
    if constexpr (products::size > 0) {
        out.append("  subgraph cluster_products {\n    label=\"products, solves and custom_array: "
                   "before the loops, pulled back after them\";\n");
        [&]<class... Ps>(detail::type_list<Ps...>) {
            std::size_t k = 0;
            const auto box = [&]<class Product>(Product) {
                out.append(join("    p", std::to_string(k), " [shape=box, label=\"x",
                                std::to_string(first + k), " = ", to_string(Product{}), "\"];\n"));
                [&]<class Rule, std::size_t... Codes>(node<Rule, placeholder<Codes>...>) {
                    for (const std::size_t a : {detail::decode_leaf(Codes).argument...})
                        if (a >= first_operand && a < first)
                            out.append(join("    o", std::to_string(a - first_operand), " -> p",
                                            std::to_string(k), ";\n"));
                }(Product{});
                ++k;
            };
            (box(Ps{}), ...);
        }(products{});
        out.append("  }\n");
    }
    [&]<std::size_t... Group>(std::index_sequence<Group...>) {
        const auto loop = [&]<std::size_t g>(std::integral_constant<std::size_t, g>) {
            constexpr bool fused = detail::fusion<P>::fused[g] != P::count;
            out.append(
                join("  subgraph cluster_loop", std::to_string(g), " {\n    label=\"loop ",
                     std::to_string(g),
                     fused ? ": value and gradient in one pass" : ": gradient in a loop of its own",
                     "\";\n"));
            [&]<std::size_t... J>(std::index_sequence<J...>) {
                const auto member = [&]<std::size_t j>(std::integral_constant<std::size_t, j>) {
                    if constexpr (P::template in_group<j, g>) {
                        using cut = typename P::template body<j>::cut_graph;
                        const std::string prefix = join("b", std::to_string(j), "_");
                        detail::dot_element<cut, first>(out, constants, prefix);
                        out.append(join(
                            "    r", std::to_string(j), " [shape=box, label=\"r", std::to_string(j),
                            " = ", P::template kind<j>::name, "\"];\n    ", prefix,
                            std::to_string(detail::index_of<detail::schedule<cut>, cut>), " -> r",
                            std::to_string(j), ";\n"));
                    }
                };
                (member(std::integral_constant<std::size_t, J>{}), ...);
            }
            (std::make_index_sequence<P::count>{});
            out.append("  }\n");
        };
        (loop(std::integral_constant<std::size_t, Group>{}), ...);
    }
    (std::make_index_sequence<P::group_count>{});
    out.append(P::scalar ? "  subgraph cluster_top {\n    label=\"top: the value\";\n"
                         : "  subgraph cluster_top {\n    label=\"top: the elements\";\n");
    detail::dot_element<typename P::top::cut_graph, first>(out, constants, "t_");
    out.append("  }\n}\n");
    return out;
}

}  // namespace nabla
