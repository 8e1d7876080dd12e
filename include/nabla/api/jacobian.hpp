#pragma once
// nabla::jacobian: the matrix of first derivatives of a vector function F: R^n -> R^m. F takes a
// container of numbers (std::array, std::vector, xtensor) and returns one (of the same number
// type). The result is an xt::xtensor<R, 2> of shape (m, n), J(i, j) = dF_i / dx_j.
//
//   nabla::jacobian(F, x)                 // forward mode: forward_chunk columns per evaluation
//   nabla::jacobian(nabla::mode::reverse, F, x)   // one recording, then one sweep per row
//
// Forward mode costs about n / forward_chunk evaluations on dual numbers, reverse mode one
// recording and m sweeps: reverse for few outputs and many inputs, forward otherwise. (The default
// is forward: m is known only once F has been called.)

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "../forward/dual.hpp"
#include "../reverse/active.hpp"
#include "../tensor/matrix.hpp"
#include "forward.hpp"
#include "grad.hpp"
#include "reverse.hpp"

namespace nabla {

namespace detail {

// Columns start .. stop - 1 of the Jacobian from the outputs y of one pass; whether an entry is
// NaN. Outputs that are plain numbers (F returned constants) have zero rows, written as such.
template <class Outputs, class R>
bool write_columns(const Outputs& y, std::size_t start, std::size_t stop, matrix<R>& j) {
    using Y = std::remove_cvref_t<decltype(element(y, 0))>;
    bool nan = false;
    for (std::size_t i = 0; i < y.size(); ++i)
        for (std::size_t k = start; k < stop; ++k) {
            if constexpr (is_dual_v<Y>) {
                j(i, k) = element(y, i).tangent[k - start];
            } else {
                static_assert(std::is_arithmetic_v<Y>,
                              "nabla::jacobian(F, x): F returns a container of numbers");
                j(i, k) = R(0);
            }
            nan = nan || j(i, k) != j(i, k);
        }
    return nan;
}

// The same columns again on strong duals (a NaN in the plain ones): off the fast path.
template <class R, class D, class F, class Container>
[[gnu::noinline]] void
strong_columns(const F& f, const Container& x, std::size_t start, std::size_t stop, matrix<R>& j) {
    write_columns(f(seeded_chunk<R, strong_dual_t<D>>(x, start, stop)), start, stop, j);
}

// The Jacobian of F at x on dual numbers D, forward_chunk columns per evaluation.
template <class D, class F, class Container>
auto forward_jacobian(const F& f, const Container& x) {
    using R = promoted<typename Container::value_type>;
    constexpr std::size_t width = forward_chunk;
    const std::size_t n = x.size();
    matrix<R> j = zero_matrix<R>(0, n);
    auto active = container_traits<Container>::template make_like<D>(x);
    for (std::size_t k = 0; k < n; ++k)
        element(active, k) = D(static_cast<R>(element(x, k)));
    for (std::size_t start = 0; start == 0 || start < n; start += width) {
        const std::size_t stop = std::min(n, start + width);
        for (std::size_t k = start; k < stop; ++k)
            element(active, k).tangent[k - start] = R(1);
        const auto y = f(std::as_const(active));
        if (start == 0)
            j = zero_matrix<R>(y.size(), n);
        if (write_columns(y, start, stop, j)) [[unlikely]]  // again on strong duals
            strong_columns<R, D>(f, x, start, stop, j);
        for (std::size_t k = start; k < stop; ++k)
            element(active, k).tangent[k - start] = R(0);
        if (n == 0)
            break;
    }
    return j;
}

}  // namespace detail

template <class F, class Container>
auto jacobian(mode::forward_t, const F& f, const Container& x) {
    static_assert(detail::NumberContainer<Container>,
                  "nabla::jacobian(F, x): x is a container of numbers (std::vector, std::array, "
                  "xtensor).");
    using R = detail::promoted<typename Container::value_type>;
    using D = dual<R, forward_chunk>;
    using active_container = detail::rebind<Container, D>;
    detail::check_generic<F, active_container>();
    if constexpr (std::is_invocable_v<const F&, const active_container&>) {
        using Y = std::remove_cvref_t<decltype(f(std::declval<const active_container&>()))>;
        static_assert(detail::container_traits<Y>::supported,
                      "nabla::jacobian(F, x): F returns a container of numbers (std::vector, "
                      "std::array, xtensor); for one number, use nabla::grad.");
        if constexpr (detail::container_traits<Y>::supported)
            return detail::forward_jacobian<D>(f, x);
        else
            return detail::zero_matrix<R>(0, x.size());
    } else {
        return detail::zero_matrix<R>(0, x.size());  // (check_generic has failed)
    }
}

// Reverse mode: row i is the vector-Jacobian product with e_i, one sweep of the recording vjp
// keeps.
template <class F, class Container>
auto jacobian(mode::reverse_t, const F& f, const Container& x) {
    static_assert(detail::NumberContainer<Container>,
                  "nabla::jacobian(mode::reverse, F, x): x is a container of numbers "
                  "(std::vector, std::array, xtensor).");
    using R = detail::promoted<typename Container::value_type>;
    using active_container = detail::rebind<Container, active<R>>;
    detail::check_reverse_generic<F, active_container>();
    const std::size_t n = x.size();
    matrix<R> j = detail::zero_matrix<R>(0, n);
    if constexpr (std::is_invocable_v<const F&, const active_container&>) {
        using Y = std::remove_cvref_t<decltype(f(std::declval<const active_container&>()))>;
        static_assert(detail::container_traits<Y>::supported,
                      "nabla::jacobian(mode::reverse, F, x): F returns a container of numbers "
                      "(std::vector, std::array, xtensor); for one number, use nabla::grad.");
        if constexpr (detail::container_traits<Y>::supported) {
            auto [y, pullback] = vjp(f, x);
            j = detail::zero_matrix<R>(y.size(), n);
            auto unit = y;
            for (std::size_t i = 0; i < y.size(); ++i) {
                std::fill(unit.begin(), unit.end(), R(0));
                detail::element(unit, i) = R(1);
                const Container row = pullback(unit);
                for (std::size_t k = 0; k < n; ++k)
                    j(i, k) = static_cast<R>(detail::element(row, k));
            }
        }
    }
    return j;
}

// Forward mode (above) unless a mode is given.
template <class F, class Container>
auto jacobian(const F& f, const Container& x) {
    return jacobian(mode::forward, f, x);
}

}  // namespace nabla
