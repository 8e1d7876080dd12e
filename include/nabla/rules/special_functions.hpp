#pragma once
// Special functions of physics and their relatives: sin_pi and cos_pi, sqrt1pm1 and powm1, the
// exponential integral Ei, the two real branches of Lambert W, the beta function, and the
// complete elliptic integrals of the first and second kind. Values come from the C++17 special
// functions of the standard library where it has them (NaN outside their domains, where
// libstdc++ throws); Lambert W is computed here (Halley's iteration), since Boost.Math's header
// alone takes over a second to compile. Edge conventions are in docs/conventions.md.

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <type_traits>

#include "rule.hpp"
#include "series.hpp"
#include "special.hpp"

namespace nabla::rules {

namespace detail {

// sin(pi x) and cos(pi x) with the argument reduced exactly (x - 2 round(x / 2) is exact in
// floating point), so that sin_pi(n) is exactly 0 and cos_pi(n + 1/2) exactly 0 for every integer
// n, where sin(pi * x) is off by the rounding of pi * x (sin(pi * 1e10) = -2.2e-6).
template <class T>
T sin_pi(T x) {
    if (!std::isfinite(x))
        return std::numeric_limits<T>::quiet_NaN();
    const T r = x - T(2) * std::round(x / T(2));  // in [-1, 1]
    // sin(pi r) on [-1, 1] by symmetry from [-1/2, 1/2] (sin(pi (1 - r)) = sin(pi r)).
    const T folded = r > T(0.5) ? T(1) - r : (r < T(-0.5) ? T(-1) - r : r);
    if (folded == T(0))
        return std::copysign(T(0), x);
    return std::sin(std::numbers::pi_v<T> * folded);
}
template <class T>
T cos_pi(T x) {
    if (!std::isfinite(x))
        return std::numeric_limits<T>::quiet_NaN();
    const T r = std::abs(x - T(2) * std::round(x / T(2)));  // in [0, 1]
    if (r == T(0.5))
        return T(0);
    // cos(pi r) = sin(pi (1/2 - r)), exact in its argument for r in [0, 1].
    return std::sin(std::numbers::pi_v<T> * (T(0.5) - r));
}

// Lambert W: the solution w of w e^w = x on the branch W0 (w >= -1, x >= -1/e) or W-1
// (w <= -1, -1/e <= x < 0). Halley's iteration from a series about the branch point, an
// asymptotic start for large |log|, or log1p near 0; NaN outside the domain.
template <class T>
T lambert_w(T x, bool lower_branch) {
    constexpr T nan = std::numeric_limits<T>::quiet_NaN();
    constexpr T inverse_e = T(1) / std::numbers::e_v<T>;
    if (x != x || x < -inverse_e)
        return nan;
    if (lower_branch && x >= T(0))
        return x == T(0) ? -std::numeric_limits<T>::infinity() : nan;
    if (!lower_branch && x == std::numeric_limits<T>::infinity())
        return x;
    if (!lower_branch && x == T(0))
        return x;
    if (x == -inverse_e)
        return T(-1);
    // Near the branch point, w = -1 + p - p^2/3 + 11/72 p^3 with p = +-sqrt(2 (e x + 1)).
    const T q = T(2) * (std::numbers::e_v<T> * x + T(1));
    T w;
    if (q < T(0.5)) {
        const T p = (lower_branch ? T(-1) : T(1)) * std::sqrt(std::max(q, T(0)));
        w = T(-1) + p * (T(1) + p * (T(-1) / T(3) + p * T(11) / T(72)));
    } else if (lower_branch) {
        // W-1(x) ~ L1 - L2 + L2 / L1 with L1 = log(-x), L2 = log(-L1).
        const T l1 = std::log(-x);
        const T l2 = std::log(-l1);
        w = l1 - l2 + l2 / l1;
    } else if (x < T(3)) {
        w = std::log1p(x) * (T(1) - std::log1p(std::log1p(x)) / (T(2) + std::log1p(x)));
    } else {
        const T l1 = std::log(x);
        const T l2 = std::log(l1);
        w = l1 - l2 + l2 / l1;
    }
    for (int iteration = 0; iteration < 32; ++iteration) {
        const T e = std::exp(w);
        const T f = w * e - x;
        const T denominator = e * (w + T(1)) - (w + T(2)) * f / (T(2) * w + T(2));
        if (denominator == T(0) || !std::isfinite(denominator))
            break;
        const T step = f / denominator;
        w -= step;
        if (std::abs(step) <= T(4) * std::numeric_limits<T>::epsilon() * std::abs(w))
            break;
    }
    return w;
}

// The Taylor series of w = W(u) from w e^w = u: with e = exp(w) as a series (e' = e w'),
// u_k = sum_j w_j e_{k-j} gives w_k = (u_k - w_0 A_k - B_k) / (e_0 (1 + w_0)), where
// A_k = 1/k sum_{j=1..k-1} j w_j e_{k-j} and B_k = sum_{j=1..k-1} w_j e_{k-j}.
template <class T, std::size_t N>
std::array<T, N> lambert_w_series(const T& value, const std::array<T, N>& u) {
    std::array<T, N> w{};
    std::array<T, N> e{};
    w[0] = value;
    e[0] = std::exp(value);
    for (std::size_t k = 1; k < N; ++k) {
        T a = T(0), b = T(0);
        for (std::size_t j = 1; j < k; ++j) {
            a += T(j) * w[j] * e[k - j];
            b += w[j] * e[k - j];
        }
        a /= T(k);
        w[k] = (u[k] - value * a - b) / (e[0] * (T(1) + value));
        e[k] = w[k] * e[0] + a;
    }
    return w;
}

// The floating-point type a plain number computes in (an integer argument: double).
template <class X>
using real_t = std::conditional_t<std::is_floating_point_v<X>, X, double>;

}  // namespace detail

// The plain-number functions the rules call (for expressions, dual and Taylor numbers, which an
// active dual number's value is, argument-dependent lookup finds nabla's, from the function list).
template <Number X>
requires std::is_arithmetic_v<X>
auto sin_pi(const X& x) {
    return detail::sin_pi(static_cast<detail::real_t<X>>(x));
}
template <Number X>
requires std::is_arithmetic_v<X>
auto cos_pi(const X& x) {
    return detail::cos_pi(static_cast<detail::real_t<X>>(x));
}
template <Number X>
requires std::is_arithmetic_v<X>
auto expint(const X& x) {
    // (libstdc++ gives NaN at +inf.)
    using T = decltype(std::expint(x));
    return T(x) == std::numeric_limits<T>::infinity() ? T(x) : std::expint(x);
}
template <Number X>
requires std::is_arithmetic_v<X>
auto lambert_w0(const X& x) {
    return detail::lambert_w(static_cast<detail::real_t<X>>(x), false);
}
template <Number X>
requires std::is_arithmetic_v<X>
auto lambert_wm1(const X& x) {
    return detail::lambert_w(static_cast<detail::real_t<X>>(x), true);
}
template <Number X>
requires std::is_arithmetic_v<X>
auto comp_ellint_1(const X& k) {
    // (libstdc++ gives NaN at |k| = 1, where the integral diverges.)
    using T = decltype(std::comp_ellint_1(k));
    if (std::abs(k) > X(1))
        return std::numeric_limits<T>::quiet_NaN();
    return std::abs(k) == X(1) ? std::numeric_limits<T>::infinity() : std::comp_ellint_1(k);
}
template <Number X>
requires std::is_arithmetic_v<X>
auto comp_ellint_2(const X& k) {
    // (libstdc++ throws std::domain_error for |k| > 1.)
    using T = decltype(std::comp_ellint_2(k));
    return std::abs(k) > X(1) ? std::numeric_limits<T>::quiet_NaN() : std::comp_ellint_2(k);
}

template <Number A, Number B>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>) auto beta(const A& a, const B& b) {
    return std::beta(a, b);
}
template <Number A, Number B>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>) auto powm1(const A& x, const B& y) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<B>>;
    // exp(y log x) - 1 without the cancellation near x^y = 1; a base <= 0 as pow.
    if (x > A(0))
        return std::expm1(T(y) * std::log(T(x)));
    return std::pow(T(x), T(y)) - T(1);
}

