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
        for (std::size_t k = 0; k < pool.size(); ++k) pool[k] = static_cast<R>(e.constants[k]);
    }
    return pool;
}

template <class R, class T>
NABLA_ALWAYS_INLINE constexpr R to_number(const T& x) {
    if constexpr (CompileTimeConstant<T>) return as<R>(x);
    else return static_cast<R>(x);
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
        if constexpr (is_placeholder_v<T>) return static_cast<R>(std::get<T::index>(arguments));
        else if constexpr (is_pooled_constant_v<T>) return pool[T::index];
        else if constexpr (CompileTimeConstant<T>) return as<R>(T{});
        else return compute_node(static_cast<const T*>(nullptr));
    }

    template <class Rule, class... Ops>
    NABLA_ALWAYS_INLINE constexpr R compute_node(const node<Rule, Ops...>*) const {
        return to_number<R>(Rule::value(of<Ops>()...));
    }

    NABLA_ALWAYS_INLINE constexpr void forward() { forward(Schedule{}, std::make_index_sequence<Schedule::size>{}); }

    template <class... Ts, std::size_t... Is>
    NABLA_ALWAYS_INLINE constexpr void forward(type_list<Ts...>, std::index_sequence<Is...>) {
        ((value[Is] = compute<Ts>()), ...);
    }
};

// For every operand of every node of a schedule, whether it is the first contribution to that
// operand's adjoint in the reverse sweep. The first one assigns and the others add, so the sweep
// never adds to a zero that the compiler may not fold away (0.0 + a is not a when a is -0.0).
template <class Schedule>
struct sweep_plan;

inline constexpr std::size_t max_arity = 3;

template <class T, class Schedule>
constexpr auto operand_slots() {
    std::array<std::size_t, max_arity> slots{};
    slots.fill(Schedule::size);  // "no operand that needs an adjoint"
    if constexpr (is_node_v<T> && depends_on_any<T>) {
        [&]<class Rule, class... Ops>(const node<Rule, Ops...>*) {
            std::size_t i = 0;
            ((slots[i++] = depends_on_any<Ops> ? index_of<Schedule, Ops> : Schedule::size), ...);
        }(static_cast<const T*>(nullptr));
    }
    return slots;
}

template <class... Ts>
struct sweep_plan<type_list<Ts...>> {
    using schedule = type_list<Ts...>;
    static constexpr std::size_t size = sizeof...(Ts);
    static constexpr std::array<std::array<std::size_t, max_arity>, size> slots{
        operand_slots<Ts, schedule>()...};
    static constexpr auto first = [] {
        std::array<std::array<bool, max_arity>, size> is_first{};
        std::array<bool, size + 1> seen{};
        for (std::size_t k = size; k-- > 0;) {
            for (std::size_t i = 0; i < max_arity; ++i) {
                const std::size_t slot = slots[k][i];
                if (slot == size) continue;
                is_first[k][i] = !seen[slot];
                seen[slot] = true;
            }
        }
        return is_first;
    }();
};

template <class Schedule, class R, std::size_t PoolSize, class Arguments>
struct adjoint_sweep {
    const forward_values<Schedule, R, PoolSize, Arguments>& values;
    std::array<R, Schedule::size> adjoint{};

    template <class T>
    NABLA_ALWAYS_INLINE constexpr R& adjoint_of() {
        return adjoint[index_of<Schedule, T>];
    }

    // Adds adjoint(node) * d node / d operand_I to the operand's adjoint, for operands that
    // depend on a placeholder (the others' adjoints are never read).
    // Adds adjoint(node) * d node / d operand_I to the operand's adjoint, for operands that
    // depend on a placeholder (the others' adjoints are never read). An operand used several
    // times by one node (x * x) gets one contribution with the partials summed first, which keeps
    // the sum off the adjoint's dependency chain.
    template <std::size_t I, class Rule, class... Ops>
    NABLA_ALWAYS_INLINE constexpr void pull(const node<Rule, Ops...>*, const R& node_adjoint,
                                            const R& node_value) {
        using operands = std::tuple<Ops...>;
        using operand = std::tuple_element_t<I, operands>;
        constexpr bool seen_before = []<std::size_t... J>(std::index_sequence<J...>) {
            return (std::is_same_v<std::tuple_element_t<J, operands>, operand> || ...);
        }(std::make_index_sequence<I>{});
        if constexpr (depends_on_any<operand> && !seen_before) {
            const R partial = partial_sum<I, operand, Rule, Ops...>(node_value);
            const R contribution = node_adjoint * partial;
            constexpr bool first =
                sweep_plan<Schedule>::first[index_of<Schedule, node<Rule, Ops...>>][I];
            if constexpr (first) adjoint_of<operand>() = contribution;
            else adjoint_of<operand>() += contribution;
        }
    }

    // The sum of the rule's partials with respect to operand K and every later operand that is the
    // same subexpression.
    template <std::size_t K, class Operand, class Rule, class... Ops>
    NABLA_ALWAYS_INLINE constexpr R partial_sum(const R& node_value) const {
        const R partial =
            to_number<R>(Rule::template partial<K>(node_value, values.template of<Ops>()...));
        constexpr std::size_t next = [] {
            constexpr std::array<bool, sizeof...(Ops)> same{std::is_same_v<Ops, Operand>...};
            for (std::size_t j = K + 1; j < same.size(); ++j)
                if (same[j]) return j;
            return sizeof...(Ops);
        }();
        if constexpr (next < sizeof...(Ops)) {
            return partial + partial_sum<next, Operand, Rule, Ops...>(node_value);
        } else {
            return partial;
        }
    }

    template <class Rule, class... Ops, std::size_t... I>
    NABLA_ALWAYS_INLINE constexpr void pull_all(const node<Rule, Ops...>* n, std::index_sequence<I...>) {
        const R node_adjoint = adjoint_of<node<Rule, Ops...>>();
        const R& node_value = values.template of<node<Rule, Ops...>>();
        (pull<I>(n, node_adjoint, node_value), ...);
    }

    template <class T>
    NABLA_ALWAYS_INLINE constexpr void step() {
        if constexpr (is_node_v<T> && depends_on_any<T>) {
            pull_all(static_cast<const T*>(nullptr), std::make_index_sequence<T::rule::arity>{});
        }
    }

    template <class... Ts>
    NABLA_ALWAYS_INLINE constexpr void backward(type_list<Ts...>) {
        (step<Ts>(), ...);
    }

    NABLA_ALWAYS_INLINE constexpr void run() {
        adjoint[Schedule::size - 1] = R(1);
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
        if constexpr (contains<Schedule, placeholder<I>>) return adjoint[index_of<Schedule, placeholder<I>>];
        else return R(0);
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
