#pragma once
// Products whose operands are expressions: a two-layer network's
//
//   auto [W1, b1, W2, b2, x] = nabla::array_variables<5>();
//   auto loss = sum(square(tanh(matvec(W2, tanh(matvec(W1, x) + b1)) + b2)));
//
// An operand of matvec, matmul or solve that is not an array variable (viewed or not) is a fusion
// group of its own, as the operator-fusion compilers make it. Such an expression runs in stages,
// planned from its type (so does one holding a custom_array, a function of the caller's, defined
// at the end): every product, every custom_array and every operand of theirs that is an
// expression is a stage, computed into an array in an order where each stage's inputs come first,
// and read by the later stages and by the rest of the expression (then element-wise, fused as
// usual) as one more argument. The gradient runs the rest's, then each stage's pullback from the
// last to the first: a product's from the operands and factors kept from the forward pass (no
// product is computed twice), a custom_array's by its pullback, an element-wise stage's by its
// fused vector-Jacobian product (it is computed again, not stored). Each gradient is stored by the
// first pullback that reaches it and added to by the others. The tangent expressions of forward
// mode, whose products have tangents as operands, run the same way.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "evaluate.hpp"
#include "products.hpp"

namespace nabla::detail {

// A product's operands that are expressions.
template <class G>
struct expression_operands {
    using type = type_list<>;
};
template <class Rule, class... Ops>
struct expression_operands<node<Rule, Ops...>> {
    using type =
        merge_all<std::conditional_t<is_array_leaf_v<Ops>, type_list<>, type_list<Ops>>...>;
};
template <class Products>
struct all_expression_operands;
template <class... Ps>
struct all_expression_operands<type_list<Ps...>> {
    using type = merge_all<typename expression_operands<Ps>::type...>;
};

// The operands of the graph's products that are expressions, each once, first reached first;
// nothing inside them (to_dot's boxes).
template <class G>
struct operand_graphs {
    using type = type_list<>;
};
template <class Rule, class... Ops>
struct operand_graphs<node<Rule, Ops...>> {
    using type = merge_all<typename operand_graphs<Ops>::type...>;
};
template <class Rule, class... Ops>
requires is_product_v<node<Rule, Ops...>>
struct operand_graphs<node<Rule, Ops...>> {
    using type = typename expression_operands<node<Rule, Ops...>>::type;
};

// A stage's value, in an array of its own, with its shape; a solve's LU factors.
struct materialised {
    std::vector<double> data;
    extent shape;
    std::shared_ptr<const lu_factors<double>> factors;
};

// The graph with stage number s (of Stages) read as argument N + s, wherever it occurs.
template <class Stages, std::size_t N, class G>
constexpr auto substitute_stages(G);

// A node with its operands substituted so, not itself.
template <class Stages, std::size_t N, class Rule, class... Ops>
constexpr auto substitute_children(node<Rule, Ops...>) {
    return node<Rule, decltype(substitute_stages<Stages, N>(Ops{}))...>{};
}

template <class Stages, std::size_t N, class G>
constexpr auto substitute_stages(G) {
    if constexpr (contains<Stages, G>)
        return placeholder<array_leaf_code(N + index_of<Stages, G>, 0, 0)>{};
    else if constexpr (is_node_v<G>)
        return substitute_children<Stages, N>(G{});
    else
        return G{};
}

template <class Body, class... Args>
materialised materialise(const array_expression<Body>& f, const Args&... args);

// The elements a one-dimensional operand of custom_array reads (view applied), from its leaf.
template <std::size_t Code, class... Args>
std::span<const double> custom_operand(const Args&... args) {
    constexpr leaf_view v = decode_leaf(Code);
    const auto& a = std::get<v.argument>(std::tie(args...));
    static_assert(!TwoDimensional<std::remove_cvref_t<decltype(a)>>,
                  "nabla::custom_array in an array expression takes one-dimensional arrays.");
    const std::size_t n = static_cast<std::size_t>(a.size());
    if (v.begin + v.trim > n)
        throw shape_error("nabla::custom_array: a view drops " + std::to_string(v.begin + v.trim) +
                          " elements of an array of " + std::to_string(n) + " (argument " +
                          std::to_string(v.argument) + ")");
    return {first_element(a) + v.begin, n - v.begin - v.trim};
}

template <class Value, class Pullback, std::size_t K, std::size_t... Codes, class... Args>
materialised custom_value(node<custom_rule<Value, Pullback, K>, placeholder<Codes>...>,
                          const Args&... args) {
    std::vector<double> y = Value{}(custom_operand<Codes>(args...)...);
    const std::size_t n = y.size();
    return {std::move(y), extent{1, n}, nullptr};
}

// Adds the pullback of dy into the gradients of the operands (into, null for a constant;
// zeroed first where none was written yet: done).
template <std::uint64_t Constants,
          class Value,
          class Pullback,
          std::size_t K,
          std::size_t... Codes,
          class... Args>
void custom_pull_back(node<custom_rule<Value, Pullback, K>, placeholder<Codes>...>,
                      const std::vector<double>& y,
                      const std::vector<double>& dy,
                      const std::array<double*, sizeof...(Args)>& into,
                      std::array<bool, sizeof...(Args)>& done,
                      const Args&... args) {
    const std::array<std::size_t, sizeof...(Args)> sizes{static_cast<std::size_t>(args.size())...};
    const auto adjoint = [&](std::size_t code, std::span<const double> x) {
        const leaf_view v = decode_leaf(code);
        if (v.argument < 64 && ((Constants >> v.argument) & 1) != 0)
            return std::span<double>();
        double* g = into[v.argument];
        if (!done[v.argument]) {
            std::fill(g, g + sizes[v.argument], 0.0);
            done[v.argument] = true;
        }
        return std::span<double>(g + v.begin, x.size());
    };
    const std::array<std::span<const double>, K> xs{custom_operand<Codes>(args...)...};
    [&]<std::size_t... J>(std::index_sequence<J...>) {
        Pullback{}(xs[J]..., std::span<const double>(y), std::span<const double>(dy),
                   adjoint(Codes, xs[J])...);
    }
    (std::make_index_sequence<K>{});
}

// The stages of an expression over N arguments: its products and their operands that are
// expressions, operands before the stages that read them; the rest of the expression (`main`)
// reads stage s as argument N + s.
template <class Body, class... Args>
struct stage_plan {
    using graph = graph_t<Body>;
    using everything = schedule<graph>;
    using products = filter_t<product_predicate, everything>;
    using operands = typename all_expression_operands<products>::type;
    template <class T>
    struct is_stage : std::bool_constant<contains<products, T> || contains<operands, T>> {};
    using stages = filter_t<is_stage, everything>;