struct sin_pi_rule {
    static constexpr const char* name = "sin_pi";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        return sin_pi(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        return pi * cos_pi(x);
    }
    // sin(pi u): the sine-cosine pair on pi u, with the exactly reduced values.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        std::array<T, K + 1> scaled = u;
        for (auto& c : scaled)
            c *= std::numbers::pi_v<T>;
        return series::sine_cosine<false>(T(sin_pi(u[0])), T(cos_pi(u[0])), scaled)[0];
    }
};

struct cos_pi_rule {
    static constexpr const char* name = "cos_pi";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        return cos_pi(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        return -(pi * sin_pi(x));
    }
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        std::array<T, K + 1> scaled = u;
        for (auto& c : scaled)
            c *= std::numbers::pi_v<T>;
        return series::sine_cosine<false>(T(sin_pi(u[0])), T(cos_pi(u[0])), scaled)[1];
    }
};

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

// Lambert W on its principal branch W0 (x >= -1/e) and its lower branch W-1 (-1/e <= x < 0):
// W' = e^-W / (1 + W), from w e^w = x, which is 1 at x = 0 and +inf (W0) or -inf (W-1) at the
// branch point x = -1/e, where both branches are -1.
struct lambert_w0_rule {
    static constexpr const char* name = "lambert_w0";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        return lambert_w0(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X&) {
        using std::exp;
        return exp(-y) / (one + y);
    }
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        return detail::lambert_w_series(T(value(u[0])), u);
    }
};
struct lambert_wm1_rule {
    static constexpr const char* name = "lambert_wm1";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        return lambert_wm1(x);
    }
    // (1 + W is negative on this branch: written -(-1 - W), which is -0 at the branch point, so
    // that the derivative there is -inf, the limit from inside the domain.)
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X&) {
        using std::exp;
        return exp(-y) / -(minus_one - y);
    }
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        return detail::lambert_w_series(T(value(u[0])), u);
    }
};

