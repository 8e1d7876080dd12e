#pragma once
// An expression that holds run-time constants: a graph type G whose pooled_constant<K> leaves
// read constants[K]. Expressions without run-time constants are just their graph type.

#include <array>
#include <cstddef>

#include "../concepts.hpp"

namespace nabla {

template <class Graph, class T, std::size_t N>
struct held : expression_base<held<Graph, T, N>> {
    using graph = Graph;
    using value_type = T;
    static constexpr std::size_t size = N;
    std::array<T, N> constants{};
};

template <class T>
inline constexpr bool is_held_v = false;
template <class Graph, class T, std::size_t N>
inline constexpr bool is_held_v<held<Graph, T, N>> = true;

namespace detail {

template <class E>
struct graph_of {
    using type = E;
    using value_type = void;
    static constexpr std::size_t size = 0;
};
template <class Graph, class T, std::size_t N>
struct graph_of<held<Graph, T, N>> {
    using type = Graph;
    using value_type = T;
    static constexpr std::size_t size = N;
};

// The graph type of an expression, the type and number of its run-time constants.
template <class E>
using graph_t = typename graph_of<E>::type;
template <class E>
using constant_type_t = typename graph_of<E>::value_type;
template <class E>
inline constexpr std::size_t constant_count = graph_of<E>::size;

}  // namespace detail
}  // namespace nabla
