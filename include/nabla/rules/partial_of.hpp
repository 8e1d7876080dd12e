#pragma once
// The partial derivatives of every order of a rule whose value is an algorithm (the elliptic
// integrals: Carlson's duplication; the beta function near its poles), as rules of their own.
//
// partial_of<Rule, O_1, ..., O_n> is the mixed partial d^(O_1 + ... + O_n) Rule / dx_1^O_1 ...
// dx_n^O_n. Its value runs Rule::algorithm on nested truncated Taylor series (series_number.hpp),
// one level per operand it differentiates, and reads the coefficient; its partial in operand I is
// partial_of<Rule, O with O_I + 1>. So the derivatives of such a rule close under
// differentiation in every mode: a static graph's d builds nodes of these rules, dual numbers of
// any nesting and the tape evaluate them, and a Hessian's d2/dx dy and d2/dy dx are one rule,
// symmetric by construction. Nothing divides by a difference that vanishes, as the closed forms of
// DLMF 19.4 do at k = 0 and on nu = k^2.
//
// Rule derives from by_algorithm_rule<Rule> (below: its partials and series) and provides, besides
// its value:
//   template <class N> static N algorithm(const N&... x);   the value, on any series number
//   template <class T> static bool inside(const T&... x);  whether the series exist at x
//   (optional) closed_operand, and template <class N> static N closed_partial(const N&... x):
//                                                           the first partial in that operand in a
//                                                           closed form that does not cancel, for
//                                                           every partial of some order in it
//   template <std::size_t... O, class T>
//   static std::optional<T> known(const T&... x);           the partial where the rule has a
//                                                           closed form to use instead (its
//                                                           conventions at the edges), or nullopt
// Values of a partial_of at other number types (dual numbers, Taylor numbers, static expressions,
// the tape's) go through apply_rule(rule_tag<Rule>, x...), which each mode defines for its
// numbers; the Taylor integrator's series tape runs the rule's algorithm instead
// (value_coefficient).

#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "rule.hpp"
#include "series_number.hpp"

