#pragma once
// The little type-level toolkit the graph algorithms use: lists, concatenation by a fold (no
// recursive templates), membership and index lookup in O(1) instantiations through base classes.

#include <cstddef>
#include <type_traits>
#include <utility>

namespace nabla::detail {

template <class... Ts>
struct type_list {
    static constexpr std::size_t size = sizeof...(Ts);
};

// The lists one after the other. (Partial specialisations, not a fold of an operator: argument-
// dependent lookup of an operator on lists of nabla's node types weighs every operator nabla
// declares, at every step of every statement's walk.)
template <class... Lists>
struct concat_lists;
template <>
struct concat_lists<> {
    using type = type_list<>;
};
template <class... A>
struct concat_lists<type_list<A...>> {
    using type = type_list<A...>;
};
template <class... A, class... B>
struct concat_lists<type_list<A...>, type_list<B...>> {
    using type = type_list<A..., B...>;
};
template <class... A, class... B, class... C>
struct concat_lists<type_list<A...>, type_list<B...>, type_list<C...>> {
    using type = type_list<A..., B..., C...>;
};
template <class... A, class... B, class... C, class... D, class... Rest>
struct concat_lists<type_list<A...>, type_list<B...>, type_list<C...>, type_list<D...>, Rest...>
    : concat_lists<type_list<A..., B..., C..., D...>, Rest...> {};

template <class... Lists>
using concat = typename concat_lists<Lists...>::type;

template <class T>
struct type_tag {};

template <class List>
struct type_set;
template <class... Ts>
struct type_set<type_list<Ts...>> : type_tag<Ts>... {};

template <class List, class T>
inline constexpr bool contains = std::is_base_of_v<type_tag<T>, type_set<List>>;

// The elements of B that are not in A, in B's order (B has no duplicates).
template <class A, class B>
struct missing_from;
template <class A, class... Bs>
struct missing_from<A, type_list<Bs...>> {
    using type = concat<std::conditional_t<contains<A, Bs>, type_list<>, type_list<Bs>>...>;
};

// A followed by the elements of B not already in A.
template <class A, class B>
using merge = concat<A, typename missing_from<A, B>::type>;

template <class List>
struct merge_all_impl;
template <>
struct merge_all_impl<type_list<>> {
    using type = type_list<>;
};
template <class First, class... Rest>
struct merge_all_impl<type_list<First, Rest...>> {
    using type = merge<First, typename merge_all_impl<type_list<Rest...>>::type>;
};

// The union of several duplicate-free lists, first occurrence first.
template <class... Lists>
using merge_all = typename merge_all_impl<type_list<Lists...>>::type;

template <class T, std::size_t I>
struct indexed {};

template <class List, class Indices>
struct index_map_impl;
template <class... Ts, std::size_t... Is>
struct index_map_impl<type_list<Ts...>, std::index_sequence<Is...>> : indexed<Ts, Is>... {};

template <class List>
using index_map = index_map_impl<List, std::make_index_sequence<List::size>>;

template <class T, std::size_t I>
constexpr std::size_t index_from_base(const indexed<T, I>*) {
    return I;
}

// The position of T in a duplicate-free List.
template <class List, class T>
inline constexpr std::size_t
    index_of = index_from_base<T>(static_cast<const index_map<List>*>(nullptr));

template <std::size_t I, class List>
struct at_impl;
template <std::size_t I, class... Ts>
struct at_impl<I, type_list<Ts...>> {
    using type = std::tuple_element_t<I, std::tuple<Ts...>>;
};
template <std::size_t I, class List>
using at = typename at_impl<I, List>::type;

}  // namespace nabla::detail
