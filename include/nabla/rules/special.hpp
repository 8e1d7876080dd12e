#pragma once
// Special functions: erf, erfc, tgamma, lgamma and the polygamma family that their derivatives
// need (digamma = polygamma(0, x)), and the exponential integral Ei (expint).

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <type_traits>

#include "rule.hpp"
#include "series.hpp"

namespace nabla::rules {

namespace detail {

// n! as a floating-point number.
template <class T>
constexpr T factorial(int n) {
    T f = T(1);
    for (int k = 2; k <= n; ++k)
        f *= T(k);
    return f;
}

// The n-th derivative of pi*cot(pi*x), for the reflection formula. With c = cot(pi*x),
// d/dx c = -pi (1 + c^2), so each derivative is a polynomial P_k(c):
// P_0 = pi c, P_{k+1}(c) = -pi (1 + c^2) P_k'(c).
template <class T>
T cot_derivative(int n, T x) {
    constexpr int max_degree = 64;
    std::array<T, max_degree + 2> p{};
    std::array<T, max_degree + 2> next{};
    p[1] = std::numbers::pi_v<T>;
    for (int k = 0; k < n; ++k) {
        next.fill(T(0));
        // (1 + c^2) * sum_j j p_j c^(j-1)
        for (int j = 1; j <= k + 1; ++j) {
            const T dj = T(j) * p[j];
            next[j - 1] += dj;
            next[j + 1] += dj;
        }
        for (auto& coefficient : next)
            coefficient *= -std::numbers::pi_v<T>;
        p = next;
    }
    // Reduce the argument to [-1/2, 1/2] so that cot(pi x) keeps its accuracy for large |x|.
    const T r = x - std::round(x);
    const T c = T(1) / std::tan(std::numbers::pi_v<T> * r);
    T sum = T(0);
    for (int j = n + 1; j >= 0; --j)
        sum = sum * c + p[j];
    return sum;
}

// polygamma(n, x) for x >= threshold, from the asymptotic series with Bernoulli numbers B_2k:
//   psi(x)    ~ log x - 1/(2x) - sum_k B_2k / (2k x^2k)
//   psi^(n)(x) ~ (-1)^(n+1) [ (n-1)!/x^n + n!/(2 x^(n+1)) + sum_k B_2k (2k+n-1)!/((2k)! x^(2k+n)) ]
template <class T>
T polygamma_asymptotic(int n, T x) {
    constexpr std::array<double, 12> bernoulli = {
        1.0 / 6,       -1.0 / 30,       1.0 / 42,       -1.0 / 30,
        5.0 / 66,      -691.0 / 2730,   7.0 / 6,        -3617.0 / 510,
        43867.0 / 798, -174611.0 / 330, 854513.0 / 138, -236364091.0 / 2730};
    const T inv_x = T(1) / x;
    const T inv_x2 = inv_x * inv_x;
    if (n == 0) {
        T sum = T(0);
        T power = inv_x2;
        for (int k = 1; k <= 12; ++k) {
            sum += T(bernoulli[k - 1]) / T(2 * k) * power;
            power *= inv_x2;
        }
        return std::log(x) - T(0.5) * inv_x - sum;
    }
    // ratio = (2k+n-1)!/(2k)!, updated as k grows.
    T ratio = factorial<T>(n + 1) / T(2);
    T power = std::pow(inv_x, T(n + 2));
    T sum = factorial<T>(n - 1) * std::pow(inv_x, T(n)) + factorial<T>(n) * T(0.5) * power * x;
    for (int k = 1; k <= 12; ++k) {
        sum += T(bernoulli[k - 1]) * ratio * power;
        ratio *= T(2 * k + n) * T(2 * k + n + 1) / (T(2 * k + 1) * T(2 * k + 2));
        power *= inv_x2;
    }
    return (n % 2 == 1) ? sum : -sum;
}

}  // namespace detail

namespace detail {

template <class T>
T polygamma_positive(int n, T x) {
    // Shift x up to where the asymptotic series converges fast, using
    // psi^(n)(x) = psi^(n)(x+1) - (-1)^n n! / x^(n+1).
    const T threshold = T(20 + n);
    T shifted = T(0);
    while (x < threshold) {
        shifted += std::pow(x, T(-(n + 1)));
        x += T(1);
    }
    const T scale = (n % 2 == 0 ? T(1) : T(-1)) * factorial<T>(n);
    return polygamma_asymptotic(n, x) - scale * shifted;
}

}  // namespace detail

// polygamma(n, x) = d^(n+1)/dx^(n+1) log Gamma(x), for integer orders 0 <= n <= 62 and real x.
// Negative x use the reflection formula psi^(n)(x) = (-1)^n psi^(n)(1-x) - d^n/dx^n pi cot(pi x).
// At the poles x = 0, -1, -2, ... it is NaN for even n and +inf for odd n (the limit from both
// sides); a non-integer order or one outside [0, 62] gives NaN.
template <Number N, Number X>
requires std::is_arithmetic_v<X>
auto polygamma(const N& order, const X& x_in) {
    using T = std::conditional_t<std::is_floating_point_v<X>, X, double>;
    const T x = static_cast<T>(x_in);
    const int n = static_cast<int>(order);
    constexpr T nan = std::numeric_limits<T>::quiet_NaN();
    constexpr T inf = std::numeric_limits<T>::infinity();
    if (static_cast<T>(order) != T(n) || n < 0 || n > 62 || x != x)
        return nan;
    if (x <= T(0) && x == std::floor(x))
        return n % 2 == 1 ? inf : nan;
    if (x == inf)
        return n == 0 ? inf : T(0);
    if (x < T(0)) {
        const T reflected = detail::polygamma_positive(n, T(1) - x);
        return (n % 2 == 0 ? reflected : -reflected) - detail::cot_derivative(n, x);
    }
    return detail::polygamma_positive(n, x);
}

// On lanes, lane by lane: the series and reflection above branch on each value.
template <Number N, Lanes X>
X polygamma(const N& order, const X& x) {
    std::array<typename X::value_type, X::size> lanes{};
    x.store_unaligned(lanes.data());
    for (auto& lane : lanes)
        lane = polygamma(order, lane);
    return X::load_unaligned(lanes.data());
}
// The order on lanes too (an array expression evaluates its constants as lanes): each lane's.
template <Lanes X>
X polygamma(const X& order, const X& x) {
    return per_lane([](double n, double v) { return polygamma(n, v); }, order, x);
}

template <Number X>
requires std::is_arithmetic_v<X>
auto digamma(const X& x) {
    return polygamma(0, x);
}

// The order 0 of digamma = polygamma(0, x), as an int next to numbers and as the exact literal
// next to expressions (so that derivatives of tgamma and lgamma stay free of run-time constants).
template <class X>
constexpr auto order_zero(const X&) {
    if constexpr (Number<X>)
        return 0;
    else
        return zero;
}

struct erf_rule {
    static constexpr const char* name = "erf";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::erf;
        return erf(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::exp;
        return two_over_sqrt_pi * exp(-(x * x));
    }
};

struct erfc_rule {
    static constexpr const char* name = "erfc";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::erfc;
        return erfc(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::exp;
        return -(two_over_sqrt_pi * exp(-(x * x)));
    }
};

// polygamma(n, x) with a constant integer order n: its derivative in x raises the order.
struct polygamma_rule {
    static constexpr const char* name = "polygamma";
    static constexpr std::size_t arity = 2;
    template <class N, class X>
    static constexpr auto value(const N& n, const X& x) {
        return polygamma(n, x);
    }
    template <std::size_t I, class Y, class N, class X>
    static constexpr auto partial(const Y&, const N& n, const X& x) {
        static_assert(I == 1, "nabla: the order of polygamma(n, x) is an integer constant and has "
                              "no derivative");
        return polygamma(n + one, x);
    }
    // y' = polygamma(n + 1, u) u', the derivative series of order K-1 by the same recurrence.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(int n, const std::array<T, K + 1>& u) {
        const T y = value(n, u[0]);
        if constexpr (K == 0)
            return {y};
        else
            return series::integrate(
                y, u, polygamma_rule::series<T, K - 1>(n + 1, series::truncate<K - 1>(u)));
    }
};

