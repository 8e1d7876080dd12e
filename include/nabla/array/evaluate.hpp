#pragma once
// Running an array expression's plan (array/plan.hpp): one loop over SIMD lanes per group of
// reductions, forward for the values, and for the gradient one loop per group in reverse order
// that recomputes the element expression and sweeps its adjoints (core/evaluate.hpp) with the
// seed its reduction gives each element. Nothing is allocated inside a loop; the gradients are
// the only arrays made.
//
// The lanes are xsimd::batch<double> of the compiler's widest instruction set (8 doubles with
// AVX-512), read and written unaligned; the elements that do not fill a batch run the same
// expression on plain doubles. Define NABLA_NO_SIMD, or build without xsimd, for plain loops.

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../core/evaluate.hpp"
#include "../core/graph.hpp"
#include "../values.hpp"
#include "expression.hpp"
#include "plan.hpp"
#include "reductions.hpp"

#if !defined(NABLA_NO_SIMD) && __has_include(<xsimd/xsimd.hpp>)
#include "../simd/lanes.hpp"
#define NABLA_ARRAY_LANES 1
#else
#define NABLA_ARRAY_LANES 0
#endif

namespace nabla {

// Arrays whose lengths do not fit an expression: element-wise operands of different lengths, a
// view longer than its array, an argument that is not one-dimensional.
struct shape_error : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// The value and the gradient with respect to each array argument, each shaped like its argument:
// auto [value, gx, gy] = nabla::value_and_grad(f, xs, ys).
template <class... Gradients>
struct array_value_and_gradient {
    double value;
    std::tuple<Gradients...> gradient;

    template <std::size_t I>
    decltype(auto) get() const& {
        if constexpr (I == 0)
            return (value);
        else
            return (std::get<I - 1>(gradient));
    }
    template <std::size_t I>
    decltype(auto) get() && {
        if constexpr (I == 0)
            return std::move(value);
        else
            return std::move(std::get<I - 1>(gradient));
    }
};

namespace detail {

#if NABLA_ARRAY_LANES
using lanes = xsimd::batch<double>;
#else
using lanes = double;
#endif

template <class L>
inline constexpr std::size_t width = [] {
    if constexpr (std::is_same_v<L, double>)
        return std::size_t{1};
    else
        return L::size;
}();

template <class L>
NABLA_ALWAYS_INLINE L load(const double* p) {
    if constexpr (std::is_same_v<L, double>)
        return *p;
    else
        return L::load_unaligned(p);
}

template <class L>
NABLA_ALWAYS_INLINE void add_to(double* p, const L& v) {
    if constexpr (std::is_same_v<L, double>)
        *p += v;
    else
        (L::load_unaligned(p) + v).store_unaligned(p);
}

template <class L>
NABLA_ALWAYS_INLINE double add_lanes(const L& v) {
    if constexpr (std::is_same_v<L, double>) {
        return v;
    } else {
        double total = 0.0;
        for (std::size_t k = 0; k < L::size; ++k)
            total += lane_of(v, k);
        return total;
    }
}

// A one-dimensional array argument: contiguous doubles with data() and size().
template <class C>
concept ArrayArgument = requires(const C& c) {
    { c.data() } -> std::convertible_to<const double*>;
    { c.size() } -> std::convertible_to<std::size_t>;
};

template <class C>
auto gradient_like(const C& c) {
    if constexpr (container_traits<C>::supported)
        return container_traits<C>::template make_like<double>(c);
    else
        return std::vector<double>(c.size());
}

// One evaluation of a program: the arguments, the reductions' results, states and adjoints.
template <class P, std::size_t Arguments, std::size_t PoolSize>
struct array_run {
    std::array<const double*, Arguments> data{};
    std::array<std::size_t, Arguments> size{};
    std::array<double*, Arguments> gradient{};
    std::array<double, PoolSize> pool{};
    std::array<double, P::count + 1> result{};
    std::array<double, P::count + 1> adjoint{};
    std::array<std::size_t, P::count + 1> length{};

    using states = decltype([]<std::size_t... J>(std::index_sequence<J...>) {
        return std::tuple<typename P::template kind<J>::template state<double>...>{};
    }(std::make_index_sequence<P::count>{}));
    states state{};

    template <class L>
    NABLA_ALWAYS_INLINE std::array<L, PoolSize> pool_lanes() const {
        std::array<L, PoolSize> lanes_pool{};
        for (std::size_t k = 0; k < PoolSize; ++k)
            lanes_pool[k] = L(pool[k]);
        return lanes_pool;
    }

