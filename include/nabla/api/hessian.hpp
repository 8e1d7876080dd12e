#pragma once
// nabla::hessian: the matrix of second derivatives of a scalar function. Forward over forward
// mode (nested dual numbers): one evaluation on dual<dual<R, n>, n> for n scalar arguments, and
// blocks of forward_chunk x forward_chunk directions for a small container; forward over reverse
// (the tape recording dual numbers, forward_chunk columns per recording) for a std::vector or a
// std::array of more than 16 numbers. f may be a generic callable or a static expression. The
// result is an xt::xtensor<R, 2>, H(i, j).

#include <algorithm>
#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../forward/dual.hpp"
#include "../tensor/matrix.hpp"
#include "forward.hpp"
#include "grad.hpp"
#include "reverse.hpp"

namespace nabla {

namespace detail {

// What f returned on nested duals D: one number, active (D) or a constant (plain).
template <class D, class Y>
constexpr void check_one_number() {
    static_assert(std::is_same_v<Y, D> || std::is_arithmetic_v<Y>,
                  "nabla::hessian(f, ...): f returns one number (the Hessian is of a scalar "
                  "function); for a function with several outputs, use nabla::jacobian");
}

// The value of a nested dual D seeded with direction i in the inner and j in the outer level.
template <class D, class R>
constexpr D
seeded_twice(R value, std::size_t inner, std::size_t outer, bool active_inner, bool active_outer) {
    D x(value);
    if (active_inner)
        x.value.tangent[inner] = R(1);
    if (active_outer)
        x.tangent[outer].value = R(1);
    return x;
}

// The Hessian of f at n scalar arguments on nested duals D, into h; whether an entry is NaN.
template <class D, class F, class H, class... Args>
bool hessian_on(const F& f, H& h, const Args&... args) {
    using R = typename H::value_type;
    constexpr std::size_t n = sizeof...(Args);
    const auto y = [&]<std::size_t... I>(std::index_sequence<I...>) {
        return f(seeded_twice<D>(static_cast<R>(args), I, I, true, true)...);
    }
    (std::index_sequence_for<Args...>{});
    check_one_number<D, std::remove_cvref_t<decltype(y)>>();
    bool nan = false;
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(y)>, D>) {
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                h(i, j) = y.tangent[j].tangent[i];
                nan = nan || is_nan(h(i, j));
            }
    }
    return nan;
}

// The Hessian of f at n scalar arguments on strong duals, an entry per evaluation, into h.
template <class R, class F, class H, class... Args>
[[gnu::noinline]] void strong_hessian(const F& f, H& h, const Args&... args) {
    using S = strong_direction_t<dual<dual<R, 1>, 1>, R>;
    constexpr std::size_t n = sizeof...(Args);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i; j < n; ++j) {
            const auto y = [&]<std::size_t... I>(std::index_sequence<I...>) {
                return f(seeded_twice<S>(static_cast<R>(args), 0, 0, I == i, I == j)...);
            }(std::index_sequence_for<Args...>{});
            if constexpr (std::is_same_v<std::remove_cvref_t<decltype(y)>, S>) {
                h(i, j) = y.tangent[0].tangent[0];
                h(j, i) = h(i, j);
            }
        }
}

template <class F, class... Args>
auto hessian_of_scalars(const F& f, const Args&... args) {
    using R = promoted<std::common_type_t<Args...>>;
    constexpr std::size_t n = sizeof...(Args);
    using D = dual<dual<R, n>, n>;
    check_generic<F, decltype((void)args, D{})...>();
    auto h = zero_matrix<R>(n, n);
    if constexpr (std::is_invocable_v<const F&, decltype((void)args, D{})...>) {
        if (hessian_on<D>(f, h, args...)) [[unlikely]]  // a NaN: again on strong duals
            strong_hessian<R>(f, h, args...);
    }
    return h;
}

// Block (rows [a, a + width), columns [b, b + width)) of the Hessian of f at x on nested duals D,
// into h (and its mirror); whether an entry is NaN.
template <class D, std::size_t width, class F, class Container, class H>
bool hessian_block(const F& f, const Container& x, std::size_t a, std::size_t b, H& h) {
    using R = typename H::value_type;
    const std::size_t n = x.size();
    auto active = container_traits<Container>::template make_like<D>(x);
    for (std::size_t k = 0; k < n; ++k) {
        const bool in_a = k >= a && k < a + width;
        const bool in_b = k >= b && k < b + width;
        element(active, k) = seeded_twice<D>(static_cast<R>(element(x, k)), in_a ? k - a : 0,
                                             in_b ? k - b : 0, in_a, in_b);
    }
    const auto y = f(active);
    check_one_number<D, std::remove_cvref_t<decltype(y)>>();
    bool nan = false;
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(y)>, D>) {
        for (std::size_t i = a; i < std::min(n, a + width); ++i) {
            for (std::size_t j = b; j < std::min(n, b + width); ++j) {
                h(i, j) = y.tangent[j - b].tangent[i - a];
                h(j, i) = h(i, j);
                nan = nan || is_nan(h(i, j));
            }
        }
    }
    return nan;
}

