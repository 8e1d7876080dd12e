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
NABLA_ALWAYS_INLINE void store_lanes(double* p, const L& v) {
    if constexpr (std::is_same_v<L, double>)
        *p = v;
    else
        v.store_unaligned(p);
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

// The first element of an argument: an xtensor view's starts at data() + data_offset().
template <class C>
const double* first_element(const C& c) {
    if constexpr (requires { c.data_offset(); })
        return c.data() + c.data_offset();
    else
        return c.data();
}

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
    static constexpr std::size_t pool_size = PoolSize;
    std::array<const double*, Arguments> data{};
    std::array<std::size_t, Arguments> size{};
    std::array<double*, Arguments> gradient{};
    std::array<double, PoolSize> pool{};
    std::array<double, P::count + 1> result{};
    std::array<double, P::count + 1> adjoint{};
    std::array<std::size_t, P::count + 1> length{};

    // The adjoints of scalar leaves taken in fused loops with a unit scale, per reduction.
    std::array<std::array<double, P::count + 1>, P::count + 1> unit_adjoint{};

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

// Lanes `previous` and `current` moved up by Shift lanes: lane t is previous[W - Shift + t] for
// t < Shift, current[t - Shift] after. Carries a leaf's adjoints to the elements its view reads,
// in registers.
template <std::size_t Shift, class L>
NABLA_ALWAYS_INLINE L shift_in(const L& previous, const L& current) {
    constexpr std::size_t W = width<L>;
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
    using R = typename L::register_type;
    return [&]<std::size_t... T>(std::index_sequence<T...>) {
        return L(__builtin_shufflevector(R(previous), R(current),
                                         (T < Shift ? W - Shift + T : W + T - Shift)...));
    }
    (std::make_index_sequence<W>{});
#else
    std::array<double, 2 * W> both{};
    previous.store_unaligned(both.data());
    current.store_unaligned(both.data() + W);
    return L::load_unaligned(both.data() + W - Shift);
#endif
}

template <bool Add, class L>
NABLA_ALWAYS_INLINE L add_if(const L& total, const L& x) {
    if constexpr (Add)
        return total + x;
    else
        return total;
}

// The sum of the moved adjoints of leaf K and of the leaves it leads (views of the same array).
template <auto Leader, std::size_t K, class L, std::size_t N>
NABLA_ALWAYS_INLINE L led_block(const std::array<L, N>& moved) {
    return [&]<std::size_t... M>(std::index_sequence<M...>) {
        L block = moved[K];
        ((block = add_if<(M != K && Leader[M] == K)>(block, moved[M])), ...);
        return block;
    }
    (std::make_index_sequence<N>{});
}

// Which groups take the gradient in their forward loop (value and gradient in one pass, the
// gradient stored, not accumulated): one reduction whose seed factors (sum, mean, norm), read by
// the top expression alone (so its adjoint is known right after the loops), whose arrays no other
// such group writes, and whose views of one array differ by less than a batch (their adjoints
// meet in registers): sum, mean, norm and logsumexp. The others recompute in a reverse loop.
template <class P>
struct fusion {
    static constexpr std::size_t W = width<lanes>;

    static constexpr auto read_by_body = [] {
        std::array<bool, P::count + 1> read{};
        const auto& [codes, sizes] = P::leaf_codes;
        for (std::size_t j = 0; j < P::count; ++j)
            for (std::size_t k = 0; k < sizes[j]; ++k)
                if ((codes[j][k] & scalar_leaf_flag) != 0)
                    read[codes[j][k] & ~scalar_leaf_flag] = true;
        return read;
    }();

    static constexpr auto factored = [] {
        std::array<bool, P::count + 1> f{};
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            ((f[J] = FactoredSeed<typename P::template kind<J>>), ...);
        }
        (std::make_index_sequence<P::count>{});
        return f;
    }();

    // The smallest begin of each argument's views in body j (offset_limit where it is not read).
    static constexpr std::size_t first_begin(std::size_t j, std::size_t argument) {
        const auto& [codes, sizes] = P::leaf_codes;
        std::size_t b = offset_limit;
        for (std::size_t k = 0; k < sizes[j]; ++k)
            if (is_array_leaf_code(codes[j][k]) && decode_leaf(codes[j][k]).argument == argument)
                b = decode_leaf(codes[j][k]).begin < b ? decode_leaf(codes[j][k]).begin : b;
        return b;
    }

    // fused[g]: the member of group g that runs fused, or P::count for none.
    static constexpr auto fused = [] {
        std::array<std::size_t, P::group_count + 1> member{};
        std::array<bool, offset_limit> written{};
        const auto& [codes, sizes] = P::leaf_codes;
        for (std::size_t g = 0; g < P::group_count; ++g) {
            member[g] = P::count;
            std::size_t only = P::count, members = 0;
            for (std::size_t j = 0; j < P::count; ++j)
                if (P::grouping.first[j] == g) {
                    only = j;
                    ++members;
                }
            if (W == 1 || members != 1 || !factored[only] || read_by_body[only])
                continue;
            bool ok = true;
            for (std::size_t k = 0; k < sizes[only]; ++k) {
                if (!is_array_leaf_code(codes[only][k]))
                    continue;
                const leaf_view v = decode_leaf(codes[only][k]);
                if (written[v.argument] || v.begin - first_begin(only, v.argument) >= W)
                    ok = false;
            }
            if (!ok)
                continue;
            for (std::size_t k = 0; k < sizes[only]; ++k)
                if (is_array_leaf_code(codes[only][k]))
                    written[decode_leaf(codes[only][k]).argument] = true;
            member[g] = only;
        }
        return member;
    }();

    // Whether argument a's gradient is written by a fused group (and so needs no zeroing first).
    static constexpr auto fused_argument = [] {
        std::array<bool, offset_limit> written{};
        const auto& [codes, sizes] = P::leaf_codes;
        for (std::size_t g = 0; g < P::group_count; ++g)
            if (fused[g] != P::count)
                for (std::size_t k = 0; k < sizes[fused[g]]; ++k)
                    if (is_array_leaf_code(codes[fused[g]][k]))
                        written[decode_leaf(codes[fused[g]][k]).argument] = true;
        return written;
    }();
};

