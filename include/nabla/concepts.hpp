#pragma once
// The vocabulary every layer shares: what counts as a number, what counts as an expression.

#include <cstddef>
#include <type_traits>

namespace nabla {

namespace detail {
// Makes a static_assert depend on a template parameter, so it fires only when instantiated.
template <class...>
inline constexpr bool always_false = false;

template <class E, class... Args>
constexpr auto evaluate(const E& expression, const Args&... args);
}  // namespace detail

// A number a rule can be evaluated on. Later modes (dual numbers, Taylor series, SIMD batches)
// specialise this trait to join in.
template <class T>
inline constexpr bool is_number_v = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

template <class T>
concept Number = is_number_v<std::remove_cvref_t<T>>;

// SIMD lanes (xsimd::batch of float or double): numbers on which the rules run element-wise, a
// batch of elements at a time. simd/lanes.hpp specialises this trait (and is_number_v); the
// rules' helpers that branch on a value take their branch-free form on lanes.
template <class T>
inline constexpr bool is_lanes_v = false;

template <class T>
concept Lanes = is_lanes_v<std::remove_cvref_t<T>>;

// Every node of a static graph derives from expression_base, which gives it the call operator
// (evaluation) and turns the most common mistake, using an expression where a number is expected
// (std::sin(x), double v = f;), into a readable error instead of a page of overload candidates.
template <class Derived>
struct expression_base {
    template <class... Args>
    [[gnu::always_inline]] constexpr auto operator()(const Args&... args) const {
        return detail::evaluate(static_cast<const Derived&>(*this), args...);
    }

    operator double() const {
        static_assert(detail::always_false<Derived>,
                      "nabla: a static expression is not a number. Call it with arguments to "
                      "evaluate it (f(2.0, 5.0)); and use nabla's functions found by argument-"
                      "dependent lookup (sin(x), or `using std::sin; sin(x)`), not std::sin(x), "
                      "std::fmod or other functions nabla does not support.");
        return 0.0;
    }
};

template <class T>
inline constexpr bool is_expression_v =
    std::is_base_of_v<expression_base<std::remove_cvref_t<T>>, std::remove_cvref_t<T>>;

template <class T>
concept Expression = is_expression_v<T>;

// A number that carries a value and tangents (nabla::dual, nested to any depth, or a user's type
// of the same shape): what the modes look through to reach the plain value and to compare or
// zero-test every part.
template <class T>
concept DualLike = requires(const T& x) {
    x.value;
    x.tangent;
};

// What an operator or function of nabla accepts: an expression or a plain number.
template <class T>
concept Operand = Expression<T> || Number<T>;

}  // namespace nabla
