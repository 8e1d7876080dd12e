#pragma once
// The leaves of a static graph: placeholders for the arguments, and constants held by value.
// (Exact compile-time constants, literal<N> and math_constant<Tag>, are in nabla/literal.hpp.)

#include <cstddef>
#include <tuple>
#include <utility>

#include "../concepts.hpp"
#include "../literal.hpp"

namespace nabla {

// The I-th argument of an expression. Empty: copying one copies nothing.
template <std::size_t I>
struct placeholder : expression_base<placeholder<I>> {
    static constexpr std::size_t index = I;
};

// Placeholders for arguments 0 .. N-1: `auto [x, y] = nabla::variables<2>();`
template <std::size_t N>
constexpr auto variables() {
    return []<std::size_t... I>(std::index_sequence<I...>) {
        return std::tuple<placeholder<I>...>{};
    }(std::make_index_sequence<N>{});
}

// A number known only at run time (`x * 2.5`), stored by value in the node that uses it.
template <Number T>
struct constant : expression_base<constant<T>> {
    T value{};
    constexpr constant() = default;
    constexpr explicit constant(T v) : value(v) {}
};

// Inside the evaluator, run-time constants are moved out of the graph into an array, and the
// K-th one is replaced by this empty leaf (core/graph.hpp explains why).
template <std::size_t K>
struct pooled_constant : expression_base<pooled_constant<K>> {
    static constexpr std::size_t index = K;
};

template <class T>
inline constexpr bool is_placeholder_v = false;
template <std::size_t I>
inline constexpr bool is_placeholder_v<placeholder<I>> = true;

template <class T>
inline constexpr bool is_constant_v = false;
template <class T>
inline constexpr bool is_constant_v<constant<T>> = true;

template <class T>
inline constexpr bool is_pooled_constant_v = false;
template <std::size_t K>
inline constexpr bool is_pooled_constant_v<pooled_constant<K>> = true;

// A leaf that is a constant of any kind (held, pooled or exact).
template <class T>
concept ConstantLeaf = is_constant_v<T> || is_pooled_constant_v<T> || CompileTimeConstant<T>;

}  // namespace nabla
