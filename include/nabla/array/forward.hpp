#pragma once
// Forward mode for static array expressions: tangents as arrays.
//
//   auto [x, y] = nabla::array_variables<2>();
//   auto f = sum(exp(sin(x) * y));
//   auto [v, t] = nabla::jvp(f, std::tie(xs, ys), std::tie(vx, vy));   // t = <grad f, (vx, vy)>
//   auto hv = nabla::hvp(f, std::tie(xs, ys), std::tie(vx, vy));       // H v, one array per
//   argument xt::xtensor<double, 2> H = nabla::hessian(f, xs);                    // with xtensor
//
// The tangent of an expression is an expression, made at compile time from its type by the chain
// rule over the rule table: each array leaf's tangent reads a tangent array through the same view
// (the argument N places after its own), each element-wise node contributes its rule's partials
// times its operands' tangents, and each reduction its own rule: sum and mean of the tangents;
// norm sum(x dx) / norm(x); logsumexp sum(exp(x - lse) dx); max and min the tangents where the
// extreme is reached, ties sharing equally; products dA x + A dx and dA B + A dB; a solve
// A^-1 (db - dA x), where x = A^-1 b (its operands expressions: array/operands.hpp). The tangent is
// then planned and fused like any expression. A Hessian-vector product is the gradient of the
// tangent with respect to the primals (the tangent arrays held constant), and a Hessian is one
// such product per column.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/build.hpp"
#include "../core/derivative.hpp"
#include "../core/traits.hpp"
#include "evaluate.hpp"
#include "expression.hpp"
#include "operands.hpp"  // the products, their operands that are expressions too
#include "reductions.hpp"

#if !defined(NABLA_NO_XTENSOR) && __has_include(<xtensor/xtensor.hpp>)
#include <xtensor/xtensor.hpp>
#define NABLA_ARRAY_HESSIAN 1
#else
#define NABLA_ARRAY_HESSIAN 0
#endif

namespace nabla {

namespace detail {

template <class Kind>
inline constexpr bool tangent_known = true;
template <>
inline constexpr bool tangent_known<reduction::prod_kind> = false;

// Whether G holds a prod, whose tangent nabla does not form (sum(dx / x) * prod(x) is wrong where
// an element is zero).
template <class G>
inline constexpr bool holds_prod = false;
template <class Rule, class... Ops>
inline constexpr bool holds_prod<node<Rule, Ops...>> = (holds_prod<Ops> || ...);
template <class B>
inline constexpr bool holds_prod<node<reduce_rule<reduction::prod_kind>, B>> = true;

template <class Kind, class B>
constexpr auto reduce_node(B) {
    if constexpr (is_zero<B>)
        return literal<0>{};
    else
        return node<reduce_rule<Kind>, B>{};
}

template <std::size_t N, class Rule, class... Ops>
constexpr auto tangent_node(node<Rule, Ops...> g);
template <std::size_t N, class Kind, class B>
constexpr auto tangent_node(node<reduce_rule<Kind>, B> g);
template <std::size_t N, class A, class X>
constexpr auto tangent_node(node<matvec_rule, A, X>);
template <std::size_t N, class A, class B>
constexpr auto tangent_node(node<matmul_rule, A, B>);
template <std::size_t N, class A, class B>
constexpr auto tangent_node(node<solve_rule, A, B>);

// The tangent of graph G, its array leaves' tangents read as argument N places on.
template <std::size_t N, class G>
constexpr auto tangent_graph(G g) {
    (void)g;
    if constexpr (!depends_on_any<G>) {
        return literal<0>{};
    } else if constexpr (is_placeholder_v<G>) {
        constexpr leaf_view v = decode_leaf(G::index);
        return placeholder<array_leaf_code(v.argument + N, v.begin, v.trim, v.begin1, v.trim1)>{};
    } else {
        return tangent_node<N>(g);
    }
}

template <std::size_t N, class Rule, class... Ops>
constexpr auto tangent_node(node<Rule, Ops...> g) {
    const auto term = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
        using operand = std::tuple_element_t<K, std::tuple<Ops...>>;
        if constexpr (!depends_on_any<operand>)
            return literal<0>{};
        else
            return chain_term_with<K>(g, tangent_graph<N>(operand{}));
    };
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
        return sum(term(std::integral_constant<std::size_t, K>{})...);
    }
    (std::make_index_sequence<sizeof...(Ops)>{});
}

