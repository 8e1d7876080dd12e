#pragma once
// From an expression to an evaluation schedule, at compile time.
//
// 1. Pooling. Run-time constants are moved out of the graph into an array, each replaced by an
//    empty leaf pooled_constant<K> (K counts constants left to right). After this every node of
//    the graph is an empty type that says everything about its computation, so two nodes of the
//    same type are the same computation. Without pooling, `x * 2.0` and `x * 3.0` would have the
//    same type and be wrongly merged; with it they become x * c0 and x * c1.
// 2. Scheduling. The pooled type is walked once per distinct type (the compiler memoises
//    instantiations) into a list of its distinct nodes in topological order: operands before
//    users, each shared subexpression once. The root is last.
//
// Evaluation (core/evaluate.hpp) is then one straight-line pass over that list, and the reverse
// sweep one pass backwards: no recursion and no allocation at run time.

#include <array>
#include <cstddef>
#include <tuple>
#include <utility>

#include "leaves.hpp"
#include "node.hpp"
#include "traits.hpp"
#include "type_list.hpp"

namespace nabla::detail {

template <class... Ops>
constexpr auto operand_offsets() {
    constexpr std::array<std::size_t, sizeof...(Ops)> counts{info<Ops>::constant_count...};
    std::array<std::size_t, sizeof...(Ops)> offsets{};
    std::size_t running = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        offsets[i] = running;
        running += counts[i];
    }
    return offsets;
}

template <class E, std::size_t Offset, bool Pure = is_pure<E>>
struct pooled {
    using type = E;
};

template <class T, std::size_t Offset>
struct pooled<constant<T>, Offset, false> {
    using type = pooled_constant<Offset>;
};

template <class Rule, class... Ops, std::size_t Offset>
struct pooled<node<Rule, Ops...>, Offset, false> {
    static constexpr auto offsets = operand_offsets<Ops...>();

    template <class Indices>
    struct build;
    template <std::size_t... Is>
    struct build<std::index_sequence<Is...>> {
        using type = node<Rule, typename pooled<Ops, Offset + offsets[Is]>::type...>;
    };

    using type = typename build<std::index_sequence_for<Ops...>>::type;
};

template <class E>
using pooled_t = typename pooled<E, 0>::type;

// Copies the run-time constants of e, left to right, into pool[Offset...].
template <std::size_t Offset, class E, class Pool>
constexpr void fill_pool(const E& e, Pool& pool) {
    if constexpr (is_pure<E>) {
        return;
    } else if constexpr (is_constant_v<E>) {
        pool[Offset] = static_cast<typename Pool::value_type>(e.value);
    } else {
        constexpr auto offsets = []<class Rule, class... Ops>(const node<Rule, Ops...>*) {
            return operand_offsets<Ops...>();
        }(static_cast<const E*>(nullptr));
        [&]<std::size_t... Is>(std::index_sequence<Is...>) {
            (fill_pool<Offset + offsets[Is]>(std::get<Is>(e.operands), pool), ...);
        }(std::make_index_sequence<offsets.size()>{});
    }
}

template <class R, class E>
constexpr auto make_pool(const E& e) {
    std::array<R, info<E>::constant_count> pool{};
    fill_pool<0>(e, pool);
    return pool;
}

template <class P>
struct schedule_of {
    using type = type_list<P>;
};

template <class Rule, class... Ops>
struct schedule_of<node<Rule, Ops...>> {
    using type = concat<merge_all<typename schedule_of<Ops>::type...>, type_list<node<Rule, Ops...>>>;
};

// The distinct nodes of a pooled expression type in topological order, root last.
template <class P>
using schedule = typename schedule_of<P>::type;

template <class... A, class... B>
type_list<B..., A...> operator*(type_list<A...>, type_list<B...>);

template <class List>
struct reversed_impl;
template <class... Ts>
struct reversed_impl<type_list<Ts...>> {
    using type = decltype((type_list<>{} * ... * type_list<Ts>{}));
};

template <class List>
using reversed = typename reversed_impl<List>::type;

}  // namespace nabla::detail