    template <class L>
    NABLA_ALWAYS_INLINE std::array<L, P::count + 1> result_lanes() const {
        std::array<L, P::count + 1> lanes_result{};
        for (std::size_t k = 0; k <= P::count; ++k)
            lanes_result[k] = L(result[k]);
        return lanes_result;
    }

    // The length of the loop over an element expression's leaves; throws if they disagree.
    template <class E>
    std::size_t length_of(const char* what) const {
        std::size_t n = 0;
        bool first = true;
        for (const std::size_t code : E::codes) {
            if (!is_array_leaf_code(code))
                continue;
            const leaf_view v = decode_leaf(code);
            const std::size_t drop = v.begin + v.trim;
            if (size[v.argument] < drop)
                throw shape_error("nabla: a view drops " + std::to_string(drop) +
                                  " elements of argument " + std::to_string(v.argument) +
                                  ", which has " + std::to_string(size[v.argument]) + " (in " +
                                  what + ")");
            const std::size_t m = size[v.argument] - drop;
            if (first) {
                n = m;
                first = false;
            } else if (m != n) {
                throw shape_error("nabla: element-wise operands of different lengths, " +
                                  std::to_string(n) + " and " + std::to_string(m) +
                                  " elements (argument " + std::to_string(v.argument) +
                                  " viewed from " + std::to_string(v.begin) + ", in " + what + ")");
            }
        }
        return n;
    }
};

template <class L, std::size_t Code, class Run, std::size_t Count>
NABLA_ALWAYS_INLINE L leaf_value(const Run& run,
                                 const std::array<L, Count>& results,
                                 std::size_t i) {
    if constexpr (is_array_leaf_code(Code)) {
        constexpr leaf_view v = decode_leaf(Code);
        return load<L>(run.data[v.argument] + i + v.begin);
    } else {
        return results[Code & ~scalar_leaf_flag];
    }
}

template <class L, class E, class Run, std::size_t Count>
NABLA_ALWAYS_INLINE std::array<L, E::leaf_count>
load_leaves(const Run& run, const std::array<L, Count>& results, std::size_t i) {
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
        return std::array<L, E::leaf_count>{leaf_value<L, E::codes[K]>(run, results, i)...};
    }
    (std::make_index_sequence<E::leaf_count>{});
}

template <class L, class E, std::size_t PoolSize>
using element_values =
    forward_values<schedule<typename E::dense>, L, PoolSize, std::array<L, E::leaf_count>>;

template <class L, class E, std::size_t PoolSize, class Run, std::size_t Count>
NABLA_ALWAYS_INLINE L element_value(const Run& run,
                                    const std::array<L, PoolSize>& pool,
                                    const std::array<L, Count>& results,
                                    std::size_t i) {
    const auto leaves = load_leaves<L, E>(run, results, i);
    element_values<L, E, PoolSize> values{{}, pool, leaves};
    values.forward();
    return values.value[schedule<typename E::dense>::size - 1];
}

// The reverse of one element (a batch of them): recompute, seed, sweep, and deliver the leaves'
// adjoints: into the gradient arrays, or into the accumulators of the scalar leaves.
template <class P, std::size_t J, class L, class Run, std::size_t PoolSize, std::size_t Count>
NABLA_ALWAYS_INLINE void element_reverse(Run& run,
                                         const std::array<L, PoolSize>& pool,
                                         const std::array<L, Count>& results,
                                         std::array<L, Count>& scalar_adjoints,
                                         std::size_t n,
                                         std::size_t i) {
    using E = typename P::template body<J>;
    using S = schedule<typename E::dense>;
    using kind = typename P::template kind<J>;
    const auto leaves = load_leaves<L, E>(run, results, i);
    element_values<L, E, PoolSize> values{{}, pool, leaves};
    values.forward();
    adjoint_sweep<S, L, PoolSize, std::array<L, E::leaf_count>> sweep{values, {}};
    sweep.run(kind::seed(values.value[S::size - 1], std::get<J>(run.state), run.result[J],
                         run.adjoint[J], n));
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        (
            [&] {
                constexpr std::size_t code = E::codes[K];
                const L& adjoint = sweep.adjoint[index_of<S, placeholder<K>>];
                if constexpr (is_array_leaf_code(code)) {
                    constexpr leaf_view v = decode_leaf(code);
                    add_to(run.gradient[v.argument] + i + v.begin, adjoint);
                } else {
                    scalar_adjoints[code & ~scalar_leaf_flag] += adjoint;
                }
            }(),
            ...);
    }
    (std::make_index_sequence<E::leaf_count>{});
}