template <std::size_t N, class Kind, class B>
constexpr auto tangent_node(node<reduce_rule<Kind>, B> g) {
    const auto t = tangent_graph<N>(B{});
    using namespace reduction;
    if constexpr (std::is_same_v<Kind, sum_kind> || std::is_same_v<Kind, mean_kind>) {
        return reduce_node<Kind>(t);
    } else if constexpr (std::is_same_v<Kind, norm_kind>) {
        return divide(reduce_node<sum_kind>(multiply(B{}, t)), g);
    } else if constexpr (std::is_same_v<Kind, logsumexp_kind>) {
        return reduce_node<sum_kind>(multiply(make_node<rules::exp_rule>(subtract(B{}, g)), t));
    } else if constexpr (std::is_same_v<Kind, max_kind> || std::is_same_v<Kind, min_kind>) {
        using weight_rule = std::conditional_t<std::is_same_v<Kind, max_kind>,
                                               rules::fmax_weight_rule, rules::fmin_weight_rule>;
        const auto w = make_node<weight_rule>(B{}, g);
        return divide(reduce_node<sum_kind>(multiply(w, t)), reduce_node<sum_kind>(w));
    } else {
        return literal<0>{};  // prod: refused by the callers
    }
}

template <std::size_t N, class A, class X>
constexpr auto tangent_node(node<matvec_rule, A, X>) {
    return add(node<matvec_rule, decltype(tangent_graph<N>(A{})), X>{},
               node<matvec_rule, A, decltype(tangent_graph<N>(X{}))>{});
}

template <std::size_t N, class A, class B>
constexpr auto tangent_node(node<matmul_rule, A, B>) {
    return add(node<matmul_rule, decltype(tangent_graph<N>(A{})), B>{},
               node<matmul_rule, A, decltype(tangent_graph<N>(B{}))>{});
}

// x = A^-1 b: dx = A^-1 (db - dA x), a solve of an expression (array/operands.hpp), the same x.
template <std::size_t N, class A, class B>
constexpr auto tangent_node(node<solve_rule, A, B>) {
    using x = node<solve_rule, A, B>;
    using rhs = decltype(subtract(tangent_graph<N>(B{}),
                                  node<matvec_rule, decltype(tangent_graph<N>(A{})), x>{}));
    return node<solve_rule, A, rhs>{};
}

// The tangent of f over N primal arrays, as an array expression of 2N arrays (primals, then
// tangents), its run-time constants kept.
template <std::size_t N, class Body>
constexpr auto tangent_expression(const array_expression<Body>& f) {
    using G = decltype(tangent_graph<N>(graph_t<Body>{}));
    if constexpr (is_held_v<Body> && info<G>::has_constants) {
        held<G, constant_type_t<Body>, constant_count<Body>> h{};
        h.constants = f.body.constants;
        return array_expression<decltype(h)>{h};
    } else {
        return array_expression<G>{G{}};
    }
}

// Whether G holds a function of the caller's, whose derivative is a pullback only.
template <class G>
inline constexpr bool holds_custom = false;
template <class Rule, class... Ops>
inline constexpr bool holds_custom<node<Rule, Ops...>> = is_custom_v<node<Rule, Ops...>> ||
                                                         (holds_custom<Ops> || ...);

template <class Body, std::size_t N>
constexpr bool check_tangent() {
    constexpr bool no_prod = !holds_prod<graph_t<Body>>;
    static_assert(no_prod,
                  "nabla::jvp, hvp and hessian of an array expression do not take a prod (its "
                  "tangent at a zero element needs the product of the others); for positive "
                  "arrays write exp(sum(log(x))).");
    constexpr bool no_custom = !holds_custom<graph_t<Body>>;
    static_assert(no_custom,
                  "nabla::custom_array: a custom array function has a first derivative only (its "
                  "pullback), so nabla::jvp, nabla::hvp and nabla::hessian cannot go through it; "
                  "use it with value_and_grad, grad and apply_vjp.");
    return no_prod && no_custom;
}

// The gradient of tangent expression tf with respect to its first N arrays (the primals), the
// other N (the tangents) constant; only the gradient is formed.
template <std::size_t N, class Body, class... Args>
void array_tangent_gradient(const array_expression<Body>& tf,
                            const std::array<double*, 2 * N>& gradients,
                            const Args&... args) {
    static_assert(2 * N <= 64, "nabla::hvp: at most 32 arrays.");
    constexpr std::uint64_t constants = ((std::uint64_t{1} << N) - 1) << N;
    if constexpr (has_products<graph_t<Body>>)
        product_gradient<constants, false>(tf, gradients, args...);
    else
        loop_gradient<constants, false>(tf, gradients, args...);
}

