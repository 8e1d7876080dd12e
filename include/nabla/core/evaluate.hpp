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

#include "graph.hpp"

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
using result_type =
    promoted<typename result_type_impl<typename info<E>::constant_type, Args...>::type>;

template <class R, class T>
constexpr R to_number(const T& x) {
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
    constexpr const R& of() const {
        return value[index_of<Schedule, T>];
    }

    template <class T>
    constexpr R compute() const {
        if constexpr (is_placeholder_v<T>) return static_cast<R>(std::get<T::index>(arguments));
        else if constexpr (is_pooled_constant_v<T>) return pool[T::index];
        else if constexpr (CompileTimeConstant<T>) return as<R>(T{});
        else return compute_node(static_cast<const T*>(nullptr));
    }

    template <class Rule, class... Ops>
    constexpr R compute_node(const node<Rule, Ops...>*) const {
        return to_number<R>(Rule::value(of<Ops>()...));
    }

    constexpr void forward() { forward(Schedule{}, std::make_index_sequence<Schedule::size>{}); }

    template <class... Ts, std::size_t... Is>
    constexpr void forward(type_list<Ts...>, std::index_sequence<Is...>) {
        ((value[Is] = compute<Ts>()), ...);
    }
};

template <class Schedule, class R, std::size_t PoolSize, class Arguments>
struct adjoint_sweep {
    const forward_values<Schedule, R, PoolSize, Arguments>& values;
    std::array<R, Schedule::size> adjoint{};

    template <class T>
    constexpr R& adjoint_of() {
        return adjoint[index_of<Schedule, T>];
    }

    // Adds adjoint(node) * d node / d operand_I to the operand's adjoint, for operands that
    // depend on a placeholder (the others' adjoints are never read).
    template <std::size_t I, class Rule, class... Ops>
    constexpr void pull(const node<Rule, Ops...>*, const R& node_adjoint, const R& node_value) {
        using operand = std::tuple_element_t<I, std::tuple<Ops...>>;
        if constexpr (depends_on_any<operand>) {
            const auto partial = Rule::template partial<I>(node_value, values.template of<Ops>()...);
            adjoint_of<operand>() += node_adjoint * to_number<R>(partial);
        }
    }

    template <class T>
    constexpr void step() {
        if constexpr (is_node_v<T> && depends_on_any<T>) {
            const R node_adjoint = adjoint_of<T>();
            const R& node_value = values.template of<T>();
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                (pull<I>(static_cast<const T*>(nullptr), node_adjoint, node_value), ...);
            }(std::make_index_sequence<T::rule::arity>{});
        }
    }

    template <class... Ts>
    constexpr void backward(type_list<Ts...>) {
        (step<Ts>(), ...);
    }

    constexpr void run() {
        adjoint[Schedule::size - 1] = R(1);
        backward(reversed<Schedule>{});
    }

    template <std::size_t I>
    constexpr R gradient_entry() const {
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
    constexpr bool enough = info<E>::placeholder_bound <= sizeof...(Args);
    static_assert(enough,
                  "nabla: too few arguments: the expression uses a placeholder whose index is not "
                  "covered by the arguments given (placeholder xI needs at least I+1 arguments).");
    return numbers && enough;
}

template <class E, class... Args>
constexpr auto evaluate(const E& expression, const Args&... args) {
    if constexpr (!check_call<E, Args...>()) {
        return 0.0;
    } else {
        using R = result_type<E, Args...>;
        using S = schedule<pooled_t<E>>;
        const auto pool = make_pool<R>(expression);
        const auto arguments = std::forward_as_tuple(args...);
        forward_values<S, R, info<E>::constant_count, decltype(arguments)> values{{}, pool, arguments};
        values.forward();
        return values.value[S::size - 1];
    }
}

}  // namespace nabla::detail
