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
#include <utility>
#include <vector>

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
             (std::is_arithmetic_v<U> || is_series_number<U>)&&std::is_constructible_v<
                 T,
                 const U&>) constexpr series_number(const U& v)  // NOLINT: a constant as a series
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

// A truncated Taylor series whose order is known at run time only (the Taylor integrator's): the
// same arithmetic, a constant held as one coefficient, and each result as long as its longest
// operand.
template <class T>
struct runtime_series {
    std::vector<T> c;

    runtime_series() : c(1, T(0)) {}
    runtime_series(const T& v) : c(1, v) {}  // NOLINT: a constant as a series
    template <class U>
    requires(std::is_arithmetic_v<U> && !std::is_same_v<U, T>) runtime_series(const U& v)
        : c(1, T(v)) {}  // NOLINT: a constant as a series
    explicit runtime_series(std::vector<T> coefficients) : c(std::move(coefficients)) {}

    std::size_t size() const { return c.size(); }
    T operator[](std::size_t k) const { return k < c.size() ? c[k] : T(0); }

    friend runtime_series operator+(const runtime_series& a, const runtime_series& b) {
        return combined(a, b, [](const T& x, const T& y) { return x + y; });
    }
    friend runtime_series operator-(const runtime_series& a, const runtime_series& b) {
        return combined(a, b, [](const T& x, const T& y) { return x - y; });
    }
    friend runtime_series operator-(runtime_series a) {
        for (T& x : a.c)
            x = -x;
        return a;
    }
    friend runtime_series operator*(const runtime_series& a, const runtime_series& b) {
        const std::size_t n = std::max(a.size(), b.size());
        std::vector<T> r(n);
        for (std::size_t k = 0; k < n; ++k)
            r[k] = series::product_at(a, b, k);
        return runtime_series(std::move(r));
    }
    friend runtime_series operator/(const runtime_series& a, const runtime_series& b) {
        if (b.c[0] == T(0))
            series::domain_error("nabla::taylor: division by a series whose constant term is 0");
        const std::size_t n = std::max(a.size(), b.size());
        std::vector<T> q(n);
        q[0] = a.c[0] / b.c[0];
        const T inverse = T(1) / b.c[0];
        for (std::size_t k = 1; k < n; ++k)
            q[k] = series::quotient_at(q, b, a[k], inverse, k);
        return runtime_series(std::move(q));
    }
    friend bool operator==(const runtime_series& a, const runtime_series& b) {
        for (std::size_t k = 0; k < std::max(a.size(), b.size()); ++k)
            if (!(a[k] == b[k]))
                return false;
        return true;
    }
    friend runtime_series sqrt(const runtime_series& a) {
        using std::sqrt;
        if (is_zero(a))
            return a;
        std::vector<T> y(a.size());
        y[0] = sqrt(a.c[0]);
        if (a.size() > 1 && y[0] == T(0))
            series::domain_error(
                "nabla::taylor: sqrt of a series that is 0 at the point has no Taylor series");
        const T inverse = T(1) / (T(2) * y[0]);
        for (std::size_t k = 1; k < a.size(); ++k)
            y[k] = series::square_root_at(y, a[k], inverse, k);
        return runtime_series(std::move(y));
    }
    friend runtime_series atan(const runtime_series& a) {
        using std::atan;
        // atan' = 1 / (1 + u^2), integrated.
        const runtime_series slope = runtime_series(T(1)) / (runtime_series(T(1)) + a * a);
        std::vector<T> y(a.size());
        y[0] = atan(a.c[0]);
        for (std::size_t k = 1; k < a.size(); ++k)
            y[k] = series::chain_sum(a, slope, k) / T(k);
        return runtime_series(std::move(y));
    }
    friend std::array<runtime_series, 2> sine_cosine(const runtime_series& u) {
        std::vector<T> s(u.size()), c(u.size());
        const auto at = sine_cosine(u.c[0]);
        s[0] = at[0];
        c[0] = at[1];
        for (std::size_t k = 1; k < u.size(); ++k) {
            s[k] = series::chain_sum(u, c, k) / T(k);
            c[k] = -series::chain_sum(u, s, k) / T(k);
        }
        return {runtime_series(std::move(s)), runtime_series(std::move(c))};
    }
    friend bool is_zero(const runtime_series& a) {
        for (const T& x : a.c)
            if (!is_zero(x))
                return false;
        return true;
    }
    friend const auto& plain(const runtime_series& a) { return plain(a.c[0]); }
    friend auto magnitude(const runtime_series& a) {
        auto m = magnitude(a.c[0]);
        for (const T& x : a.c)
            m = std::max(m, magnitude(x));
        return m;
    }

private:
    template <class Op>
    static runtime_series combined(const runtime_series& a, const runtime_series& b, Op op) {
        std::vector<T> r(std::max(a.size(), b.size()));
        for (std::size_t k = 0; k < r.size(); ++k)
            r[k] = op(a[k], b[k]);
        return runtime_series(std::move(r));
    }
};

// 1 - u^2 as (1 - u)(1 + u), exact where u^2 would round near 1; for a series, only its
// constant term so (recursively, for a nesting), the others as -(u^2)_j: the product's would be
// differences of nearly equal terms, (1 - u_0) u_1 - u_1 (1 + u_0), wrong in all digits but
// log10(1 / u_0) where u_0 is small.
template <class T>
requires std::is_arithmetic_v<T> T one_minus_square(const T& u) {
    return (T(1) - u) * (T(1) + u);
}
template <class T, std::size_t K>
series_number<T, K> one_minus_square(const series_number<T, K>& u) {
    series_number<T, K> r = -(u * u);
    r.c[0] = one_minus_square(u.c[0]);
    return r;
}
template <class T>
runtime_series<T> one_minus_square(const runtime_series<T>& u) {
    runtime_series<T> r = -(u * u);
    r.c[0] = one_minus_square(u.c[0]);
    return r;
}

// The plain type under a nesting of series.
template <class N>
using plain_t = std::remove_cvref_t<decltype(plain(std::declval<const N&>()))>;

}  // namespace nabla::rules::detail
