#pragma once
// nabla::taylor<T, K>: a truncated Taylor series of order K, for derivatives of any order in one
// evaluation.
//
// A taylor<T, K> holds the normalised coefficients x_0 ... x_K of x(t) = sum_k x_k t^k around the
// point of evaluation; x_k = x^(k)(0) / k!. The recurrences that map the coefficients of an
// operation's operands to those of its result live in the rules, as their `series` members (the
// ODE each function satisfies, in O(K^2); the kernels are in rules/series.hpp). This file makes
// a number of them: every operation goes through one dispatcher, which calls the rule's `series`
// where it has one and otherwise takes the derivative series from the rule's partial, evaluated
// on a series of order K-1, and integrates it (`by_partial`: atan, erf, lgamma, ...):
//
//   y = f(u),  y' = p * u'      =>   k y_k = sum_{j=1..k} j u_j p_{k-j}
//
// so the calculus of every function comes from the rules. Values (the coefficients of order 0) are
// the rules' values. What is particular to the number type stays here: mixed arithmetic with
// constants, integer powers by repeated squaring (exact at a zero base), comparisons and
// derivatives<K>.
//
// Division by a series whose constant term is 0 is a domain error (std::domain_error), and so are
// the other functions whose series do not exist at the point (sqrt, log, a real power of 0).

#include <array>
#include <cmath>
#include <compare>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../concepts.hpp"
#include "../config.hpp"
#include "../core/evaluate.hpp"
#include "../core/functions.hpp"
#include "../rules.hpp"
#include "../rules/functions.hpp"
#include "../rules/series.hpp"
#include "../values.hpp"

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
    requires(std::is_arithmetic_v<U> && !std::is_same_v<U, long double>) constexpr explicit
    operator U() const {
        return static_cast<U>(c[0]);
    }
    // std::sin(x) and the like: a compile-time error that says to call sin unqualified
    // (concepts.hpp).
    template <class U>
    requires std::is_same_v<U, long double>
    constexpr operator U() const { return detail::refuse_std_function<U>(); }

    constexpr taylor& operator+=(const taylor& o) { return *this = *this + o; }
    constexpr taylor& operator-=(const taylor& o) { return *this = *this - o; }
    constexpr taylor& operator*=(const taylor& o) { return *this = *this * o; }
    template <class U>
    requires(std::is_arithmetic_v<U>) constexpr taylor& operator*=(const U& v) {
        return *this = *this * v;
    }
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

template <class T, std::size_t N>
constexpr taylor<T, N - 1> from_coefficients(const std::array<T, N>& coefficients) {
    taylor<T, N - 1> x;
    x.c = coefficients;
    return x;
}

// What a rule's series takes for an operand: a series' coefficients (by reference, so that the
// product sees a square), anything else (the order of polygamma) as it is.
template <class X>
constexpr const auto& coefficients(const X& x) {
    if constexpr (is_taylor_v<X>)
        return x.c;
    else
        return x;
}

template <class Rule, class T, std::size_t K, class... X>
constexpr taylor<T, K> series_of(const X&... x);

// The series of a unary rule without a recurrence of its own: the partial is evaluated as a
// series of order K-1 (the rules stay the one source of derivatives) and integrated. The result
// it is given is the rule's own series to order K-1, for partials written with it (the complete
// elliptic integrals').
template <class Rule, class T, std::size_t K>
constexpr taylor<T, K> by_partial(const taylor<T, K>& u) {
    const T value = Rule::value(u.c[0]);
    if constexpr (K == 0) {
        return taylor<T, 0>(value);
    } else {
        const auto lower = from_coefficients(rules::series::truncate<K - 1>(u.c));
        const taylor<T, K - 1> y = series_of<Rule, T, K - 1>(lower);
        const auto p = to_number<taylor<T, K - 1>>(Rule::template partial<0>(y, lower));
        return from_coefficients(rules::series::integrate(value, u.c, p.c));
    }
}

