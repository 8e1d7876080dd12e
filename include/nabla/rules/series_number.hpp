#pragma once
// A truncated Taylor series as a number, for rules whose derivatives come from running the
// algorithm of their value on series (the elliptic integrals: Carlson's duplication, a few
// branches on values): the series of the result, and from its coefficients the derivatives of
// every order, come from the same arithmetic as the value, so they are as accurate as it and
// regular wherever the function is. Series nest (a series whose coefficients are series), which
// gives mixed partial derivatives. Comparisons and branches read the innermost constant term
// (plain); magnitude bounds every coefficient, for convergence tests that must hold for the
// whole series.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "series.hpp"

namespace nabla::rules::detail {

// The floating-point type a plain number computes in (an integer argument: double).
template <class X>
using real_t = std::conditional_t<std::is_floating_point_v<X>, X, double>;

template <class T, std::size_t K>
struct series_number;

template <class T>
inline constexpr bool is_series_number = false;
template <class T, std::size_t K>
inline constexpr bool is_series_number<series_number<T, K>> = true;

// The plain number under any nesting of series.
template <class T>
requires std::is_arithmetic_v<T>
constexpr const T& plain(const T& x) {
    return x;
}
template <class T>
requires std::is_arithmetic_v<T>
constexpr bool is_zero(const T& x) {
    return x == T(0);
}
template <class T>
requires std::is_arithmetic_v<T> T magnitude(const T& x) {
    return std::abs(x);
}
// (sin and cos together: one recurrence gives both series.)
template <class T>
requires std::is_arithmetic_v<T> std::array<T, 2> sine_cosine(const T& x) {
    return {std::sin(x), std::cos(x)};
}

template <class T, std::size_t K>
struct series_number {
    std::array<T, K + 1> c{};

    constexpr series_number() = default;
    // A constant: a plain number, or a series of a lower nesting.
    template <class U>
    requires(!std::is_same_v<U, series_number> &&
             (std::is_arithmetic_v<U> || is_series_number<U>)&&std::is_constructible_v<T, const U&>)
        constexpr series_number(const U& v)  // NOLINT: a constant as a series
        : c{T(v)} {}
    constexpr explicit series_number(const std::array<T, K + 1>& coefficients) : c(coefficients) {}

    constexpr series_number& operator+=(const series_number& b) { return *this = *this + b; }
    constexpr series_number& operator-=(const series_number& b) { return *this = *this - b; }
    constexpr series_number& operator*=(const series_number& b) { return *this = *this * b; }

    friend constexpr series_number operator+(series_number a, const series_number& b) {
        for (std::size_t k = 0; k <= K; ++k)
            a.c[k] = a.c[k] + b.c[k];
        return a;
    }
    friend constexpr series_number operator-(series_number a, const series_number& b) {
        for (std::size_t k = 0; k <= K; ++k)
            a.c[k] = a.c[k] - b.c[k];
        return a;
    }
    friend constexpr series_number operator-(series_number a) {
        for (T& x : a.c)
            x = -x;
        return a;
    }
    friend constexpr series_number operator*(const series_number& a, const series_number& b) {
        return series_number(series::product(a.c, b.c));
    }
    friend constexpr series_number operator/(const series_number& a, const series_number& b) {
        return series_number(series::quotient(a.c, b.c));
    }
    friend constexpr bool operator==(const series_number& a, const series_number& b) {
        return a.c == b.c;
    }
    friend series_number sqrt(const series_number& a) {
        // (The series of sqrt(0) exists only for the zero series: a root of an exact 0.)
        if (is_zero(a))
            return a;
        using std::sqrt;
        return series_number(series::square_root(sqrt(a.c[0]), a.c));
    }
    friend series_number atan(const series_number& a) {
        using std::atan;
        if constexpr (K == 0) {
            return series_number(atan(a.c[0]));
        } else {
            // atan' = 1 / (1 + u^2), integrated.
            const auto slope =
                series::quotient(series_number(T(1)).c, (series_number(T(1)) + a * a).c);
            return series_number(
                series::integrate(atan(a.c[0]), a.c, series::truncate<K - 1>(slope)));
        }
    }
    friend std::array<series_number, 2> sine_cosine(const series_number& x) {
        const auto at = sine_cosine(x.c[0]);
        const auto both = series::sine_cosine<false>(at[0], at[1], x.c);
        return {series_number(both[0]), series_number(both[1])};
    }
    friend constexpr bool is_zero(const series_number& a) {
        for (const T& x : a.c)
            if (!is_zero(x))
                return false;
        return true;
    }
    friend constexpr const auto& plain(const series_number& a) { return plain(a.c[0]); }
    friend auto magnitude(const series_number& a) {
        auto m = magnitude(a.c[0]);
        for (std::size_t k = 1; k <= K; ++k)
            m = std::max(m, magnitude(a.c[k]));
        return m;
    }
};

// The plain type under a nesting of series.
template <class N>
using plain_t = std::remove_cvref_t<decltype(plain(std::declval<const N&>()))>;

}  // namespace nabla::rules::detail
