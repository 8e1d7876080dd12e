#pragma once
// Special functions of physics and their relatives: sin_pi and cos_pi, sqrt1pm1 and powm1, the
// exponential integral Ei, the two real branches of Lambert W, the Hermite, Gegenbauer and
// associated Laguerre polynomials, the spherical Bessel functions, sinc and fmod (the beta
// function: beta.hpp; the elliptic integrals: elliptic.hpp). Values come from the C++17 special
// functions of the standard library where they are accurate (NaN outside their domains, where
// libstdc++ throws); the spherical Bessel functions near 0 and far out from their series are
// computed here, as is Lambert W (Halley's iteration), since Boost.Math's header alone takes over
// a second to compile.
// Edge conventions are in docs/conventions.md.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <type_traits>

#include "beta.hpp"
#include "elliptic.hpp"
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
template <Number A, Number B>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>) auto fmod(const A& x, const B& y) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<B>>;
    return std::fmod(T(x), T(y));
}

template <Number A, Number B>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>) auto powm1(const A& x, const B& y) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<B>>;
    // exp(y log x) - 1 without the cancellation near x^y = 1; a base <= 0 as pow.
    if (x > A(0))
        return std::expm1(T(y) * std::log(T(x)));
    return std::pow(T(x), T(y)) - T(1);
}

namespace detail {

// The index n of f(n, x) as an int: an array expression evaluates its constants as floating-point
// lanes.
template <class N>
constexpr int index_of(const N& n) {
    return static_cast<int>(n);
}

// The spherical Bessel functions j_n and y_n for every integer n and real x, from libstdc++'s
// (which takes n >= 0 and x >= 0 and throws otherwise): j_n(-x) = (-1)^n j_n(x),
// y_n(-x) = (-1)^(n+1) y_n(x), j_(-m-1) = (-1)^(m+1) y_m and y_(-m-1) = (-1)^m j_m. j_(-1) and
// y_(-1) close the derivative recurrence at n = 0. Both tend to 0 at infinity; y_n(0) = -inf.
// j_n(x) and y_n(x) for 0 < x < 1/4 from their power series in -x^2 / 2 (libstdc++'s lose every
// digit below about 1e-50 and throw on subnormal x):
//   j_n = x^n / (2n+1)!! sum_k (-x^2/2)^k / (k! (2n+3)(2n+5)...(2n+2k+1)),
//   y_n = -(2n-1)!! / x^(n+1) sum_k (-x^2/2)^k / (k! (1-2n)(3-2n)...(2k-1-2n)).
template <class T>
T spherical_near_zero(int n, T x, bool neumann) {
    T scale = neumann ? -T(1) / x : T(1);
    for (int i = 1; i <= n; ++i)
        scale *= neumann ? T(2 * i - 1) / x : x / T(2 * i + 1);
    const T h = -x * x / T(2);
    T term = T(1), sum = T(1);
    for (int k = 1; k < 60; ++k) {
        term *= h / (T(k) * T(neumann ? 2 * k - 1 - 2 * n : 2 * n + 2 * k + 1));
        sum += term;
        if (std::abs(term) <= std::numeric_limits<T>::epsilon() * std::abs(sum) / T(4))
            break;
    }
    return scale * sum;
}

// j_n(x) and y_n(x) for x > n (n + 1) from their exact finite expansions in 1/x, whose terms
// decrease there (libstdc++'s lose digits beyond x = 1000, 3e-9 at 1e4, and throw beyond 1e5):
//   j_n = (sin(x - n pi/2) P + cos(x - n pi/2) Q) / x,   y_n = (sin(x - n pi/2) Q - cos(...) P) /
//   x,
// P and Q the even and odd terms of sum_k (-1)^floor(k/2) a_k / x^k, a_k = (n+k)! / (2^k k!
// (n-k)!).
template <class T>
T spherical_far(int n, T x, bool neumann) {
    T p = T(0), q = T(0), a = T(1), power = T(1);
    for (int k = 0; k <= n; ++k) {
        if (k > 0) {
            a *= T(n + k) * T(n - k + 1) / T(2 * k);
            power /= x;
        }
        const T term = (k / 2) % 2 == 0 ? a * power : -(a * power);
        (k % 2 == 0 ? p : q) += term;
    }
    // sin(x - n pi/2) and cos(x - n pi/2) by the quadrant, exact for every x.
    const T sine = std::sin(x), cosine = std::cos(x);
    const T shifted_sin[4] = {sine, -cosine, -sine, cosine};
    const T shifted_cos[4] = {cosine, sine, -cosine, -sine};
    const T sn = shifted_sin[n % 4], cs = shifted_cos[n % 4];
    return (neumann ? sn * q - cs * p : sn * p + cs * q) / x;
}

template <class T>
T sph_neumann(int n, T x);
template <class T>
T sph_bessel(int n, T x) {
    if (n < 0) {
        const int m = -n - 1;
        const T y = sph_neumann(m, x);
        return m % 2 == 0 ? -y : y;
    }
    if (std::isnan(x))
        return x;
    if (x < T(0)) {
        const T v = sph_bessel(n, -x);
        return n % 2 == 0 ? v : -v;
    }
    if (std::isinf(x))
        return T(0);
    if (x < T(0.25))
        return x == T(0) ? T(n == 0 ? 1 : 0) : spherical_near_zero(n, x, false);
    if (x > T(n) * T(n + 1))
        return spherical_far(n, x, false);
    return std::sph_bessel(static_cast<unsigned>(n), x);
}
template <class T>
T sph_neumann(int n, T x) {
    if (n < 0) {
        const int m = -n - 1;
        const T j = sph_bessel(m, x);
        return m % 2 == 0 ? j : -j;
    }
    if (std::isnan(x))
        return x;
    if (x < T(0)) {
        const T v = sph_neumann(n, -x);
        return n % 2 == 0 ? -v : v;
    }
    if (x == T(0))
        return -std::numeric_limits<T>::infinity();
    if (std::isinf(x))
        return T(0);
    if (x < T(0.25))
        return spherical_near_zero(n, x, true);
    if (x > T(n) * T(n + 1))
        return spherical_far(n, x, true);
    return std::sph_neumann(static_cast<unsigned>(n), x);
}

// The Taylor series of j_n(u) or y_n(u) from f_n' = (n f_(n-1) - (n+1) f_(n+1)) / (2n + 1), the
// derivative series of order K-1 by the same recurrence on the neighbouring indices.
template <class Rule, class T, std::size_t K>
constexpr std::array<T, K + 1> spherical_series(int n, const std::array<T, K + 1>& u) {
    const T y = Rule::value(n, u[0]);
    if constexpr (K == 0) {
        return {y};
    } else {
        const auto lower = series::truncate<K - 1>(u);
        auto derivative = spherical_series<Rule, T, K - 1>(n + 1, lower);
        for (auto& c : derivative)
            c *= -T(n + 1);
        if (n != 0) {
            const auto below = spherical_series<Rule, T, K - 1>(n - 1, lower);
            for (std::size_t k = 0; k < K; ++k)
                derivative[k] += T(n) * below[k];
        }
        for (auto& c : derivative)
            c /= T(2 * n + 1);
        return series::integrate(y, u, derivative);
    }
}

}  // namespace detail

