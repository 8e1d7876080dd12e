#pragma once
// The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b).
//
// Its derivatives of every order come from an algorithm run on truncated Taylor series
// (partial_of.hpp). The closed form dB/db = B (psi(b) - psi(a + b)) cancels where a is small:
// psi(b) - psi(a + b) is about -a psi'(b), so dB/db loses log10(1 / a) digits, and a second
// derivative, a difference of terms of size 1/a whose sum is of size 1, loses all of them at
// a = 1e-8. Near the pole at a = 0 (and at b = 0) the algorithm uses
//   B(a, b) = 1/a + 1/b + (a + b) K exprel(a b K),
//   K(a, b) = (log Gamma(1 + a) + log Gamma(1 + b) - log Gamma(1 + a + b)) / (a b),
// with exprel(z) = (e^z - 1) / z: the poles are exact, and K and exprel are regular there, with
// partials from series that do not cancel (K's from the zeta values psi^(n)(1) / n!, or from the
// polygamma functions at 1 + b). Near the poles at -1, -2, ... the recurrence
// B(a, b) = B(a + 1, b) (a + b) / a brings them to 0. Elsewhere, B = B(a0, b0) exp(log-gamma
// differences).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <optional>
#include <type_traits>
#include <vector>

#include "../concepts.hpp"
#include "partial_of.hpp"
#include "rule.hpp"
#include "series_number.hpp"
#include "special.hpp"

