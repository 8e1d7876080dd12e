#pragma once
// nabla::dual<T, N>: a number with N tangent directions, for forward mode (dual<T, N, true>: the
// same with structural zeros kept strong across directions, below).
//
// One evaluation of a function on duals gives its value and N directional derivatives. Every
// operation comes from the rule table: the value is Rule::value, and each tangent is the rule's
// partials times the operands' tangents, so a dual number knows no calculus of its own. Duals
// nest (dual<dual<double, N>, M> carries second derivatives) because the rules are generic over
// the scalar type, and they are plain numbers to the rest of nabla: a static expression can be
// evaluated on them.
//
// Works with the standard idioms: `using std::sin; sin(x)` finds nabla's overloads by
// argument-dependent lookup; comparisons compare values; mixed arithmetic with double, float and
// int; std::numeric_limits and std::common_type are specialised; isfinite/isnan/isinf are found by
// argument-dependent lookup like the math functions.

#include <algorithm>
#include <array>
#include <cmath>
#include <compare>
#include <cstddef>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "../concepts.hpp"
#include "../config.hpp"
#include "../core/evaluate.hpp"
#include "../core/functions.hpp"
#include "../core/zero.hpp"
#include "../rules.hpp"
#include "../rules/functions.hpp"
#include "../simd/tangents.hpp"
#include "../values.hpp"

namespace nabla {

// The number of directions of a dual known only at run time: dual<double, nabla::dynamic> keeps
// its tangents in a std::vector (a constant's is empty and reads as zeros).
inline constexpr std::size_t dynamic = std::numeric_limits<std::size_t>::max();

template <class T, std::size_t N, bool Strong = false>
struct dual {
    static_assert(N > 0,
                  "nabla::dual<T, N>: N, the number of tangent directions, must be positive");

    using value_type = T;
    using tangent_type = std::conditional_t<N == dynamic, std::vector<T>, std::array<T, N>>;
    static constexpr std::size_t size = N;

    T value{};
    tangent_type tangent{};

    constexpr dual() = default;
    // A constant: its tangents are zero. Implicit, so that mixed arithmetic with plain numbers and
    // generic code such as `T s = 0;` just work.
    template <class U>
    requires(std::is_convertible_v<U, T> && !std::is_same_v<std::remove_cvref_t<U>, dual> &&
             !Expression<U>) constexpr dual(const U& v)
        : value(static_cast<T>(v)) {}
    constexpr dual(const T& v, const tangent_type& t) : value(v), tangent(t) {}

    // An explicit conversion to a plain number drops the tangents.
    template <class U>
    requires(std::is_arithmetic_v<U> && !std::is_same_v<U, long double>) constexpr explicit
    operator U() const {
        return static_cast<U>(value);
    }
    // std::sin(x) and the like: a compile-time error that says to call sin unqualified
    // (concepts.hpp).
    template <class U>
    requires std::is_same_v<U, long double>
    constexpr operator U() const { return detail::refuse_std_function<U>(); }

