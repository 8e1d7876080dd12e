#pragma once
// Exponentials and logarithms.

#include <array>
#include <cmath>
#include <cstddef>

#include "rule.hpp"
#include "series.hpp"

namespace nabla::rules {

struct exp_rule {
    static constexpr const char* name = "exp";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        const auto plain = [](const auto& v) {
            using std::exp;
            return exp(v);
        };
        if constexpr (OwnExponential<X>)
            return lanes_exponential<X>::exp(x);
        else if constexpr (Lanes<X>)
            return per_lane(plain, x);
        else
            return plain(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X&) {
        return y;
    }
    // y' = y u'.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        return series::scaled_exponential(value(u[0]), u, T(1));
    }
};

struct exp2_rule {
    static constexpr const char* name = "exp2";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        const auto plain = [](const auto& v) {
            using std::exp2;
            return exp2(v);
        };
        if constexpr (OwnExponential<X>)
            return lanes_exponential<X>::exp2(x);
        else if constexpr (Lanes<X>)
            return per_lane(plain, x);
        else
            return plain(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X&) {
        return ln2 * y;
    }
    // y' = ln 2 y u'.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        return series::scaled_exponential(value(u[0]), u, as<T>(ln2));
    }
};

// expm1' = exp(x), not expm1(x) + 1, which cancels for x < -30.
struct expm1_rule {
    static constexpr const char* name = "expm1";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::expm1;
        return expm1(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::exp;
        return exp(x);
    }
    // y' = (y + 1) u': the series of exp but for the value.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        std::array<T, K + 1> y = exp_rule::series<T, K>(u);
        y[0] = value(u[0]);
        return y;
    }
};

// log(0) = -inf and log'(0) = +inf, as IEEE division gives; negative arguments give NaN.
struct log_rule {
    static constexpr const char* name = "log";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::log;
        return log(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        return one / x;
    }
    // u y' = u': u_0 y_k = u_k - (1/k) sum_{j=1..k-1} j y_j u_{k-j}.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u) {
        std::array<T, K + 1> y{};
        y[0] = value(u[0]);
        if constexpr (K > 0) {
            if (u[0] == T(0))
                series::domain_error("nabla::taylor: log of a series that is 0 at the point");
            const T inverse = T(1) / u[0];
            for (std::size_t k = 1; k <= K; ++k) {
                T sum = T(0);
                for (std::size_t j = 1; j < k; ++j)
                    sum += T(j) * y[j] * u[k - j];
                y[k] = (u[k] - sum * series::reciprocals<T, K>[k]) * inverse;
            }
        }
        return y;
    }
};

struct log2_rule {
    static constexpr const char* name = "log2";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::log2;
        return log2(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        return one / (x * ln2);
    }
};

struct log10_rule {
    static constexpr const char* name = "log10";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::log10;
        return log10(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        return one / (x * ln10);
    }
};

struct log1p_rule {
    static constexpr const char* name = "log1p";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::log1p;
        return log1p(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        return one / (one + x);
    }
};

// xsimd 8.1 differs from the C library at these functions' edges (rules/rule.hpp).
template <>
inline constexpr bool native_value_on_lanes<log_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<log2_rule> = false;
template <>
inline constexpr bool native_value_on_lanes<log10_rule> = false;

template <>
inline constexpr bool cheap_partials<exp_rule> = true;
template <>
inline constexpr bool cheap_partials<exp2_rule> = true;
template <>
inline constexpr double lanes_limit<expm1_rule> = 700.0;

}  // namespace nabla::rules
