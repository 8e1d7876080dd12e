#pragma once
// The Riemann zeta function of a real argument and its derivatives of every order,
// zeta_derivative(n, s) = d^n zeta / ds^n, the one the other's partial raises (as polygamma does
// for lgamma). Computed here for every real s: libstdc++'s riemann_zeta is off by 7e-10 next to
// the pole at 1 and returns -inf at the trivial zero -200, and has no derivatives.
//
// For s >= -1/4, from the alternating eta(s) = (1 - 2^(1-s)) zeta(s), summed with Borwein's
// acceleration (40 terms: an error below 1e-30 relative to the terms), its derivatives term by
// term; for s < -1/4, from the functional equation zeta(s) = chi(s) zeta(1 - s),
// chi(s) = 2^s pi^(s-1) sin(pi s / 2) Gamma(1 - s), with chi's Taylor coefficients from those of
// log Gamma (polygamma) and of the sine. Edge conventions are in docs/conventions.md.

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <type_traits>
#include <vector>

#include "rule.hpp"
#include "series.hpp"
#include "special.hpp"
#include "trig.hpp"

namespace nabla::rules {

namespace detail {

// Borwein's weights for n = 40 terms: (d_n - d_k) / d_n for k = 0..n-1, with
// d_k = n sum_{i<=k} (n+i-1)! 4^i / ((n-i)! (2i)!).
template <class T>
inline const std::array<T, 40> eta_weights = [] {
    constexpr int n = 40;
    std::array<long double, n + 1> d{};
    long double term = 1.0L, sum = 0.0L;
    for (int i = 0; i <= n; ++i) {
        sum += term;
        d[static_cast<std::size_t>(i)] = sum;
        term *= 4.0L * (n + i) * (n - i) / ((2.0L * i + 1.0L) * (2.0L * i + 2.0L));
    }
    std::array<T, n> w{};
    for (int k = 0; k < n; ++k)
        w[static_cast<std::size_t>(k)] =
            static_cast<T>((d[n] - d[static_cast<std::size_t>(k)]) / d[n]);
    return w;
}();

// The Taylor coefficients zeta^(j)(s) / j!, j = 0..order, of zeta at s >= -1/4 (s != 1), as
// eta(s) / (1 - 2^(1-s)).
template <class T>
std::vector<T> zeta_coefficients_by_eta(T s, int order) {
    const auto size = static_cast<std::size_t>(order) + 1;
    std::vector<T> eta(size, T(0));
    const auto& w = eta_weights<T>;
    for (std::size_t k = 0; k < w.size(); ++k) {
        const T base = T(k + 1);
        const T log_base = std::log(base);
        // (-1)^k w_k (k+1)^-s (-ln(k+1))^j / j!
        T term = (k % 2 == 0 ? w[k] : -w[k]) * std::exp(-s * log_base);
        for (std::size_t j = 0; j < size; ++j) {
            eta[j] += term;
            term *= -log_base / T(j + 1);
        }
    }
    // 1 / (1 - 2^(1-s)) as a series in t at s: u(t) = 1 - 2^(1-s) e^(-t ln 2), and g = 1 / u.
    const T ln2 = std::numbers::ln2_v<T>;
    const T power = std::exp((T(1) - s) * ln2);
    std::vector<T> u(size), g(size);
    u[0] = -std::expm1((T(1) - s) * ln2);
    T scale = -power;
    for (std::size_t i = 1; i < size; ++i) {
        scale *= -ln2 / T(i);
        u[i] = scale;
    }
    g[0] = T(1) / u[0];
    for (std::size_t k = 1; k < size; ++k) {
        T sum = T(0);
        for (std::size_t i = 1; i <= k; ++i)
            sum += u[i] * g[k - i];
        g[k] = -sum / u[0];
    }
    std::vector<T> zeta(size, T(0));
    for (std::size_t k = 0; k < size; ++k)
        for (std::size_t j = 0; j <= k; ++j)
            zeta[k] += eta[j] * g[k - j];
    return zeta;
}

// The same at s < -1/4 from zeta(s) = chi(s) zeta(1 - s): chi = sin(pi s / 2) exp(L(s)) with
// L(s) = s ln(2 pi) - ln pi + lgamma(1 - s), whose derivatives are ln(2 pi) - psi(1 - s) and
// (-1)^j psi^(j-1)(1 - s) for j >= 2.
template <class T>
std::vector<T> zeta_coefficients_by_reflection(T s, int order) {
    const auto size = static_cast<std::size_t>(order) + 1;
    constexpr T pi = std::numbers::pi_v<T>;
    std::vector<T> log_chi(size), exp_part(size), sine(size), reflected(size);
    const T r = T(1) - s;
    log_chi[0] = s * std::log(T(2) * pi) - std::log(pi) + std::lgamma(r);
    if (size > 1)
        log_chi[1] = std::log(T(2) * pi) - polygamma(0, r);
    T factorial = T(1);
    for (std::size_t j = 2; j < size; ++j) {
        factorial *= T(j);
        const T derivative = polygamma(static_cast<int>(j) - 1, r);
        log_chi[j] = (j % 2 == 0 ? derivative : -derivative) / factorial;
    }
    // exp of a series: k e_k = sum_{j=1..k} j l_j e_(k-j).
    exp_part[0] = std::exp(log_chi[0]);
    for (std::size_t k = 1; k < size; ++k) {
        T sum = T(0);
        for (std::size_t j = 1; j <= k; ++j)
            sum += T(j) * log_chi[j] * exp_part[k - j];
        exp_part[k] = sum / T(k);
    }
    // sin(pi (s + t) / 2): (pi/2)^k / k! sin(pi s / 2 + k pi / 2), exact at the trivial zeros.
    T scale = T(1);
    for (std::size_t k = 0; k < size; ++k) {
        if (k > 0)
            scale *= pi / T(2) / T(k);
        sine[k] = scale * sin_pi(s / T(2) + T(k) / T(2));
    }
    // zeta(1 - s - t): (-1)^k zeta^(k)(1 - s) / k!.
    const std::vector<T> at_reflection = zeta_coefficients_by_eta(r, order);
    for (std::size_t k = 0; k < size; ++k)
        reflected[k] = k % 2 == 0 ? at_reflection[k] : -at_reflection[k];
    std::vector<T> chi(size, T(0)), zeta(size, T(0));
    for (std::size_t k = 0; k < size; ++k)
        for (std::size_t j = 0; j <= k; ++j)
            chi[k] += sine[j] * exp_part[k - j];
    for (std::size_t k = 0; k < size; ++k)
        for (std::size_t j = 0; j <= k; ++j)
            zeta[k] += chi[j] * reflected[k - j];
    return zeta;
}

// zeta^(n)(s) for every real s and integer n >= 0 (NaN for n < 0). At the pole s = 1: +inf for
// n = 0 (as mpmath), -inf for odd n (the limit from both sides, -n! / (s-1)^(n+1)), NaN for even
// n >= 2 (the two sides differ in sign). zeta(+inf) = 1 with derivatives 0; NaN at -inf.
template <class T>
T zeta_derivative(int n, T s) {
    constexpr T nan = std::numeric_limits<T>::quiet_NaN();
    constexpr T inf = std::numeric_limits<T>::infinity();
    if (n < 0 || s != s || s == -inf)
        return nan;
    if (s == inf)
        return n == 0 ? T(1) : T(0);
    if (s == T(1))
        return n == 0 ? inf : (n % 2 == 1 ? -inf : nan);
    // (The functional equation loses digits next to 0, where zeta(1 - s) has its pole; eta's
    // sum is still exact to about 1e-15 down to -1/4.)
    const std::vector<T> c =
        s >= T(-0.25) ? zeta_coefficients_by_eta(s, n) : zeta_coefficients_by_reflection(s, n);
    T factorial = T(1);
    for (int k = 2; k <= n; ++k)
        factorial *= T(k);
    return c[static_cast<std::size_t>(n)] * factorial;
}

}  // namespace detail

// zeta(s) and its derivatives zeta_derivative(n, s) for plain numbers.
template <Number X>
requires std::is_arithmetic_v<X>
auto riemann_zeta(const X& s) {
    return detail::zeta_derivative(0, static_cast<detail::real_t<X>>(s));
}
template <Number N, Number X>
requires(std::is_arithmetic_v<N>&& std::is_arithmetic_v<X>) auto zeta_derivative(const N& n,
                                                                                 const X& s) {
    return detail::zeta_derivative(detail::index_of(n), static_cast<detail::real_t<X>>(s));
}

// zeta_derivative(n, s) of a constant integer order n: its derivative raises the order.
struct zeta_derivative_rule {
    static constexpr const char* name = "zeta_derivative";
    static constexpr std::size_t arity = 2;
    template <class N, class X>
    static constexpr auto value(const N& n, const X& s) {
        return zeta_derivative(n, s);
    }
    template <std::size_t I, class Y, class N, class X>
    static constexpr auto partial(const Y&, const N& n, const X& s) {
        static_assert(I == 1, "nabla: the order n of zeta_derivative(n, s) is an integer constant "
                              "and has no derivative");
        return zeta_derivative(n + one, s);
    }
    // y' = zeta_derivative(n + 1, u) u', the derivative series of order K-1 by the same rule.
    template <class T, std::size_t K>
    static std::array<T, K + 1> series(int n, const std::array<T, K + 1>& u) {
        const T y = value(n, u[0]);
        if constexpr (K == 0)
            return {y};
        else
            return series::integrate(
                y, u, zeta_derivative_rule::series<T, K - 1>(n + 1, series::truncate<K - 1>(u)));
    }
};

// riemann_zeta(s) = zeta_derivative(0, s).
struct riemann_zeta_rule {
    static constexpr const char* name = "riemann_zeta";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& s) {
        return riemann_zeta(s);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& s) {
        return zeta_derivative(detail::constant_index<1>(s), s);
    }
    template <class T, std::size_t K>
    static std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        return zeta_derivative_rule::series<T, K>(0, u);
    }
};

// No SIMD form: the scalar functions, lane by lane.
NABLA_LANE_BY_LANE(riemann_zeta_rule)
NABLA_LANE_BY_LANE(zeta_derivative_rule)

}  // namespace nabla::rules