namespace nabla::rules {

template <class Rule, std::size_t... Order>
struct partial_of;

// Whether a rule's derivatives are partial_of's (by_algorithm_rule says so). The Taylor
// integrator's series tape runs their algorithm on series of the order it replays instead of
// recording partials.
template <class Rule>
concept ByAlgorithm = requires {
    requires Rule::by_algorithm;
};

namespace detail {

// The series number of the orders O: one level of series for each operand differentiated, the
// first operand outermost, around a base type (a plain number, or a series of the Taylor mode).
template <class Base, std::size_t... O>
struct nested;
template <class Base>
struct nested<Base> {
    using type = Base;
};
template <class Base, std::size_t First, std::size_t... Rest>
struct nested<Base, First, Rest...> {
    using inner = typename nested<Base, Rest...>::type;
    using type = std::conditional_t<First == 0, inner, series_number<inner, First>>;
};
template <class Base, std::size_t... O>
using nested_t = typename nested<Base, O...>::type;

// Operand J at the point x: x plus the variable of its level (a constant where its order is 0).
template <std::size_t J, class Base, std::size_t First, std::size_t... Rest>
nested_t<Base, First, Rest...> seeded(const Base& x) {
    using inner = nested_t<Base, Rest...>;
    if constexpr (First == 0) {
        if constexpr (J == 0)
            return inner(x);
        else
            return seeded<J - 1, Base, Rest...>(x);
    } else {
        series_number<inner, First> r;
        if constexpr (J == 0) {
            r.c[0] = inner(x);
            r.c[1] = inner(plain_t<Base>(1));
        } else {
            r.c[0] = seeded<J - 1, Base, Rest...>(x);
        }
        return r;
    }
}
template <std::size_t J, class Base>
Base seeded(const Base& x) {
    return x;
}

// The coefficient of h_1^O_1 ... h_n^O_n times O_1! ... O_n!: the mixed partial.
template <std::size_t First, std::size_t... Rest, class N>
auto coefficient(const N& r) {
    if constexpr (First == 0) {
        if constexpr (sizeof...(Rest) == 0)
            return r;
        else
            return coefficient<Rest...>(r);
    } else {
        auto inner = [&] {
            if constexpr (sizeof...(Rest) == 0)
                return r.c[First];
            else
                return coefficient<Rest...>(r.c[First]);
        }();
        using P = plain_t<N>;
        P factorial = P(1);
        for (std::size_t k = 2; k <= First; ++k)
            factorial *= P(k);
        return inner * decltype(inner)(factorial);
    }
}

// The operand whose first partial the rule gives in closed form (closed_partial), or none.
template <class Rule>
constexpr std::size_t closed_operand() {
    if constexpr (requires { Rule::closed_operand; })
        return Rule::closed_operand;
    else
        return std::size_t(-1);
}
template <std::size_t I, std::size_t... O>
inline constexpr std::size_t order_at = std::array<std::size_t, sizeof...(O)>{O...}[I];

// f run on the nested series of orders O at x, and the coefficient of those orders read.
template <std::size_t... O, std::size_t... J, class Base, class F>
auto on_nested(std::index_sequence<J...>, const std::array<Base, sizeof...(J)>& x, const F& f) {
    using N = nested_t<Base, O...>;
    const N r = f(N(seeded<J, Base, O...>(x[J]))...);
    if constexpr (sizeof...(O) == 0)
        return r;
    else
        return coefficient<O...>(r);
}

// The partial of orders O at x (plain numbers, or the series of the Taylor mode): from the
// rule's closed first partial in its closed operand C where O_C >= 1, at the orders with O_C one
// less; else from its algorithm.
template <class Rule, std::size_t... O, std::size_t... J, class Base>
auto run_nested(std::index_sequence<J...> operands, const std::array<Base, sizeof...(J)>& x) {
    constexpr std::size_t C = closed_operand<Rule>();
    if constexpr (sizeof...(O) > 0 && C < sizeof...(O)) {
        if constexpr (order_at < C, O... >> 0)
            return on_nested<(O - (J == C ? 1 : 0))...>(
                operands, x, [](const auto&... v) { return Rule::closed_partial(v...); });
        else
            return on_nested<O...>(operands, x,
                                   [](const auto&... v) { return Rule::algorithm(v...); });
    } else {
        return on_nested<O...>(operands, x, [](const auto&... v) { return Rule::algorithm(v...); });
    }
}

// The partial of orders O at plain numbers: the rule's closed form where it knows one (its
// conventions at the edges), NaN outside the domain of the series, else from the series.
template <class Rule, std::size_t... O, class T>
T partial_value(const std::array<T, sizeof...(O)>& x) {
    constexpr auto operands = std::make_index_sequence<sizeof...(O)>{};
    const std::optional<T> known = [&]<std::size_t... J>(std::index_sequence<J...>) {
        return Rule::template known<O...>(x[J]...);
    }
    (operands);
    if (known)
        return *known;
    const bool inside = [&]<std::size_t... J>(std::index_sequence<J...>) {
        return Rule::inside(x[J]...);
    }
    (operands);
    if (!inside)
        return std::numeric_limits<T>::quiet_NaN();
    return run_nested<Rule, O...>(operands, x);
}

template <class Rule, class T, std::size_t K, std::size_t... O, class... X>
std::array<T, K + 1> algorithm_series(const X&... x);

// Whether an operand of a series varies along it (a constant beside series does not).
template <class U>
bool varies(const U& u) {
    if constexpr (std::is_arithmetic_v<U>) {
        return false;
    } else {
        for (std::size_t k = 1; k < u.size(); ++k)
            if (u[k] != plain_t<decltype(u[0])>(0))
                return true;
        return false;
    }
}

// The series of the rule's value where its closed operand varies: y' = sum_i p_i x_i', each
// first partial's series of order K-1 (the closed operand's from its closed form) integrated.
// Run directly, the algorithm would give the closed operand's higher derivatives as differences
// of terms of the size of the value, which they can be far below (F's in phi, k^2 sin phi cos phi
// / D^3, at a small modulus).
template <class Rule, class T, std::size_t K, class... X>
std::array<T, K + 1> integrated(const T& value, const X&... x) {
    std::array<T, K + 1> y{};
    y[0] = value;
    const auto lower = [](const auto& u) {
        if constexpr (std::is_arithmetic_v<std::remove_cvref_t<decltype(u)>>)
            return u;
        else
            return series::truncate<K - 1>(u);
    };
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        const auto term = [&]<std::size_t J>(std::integral_constant<std::size_t, J>,
                                             const auto& u) {
            if constexpr (!std::is_arithmetic_v<std::remove_cvref_t<decltype(u)>>) {
                const auto p = algorithm_series<Rule, T, K - 1, (I == J ? 1 : 0)...>(lower(x)...);
                for (std::size_t k = 1; k <= K; ++k)
                    y[k] += series::chain_sum(u, p, k) / T(k);
            }
        };
        (term(std::integral_constant<std::size_t, I>{}, x), ...);
    }
    (std::index_sequence_for<X...>{});
    return y;
}

// The Taylor series of order K of the partial of orders O (of the rule's value where there are
// no orders) along the operands' series (coefficient arrays) or constants beside them; NaN
// beyond the first coefficient where the series do not exist (the poles, the modulus 1).
template <class Rule, class T, std::size_t K, std::size_t... O, class... X>
std::array<T, K + 1> algorithm_series(const X&... x) {
    const auto at = [](const auto& u) {
        if constexpr (std::is_arithmetic_v<std::remove_cvref_t<decltype(u)>>)
            return T(u);
        else
            return T(u[0]);
    };
    const T value = [&] {
        if constexpr (sizeof...(O) == 0)
            return T(Rule::value(at(x)...));
        else
            return partial_of<Rule, O...>::value(at(x)...);
    }();
    std::array<T, K + 1> r;
    if (!Rule::inside(at(x)...) || !(value == value)) {
        r.fill(std::numeric_limits<T>::quiet_NaN());
        r[0] = value;
        return r;
    }
    if constexpr (K > 0) {
        using S = series_number<T, K>;
        const auto as_series = [](const auto& u) {
            if constexpr (std::is_arithmetic_v<std::remove_cvref_t<decltype(u)>>)
                return S(T(u));
            else
                return S(u);
        };
        const std::array<S, sizeof...(X)> base{as_series(x)...};
        constexpr std::size_t C = closed_operand<Rule>();
        if constexpr (sizeof...(O) == 0 && C < sizeof...(X)) {
            if (varies(std::get<C>(std::tie(x...))))
                return integrated<Rule, T, K>(value, x...);
        }
        if constexpr (sizeof...(O) == 0)
            r = run_nested<Rule>(std::make_index_sequence<sizeof...(X)>{}, base).c;
        else
            r = run_nested<Rule, O...>(std::make_index_sequence<sizeof...(X)>{}, base).c;
    }
    r[0] = value;
    return r;
}

// Coefficient k of the rule's value along operands whose coefficients 0..k are rows[i] (the
// Taylor integrator's series tape, whose order is known at run time only): from its algorithm on
// the series, or where its closed operand varies, by integrating its first partials' series as
// above, the others' from the algorithm run on series of series (a derivative in each).
template <class Rule, class T, std::size_t... I>
T value_coefficient(const std::array<const T*, sizeof...(I)>& rows,
                    std::size_t k,
                    std::index_sequence<I...>) {
    using S = runtime_series<T>;
    const auto up_to = [](const T* row, std::size_t n) {
        return S(std::vector<T>(row, row + n + 1));
    };
    if (!Rule::inside(rows[I][0]...))
        return std::numeric_limits<T>::quiet_NaN();
    constexpr std::size_t C = closed_operand<Rule>();
    if constexpr (C < sizeof...(I)) {
        const auto moving = [&](std::size_t i) {
            for (std::size_t j = 1; j <= k; ++j)
                if (rows[i][j] != T(0))
                    return true;
            return false;
        };
        if (k >= 1 && moving(C)) {
            const S closed = Rule::closed_partial(up_to(rows[I], k - 1)...);
            T sum = series::chain_sum(rows[C], closed, k);
            const auto other = [&](std::size_t i) {
                if (i == C || !moving(i))
                    return;
                using H = series_number<T, 1>;
                const auto seeded_row = [&](std::size_t m) {
                    std::vector<H> r(k);
                    for (std::size_t j = 0; j < k; ++j)
                        r[j] = H(std::array<T, 2>{rows[m][j], j == 0 && m == i ? T(1) : T(0)});
                    return runtime_series<H>(std::move(r));
                };
                const runtime_series<H> r = Rule::algorithm(seeded_row(I)...);
                std::vector<T> p(k);
                for (std::size_t j = 0; j < k; ++j)
                    p[j] = r[j].c[1];
                sum += series::chain_sum(rows[i], p, k);
            };
            (other(I), ...);
            return sum / T(k);
        }
    }
    return Rule::algorithm(up_to(rows[I], k)...)[k];
}

// The orders O with the I-th raised by one.
template <class Rule, std::size_t I, class Orders, class Indices>
struct raised;
template <class Rule, std::size_t I, std::size_t... O, std::size_t... J>
struct raised<Rule, I, std::index_sequence<O...>, std::index_sequence<J...>> {
    using type = partial_of<Rule, (O + (J == I ? 1 : 0))...>;
};
template <class Rule, std::size_t I, std::size_t... O>
using raised_t =
    typename raised<Rule, I, std::index_sequence<O...>, std::make_index_sequence<sizeof...(O)>>::
        type;

// The first partials of a rule: partial_of<Rule, 0, ..., 1 (at I), ..., 0>.
template <class Rule, std::size_t I, class Indices = std::make_index_sequence<Rule::arity>>
struct first_partial;
template <class Rule, std::size_t I, std::size_t... J>
struct first_partial<Rule, I, std::index_sequence<J...>> {
    using type = partial_of<Rule, (J == I ? 1 : 0)...>;
};

// "ellint_1_d2_0": the rule's name and the orders, for printing.
template <class Rule, std::size_t... O>
constexpr auto partial_name() {
    std::array<char, 64> out{};
    std::size_t n = 0;
    for (const char* p = Rule::name; *p != '\0' && n < 40; ++p)
        out[n++] = *p;
    out[n++] = '_';
    out[n++] = 'd';
    bool first = true;
    for (const std::size_t o : {O...}) {
        if (!first)
            out[n++] = '_';
        first = false;
        if (o >= 10)
            out[n++] = static_cast<char>('0' + o / 10 % 10);
        out[n++] = static_cast<char>('0' + o % 10);
    }
    return out;
}

}  // namespace detail

