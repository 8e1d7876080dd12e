#pragma once
// Hyperbolic functions and their inverses.

#include <array>
#include <cmath>
#include <cstddef>

#include "rule.hpp"
#include "series.hpp"

namespace nabla::rules {

struct sinh_rule {
    static constexpr const char* name = "sinh";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::sinh;
        return sinh(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::cosh;
        return cosh(x);
    }
    // y' = c u' and c' = y u', with c_0 = cosh(u_0) from the partial.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        const T y = value(u[0]);
        return series::sine_cosine<true>(y, T(partial<0>(y, u[0])), u)[0];
    }
};

struct cosh_rule {
    static constexpr const char* name = "cosh";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::cosh;
        return cosh(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::sinh;
        return sinh(x);
    }
    // y' = s u' and s' = y u', with s_0 = sinh(u_0) from the partial.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        const T y = value(u[0]);
        return series::sine_cosine<true>(T(partial<0>(y, u[0])), y, u)[1];
    }
};

// tanh' = 1/cosh^2 rather than 1 - tanh^2, which cancels to 0 for |x| > 19 where the true
// derivative is still a normal number.
struct tanh_rule {
    static constexpr const char* name = "tanh";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::tanh;
        return tanh(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::cosh;
        return one / (cosh(x) * cosh(x));
    }
    // y' = (1 - y^2) u'.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        using std::cosh;
        const T c = cosh(u[0]);
        return series::riccati(value(u[0]), u, T(-1), T(1) / (c * c));
    }
};

// asinh' = 1/sqrt(x^2 + 1), written with hypot so that it does not overflow for |x| > 1e154.
struct asinh_rule {
    static constexpr const char* name = "asinh";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::asinh;
        return asinh(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::hypot;
        return one / hypot(x, like(x, one));
    }
};

// acosh' = 1/(sqrt(x-1) sqrt(x+1)): no overflow for large x; +inf at x = 1.
struct acosh_rule {
    static constexpr const char* name = "acosh";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::acosh;
        return acosh(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::sqrt;
        return one / (sqrt(x - one) * sqrt(x + one));
    }
};

struct atanh_rule {
    static constexpr const char* name = "atanh";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::atanh;
        return atanh(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        return one / (one - x * x);
    }
};

// xsimd 8.1 differs from the C library at these functions' edges (rules/rule.hpp).
template <>
inline constexpr bool native_value_on_lanes<acosh_rule> = false;
// asinh' = 1 / hypot(x, 1), and xsimd's hypot overflows.
template <>
inline constexpr bool native_partials_on_lanes<asinh_rule> = false;

// Where xsimd 8.1 converts the argument to an integer (rules/rule.hpp, lanes_limit).
template <>
inline constexpr double lanes_limit<sinh_rule> = 700.0;
template <>
inline constexpr double lanes_limit<cosh_rule> = 700.0;
template <>
inline constexpr double lanes_limit<tanh_rule> = 700.0;

}  // namespace nabla::rules