    constexpr dual& operator+=(const dual& other) { return *this = *this + other; }
    constexpr dual& operator-=(const dual& other) { return *this = *this - other; }
    constexpr dual& operator*=(const dual& other) { return *this = *this * other; }
    constexpr dual& operator/=(const dual& other) { return *this = *this / other; }
};

template <class T, std::size_t N, bool S>
inline constexpr bool is_number_v<dual<T, N, S>> = true;

template <class T>
inline constexpr bool is_dual_v = false;
template <class T, std::size_t N, bool S>
inline constexpr bool is_dual_v<dual<T, N, S>> = true;

namespace detail {

// A plain-number operand of a dual operation, as the innermost number type: a constant stays a
// plain number at every level of nesting, so no rule ever computes a partial with respect to it
// (log of a negative base in pow(x, 2.0) would otherwise turn 0 * NaN into a NaN tangent).
template <class T, class U>
constexpr auto as_constant(const U& u) {
    return static_cast<typename primal_type<T>::type>(u);
}

// The number of directions of a dual, and its i-th tangent (zero past the end of a run-time-sized
// dual's tangents, so that constants need no storage).
template <class T, std::size_t N, bool S>
constexpr std::size_t directions(const dual<T, N, S>& x) {
    if constexpr (N == dynamic)
        return x.tangent.size();
    else
        return N;
}

template <class T, std::size_t N, bool S>
constexpr T tangent_at(const dual<T, N, S>& x, std::size_t i) {
    if constexpr (N == dynamic)
        return i < x.tangent.size() ? x.tangent[i] : T(0);
    else
        return x.tangent[i];
}

template <class T, std::size_t N, bool S>
constexpr void make_room(dual<T, N, S>& r, std::size_t n) {
    if constexpr (N == dynamic)
        r.tangent.assign(n, T(0));
}

// A rule whose own products are strong zeros (mul_strong_zero: n * pow(x, n - 1) with n = 0 is
// 0 even where the power is infinite) takes the strong path always: a term with an exactly-zero
// factor is 0, so pow(x, 0) has second derivative 0 at x = 0, not NaN.
template <class Rule>
concept strong_zero_rule = requires {
    Rule::strong_zero;
};

template <class T>
constexpr T strong_product(const T& a, const T& b) {
    return exactly_zero(a) || exactly_zero(b) ? T(0) : a * b;
}

// A strong dual (dual<T, N, true>, docs/conventions.md) keeps structural zeros strong across its
// directions: a partial times a tangent that is exactly zero is 0, even where the partial is
// infinite or NaN. (The transformations evaluate on it again when a plain dual's tangents have a
// NaN: sqrt(x) + y at x = 0 has d/dy = 1, not inf * 0.)
template <class T>
constexpr T tangent_product(const T& p, const T& t) {
    return exactly_zero(t) ? T(0) : p * t;
}

// r's tangents: Product(p, x's tangents), or the sum of two such terms, with one of the guarded
// products above (the strong path of a strong-zero rule, and every product of a strong dual).
template <auto Product, class T, std::size_t N, bool S>
constexpr void guarded_scale(dual<T, N, S>& r, const T& p, const dual<T, N, S>& x) {
    if constexpr (N == dynamic)
        make_room(r, directions(x));
    for (std::size_t i = 0; i < directions(r); ++i)
        r.tangent[i] = Product(p, tangent_at(x, i));
}
template <auto Product, class T, std::size_t N, bool S>
constexpr void guarded_combine(
    dual<T, N, S>& r, const T& pa, const dual<T, N, S>& a, const T& pb, const dual<T, N, S>& b) {
    if constexpr (N == dynamic)
        make_room(r, std::max(directions(a), directions(b)));
    for (std::size_t i = 0; i < directions(r); ++i)
        r.tangent[i] = Product(pa, tangent_at(a, i)) + Product(pb, tangent_at(b, i));
}

template <class Rule, class T, std::size_t N, bool S>
NABLA_ALWAYS_INLINE constexpr dual<T, N, S> apply_unary(const dual<T, N, S>& x) {
    const T y = Rule::value(x.value);
    const T p = to_number<T>(Rule::template partial<0>(y, x.value));
    dual<T, N, S> r(y);
    if constexpr (S) {
        guarded_scale<tangent_product<T>>(r, p, x);
    } else if constexpr (N != dynamic) {
        simd::scale(r.tangent, p, x.tangent);
    } else {
        make_room(r, directions(x));
        for (std::size_t i = 0; i < r.tangent.size(); ++i)
            r.tangent[i] = p * x.tangent[i];
    }
    return r;
}

template <class Rule, class T, std::size_t N, bool S>
NABLA_ALWAYS_INLINE constexpr dual<T, N, S> apply_binary(const dual<T, N, S>& a,
                                                         const dual<T, N, S>& b) {
    const T y = Rule::value(a.value, b.value);
    const T pa = to_number<T>(Rule::template partial<0>(y, a.value, b.value));
    const T pb = to_number<T>(Rule::template partial<1>(y, a.value, b.value));
    dual<T, N, S> r(y);
    if constexpr (strong_zero_rule<Rule>)
        guarded_combine<strong_product<T>>(r, pa, a, pb, b);
    else if constexpr (S)
        guarded_combine<tangent_product<T>>(r, pa, a, pb, b);
    else if constexpr (N != dynamic) {
        simd::combine(r.tangent, pa, a.tangent, pb, b.tangent);
    } else {
        make_room(r, std::max(directions(a), directions(b)));
        for (std::size_t i = 0; i < r.tangent.size(); ++i)
            r.tangent[i] = pa * tangent_at(a, i) + pb * tangent_at(b, i);
    }
    return r;
}

// A plain number operand is a constant: only the dual operand's partial is needed.
template <class Rule, class T, std::size_t N, bool S, class U>
NABLA_ALWAYS_INLINE constexpr dual<T, N, S> apply_left(const dual<T, N, S>& a, const U& b) {
    const T y = Rule::value(a.value, b);
    const T pa = to_number<T>(Rule::template partial<0>(y, a.value, b));
    dual<T, N, S> r(y);
    if constexpr (strong_zero_rule<Rule>)
        guarded_scale<strong_product<T>>(r, pa, a);
    else if constexpr (S)
        guarded_scale<tangent_product<T>>(r, pa, a);
    else if constexpr (N != dynamic) {
        simd::scale(r.tangent, pa, a.tangent);
    } else {
        make_room(r, directions(a));
        for (std::size_t i = 0; i < r.tangent.size(); ++i)
            r.tangent[i] = pa * a.tangent[i];
    }
    return r;
}

// The last operand a dual number, those before it constants.
template <class Rule, class T, std::size_t N, bool S, class... U>
NABLA_ALWAYS_INLINE constexpr dual<T, N, S> apply_last(const dual<T, N, S>& b, const U&... a) {
    const T y = Rule::value(a..., b.value);
    const T pb = to_number<T>(Rule::template partial<sizeof...(U)>(y, a..., b.value));
    dual<T, N, S> r(y);
    if constexpr (strong_zero_rule<Rule>)
        guarded_scale<strong_product<T>>(r, pb, b);
    else if constexpr (S)
        guarded_scale<tangent_product<T>>(r, pb, b);
    else if constexpr (N != dynamic) {
        simd::scale(r.tangent, pb, b.tangent);
    } else {
        make_room(r, directions(b));
        for (std::size_t i = 0; i < r.tangent.size(); ++i)
            r.tangent[i] = pb * b.tangent[i];
    }
    return r;
}
template <class Rule, class T, std::size_t N, bool S, class U>
NABLA_ALWAYS_INLINE constexpr dual<T, N, S> apply_right(const U& a, const dual<T, N, S>& b) {
    return apply_last<Rule>(b, a);
}

// The number of directions of an operand; a constant has none.
template <class X>
constexpr std::size_t directions_of(const X& x) {
    if constexpr (is_dual_v<X>)
        return directions(x);
    else
        return 0;
}

// A rule applied to dual numbers of one type and constants beside them: the value at the duals'
// values, and only the duals' partials formed (a constant's may be infinite where its zero
// tangent would make the term vanish). Serves the functions of three operands and the rules no
// function names (rules/partial_of.hpp, through apply_rule).
template <class Rule, class T, std::size_t N, bool S, class... X>
constexpr dual<T, N, S> apply_mixed(const X&... x) {
    using D = dual<T, N, S>;
    const auto inner = [](const auto& u) -> decltype(auto) {
        if constexpr (std::is_same_v<std::remove_cvref_t<decltype(u)>, D>)
            return (u.value);
        else
            return (u);
    };
    const T y = to_number<T>(Rule::value(inner(x)...));
    D r(y);
    std::size_t n = 0;
    ((n = std::is_same_v<X, D> ? std::max(n, directions_of(x)) : n), ...);
    make_room(r, n);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        const auto term = [&]<std::size_t J>(std::integral_constant<std::size_t, J>,
                                             const auto& u) {
            if constexpr (std::is_same_v<std::remove_cvref_t<decltype(u)>, D>) {
                const T p = to_number<T>(Rule::template partial<J>(y, inner(x)...));
                for (std::size_t i = 0; i < n; ++i) {
                    if constexpr (S)
                        r.tangent[i] += tangent_product(p, tangent_at(u, i));
                    else
                        r.tangent[i] += p * tangent_at(u, i);
                }
            }
        };
        (term(std::integral_constant<std::size_t, I>{}, x), ...);
    }
    (std::index_sequence_for<X...>{});
    return r;
}

// The dual type among operands, the first one's.
template <class T>
struct is_dual_type : std::bool_constant<is_dual_v<T>> {};
template <class... X>
using dual_among_t = typename first_of<is_dual_type, X...>::type;

template <class Rule, class D, class... X>
struct mixed_application;
template <class Rule, class T, std::size_t N, bool S, class... X>
struct mixed_application<Rule, dual<T, N, S>, X...> {
    static constexpr dual<T, N, S> apply(const X&... x) { return apply_mixed<Rule, T, N, S>(x...); }
};

// A plain number (not a dual, not an expression) that mixes with dual<T, N, S>.
template <class U, class T>
concept ConstantFor = Number<U> && !is_dual_v<std::remove_cvref_t<U>> &&
                      std::is_convertible_v<U, T> && !Expression<U>;

// A number of an enclosing transformation (a dual of a level below dual<T, N, S>, or an active
// variable of reverse mode: a variable of the outer derivative captured by, or passed to, an
// inner one): it enters as a number of type T, its own derivatives kept, with no tangent at this
// level.
template <class U, class T>
concept LowerFor = (is_dual_v<std::remove_cvref_t<U>> || !Number<U>)&&!Expression<U> &&
                   std::is_convertible_v<U, T>;

// A number of another derivative that is not below dual<T, N, S>: a variable of an enclosing
// derivative meeting one of an inner derivative taken at plain numbers, at the same level. Their
// tangents would be confused, so the operators below refuse it at compile time.
template <class U, class D>
concept ForeignTo =
    (is_dual_v<std::remove_cvref_t<U>> ||
     is_recorded_number_v<std::remove_cvref_t<U>>)&&!std::is_same_v<std::remove_cvref_t<U>, D> &&
    !LowerFor<U, typename D::value_type> &&
    !LowerFor<D, typename std::remove_cvref_t<U>::value_type>;

template <class U>
constexpr void refuse_levels() {
    static_assert(always_false<U>,
                  "nabla: numbers of two nested derivatives meet at one level: an inner "
                  "derivative was taken at plain numbers (nabla::grad(inner, 3.0)) inside a "
                  "function being differentiated, and inner reads a variable x of the outer "
                  "derivative. Take the inner derivative at the outer derivative's numbers, "
                  "nabla::grad(inner, decltype(x)(3.0)), so that each level keeps its own "
                  "tangents.");
}

}  // namespace detail

