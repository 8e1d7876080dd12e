#pragma once
// The kernels the rules' Taylor-coefficient recurrences (their `series` members) are written with.
//
// A series of order K is the array u_0 ... u_K of the normalised coefficients of
// u(t) = sum_k u_k t^k around the point of evaluation, u_k = u^(k)(0) / k!. Each kernel maps the
// coefficients of its operands to those of its result in O(K^2) with the classical recurrences
// (Griewank and Walther, "Evaluating Derivatives", chapter 13), derived from the ODE the function
// satisfies:
//
//   y = f(u),  y' = p * u'      =>   k y_k = sum_{j=1..k} j u_j p_{k-j}
//
// The kernels take the value y_0 from their caller, so values stay the rules' own. A series that
// does not exist at the point (division by a series that is 0 there, sqrt, log or a real power of
// 0) is a std::domain_error, not a NaN cascade. The kernels know nothing of nabla::taylor, which
// wraps these arrays as a number.

#include <array>
#include <cstddef>
#include <stdexcept>
#include <type_traits>

namespace nabla::rules::series {

// 1/k for k = 0..K (1/0 unused): the recurrences multiply by it instead of dividing.
template <class T, std::size_t K>
inline constexpr std::array<T, K + 1> reciprocals = [] {
    std::array<T, K + 1> r{};
    for (std::size_t k = 1; k <= K; ++k)
        r[k] = T(1) / T(k);
    return r;
}();

// A series that does not exist at the point: reported, not left as a NaN cascade.
[[noreturn]] inline void domain_error(const char* what) {
    throw std::domain_error(what);
}

// The coefficients of orders 0..M of a series of higher order.
template <std::size_t M, class T, std::size_t N>
constexpr std::array<T, M + 1> truncate(const std::array<T, N>& u) {
    static_assert(M < N, "nabla: a series can only be truncated to a lower order");
    std::array<T, M + 1> r{};
    for (std::size_t k = 0; k <= M; ++k)
        r[k] = u[k];
    return r;
}

// The chain-rule sum of every ODE recurrence: sum_{j=1..k} j u_j w_{k-j}, with w the
// coefficients of the derivative factor (any indexable sequence).
template <class U, class W>
constexpr auto chain_sum(const U& u, const W& w, std::size_t k) {
    using T = std::remove_cvref_t<decltype(u[0])>;
    T sum = T(0);
    for (std::size_t j = 1; j <= k; ++j)
        sum += T(j) * u[j] * w[k - j];
    return sum;
}

// y_0 = value, k y_k = sum_{j=1..k} j u_j p_{k-j}: the series of a function whose derivative
// series p (order K-1) is known.
template <class T, std::size_t N, std::size_t P>
constexpr std::array<T, N>
integrate(const T& value, const std::array<T, N>& u, const std::array<T, P>& p) {
    constexpr std::size_t K = N - 1;
    std::array<T, N> y{};
    y[0] = value;
    for (std::size_t k = 1; k <= K; ++k) {
        const T sum = chain_sum(u, p, k);
        y[k] = sum * reciprocals<T, K>[k];
    }
    return y;
}

// y' = c y u' for a constant c (exp: c = 1, exp2: c = ln 2): k y_k = c sum_{j=1..k} j u_j y_{k-j}.
template <class T, std::size_t N>
constexpr std::array<T, N>
scaled_exponential(const T& value, const std::array<T, N>& u, const T& c) {
    constexpr std::size_t K = N - 1;
    std::array<T, N> y{};
    y[0] = value;
    for (std::size_t k = 1; k <= K; ++k) {
        const T sum = chain_sum(u, y, k);
        y[k] = c * sum * reciprocals<T, K>[k];
    }
    return y;
}

// y' = q y u' for a series q of order K-1 (tgamma: q = digamma(u)).
template <class T, std::size_t N, std::size_t P>
constexpr std::array<T, N>
exponential_like(const T& value, const std::array<T, N>& u, const std::array<T, P>& q) {
    constexpr std::size_t K = N - 1;
    std::array<T, N> y{};
    y[0] = value;
    std::array<T, N> w{};  // w = q * y, known up to the order of y that is known
    for (std::size_t k = 1; k <= K; ++k) {
        T wk = T(0);
        for (std::size_t i = 0; i <= k - 1; ++i)
            wk += q[k - 1 - i] * y[i];
        w[k - 1] = wk;
        const T sum = chain_sum(u, w, k);
        y[k] = sum * reciprocals<T, K>[k];
    }
    return y;
}

// k u_0 y_k of y = u^r at an order k >= 1, from y_0..y_{k-1} and u_1..u_k.
template <class Y, class U, class T>
constexpr T power_at(const Y& y, const U& u, const T& r, std::size_t k) {
    T sum = T(0);
    for (std::size_t j = 0; j < k; ++j)
        sum += (r * T(k - j) - T(j)) * u[k - j] * y[j];
    return sum;
}

// u y' = r y u' for y = u^r (r a constant): y_k = 1/(k u_0) sum_{j=0..k-1} (r (k - j) - j) u_{k-j}
// y_j.
template <class T, std::size_t N>
constexpr std::array<T, N> power(const T& value, const std::array<T, N>& u, const T& r) {
    constexpr std::size_t K = N - 1;
    std::array<T, N> y{};
    y[0] = value;
    if constexpr (K > 0) {
        if (u[0] == T(0)) {
            // u^0 is the constant 1, and u^n for a whole n is a product of series; any other
            // power of a series that is 0 at the point has no Taylor series there.
            if (r == T(0))
                return y;
            if constexpr (std::is_arithmetic_v<T>) {
                if (r > T(0) && r <= T(64) && r == static_cast<T>(static_cast<int>(r))) {
                    std::array<T, N> p{};
                    p[0] = T(1);
                    for (int n = 0; n < static_cast<int>(r); ++n) {
                        std::array<T, N> q{};
                        for (std::size_t k = 0; k <= K; ++k)
                            for (std::size_t j = 0; j <= k; ++j)
                                q[k] += p[j] * u[k - j];
                        p = q;
                    }
                    p[0] = value;
                    return p;
                }
            }
            domain_error("nabla::taylor: a real power of a series that is 0 at the point has no "
                         "Taylor series there");
        }
        const T inverse = T(1) / u[0];
        for (std::size_t k = 1; k <= K; ++k)
            y[k] = power_at(y, u, r, k) * reciprocals<T, K>[k] * inverse;
    }
    return y;
}

// y' = (1 + sign y^2) u' (tan: sign = +1, tanh: sign = -1), with w = 1 + sign y^2 built as the
// coefficients of y become known. Its first coefficient w_0, the derivative of the function at the
// point, is given: 1 - tanh^2 cancels to 0 for |u_0| > 19, 1 / cosh^2 does not.
template <class T, std::size_t N>
constexpr std::array<T, N>
riccati(const T& value, const std::array<T, N>& u, const T& sign, const T& derivative) {
    constexpr std::size_t K = N - 1;
    std::array<T, N> y{};
    y[0] = value;
    std::array<T, N> w{};
    for (std::size_t k = 1; k <= K; ++k) {
        T square = T(0);
        for (std::size_t i = 0; i <= k - 1; ++i)
            square += y[i] * y[k - 1 - i];
        w[k - 1] = k == 1 ? derivative : sign * square;
        const T sum = chain_sum(u, w, k);
        y[k] = sum * reciprocals<T, K>[k];
    }
    return y;
}

// s' = c u' and c' = -s u' (sin and cos), or c' = s u' (sinh and cosh, Hyperbolic): the two
// series together, from their values s_0 and c_0.
template <bool Hyperbolic, class T, std::size_t N>
constexpr std::array<std::array<T, N>, 2>
sine_cosine(const T& sine, const T& cosine, const std::array<T, N>& u) {
    constexpr std::size_t K = N - 1;
    std::array<T, N> s{}, c{};
    s[0] = sine;
    c[0] = cosine;
    for (std::size_t k = 1; k <= K; ++k) {
        const T ss = chain_sum(u, c, k);
        const T cc = chain_sum(u, s, k);
        s[k] = ss * reciprocals<T, K>[k];
        c[k] = (Hyperbolic ? cc : -cc) * reciprocals<T, K>[k];
    }
    return {s, c};
}

// y_k of y = sqrt(u) at an order k >= 1, from y_1..y_{k-1}, u_k and inverse = 1 / (2 y_0).
template <class Y, class T>
constexpr T square_root_at(const Y& y, const T& uk, const T& inverse, std::size_t k) {
    T sum = uk;
    for (std::size_t j = 1; j < k; ++j)
        sum -= y[j] * y[k - j];
    return sum * inverse;
}

// y^2 = u: y_k = (u_k - sum_{j=1..k-1} y_j y_{k-j}) / (2 y_0).
template <class T, std::size_t N>
constexpr std::array<T, N> square_root(const T& value, const std::array<T, N>& u) {
    constexpr std::size_t K = N - 1;
    std::array<T, N> y{};
    y[0] = value;
    if constexpr (K > 0) {
        if (y[0] == T(0))
            domain_error(
                "nabla::taylor: sqrt of a series that is 0 at the point has no Taylor series");
        const T inverse = T(1) / (T(2) * y[0]);
        for (std::size_t k = 1; k <= K; ++k)
            y[k] = square_root_at(y, u[k], inverse, k);
    }
    return y;
}

// The coefficient k of the Cauchy product a b, and of a a (half the sum, by symmetry).
template <class A, class B>
constexpr auto product_at(const A& a, const B& b, std::size_t k) {
    using T = std::remove_cvref_t<decltype(a[0] * b[0])>;
    T sum = T(0);
    for (std::size_t j = 0; j <= k; ++j)
        sum += a[j] * b[k - j];
    return sum;
}
template <class A>
constexpr auto square_at(const A& a, std::size_t k) {
    using T = std::remove_cvref_t<decltype(a[0] * a[0])>;
    T sum = T(0);
    for (std::size_t j = 0; 2 * j < k; ++j)
        sum += a[j] * a[k - j];
    sum += sum;
    if (k % 2 == 0)
        sum += a[k / 2] * a[k / 2];
    return sum;
}

// The Cauchy product (a b)_k = sum_{j=0..k} a_j b_{k-j}. For a square (both arguments the same
// object) the sum is symmetric, so half of it suffices.
template <class T, std::size_t N>
constexpr std::array<T, N> product(const std::array<T, N>& a, const std::array<T, N>& b) {
    std::array<T, N> r{};
    if (&a == &b) {
        for (std::size_t k = 0; k < N; ++k)
            r[k] = square_at(a, k);
        return r;
    }
    for (std::size_t k = 0; k < N; ++k)
        r[k] = product_at(a, b, k);
    return r;
}

// q_k of q = a / b at an order k >= 1, from q_0..q_{k-1}, b_1..b_k, a_k and inverse = 1 / b_0.
template <class Q, class B, class T>
constexpr T quotient_at(const Q& q, const B& b, const T& ak, const T& inverse, std::size_t k) {
    T sum = ak;
    for (std::size_t j = 0; j < k; ++j)
        sum -= q[j] * b[k - j];
    return sum * inverse;
}

// q b = a: q_k = (a_k - sum_{j=0..k-1} q_j b_{k-j}) / b_0, with one division.
template <class T, std::size_t N>
constexpr std::array<T, N> quotient(const std::array<T, N>& a, const std::array<T, N>& b) {
    if (b[0] == T(0))
        domain_error("nabla::taylor: division by a series whose constant term is 0");
    std::array<T, N> q{};
    q[0] = a[0] / b[0];
    const T inverse = T(1) / b[0];  // the recurrence multiplies
    for (std::size_t k = 1; k < N; ++k)
        q[k] = quotient_at(q, b, a[k], inverse, k);
    return q;
}

}  // namespace nabla::rules::series