// The complete elliptic integrals K(k) and E(k) of modulus k (std::comp_ellint_1 and 2, with
// K(k) = integral_0^(pi/2) dt / sqrt(1 - k^2 sin^2 t)):
//   dK/dk = (E - (1 - k^2) K) / (k (1 - k^2)),   dE/dk = (E - K) / k.
// Both numerators vanish at k = 0 with the exact values pi/2, and the strong-zero quotient gives
// the derivative there, 0. At |k| = 1, K is +inf and the derivatives are +-inf (K' odd, E'
// -+inf); |k| > 1 is NaN.
struct comp_ellint_1_rule {
    static constexpr const char* name = "comp_ellint_1";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& k) {
        return comp_ellint_1(k);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X& k) {
        // ((1 - k^2) K tends to 0 at |k| = 1, where K is infinite: the strong-zero product.)
        const auto complement = one - k * k;
        return div_strong_zero(comp_ellint_2(k) - mul_strong_zero(complement, y), k * complement);
    }
};
struct comp_ellint_2_rule {
    static constexpr const char* name = "comp_ellint_2";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& k) {
        return comp_ellint_2(k);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X& k) {
        return div_strong_zero(y - comp_ellint_1(k), k);
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

// The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b) (std::beta):
// dB/da = B (digamma(a) - digamma(a + b)), and the same in b.
struct beta_rule {
    static constexpr const char* name = "beta";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        return beta(a, b);
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y& y, const A& a, const B& b) {
        const auto both = polygamma(order_zero(a), a + b);
        if constexpr (I == 0)
            return y * (polygamma(order_zero(a), a) - both);
        else
            return y * (polygamma(order_zero(b), b) - both);
    }
};

// None of these has a SIMD form: on lanes, the standard library's, lane by lane.
template <>
inline constexpr bool native_value_on_lanes<sin_pi_rule> = false;
template <>
inline constexpr bool native_partials_on_lanes<sin_pi_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<cos_pi_rule> = false;
template <>
inline constexpr bool native_partials_on_lanes<cos_pi_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<expint_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<lambert_w0_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<lambert_wm1_rule> = false;
// (Their partials' exp(-W) sees NaN outside the domain and +inf at W-1(0), which xsimd 8.1's exp
// converts to an integer: undefined behaviour.)
template <>
inline constexpr bool native_partials_on_lanes<lambert_w0_rule> = false;
template <>
inline constexpr bool native_partials_on_lanes<lambert_wm1_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<comp_ellint_1_rule> = false;
template <>
inline constexpr bool native_partials_on_lanes<comp_ellint_1_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<comp_ellint_2_rule> = false;
template <>
inline constexpr bool native_partials_on_lanes<comp_ellint_2_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<powm1_rule> = false;
template <>
inline constexpr bool native_partials_on_lanes<powm1_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<beta_rule> = false;
template <>
inline constexpr bool native_partials_on_lanes<beta_rule> = false;
// (exp on lanes must not see beyond 700: rules/rule.hpp.)
template <>
inline constexpr double lanes_limit<expint_rule> = 700.0;

}  // namespace nabla::rules