// The Hermite polynomials H_n(x) of physics (std::hermite), with H_n = 0 for n < 0 (which closes
// H_n' = 2n H_(n-1) at n = 0), and the spherical Bessel functions j_n(x) and y_n(x)
// (std::sph_bessel and std::sph_neumann, extended to every integer n and real x).
template <Number N, Number X>
requires(std::is_arithmetic_v<N>&& std::is_arithmetic_v<X>) auto hermite(const N& n, const X& x) {
    using T = detail::real_t<X>;
    const int index = detail::index_of(n);
    return index < 0 ? T(0) : static_cast<T>(std::hermite(static_cast<unsigned>(index), T(x)));
}
// The Gegenbauer (ultraspherical) polynomials C_n^(a)(x) and the associated Laguerre
// polynomials L_n^(a)(x) of a real parameter a, from their three-term recurrences in n (as
// libstdc++ computes std::assoc_laguerre), for every real x: C_n^(1/2) = P_n, the Legendre
// polynomial; L_n^(0) = L_n. Both are 0 for n < 0, which closes their derivatives
// C_n^(a)' = 2a C_(n-1)^(a+1) and L_n^(a)' = -L_(n-1)^(a+1) at n = 0.
namespace detail {
// C_n^(a)(x) (Laguerre = false) or L_n^(a)(x) by the recurrence, for a number x of type S or
// anything that computes with S (the series tape records it operation by operation).
template <bool Laguerre, class S, class X>
X parametric_polynomial(int n, S a, const X& x) {
    if (n < 0)
        return X(S(0));
    X previous = X(S(1));
    X current = Laguerre ? S(1) + a - x : S(2) * a * x;
    for (int k = 2; k <= n; ++k) {
        X next =
            Laguerre
                ? ((S(2 * k - 1) + a - x) * current - (S(k - 1) + a) * previous) / S(k)
                : (S(2) * x * (S(k) + a - S(1)) * current - (S(k) + S(2) * a - S(2)) * previous) /
                      S(k);
        previous = current;
        current = next;
    }
    return n == 0 ? previous : current;
}
}  // namespace detail
template <Number N, Number A, Number X>
requires(std::is_arithmetic_v<N>&& std::is_arithmetic_v<A>&&
             std::is_arithmetic_v<X>) auto gegenbauer(const N& n, const A& a, const X& x) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<X>>;
    return detail::parametric_polynomial<false>(detail::index_of(n), T(a), T(x));
}
template <Number N, Number A, Number X>
requires(std::is_arithmetic_v<N>&& std::is_arithmetic_v<A>&&
             std::is_arithmetic_v<X>) auto assoc_laguerre(const N& n, const A& a, const X& x) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<X>>;
    return detail::parametric_polynomial<true>(detail::index_of(n), T(a), T(x));
}
template <Number N, Number X>
requires(std::is_arithmetic_v<N>&& std::is_arithmetic_v<X>) auto sph_bessel(const N& n,
                                                                            const X& x) {
    return detail::sph_bessel(detail::index_of(n), static_cast<detail::real_t<X>>(x));
}
template <Number N, Number X>
requires(std::is_arithmetic_v<N>&& std::is_arithmetic_v<X>) auto sph_neumann(const N& n,
                                                                             const X& x) {
    return detail::sph_neumann(detail::index_of(n), static_cast<detail::real_t<X>>(x));
}