// The same for a rule of two operands: y' = p_a a' + p_b b', each term integrated. A plain
// number operand is a constant: its partial is never formed (it may not exist, or be NaN where
// the constant's zero series would make it vanish).
template <class Rule, class T, std::size_t K, class A, class B>
constexpr taylor<T, K> by_partials(const A& a, const B& b) {
    constexpr bool a_varies = is_taylor_v<A>, b_varies = is_taylor_v<B>;
    const auto at = [](const auto& x) {
        if constexpr (is_taylor_v<std::remove_cvref_t<decltype(x)>>)
            return x.c[0];
        else
            return T(x);
    };
    const T value = Rule::value(at(a), at(b));
    if constexpr (K == 0) {
        return taylor<T, 0>(value);
    } else {
        const auto lower = [](const auto& x) {
            if constexpr (is_taylor_v<std::remove_cvref_t<decltype(x)>>)
                return from_coefficients(rules::series::truncate<K - 1>(x.c));
            else
                return T(x);
        };
        const auto la = lower(a);
        const auto lb = lower(b);
        const taylor<T, K - 1> y = by_partials<Rule, T, K - 1>(la, lb);
        std::array<T, K + 1> sum{};
        sum[0] = value;
        if constexpr (a_varies) {
            const auto p = to_number<taylor<T, K - 1>>(Rule::template partial<0>(y, la, lb));
            const auto term = rules::series::integrate(T(0), a.c, p.c);
            for (std::size_t k = 1; k <= K; ++k)
                sum[k] += term[k];
        }
        if constexpr (b_varies) {
            const auto p = to_number<taylor<T, K - 1>>(Rule::template partial<1>(y, la, lb));
            const auto term = rules::series::integrate(T(0), b.c, p.c);
            for (std::size_t k = 1; k <= K; ++k)
                sum[k] += term[k];
        }
        return from_coefficients(sum);
    }
}

// Every operation on series: the rule's own recurrence where it has one, else by_partial (one
// operand) or by_partials (two).
template <class Rule, class T, std::size_t K, class... X>
constexpr taylor<T, K> series_of(const X&... x) {
    if constexpr (requires { Rule::template series<T, K>(coefficients(x)...); }) {
        return from_coefficients(Rule::template series<T, K>(coefficients(x)...));
    } else if constexpr (sizeof...(X) == 2) {
        return by_partials<Rule, T, K>(x...);
    } else {
        static_assert(sizeof...(X) == 1, "nabla::taylor: a rule of three operands needs a "
                                         "series member (its Taylor recurrence)");
        return by_partial<Rule>(x...);
    }
}

// Whether a rule has a Taylor recurrence of its own for two series.
template <class Rule, class T, std::size_t K>
inline constexpr bool has_binary_series = requires(const std::array<T, K + 1>& c) {
    Rule::template series<T, K>(c, c);
};

}  // namespace detail