// tgamma' = tgamma * digamma, reusing the value.
struct tgamma_rule {
    static constexpr const char* name = "tgamma";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::tgamma;
        return tgamma(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X& x) {
        return y * polygamma(order_zero(x), x);
    }
    // y' = digamma(u) y u', with digamma(u) = polygamma(0, u) as a series of order K-1.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        const T y = value(u[0]);
        if constexpr (K == 0)
            return {y};
        else
            return series::exponential_like(
                y, u, polygamma_rule::series<T, K - 1>(0, series::truncate<K - 1>(u)));
    }
};

// lgamma(x) = log|Gamma(x)|, also for negative non-integer x; lgamma' = digamma.
struct lgamma_rule {
    static constexpr const char* name = "lgamma";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::lgamma;
        return lgamma(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        return polygamma(order_zero(x), x);
    }
};

// xsimd 8.1 differs from the C library at these functions' edges (rules/rule.hpp).
template <>
inline constexpr bool native_value_on_lanes<erf_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<erfc_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<lgamma_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<tgamma_rule> = false;

// Their partials take exp(-x^2), which xsimd must not see beyond -700 (rules/rule.hpp).
template <>
inline constexpr double lanes_limit<erf_rule> = 26.0;
template <>
inline constexpr double lanes_limit<erfc_rule> = 26.0;

// (Ei's plain-number function, which its rule calls.)
template <Number X>
requires std::is_arithmetic_v<X>
auto expint(const X& x) {
    // (libstdc++ gives NaN at +inf.)
    using T = decltype(std::expint(x));
    return T(x) == std::numeric_limits<T>::infinity() ? T(x) : std::expint(x);
}

// The exponential integral Ei(x) (std::expint): Ei' = e^x / x. Ei(0) = -inf, its derivative +inf
// there; for x < 0, Ei(x) = -E1(-x).
struct expint_rule {
    static constexpr const char* name = "expint";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        return expint(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::exp;
        return exp(x) / x;
    }
};

// On lanes: the standard library's Ei lane by lane; its partial e^x / x is native.
template <>
inline constexpr bool native_value_on_lanes<expint_rule> = false;
// (exp on lanes must not see beyond 700: rules/rule.hpp.)
template <>
inline constexpr double lanes_limit<expint_rule> = 700.0;

}  // namespace nabla::rules
