#pragma once
// Gradients of static expressions: one forward sweep for the values and one reverse sweep for the
// adjoints over the compile-time schedule (core/evaluate.hpp).

#include <array>
#include <cstddef>
#include <utility>

#include "../core/evaluate.hpp"

namespace nabla {

// The value and the gradient with respect to every argument (0 for arguments the expression does
// not use). An aggregate, so `auto [value, gradient] = nabla::value_and_grad(f, 2.0, 5.0);` works.
template <class R, std::size_t N>
struct value_and_gradient {
    R value;
    std::array<R, N> gradient;
};

template <class F, class... Args>
constexpr auto value_and_grad(const F& f, const Args&... args) {
    static_assert(Expression<F>,
                  "nabla::value_and_grad(f, args...): f must be a nabla expression built from "
                  "placeholders (auto [x, y] = nabla::variables<2>()).");
    if constexpr (!Expression<F> || !detail::check_call<F, Args...>()) {
        return value_and_gradient<double, sizeof...(Args)>{};
    } else {
        using R = detail::result_type<F, Args...>;
        using S = detail::schedule<detail::pooled_t<F>>;
        constexpr std::size_t pool_size = detail::info<F>::constant_count;
        const auto pool = detail::make_pool<R>(f);
        const auto arguments = std::forward_as_tuple(args...);
        detail::forward_values<S, R, pool_size, decltype(arguments)> values{{}, pool, arguments};
        values.forward();
        detail::adjoint_sweep<S, R, pool_size, decltype(arguments)> sweep{values, {}};
        sweep.run();
        value_and_gradient<R, sizeof...(Args)> result{values.value[S::size - 1], {}};
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((result.gradient[I] = sweep.template gradient_entry<I>()), ...);
        }(std::index_sequence_for<Args...>{});
        return result;
    }
}

// The gradient alone, as std::array<R, number of arguments>.
template <class F, class... Args>
constexpr auto grad(const F& f, const Args&... args) {
    return value_and_grad(f, args...).gradient;
}

}  // namespace nabla