template <class P, std::size_t Group>
inline constexpr auto group_members = [] {
    std::array<std::size_t, P::count + 1> members{};
    std::size_t m = 0;
    for (std::size_t j = 0; j < P::count; ++j)
        if (P::grouping.first[j] == Group)
            members[m++] = j;
    return std::pair{members, m};
}();

// The forward loop of one group: every member reduction accumulates in four states per lane
// (independent chains the processor overlaps), merged in a fixed order at the end.
template <class P, std::size_t Group, class Run>
void forward_group(Run& run) {
    constexpr auto members = group_members<P, Group>;
    const std::size_t n =
        run.template length_of<typename P::template body<members.first[0]>>("a reduction");
    [&]<std::size_t... M>(std::index_sequence<M...>) {
        ((run.length[members.first[M]] =
              run.template length_of<typename P::template body<members.first[M]>>("a reduction")),
         ...);
        const auto check = [&](std::size_t j) {
            if (run.length[j] != n)
                throw shape_error("nabla: reductions over arrays of different lengths in one "
                                  "loop");
        };
        (check(members.first[M]), ...);
    }
    (std::make_index_sequence<members.second>{});

    using L = lanes;
    constexpr std::size_t W = width<L>;
    const auto pool = run.template pool_lanes<L>();
    const auto results = run.template result_lanes<L>();
    const auto scalar_pool = run.template pool_lanes<double>();
    const auto scalar_results = run.template result_lanes<double>();

    [&]<std::size_t... M>(std::index_sequence<M...>) {
        constexpr std::size_t unroll = 4;
        std::tuple<
            std::array<typename P::template kind<members.first[M]>::template state<L>, unroll>...>
            lanes_states{};
        std::size_t i = 0;
        if constexpr (W > 1) {
            for (; i + unroll * W <= n; i += unroll * W) {
                for (std::size_t u = 0; u < unroll; ++u)
                    (std::get<M>(lanes_states)[u].add(
                         element_value<L, typename P::template body<members.first[M]>>(
                             run, pool, results, i + u * W)),
                     ...);
            }
            for (; i + W <= n; i += W)
                (std::get<M>(lanes_states)[0].add(
                     element_value<L, typename P::template body<members.first[M]>>(run, pool,
                                                                                   results, i)),
                 ...);
        }
        (
            [&] {
                constexpr std::size_t j = members.first[M];
                auto& s = std::get<M>(lanes_states);
                for (std::size_t u = 1; u < unroll; ++u)
                    s[0].merge(s[u]);
                auto scalar = s[0].lane(0);
                for (std::size_t k = 1; k < W; ++k)
                    scalar.merge(s[0].lane(k));
                for (std::size_t t = i; t < n; ++t)
                    scalar.add(element_value<double, typename P::template body<j>>(
                        run, scalar_pool, scalar_results, t));
                std::get<j>(run.state) = scalar;
                run.result[j] = P::template kind<j>::result(scalar, n);
            }(),
            ...);
    }
    (std::make_index_sequence<members.second>{});
}

template <class P, std::size_t Group, class Run>
void reverse_group(Run& run) {
    constexpr auto members = group_members<P, Group>;
    const std::size_t n = run.length[members.first[0]];
    using L = lanes;
    constexpr std::size_t W = width<L>;
    const auto pool = run.template pool_lanes<L>();
    const auto results = run.template result_lanes<L>();
    const auto scalar_pool = run.template pool_lanes<double>();
    const auto scalar_results = run.template result_lanes<double>();
    std::array<L, P::count + 1> scalar_adjoints{};
    std::array<double, P::count + 1> tail_adjoints{};
    [&]<std::size_t... M>(std::index_sequence<M...>) {
        std::size_t i = 0;
        if constexpr (W > 1) {
            for (; i + W <= n; i += W)
                (element_reverse<P, members.first[M]>(run, pool, results, scalar_adjoints, n, i),
                 ...);
        }
        for (; i < n; ++i)
            (element_reverse<P, members.first[M]>(run, scalar_pool, scalar_results, tail_adjoints,
                                                  n, i),
             ...);
    }
    (std::make_index_sequence<members.second>{});
    for (std::size_t k = 0; k < P::count; ++k)
        run.adjoint[k] += add_lanes(scalar_adjoints[k]) + tail_adjoints[k];
}