// A loop's accumulators merged in order, then its lanes, into one state of plain numbers.
template <std::size_t W, class State, std::size_t U>
NABLA_ALWAYS_INLINE auto fold_states(std::array<State, U>& states) {
    for (std::size_t u = 1; u < U; ++u)
        states[0].merge(states[u]);
    auto scalar = states[0].lane(0);
    for (std::size_t k = 1; k < W; ++k)
        scalar.merge(states[0].lane(k));
    return scalar;
}

// A value-only loop over reduction J's elements with another kind (logsumexp's maximum).
template <class P, std::size_t J, class Kind, class Run>
double prepass(const Run& run, std::size_t n) {
    using E = typename P::template body<J>;
    using L = lanes;
    constexpr std::size_t W = width<L>;
    constexpr std::size_t unroll = 4;
    const auto pool = run.template pool_lanes<L>();
    const auto results = run.template result_lanes<L>();
    std::array<typename Kind::template state<L>, unroll> states{};
    std::size_t i = 0;
    for (; i + unroll * W <= n; i += unroll * W)
        for (std::size_t u = 0; u < unroll; ++u)
            states[u].add(element_value<L, E>(run, pool, results, i + u * W));
    for (; i + W <= n; i += W)
        states[0].add(element_value<L, E>(run, pool, results, i));
    auto scalar = fold_states<W>(states);
    const auto scalar_pool = run.template pool_lanes<double>();
    const auto scalar_results = run.template result_lanes<double>();
    for (; i < n; ++i)
        scalar.add(element_value<double, E>(run, scalar_pool, scalar_results, i));
    return Kind::result(scalar, n);
}

