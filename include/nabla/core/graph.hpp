#pragma once
// From a graph type to an evaluation schedule, at compile time.
//
// The graph is walked once per distinct node type (the compiler memoises instantiations) into a
// list of its distinct nodes in topological order: operands before users, each shared
// subexpression once, the root last. Graph types are empty and say everything about their
// computation (core/leaves.hpp), so sharing by type is exact.
//
// Evaluation (core/evaluate.hpp) is then one straight-line pass over that list, and the reverse
// sweep one pass backwards: no recursion and no allocation at run time.

#include <cstddef>
#include <utility>

#include "leaves.hpp"
#include "node.hpp"
#include "traits.hpp"
#include "type_list.hpp"

namespace nabla::detail {

template <class P>
struct schedule_of {
    using type = type_list<P>;
};

template <class Rule, class... Ops>
struct schedule_of<node<Rule, Ops...>> {
    using type =
        concat<merge_all<typename schedule_of<Ops>::type...>, type_list<node<Rule, Ops...>>>;
};

// The distinct nodes of a graph type in topological order, root last.
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