template <class Body, class... Args>
constexpr bool check_array_call() {
    constexpr bool arrays = (ArrayArgument<Args> && ...);
    static_assert(arrays,
                  "nabla: an array expression is called with one-dimensional arrays of double "
                  "(std::vector<double>, std::array, std::span<const double>, "
                  "xt::xtensor<double, 1>), one per array variable.");
    return arrays;
}

template <class Body, std::size_t Arguments>
auto make_run() {
    using G = graph_t<Body>;
    using P = program<G>;
    return array_run<P, Arguments, constant_count<Body>>{};
}

template <class Body, class... Args>
auto start_run(const array_expression<Body>& f, const Args&... args) {
    using G = graph_t<Body>;
    constexpr std::size_t bound = [] {
        std::size_t b = 0;
        for (const auto code : codes_of<filter_t<placeholder_predicate, schedule<G>>>::value)
            if (is_array_leaf_code(code) && decode_leaf(code).argument + 1 > b)
                b = decode_leaf(code).argument + 1;
        return b;
    }();
    static_assert(bound <= sizeof...(Args),
                  "nabla: too few arrays: the expression reads an array variable whose index is "
                  "not covered by the arguments given.");
    auto run = make_run<Body, sizeof...(Args)>();
    std::size_t k = 0;
    const auto bind = [&](const auto& a) {
        if constexpr (requires { a.dimension(); }) {
            if (a.dimension() != 1)
                throw shape_error(
                    "nabla: array expressions take one-dimensional arrays; argument " +
                    std::to_string(k) + " has " + std::to_string(a.dimension()) + " dimensions");
        }
        run.data[k] = a.data();
        run.size[k] = a.size();
        ++k;
    };
    (bind(args), ...);
    if constexpr (is_held_v<Body>) {
        for (std::size_t c = 0; c < run.pool.size(); ++c)
            run.pool[c] = static_cast<double>(f.body.constants[c]);
    }
    return run;
}

template <class P, class Run>
void run_forward(Run& run) {
    [&]<std::size_t... Group>(std::index_sequence<Group...>) {
        (forward_group<P, Group>(run), ...);
    }
    (std::make_index_sequence<P::group_count>{});
}

template <class Body, class... Args>
auto array_value_checked(const array_expression<Body>& f, const Args&... args) {
    using P = program<graph_t<Body>>;
    auto run = start_run(f, args...);
    run_forward<P>(run);
    using T = typename P::top;
    const auto pool = run.template pool_lanes<double>();
    const auto results = run.template result_lanes<double>();
    if constexpr (P::scalar) {
        return element_value<double, T>(run, pool, results, 0);
    } else {
        // An array-valued expression: its elements, after the reductions it reads.
        const std::size_t n = run.template length_of<T>("an element-wise expression");
        std::vector<double> out(n);
        using L = lanes;
        constexpr std::size_t W = width<L>;
        const auto lanes_pool = run.template pool_lanes<L>();
        const auto lanes_results = run.template result_lanes<L>();
        std::size_t i = 0;
        if constexpr (W > 1) {
            for (; i + W <= n; i += W) {
                element_value<L, T>(run, lanes_pool, lanes_results, i)
                    .store_unaligned(out.data() + i);
            }
        }
        for (; i < n; ++i)
            out[i] = element_value<double, T>(run, pool, results, i);
        return out;
    }
}

template <class Body, class... Args>
auto array_value(const array_expression<Body>& f, const Args&... args) {
    if constexpr (!check_array_call<Body, Args...>())
        return 0.0;
    else
        return array_value_checked(f, args...);
}