template <class Tuple, std::size_t... I>
auto gradients_like(const Tuple& arrays, std::index_sequence<I...>) {
    return std::tuple{gradient_like(std::get<I>(arrays))...};
}

}  // namespace detail

// The value of f at the primal arrays and its directional derivative along the tangent arrays
// (one per primal, of its shape): {value, tangent}, each a number for a scalar f and an array
// for an array-valued one. Forward mode: the tangent expression is planned and fused like f.
//   auto [v, t] = nabla::jvp(f, std::tie(xs, ys), std::tie(vx, vy));
template <class Body, class... P, class... T>
auto jvp(const array_expression<Body>& f,
         const std::tuple<P...>& primals,
         const std::tuple<T...>& tangents) {
    static_assert(sizeof...(P) == sizeof...(T),
                  "nabla::jvp(f, primals, tangents): give one tangent array per primal array.");
    constexpr std::size_t N = sizeof...(P);
    if constexpr (sizeof...(P) == sizeof...(T) && detail::check_tangent<Body, N>()) {
        const auto tf = detail::tangent_expression<N>(f);
        return std::apply(
            [&](const auto&... p) {
                return std::apply(
                    [&](const auto&... t) {
                        // The tangent is called with every primal, even one it does not read,
                        // so that the tangents are the arguments N places on.
                        return std::pair{f(p...), tf(p..., t...)};
                    },
                    tangents);
            },
            primals);
    }
}

// H v: the Hessian of the scalar f at the primal arrays times the tangent arrays v (one per
// primal), one array per primal shaped like it: the gradient of f's tangent <grad f, v> with
// respect to the primals, v held constant.
//   auto [hx, hy] = nabla::hvp(f, std::tie(xs, ys), std::tie(vx, vy));
template <class Body, class... P, class... T>
auto hvp(const array_expression<Body>& f,
         const std::tuple<P...>& primals,
         const std::tuple<T...>& tangents) {
    static_assert(sizeof...(P) == sizeof...(T),
                  "nabla::hvp(f, primals, tangents): give one tangent array per primal array.");
    static_assert(!array_expression<Body>::is_array,
                  "nabla::hvp: the expression must be a scalar (reduce it with sum, mean, ...).");
    constexpr std::size_t N = sizeof...(P);
    auto out = detail::gradients_like(primals, std::index_sequence_for<P...>{});
    if constexpr (sizeof...(P) == sizeof...(T) && !array_expression<Body>::is_array &&
                  detail::check_tangent<Body, N>()) {
        const auto tf = detail::tangent_expression<N>(f);
        {
            // The gradient of the tangent with respect to the primals; the tangents are
            // constant arguments, their gradients not formed.
            std::apply(
                [&](const auto&... p) {
                    std::apply(
                        [&](const auto&... t) {
                            std::array<double*, 2 * N> pointers{};
                            std::apply(
                                [&](auto&... g) {
                                    std::size_t k = 0;
                                    ((pointers[k++] = g.data()), ...);
                                },
                                out);
                            detail::array_tangent_gradient<N>(tf, pointers, p..., t...);
                        },
                        tangents);
                },
                primals);
        }
    }
    if constexpr (N == 1)
        return std::get<0>(std::move(out));
    else
        return out;
}

#if NABLA_ARRAY_HESSIAN
// The Hessian of scalar f with respect to its one array argument, an n x n xt::xtensor: one
// Hessian-vector product per column (n gradients of the tangent expression).
template <class Body, class C>
xt::xtensor<double, 2> hessian(const array_expression<Body>& f, const C& x) {
    static_assert(
        !array_expression<Body>::is_array,
        "nabla::hessian: the expression must be a scalar (reduce it with sum, mean, ...).");
    const std::size_t n = static_cast<std::size_t>(x.size());
    xt::xtensor<double, 2> h = xt::xtensor<double, 2>::from_shape({n, n});
    std::vector<double> e(n, 0.0);
    for (std::size_t j = 0; j < n; ++j) {
        e[j] = 1.0;
        const auto column = hvp(f, std::tie(x), std::tie(e));
        for (std::size_t i = 0; i < n; ++i)
            h(i, j) = column[i];
        e[j] = 0.0;
    }
    return h;
}
#endif

}  // namespace nabla
