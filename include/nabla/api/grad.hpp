#pragma once
// nabla::value_and_grad and nabla::grad. For static expressions: one forward sweep for the values
// and one reverse sweep for the adjoints over the compile-time schedule (core/evaluate.hpp). For
// ordinary generic callables: forward mode on dual numbers (api/forward.hpp).

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "../config.hpp"
#include "../core/evaluate.hpp"
#include "forward.hpp"

namespace nabla {

namespace detail {

template <class F, class... Args>
NABLA_ALWAYS_INLINE constexpr auto static_value_and_grad(const F& f, const Args&... args) {
    if constexpr (!detail::check_call<F, Args...>()) {
        return value_and_gradient<double, sizeof...(Args)>{};
    } else {
        using R = detail::result_type<F, Args...>;
        using S = detail::schedule<detail::graph_t<F>>;
        constexpr std::size_t pool_size = detail::constant_count<F>;
        const auto pool = detail::constants_as<R>(f);
        const auto arguments = std::forward_as_tuple(args...);
        detail::forward_values<S, R, pool_size, decltype(arguments)> values{{}, pool, arguments};
        values.forward();
        detail::adjoint_sweep<S, R, pool_size, decltype(arguments)> sweep{values, {}};
        sweep.run();
        return sweep.template result<sizeof...(Args)>();
    }
}

}  // namespace detail

// Forcing a mode: value_and_grad(nabla::mode::forward, f, args...) evaluates f on dual numbers
// even when f is a static expression; nabla::mode::reverse asks for the reverse sweep (static
// expressions only, until the run-time tape exists).
namespace mode {
struct forward_t {};
struct reverse_t {};
inline constexpr forward_t forward{};
inline constexpr reverse_t reverse{};
}  // namespace mode

template <class F, class... Args>
NABLA_ALWAYS_INLINE constexpr auto
value_and_grad(mode::forward_t, const F& f, const Args&... args) {
    if constexpr (detail::one_container<Args...>) {
        return detail::forward_value_and_grad_container(f, args...);
    } else {
        static_assert((Number<Args> && ...),
                      "nabla::value_and_grad(f, args...): the arguments are numbers, one per "
                      "parameter of f, or a single container (std::array, std::vector, xtensor).");
        return detail::forward_value_and_grad(f, args...);
    }
}

// The value and the gradient of f at the arguments.
// - f a static expression, arguments numbers: value_and_gradient<R, n> (reverse sweep).
// - f a generic callable, arguments numbers: value_and_gradient<R, n> (forward mode).
// - f a generic callable of one container (std::array, std::vector, xtensor of numbers):
//   value_with_gradient<R, Container>, the gradient in the container's type (forward mode).
template <class F, class... Args>
NABLA_ALWAYS_INLINE constexpr auto value_and_grad(const F& f, const Args&... args) {
    if constexpr (Expression<F>)
        return detail::static_value_and_grad(f, args...);
    else
        return value_and_grad(mode::forward, f, args...);
}

template <class F, class... Args>
NABLA_ALWAYS_INLINE constexpr auto
value_and_grad(mode::reverse_t, const F& f, const Args&... args) {
    static_assert(Expression<F>,
                  "nabla::value_and_grad(mode::reverse, f, args...): reverse mode is available "
                  "for static expressions (built from nabla::variables); for generic callables "
                  "it needs the run-time tape, which nabla does not have yet. Use mode::forward.");
    if constexpr (Expression<F>)
        return detail::static_value_and_grad(f, args...);
    else
        return value_and_gradient<double, sizeof...(Args)>{};
}

template <class Mode, class F, class... Args>
requires(std::is_same_v<Mode, mode::forward_t> ||
         std::is_same_v<Mode, mode::reverse_t>) NABLA_ALWAYS_INLINE
    constexpr auto grad(Mode m, const F& f, const Args&... args) {
    return value_and_grad(m, f, args...).gradient;
}

// The gradient alone: std::array<R, number of arguments>, or the input container's type.
template <class F, class... Args>
NABLA_ALWAYS_INLINE constexpr auto grad(const F& f, const Args&... args) {
    return value_and_grad(f, args...).gradient;
}

}  // namespace nabla