// The value, with the gradients accumulated into zeroed arrays of the arguments' sizes.
template <class Body, class... Args>
double array_gradient_checked(const array_expression<Body>& f,
                              const std::array<double*, sizeof...(Args)>& gradients,
                              const Args&... args) {
    using P = program<graph_t<Body>>;
    static_assert(P::scalar,
                  "nabla::value_and_grad: the array expression must be a scalar: reduce it "
                  "with sum, mean, prod, max, min, norm, dot or logsumexp.");
    auto run = start_run(f, args...);
    run.gradient = gradients;
    run_forward<P>(run);

    using T = typename P::top;
    using S = schedule<typename T::dense>;
    const auto pool = run.template pool_lanes<double>();
    const auto results = run.template result_lanes<double>();
    const auto leaves = load_leaves<double, T>(run, results, 0);
    element_values<double, T, constant_count<Body>> values{{}, pool, leaves};
    values.forward();
    adjoint_sweep<S, double, constant_count<Body>, std::array<double, T::leaf_count>> sweep{values,
                                                                                           {}};
    sweep.run();
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        ((run.adjoint[T::codes[K] & ~scalar_leaf_flag] +=
          sweep.adjoint[index_of<S, placeholder<K>>]),
         ...);
    }
    (std::make_index_sequence<T::leaf_count>{});

    [&]<std::size_t... Group>(std::index_sequence<Group...>) {
        constexpr std::size_t last = P::group_count - 1;
        (reverse_group<P, last - Group>(run), ...);
    }
    (std::make_index_sequence<P::group_count>{});
    return values.value[S::size - 1];
}

template <class Body, class... Args>
double array_gradient(const array_expression<Body>& f,
                      const std::array<double*, sizeof...(Args)>& gradients,
                      const Args&... args) {
    if constexpr (!check_array_call<Body, Args...>())
        return 0.0;
    else
        return array_gradient_checked(f, gradients, args...);
}

template <class Body, class... Args>
auto array_value_and_grad(const array_expression<Body>& f, const Args&... args) {
    array_value_and_gradient<decltype(gradient_like(args))...> out{
        0.0, std::tuple{gradient_like(args)...}};
    const std::array<double*, sizeof...(Args)> gradients = std::apply(
        [](auto&... g) { return std::array<double*, sizeof...(Args)>{g.data()...}; },
        out.gradient);
    out.value = array_gradient(f, gradients, args...);
    return out;
}

}  // namespace detail

template <class Body>
template <class... Args>
requires(sizeof...(Args) > 0 &&
         !(detail::is_slice_v<Args> ||
           ...)) auto array_expression<Body>::operator()(const Args&... args) const {
    return detail::array_value(*this, args...);
}

// The value and the gradient with respect to every array argument, each shaped like it.
template <class Body, class... Args>
auto value_and_grad(const array_expression<Body>& f, const Args&... args) {
    return detail::array_value_and_grad(f, args...);
}

// The value, the gradients written into the caller's arrays (one per argument, of its size,
// overwritten), so that an iteration allocates nothing:
//   double v = nabla::value_and_grad_into(f, std::tie(gx, gy), xs, ys);
template <class Body, class... Gradients, class... Args>
double value_and_grad_into(const array_expression<Body>& f,
                           const std::tuple<Gradients&...>& gradients,
                           const Args&... args) {
    static_assert(sizeof...(Gradients) == sizeof...(Args),
                  "nabla::value_and_grad_into: one gradient array per argument.");
    const std::array<std::size_t, sizeof...(Args)> sizes{static_cast<std::size_t>(args.size())...};
    std::array<double*, sizeof...(Args)> pointers{};
    std::size_t k = 0;
    std::apply(
        [&](auto&... g) {
            const auto bind = [&](auto& gradient) {
                if (static_cast<std::size_t>(gradient.size()) != sizes[k])
                    throw shape_error("nabla::value_and_grad_into: gradient array " +
                                      std::to_string(k) + " has " +
                                      std::to_string(gradient.size()) +
                                      " elements, its argument " + std::to_string(sizes[k]));
                pointers[k] = gradient.data();
                for (std::size_t i = 0; i < sizes[k]; ++i)
                    pointers[k][i] = 0.0;
                ++k;
            };
            (bind(g), ...);
        },
        gradients);
    return detail::array_gradient(f, pointers, args...);
}

// The gradient alone: the one array argument's, or a tuple of them.
template <class Body, class... Args>
auto grad(const array_expression<Body>& f, const Args&... args) {
    auto result = detail::array_value_and_grad(f, args...);
    if constexpr (sizeof...(Args) == 1)
        return std::get<0>(std::move(result.gradient));
    else
        return std::move(result.gradient);
}

}  // namespace nabla

template <class... Gradients>
struct std::tuple_size<nabla::array_value_and_gradient<Gradients...>>
    : std::integral_constant<std::size_t, 1 + sizeof...(Gradients)> {};

template <std::size_t I, class... Gradients>
struct std::tuple_element<I, nabla::array_value_and_gradient<Gradients...>> {
    using type = std::conditional_t<
        I == 0,
        double,
        std::tuple_element_t<(I == 0 ? 0 : I - 1), std::tuple<Gradients..., double>>>;
};