// Numbers of two derivatives that are not nested (see ForeignTo): a compile-time error.
#define NABLA_DUAL_FOREIGN(op)                                                                     \
    template <class T, std::size_t N, bool S, class U>                                             \
    requires detail::ForeignTo<U, dual<T, N, S>>                                                   \
    constexpr dual<T, N, S> operator op(const dual<T, N, S>& a, const U&) {                        \
        detail::refuse_levels<U>();                                                                \
        return a;                                                                                  \
    }                                                                                              \
    template <class T, std::size_t N, bool S, class U>                                             \
    requires(detail::ForeignTo<U, dual<T, N, S>> &&                                                \
             !is_dual_v<std::remove_cvref_t<U>>) constexpr dual<T, N, S>                           \
    operator op(const U&, const dual<T, N, S>& b) {                                                \
        detail::refuse_levels<U>();                                                                \
        return b;                                                                                  \
    }
NABLA_DUAL_FOREIGN(+)
NABLA_DUAL_FOREIGN(-)
NABLA_DUAL_FOREIGN(*)
NABLA_DUAL_FOREIGN(/)
#undef NABLA_DUAL_FOREIGN

// Arithmetic.
#define NABLA_DUAL_OPERATOR(op, rule)                                                              \
    template <class T, std::size_t N, bool S>                                                      \
    constexpr dual<T, N, S> operator op(const dual<T, N, S>& a, const dual<T, N, S>& b) {          \
        return detail::apply_binary<rules::rule>(a, b);                                            \
    }                                                                                              \
    template <class T, std::size_t N, bool S, detail::ConstantFor<T> U>                            \
    constexpr dual<T, N, S> operator op(const dual<T, N, S>& a, const U& b) {                      \
        return detail::apply_left<rules::rule>(a, detail::as_constant<T>(b));                      \
    }                                                                                              \
    template <class T, std::size_t N, bool S, detail::ConstantFor<T> U>                            \
    constexpr dual<T, N, S> operator op(const U& a, const dual<T, N, S>& b) {                      \
        return detail::apply_right<rules::rule>(detail::as_constant<T>(a), b);                     \
    }                                                                                              \
    template <class T, std::size_t N, bool S, detail::LowerFor<T> U>                               \
    constexpr dual<T, N, S> operator op(const dual<T, N, S>& a, const U& b) {                      \
        return detail::apply_left<rules::rule>(a, static_cast<T>(b));                              \
    }                                                                                              \
    template <class T, std::size_t N, bool S, detail::LowerFor<T> U>                               \
    constexpr dual<T, N, S> operator op(const U& a, const dual<T, N, S>& b) {                      \
        return detail::apply_right<rules::rule>(static_cast<T>(a), b);                             \
    }

