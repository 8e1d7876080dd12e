#pragma once
// Exact compile-time constants: the vocabulary the rules write their derivatives in.
//
// literal<N> is an integer known to the compiler, math_constant<Tag> an irrational one (ln 2,
// 2/sqrt(pi)). Combined with a plain number they give a plain number, so a rule written as
// `one / x` computes 1.0 / x for doubles; combined with an expression they build graph nodes and
// simplify exactly (core/build.hpp), so the same rule gives d(log(x), x) == 1/x as a type.

#include <numbers>

#include "concepts.hpp"

namespace nabla {

template <long long N>
struct literal : expression_base<literal<N>> {
    static constexpr long long value = N;
};

template <class Tag>
struct math_constant : expression_base<math_constant<Tag>> {
    static constexpr double value = Tag::value;
};

template <class T>
inline constexpr bool is_literal_v = false;
template <long long N>
inline constexpr bool is_literal_v<literal<N>> = true;

template <class T>
inline constexpr bool is_math_constant_v = false;
template <class Tag>
inline constexpr bool is_math_constant_v<math_constant<Tag>> = true;

template <class T>
concept CompileTimeConstant = is_literal_v<T> || is_math_constant_v<T>;

// The value of a compile-time constant in the type of the number it meets.
template <class T, CompileTimeConstant C>
constexpr T as(C) {
    return static_cast<T>(C::value);
}

// Plain-number arithmetic (and arithmetic with an active variable of reverse mode, which records
// it): the result has the number's type.
template <CompileTimeConstant C, ArgumentNumber T>
constexpr T operator+(C c, const T& x) {
    return as<T>(c) + x;
}
template <CompileTimeConstant C, ArgumentNumber T>
constexpr T operator+(const T& x, C c) {
    return x + as<T>(c);
}
template <CompileTimeConstant C, ArgumentNumber T>
constexpr T operator-(C c, const T& x) {
    return as<T>(c) - x;
}
template <CompileTimeConstant C, ArgumentNumber T>
constexpr T operator-(const T& x, C c) {
    return x - as<T>(c);
}
template <CompileTimeConstant C, ArgumentNumber T>
constexpr T operator*(C c, const T& x) {
    return as<T>(c) * x;
}
template <CompileTimeConstant C, ArgumentNumber T>
constexpr T operator*(const T& x, C c) {
    return x * as<T>(c);
}
template <CompileTimeConstant C, ArgumentNumber T>
constexpr T operator/(C c, const T& x) {
    return as<T>(c) / x;
}
template <CompileTimeConstant C, ArgumentNumber T>
constexpr T operator/(const T& x, C c) {
    return x / as<T>(c);
}

namespace constants {
struct ln2_tag {
    static constexpr double value = std::numbers::ln2;
    static constexpr const char* name = "ln2";
};
struct ln10_tag {
    static constexpr double value = std::numbers::ln10;
    static constexpr const char* name = "ln10";
};
struct two_over_sqrt_pi_tag {
    static constexpr double value = 2.0 * std::numbers::inv_sqrtpi;
    static constexpr const char* name = "2/sqrt(pi)";
};
struct pi_tag {
    static constexpr double value = std::numbers::pi;
    static constexpr const char* name = "pi";
};
}  // namespace constants

inline constexpr math_constant<constants::ln2_tag> ln2{};
inline constexpr math_constant<constants::ln10_tag> ln10{};
inline constexpr math_constant<constants::two_over_sqrt_pi_tag> two_over_sqrt_pi{};
inline constexpr math_constant<constants::pi_tag> pi{};

}  // namespace nabla
