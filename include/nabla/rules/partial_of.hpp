#pragma once
// The partial derivatives of every order of a rule whose value is an algorithm (the elliptic
// integrals: Carlson's duplication), as rules of their own.
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
// Rule provides, besides its value:
//   template <class N> static N algorithm(const N&... x);   the value, on any series number
//   template <class T> static bool inside(const T&... x);  whether the series exist at x
//   template <std::size_t... O, class T>
//   static std::optional<T> known(const T&... x);           the partial where the rule has a
//                                                           closed form to use instead (its
//                                                           conventions at the edges), or nullopt
// Values of the rule at other number types (dual numbers, static expressions, series variables,
// the tape's) go through apply_rule(rule_tag<Rule>, x...), which each mode defines for its numbers.

#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "rule.hpp"
#include "series_number.hpp"

namespace nabla::rules {

template <class Rule, std::size_t... Order>
struct partial_of;

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

template <class Rule, std::size_t... O, std::size_t... J, class Base>
auto run_nested(std::index_sequence<J...>, const std::array<Base, sizeof...(J)>& x) {
    using N = nested_t<Base, O...>;
    const N r = Rule::algorithm(N(seeded<J, Base, O...>(x[J]))...);
    if constexpr (sizeof...(O) == 0)
        return r;
    else
        return coefficient<O...>(r);
}

// The partial of orders O at plain numbers: the rule's closed form where it knows one (its
// conventions at the edges), NaN outside the domain of the series, else from the series.
template <class Rule, std::size_t... O, class T>
T partial_value(const std::array<T, sizeof...(O)>& x) {
    constexpr auto operands = std::make_index_sequence<sizeof...(O)>{};
    const std::optional<T> known = [&]<std::size_t... J>(std::index_sequence<J...>) {
        return Rule::template known<O...>(x[J]...);
    }(operands);
    if (known)
        return *known;
    const bool inside = [&]<std::size_t... J>(std::index_sequence<J...>) {
        return Rule::inside(x[J]...);
    }(operands);
    if (!inside)
        return std::numeric_limits<T>::quiet_NaN();
    return run_nested<Rule, O...>(operands, x);
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
        if constexpr (sizeof...(O) == 0)
            r = run_nested<Rule>(std::make_index_sequence<sizeof...(X)>{}, base).c;
        else
            r = run_nested<Rule, O...>(std::make_index_sequence<sizeof...(X)>{}, base).c;
    }
    r[0] = value;
    return r;
}

// The orders O with the I-th raised by one.
template <class Rule, std::size_t I, class Orders, class Indices>
struct raised;
template <class Rule, std::size_t I, std::size_t... O, std::size_t... J>
struct raised<Rule, I, std::index_sequence<O...>, std::index_sequence<J...>> {
    using type = partial_of<Rule, (O + (J == I ? 1 : 0))...>;
};
template <class Rule, std::size_t I, std::size_t... O>
using raised_t = typename raised<Rule, I, std::index_sequence<O...>,
                                 std::make_index_sequence<sizeof...(O)>>::type;

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

// Their values and partials run lane by lane on plain numbers.
template <class Rule, std::size_t... Order>
inline constexpr bool native_value_on_lanes<partial_of<Rule, Order...>> = false;
template <class Rule, std::size_t... Order>
inline constexpr bool native_partials_on_lanes<partial_of<Rule, Order...>> = false;

// The first partial in operand I of a rule whose derivatives are partial_of's, at x.
template <class Rule, std::size_t I, class... X>
auto first_partial(const X&... x) {
    return detail::first_partial<Rule, I>::type::value(x...);
}

}  // namespace nabla::rules
