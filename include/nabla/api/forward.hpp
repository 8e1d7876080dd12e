#pragma once
// Forward-mode transformations of ordinary generic callables: value_and_grad, grad and jvp for a
// function written once with `auto` parameters, evaluated on nabla::dual numbers.
//
//   auto f = [](auto x, auto y) { using std::log, std::sin; return log(x) + x * y - sin(y); };
//   auto g = nabla::grad(f, 2.0, 5.0);                     // std::array<double, 2>
//   std::vector<double> gv = nabla::grad(rosenbrock, xv);  // same container type out
//
// Scalars as separate arguments: one pass with dual<R, number of arguments>. Containers
// (std::array, std::vector): passes of `forward_chunk` directions each, so the cost is about
// n / forward_chunk evaluations of f on duals of that width.

#include <algorithm>
#include <array>
#include <cstddef>
#include <iterator>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../concepts.hpp"
#include "../config.hpp"
#include "../core/evaluate.hpp"
#include "../forward/dual.hpp"
#include "../values.hpp"

namespace nabla {

// The number of directions one forward pass carries for container inputs.
inline constexpr std::size_t forward_chunk = 8;

// The value and gradient of a function of a container: the gradient has the input's type.
template <class R, class Gradient>
struct value_with_gradient {
    R value;
    Gradient gradient;
};

// The value and one directional derivative.
template <class R>
struct value_and_tangent {
    R value;
    R tangent;
};

namespace detail {

// Whether a transformation's arguments are one container of numbers (rather than scalars).
template <class... Args>
inline constexpr bool one_container = sizeof...(Args) == 1 && (NumberContainer<Args> && ...);

// The value and tangents of what f returned; a function that returns a plain number is constant.
template <class R, class D, class Y>
constexpr auto split_result(const Y& y) {
    if constexpr (std::is_same_v<Y, D>)
        return std::pair{y.value, y.tangent};
    else
        return std::pair{static_cast<R>(y), decltype(D::tangent){}};
}

template <class F, class... Args>
constexpr void check_generic() {
    static_assert(std::is_invocable_v<const F&, const Args&...>,
                  "nabla: this function cannot be called with nabla's dual numbers. Write it "
                  "generically, with auto parameters, and call math functions unqualified: "
                  "[](auto x, auto y) { using std::sin; return sin(x) * y; } instead of "
                  "[](double x, double y) { return std::sin(x) * y; }.");
}

// Whether f, called with A..., returns one number: evaluated in the condition of its callers'
// `if constexpr`, so that a function with several outputs gets this message first.
template <class F, class... A>
constexpr bool one_output() {
    if constexpr (std::is_invocable_v<const F&, const A&...>) {
        using Y = std::remove_cvref_t<std::invoke_result_t<const F&, const A&...>>;
        constexpr bool ok = !container_traits<Y>::supported;
        static_assert(ok, "nabla::grad(f, ...): f returns several numbers (a container); grad "
                          "and value_and_grad take a function with one output. For several "
                          "outputs, use nabla::jacobian (or nabla::vjp).");
        return ok;
    } else {
        return true;
    }
}

// The I-th unit vector of N, a constant in memory (so that a vector load reads it whole).
template <std::size_t I, class T, std::size_t N>
inline constexpr std::array<T, N> unit = [] {
    std::array<T, N> e{};
    e[I] = T(1);
    return e;
}();

// Seeds element x of a container with direction i, and clears it again, writing whole tangent
// arrays: a store of one tangent into the array would make the function's wide loads of it wait
// for the store to drain (a store-forwarding stall, twice the time of Henon-Heiles' gradient).
template <class T, std::size_t N>
inline constexpr std::array<std::array<T, N>, N> units = [] {
    std::array<std::array<T, N>, N> e{};
    for (std::size_t i = 0; i < N; ++i)
        e[i][i] = T(1);
    return e;
}();

template <class D>
constexpr void seed(D& x, std::size_t i) {
    using T = typename D::value_type;
    if constexpr (D::size != dynamic && D::size <= 64)
        x.tangent = units<T, D::size>[i];
    else
        x.tangent[i] = T(1);
}
template <class D>
constexpr void unseed(D& x, std::size_t i) {
    using T = typename D::value_type;
    if constexpr (D::size != dynamic && D::size <= 64)
        x.tangent = typename D::tangent_type{};
    else
        x.tangent[i] = T(0);
}

// f at the arguments, each seeded with its unit direction (a plain pack expansion: no tuple, no
// lambda).
template <class R, class D, class F, std::size_t... I, class... Args>
NABLA_ALWAYS_INLINE constexpr auto
call_seeded(const F& f, std::index_sequence<I...>, const Args&... args) {
    return f(D(static_cast<R>(args), unit<I, R, sizeof...(Args)>)...);
}

// The value and gradient in a dual number, the gradient copied element by element (a copy of the
// whole tangent array made g++ send it through the stack, a store and reloads on every call).
template <class R, class D, std::size_t... I>
NABLA_ALWAYS_INLINE constexpr value_and_gradient<R, sizeof...(I)>
result_of(const D& y, std::index_sequence<I...>) {
    return {y.value, {y.tangent[I]...}};
}

// Whether a number, or any part of a dual number, is NaN.
template <class T>
constexpr bool has_nan(const T& x) {
    if constexpr (DualLike<T>) {
        if (has_nan(x.value))
            return true;
        for (const auto& t : x.tangent)
            if (has_nan(t))
                return true;
        return false;
    } else {
        return is_nan(x);
    }
}

// Whether any of the numbers is NaN (for plain numbers, comparisons ORed without a branch, which
// vectorise for Rosenbrock's 16 directions).
template <class Range>
constexpr bool any_nan(const Range& numbers) {
    using T = std::remove_cvref_t<decltype(*std::begin(numbers))>;
    if constexpr (std::is_floating_point_v<T>) {
        bool nan = false;
        for (const T& x : numbers)
            nan |= x != x;
        return nan;
    } else {
        for (const auto& x : numbers)
            if (has_nan(x))
                return true;
        return false;
    }
}

// The value and gradient on dual numbers D.
template <class R, class D, class F, class... Args>
NABLA_ALWAYS_INLINE constexpr auto dual_value_and_grad(const F& f, const Args&... args) {
    const auto y = call_seeded<R, D>(f, std::index_sequence_for<Args...>{}, args...);
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(y)>, D>)
        return result_of<R>(y, std::index_sequence_for<Args...>{});
    else
        return value_and_gradient<R, sizeof...(Args)>{static_cast<R>(y), {}};
}

// The dual numbers of the NaN fallback for dual numbers D: strong, with one direction, at every
// level of nesting above R, the arguments' own number type (R itself stays as it is, since an
// enclosing transformation's numbers, captured by f or passed in, keep their type). Every forward
// transformation evaluates again on these, a direction at a time, so that f is compiled for the
// fallback once, whatever the width of the plain duals, and on the narrowest duals there are.
template <class D, class R>
struct strong_direction {
    using type = D;
};
template <class T, std::size_t N, bool S, class R>
requires(!std::is_same_v<dual<T, N, S>, R>) struct strong_direction<dual<T, N, S>, R> {
    using type = dual<typename strong_direction<T, R>::type, 1, true>;
};
template <class D, class R = primal_type_t<D>>
using strong_direction_t = typename strong_direction<D, R>::type;

// The value and derivative of f at the arguments along argument I, on strong duals S.
template <class R, class S, std::size_t I, class F, class... Args>
NABLA_ALWAYS_INLINE constexpr auto strong_partial(const F& f, const Args&... args) {
    return [&]<std::size_t... J>(std::index_sequence<J...>) {
        return split_result<R, S>(f(S(static_cast<R>(args), {R(I == J ? 1 : 0)})...));
    }(std::index_sequence_for<Args...>{});
}

// The value and gradient of f at the arguments on strong duals, one direction per evaluation
// (inline: a call made g++ return the plain result through memory as well).
template <class R, class F, class... Args>
NABLA_ALWAYS_INLINE constexpr value_and_gradient<R, sizeof...(Args)>
strong_value_and_grad(const F& f, const Args&... args) {
    using S = dual<R, 1, true>;
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        const std::array partials{strong_partial<R, S, I>(f, args...)...};
        return value_and_gradient<R, sizeof...(Args)>{partials[0].first,
                                                      {partials[I].second[0]...}};
    }(std::index_sequence_for<Args...>{});
}