// sin(x) / x, 1 at 0 (where sin(x) = x in floating point for |x| < 1e-8, so that no series is
// needed near 0) and 0 at infinity.
template <Number X>
requires std::is_arithmetic_v<X>
auto sinc(const X& x_in) {
    using T = detail::real_t<X>;
    const T x = x_in;
    if (x == T(0))
        return T(1);
    return std::isinf(x) ? T(0) : std::sin(x) / x;
}

namespace detail {

// The constant index N of an indexed function called inside a rule: an int next to numbers, the
// exact literal next to expressions (as order_zero).
template <int N, class X>
constexpr auto constant_index(const X&) {
    if constexpr (Number<X>)
        return N;
    else
        return literal<N>{};
}

}  // namespace detail

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

// fmod(x, y) = x - n y with n = trunc(x / y): d/dx = 1, d/dy = -n, the quotient read back from
// the exact remainder r as round((x - r) / y) (trunc(x / y) rounds: fmod(1, 0.1) has n = 9, while
// 1 / 0.1 is 10). At a jump (r = 0) the derivative is that of the side r lies on.
struct fmod_rule {
    static constexpr const char* name = "fmod";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& x, const B& y) {
        return fmod(x, y);
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y& r, const A& x, const B& y) {
        using std::round;
        if constexpr (I == 0)
            return one;
        else
            return -round((x - r) / y);
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

// hermite(n, x) with a constant integer index n: H_n' = 2n H_(n-1).
struct hermite_rule {
    static constexpr const char* name = "hermite";
    static constexpr std::size_t arity = 2;
    template <class N, class X>
    static constexpr auto value(const N& n, const X& x) {
        return hermite(n, x);
    }
    template <std::size_t I, class Y, class N, class X>
    static constexpr auto partial(const Y&, const N& n, const X& x) {
        static_assert(I == 1, "nabla: the index n of hermite(n, x) is an integer constant and has "
                              "no derivative");
        return two * n * hermite(n - one, x);
    }
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(int n, const std::array<T, K + 1>& u) {
        const T y = value(n, u[0]);
        if constexpr (K == 0) {
            return {y};
        } else {
            auto derivative = hermite_rule::series<T, K - 1>(n - 1, series::truncate<K - 1>(u));
            for (auto& c : derivative)
                c *= T(2 * n);
            return series::integrate(y, u, derivative);
        }
    }
};

// The spherical Bessel functions j_n(x) and y_n(x) of a constant integer index n:
// f_n' = (n f_(n-1) - (n+1) f_(n+1)) / (2n + 1), free of the 1/x of the other recurrences, so
// that j_n' is exact at x = 0. The strong zero keeps n f_(n-1) at 0 for n = 0, where j_(-1)(0)
// is infinite.
// The rule of j_n (Neumann = false) or y_n: the two differ only in their function.
template <bool Neumann>
struct spherical_function {
    static constexpr const char* name = Neumann ? "sph_neumann" : "sph_bessel";
    static constexpr std::size_t arity = 2;
    template <class N, class X>
    static constexpr auto value(const N& n, const X& x) {
        if constexpr (Neumann)
            return sph_neumann(n, x);
        else
            return sph_bessel(n, x);
    }
    template <std::size_t I, class Y, class N, class X>
    static constexpr auto partial(const Y&, const N& n, const X& x) {
        static_assert(I == 1, "nabla: the index n of sph_bessel(n, x) and sph_neumann(n, x) is an "
                              "integer constant and has no derivative");
        return (mul_strong_zero(n, value(n - one, x)) - (n + one) * value(n + one, x)) /
               (two * n + one);
    }
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(int n, const std::array<T, K + 1>& u) {
        return detail::spherical_series<spherical_function, T, K>(n, u);
    }
};
struct sph_bessel_rule : spherical_function<false> {};
struct sph_neumann_rule : spherical_function<true> {};

// f(n, a, x) of a constant integer degree n and a constant real parameter a, differentiable in x:
// C_n^(a)' = 2a C_(n-1)^(a+1) and L_n^(a)' = -L_(n-1)^(a+1), polynomials of the same family,
// so that derivatives of every order and the Taylor series (by integrating the derivative's) stay
// exact.
template <bool Laguerre>
struct parametric_polynomial {
    static constexpr const char* name = Laguerre ? "assoc_laguerre" : "gegenbauer";
    static constexpr std::size_t arity = 3;
    template <class N, class A, class X>
    static constexpr auto value(const N& n, const A& a, const X& x) {
        if constexpr (Laguerre)
            return assoc_laguerre(n, a, x);
        else
            return gegenbauer(n, a, x);
    }
    template <std::size_t I, class Y, class N, class A, class X>
    static constexpr auto partial(const Y&, const N& n, const A& a, const X& x) {
        static_assert(I == 2, "nabla: the degree n and the parameter a of gegenbauer(n, a, x) and "
                              "assoc_laguerre(n, a, x) are constants and have no derivative");
        if constexpr (Laguerre)
            return -assoc_laguerre(n - one, a + one, x);
        else
            return two * a * gegenbauer(n - one, a + one, x);
    }
    template <class T, std::size_t K, class A>
    static constexpr std::array<T, K + 1> series(int n, const A& a, const std::array<T, K + 1>& u) {
        const T y = value(n, a, u[0]);
        if constexpr (K == 0) {
            return {y};
        } else {
            auto derivative = parametric_polynomial::series<T, K - 1>(n - 1, a + A(1),
                                                                      series::truncate<K - 1>(u));
            const T factor = Laguerre ? T(-1) : T(2 * a);
            for (auto& c : derivative)
                c *= factor;
            return series::integrate(y, u, derivative);
        }
    }
};
struct gegenbauer_rule : parametric_polynomial<false> {};
struct assoc_laguerre_rule : parametric_polynomial<true> {};

// sinc(x) = sin(x) / x = j_0(x): sinc' = -j_1(x), which is exact at 0 where
// (x cos x - sin x) / x^2 divides 0 by 0.
struct sinc_rule {
    static constexpr const char* name = "sinc";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        return sinc(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        return -sph_bessel(detail::constant_index<1>(x), x);
    }
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        return detail::spherical_series<sph_bessel_rule, T, K>(0, u);
    }
};

