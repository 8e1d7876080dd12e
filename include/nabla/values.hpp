#pragma once
// Reading what nabla is given: the plain value under any nesting of dual numbers (primal), and
// the containers whose elements nabla differentiates (container_traits). Every mode and
// transformation uses these; they depend on nothing but the vocabulary of concepts.hpp.

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "concepts.hpp"

namespace nabla {

// The plain value underneath any nesting of dual numbers.
template <class T>
constexpr auto primal(const T& x) {
    if constexpr (DualLike<T>)
        return primal(x.value);
    else
        return x;
}

namespace detail {

// The first of the types X... whose Is<X>::value holds, void if none: the number type of an
// operation whose other operands are constants beside it.
template <template <class> class Is, class... X>
struct first_of {
    using type = void;
};
template <template <class> class Is, class X, class... Rest>
struct first_of<Is, X, Rest...> {
    using type = std::conditional_t<Is<X>::value, X, typename first_of<Is, Rest...>::type>;
};

// The type of primal(x).
template <class T>
struct primal_type {
    using type = T;
};
template <DualLike T>
struct primal_type<T> {
    using type = typename primal_type<typename T::value_type>::type;
};
template <class T>
using primal_type_t = typename primal_type<T>::type;

// How nabla reads and makes the containers whose elements it differentiates: a specialisation
// per kind of container. std::array and std::vector are here; tensor/containers.hpp adds
// xt::xtensor and xt::xarray.
template <class C>
struct container_traits {
    static constexpr bool supported = false;
};

template <class T, std::size_t N>
struct container_traits<std::array<T, N>> {
    static constexpr bool supported = true;
    static constexpr std::size_t static_size = N;
    template <class D>
    static std::array<D, N> make_like(const std::array<T, N>&) {
        return {};
    }
};

template <class T, class A>
struct container_traits<std::vector<T, A>> {
    static constexpr bool supported = true;
    static constexpr std::size_t static_size = 0;
    template <class D>
    static std::vector<D> make_like(const std::vector<T, A>& x) {
        return std::vector<D>(x.size());
    }
};

// The number of elements of a container, as a std::size_t (Eigen's sizes are signed).
template <class C>
constexpr std::size_t size_of(const C& c) {
    return static_cast<std::size_t>(c.size());
}

// The k-th element in storage order.
template <class C>
constexpr decltype(auto) element(C& c, std::size_t k) {
    if constexpr (requires { c.data(); })
        return c.data()[k];
    else
        return c[k];
}

template <class C>
concept NumberContainer = container_traits<std::remove_cvref_t<C>>::supported &&
    ArgumentNumber<typename std::remove_cvref_t<C>::value_type>;

// Whether the arguments hold active variables of an enclosing reverse derivative (at any depth of
// dual numbers). The tape does not record its own sweep, so a reverse derivative inside a reverse
// one runs in forward mode (reverse over forward), which the outer tape records.
template <class T>
constexpr bool holds_recorded() {
    if constexpr (is_recorded_number_v<T>)
        return true;
    else if constexpr (DualLike<T>)
        return holds_recorded<typename T::value_type>();
    else
        return false;
}
template <class A>
constexpr bool recorded_argument() {
    if constexpr (container_traits<std::remove_cvref_t<A>>::supported)
        return holds_recorded<typename std::remove_cvref_t<A>::value_type>();
    else
        return holds_recorded<std::remove_cvref_t<A>>();
}
template <class... Args>
inline constexpr bool recorded_arguments = (recorded_argument<Args>() || ...);

// The same kind of container, holding D.
template <class C, class D>
using rebind = decltype(container_traits<C>::template make_like<D>(std::declval<const C&>()));

}  // namespace detail

}  // namespace nabla