template <class F, class... Args>
NABLA_ALWAYS_INLINE constexpr auto forward_value_and_grad(const F& f, const Args&... args) {
    using R = promoted<std::common_type_t<Args...>>;
    constexpr std::size_t n = sizeof...(Args);
    using D = dual<R, n>;
    check_generic<F, decltype((void)args, D{})...>();
    if constexpr (!std::is_invocable_v<const F&, decltype((void)args, D{})...> ||
                  !one_output<F, decltype((void)args, D{})...>()) {
        return value_and_gradient<R, n>{};
    } else {
        // Again on strong duals when the gradient has a NaN.
        const auto result = dual_value_and_grad<R, D>(f, args...);
        if (any_nan(result.gradient)) [[unlikely]]
            return strong_value_and_grad<R>(f, args...);
        return result;
    }
}

// Directions per pass for a container: a std::array of up to 16 numbers takes one pass; longer
// or run-time-sized inputs go in chunks of forward_chunk.
template <class Container>
constexpr std::size_t chunk_width() {
    constexpr std::size_t size = container_traits<Container>::static_size;
    if constexpr (size > 0)
        return std::min(size, std::size_t{16});
    else
        return forward_chunk;
}

// x as dual numbers S, seeded with directions start .. stop - 1.
template <class R, class S, class Container>
auto seeded_chunk(const Container& x, std::size_t start, std::size_t stop) {
    auto active = container_traits<Container>::template make_like<S>(x);
    for (std::size_t k = 0; k < size_of(x); ++k)
        element(active, k) = S(static_cast<R>(element(x, k)));
    for (std::size_t k = start; k < stop; ++k)
        seed(element(active, k), k - start);
    return active;
}

