#pragma once
// Trigonometric functions and their inverses, and sin_pi(x) = sin(pi x) and cos_pi(x) = cos(pi x)
// with the argument reduced exactly.

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <type_traits>

#include "arithmetic.hpp"
#include "rule.hpp"
#include "series.hpp"
#include "series_number.hpp"

namespace nabla::rules {

struct sin_rule {
    static constexpr const char* name = "sin";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::sin;
        return sin(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::cos;
        return cos(x);
    }
    // y' = c u' and c' = -y u', with c_0 = cos(u_0) from the partial.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        const T y = value(u[0]);
        return series::sine_cosine<false>(y, T(partial<0>(y, u[0])), u)[0];
    }
};

struct cos_rule {
    static constexpr const char* name = "cos";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::cos;
        return cos(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::sin;
        return -sin(x);
    }
    // y' = -s u' and s' = y u', with s_0 = sin(u_0) from the partial.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        const T y = value(u[0]);
        return series::sine_cosine<false>(T(-partial<0>(y, u[0])), y, u)[1];
    }
};

// tan' = 1 + tan^2, reusing the value.
struct tan_rule {
    static constexpr const char* name = "tan";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::tan;
        return tan(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X&) {
        return one + y * y;
    }
    // y' = (1 + y^2) u'.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        const T y = value(u[0]);
        return series::riccati(y, u, T(1), T(1) + y * y);
    }
};

// asin' = 1/sqrt(1 - x^2); +inf at |x| = 1. (The factored form (1-x)(1+x) would be a little more
// accurate near |x| = 1, where the derivative is ill-conditioned anyway, but its own derivative
// (1-x) - (1+x) cancels near 0, costing the second derivative its accuracy there.)
struct asin_rule {
    static constexpr const char* name = "asin";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::asin;
        return asin(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::sqrt;
        return one / sqrt(one - x * x);
    }
};

struct acos_rule {
    static constexpr const char* name = "acos";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::acos;
        return acos(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::sqrt;
        return minus_one / sqrt(one - x * x);
    }
};

struct atan_rule {
    static constexpr const char* name = "atan";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::atan;
        return atan(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        return one / (one + x * x);
    }
};

// atan2(a, b): the angle of the point (b, a). d/da = b/r^2, d/db = -a/r^2 with r = hypot(a, b),
// computed as (b/r)/r so that r^2 cannot overflow or underflow. At the origin both partials are 0
// by convention (the strong-zero quotient), instead of 0/0.
struct atan2_rule {
    static constexpr const char* name = "atan2";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        using std::atan2;
        return atan2(a, b);
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y&, const A& a, const B& b) {
        using std::hypot;
        if constexpr (I == 0)
            return div_strong_zero(div_strong_zero(b, hypot(a, b)), hypot(a, b));
        else
            return div_strong_zero(div_strong_zero(-a, hypot(a, b)), hypot(a, b));
    }
    // y' = (b a' - a b') / (a^2 + b^2), as a series of order K-1.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& a,
                                                 const std::array<T, K + 1>& b) {
        std::array<T, K + 1> y{};
        y[0] = value(a[0], b[0]);
        if constexpr (K > 0) {
            std::array<T, K> da{}, db{};
            for (std::size_t k = 0; k < K; ++k) {
                da[k] = T(k + 1) * a[k + 1];
                db[k] = T(k + 1) * b[k + 1];
            }
            const auto a1 = series::truncate<K - 1>(a);
            const auto b1 = series::truncate<K - 1>(b);
            const auto dy = div_rule::series<T, K - 1>(
                sub_rule::series<T, K - 1>(mul_rule::series<T, K - 1>(b1, da),
                                           mul_rule::series<T, K - 1>(a1, db)),
                add_rule::series<T, K - 1>(mul_rule::series<T, K - 1>(a1, a1),
                                           mul_rule::series<T, K - 1>(b1, b1)));
            for (std::size_t k = 1; k <= K; ++k)
                y[k] = dy[k - 1] * series::reciprocals<T, K>[k];
        }
        return y;
    }
};

// xsimd 8.1 differs from the C library at these functions' edges (rules/rule.hpp).
template <>
inline constexpr bool native_value_on_lanes<atan2_rule> = false;
template <>
inline constexpr bool native_partials_on_lanes<atan2_rule> = false;

// Where xsimd 8.1 converts the argument to an integer (rules/rule.hpp, lanes_limit).
template <>
inline constexpr double lanes_limit<sin_rule> = 1e8;
template <>
inline constexpr double lanes_limit<cos_rule> = 1e8;
template <>
inline constexpr double lanes_limit<tan_rule> = 1e8;

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

// Lane by lane on SIMD lanes: the exact reduction has no SIMD form.
NABLA_LANE_BY_LANE(sin_pi_rule)
NABLA_LANE_BY_LANE(cos_pi_rule)

}  // namespace nabla::rules