// The forward loop of a fused group: the reduction's value, and each element's adjoints with the
// seed's shape, stored into the gradient arrays (the views of one array summed in registers);
// fusion<P> says when this is allowed.
template <class P, std::size_t J, class Run>
void fused_group(Run& run, std::size_t n) {
    using E = typename P::template body<J>;
    using S = schedule<typename E::dense>;
    using kind = typename P::template kind<J>;
    using F = fusion<P>;
    using L = lanes;
    constexpr std::size_t W = width<L>;
    constexpr std::size_t leaf_count = E::leaf_count;
    constexpr auto shift = [] {
        std::array<std::size_t, leaf_count> s{};
        for (std::size_t k = 0; k < leaf_count; ++k)
            if (is_array_leaf_code(E::codes[k])) {
                const leaf_view v = decode_leaf(E::codes[k]);
                s[k] = v.begin - F::first_begin(J, v.argument);
            }
        return s;
    }();
    // The leaf that stores each argument's block (its first leaf); the others add to it.
    constexpr auto leader = [] {
        std::array<std::size_t, leaf_count> first{};
        for (std::size_t k = 0; k < leaf_count; ++k) {
            first[k] = k;
            for (std::size_t m = 0; m < k; ++m)
                if (is_array_leaf_code(E::codes[k]) && is_array_leaf_code(E::codes[m]) &&
                    decode_leaf(E::codes[k]).argument == decode_leaf(E::codes[m]).argument) {
                    first[k] = m;
                    break;
                }
        }
        return first;
    }();

    [&]<std::size_t... K>(std::index_sequence<K...>) {
        // Elements before the first view of each argument get no adjoint.
        (
            [&] {
                if constexpr (is_array_leaf_code(E::codes[K]) && leader[K] == K) {
                    constexpr leaf_view v = decode_leaf(E::codes[K]);
                    double* g = run.gradient[v.argument];
                    for (std::size_t t = 0; t < F::first_begin(J, v.argument); ++t)
                        g[t] = 0.0;
                }
            }(),
            ...);

        const auto pool = run.template pool_lanes<L>();
        const auto results = run.template result_lanes<L>();
        // The value accumulates as in the forward loop (four states, whole blocks of four
        // batches first), so that it equals the value computed alone, to the last bit.
        double pre = 0.0;
        if constexpr (requires { typename kind::prepass; })
            pre = prepass<P, J, typename kind::prepass>(run, n);
        using state = typename kind::template state<L>;
        constexpr std::size_t unroll = 4;
        std::array<state, unroll> states{};
        states.fill(fused_initial<kind, L>(pre));
        std::array<L, leaf_count> previous{};
        std::array<L, leaf_count> scalar_adjoint{};
        const std::size_t blocks_end = n - n % (unroll * W);
        std::size_t i = 0;
        for (; i + W <= n; i += W) {
            const auto leaves = load_leaves<L, E>(run, results, i);
            element_values<L, E, Run::pool_size> values{{}, pool, leaves};
            values.forward();
            const L v = values.value[S::size - 1];
            const L shape = kind::shape(v, pre);
            fused_add<kind>(states[i < blocks_end ? (i / W) % unroll : 0], v, shape);
            adjoint_sweep<S, L, Run::pool_size, std::array<L, leaf_count>> sweep{values, {}};
            sweep.run(shape);
            std::array<L, leaf_count> adjoint{sweep.adjoint[index_of<S, placeholder<K>>]...};
            std::array<L, leaf_count> moved{};
            (
                [&] {
                    if constexpr (is_array_leaf_code(E::codes[K])) {
                        if constexpr (shift[K] == 0)
                            moved[K] = adjoint[K];
                        else
                            moved[K] = shift_in<shift[K]>(previous[K], adjoint[K]);
                        previous[K] = adjoint[K];
                    } else {
                        scalar_adjoint[K] += adjoint[K];
                    }
                }(),
                ...);
            (
                [&] {
                    if constexpr (is_array_leaf_code(E::codes[K]) && leader[K] == K) {
                        constexpr leaf_view v = decode_leaf(E::codes[K]);
                        store_lanes(run.gradient[v.argument] + i + F::first_begin(J, v.argument),
                                    led_block<leader, K>(moved));
                    }
                }(),
                ...);
        }
        // From here on the gradient arrays are accumulated: zero what is left of them, add the
        // lanes still carried, then run the remaining elements on doubles.
        (
            [&] {
                if constexpr (is_array_leaf_code(E::codes[K]) && leader[K] == K) {
                    constexpr leaf_view v = decode_leaf(E::codes[K]);
                    double* g = run.gradient[v.argument];
                    for (std::size_t t = i + F::first_begin(J, v.argument);
                         t < run.size[v.argument]; ++t)
                        g[t] = 0.0;
                }
            }(),
            ...);
        if (i > 0) {
            (
                [&] {
                    if constexpr (is_array_leaf_code(E::codes[K]) && shift[K] > 0) {
                        constexpr leaf_view v = decode_leaf(E::codes[K]);
                        double* g = run.gradient[v.argument] + i + F::first_begin(J, v.argument);
                        for (std::size_t t = 0; t < shift[K]; ++t)
                            g[t] += lane_of(previous[K], W - shift[K] + t);
                    }
                }(),
                ...);
        }
        auto scalar = fold_states<W>(states);
        const auto scalar_pool = run.template pool_lanes<double>();
        const auto scalar_results = run.template result_lanes<double>();
        std::array<double, leaf_count> tail_adjoint{};
        for (; i < n; ++i) {
            const auto leaves = load_leaves<double, E>(run, scalar_results, i);
            element_values<double, E, Run::pool_size> values{{}, scalar_pool, leaves};
            values.forward();
            const double v = values.value[S::size - 1];
            const double shape = kind::shape(v, pre);
            fused_add<kind>(scalar, v, shape);
            adjoint_sweep<S, double, Run::pool_size, std::array<double, leaf_count>> sweep{values,
                                                                                           {}};
            sweep.run(shape);
            (
                [&] {
                    const double a = sweep.adjoint[index_of<S, placeholder<K>>];
                    if constexpr (is_array_leaf_code(E::codes[K])) {
                        constexpr leaf_view view = decode_leaf(E::codes[K]);
                        run.gradient[view.argument][i + view.begin] += a;
                    } else {
                        tail_adjoint[K] += a;
                    }
                }(),
                ...);
        }
        (
            [&] {
                if constexpr (!is_array_leaf_code(E::codes[K]))
                    run.unit_adjoint[J][E::codes[K] & ~scalar_leaf_flag] +=
                        add_lanes(scalar_adjoint[K]) + tail_adjoint[K];
            }(),
            ...);
        std::get<J>(run.state) = scalar;
        run.result[J] = kind::result(scalar, n);
    }
    (std::make_index_sequence<leaf_count>{});
}

