#pragma once
// Evaluation of a static expression and its reverse sweep, over the schedule of core/graph.hpp.
//
// Every distinct node gets one slot in a std::array of values (and of adjoints); the forward
// sweep fills the values in topological order, the reverse sweep walks the schedule backwards and
// accumulates adjoints with the rules' partials. Both are fold expressions over the schedule, so
// the compiler sees straight-line code, as if written by hand.

#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../config.hpp"
#include "graph.hpp"
#include "held.hpp"
#include "traits.hpp"

namespace nabla {

// The value and the gradient with respect to every argument (0 for arguments the expression does
// not use). An aggregate, so `auto [value, gradient] = nabla::value_and_grad(f, 2.0, 5.0);` works.
template <class R, std::size_t N>
struct value_and_gradient {
    R value;
    std::array<R, N> gradient;
};

}  // namespace nabla

namespace nabla::detail {

template <class T>
using promoted = std::conditional_t<std::is_integral_v<T>, double, T>;

template <class C, class... Args>
struct result_type_impl {
    using type = std::common_type_t<Args..., C>;
};
template <class... Args>
struct result_type_impl<void, Args...> {
    using type = std::common_type_t<Args...>;
};
template <>
struct result_type_impl<void> {
    using type = double;
};

// The number type an expression computes in when called with Args: the usual arithmetic
// conversions over the arguments and the run-time constants, integers promoted to double.
template <class E, class... Args>
using result_type = promoted<typename result_type_impl<constant_type_t<E>, Args...>::type>;

// The run-time constants of an expression, converted to the number type of an evaluation.
template <class R, class E>
NABLA_ALWAYS_INLINE constexpr std::array<R, constant_count<E>> constants_as(const E& e) {
    std::array<R, constant_count<E>> pool{};
    if constexpr (is_held_v<E>) {
        for (std::size_t k = 0; k < pool.size(); ++k)
            pool[k] = static_cast<R>(e.constants[k]);
    }
    return pool;
}

template <class R, class T>
NABLA_ALWAYS_INLINE constexpr R to_number(const T& x) {
    if constexpr (CompileTimeConstant<T>)
        return as<R>(x);
    else
        return static_cast<R>(x);
}

// The values of one evaluation: the schedule's slots plus what the leaves read from.
template <class Schedule, class R, std::size_t PoolSize, class Arguments>
struct forward_values {
    using schedule_type = Schedule;
    std::array<R, Schedule::size> value{};
    const std::array<R, PoolSize>& pool;
    const Arguments& arguments;

    template <class T>
    NABLA_ALWAYS_INLINE constexpr const R& of() const {
        return value[index_of<Schedule, T>];
    }

    template <class T>
    NABLA_ALWAYS_INLINE constexpr R compute() const {
        if constexpr (is_placeholder_v<T>)
            return static_cast<R>(std::get<T::index>(arguments));
        else if constexpr (is_pooled_constant_v<T>)
            return pool[T::index];
        else if constexpr (CompileTimeConstant<T>)
            return as<R>(T{});
        else
            return compute_node(static_cast<const T*>(nullptr));
    }

    template <class Rule, class... Ops>
    NABLA_ALWAYS_INLINE constexpr R compute_node(const node<Rule, Ops...>*) const {
        return to_number<R>(rules::value_on<Rule>(of<Ops>()...));
    }

    NABLA_ALWAYS_INLINE constexpr void forward() {
        forward(Schedule{}, std::make_index_sequence<Schedule::size>{});
    }

