#pragma once
// Roots and powers: sqrt, cbrt, pow with a real exponent (expression or number), pow with an
// integer exponent, hypot, and sqrt1pm1 and powm1 (sqrt(1 + x) - 1 and x^y - 1 without the
// cancellation near 0).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "arithmetic.hpp"
#include "exp_log.hpp"
#include "rule.hpp"
#include "series.hpp"
#include "series_number.hpp"

namespace nabla::rules {

// sqrt'(0) = +inf (IEEE 1/(2*0)); negative arguments give NaN.
struct sqrt_rule {
    static constexpr const char* name = "sqrt";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::sqrt;
        return sqrt(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X&) {
        return one / (two * y);
    }
    // y^2 = u.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        return series::square_root(value(u[0]), u);
    }
};

// The real cube root, defined for negative x too; cbrt'(0) = +inf.
struct cbrt_rule {
    static constexpr const char* name = "cbrt";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::cbrt;
        return cbrt(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X&) {
        return one / (three * (y * y));
    }
    // 3 u y' = y u': the power recurrence with r = 1/3.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        return series::power(value(u[0]), u, T(1) / T(3));
    }
};

// pow(a, b) = a^b for a real exponent. Conventions at a == 0, carried by the strong-zero product:
//   d/da = b * a^(b-1), and exactly 0 when b == 0 (a^0 is the constant 1);
//   d/db = a^b * log(a), and exactly 0 when a^b == 0 (a == 0, b > 0: the one-sided limit).
// For a < 0, a^b is real only for integer b and d/db is NaN (log of a negative number).
struct pow_rule {
    static constexpr const char* name = "pow";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        using std::pow;
        return pow(a, b);
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y& y, const A& a, const B& b) {
        using std::log;
        using std::pow;
        if constexpr (I == 0)
            return mul_strong_zero(b, pow(a, b - one));
        else
            return mul_strong_zero(y, log(a));
    }
    // y = exp(b log a), for a series exponent. A base that is exactly 0 (all its coefficients)
    // under an exponent that is positive at the point gives the zero series: 0^b = 0 near there.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& a,
                                                 const std::array<T, K + 1>& b) {
        if (b[0] > T(0) && std::all_of(a.begin(), a.end(), [](const T& c) { return c == T(0); }))
            return std::array<T, K + 1>{};
        std::array<T, K + 1> y =
            exp_rule::series<T, K>(mul_rule::series<T, K>(b, log_rule::series<T, K>(a)));
        y[0] = value(a[0], b[0]);
        return y;
    }
    // a y' = r y a' for a constant real exponent r; a domain error where a is 0.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series_constant_exponent(const std::array<T, K + 1>& a,
                                                                   const T& r) {
        return series::power(value(a[0], r), a, r);
    }
};

// pow(a, n) for an integer exponent n (a constant): defined for negative a, and
// d/da = n * a^(n-1), exactly 0 for n == 0.
struct powi_rule {
    static constexpr const char* name = "pow";
    static constexpr std::size_t arity = 2;
    template <class A, class N>
    static constexpr auto value(const A& a, const N& n) {
        using std::pow;
        return pow(a, n);
    }
    template <std::size_t I, class Y, class A, class N>
    static constexpr auto partial(const Y&, const A& a, const N& n) {
        static_assert(I == 0, "nabla: the exponent of pow(x, n) is an integer constant and has no "
                              "derivative");
        using std::pow;
        return mul_strong_zero(n, pow(a, n - one));
    }
};

// ldexp(x, n) = x 2^n for a constant integer n, exact (std::ldexp); d/dx = 2^n, exact too (an
// integer power of two: pow(2, n) is exact, also as a static expression's node).
struct ldexp_rule {
    static constexpr const char* name = "ldexp";
    static constexpr std::size_t arity = 2;
    template <class X, class N>
    static constexpr auto value(const X& x, const N& n) {
        if constexpr (std::is_arithmetic_v<X> && std::is_arithmetic_v<N>) {
            return std::ldexp(x, static_cast<int>(n));
        } else {
            using std::ldexp;
            return ldexp(x, n);
        }
    }
    template <std::size_t I, class Y, class X, class N>
    static constexpr auto partial(const Y&, const X&, const N& n) {
        static_assert(I == 0, "nabla: the exponent n of ldexp(x, n) is an integer constant and has "
                              "no derivative");
        if constexpr (std::is_arithmetic_v<X> && std::is_arithmetic_v<N>) {
            return std::ldexp(X(1), static_cast<int>(n));
        } else if constexpr (std::is_arithmetic_v<N>) {
            return std::ldexp(1.0, static_cast<int>(n));  // (x a nested number)
        } else {
            using std::pow;
            return pow(two, n);
        }
    }
};

