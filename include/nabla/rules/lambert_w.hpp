#pragma once
// Lambert W on its two real branches, W0 (x >= -1/e) and W-1 (-1/e <= x < 0): values by
// Halley's iteration (computed here, since Boost.Math's header alone takes over a second to
// compile), derivatives from w e^w = x, Taylor series by the same identity.
// Edge conventions are in docs/conventions.md.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <type_traits>

#include "rule.hpp"
#include "series.hpp"
#include "series_number.hpp"

namespace nabla::rules {

namespace detail {

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

}  // namespace detail

// The plain-number functions the rules call (for expressions, dual and Taylor numbers, which an
// active dual number's value is, argument-dependent lookup finds nabla's, from the function list).
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

// Lane by lane on SIMD lanes, values and partials: their exp(-W) sees NaN outside the domain and
// +inf at W-1(0), which xsimd 8.1's exp converts to an integer, undefined behaviour.
NABLA_LANE_BY_LANE(lambert_w0_rule)
NABLA_LANE_BY_LANE(lambert_wm1_rule)

}  // namespace nabla::rules