// The fused groups' gradients, scaled once their reductions' adjoints are known.
template <class P, class Run>
void scale_fused(Run& run) {
    using F = fusion<P>;
    [&]<std::size_t... Group>(std::index_sequence<Group...>) {
        (
            [&] {
                constexpr std::size_t j = F::fused[Group];
                if constexpr (j != P::count) {
                    using kind = typename P::template kind<j>;
                    using E = typename P::template body<j>;
                    const std::size_t n = run.length[j];
                    if (n == 0)
                        return;
                    const double c =
                        kind::scale(std::get<j>(run.state), run.result[j], run.adjoint[j], n);
                    // Only what the loop read and wrote: an infinite scale must not turn the
                    // zeros elsewhere, or the adjoints of leaves it does not read, into NaN.
                    for (const std::size_t code : E::codes)
                        if (!is_array_leaf_code(code))
                            run.adjoint[code & ~scalar_leaf_flag] +=
                                c * run.unit_adjoint[j][code & ~scalar_leaf_flag];
                    if (c != 1.0) {
                        std::array<bool, offset_limit> done{};
                        for (const std::size_t code : E::codes) {
                            if (!is_array_leaf_code(code) || done[decode_leaf(code).argument])
                                continue;
                            const std::size_t a = decode_leaf(code).argument;
                            done[a] = true;
                            std::size_t last = 0;
                            for (const std::size_t other : E::codes)
                                if (is_array_leaf_code(other) && decode_leaf(other).argument == a &&
                                    decode_leaf(other).begin > last)
                                    last = decode_leaf(other).begin;
                            for (std::size_t t = F::first_begin(j, a); t < last + n; ++t)
                                run.gradient[a][t] *= c;
                        }
                    }
                }
            }(),
            ...);
    }
    (std::make_index_sequence<P::group_count>{});
}

// The length of a group's loop, each member's recorded; throws if the members' lengths differ.
template <class P, std::size_t Group, class Run>
std::size_t group_length(Run& run) {
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
    return n;
}

// Every loop's length, checked before anything is written.
template <class P, class Run>
void check_lengths(Run& run) {
    [&]<std::size_t... Group>(std::index_sequence<Group...>) {
        (group_length<P, Group>(run), ...);
    }
    (std::make_index_sequence<P::group_count>{});
}