NABLA_DUAL_OPERATOR(+, add_rule)
NABLA_DUAL_OPERATOR(-, sub_rule)
NABLA_DUAL_OPERATOR(*, mul_rule)
NABLA_DUAL_OPERATOR(/, div_rule)
#undef NABLA_DUAL_OPERATOR

template <class T, std::size_t N, bool S>
constexpr dual<T, N, S> operator-(const dual<T, N, S>& a) {
    return detail::apply_unary<rules::neg_rule>(a);
}

template <class T, std::size_t N, bool S>
constexpr dual<T, N, S> operator+(const dual<T, N, S>& a) {
    return a;
}

// Comparisons compare values, so code that branches on values (if (x > 0)) works on duals.
template <class T, std::size_t N, bool S>
constexpr bool operator==(const dual<T, N, S>& a, const dual<T, N, S>& b) {
    return a.value == b.value;
}
template <class T, std::size_t N, bool S, detail::ConstantFor<T> U>
constexpr bool operator==(const dual<T, N, S>& a, const U& b) {
    return a.value == static_cast<T>(b);
}
template <class T, std::size_t N, bool S>
constexpr auto operator<=>(const dual<T, N, S>& a, const dual<T, N, S>& b) {
    return a.value <=> b.value;
}
template <class T, std::size_t N, bool S, detail::ConstantFor<T> U>
constexpr auto operator<=>(const dual<T, N, S>& a, const U& b) {
    return a.value <=> static_cast<T>(b);
}
template <class T, std::size_t N, bool S, detail::LowerFor<T> U>
constexpr bool operator==(const dual<T, N, S>& a, const U& b) {
    return a.value == static_cast<T>(b);
}
template <class T, std::size_t N, bool S, detail::LowerFor<T> U>
constexpr auto operator<=>(const dual<T, N, S>& a, const U& b) {
    return a.value <=> static_cast<T>(b);
}

