#pragma once
// The cylindrical Bessel functions J_v, Y_v (cyl_bessel_j, cyl_neumann) and the modified ones
// I_v, K_v (cyl_bessel_i, cyl_bessel_k) of a constant real order v, differentiable in x through
// the order recurrences. Values come from libstdc++ where it is accurate; nabla computes them
// itself where libstdc++ throws, returns NaN or loses the phase: for negative orders (reflection
// formulas), negative x (parity, integer orders only), x below 1e-10 (the leading terms of the
// power series), x beyond max(25, v^2) for J and Y and max(700, v^2) for I and K (Hankel's
// expansion, with the phase x - (v/2 + 1/4) pi split so that x itself is reduced exactly) and at
// 0 and infinity. And the spherical Bessel functions j_n, y_n (sph_bessel, sph_neumann) of a
// constant integer index n, for every integer n and real x, with sinc(x) = j_0(x).
// Edge conventions are in docs/conventions.md.

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <type_traits>

#include "rule.hpp"
#include "series.hpp"
#include "series_number.hpp"
#include "trig.hpp"

namespace nabla::rules {

namespace detail {

enum class cylinder { j, y, i, k };

// (x/2)^v / Gamma(v + 1) for x > 0 and v >= 0, in logarithms only where the direct quotient
// would overflow or underflow (ln(x/2) as ln x - ln 2: x/2 of the least subnormal is 0).
template <class T>
T power_over_gamma(T x, T v) {
    if (v == T(0))
        return T(1);
    const T log_value = v * (std::log(x) - std::numbers::ln2_v<T>)-std::lgamma(v + T(1));
    if (v <= T(170) && std::abs(log_value) < T(700))
        return std::pow(x / T(2), v) / std::tgamma(v + T(1));
    return std::exp(log_value);
}

// The leading terms of the power series about 0 for 0 < x <= 1e-10 and v >= 0, where the terms
// left out are below (x/2)^2 = 2.5e-21 relative (libstdc++ returns NaN or throws for subnormal x,
// and for Y_v of large v once J_v underflows). With P = (x/2)^v / Gamma(v + 1):
//   J_v = I_v = P,   Y_v = P cot(v pi) - 1 / (v pi P),   K_v = 1 / (2 v P) - pi P / (2 sin(v pi)),
// and for integer v the limits: Y_0 = 2/pi (ln(x/2) + gamma), K_0 = -(ln(x/2) + gamma),
// Y_n = -1 / (n pi P), K_n = 1 / (2 n P).
template <class T>
T cylinder_near_zero(cylinder kind, T v, T x) {
    constexpr T pi = std::numbers::pi_v<T>;
    if (kind == cylinder::j || kind == cylinder::i)
        return power_over_gamma(x, v);
    if (v == T(0)) {
        const T log_term = std::log(x) - std::numbers::ln2_v<T> + std::numbers::egamma_v<T>;
        return kind == cylinder::y ? T(2) / pi * log_term : -log_term;
    }
    const T p = power_over_gamma(x, v);
    const bool integer = v == std::floor(v);
    if (kind == cylinder::y) {
        const T leading = -T(1) / (v * pi * p);
        return integer ? leading : p * cos_pi(v) / sin_pi(v) + leading;
    }
    const T leading = T(1) / (T(2) * v * p);
    return integer ? leading : leading - pi * p / (T(2) * sin_pi(v));
}

// Hankel's expansions for x >= max(25, v^2) (J, Y) or x >= max(700, v^2) (I, K), where their
// terms a_k(v) / x^k, a_k = (4v^2 - 1)(4v^2 - 9)...(4v^2 - (2k-1)^2) / (k! 8^k), fall to the
// rounding of the sum before they diverge:
//   J_v = sqrt(2 / (pi x)) (P cos chi - Q sin chi),  Y_v = sqrt(2 / (pi x)) (P sin chi + Q cos chi)
// with chi = x - (v/2 + 1/4) pi, P = a_0 - a_2/x^2 + ..., Q = a_1/x - a_3/x^3 + ...;
//   I_v = e^x / sqrt(2 pi x) sum (-1)^k a_k / x^k,  K_v = e^-x sqrt(pi / (2x)) sum a_k / x^k.
// cos chi and sin chi are taken from cos x and sin x (libm reduces x exactly) and the exact
// cos_pi and sin_pi of the order's shift: x - (v/2 + 1/4) pi itself loses x's last digits.
template <class T>
T cylinder_far(cylinder kind, T v, T x) {
    const T mu = T(4) * v * v;
    // P and Q take the terms with signs + + - - + + ... by k, I's sum (-1)^k, K's all +.
    T term = T(1), even = T(1), odd = T(0), alternating = T(1), plain = T(1), previous = T(2);
    for (int k = 1; k < 500; ++k) {
        const T factor = T(2 * k - 1);
        term *= (mu - factor * factor) / (T(8 * k) * x);
        const T size = std::abs(term);
        if (size == T(0) || size > previous)
            break;
        previous = size;
        (k % 2 == 0 ? even : odd) += (k / 2) % 2 == 0 ? term : -term;
        alternating += k % 2 == 0 ? term : -term;
        plain += term;
        if (size <= std::numeric_limits<T>::epsilon() * T(0.01))
            break;
    }
    constexpr T pi = std::numbers::pi_v<T>;
    // e^x and e^-x in halves: e^x / sqrt(2 pi x) is finite up to x = 713, e^x up to 709.
    if (kind == cylinder::i) {
        const T half_growth = std::exp(x / T(2));
        return half_growth / std::sqrt(T(2) * pi * x) * alternating * half_growth;
    }
    if (kind == cylinder::k) {
        const T half_decay = std::exp(-x / T(2));
        return half_decay * std::sqrt(pi / (T(2) * x)) * plain * half_decay;
    }
    const T shift = v / T(2) + T(0.25);
    const T c = cos_pi(shift), s = sin_pi(shift);
    const T cx = std::cos(x), sx = std::sin(x);
    const T cos_chi = cx * c + sx * s;
    const T sin_chi = sx * c - cx * s;
    const T scale = std::sqrt(T(2) / (pi * x));
    return kind == cylinder::j ? scale * (even * cos_chi - odd * sin_chi)
                               : scale * (even * sin_chi + odd * cos_chi);
}

// A function of order v >= 0 at x >= 0.
template <class T>
T cylinder_nonnegative(cylinder kind, T v, T x) {
    if (std::isinf(x))
        return kind == cylinder::i ? x : T(0);
    if (x > T(0) && x <= T(1e-10))
        return cylinder_near_zero(kind, v, x);
    const bool oscillating = kind == cylinder::j || kind == cylinder::y;
    if (x >= std::max(oscillating ? T(25) : T(700), v * v))
        return cylinder_far(kind, v, x);
    T value;
    switch (kind) {
    case cylinder::j:
        value = std::cyl_bessel_j(v, x);
        break;
    case cylinder::y:
        value = std::cyl_neumann(v, x);
        break;
    case cylinder::i:
        value = std::cyl_bessel_i(v, x);
        break;
    default:
        value = std::cyl_bessel_k(v, x);
        break;
    }
    // libstdc++'s Y_v is NaN where J_v underflows (v = 50, x = 1e-10): x is small against v,
    // where the leading term is exact to the rounding (or -inf).
    if (value != value && kind == cylinder::y)
        return cylinder_near_zero(kind, v, x);
    return value;
}

// Every real order and x: J_-v = cos(v pi) J_v - sin(v pi) Y_v, Y_-v = sin(v pi) J_v +
// cos(v pi) Y_v, I_-v = I_v + 2/pi sin(v pi) K_v, K_-v = K_v, which for an integer order n are
// (-1)^n J_n, (-1)^n Y_n and I_n. For x < 0 only J_n and I_n of integer order are real
// (J_n(-x) = (-1)^n J_n(x), I_n likewise); the others are NaN there.
template <class T>
T cylinder_function(cylinder kind, T v, T x) {
    constexpr T nan = std::numeric_limits<T>::quiet_NaN();
    if (v != v || x != x || std::isinf(v))
        return nan;
    const bool integer = v == std::floor(v);
    const bool odd = integer && std::fmod(std::abs(v), T(2)) == T(1);
    if (x < T(0)) {
        if (!integer || kind == cylinder::y || kind == cylinder::k)
            return nan;
        const T value = cylinder_function(kind, v, -x);
        return odd ? -value : value;
    }
    if (v >= T(0))
        return cylinder_nonnegative(kind, v, x);
    const T order = -v;
    if (kind == cylinder::k)
        return cylinder_nonnegative(kind, order, x);
    if (integer) {
        const T value = cylinder_nonnegative(kind, order, x);
        return odd && kind != cylinder::i ? -value : value;
    }
    // A term whose weight is exactly 0 (cos at a half-integer order) is left out: its function
    // may be infinite there (Y_v(0)).
    const auto weighted = [](T weight, cylinder of, T nu, T at) {
        return weight == T(0) ? T(0) : weight * cylinder_nonnegative(of, nu, at);
    };
    const T c = cos_pi(order), s = sin_pi(order);
    switch (kind) {
    case cylinder::j:
        return weighted(c, cylinder::j, order, x) - weighted(s, cylinder::y, order, x);
    case cylinder::y:
        return weighted(s, cylinder::j, order, x) + weighted(c, cylinder::y, order, x);
    default:
        return cylinder_nonnegative(cylinder::i, order, x) +
               weighted(T(2) / std::numbers::pi_v<T> * s, cylinder::k, order, x);
    }
}

// The order v of f(v, x) as a floating-point number of the function's type.
template <class T, class V>
constexpr T order_of(const V& v) {
    return static_cast<T>(v);
}

// The Taylor series of f_v(u) from f_v' = a f_(v-1) + b f_(v+1) (the rule's lower and upper
// weights), built up by order: the series of order D at the orders v - (K - D), v - (K - D) + 2,
// ..., v + (K - D) from those of order D - 1 at the orders between, so that order K costs
// O(K^2) values and kernels.
template <class Rule, class T, std::size_t K, std::size_t D>
std::array<std::array<T, D + 1>, K + 1 - D> cylinder_layer(T v, const std::array<T, K + 1>& u) {
    std::array<std::array<T, D + 1>, K + 1 - D> layer{};
    if constexpr (D == 0) {
        for (std::size_t i = 0; i <= K; ++i)
            layer[i][0] = Rule::value(v - T(K) + T(2 * i), u[0]);
    } else {
        const auto below = cylinder_layer<Rule, T, K, D - 1>(v, u);
        const auto w = series::truncate<D>(u);
        for (std::size_t i = 0; i <= K - D; ++i) {
            std::array<T, D> derivative{};
            for (std::size_t k = 0; k < D; ++k)
                derivative[k] = T(Rule::lower) * below[i][k] + T(Rule::upper) * below[i + 1][k];
            const T order = v - T(K - D) + T(2 * i);
            layer[i] = series::integrate(Rule::value(order, u[0]), w, derivative);
        }
    }
    return layer;
}

}  // namespace detail

// J_v(x), Y_v(x), I_v(x) and K_v(x) for every real order v and real x (std::cyl_bessel_j,
// std::cyl_neumann, std::cyl_bessel_i and std::cyl_bessel_k, which take v >= 0 and x >= 0).
#define NABLA_CYLINDER_FUNCTION(function, kind)                                                    \
    template <Number V, Number X>                                                                  \
    requires(std::is_arithmetic_v<V> && std::is_arithmetic_v<X>) auto function(const V& v,         \
                                                                               const X& x) {       \
        using T = detail::real_t<X>;                                                               \
        return detail::cylinder_function(detail::cylinder::kind, detail::order_of<T>(v), T(x));    \
    }
NABLA_CYLINDER_FUNCTION(cyl_bessel_j, j)
NABLA_CYLINDER_FUNCTION(cyl_neumann, y)
NABLA_CYLINDER_FUNCTION(cyl_bessel_i, i)
NABLA_CYLINDER_FUNCTION(cyl_bessel_k, k)
#undef NABLA_CYLINDER_FUNCTION

// The rule of f_v(x) with f_v' = Lower f_(v-1) + Upper f_(v+1) (halves):
//   J' = (J_(v-1) - J_(v+1)) / 2,  Y' likewise,  I' = (I_(v-1) + I_(v+1)) / 2,
//   K' = -(K_(v-1) + K_(v+1)) / 2,
// free of the v / x of the other recurrences, so that J_v' and I_v' are exact at x = 0. The order
// is a constant: a derivative in it has no closed form nabla could use.
template <detail::cylinder Kind, int Lower, int Upper>
struct cylindrical_function {
    static constexpr const char* name = Kind == detail::cylinder::j   ? "cyl_bessel_j"
                                        : Kind == detail::cylinder::y ? "cyl_neumann"
                                        : Kind == detail::cylinder::i ? "cyl_bessel_i"
                                                                      : "cyl_bessel_k";
    static constexpr std::size_t arity = 2;
    static constexpr bool real_order = true;
    static constexpr double lower = Lower / 2.0, upper = Upper / 2.0;
    template <class V, class X>
    static constexpr auto value(const V& v, const X& x) {
        if constexpr (Kind == detail::cylinder::j)
            return cyl_bessel_j(v, x);
        else if constexpr (Kind == detail::cylinder::y)
            return cyl_neumann(v, x);
        else if constexpr (Kind == detail::cylinder::i)
            return cyl_bessel_i(v, x);
        else
            return cyl_bessel_k(v, x);
    }
    template <std::size_t I, class Y, class V, class X>
    static constexpr auto partial(const Y&, const V& v, const X& x) {
        static_assert(I == 1, "nabla: the order v of a cylindrical Bessel function f(v, x) is a "
                              "constant; a derivative in v has no closed form nabla computes");
        const auto below = value(v - one, x);
        const auto above = value(v + one, x);
        if constexpr (Lower == 1 && Upper == -1)
            return (below - above) / two;
        else if constexpr (Lower == 1 && Upper == 1)
            return (below + above) / two;
        else
            return -(below + above) / two;
    }
    template <class T, std::size_t K>
    static std::array<T, K + 1> series(T v, const std::array<T, K + 1>& u) {
        return detail::cylinder_layer<cylindrical_function, T, K, K>(v, u)[0];
    }
};
struct cyl_bessel_j_rule : cylindrical_function<detail::cylinder::j, 1, -1> {};
struct cyl_neumann_rule : cylindrical_function<detail::cylinder::y, 1, -1> {};
struct cyl_bessel_i_rule : cylindrical_function<detail::cylinder::i, 1, 1> {};
struct cyl_bessel_k_rule : cylindrical_function<detail::cylinder::k, -1, -1> {};

// No SIMD form: the scalar functions, lane by lane.
NABLA_LANE_BY_LANE(cyl_bessel_j_rule)
NABLA_LANE_BY_LANE(cyl_neumann_rule)
NABLA_LANE_BY_LANE(cyl_bessel_i_rule)
NABLA_LANE_BY_LANE(cyl_bessel_k_rule)

namespace detail {

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

// The spherical Bessel functions j_n(x) and y_n(x) (std::sph_bessel and std::sph_neumann,
// extended to every integer n and real x), and sinc(x) = j_0(x).
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

NABLA_LANE_BY_LANE(sph_bessel_rule)
NABLA_LANE_BY_LANE(sph_neumann_rule)
NABLA_LANE_BY_LANE(sinc_rule)

}  // namespace nabla::rules