namespace nabla::rules {

namespace detail {

// The sum of the orders of a series' levels: the highest derivative its coefficients hold.
template <class N>
std::size_t total_order(const N& x) {
    if constexpr (std::is_arithmetic_v<N>)
        return 0;
    else
        return x.c.size() - 1 + total_order(x.c[0]);
}

// x without its constant term (a series), and n! as a plain number.
template <class N>
N variation(N x) {
    using T = std::remove_cvref_t<decltype(x.c[0])>;
    x.c[0] = T(0);
    return x;
}
template <class T>
T factorial_of(std::size_t n) {
    T f = T(1);
    for (std::size_t k = 2; k <= n; ++k)
        f *= T(k);
    return f;
}

// f(x) on a series x, from f's derivatives d[k] = f^(k)(x0) at x's plain value x0:
// f(x) = sum_k f^(k)(c) (x - c)^k / k! with c the constant term of x, whose f^(k)(c) are
// themselves series of a lower level (from d shifted by k).
template <class N, class T>
N compose(const std::vector<T>& d, std::size_t shift, const N& x) {
    if constexpr (std::is_arithmetic_v<N>) {
        return N(d[shift]);
    } else {
        using C = std::remove_cvref_t<decltype(x.c[0])>;
        const N delta = variation(x);
        N r = N(compose(d, shift, x.c[0]));
        N power = N(T(1));
        for (std::size_t k = 1; k < x.c.size(); ++k) {
            power = power * delta;
            r = r + N(compose(d, shift + k, x.c[0]) * C(T(1) / factorial_of<T>(k))) * power;
        }
        return r;
    }
}

// The partials f_pq = d^(p+q) f / da^p db^q at a point, p + q <= order.
template <class T>
struct partial_table {
    std::size_t order = 0;
    std::vector<T> v;
    explicit partial_table(std::size_t n) : order(n), v((n + 1) * (n + 1), T(0)) {}
    T& operator()(std::size_t p, std::size_t q) { return v[p * (order + 1) + q]; }
    T operator()(std::size_t p, std::size_t q) const {
        return p + q <= order ? v[p * (order + 1) + q] : std::numeric_limits<T>::quiet_NaN();
    }
};

// f(s, x) on series s and x, from the table of f's partials at their plain values, as above in
// two variables.
template <class N, class T>
N compose(const partial_table<T>& f, std::size_t p0, std::size_t q0, const N& s, const N& x) {
    if constexpr (std::is_arithmetic_v<N>) {
        return N(f(p0, q0));
    } else {
        using C = std::remove_cvref_t<decltype(s.c[0])>;
        const std::size_t n = std::max(s.c.size(), x.c.size()) - 1;
        const N ds = variation(s), dx = variation(x);
        N r = N(T(0));
        N sp = N(T(1));
        for (std::size_t p = 0; p <= n; ++p) {
            N xq = N(T(1));
            for (std::size_t q = 0; p + q <= n; ++q) {
                const T scale = T(1) / (factorial_of<T>(p) * factorial_of<T>(q));
                r = r + N(compose(f, p0 + p, q0 + q, s.c[0], x.c[0]) * C(scale)) * (sp * xq);
                xq = xq * dx;
            }
            sp = sp * ds;
        }
        return r;
    }
}

// zeta(k) for integers k >= 2 (to 21 digits; past 24 from its first eight terms).
template <class T>
T zeta_of_integer(std::size_t k) {
    static constexpr std::array<double, 23> low{
        1.64493406684822643647, 1.2020569031595942854,  1.08232323371113819152,
        1.03692775514336992633, 1.01734306198444913971, 1.00834927738192282684,
        1.00407735619794433938, 1.00200839282608221442, 1.00099457512781808534,
        1.00049418860411946456, 1.0002460865533080483,  1.00012271334757848915,
        1.00006124813505870483, 1.00003058823630702049, 1.00001528225940865187,
        1.00000763719763789976, 1.00000381729326499984, 1.00000190821271655394,
        1.0000009539620338728,  1.00000047693298678781, 1.00000023845050272773,
        1.00000011921992596531, 1.00000005960818905126};
    if (k - 2 < low.size())
        return T(low[k - 2]);
    T sum = T(0);
    for (int n = 8; n >= 1; --n)
        sum += std::pow(T(n), -T(k));
    return sum;
}

// psi^(n)(1) = (-1)^(n+1) n! zeta(n + 1), psi(1) = -gamma.
template <class T>
T polygamma_at_one(std::size_t n) {
    if (n == 0)
        return -std::numbers::egamma_v<T>;
    const T f = factorial_of<T>(n) * zeta_of_integer<T>(n + 1);
    return n % 2 == 1 ? f : -f;
}

// The partials of K(a, b) (above) to the given order at |a| <= 1/8, |b| <= 1/2, from its double
// series -sum_{i,j} psi^(i+j+1)(1) a^j b^i / ((j+1)! (i+1)!), which converges for |a| + |b| < 1
// (the pole of log Gamma(1 + a + b) at a + b = -1), here at least as fast as (5/8)^degree.
template <class T>
partial_table<T> beta_core_by_zeta(T a, T b, std::size_t order) {
    partial_table<T> k(order);
    constexpr std::size_t most = 160;
    std::array<T, most + 1> pa{}, pb{};
    pa[0] = pb[0] = T(1);
    for (std::size_t i = 1; i <= most; ++i) {
        pa[i] = pa[i - 1] * a;
        pb[i] = pb[i - 1] * b;
    }
    // j! / (j - p)!
    const auto falling = [](std::size_t j, std::size_t p) {
        T f = T(1);
        for (std::size_t t = 0; t < p; ++t)
            f *= T(j - t);
        return f;
    };
    int quiet = 0;
    for (std::size_t degree = 0; degree <= most && quiet < 2; ++degree) {
        // (-1)^d zeta(d + 2) (d + 1)! / ((i + 1)! (j + 1)!) with psi^(d+1)(1) / (d + 1)! expanded.
        const T leading = (degree % 2 == 0 ? T(1) : T(-1)) * zeta_of_integer<T>(degree + 2) *
                          factorial_of<T>(degree + 1);
        T largest_term = T(0), largest_sum = T(0);
        for (std::size_t j = 0; j <= degree; ++j) {
            const std::size_t i = degree - j;
            const T c = leading / (factorial_of<T>(i + 1) * factorial_of<T>(j + 1));
            for (std::size_t p = 0; p <= std::min(j, order); ++p)
                for (std::size_t q = 0; q <= i && p + q <= order; ++q) {
                    const T term = -c * falling(j, p) * falling(i, q) * pa[j - p] * pb[i - q];
                    k(p, q) += term;
                    largest_term = std::max(largest_term, std::abs(term));
                }
        }
        for (const T& x : k.v)
            largest_sum = std::max(largest_sum, std::abs(x));
        quiet = degree > order && largest_term <= std::ldexp(largest_sum, -60) ? quiet + 1 : 0;
    }
    return k;
}

// The partials of K(a, b) at |a| <= 1/8 and b > 1/2: K = P / b with
// P(a, b) = sum_j a^j (psi^(j)(1) - psi^(j)(1 + b)) / (j + 1)!, a series in a whose ratio is at
// most |a|, and the b-derivatives of P / b by Leibniz's rule (b is not small).
template <class T>
partial_table<T> beta_core_by_polygamma(T a, T b, std::size_t order) {
    partial_table<T> k(order);
    // (Forty terms: |a| <= 1/8, and the p-th derivative's binomial growth; polygamma's orders
    // end at 62.)
    const std::size_t terms = std::max<std::size_t>(
        order + 1, std::min<std::size_t>(40, 62 - std::min<std::size_t>(order, 62)));
    std::vector<T> at_b(terms + order + 1), at_one(terms + 1);
    for (std::size_t n = 0; n < at_b.size(); ++n)
        at_b[n] = polygamma(static_cast<int>(n), T(1) + b);
    for (std::size_t n = 0; n < at_one.size(); ++n)
        at_one[n] = polygamma_at_one<T>(n);
    for (std::size_t p = 0; p <= order; ++p)
        for (std::size_t q = 0; p + q <= order; ++q) {
            T sum = T(0);
            T binomial = T(1);
            for (std::size_t m = 0; m <= q; ++m) {
                // d^p/da^p d^m/db^m P
                T dp = T(0);
                for (std::size_t j = terms; j-- > p;) {
                    const T bracket = (m == 0 ? at_one[j] : T(0)) - at_b[j + m];
                    dp += std::pow(a, T(j - p)) * bracket / (factorial_of<T>(j - p) * T(j + 1));
                }
                // d^(q-m)/db^(q-m) (1 / b)
                const std::size_t r = q - m;
                const T inverse =
                    (r % 2 == 0 ? T(1) : T(-1)) * factorial_of<T>(r) / std::pow(b, T(r + 1));
                sum += binomial * dp * inverse;
                binomial = binomial * T(q - m) / T(m + 1);
            }
            k(p, q) = sum;
        }
    return k;
}

// exprel(z) = (e^z - 1) / z = int_0^1 e^(t z) dt and its derivatives int_0^1 t^k e^(t z) dt, from
// the series sum_i z^i / (i! (k + i + 1)), for |z| <= 2.
template <class T>
std::vector<T> exprel_derivatives(T z, std::size_t order) {
    std::vector<T> d(order + 1, T(0));
    for (std::size_t k = 0; k <= order; ++k) {
        T power = T(1);
        for (std::size_t i = 0; i < 60; ++i) {
            d[k] += power / T(k + i + 1);
            power *= z / T(i + 1);
            if (std::abs(power) < T(0x1p-64))
                break;
        }
    }
    return d;
}

// Whether x is 0, -1, -2, ...
template <class T>
bool nonpositive_integer(const T& x) {
    return x <= T(0) && x == std::floor(x);
}

// 1 / x for a series x.
template <class N>
N reciprocal(const N& x) {
    using T = plain_t<N>;
    return N(T(1)) / x;
}

// The type the tables of derivatives are computed in: at least double (a float's factorials and
// high polygamma orders overflow).
template <class T>
using wide_t = std::common_type_t<T, double>;

// B near its pole at a = 0 (|a| <= 1/8 <= |b| or both small, b > -1/2), as above; nullopt where
// exprel's argument a b K is too large for its series (b beyond about 1e6). K's double series
// where |b| <= 1/4 (|a| + |b| <= 3/8: its terms fall like (3/8)^degree), its series in a beyond.
template <class N>
std::optional<N> beta_near_pole(const N& a, const N& b) {
    using T = plain_t<N>;
    using W = wide_t<T>;
    const W a0 = plain(a), b0 = plain(b);
    const std::size_t order = total_order(a) > total_order(b) ? total_order(a) : total_order(b);
    const partial_table<W> k = std::abs(b0) <= W(0.25) ? beta_core_by_zeta(a0, b0, order)
                                                       : beta_core_by_polygamma(a0, b0, order);
    const N core = compose(k, 0, 0, a, b);
    const N z = a * b * core;
    if (!(std::abs(plain(z)) <= T(2)))
        return std::nullopt;
    if constexpr (std::is_arithmetic_v<N>)
        return N(W(1) / a0 + W(1) / b0 + (a0 + b0) * k(0, 0) * exprel_derivatives(W(z), 0)[0]);
    else
        return reciprocal(a) + reciprocal(b) +
               (a + b) * core * compose(exprel_derivatives(W(plain(z)), order), 0, z);
}

// log |Gamma(x)| on a series, from lgamma and the polygamma functions at x's plain value.
template <class N>
N log_gamma_series(const N& x) {
    using W = wide_t<plain_t<N>>;
    const W x0 = plain(x);
    std::vector<W> d(total_order(x) + 1);
    d[0] = std::lgamma(x0);
    for (std::size_t n = 1; n < d.size(); ++n)
        d[n] = polygamma(static_cast<int>(n - 1), x0);
    return compose(d, 0, x);
}

// log Gamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) for x >= 10, from Stirling's series.
template <class T>
T stirling_remainder(T x) {
    constexpr std::array<double, 7> bernoulli{1.0 / 6,  -1.0 / 30,     1.0 / 42, -1.0 / 30,
                                              5.0 / 66, -691.0 / 2730, 7.0 / 6};
    const T inverse_square = T(1) / (x * x);
    T power = T(1) / x, sum = T(0);
    for (std::size_t k = 1; k <= bernoulli.size(); ++k) {
        sum += T(bernoulli[k - 1]) / T(2 * k * (2 * k - 1)) * power;
        power *= inverse_square;
    }
    return sum;
}

// B(a, b) to a few units in the last place times its condition number, as std::beta at the poles
// (libstdc++'s std::beta has the wrong sign for a or b in (-1, 0) and loses digits to
// log Gamma's size for large operands: 1e-10 relative at (1e-3, 1e6)): the near-pole form next
// to 0, the gamma functions where they are finite, and Stirling's series for the logarithm past
// that, its large terms as (a - 1/2) log1p(b / a).
// The sign of Gamma(x) away from its poles.
template <class T>
T gamma_sign(T x) {
    return x > T(0) || static_cast<long long>(std::floor(x)) % 2 == 0 ? T(1) : T(-1);
}

template <class T>
T beta_value(T a, T b) {
    if constexpr (!std::is_same_v<T, wide_t<T>>) {
        return static_cast<T>(beta_value(wide_t<T>(a), wide_t<T>(b)));
    } else {
        if (!std::isfinite(a) || !std::isfinite(b) || nonpositive_integer(a) ||
            nonpositive_integer(b) || nonpositive_integer(a + b))
            return std::beta(a, b);
        const T s = std::abs(a) <= std::abs(b) ? a : b, l = std::abs(a) <= std::abs(b) ? b : a;
        if (std::abs(s) <= T(0.125) && l > T(-0.5)) {
            if (auto near = beta_near_pole(s, l))
                return *near;
        }
        if (std::abs(l) < T(160) && std::abs(a + b) < T(160))
            return std::tgamma(s) / std::tgamma(s + l) * std::tgamma(l);
        if (s > T(0) && l > T(0)) {
            constexpr T log_root_two_pi = T(0.91893853320467274178);
            if (s < T(10)) {
                // Gamma(s) Gamma(l) / Gamma(l + s), Stirling's series for the ratio's logarithm.
                const T log_ratio = -(l - T(0.5)) * std::log1p(s / l) - s * std::log(l + s) + s +
                                    stirling_remainder(l) - stirling_remainder(l + s);
                return std::tgamma(s) * std::exp(log_ratio);
            }
            const T log_beta = log_root_two_pi - (s - T(0.5)) * std::log1p(l / s) -
                               (l - T(0.5)) * std::log1p(s / l) - T(0.5) * std::log(s + l) +
                               stirling_remainder(s) + stirling_remainder(l) -
                               stirling_remainder(s + l);
            return std::exp(log_beta);
        }
        // (std::beta's exp of log-gamma differences is |B|.)
        return gamma_sign(a) * gamma_sign(b) * gamma_sign(a + b) * std::abs(std::beta(a, b));
    }
}

}  // namespace detail

template <Number A, Number B>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>) auto beta(const A& a, const B& b) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<B>>;
    return detail::beta_value(T(a), T(b));
}