// The functions of the rule table.
#define NABLA_DUAL_UNARY(function, rule)                                                           \
    template <class T, std::size_t N, bool S>                                                      \
    constexpr dual<T, N, S> function(const dual<T, N, S>& x) {                                     \
        return detail::apply_unary<rules::rule>(x);                                                \
    }

#define NABLA_DUAL_BINARY(function, rule)                                                          \
    template <class T, std::size_t N, bool S>                                                      \
    constexpr dual<T, N, S> function(const dual<T, N, S>& a, const dual<T, N, S>& b) {             \
        return detail::apply_binary<rules::rule>(a, b);                                            \
    }                                                                                              \
    template <class T, std::size_t N, bool S, detail::ConstantFor<T> U>                            \
    constexpr dual<T, N, S> function(const dual<T, N, S>& a, const U& b) {                         \
        return detail::apply_left<rules::rule>(a, detail::as_constant<T>(b));                      \
    }                                                                                              \
    template <class T, std::size_t N, bool S, detail::ConstantFor<T> U>                            \
    constexpr dual<T, N, S> function(const U& a, const dual<T, N, S>& b) {                         \
        return detail::apply_right<rules::rule>(detail::as_constant<T>(a), b);                     \
    }                                                                                              \
    template <class T, std::size_t N, bool S, detail::LowerFor<T> U>                               \
    constexpr dual<T, N, S> function(const dual<T, N, S>& a, const U& b) {                         \
        return detail::apply_left<rules::rule>(a, static_cast<T>(b));                              \
    }                                                                                              \
    template <class T, std::size_t N, bool S, detail::LowerFor<T> U>                               \
    constexpr dual<T, N, S> function(const U& a, const dual<T, N, S>& b) {                         \
        return detail::apply_right<rules::rule>(static_cast<T>(a), b);                             \
    }

