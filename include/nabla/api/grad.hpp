#pragma once
// nabla::value_and_grad and nabla::grad. For static expressions: one forward sweep for the values
// and one reverse sweep for the adjoints over the compile-time schedule (core/evaluate.hpp). For
// ordinary generic callables: forward mode on dual numbers (api/forward.hpp) for scalars and small
// fixed-size containers, reverse mode on the run-time tape (api/reverse.hpp) for containers of
// run-time size or more than 16 numbers.

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../core/evaluate.hpp"
#include "forward.hpp"
#include "reverse.hpp"

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
// even when f is a static expression; nabla::mode::reverse records a generic callable on the
// run-time tape, and takes the compile-time reverse sweep for a static expression;
// nabla::mode::arrays records it on the tape with whole arrays as arguments (<nabla/array.hpp>,
// api/arrays.hpp).
namespace mode {
struct forward_t {};
struct reverse_t {};
struct arrays_t {};
inline constexpr forward_t forward{};
inline constexpr reverse_t reverse{};
inline constexpr arrays_t arrays{};
}  // namespace mode

namespace detail {

// Evaluated in a constant expression by its callers, so that its message comes before anything
// the rest of the call would report.
template <class... Args>
constexpr bool check_gradient_arguments() {
    constexpr bool ok = one_container<Args...> || (ArgumentNumber<Args> && ...);
    static_assert(ok, "nabla::value_and_grad(f, args...): the arguments are numbers, one per "
                      "parameter of f, or a single container (std::array, std::vector, xtensor).");
    return ok;
}

template <class C>
inline constexpr bool is_std_sequence = false;
template <class T, class A>
inline constexpr bool is_std_sequence<std::vector<T, A>> = true;
template <class T, std::size_t N>
inline constexpr bool is_std_sequence<std::array<T, N>> = true;

// Whether a generic callable of these arguments is differentiated in reverse mode by default:
// a std::vector, or a std::array of more than 16 numbers (many inputs, one output). xtensor
// containers stay in forward mode unless reverse is forced: xtensor's own reductions (xt::sum)
// need a value type closed under arithmetic, which dual numbers are and expression templates
// are not.
template <class... Args>
struct prefers_reverse_for {
    static constexpr bool value = false;
};
template <NumberContainer C>
struct prefers_reverse_for<C> {
    static constexpr std::size_t size = container_traits<std::remove_cvref_t<C>>::static_size;
    static constexpr bool value =
        is_std_sequence<std::remove_cvref_t<C>> && (size == 0 || size > 16);
};
template <class... Args>
inline constexpr bool prefers_reverse = prefers_reverse_for<Args...>::value;

}  // namespace detail

template <class F, class... Args>
NABLA_ALWAYS_INLINE constexpr auto
value_and_grad(mode::forward_t, const F& f, const Args&... args) {
    if constexpr (!detail::check_gradient_arguments<Args...>())
        return 0.0;
    else if constexpr (detail::one_container<Args...>)
        return detail::forward_value_and_grad_container(f, args...);
    else
        return detail::forward_value_and_grad(f, args...);
}

template <class F, class... Args>
NABLA_ALWAYS_INLINE constexpr auto
value_and_grad(mode::reverse_t, const F& f, const Args&... args) {
    if constexpr (!detail::check_gradient_arguments<Args...>())
        return 0.0;
    else if constexpr (detail::recorded_arguments<Args...>)
        return value_and_grad(mode::forward, f, args...);
    else if constexpr (Expression<F>)
        return detail::static_value_and_grad(f, args...);
    else if constexpr (detail::one_container<Args...>)
        return detail::reverse_value_and_grad_container(f, args...);
    else
        return detail::reverse_value_and_grad(f, args...);
}

// The value and the gradient of f at the arguments.
// - f a static expression, arguments numbers: value_and_gradient<R, n> (reverse sweep).
// - f a generic callable, arguments numbers: value_and_gradient<R, n> (forward mode).
// - f a generic callable of one container (std::array, std::vector, xtensor of numbers):
//   value_with_gradient<R, Container>, the gradient in the container's type; forward mode for a
//   std::array of up to 16 numbers, reverse mode (the tape) otherwise.
template <class F, class... Args>
NABLA_ALWAYS_INLINE constexpr auto value_and_grad(const F& f, const Args&... args) {
    if constexpr (Expression<F> && !detail::recorded_arguments<Args...>)
        return detail::static_value_and_grad(f, args...);
    else if constexpr (detail::prefers_reverse<Args...>)
        return value_and_grad(mode::reverse, f, args...);
    else
        return value_and_grad(mode::forward, f, args...);
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