    template <class... Ts, std::size_t... Is>
    NABLA_ALWAYS_INLINE constexpr void forward(type_list<Ts...>, std::index_sequence<Is...>) {
        ((value[Is] = compute<Ts>()), ...);
    }
};

// The plan of the reverse sweep, computed once per schedule by constexpr loops.
//
// Preaccumulation: a node with a single user (the x*x inside x*x + y*y, the r^2 inside
// 1/(r^2*r^2*r^2)) never gets an adjoint of its own. Its user pushes its adjoint straight through
// it, multiplying the local partials along the way first: adjoint(x) += adjoint(user) *
// (d user/d node * d node/d x). The products of partials depend only on forward values, so they
// run in parallel with the sweep instead of lengthening the chain of adjoint updates.
//
// First contributions: in the order the sweep delivers contributions, the first one to each
// adjoint assigns and the others add, so the sweep never adds to a zero that the compiler may not
// fold away (0.0 + a is not a when a is -0.0).
template <class Schedule>
struct sweep_plan;

inline constexpr std::size_t max_arity = 3;

// The schedule positions of a node's operands that need adjoints (those that depend on a
// variable), Schedule::size for the others and for repeats of an operand within the node.
template <class T, class Schedule>
constexpr auto operand_slots() {
    std::array<std::size_t, max_arity> slots{};
    slots.fill(Schedule::size);
    if constexpr (is_node_v<T> && depends_on_any<T>) {
        [&]<class Rule, class... Ops>(const node<Rule, Ops...>*) {
            std::size_t i = 0;
            ((slots[i++] = depends_on_any<Ops> ? index_of<Schedule, Ops> : Schedule::size), ...);
        }(static_cast<const T*>(nullptr));
        for (std::size_t i = 1; i < max_arity; ++i)
            for (std::size_t j = 0; j < i; ++j)
                if (slots[i] == slots[j])
                    slots[i] = Schedule::size;
    }
    return slots;
}

template <class... Ts>
struct sweep_plan<type_list<Ts...>> {
    static constexpr std::size_t size = sizeof...(Ts);
    static constexpr std::array<std::array<std::size_t, max_arity>, size> slots{
        operand_slots<Ts, type_list<Ts...>>()...};
    static constexpr std::array<bool, size> is_node{is_node_v<Ts>...};

    // Nodes whose adjoint is pushed through by their only user.
    static constexpr auto single_use = [] {
        std::array<std::size_t, size + 1> users{};
        for (std::size_t k = 0; k < size; ++k)
            for (std::size_t i = 0; i < max_arity; ++i)
                ++users[slots[k][i]];
        std::array<bool, size> single{};
        for (std::size_t k = 0; k < size; ++k)
            single[k] = is_node[k] && users[k] == 1;
        return single;
    }();

    // first[d][i]: whether node d's contribution to its operand i is the first to that adjoint.
    // Replays the sweep: top-level nodes in reverse schedule order, each expanded depth first
    // through its single-use operands, as adjoint_sweep does.
    static constexpr auto first = [] {
        std::array<std::array<bool, max_arity>, size> is_first{};
        std::array<bool, size + 1> seen{};
        std::array<std::size_t, size + 1> stack_node{};
        std::array<std::size_t, size + 1> stack_operand{};
        for (std::size_t k = size; k-- > 0;) {
            if (!is_node[k] || single_use[k])
                continue;
            std::size_t depth = 0;
            stack_node[0] = k;
            stack_operand[0] = 0;
            while (true) {
                const std::size_t d = stack_node[depth];
                const std::size_t i = stack_operand[depth];
                if (i == max_arity) {
                    if (depth == 0)
                        break;
                    --depth;
                    continue;
                }
                ++stack_operand[depth];
                const std::size_t o = slots[d][i];
                if (o == size)
                    continue;
                if (single_use[o]) {
                    ++depth;
                    stack_node[depth] = o;
                    stack_operand[depth] = 0;
                } else {
                    is_first[d][i] = !seen[o];
                    seen[o] = true;
                }
            }
        }
        return is_first;
    }();
};

template <class Schedule, class R, std::size_t PoolSize, class Arguments>
struct adjoint_sweep {
    using plan = sweep_plan<Schedule>;
    const forward_values<Schedule, R, PoolSize, Arguments>& values;
    std::array<R, Schedule::size> adjoint{};

    template <class T>
    static constexpr std::size_t slot = index_of<Schedule, T>;

    // The sum of the rule's partials with respect to operand K and every later operand that is the
    // same subexpression (x * x has one contribution, with partial x + x).
    template <std::size_t K, class Rule, class... Ops>
    NABLA_ALWAYS_INLINE constexpr R partial_sum(const node<Rule, Ops...>*) const {
        using operand = std::tuple_element_t<K, std::tuple<Ops...>>;
        const R partial = to_number<R>(rules::partial_on<Rule, K>(
            values.template of<node<Rule, Ops...>>(), values.template of<Ops>()...));
        constexpr std::size_t next = [] {
            constexpr std::array<bool, sizeof...(Ops)> same{std::is_same_v<Ops, operand>...};
            for (std::size_t j = K + 1; j < same.size(); ++j)
                if (same[j])
                    return j;
            return sizeof...(Ops);
        }();
        if constexpr (next < sizeof...(Ops)) {
            return partial + partial_sum<next>(static_cast<const node<Rule, Ops...>*>(nullptr));
        } else {
            return partial;
        }
    }