// The beta function: value from detail::beta_value, derivatives from beta_rule::algorithm on series
// (see the top of this file).
struct beta_rule : by_algorithm_rule<beta_rule> {
    static constexpr const char* name = "beta";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        return beta(a, b);
    }
    template <class N>
    static N algorithm(const N& a, const N& b) {
        using T = detail::plain_t<N>;
        using detail::plain;
        const T a0 = plain(a), b0 = plain(b);
        // B is symmetric: the operand nearer 0 first.
        const bool swapped = std::abs(b0) < std::abs(a0);
        const N& small = swapped ? b : a;
        const N& other = swapped ? a : b;
        if (std::abs(plain(small)) <= T(0.125) && plain(other) > T(-0.5)) {
            if (auto near = detail::beta_near_pole(small, other))
                return *near;
        }
        // Near a pole at -m (m = 1, 2, ...): B(x, y) = B(x + m, y) prod_{j < m} (x + j + y) /
        // (x + j), the first factor from the form near 0, the others regular.
        const auto pole_at = [](T x) {
            const T m = std::round(-x);
            return x < T(-0.5) && std::abs(x + m) <= T(0.125) && m < T(64) ? static_cast<int>(m)
                                                                           : 0;
        };
        for (const bool first : {true, false}) {
            const N& x = first ? a : b;
            const N& y = first ? b : a;
            const int m = pole_at(plain(x));
            if (m == 0 || !(plain(y) > T(-0.5)))
                continue;
            if (auto near = detail::beta_near_pole(N(x + T(m)), y)) {
                N r = *near;
                for (int j = 0; j < m; ++j)
                    r = r * ((x + T(j) + y) / (x + T(j)));
                return r;
            }
        }
        // B(a0, b0) exp(L - L0), L = log|Gamma(a)| + log|Gamma(b)| - log|Gamma(a + b)|: the
        // exponential's derivatives at L0 are all B(a0, b0).
        const N log_ratio = detail::log_gamma_series(a) + detail::log_gamma_series(b) -
                            detail::log_gamma_series(N(a + b));
        const std::vector<T> at(detail::total_order(log_ratio) + 1, detail::beta_value(a0, b0));
        return detail::compose(at, 0, log_ratio);
    }
    // The series exist away from the poles of Gamma(a), Gamma(b) and Gamma(a + b).
    template <class T>
    static bool inside(const T& a, const T& b) {
        return std::isfinite(a) && std::isfinite(b) && !detail::nonpositive_integer(a) &&
               !detail::nonpositive_integer(b) && !detail::nonpositive_integer(a + b);
    }
    template <std::size_t... O, class T>
    static std::optional<T> known(const T&, const T&) {
        return std::nullopt;
    }
};

NABLA_LANE_BY_LANE(beta_rule)

}  // namespace nabla::rules
