#pragma once
// Facts about an expression type, computed once per type by the compiler: which placeholders it
// depends on, how many run-time constants it holds, the type of those constants.

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "leaves.hpp"
#include "node.hpp"

namespace nabla::detail {

template <class E>
struct info {
    // Compile-time constants.
    static constexpr std::size_t constant_count = 0;
    static constexpr std::size_t placeholder_bound = 0;
    using constant_type = void;
    template <std::size_t I>
    static constexpr bool depends_on = false;
    static constexpr bool depends_on_any = false;
};

template <std::size_t I>
struct info<placeholder<I>> {
    static constexpr std::size_t constant_count = 0;
    static constexpr std::size_t placeholder_bound = I + 1;
    using constant_type = void;
    template <std::size_t J>
    static constexpr bool depends_on = I == J;
    static constexpr bool depends_on_any = true;
};

template <class T>
struct info<constant<T>> {
    static constexpr std::size_t constant_count = 1;
    static constexpr std::size_t placeholder_bound = 0;
    using constant_type = T;
    template <std::size_t>
    static constexpr bool depends_on = false;
    static constexpr bool depends_on_any = false;
};

template <class A, class B>
struct common_constant {
    using type = std::common_type_t<A, B>;
};
template <class A>
struct common_constant<A, void> {
    using type = A;
};
template <class B>
struct common_constant<void, B> {
    using type = B;
};
template <>
struct common_constant<void, void> {
    using type = void;
};

template <class... Ts>
struct common_constant_of {
    using type = void;
};
template <class T, class... Ts>
struct common_constant_of<T, Ts...> {
    using type = typename common_constant<T, typename common_constant_of<Ts...>::type>::type;
};

template <class Rule, class... Ops>
struct info<node<Rule, Ops...>> {
    static constexpr std::size_t constant_count = (info<Ops>::constant_count + ... + 0);
    static constexpr std::size_t placeholder_bound =
        std::max({std::size_t{0}, info<Ops>::placeholder_bound...});
    using constant_type = typename common_constant_of<typename info<Ops>::constant_type...>::type;
    template <std::size_t I>
    static constexpr bool depends_on = (info<Ops>::template depends_on<I> || ...);
    static constexpr bool depends_on_any = (info<Ops>::depends_on_any || ...);
};

template <class E>
inline constexpr bool depends_on_any = info<E>::depends_on_any;

template <class E, std::size_t I>
inline constexpr bool depends_on = info<E>::template depends_on<I>;

// A pure expression holds no run-time values: its type says everything, so two pure
// subexpressions of the same type are the same computation and may be shared.
template <class E>
inline constexpr bool is_pure = info<E>::constant_count == 0;

}  // namespace nabla::detail
