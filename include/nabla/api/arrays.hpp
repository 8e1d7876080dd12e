#pragma once
// Generic callables over whole arrays, differentiated on the run-time tape: each argument becomes
// a nabla::var_array (array/active.hpp), so each array operation f makes is one tape entry.
//
//   auto lse = [](const auto& x) { using std::log; auto m = amax(x); return log(sum(exp(x - m))) +
//   m; }; auto g = nabla::grad(nabla::mode::arrays, lse, xs);        // xs: std::vector<double>,
//   xtensor auto [v, gx, gy] = nabla::value_and_grad(nabla::mode::arrays, f, xs, ys);
//
// The same lambda runs on xtensor arrays of doubles (amax, sum, exp found there by
// argument-dependent lookup), on static array variables and here.

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../array/active.hpp"
#include "../array/evaluate.hpp"
#include "../reverse/detail/lent_tape.hpp"
#include "../reverse/tape.hpp"
#include "grad.hpp"
#include "reverse.hpp"

namespace nabla {

// The value of f at the arrays and its gradient with respect to each, shaped like it:
// auto [value, gx, gy] = nabla::value_and_grad(nabla::mode::arrays, f, xs, ys).
template <class F, class... Args>
auto value_and_grad(mode::arrays_t, const F& f, const Args&... args) {
    static_assert(sizeof...(Args) > 0 && (detail::ArrayArgument<Args> && ...),
                  "nabla::value_and_grad(nabla::mode::arrays, f, arrays...): the arguments are "
                  "one-dimensional arrays of double (std::vector<double>, std::array, "
                  "std::span<const double>, xt::xtensor<double, 1>), one per parameter of f.");
    static_assert(
        std::is_invocable_v<const F&, decltype((void)args, std::declval<const var_array&>())...>,
        "nabla: this function cannot be called with nabla::var_array arguments. Write "
        "it generically, with auto parameters, and call array functions unqualified: "
        "[](const auto& x) { using std::exp; return sum(exp(x)); }.");
    array_value_and_gradient<decltype(detail::gradient_like(args))...> out{
        0.0, std::tuple{detail::gradient_like(args)...}};
    detail::lent_tape<double> lent;
    tape<double>& t = lent.get();
    auto recording = t.record();
    std::size_t k = 0;
    const auto check = [&k](const auto& a) { detail::check_array_argument(a, k++); };
    (check(args), ...);
    const std::array<var_array, sizeof...(Args)> inputs{input_array(t, args)...};
    const var y = detail::as_active<double>(
        std::apply([&f](const auto&... in) -> decltype(auto) { return f(in...); }, inputs));
    t.gradient(y);
    out.value = y.value;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        const auto read = [&](const var_array& x, auto& g) {
            if (x.empty())
                return;
            const auto a = t.adjoints_from(x[0], x.size());
            std::copy(a.begin(), a.end(), g.data());
        };
        (read(inputs[I], std::get<I>(out.gradient)), ...);
    }
    (std::index_sequence_for<Args...>{});
    return out;
}

// The gradient alone: the one array argument's, or a tuple of them.
template <class F, class... Args>
auto grad(mode::arrays_t, const F& f, const Args&... args) {
    auto result = value_and_grad(mode::arrays, f, args...);
    if constexpr (sizeof...(Args) == 1)
        return std::get<0>(std::move(result.gradient));
    else
        return std::move(result.gradient);
}

}  // namespace nabla
