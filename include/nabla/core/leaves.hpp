#pragma once
// The leaves of a static graph. Every graph node type is empty: its type says everything about its
// computation, so two nodes of the same type are the same computation and are evaluated once.
//
// - placeholder<I>: the I-th argument.
// - literal<N>, math_constant<Tag>: exact constants known to the compiler (nabla/literal.hpp).
// - pooled_constant<K, Integral>: the K-th run-time constant of the expression (`x * 2.5`). Its
//   value is not in the graph but in the array of constants that the expression object carries
//   next to its graph (core/held.hpp). Giving each run-time constant its own index is what keeps
//   `x * 2.0` and `x * 3.0` apart although they have the same shape; and since nabla::d works on
//   the graph alone, every copy of a subexpression that d makes refers to the same constants and
//   stays shared.

#include <cstddef>
#include <tuple>
#include <utility>

#include "../concepts.hpp"
#include "../literal.hpp"

namespace nabla {

template <std::size_t I>
struct placeholder : expression_base<placeholder<I>> {
    static constexpr std::size_t index = I;
};

// Placeholders for arguments 0 .. N-1: `auto [x, y] = nabla::variables<2>();`
template <std::size_t N>
constexpr auto variables() {
    return []<std::size_t... I>(std::index_sequence<I...>) {
        return std::tuple<placeholder<I>...>{};
    }
    (std::make_index_sequence<N>{});
}

template <std::size_t K, bool Integral>
struct pooled_constant : expression_base<pooled_constant<K, Integral>> {
    static constexpr std::size_t index = K;
    static constexpr bool integral = Integral;
};

template <class T>
inline constexpr bool is_placeholder_v = false;
template <std::size_t I>
inline constexpr bool is_placeholder_v<placeholder<I>> = true;

template <class T>
inline constexpr bool is_pooled_constant_v = false;
template <std::size_t K, bool Integral>
inline constexpr bool is_pooled_constant_v<pooled_constant<K, Integral>> = true;

}  // namespace nabla