    static constexpr std::size_t N = sizeof...(Args);
    static constexpr std::size_t S = stages::size;
    static constexpr std::size_t T = N + S;
    static_assert(T <= 64,
                  "nabla: an expression whose products read expressions takes at most 64 "
                  "arrays, products and operands of products together.");
    static constexpr std::uint64_t first(std::size_t count) {
        return count >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1;
    }

    // A graph over the expression's run-time constants: they keep their numbers.
    template <class G>
    using body_over = std::conditional_t<is_held_v<Body> && info<G>::has_constants,
                                         held<G, constant_type_t<Body>, constant_count<Body>>,
                                         G>;
    template <class G>
    static array_expression<body_over<G>> expression(const Body& b) {
        body_over<G> r{};
        if constexpr (is_held_v<body_over<G>>)
            r.constants = b.constants;
        return {r};
    }

    template <std::size_t s>
    static constexpr bool is_product = is_product_v<at<s, stages>>;
    // Stage s over the arguments and the stages before it.
    template <std::size_t s>
    using stage_graph = decltype(substitute_children<stages, N>(at<s, stages>{}));
    using main_graph = decltype(substitute_stages<stages, N>(graph{}));

    // Stage s as an argument: a matrix where its value has rows, else a vector.
    template <std::size_t s>
    static constexpr bool grid();
    template <std::size_t s>
    using argument_type =
        std::conditional_t<grid<s>(), matrix_ref<const double>, std::span<const double>>;
    template <std::size_t s>
    static argument_type<s> argument(const double* d, const materialised& m) {
        if constexpr (grid<s>())
            return matrix_ref<const double>(d, m.shape.rows, m.shape.cols);
        else
            return std::span<const double>(d, m.shape.size());
    }

