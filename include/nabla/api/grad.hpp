#pragma once
// Gradients of static expressions: one forward sweep for the values and one reverse sweep for the
// adjoints over the compile-time schedule (core/evaluate.hpp).

#include <array>
#include <cstddef>
#include <utility>

#include "../config.hpp"
#include "../core/evaluate.hpp"

namespace nabla {

template <class F, class... Args>
NABLA_ALWAYS_INLINE constexpr auto value_and_grad(const F& f, const Args&... args) {
    static_assert(Expression<F>,
                  "nabla::value_and_grad(f, args...): f must be a nabla expression built from "
                  "placeholders (auto [x, y] = nabla::variables<2>()).");
    if constexpr (!Expression<F> || !detail::check_call<F, Args...>()) {
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

// The gradient alone, as std::array<R, number of arguments>.
template <class F, class... Args>
NABLA_ALWAYS_INLINE constexpr auto grad(const F& f, const Args&... args) {
    return value_and_grad(f, args...).gradient;
}

}  // namespace nabla