NABLA_UNARY_FUNCTIONS(NABLA_DUAL_UNARY)
NABLA_BINARY_FUNCTIONS(NABLA_DUAL_BINARY)
#undef NABLA_DUAL_UNARY
#undef NABLA_DUAL_BINARY

// pow with an integer exponent has its own rule, exact for negative bases.
template <class T, std::size_t N, bool S>
constexpr dual<T, N, S> pow(const dual<T, N, S>& a, const dual<T, N, S>& b) {
    return detail::apply_binary<rules::pow_rule>(a, b);
}
template <class T, std::size_t N, bool S, detail::ConstantFor<T> U>
constexpr dual<T, N, S> pow(const dual<T, N, S>& a, const U& b) {
    if constexpr (std::is_integral_v<U>)
        return detail::apply_left<rules::powi_rule>(a, b);
    else
        return detail::apply_left<rules::pow_rule>(a, detail::as_constant<T>(b));
}
template <class T, std::size_t N, bool S, detail::ConstantFor<T> U>
constexpr dual<T, N, S> pow(const U& a, const dual<T, N, S>& b) {
    return detail::apply_right<rules::pow_rule>(detail::as_constant<T>(a), b);
}
template <class T, std::size_t N, bool S, detail::LowerFor<T> U>
constexpr dual<T, N, S> pow(const dual<T, N, S>& a, const U& b) {
    return detail::apply_left<rules::pow_rule>(a, static_cast<T>(b));
}
template <class T, std::size_t N, bool S, detail::LowerFor<T> U>
constexpr dual<T, N, S> pow(const U& a, const dual<T, N, S>& b) {
    return detail::apply_right<rules::pow_rule>(static_cast<T>(a), b);
}

// ldexp(x, n) = x 2^n and frexp(x, e) = ldexp(x, -e) with e the exponent of x's value; the
// exponent as a dual (a static expression evaluated on duals holds it so) is a constant.
template <class T, std::size_t N, bool S, class I>
requires std::is_integral_v<I>
constexpr dual<T, N, S> ldexp(const dual<T, N, S>& x, I n) {
    return detail::apply_left<rules::ldexp_rule>(x, static_cast<int>(n));
}
template <class T, std::size_t N, bool S>
constexpr dual<T, N, S> ldexp(const dual<T, N, S>& x, const dual<T, N, S>& n) {
    return ldexp(x, static_cast<int>(primal(n)));
}
template <class T, std::size_t N, bool S>
dual<T, N, S> frexp(const dual<T, N, S>& x, int* e) {
    using std::frexp;
    frexp(primal(x), e);
    return ldexp(x, -*e);
}