// hypot(a, b) = sqrt(a^2 + b^2) without overflow. At the origin, where it has a kink like abs,
// both partials are 0 (the strong-zero quotient).
struct hypot_rule {
    static constexpr const char* name = "hypot";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        using std::hypot;
        return hypot(a, b);
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y& y, const A& a, const B& b) {
        if constexpr (I == 0)
            return div_strong_zero(a, y);
        else
            return div_strong_zero(b, y);
    }
    // y = sqrt(a^2 + b^2).
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& a,
                                                 const std::array<T, K + 1>& b) {
        std::array<T, K + 1> y = sqrt_rule::series<T, K>(
            add_rule::series<T, K>(mul_rule::series<T, K>(a, a), mul_rule::series<T, K>(b, b)));
        y[0] = value(a[0], b[0]);
        return y;
    }
};

// hypot(a, b, c) = sqrt(a^2 + b^2 + c^2) without overflow or underflow on the way (C++17's
// three-argument std::hypot, +inf where an operand is infinite even if another is NaN, as the
// C library's hypot of two: libstdc++'s returns NaN there); partials a / y, b / y, c / y, strong
// zeros at the origin as for two arguments.
struct hypot3_rule {
    static constexpr const char* name = "hypot";
    static constexpr std::size_t arity = 3;
    template <class A, class B, class C>
    static constexpr auto value(const A& a, const B& b, const C& c) {
        if constexpr (std::is_arithmetic_v<A> && std::is_arithmetic_v<B> &&
                      std::is_arithmetic_v<C>) {
            using R = decltype(std::hypot(a, b, c));
            if (std::isinf(a) || std::isinf(b) || std::isinf(c))
                return std::numeric_limits<R>::infinity();
            return std::hypot(a, b, c);
        } else {
            using std::hypot;
            return hypot(a, b, c);
        }
    }
    template <std::size_t I, class Y, class A, class B, class C>
    static constexpr auto partial(const Y& y, const A& a, const B& b, const C& c) {
        if constexpr (I == 0)
            return div_strong_zero(a, y);
        else if constexpr (I == 1)
            return div_strong_zero(b, y);
        else
            return div_strong_zero(c, y);
    }
    // y = sqrt(a^2 + b^2 + c^2).
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& a,
                                                 const std::array<T, K + 1>& b,
                                                 const std::array<T, K + 1>& c) {
        const auto squares = add_rule::series<T, K>(
            add_rule::series<T, K>(mul_rule::series<T, K>(a, a), mul_rule::series<T, K>(b, b)),
            mul_rule::series<T, K>(c, c));
        std::array<T, K + 1> y = sqrt_rule::series<T, K>(squares);
        y[0] = value(a[0], b[0], c[0]);
        return y;
    }
};

// xsimd 8.1 differs from the C library at these functions' edges (rules/rule.hpp).
template <>
inline constexpr bool native_value_on_lanes<pow_rule> = false;
template <>
inline constexpr bool native_partials_on_lanes<pow_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<powi_rule> = false;
template <>
inline constexpr bool native_partials_on_lanes<powi_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<hypot_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<hypot3_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<cbrt_rule> = false;
template <>
inline constexpr bool cheap_partials<sqrt_rule> = true;

// (powm1's plain-number function, which its rule calls.)
template <Number A, Number B>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>) auto powm1(const A& x, const B& y) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<B>>;
    // exp(y log x) - 1 without the cancellation near x^y = 1; a base <= 0 as pow.
    if (x > A(0))
        return std::expm1(T(y) * std::log(T(x)));
    return std::pow(T(x), T(y)) - T(1);
}

// sqrt(1 + x) - 1, as x / (sqrt(1 + x) + 1): accurate for small x, where the difference loses
// every digit. Its derivative 1 / (2 sqrt(1 + x)).
struct sqrt1pm1_rule {
    static constexpr const char* name = "sqrt1pm1";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::sqrt;
        return x / (sqrt(X(1) + x) + X(1));
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::sqrt;
        return one / (two * sqrt(one + x));
    }
};

// x^y - 1, accurate where x^y is near 1: d/dx = y x^(y-1), d/dy = x^y log x = (1 + y) log x.
struct powm1_rule {
    static constexpr const char* name = "powm1";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& x, const B& y) {
        return powm1(x, y);
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y& r, const A& x, const B& y) {
        using std::log;
        using std::pow;
        if constexpr (I == 0)
            return y * pow(x, y - one);
        else
            return (r + one) * log(x);
    }
};

NABLA_LANE_BY_LANE(powm1_rule)

}  // namespace nabla::rules