    // Delivers node_adjoint * scale * d node / d operand_I: into the operand's adjoint, or, for a
    // single-use operand, on through it with the partials multiplied first.
    template <std::size_t I, class Rule, class... Ops>
    NABLA_ALWAYS_INLINE constexpr void
    deliver(const node<Rule, Ops...>* n, const R& node_adjoint, const R* scale) {
        using node_type = node<Rule, Ops...>;
        constexpr std::size_t target = plan::slots[slot<node_type>][I];
        if constexpr (target != Schedule::size) {
            using operand = std::tuple_element_t<I, std::tuple<Ops...>>;
            const R local = partial_sum<I>(n);
            const R factor = scale ? *scale * local : local;
            if constexpr (plan::single_use[target]) {
                deliver_all(static_cast<const operand*>(nullptr), node_adjoint, &factor,
                            std::make_index_sequence<operand::rule::arity>{});
            } else {
                const R contribution = node_adjoint * factor;
                if constexpr (plan::first[slot<node_type>][I])
                    adjoint[target] = contribution;
                else
                    adjoint[target] += contribution;
            }
        }
    }

    template <class Rule, class... Ops, std::size_t... I>
    NABLA_ALWAYS_INLINE constexpr void deliver_all(const node<Rule, Ops...>* n,
                                                   const R& node_adjoint,
                                                   const R* scale,
                                                   std::index_sequence<I...>) {
        (deliver<I>(n, node_adjoint, scale), ...);
    }

    template <class T>
    NABLA_ALWAYS_INLINE constexpr void step() {
        if constexpr (is_node_v<T> && depends_on_any<T>) {
            if constexpr (!plan::single_use[slot<T>]) {
                const R node_adjoint = adjoint[slot<T>];
                deliver_all(static_cast<const T*>(nullptr), node_adjoint, nullptr,
                            std::make_index_sequence<T::rule::arity>{});
            }
        }
    }

    template <class... Ts>
    NABLA_ALWAYS_INLINE constexpr void backward(type_list<Ts...>) {
        (step<Ts>(), ...);
    }

    NABLA_ALWAYS_INLINE constexpr void run() { run(R(1)); }

    // The sweep from a given adjoint of the result (a vector-Jacobian product; the array layer
    // seeds each element with the adjoint its reduction passes down).
    NABLA_ALWAYS_INLINE constexpr void run(const R& seed) {
        adjoint[Schedule::size - 1] = seed;
        backward(reversed<Schedule>{});
    }

    // The value and the gradient with respect to the first N arguments.
    template <std::size_t N>
    NABLA_ALWAYS_INLINE constexpr auto result() const {
        return result(std::make_index_sequence<N>{});
    }

    template <std::size_t... I>
    NABLA_ALWAYS_INLINE constexpr auto result(std::index_sequence<I...>) const {
        return value_and_gradient<R, sizeof...(I)>{values.value[Schedule::size - 1],
                                                   {gradient_entry<I>()...}};
    }

    template <std::size_t I>
    NABLA_ALWAYS_INLINE constexpr R gradient_entry() const {
        if constexpr (contains<Schedule, placeholder<I>>)
            return adjoint[slot<placeholder<I>>];
        else
            return R(0);
    }
};

template <class E, class... Args>
constexpr bool check_call() {
    constexpr bool numbers = (Number<Args> && ...);
    static_assert(numbers,
                  "nabla: an expression is called with plain numbers (double, float, int...), one "
                  "per placeholder: f(2.0, 5.0).");
    constexpr bool enough = info<graph_t<E>>::placeholder_bound <= sizeof...(Args);
    static_assert(enough,
                  "nabla: too few arguments: the expression uses a placeholder whose index is not "
                  "covered by the arguments given (placeholder xI needs at least I+1 arguments).");
    return numbers && enough;
}

template <class E, class... Args>
NABLA_ALWAYS_INLINE constexpr auto evaluate(const E& expression, const Args&... args) {
    if constexpr (!check_call<E, Args...>()) {
        return 0.0;
    } else {
        using R = result_type<E, Args...>;
        using S = schedule<graph_t<E>>;
        const auto pool = constants_as<R>(expression);
        const auto arguments = std::forward_as_tuple(args...);
        forward_values<S, R, constant_count<E>, decltype(arguments)> values{{}, pool, arguments};
        values.forward();
        return values.value[S::size - 1];
    }
}

}  // namespace nabla::detail
