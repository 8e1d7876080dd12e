#pragma once
// The vocabulary every layer shares: what counts as a number, what counts as an expression.

// clang-format off
#include "config.hpp"  // first: it checks the language standard
// clang-format on

#include <cstddef>
#include <type_traits>

namespace nabla {

namespace detail {
// Makes a static_assert depend on a template parameter, so it fires only when instantiated.
template <class...>
inline constexpr bool always_false = false;

// Whether a number is NaN, read without comparing it to itself: a number that records its
// operations (nabla::series_variable) refuses comparisons of values, and reads its value here.
template <class T>
constexpr bool is_nan(const T& x) {
    if constexpr (!std::is_arithmetic_v<T> && requires { isnan(x); })
        return isnan(x);
    else
        return x != x;
}

template <class E, class... Args>
constexpr auto evaluate(const E& expression, const Args&... args);
}  // namespace detail

// A number a rule can be evaluated on. Later modes (dual numbers, Taylor series, SIMD batches)
// specialise this trait to join in.
template <class T>
inline constexpr bool is_number_v = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

template <class T>
concept Number = is_number_v<std::remove_cvref_t<T>>;

// An active variable of reverse mode (nabla::active<T>, specialised by reverse/active.hpp): not a
// number to the rules of static expressions, which build its statements through reverse mode's
// own functions, but an argument the transformations take, so that a function differentiated in
// reverse mode may itself call grad, jacobian or hessian (reverse over forward).
template <class T>
inline constexpr bool is_recorded_number_v = false;

// What the transformations (grad, jacobian, hessian, jvp) differentiate with respect to.
template <class T>
concept ArgumentNumber = Number<T> || is_recorded_number_v<std::remove_cvref_t<T>>;

// SIMD lanes (xsimd::batch of float or double): numbers on which the rules run element-wise, a
// batch of elements at a time. simd/lanes.hpp specialises this trait (and is_number_v); the
// rules' helpers that branch on a value take their branch-free form on lanes.
template <class T>
inline constexpr bool is_lanes_v = false;

template <class T>
concept Lanes = is_lanes_v<std::remove_cvref_t<T>>;

namespace detail {

// The one implicit conversion of nabla's numbers (dual, taylor, active): to long double, and only
// to say this. std::sin(x), std::pow(x, 2), std::abs(x), std::isnan(x) on such a number have no
// viable overload but the long double one, so this conversion is chosen, and its message is the
// first error a user reads, instead of the standard library's list of candidates.
template <class U>
constexpr U refuse_std_function() {
    static_assert(always_false<U>,
                  "nabla: std::sin(x), std::pow(x, n) and the other functions of namespace std "
                  "take plain numbers, and x is one of nabla's numbers. Call the function "
                  "unqualified, so that argument-dependent lookup finds nabla's: "
                  "`using std::sin; sin(x)` (also for pow, abs, exp, log, sqrt, isnan, ...). To "
                  "drop the derivatives on purpose, use nabla::primal(x).");
    return U{};
}

}  // namespace detail

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