// Block (a, b) of the Hessian again on strong duals S, an entry per evaluation.
template <class S, class F, class Container, class H>
[[gnu::noinline]] void strong_block(
    const F& f, const Container& x, std::size_t a, std::size_t b, std::size_t width, H& h) {
    const std::size_t n = size_of(x);
    for (std::size_t i = a; i < std::min(n, a + width); ++i)
        for (std::size_t j = std::max(i, b); j < std::min(n, b + width); ++j)
            hessian_block<S, 1>(f, x, i, j, h);
}

// A container whose size is known at compile time (std::array) gets a fixed-size Hessian, and
// blocks of at most its size.
template <class F, class Container>
auto hessian_of_container(const F& f, const Container& x) {
    using R = promoted<typename Container::value_type>;
    constexpr std::size_t size = container_traits<Container>::static_size;
    constexpr std::size_t width = size > 0 ? std::min(size, forward_chunk) : forward_chunk;
    using D = dual<dual<R, width>, width>;
    using active_container = rebind<Container, D>;
    check_generic<F, active_container>();
    const std::size_t n = size_of(x);
    auto h = [&] {
        if constexpr (fixed_result<size, size>)
            return zero_fixed_matrix<R, size, size>();
        else
            return zero_matrix<R>(n, n);
    }();
    if constexpr (std::is_invocable_v<const F&, const active_container&>) {
        // Block (rows [a, a + width), columns [b, b + width)) per pass; H is symmetric, so only
        // blocks with b >= a are computed. A block with a NaN again on strong duals.
        for (std::size_t a = 0; a < n; a += width)
            for (std::size_t b = a; b < n; b += width)
                if (hessian_block<D, width>(f, x, a, b, h)) [[unlikely]]
                    strong_block<strong_direction_t<D, R>>(f, x, a, b, width, h);
    }
    return h;
}

}  // namespace detail

// The Hessian by forward over forward (nested duals): n scalar arguments or one container.
template <class F, class... Args>
auto hessian(mode::forward_t, const F& f, const Args&... args) {
    if constexpr (detail::one_container<Args...>) {
        return detail::matrix_for<Args...>(detail::hessian_of_container(f, args...));
    } else {
        static_assert((ArgumentNumber<Args> && ...),
                      "nabla::hessian(f, args...): the arguments are numbers, one per parameter "
                      "of f, or a single container of numbers.");
        return detail::hessian_of_scalars(f, args...);
    }
}

// The Hessian by forward over reverse: one recording on the tape per forward_chunk columns, each
// a few gradients' cost, so O(n) gradients in all instead of O(n^2) evaluations.
template <class F, class Container>
auto hessian(mode::reverse_t, const F& f, const Container& x) {
    static_assert(detail::NumberContainer<Container>,
                  "nabla::hessian(mode::reverse, f, x): x is a container of numbers");
    if constexpr (detail::recorded_arguments<Container>) {
        // Inside a reverse derivative: forward over forward, which the enclosing tape records.
        return hessian(mode::forward, f, x);
    } else {
        using R = detail::promoted<typename Container::value_type>;
        constexpr std::size_t size = detail::container_traits<Container>::static_size;
        auto h = [&] {
            if constexpr (detail::fixed_result<size, size>)
                return detail::zero_fixed_matrix<R, size, size>();
            else
                return detail::zero_matrix<R>(detail::size_of(x), detail::size_of(x));
        }();
        detail::reverse_hessian<forward_chunk>(
            f, x, [&](std::size_t i, std::size_t j, const R& value) { h(i, j) = value; });
        return detail::matrix_for<Container>(std::move(h));
    }
}

// The Hessian of f at the arguments: n scalar arguments, or one container. Forward over reverse
// for a std::vector or a std::array of more than 16 numbers (as value_and_grad picks reverse
// mode), forward over forward otherwise.
template <class F, class... Args>
auto hessian(const F& f, const Args&... args) {
    if constexpr (detail::prefers_reverse<Args...>)
        return hessian(mode::reverse, f, args...);
    else
        return hessian(mode::forward, f, args...);
}

}  // namespace nabla