// The functions of three operands, and the rules that no function names (rules/partial_of.hpp,
// through apply_rule): duals of one type, or constants beside them (plain numbers, or numbers
// of an enclosing derivative).
namespace detail {
template <class U, class D>
concept DualOrConstant = std::is_same_v<U, D> || ConstantFor<U, typename D::value_type> ||
    LowerFor<U, typename D::value_type>;
template <class D, class U>
constexpr auto dual_operand(const U& u) {
    if constexpr (std::is_same_v<U, D>)
        return u;
    else if constexpr (ConstantFor<U, typename D::value_type>)
        return as_constant<typename D::value_type>(u);
    else
        return static_cast<typename D::value_type>(u);
}
template <class Rule, class D, class... X>
constexpr D apply_to(const X&... x) {
    return mixed_application<Rule, D, X...>::apply(x...);
}
}  // namespace detail
#define NABLA_DUAL_TERNARY(function, rule)                                                         \
    template <class A, class B, class C, class D = detail::dual_among_t<A, B, C>>                  \
    requires(is_dual_v<D> && detail::DualOrConstant<A, D> && detail::DualOrConstant<B, D> &&       \
             detail::DualOrConstant<C, D>) constexpr D                                             \
    function(const A& a, const B& b, const C& c) {                                                 \
        return detail::apply_to<rules::rule, D>(                                                   \
            detail::dual_operand<D>(a), detail::dual_operand<D>(b), detail::dual_operand<D>(c));   \
    }
NABLA_DUAL_TERNARY(fma, fma_rule)
NABLA_DUAL_TERNARY(hypot, hypot3_rule)
NABLA_DUAL_TERNARY(ellint_3, ellint_3_rule)
#undef NABLA_DUAL_TERNARY

namespace rules {
template <class Rule, class... X>
requires((is_dual_v<X> || ...)) constexpr auto apply_rule(rule_tag<Rule>, const X&... x) {
    using D = nabla::detail::dual_among_t<X...>;
    return nabla::detail::apply_to<Rule, D>(nabla::detail::dual_operand<D>(x)...);
}
}  // namespace rules

// f(n, x) of a constant index n (an integer, or a real order); the index as a dual (a static
// expression evaluated on duals holds it so) must be a constant: one with a tangent is an error,
// since nabla has no derivative in the index.
#define NABLA_DUAL_INDEXED(function, rule)                                                         \
    template <class T, std::size_t N, bool S, class I>                                             \
    requires rules::index_argument<rules::rule, I>                                                 \
    constexpr dual<T, N, S> function(I n, const dual<T, N, S>& x) {                                \
        return detail::apply_right<rules::rule>(rules::index_cast<rules::rule, T>(n), x);          \
    }                                                                                              \
    template <class T, std::size_t N, bool S>                                                      \
    constexpr dual<T, N, S> function(const dual<T, N, S>& n, const dual<T, N, S>& x) {             \
        for (std::size_t i = 0; i < detail::directions(n); ++i)                                    \
            if (!(detail::tangent_at(n, i) == T(0)))                                               \
                throw std::domain_error("nabla::" #function "(n, x): the index or order n has a "  \
                                        "derivative; nabla differentiates in x only");             \
        return function(rules::index_cast<rules::rule, detail::primal_type_t<T>>(primal(n)), x);   \
    }
NABLA_INDEXED_FUNCTIONS(NABLA_DUAL_INDEXED)
#undef NABLA_DUAL_INDEXED