template <class Rule, std::size_t... Order>
struct partial_of {
    static_assert(sizeof...(Order) == Rule::arity, "nabla: one order for each operand");
    static constexpr std::size_t arity = Rule::arity;

private:
    static constexpr auto spelled = detail::partial_name<Rule, Order...>();

public:
    static constexpr const char* name = spelled.data();

    template <class... X>
    static auto value(const X&... x) {
        if constexpr ((std::is_arithmetic_v<X> && ...)) {
            using T = std::common_type_t<detail::real_t<X>...>;
            return detail::partial_value<Rule, Order...>(std::array<T, arity>{T(x)...});
        } else {
            return apply_rule(rule_tag<partial_of>{}, x...);
        }
    }
    template <std::size_t I, class Y, class... X>
    static auto partial(const Y&, const X&... x) {
        return detail::raised_t<Rule, I, Order...>::value(x...);
    }
    template <class T, std::size_t K, class... X>
    static std::array<T, K + 1> series(const X&... x) {
        return detail::algorithm_series<Rule, T, K, Order...>(x...);
    }
};

// What the rules whose derivatives are partial_of's share (a base of each): partial<I> is the
// first partial_of in operand I, and the series run the rule's algorithm on the operands' series.
template <class Rule>
struct by_algorithm_rule {
    static constexpr bool by_algorithm = true;
    template <std::size_t I, class Y, class... X>
    static auto partial(const Y&, const X&... x) {
        return detail::first_partial<Rule, I>::type::value(x...);
    }
    template <class T, std::size_t K, class... X>
    static std::array<T, K + 1> series(const X&... x) {
        return detail::algorithm_series<Rule, T, K>(x...);
    }
};

// Their values and partials run lane by lane on plain numbers.
template <class Rule, std::size_t... Order>
inline constexpr bool native_value_on_lanes<partial_of<Rule, Order...>> = false;
template <class Rule, std::size_t... Order>
inline constexpr bool native_partials_on_lanes<partial_of<Rule, Order...>> = false;

}  // namespace nabla::rules