// The tangents of directions start .. stop - 1 of f at x, on strong duals (a NaN in the plain
// ones): off the fast path, a direction per evaluation.
template <class R, class D, class F, class Container>
[[gnu::noinline]] auto
strong_chunk(const F& f, const Container& x, std::size_t start, std::size_t stop) {
    using S = strong_direction_t<D, R>;
    decltype(D::tangent) tangent{};
    for (std::size_t k = start; k < stop; ++k)
        tangent[k - start] = split_result<R, S>(f(seeded_chunk<R, S>(x, k, k + 1))).second[0];
    return tangent;
}

// The value and gradient of f at a std::array of N numbers in one pass on dual<R, N>: the inputs
// built seeded, and the gradient read out, in one expression each (no loops to seed and clear
// directions, no copy of x), as for separate arguments.
template <class F, class T, std::size_t N>
NABLA_ALWAYS_INLINE auto one_pass_value_and_grad(const F& f, const std::array<T, N>& x) {
    using R = promoted<T>;
    using D = dual<R, N>;
    return [&]<std::size_t... I>(std::index_sequence<I...>) NABLA_INLINE_LAMBDA {
        using result = value_with_gradient<R, std::array<T, N>>;
        std::array<D, N> active;
        for (std::size_t k = 0; k < N; ++k)
            active[k] = D(static_cast<R>(x[k]), units<R, N>[k]);
        const auto [value, tangent] = split_result<R, D>(f(std::as_const(active)));
        if (any_nan(tangent)) [[unlikely]] {
            const auto strong = strong_chunk<R, D>(f, x, 0, N);
            return result{value, {static_cast<T>(strong[I])...}};
        }
        return result{value, {static_cast<T>(tangent[I])...}};
    }(std::make_index_sequence<N>{});
}

// Gradient of a function of a container, `forward_chunk` directions per pass.
template <class F, class Container>
auto forward_value_and_grad_container(const F& f, const Container& x) {
    using T = typename Container::value_type;
    using R = promoted<T>;
    constexpr std::size_t width = chunk_width<Container>();
    using D = dual<R, width>;
    using dual_container = rebind<Container, D>;
    check_generic<F, dual_container>();
    Container gradient = x;
    R value{};
    if constexpr (std::is_invocable_v<const F&, const dual_container&> &&
                  one_output<F, dual_container>() &&
                  std::is_same_v<Container, std::array<T, width>>) {
        return one_pass_value_and_grad(f, x);
    } else if constexpr (std::is_invocable_v<const F&, const dual_container&> &&
                         one_output<F, dual_container>()) {
        const std::size_t n = x.size();
        dual_container active = container_traits<Container>::template make_like<D>(x);
        for (std::size_t k = 0; k < n; ++k)
            element(active, k) = D(static_cast<R>(element(x, k)));
        if (n == 0)
            value = split_result<R, D>(f(active)).first;
        for (std::size_t start = 0; start < n; start += width) {
            const std::size_t stop = std::min(n, start + width);
            for (std::size_t k = start; k < stop; ++k)
                seed(element(active, k), k - start);
            auto [v, tangent] = split_result<R, D>(f(active));
            if (any_nan(tangent)) [[unlikely]]
                tangent = strong_chunk<R, D>(f, x, start, stop);
            value = v;
            for (std::size_t k = start; k < stop; ++k) {
                element(gradient, k) = static_cast<T>(tangent[k - start]);
                unseed(element(active, k), k - start);
            }
        }
    }
    return value_with_gradient<R, Container>{value, gradient};
}

}  // namespace detail

// The value and one directional derivative of f at `primals` along `tangents` (two tuples of
// the same length): one evaluation on dual<R, 1>. f may be a generic callable or a static
// expression.
template <class F, class... P, class... T>
constexpr auto jvp(const F& f, const std::tuple<P...>& primals, const std::tuple<T...>& tangents) {
    static_assert(sizeof...(P) == sizeof...(T),
                  "nabla::jvp(f, primals, tangents): give one tangent per primal argument.");
    using R = detail::promoted<std::common_type_t<P..., T...>>;
    using D = dual<R, 1>;
    detail::check_generic<F, decltype(std::declval<P>(), D{})...>();
    if constexpr (!std::is_invocable_v<const F&, decltype(std::declval<P>(), D{})...>) {
        return value_and_tangent<R>{};
    } else {
        const auto along = [&]<class E, std::size_t... I>(std::index_sequence<I...>) {
            const auto seeded = std::tuple{E(static_cast<R>(std::get<I>(primals)),
                                             {static_cast<R>(std::get<I>(tangents))})...};
            const auto [value, tangent] = detail::split_result<R, E>(std::apply(f, seeded));
            return value_and_tangent<R>{value, tangent[0]};
        };
        const auto result = along.template operator()<D>(std::index_sequence_for<P...>{});
        if (detail::is_nan(result.tangent)) [[unlikely]]  // NaN: again on a strong dual
            return along.template operator()<detail::strong_direction_t<D, R>>(
                std::index_sequence_for<P...>{});
        return result;
    }
}

}  // namespace nabla