    // run(arguments..., stages [0, s)...).
    template <std::size_t s, class Run>
    static decltype(auto)
    with_stages(const std::array<materialised, S>& t, const Run& run, const Args&... args) {
        return [&]<std::size_t... r>(std::index_sequence<r...>)->decltype(auto) {
            return run(args..., argument<r>(t[r].data.data(), t[r])...);
        }
        (std::make_index_sequence<s>{});
    }

    static std::array<materialised, S> values(const Body& b, const Args&... args) {
        std::array<materialised, S> t;
        [&]<std::size_t... s>(std::index_sequence<s...>) {
            (with_stages<s>(
                 t,
                 [&](const auto&... all) {
                     if constexpr (is_custom_v<at<s, stages>>) {
                         t[s] = custom_value(stage_graph<s>{}, all...);
                     } else if constexpr (is_product<s>) {
                         using Q =
                             product_plan<stage_graph<s>, std::remove_cvref_t<decltype(all)>...>;
                         if constexpr (Q::checked) {
                             auto y = Q::values(layouts_of(all...));
                             t[s] = {std::move(y.y[0]), y.shape[0], y.factors[0]};
                         }
                     } else {
                         t[s] = materialise(expression<stage_graph<s>>(b), all...);
                     }
                     return 0;
                 },
                 args...),
             ...);
        }
        (std::make_index_sequence<S>{});
        return t;
    }

    // Stage s's pullback of its adjoint dt[s] into the gradients of what it reads (g: every
    // argument's and stage's, null for constants): stored where none was written yet (written),
    // added otherwise. Stage s's value and adjoint are not used after.
    template <std::size_t s, std::uint64_t Constants>
    static void pull_back(const Body& b,
                          std::array<materialised, S>& t,
                          std::array<std::vector<double>, S>& dt,
                          const std::array<double*, T>& g,
                          std::array<bool, T>& written,
                          const Args&... args) {
        constexpr std::size_t n = N + s;
        if (!written[N + s])
            std::fill(dt[s].begin(), dt[s].end(), 0.0);
        with_stages<s>(
            t,
            [&](const auto&... all) {
                std::array<double*, n> into{};
                std::array<bool, n> done{};
                std::copy_n(g.begin(), n, into.begin());
                std::copy_n(written.begin(), n, done.begin());
                if constexpr (is_custom_v<at<s, stages>>) {
                    custom_pull_back<Constants & first(N)>(stage_graph<s>{}, t[s].data, dt[s], into,
                                                           done, all...);
                } else if constexpr (is_product<s>) {
                    using Q = product_plan<stage_graph<s>, std::remove_cvref_t<decltype(all)>...>;
                    if constexpr (Q::checked) {
                        product_values<1> y;
                        y.y[0] = std::move(t[s].data);
                        y.shape[0] = t[s].shape;
                        y.factors[0] = t[s].factors;
                        const std::array<std::vector<double>, 1> dy{std::move(dt[s])};
                        Q::template pull_back<Constants & first(N)>(layouts_of(all...), y, dy, into,
                                                                    done);
                    }
                } else {
                    constexpr std::uint64_t skip =
                        (Constants | ~read_mask<stage_graph<s>>)&first(n);
                    const std::array<std::size_t, n> sizes{static_cast<std::size_t>(all.size())...};
                    std::array<std::vector<double>, n> scratch;
                    for (std::size_t k = 0; k < n; ++k) {
                        if (((skip >> k) & 1) != 0) {
                            into[k] = nullptr;
                        } else if (done[k]) {
                            scratch[k].resize(sizes[k]);
                            into[k] = scratch[k].data();
                        } else {
                            done[k] = true;
                        }
                    }
                    apply_vjp<skip>(expression<stage_graph<s>>(b), into,
                                    argument<s>(dt[s].data(), t[s]), all...);
                    for (std::size_t k = 0; k < n; ++k)
                        if (!scratch[k].empty())
                            for (std::size_t i = 0; i < sizes[k]; ++i)
                                g[k][i] += scratch[k][i];
                }
                std::copy_n(done.begin(), n, written.begin());
                return 0;
            },
            args...);
    }

