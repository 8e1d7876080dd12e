#pragma once
// nabla::taylor<T, K>: a truncated Taylor series of order K, for derivatives of any order in one
// evaluation.
//
// A taylor<T, K> holds the normalised coefficients x_0 ... x_K of x(t) = sum_k x_k t^k around the
// point of evaluation; x_k = x^(k)(0) / k!. Every operation maps the coefficients of its operands
// to those of its result in O(K^2) with the classical recurrences (Griewank and Walther,
// "Evaluating Derivatives", chapter 13), derived from the ODE the function satisfies:
//
//   y = f(u),  y' = p * u'      =>   k y_k = sum_{j=1..k} j u_j p_{k-j}
//
// where p, the derivative of f, is either known in closed form from y (exp: p = y; tan: 1 + y^2;
// pow: r y / u) or computed as a series of order K-1 from the rule table's own partial (atan: 1 /
// (1 + u^2), erf: 2/sqrt(pi) exp(-u^2), lgamma: polygamma(0, u)), so the calculus of every
// function still comes from the rules. Values (the coefficients of order 0) are the rules' values.
//
// Division by a series whose constant term is 0 is a domain error (std::domain_error), and so are
// the other functions whose series do not exist at the point (sqrt, log, a real power of 0).

#include <array>
#include <cmath>
#include <compare>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "../concepts.hpp"
#include "../config.hpp"
#include "../core/evaluate.hpp"
#include "../core/functions.hpp"
#include "../rules.hpp"

namespace nabla {

template <class T, std::size_t K>
struct taylor {
    using value_type = T;
    static constexpr std::size_t order = K;

    std::array<T, K + 1> c{};

    constexpr taylor() = default;
    // A constant: all coefficients but the first are zero.
    template <class U>
    requires(std::is_convertible_v<U, T> && !std::is_same_v<std::remove_cvref_t<U>, taylor> &&
             !Expression<U>) constexpr taylor(const U& v) {
        c[0] = static_cast<T>(v);
    }

    template <class U>
    requires std::is_arithmetic_v<U>
    constexpr explicit operator U() const { return static_cast<U>(c[0]); }