// Arithmetic: the rules' coefficient-wise sums, Cauchy product and division recurrence.
template <class T, std::size_t K>
constexpr taylor<T, K> operator+(const taylor<T, K>& a, const taylor<T, K>& b) {
    return detail::series_of<rules::add_rule, T, K>(a, b);
}
template <class T, std::size_t K>
constexpr taylor<T, K> operator-(const taylor<T, K>& a, const taylor<T, K>& b) {
    return detail::series_of<rules::sub_rule, T, K>(a, b);
}
template <class T, std::size_t K>
constexpr taylor<T, K> operator-(const taylor<T, K>& a) {
    return detail::series_of<rules::neg_rule, T, K>(a);
}
template <class T, std::size_t K>
constexpr taylor<T, K> operator+(const taylor<T, K>& a) {
    return a;
}
template <class T, std::size_t K>
constexpr taylor<T, K> operator*(const taylor<T, K>& a, const taylor<T, K>& b) {
    return detail::series_of<rules::mul_rule, T, K>(a, b);
}
template <class T, std::size_t K>
constexpr taylor<T, K> operator/(const taylor<T, K>& a, const taylor<T, K>& b) {
    return detail::series_of<rules::div_rule, T, K>(a, b);
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

// A constant factor scales every coefficient (cheaper than the Cauchy product). The value is the
// IEEE product; a zero derivative coefficient stays zero even when the factor is infinite: the
// higher derivatives of x * inf are structurally 0, as in the static graphs and dual numbers
// (docs/conventions.md).
template <class T, std::size_t K, detail::ConstantForTaylor<T> U>
constexpr taylor<T, K> operator*(const taylor<T, K>& a, const U& b) {
    taylor<T, K> r;
    r.c[0] = a.c[0] * static_cast<T>(b);
    for (std::size_t k = 1; k <= K; ++k)
        r.c[k] = a.c[k] == T(0) ? T(0) : a.c[k] * static_cast<T>(b);
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

#define NABLA_TAYLOR_UNARY(function, rule)                                                         \
    template <class T, std::size_t K>                                                              \
    constexpr taylor<T, K> function(const taylor<T, K>& u) {                                       \
        return detail::series_of<rules::rule, T, K>(u);                                            \
    }
NABLA_UNARY_FUNCTIONS(NABLA_TAYLOR_UNARY)
#undef NABLA_TAYLOR_UNARY

#define NABLA_TAYLOR_BINARY(function, rule)                                                        \
    template <class T, std::size_t K>                                                              \
    constexpr taylor<T, K> function(const taylor<T, K>& a, const taylor<T, K>& b) {                \
        return detail::series_of<rules::rule, T, K>(a, b);                                         \
    }
NABLA_TAYLOR_BINARY(pow, pow_rule)
NABLA_BINARY_FUNCTIONS(NABLA_TAYLOR_BINARY)
#undef NABLA_TAYLOR_BINARY

// ldexp(x, n) = x 2^n, exact in every coefficient; frexp(x, e) = ldexp(x, -e) with e the exponent
// of x's value.
template <class T, std::size_t K, class I>
requires std::is_integral_v<I>
constexpr taylor<T, K> ldexp(const taylor<T, K>& x, I n) {
    taylor<T, K> r;
    for (std::size_t k = 0; k <= K; ++k)
        r.c[k] = rules::ldexp_rule::value(x.c[k], static_cast<int>(n));
    return r;
}
template <class T, std::size_t K>
constexpr taylor<T, K> ldexp(const taylor<T, K>& x, const taylor<T, K>& n) {
    return ldexp(x, static_cast<int>(primal(n.c[0])));
}
template <class T, std::size_t K>
taylor<T, K> frexp(const taylor<T, K>& x, int* e) {
    using std::frexp;
    frexp(primal(x.c[0]), e);
    return ldexp(x, -*e);
}

// The functions of three operands, and the rules that no function names (rules/partial_of.hpp,
// through apply_rule): series of one type, or constants beside them.
namespace detail {
template <class T>
struct is_taylor_type : std::bool_constant<is_taylor_v<T>> {};
template <class... X>
using taylor_among_t = typename first_of<is_taylor_type, X...>::type;
template <class U, class S>
concept TaylorOrConstant = std::is_same_v<U, S> || ConstantForTaylor<U, typename S::value_type>;
}  // namespace detail
#define NABLA_TAYLOR_TERNARY(function, rule)                                                       \
    template <class A, class B, class C, class S = detail::taylor_among_t<A, B, C>>                \
    requires(is_taylor_v<S> && detail::TaylorOrConstant<A, S> && detail::TaylorOrConstant<B, S> && \
             detail::TaylorOrConstant<C, S>) constexpr S                                           \
    function(const A& a, const B& b, const C& c) {                                                 \
        return detail::series_of<rules::rule, typename S::value_type, S::order>(S(a), S(b), S(c)); \
    }
NABLA_TAYLOR_TERNARY(fma, fma_rule)
NABLA_TAYLOR_TERNARY(hypot, hypot3_rule)
NABLA_TAYLOR_TERNARY(ellint_3, ellint_3_rule)
#undef NABLA_TAYLOR_TERNARY

namespace rules {
template <class Rule, class... X>
requires((is_taylor_v<X> || ...)) auto apply_rule(rule_tag<Rule>, const X&... x) {
    using S = nabla::detail::taylor_among_t<X...>;
    return nabla::detail::series_of<Rule, typename S::value_type, S::order>(x...);
}
}  // namespace rules

// f(n, x) of a constant index n, an integer or a real order (an index as a series is read from
// its value, and must be a constant).
#define NABLA_TAYLOR_INDEXED(function, rule)                                                       \
    template <class T, std::size_t K, class I>                                                     \
    requires rules::index_argument<rules::rule, I>                                                 \
    constexpr taylor<T, K> function(I n, const taylor<T, K>& u) {                                  \
        return detail::series_of<rules::rule, T, K>(rules::index_cast<rules::rule, T>(n), u);      \
    }                                                                                              \
    template <class T, std::size_t K>                                                              \
    constexpr taylor<T, K> function(const taylor<T, K>& n, const taylor<T, K>& u) {                \
        for (std::size_t k = 1; k <= K; ++k)                                                       \
            if (!(n.c[k] == T(0)))                                                                 \
                throw std::domain_error("nabla::" #function "(n, x): the index or order n varies " \
                                        "along the series; nabla differentiates in x only");       \
        return function(rules::index_cast<rules::rule, detail::primal_type_t<T>>(primal(n.c[0])),  \
                        u);                                                                        \
    }
NABLA_INDEXED_FUNCTIONS(NABLA_TAYLOR_INDEXED)
#undef NABLA_TAYLOR_INDEXED
// f(n, a, x) of a constant degree n and a constant parameter a (either as a series is read from
// its value, and must be a constant).
namespace detail {
template <class C>
constexpr auto constant_coefficient(const C& c, const char* function) {
    if constexpr (is_taylor_v<C>) {
        for (std::size_t k = 1; k < c.c.size(); ++k)
            if (!(c.c[k] == std::remove_cvref_t<decltype(c.c[k])>(0)))
                throw std::domain_error(std::string("nabla::") + function +
                                        "(n, a, x): the degree n or the parameter a varies "
                                        "along the series; nabla differentiates in x only");
        return primal(c.c[0]);
    } else {
        return c;
    }
}
// The degree: an integer (or such a series); the parameter: a number (or such a series).
template <class C, class T, std::size_t K>
concept SeriesDegreeFor =
    std::is_integral_v<C> || std::is_same_v<std::remove_cvref_t<C>, taylor<T, K>>;
template <class C, class T, std::size_t K>
concept SeriesParameterFor =
    std::is_arithmetic_v<C> || std::is_same_v<std::remove_cvref_t<C>, taylor<T, K>>;
}  // namespace detail
#define NABLA_TAYLOR_PARAMETRIC(function, rule)                                                    \
    template <class T, std::size_t K, class I, class A>                                            \
    requires detail::SeriesDegreeFor<I, T, K> && detail::SeriesParameterFor<A, T, K>               \
    constexpr taylor<T, K> function(const I& n, const A& a, const taylor<T, K>& u) {               \
        using P = detail::primal_type_t<T>;                                                        \
        return detail::series_of<rules::rule, T, K>(                                               \
            static_cast<int>(detail::constant_coefficient(n, #function)),                          \
            static_cast<P>(detail::constant_coefficient(a, #function)), u);                        \
    }
NABLA_PARAMETRIC_FUNCTIONS(NABLA_TAYLOR_PARAMETRIC)
#undef NABLA_TAYLOR_PARAMETRIC

template <class T, std::size_t K>
constexpr taylor<T, K> digamma(const taylor<T, K>& u) {
    return polygamma(0, u);
}

// Powers: an integer exponent multiplies (exact at a zero base), a real one uses the power
// recurrence, a series exponent exp(b log a) (pow above).
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
    return detail::from_coefficients(
        rules::pow_rule::series_constant_exponent<T, K>(a.c, static_cast<T>(r)));
}
template <class T, std::size_t K, detail::ConstantForTaylor<T> U>
constexpr taylor<T, K> pow(const U& a, const taylor<T, K>& b) {
    return pow(taylor<T, K>(static_cast<T>(a)), b);
}

#define NABLA_TAYLOR_MIXED_FUNCTION(function, rule)                                                \
    template <class T, std::size_t K, detail::ConstantForTaylor<T> U>                              \
    constexpr taylor<T, K> function(const taylor<T, K>& a, const U& b) {                           \
        if constexpr (detail::has_binary_series<rules::rule, T, K>)                                \
            return function(a, taylor<T, K>(static_cast<T>(b)));                                   \
        else                                                                                       \
            return detail::by_partials<rules::rule, T, K>(a, static_cast<T>(b));                   \
    }                                                                                              \
    template <class T, std::size_t K, detail::ConstantForTaylor<T> U>                              \
    constexpr taylor<T, K> function(const U& a, const taylor<T, K>& b) {                           \
        if constexpr (detail::has_binary_series<rules::rule, T, K>)                                \
            return function(taylor<T, K>(static_cast<T>(a)), b);                                   \
        else                                                                                       \
            return detail::by_partials<rules::rule, T, K>(static_cast<T>(a), b);                   \
    }
NABLA_BINARY_FUNCTIONS(NABLA_TAYLOR_MIXED_FUNCTION)
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