// f(n, a, x) of a constant degree n and a constant parameter a; either as a dual (a static
// expression evaluated on duals holds them so) must be a constant.
namespace detail {
template <class C>
constexpr auto constant_argument(const C& c, const char* function) {
    if constexpr (is_dual_v<C>) {
        for (std::size_t i = 0; i < directions(c); ++i)
            if (!(tangent_at(c, i) == std::remove_cvref_t<decltype(tangent_at(c, i))>(0)))
                throw std::domain_error(std::string("nabla::") + function +
                                        "(n, a, x): the degree n or the parameter a has a "
                                        "derivative; nabla differentiates in x only");
        return primal(c);
    } else {
        return c;
    }
}
// The degree: an integer (or such a dual); the parameter: a number (or such a dual).
template <class C, class T, std::size_t N, bool S>
concept DegreeFor = std::is_integral_v<C> || std::is_same_v<std::remove_cvref_t<C>, dual<T, N, S>>;
template <class C, class T, std::size_t N, bool S>
concept ParameterFor =
    std::is_arithmetic_v<C> || std::is_same_v<std::remove_cvref_t<C>, dual<T, N, S>>;
}  // namespace detail
#define NABLA_DUAL_PARAMETRIC(function, rule)                                                      \
    template <class T, std::size_t N, bool S, class I, class A>                                    \
    requires detail::DegreeFor<I, T, N, S> && detail::ParameterFor<A, T, N, S>                     \
    constexpr dual<T, N, S> function(const I& n, const A& a, const dual<T, N, S>& x) {             \
        using P = detail::primal_type_t<T>;                                                        \
        return detail::apply_last<rules::rule>(                                                    \
            x, static_cast<int>(detail::constant_argument(n, #function)),                          \
            static_cast<P>(detail::constant_argument(a, #function)));                              \
    }
NABLA_PARAMETRIC_FUNCTIONS(NABLA_DUAL_PARAMETRIC)
#undef NABLA_DUAL_PARAMETRIC

template <class T, std::size_t N, bool S>
constexpr dual<T, N, S> digamma(const dual<T, N, S>& x) {
    return polygamma(0, x);
}

template <class T, std::size_t N, bool S>
constexpr bool isfinite(const dual<T, N, S>& x) {
    using std::isfinite;
    return isfinite(x.value);
}
template <class T, std::size_t N, bool S>
constexpr bool isnan(const dual<T, N, S>& x) {
    using std::isnan;
    return isnan(x.value);
}
template <class T, std::size_t N, bool S>
constexpr bool isinf(const dual<T, N, S>& x) {
    using std::isinf;
    return isinf(x.value);
}

template <class T, std::size_t N, bool S>
std::ostream& operator<<(std::ostream& out, const dual<T, N, S>& x) {
    out << x.value << " [";
    for (std::size_t i = 0; i < detail::directions(x); ++i)
        out << (i ? ", " : "") << x.tangent[i];
    return out << "]";
}

}  // namespace nabla

// Mixed arithmetic types: dual<T, N, S> with a plain number U is a dual of their common type.
template <class T, std::size_t N, bool S, class U>
requires std::is_arithmetic_v<U>
struct std::common_type<nabla::dual<T, N, S>, U> {
    using type = nabla::dual<T, N, S>;
};
template <class T, std::size_t N, bool S, class U>
requires std::is_arithmetic_v<U>
struct std::common_type<U, nabla::dual<T, N, S>> {
    using type = nabla::dual<T, N, S>;
};

// The limits of the value type; a dual's tangents do not change its range.
template <class T, std::size_t N, bool S>
struct std::numeric_limits<nabla::dual<T, N, S>> : std::numeric_limits<T> {
    using value_type = nabla::dual<T, N, S>;
    static constexpr value_type min() noexcept { return std::numeric_limits<T>::min(); }
    static constexpr value_type max() noexcept { return std::numeric_limits<T>::max(); }
    static constexpr value_type lowest() noexcept { return std::numeric_limits<T>::lowest(); }
    static constexpr value_type epsilon() noexcept { return std::numeric_limits<T>::epsilon(); }
    static constexpr value_type infinity() noexcept { return std::numeric_limits<T>::infinity(); }
    static constexpr value_type quiet_NaN() noexcept { return std::numeric_limits<T>::quiet_NaN(); }
};