    // The gradient or a vector-Jacobian product: run(std::integral_constant<Constants'>, main,
    // gradients, arguments..., stages...) with the stages' adjoints among the gradients, then the
    // stages' pullbacks. The rest of the expression takes no gradient for what it does not read.
    template <std::uint64_t Constants, class Run>
    static double reverse(const Body& b,
                          const std::array<double*, N>& gradients,
                          const Run& run,
                          const Args&... args) {
        auto t = values(b, args...);
        constexpr std::uint64_t main_constants =
            (Constants & first(N)) | (~read_mask<main_graph> & first(T));
        std::array<std::vector<double>, S> dt;
        std::array<double*, T> g{};
        std::array<double*, T> main_gradients{};
        std::array<bool, T> written{};
        for (std::size_t k = 0; k < N; ++k)
            g[k] = ((Constants >> k) & 1) != 0 ? nullptr : gradients[k];
        for (std::size_t s = 0; s < S; ++s) {
            dt[s].resize(t[s].data.size());
            g[N + s] = dt[s].data();
        }
        for (std::size_t k = 0; k < T; ++k) {
            written[k] = ((main_constants >> k) & 1) == 0;
            main_gradients[k] = written[k] ? g[k] : nullptr;
        }
        const double value = with_stages<S>(
            t,
            [&](const auto&... all) {
                return run(std::integral_constant<std::uint64_t, main_constants>{},
                           expression<main_graph>(b), main_gradients, all...);
            },
            args...);
        [&]<std::size_t... r>(std::index_sequence<r...>) {
            (pull_back<S - 1 - r, Constants>(b, t, dt, g, written, args...), ...);
        }
        (std::make_index_sequence<S>{});
        const std::array<std::size_t, N> sizes{static_cast<std::size_t>(args.size())...};
        for (std::size_t k = 0; k < N; ++k)
            if (g[k] != nullptr && !written[k])
                std::fill(g[k], g[k] + sizes[k], 0.0);
        return value;
    }
};

template <class Body, class... Args>
template <std::size_t s>
constexpr bool stage_plan<Body, Args...>::grid() {
    if constexpr (is_product<s>) {
        return std::is_same_v<typename at<s, stages>::rule, matmul_rule>;
    } else {
        return [&]<std::size_t... r>(std::index_sequence<r...>) {
            return rows_in_result<program_for<stage_graph<s>, Args..., argument_type<r>...>>;
        }
        (std::make_index_sequence<s>{});
    }
}

// An element-wise expression's elements in a new array.
template <class Body, class... Args>
materialised materialise(const array_expression<Body>& f, const Args&... args) {
    static_assert(array_expression<Body>::is_array,
                  "nabla: an operand of matvec, matmul or solve is an array; this one is a "
                  "number (a reduction's result).");
    if constexpr (array_expression<Body>::is_array && check_array_call<Body, Args...>()) {
        using P = program_for<Body, Args...>;
        auto run = start_run<P>(f, args...);
        const extent e = run.template extent_of<typename P::top>("an operand of a product");
        materialised m{std::vector<double>(e.size()), e, nullptr};
        run_forward<P, false>(run);
        write_elements<P>(run, e, m.data.data(), e.cols);
        return m;
    } else {
        return {};
    }
}

template <class Body, class... Args>
auto operand_value(const array_expression<Body>& f, const Args&... args) {
    using M = stage_plan<Body, Args...>;
    const auto t = M::values(f.body, args...);
    return M::template with_stages<M::S>(
        t,
        [&](const auto&... all) {
            return array_value(M::template expression<typename M::main_graph>(f.body), all...);
        },
        args...);
}

template <std::uint64_t Constants, bool Value, class Body, class... Args>
double operand_gradient(const array_expression<Body>& f,
                        const std::array<double*, sizeof...(Args)>& gradients,
                        const Args&... args) {
    return stage_plan<Body, Args...>::template reverse<Constants>(
        f.body, gradients,
        []<std::uint64_t C>(std::integral_constant<std::uint64_t, C>, const auto& g,
                            const auto& all, const auto&... extended) {
            return loop_gradient<C, Value>(g, all, extended...);
        },
        args...);
}

template <std::uint64_t Constants, class Body, class Cotangent, class... Args>
void operand_vjp(const array_expression<Body>& f,
                 const std::array<double*, sizeof...(Args)>& gradients,
                 const Cotangent& w,
                 const Args&... args) {
    stage_plan<Body, Args...>::template reverse<Constants>(
        f.body, gradients,
        [&w]<std::uint64_t C>(std::integral_constant<std::uint64_t, C>, const auto& g,
                              const auto& all, const auto&... extended) {
            apply_vjp<C>(g, all, w, extended...);
            return 0.0;
        },
        args...);
}

template <class Body, class Out, class... Args>
void operand_evaluate_into(const array_expression<Body>& f, Out& out, const Args&... args) {
    using M = stage_plan<Body, Args...>;
    const auto t = M::values(f.body, args...);
    M::template with_stages<M::S>(
        t,
        [&](const auto&... all) {
            evaluate_into(M::template expression<typename M::main_graph>(f.body), out, all...);
            return 0;
        },
        args...);
}

}  // namespace nabla::detail