// The forward loop of one group: every member reduction accumulates in four states per lane
// (independent chains the processor overlaps), merged in a fixed order at the end.
template <class P, std::size_t Group, bool Gradient, class Run>
void forward_group(Run& run) {
    constexpr auto members = group_members<P, Group>;
    const std::size_t n = group_length<P, Group>(run);
    if constexpr (Gradient && fusion<P>::fused[Group] != P::count) {
        fused_group<P, fusion<P>::fused[Group]>(run, n);
        return;
    }

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
                auto scalar = fold_states<W>(std::get<M>(lanes_states));
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

// An argument must be one-dimensional and contiguous (an xtensor view's elements start at
// data() + data_offset()); argument k, for the message.
template <class C>
void check_array_argument(const C& a, std::size_t k) {
    if constexpr (requires { a.dimension(); }) {
        if (a.dimension() != 1)
            throw shape_error("nabla: array expressions take one-dimensional arrays; argument " +
                              std::to_string(k) + " has " + std::to_string(a.dimension()) +
                              " dimensions");
    }
    if constexpr (requires { a.data_offset(); }) {
        if (a.size() > 1 && a.strides()[0] != 1)
            throw shape_error("nabla: array expressions take contiguous arrays; argument " +
                              std::to_string(k) +
                              " is a strided view (copy it into an xt::xtensor first)");
    }
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
    array_run<program<G>, sizeof...(Args), constant_count<Body>> run{};
    std::size_t k = 0;
    const auto bind = [&](const auto& a) {
        check_array_argument(a, k);
        run.data[k] = first_element(a);
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

template <class P, bool Gradient, class Run>
void run_forward(Run& run) {
    [&]<std::size_t... Group>(std::index_sequence<Group...>) {
        (forward_group<P, Group, Gradient>(run), ...);
    }
    (std::make_index_sequence<P::group_count>{});
}

template <class Body, class... Args>
auto array_value_checked(const array_expression<Body>& f, const Args&... args) {
    using P = program<graph_t<Body>>;
    auto run = start_run(f, args...);
    run_forward<P, false>(run);
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

// The value, with the gradients written into arrays of the arguments' sizes.
template <class Body, class... Args>
double array_gradient_checked(const array_expression<Body>& f,
                              const std::array<double*, sizeof...(Args)>& gradients,
                              const Args&... args) {
    using P = program<graph_t<Body>>;
    static_assert(P::scalar,
                  "nabla::value_and_grad: the array expression must be a scalar: reduce it "
                  "with sum, mean, prod, max, min, norm, dot or logsumexp.");
    auto run = start_run(f, args...);
    check_lengths<P>(run);
    run.gradient = gradients;
    // Arrays a fused loop writes need no zeroing; the others are accumulated into.
    for (std::size_t k = 0; k < sizeof...(Args); ++k)
        if (!fusion<P>::fused_argument[k])
            for (std::size_t t = 0; t < run.size[k]; ++t)
                run.gradient[k][t] = 0.0;
    run_forward<P, true>(run);

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

    scale_fused<P>(run);
    [&]<std::size_t... Group>(std::index_sequence<Group...>) {
        constexpr std::size_t last = P::group_count - 1;
        (
            [&] {
                if constexpr (fusion<P>::fused[last - Group] == P::count)
                    reverse_group<P, last - Group>(run);
            }(),
            ...);
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
        [](auto&... g) { return std::array<double*, sizeof...(Args)>{g.data()...}; }, out.gradient);
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
                                      std::to_string(gradient.size()) + " elements, its argument " +
                                      std::to_string(sizes[k]));
                pointers[k] = gradient.data();
                ++k;
            };
            (bind(g), ...);
        },
        gradients);
    // The loops read the arguments while they write the gradients: an overlap would feed
    // gradients back in as values.
    const std::array<const double*, sizeof...(Args)> inputs{detail::first_element(args)...};
    for (std::size_t g = 0; g < sizeof...(Args); ++g)
        for (std::size_t a = 0; a < sizeof...(Args); ++a)
            if (sizes[g] > 0 && sizes[a] > 0 && pointers[g] < inputs[a] + sizes[a] &&
                inputs[a] < pointers[g] + sizes[g])
                throw shape_error("nabla::value_and_grad_into: gradient array " +
                                  std::to_string(g) + " overlaps argument " + std::to_string(a) +
                                  "; write the gradient into an array of its own");
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