    constexpr taylor& operator+=(const taylor& o) { return *this = *this + o; }
    constexpr taylor& operator-=(const taylor& o) { return *this = *this - o; }
    constexpr taylor& operator*=(const taylor& o) { return *this = *this * o; }
    constexpr taylor& operator/=(const taylor& o) { return *this = *this / o; }
};

template <class T, std::size_t K>
inline constexpr bool is_number_v<taylor<T, K>> = true;

template <class T>
inline constexpr bool is_taylor_v = false;
template <class T, std::size_t K>
inline constexpr bool is_taylor_v<taylor<T, K>> = true;

namespace detail {

template <class U, class T>
concept ConstantForTaylor = Number<U> && !is_taylor_v<std::remove_cvref_t<U>> &&
                            std::is_convertible_v<U, T> && !Expression<U>;

// 1/k for k = 0..K (1/0 unused): the recurrences multiply by it instead of dividing.
template <class T, std::size_t K>
inline constexpr std::array<T, K + 1> reciprocals = [] {
    std::array<T, K + 1> r{};
    for (std::size_t k = 1; k <= K; ++k)
        r[k] = T(1) / T(k);
    return r;
}();

template <std::size_t M, class T, std::size_t K>
constexpr taylor<T, M> truncate(const taylor<T, K>& x) {
    taylor<T, M> r;
    for (std::size_t k = 0; k <= M; ++k)
        r.c[k] = x.c[k];
    return r;
}

template <class T, std::size_t K>
[[noreturn]] void taylor_domain_error(const char* what) {
    throw std::domain_error(what);
}

// The chain-rule sum of every ODE recurrence: sum_{j=1..k} j u_j w_{k-j}, with w the
// coefficients of the derivative factor (any indexable sequence).
template <class T, std::size_t K, class W>
constexpr T chain_sum(const taylor<T, K>& u, const W& w, std::size_t k) {
    T sum = T(0);
    for (std::size_t j = 1; j <= k; ++j)
        sum += T(j) * u.c[j] * w[k - j];
    return sum;
}

// y_0 = value, k y_k = sum_{j=1..k} j u_j p_{k-j}: the series of a function whose derivative
// series p (order K-1) is known.
template <class T, std::size_t K, std::size_t P>
constexpr taylor<T, K> integrate(const T& value, const taylor<T, K>& u, const taylor<T, P>& p) {
    taylor<T, K> y;
    y.c[0] = value;
    for (std::size_t k = 1; k <= K; ++k) {
        const T sum = chain_sum(u, p.c, k);
        y.c[k] = sum * reciprocals<T, K>[k];
    }
    return y;
}

// The series of a unary rule whose partial does not depend on its own value: the partial is
// evaluated as a series of order K-1 (the rules stay the one source of derivatives).
template <class Rule, class T, std::size_t K>
constexpr taylor<T, K> by_partial(const taylor<T, K>& u) {
    const T value = Rule::value(u.c[0]);
    if constexpr (K == 0) {
        return taylor<T, 0>(value);
    } else {
        const auto lower = truncate<K - 1>(u);
        const auto p =
            to_number<taylor<T, K - 1>>(Rule::template partial<0>(taylor<T, K - 1>(value), lower));
        return integrate(value, u, p);
    }
}

// y' = q * y * u' (exp: q = 1, exp2: q = ln 2, tgamma: q = digamma(u)), q of order K-1.
template <class T, std::size_t K, std::size_t P>
constexpr taylor<T, K>
exponential_like(const T& value, const taylor<T, K>& u, const taylor<T, P>& q) {
    taylor<T, K> y;
    y.c[0] = value;
    std::array<T, K + 1> w{};  // w = q * y, known up to the order of y that is known
    for (std::size_t k = 1; k <= K; ++k) {
        T wk = T(0);
        for (std::size_t i = 0; i <= k - 1; ++i)
            wk += q.c[k - 1 - i] * y.c[i];
        w[k - 1] = wk;
        const T sum = chain_sum(u, w, k);
        y.c[k] = sum * reciprocals<T, K>[k];
    }
    return y;
}

// u y' = r y u' for y = u^r (r a constant): y_k = 1/(k u_0) sum_{j=0..k-1} (r (k - j) - j) u_{k-j}
// y_j.
template <class T, std::size_t K>
constexpr taylor<T, K> power_series(const T& value, const taylor<T, K>& u, const T& r) {
    taylor<T, K> y;
    y.c[0] = value;
    if constexpr (K > 0) {
        if (u.c[0] == T(0))
            taylor_domain_error<T, K>("nabla::taylor: a real power of a series that is 0 at the "
                                      "point has no Taylor series there");
        const T inverse = T(1) / u.c[0];
        for (std::size_t k = 1; k <= K; ++k) {
            T sum = T(0);
            for (std::size_t j = 0; j < k; ++j)
                sum += (r * T(k - j) - T(j)) * u.c[k - j] * y.c[j];
            y.c[k] = sum * reciprocals<T, K>[k] * inverse;
        }
    }
    return y;
}

}  // namespace detail

// Arithmetic: coefficient-wise sums, the Cauchy product, and the division recurrence
// q_k = (a_k - sum_{j=0..k-1} q_j b_{k-j}) / b_0.
template <class T, std::size_t K>
constexpr taylor<T, K> operator+(const taylor<T, K>& a, const taylor<T, K>& b) {
    taylor<T, K> r;
    for (std::size_t k = 0; k <= K; ++k)
        r.c[k] = a.c[k] + b.c[k];
    return r;
}
template <class T, std::size_t K>
constexpr taylor<T, K> operator-(const taylor<T, K>& a, const taylor<T, K>& b) {
    taylor<T, K> r;
    for (std::size_t k = 0; k <= K; ++k)
        r.c[k] = a.c[k] - b.c[k];
    return r;
}
template <class T, std::size_t K>
constexpr taylor<T, K> operator-(const taylor<T, K>& a) {
    taylor<T, K> r;
    for (std::size_t k = 0; k <= K; ++k)
        r.c[k] = -a.c[k];
    return r;
}
template <class T, std::size_t K>
constexpr taylor<T, K> operator+(const taylor<T, K>& a) {
    return a;
}
template <class T, std::size_t K>
constexpr taylor<T, K> operator*(const taylor<T, K>& a, const taylor<T, K>& b) {
    taylor<T, K> r;
    if (&a == &b) {
        // A square: the Cauchy product is symmetric, so half of it suffices.
        for (std::size_t k = 0; k <= K; ++k) {
            T sum = T(0);
            for (std::size_t j = 0; 2 * j < k; ++j)
                sum += a.c[j] * a.c[k - j];
            sum += sum;
            if (k % 2 == 0)
                sum += a.c[k / 2] * a.c[k / 2];
            r.c[k] = sum;
        }
        return r;
    }
    for (std::size_t k = 0; k <= K; ++k) {
        T sum = T(0);
        for (std::size_t j = 0; j <= k; ++j)
            sum += a.c[j] * b.c[k - j];
        r.c[k] = sum;
    }
    return r;
}
template <class T, std::size_t K>
constexpr taylor<T, K> operator/(const taylor<T, K>& a, const taylor<T, K>& b) {
    if (b.c[0] == T(0))
        detail::taylor_domain_error<T, K>(
            "nabla::taylor: division by a series whose constant term is 0");
    taylor<T, K> q;
    q.c[0] = a.c[0] / b.c[0];
    const T inverse = T(1) / b.c[0];  // one division; the recurrence multiplies
    for (std::size_t k = 1; k <= K; ++k) {
        T sum = a.c[k];
        for (std::size_t j = 0; j < k; ++j)
            sum -= q.c[j] * b.c[k - j];
        q.c[k] = sum * inverse;
    }
    return q;
}

#define NABLA_TAYLOR_MIXED(op)                                                                     \
    template <class T, std::size_t K, detail::ConstantForTaylor<T> U>                              \
    constexpr taylor<T, K> operator op(const taylor<T, K>& a, const U& b) {                        \
        return a op taylor<T, K>(static_cast<T>(b));                                               \
    }                                                                                              \
    template <class T, std::size_t K, detail::ConstantForTaylor<T> U>                              \
    constexpr taylor<T, K> operator op(const U& a, const taylor<T, K>& b) {                        \
        return taylor<T, K>(static_cast<T>(a)) op b;                                               \
    }
NABLA_TAYLOR_MIXED(+)
NABLA_TAYLOR_MIXED(-)
NABLA_TAYLOR_MIXED(/)
#undef NABLA_TAYLOR_MIXED

// A constant factor scales every coefficient (cheaper than the Cauchy product).
template <class T, std::size_t K, detail::ConstantForTaylor<T> U>
constexpr taylor<T, K> operator*(const taylor<T, K>& a, const U& b) {
    taylor<T, K> r;
    for (std::size_t k = 0; k <= K; ++k)
        r.c[k] = a.c[k] * static_cast<T>(b);
    return r;
}
template <class T, std::size_t K, detail::ConstantForTaylor<T> U>
constexpr taylor<T, K> operator*(const U& a, const taylor<T, K>& b) {
    return b * a;
}

// Comparisons compare values (the coefficients of order 0).
template <class T, std::size_t K>
constexpr bool operator==(const taylor<T, K>& a, const taylor<T, K>& b) {
    return a.c[0] == b.c[0];
}
template <class T, std::size_t K, detail::ConstantForTaylor<T> U>
constexpr bool operator==(const taylor<T, K>& a, const U& b) {
    return a.c[0] == static_cast<T>(b);
}
template <class T, std::size_t K>
constexpr auto operator<=>(const taylor<T, K>& a, const taylor<T, K>& b) {
    return a.c[0] <=> b.c[0];
}
template <class T, std::size_t K, detail::ConstantForTaylor<T> U>
constexpr auto operator<=>(const taylor<T, K>& a, const U& b) {
    return a.c[0] <=> static_cast<T>(b);
}

// Functions whose derivative is best written with their own value.
namespace detail {
// y' = c y u' for a constant c (exp: c = 1, exp2: c = ln 2): k y_k = c sum_{j=1..k} j u_j y_{k-j}.
template <class T, std::size_t K>
constexpr taylor<T, K> scaled_exponential(const T& value, const taylor<T, K>& u, const T& c) {
    taylor<T, K> y(value);
    for (std::size_t k = 1; k <= K; ++k) {
        const T sum = chain_sum(u, y.c, k);
        y.c[k] = c * sum * reciprocals<T, K>[k];
    }
    return y;
}
}  // namespace detail

template <class T, std::size_t K>
constexpr taylor<T, K> exp(const taylor<T, K>& u) {
    return detail::scaled_exponential(rules::exp_rule::value(u.c[0]), u, T(1));
}
template <class T, std::size_t K>
constexpr taylor<T, K> exp2(const taylor<T, K>& u) {
    return detail::scaled_exponential(rules::exp2_rule::value(u.c[0]), u, as<T>(nabla::ln2));
}
template <class T, std::size_t K>
constexpr taylor<T, K> expm1(const taylor<T, K>& u) {
    taylor<T, K> y = exp(u);
    y.c[0] = rules::expm1_rule::value(u.c[0]);
    return y;
}
template <class T, std::size_t K>
constexpr taylor<T, K> sqrt(const taylor<T, K>& u) {
    taylor<T, K> y;
    y.c[0] = rules::sqrt_rule::value(u.c[0]);
    if constexpr (K > 0) {
        if (y.c[0] == T(0))
            detail::taylor_domain_error<T, K>(
                "nabla::taylor: sqrt of a series that is 0 at the point has no Taylor series");
        // y^2 = u: y_k = (u_k - sum_{j=1..k-1} y_j y_{k-j}) / (2 y_0)
        const T inverse = T(1) / (T(2) * y.c[0]);
        for (std::size_t k = 1; k <= K; ++k) {
            T sum = u.c[k];
            for (std::size_t j = 1; j < k; ++j)
                sum -= y.c[j] * y.c[k - j];
            y.c[k] = sum * inverse;
        }
    }
    return y;
}
template <class T, std::size_t K>
constexpr taylor<T, K> cbrt(const taylor<T, K>& u) {
    return detail::power_series(rules::cbrt_rule::value(u.c[0]), u, T(1) / T(3));
}
template <class T, std::size_t K>
constexpr taylor<T, K> log(const taylor<T, K>& u) {
    if (u.c[0] == T(0) && K > 0)
        detail::taylor_domain_error<T, K>("nabla::taylor: log of a series that is 0 at the point");
    return detail::by_partial<rules::log_rule>(u);
}
namespace detail {
// y' = (1 + sign y^2) u' (tan: sign = +1, tanh: sign = -1), with w = 1 + sign y^2 built as the
// coefficients of y become known.
template <class T, std::size_t K>
constexpr taylor<T, K> riccati(const T& value, const taylor<T, K>& u, const T& sign) {
    taylor<T, K> y(value);
    std::array<T, K + 1> w{};
    for (std::size_t k = 1; k <= K; ++k) {
        T square = T(0);
        for (std::size_t i = 0; i <= k - 1; ++i)
            square += y.c[i] * y.c[k - 1 - i];
        w[k - 1] = (k == 1 ? T(1) : T(0)) + sign * square;
        const T sum = chain_sum(u, w, k);
        y.c[k] = sum * reciprocals<T, K>[k];
    }
    return y;
}
}  // namespace detail

template <class T, std::size_t K>
constexpr taylor<T, K> tan(const taylor<T, K>& u) {
    return detail::riccati(rules::tan_rule::value(u.c[0]), u, T(1));
}
template <class T, std::size_t K>
constexpr taylor<T, K> tanh(const taylor<T, K>& u) {
    return detail::riccati(rules::tanh_rule::value(u.c[0]), u, T(-1));
}

// sin and cos (sinh and cosh) together: s' = c u', c' = -s u' (c' = s u').
namespace detail {
template <bool Hyperbolic, class T, std::size_t K>
constexpr std::array<taylor<T, K>, 2> sine_cosine(const taylor<T, K>& u) {
    taylor<T, K> s, c;
    s.c[0] = Hyperbolic ? rules::sinh_rule::value(u.c[0]) : rules::sin_rule::value(u.c[0]);
    c.c[0] = Hyperbolic ? rules::cosh_rule::value(u.c[0]) : rules::cos_rule::value(u.c[0]);
    for (std::size_t k = 1; k <= K; ++k) {
        const T ss = chain_sum(u, c.c, k);
        const T cc = chain_sum(u, s.c, k);
        s.c[k] = ss * reciprocals<T, K>[k];
        c.c[k] = (Hyperbolic ? cc : -cc) * reciprocals<T, K>[k];
    }
    return {s, c};
}
}  // namespace detail

template <class T, std::size_t K>
constexpr taylor<T, K> sin(const taylor<T, K>& u) {
    return detail::sine_cosine<false>(u)[0];
}
template <class T, std::size_t K>
constexpr taylor<T, K> cos(const taylor<T, K>& u) {
    return detail::sine_cosine<false>(u)[1];
}
template <class T, std::size_t K>
constexpr taylor<T, K> sinh(const taylor<T, K>& u) {
    return detail::sine_cosine<true>(u)[0];
}
template <class T, std::size_t K>
constexpr taylor<T, K> cosh(const taylor<T, K>& u) {
    return detail::sine_cosine<true>(u)[1];
}

template <class T, std::size_t K, class I>
requires std::is_integral_v<I>
constexpr taylor<T, K> polygamma(I n, const taylor<T, K>& u) {
    const T value = rules::polygamma_rule::value(n, u.c[0]);
    if constexpr (K == 0) {
        return taylor<T, 0>(value);
    } else {
        // d/du polygamma(n, u) = polygamma(n + 1, u), as a series of order K-1.
        return detail::integrate(value, u, polygamma(n + 1, detail::truncate<K - 1>(u)));
    }
}
template <class T, std::size_t K>
constexpr taylor<T, K> polygamma(const taylor<T, K>& n, const taylor<T, K>& u) {
    return polygamma(static_cast<int>(n.c[0]), u);
}
template <class T, std::size_t K>
constexpr taylor<T, K> digamma(const taylor<T, K>& u) {
    return polygamma(0, u);
}
template <class T, std::size_t K>
constexpr taylor<T, K> tgamma(const taylor<T, K>& u) {
    // y' = y digamma(u) u'
    if constexpr (K == 0)
        return taylor<T, 0>(rules::tgamma_rule::value(u.c[0]));
    else
        return detail::exponential_like(rules::tgamma_rule::value(u.c[0]), u,
                                        digamma(detail::truncate<K - 1>(u)));
}

// Functions whose series follow from their rule's partial.
#define NABLA_TAYLOR_BY_PARTIAL(function, rule)                                                    \
    template <class T, std::size_t K>                                                              \
    constexpr taylor<T, K> function(const taylor<T, K>& u) {                                       \
        return detail::by_partial<rules::rule>(u);                                                 \
    }
NABLA_TAYLOR_BY_PARTIAL(log2, log2_rule)
NABLA_TAYLOR_BY_PARTIAL(log10, log10_rule)
NABLA_TAYLOR_BY_PARTIAL(log1p, log1p_rule)
NABLA_TAYLOR_BY_PARTIAL(asin, asin_rule)
NABLA_TAYLOR_BY_PARTIAL(acos, acos_rule)
NABLA_TAYLOR_BY_PARTIAL(atan, atan_rule)
NABLA_TAYLOR_BY_PARTIAL(asinh, asinh_rule)
NABLA_TAYLOR_BY_PARTIAL(acosh, acosh_rule)
NABLA_TAYLOR_BY_PARTIAL(atanh, atanh_rule)
NABLA_TAYLOR_BY_PARTIAL(erf, erf_rule)
NABLA_TAYLOR_BY_PARTIAL(erfc, erfc_rule)
NABLA_TAYLOR_BY_PARTIAL(lgamma, lgamma_rule)
NABLA_TAYLOR_BY_PARTIAL(abs, abs_rule)
NABLA_TAYLOR_BY_PARTIAL(fabs, abs_rule)
NABLA_TAYLOR_BY_PARTIAL(sign, sign_rule)
NABLA_TAYLOR_BY_PARTIAL(floor, floor_rule)
NABLA_TAYLOR_BY_PARTIAL(ceil, ceil_rule)
NABLA_TAYLOR_BY_PARTIAL(round, round_rule)
NABLA_TAYLOR_BY_PARTIAL(trunc, trunc_rule)
#undef NABLA_TAYLOR_BY_PARTIAL

// Powers: an integer exponent multiplies (exact at a zero base), a real one uses the power
// recurrence, a series exponent exp(b log a).
template <class T, std::size_t K, class I>
requires std::is_integral_v<I>
constexpr taylor<T, K> pow(const taylor<T, K>& a, I n) {
    if (n < 0)
        return taylor<T, K>(T(1)) / pow(a, -n);
    taylor<T, K> result(T(1)), base = a;
    for (auto e = n; e > 0; e /= 2) {
        if (e % 2 == 1)
            result = result * base;
        if (e > 1)
            base = base * base;
    }
    return result;
}
template <class T, std::size_t K, detail::ConstantForTaylor<T> U>
requires(!std::is_integral_v<U>) constexpr taylor<T, K> pow(const taylor<T, K>& a, const U& r) {
    return detail::power_series(rules::pow_rule::value(a.c[0], static_cast<T>(r)), a,
                                static_cast<T>(r));
}
template <class T, std::size_t K>
constexpr taylor<T, K> pow(const taylor<T, K>& a, const taylor<T, K>& b) {
    taylor<T, K> y = exp(b * log(a));
    y.c[0] = rules::pow_rule::value(a.c[0], b.c[0]);
    return y;
}
template <class T, std::size_t K, detail::ConstantForTaylor<T> U>
constexpr taylor<T, K> pow(const U& a, const taylor<T, K>& b) {
    return pow(taylor<T, K>(static_cast<T>(a)), b);
}

template <class T, std::size_t K>
constexpr taylor<T, K> hypot(const taylor<T, K>& a, const taylor<T, K>& b) {
    taylor<T, K> y = sqrt(a * a + b * b);
    y.c[0] = rules::hypot_rule::value(a.c[0], b.c[0]);
    return y;
}
template <class T, std::size_t K>
constexpr taylor<T, K> atan2(const taylor<T, K>& a, const taylor<T, K>& b) {
    // y' = (b a' - a b') / (a^2 + b^2)
    const T value = rules::atan2_rule::value(a.c[0], b.c[0]);
    if constexpr (K == 0) {
        return taylor<T, 0>(value);
    } else {
        taylor<T, K - 1> da, db;
        for (std::size_t k = 0; k < K; ++k) {
            da.c[k] = T(k + 1) * a.c[k + 1];
            db.c[k] = T(k + 1) * b.c[k + 1];
        }
        const auto a1 = detail::truncate<K - 1>(a), b1 = detail::truncate<K - 1>(b);
        const auto dy = (b1 * da - a1 * db) / (a1 * a1 + b1 * b1);
        taylor<T, K> y(value);
        for (std::size_t k = 1; k <= K; ++k)
            y.c[k] = dy.c[k - 1] * detail::reciprocals<T, K>[k];
        return y;
    }
}
template <class T, std::size_t K>
constexpr taylor<T, K> fma(const taylor<T, K>& a, const taylor<T, K>& b, const taylor<T, K>& c) {
    taylor<T, K> y = a * b + c;
    y.c[0] = rules::fma_rule::value(a.c[0], b.c[0], c.c[0]);
    return y;
}

// min, max, fmin and fmax are piecewise linear: their series is the operands' series weighted by
// the rule's partials (1 and 0 away from a tie, 1/2 each at a tie).
namespace detail {
template <class Rule, class T, std::size_t K>
constexpr taylor<T, K> piecewise_linear(const taylor<T, K>& a, const taylor<T, K>& b) {
    const T y = Rule::value(a.c[0], b.c[0]);
    const T wa = to_number<T>(Rule::template partial<0>(y, a.c[0], b.c[0]));
    const T wb = to_number<T>(Rule::template partial<1>(y, a.c[0], b.c[0]));
    taylor<T, K> r(y);
    for (std::size_t k = 1; k <= K; ++k)
        r.c[k] = wa * a.c[k] + wb * b.c[k];
    return r;
}
}  // namespace detail

#define NABLA_TAYLOR_PIECEWISE_LINEAR(function, rule)                                              \
    template <class T, std::size_t K>                                                              \
    constexpr taylor<T, K> function(const taylor<T, K>& a, const taylor<T, K>& b) {                \
        return detail::piecewise_linear<rules::rule>(a, b);                                        \
    }
NABLA_TAYLOR_PIECEWISE_LINEAR(min, min_rule)
NABLA_TAYLOR_PIECEWISE_LINEAR(max, max_rule)
NABLA_TAYLOR_PIECEWISE_LINEAR(fmin, fmin_rule)
NABLA_TAYLOR_PIECEWISE_LINEAR(fmax, fmax_rule)
#undef NABLA_TAYLOR_PIECEWISE_LINEAR

// The strong-zero products: an identically zero left factor gives exactly zero.
template <class T, std::size_t K>
constexpr taylor<T, K> mul_strong_zero(const taylor<T, K>& a, const taylor<T, K>& b) {
    for (const T& x : a.c)
        if (x != T(0))
            return a * b;
    return taylor<T, K>(T(0));
}
template <class T, std::size_t K>
constexpr taylor<T, K> div_strong_zero(const taylor<T, K>& a, const taylor<T, K>& b) {
    for (const T& x : a.c)
        if (x != T(0))
            return a / b;
    return taylor<T, K>(T(0));
}

#define NABLA_TAYLOR_MIXED_FUNCTION(function)                                                      \
    template <class T, std::size_t K, detail::ConstantForTaylor<T> U>                              \
    constexpr taylor<T, K> function(const taylor<T, K>& a, const U& b) {                           \
        return function(a, taylor<T, K>(static_cast<T>(b)));                                       \
    }                                                                                              \
    template <class T, std::size_t K, detail::ConstantForTaylor<T> U>                              \
    constexpr taylor<T, K> function(const U& a, const taylor<T, K>& b) {                           \
        return function(taylor<T, K>(static_cast<T>(a)), b);                                       \
    }
NABLA_TAYLOR_MIXED_FUNCTION(hypot)
NABLA_TAYLOR_MIXED_FUNCTION(atan2)
NABLA_TAYLOR_MIXED_FUNCTION(min)
NABLA_TAYLOR_MIXED_FUNCTION(max)
NABLA_TAYLOR_MIXED_FUNCTION(fmin)
NABLA_TAYLOR_MIXED_FUNCTION(fmax)
NABLA_TAYLOR_MIXED_FUNCTION(mul_strong_zero)
NABLA_TAYLOR_MIXED_FUNCTION(div_strong_zero)
#undef NABLA_TAYLOR_MIXED_FUNCTION

template <class T, std::size_t K>
constexpr bool isfinite(const taylor<T, K>& x) {
    using std::isfinite;
    return isfinite(x.c[0]);
}
template <class T, std::size_t K>
constexpr bool isnan(const taylor<T, K>& x) {
    using std::isnan;
    return isnan(x.c[0]);
}

// All derivatives of f at x, of orders 0 to K, in one evaluation on taylor<R, K>:
// derivatives<8>(g, 0.7) is std::array<double, 9> {g(0.7), g'(0.7), ..., g^(8)(0.7)}.
template <std::size_t K, class F, Number X>
constexpr auto derivatives(const F& f, const X& x) {
    using R = detail::promoted<X>;
    using S = taylor<R, K>;
    static_assert(std::is_invocable_v<const F&, const S&>,
                  "nabla::derivatives<K>(f, x): f cannot be called with nabla's Taylor series. "
                  "Write it generically, with an auto parameter, and call math functions "
                  "unqualified: [](auto x) { using std::exp; return exp(x) / (1 + x * x); }.");
    std::array<R, K + 1> d{};
    if constexpr (std::is_invocable_v<const F&, const S&>) {
        S t(static_cast<R>(x));
        if constexpr (K > 0)
            t.c[1] = R(1);
        const auto y = f(t);
        R factorial = R(1);
        for (std::size_t k = 0; k <= K; ++k) {
            if (k > 0)
                factorial *= R(k);
            if constexpr (std::is_same_v<std::remove_cvref_t<decltype(y)>, S>)
                d[k] = y.c[k] * factorial;
            else
                d[k] = k == 0 ? static_cast<R>(y) : R(0);
        }
    }
    return d;
}

}  // namespace nabla

template <class T, std::size_t K, class U>
requires std::is_arithmetic_v<U>
struct std::common_type<nabla::taylor<T, K>, U> {
    using type = nabla::taylor<T, K>;
};
template <class T, std::size_t K, class U>
requires std::is_arithmetic_v<U>
struct std::common_type<U, nabla::taylor<T, K>> {
    using type = nabla::taylor<T, K>;
};