namespace nabla {

// A function of one-dimensional arrays with a derivative of the caller's, in an array expression
// (the tape has its own custom_array, array/active.hpp): value(x, z) gets each argument's values
// as std::span<const double> and returns the result's (a std::vector<double>); pullback(x, z, y,
// dy, dx, dz) gets the arguments' and the result's values and the result's adjoint dy (spans of
// const double) and adds dy^T J into dx and dz (spans of double; empty for an argument that takes
// no gradient). Both are held in the expression's type, so they are function objects without
// state (lambdas without captures). An opaque node: computed into an array before the loops that
// read it, its arguments (array variables, views or expressions) first; pulled back after them.
//   auto [x] = nabla::array_variables<1>();
//   auto f = sum(square(nabla::custom_array(cumsum_value, cumsum_pullback, x * 2.0)));
template <class Value, class Pullback, class... Arrays>
requires(sizeof...(Arrays) > 0 &&
         (detail::ArrayExpression<Arrays> &&
          ...)) constexpr auto custom_array(const Value&, const Pullback&, const Arrays&... xs) {
    static_assert(std::is_empty_v<Value> && std::is_default_constructible_v<Value> &&
                      std::is_empty_v<Pullback> && std::is_default_constructible_v<Pullback>,
                  "nabla::custom_array in an array expression holds value and pullback in the "
                  "expression's type: pass lambdas without captures (or function objects "
                  "without state); for captures, use the tape (nabla::mode::arrays).");
    static_assert((Arrays::is_array && ...),
                  "nabla::custom_array takes arrays; an argument here is a number (a "
                  "reduction's result).");
    static_assert(std::is_invocable_r_v<std::vector<double>, const Value&,
                                        decltype((void(xs), std::span<const double>{}))...>,
                  "nabla::custom_array: value(x...) takes each argument's values as "
                  "std::span<const double> and returns the result's values as a "
                  "std::vector<double>.");
    return detail::make_array(detail::combine(
        [](auto... g) {
            return node<detail::custom_rule<Value, Pullback, sizeof...(Arrays)>, decltype(g)...>{};
        },
        xs.body...));
}

}  // namespace nabla