// None of these has a SIMD form: on lanes, the standard library's or nabla's scalar functions,
// lane by lane, values and partials (Ei's partial e^x / x is native).
NABLA_LANE_BY_LANE(sin_pi_rule)
NABLA_LANE_BY_LANE(cos_pi_rule)
// (Lambert W's partials too: their exp(-W) sees NaN outside the domain and +inf at W-1(0), which
// xsimd 8.1's exp converts to an integer, undefined behaviour.)
NABLA_LANE_BY_LANE(lambert_w0_rule)
NABLA_LANE_BY_LANE(lambert_wm1_rule)
NABLA_LANE_BY_LANE(powm1_rule)
NABLA_LANE_BY_LANE(fmod_rule)
NABLA_LANE_BY_LANE(sinc_rule)
NABLA_LANE_BY_LANE(hermite_rule)
NABLA_LANE_BY_LANE(sph_bessel_rule)
NABLA_LANE_BY_LANE(sph_neumann_rule)
NABLA_LANE_BY_LANE(gegenbauer_rule)
NABLA_LANE_BY_LANE(assoc_laguerre_rule)
template <>
inline constexpr bool native_value_on_lanes<expint_rule> = false;
// (exp on lanes must not see beyond 700: rules/rule.hpp.)
template <>
inline constexpr double lanes_limit<expint_rule> = 700.0;

}  // namespace nabla::rules
