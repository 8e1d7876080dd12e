#pragma once
// What a rule is, and the helper functions the rules are written with.
//
// A rule is a small struct that defines one elementary operation once, for every mode:
//
//   struct sin_rule {
//       static constexpr const char* name = "sin";
//       static constexpr std::size_t arity = 1;
//       template <class X> static constexpr auto value(const X& x);                // sin(x)
//       template <std::size_t I, class Y, class X>
//       static constexpr auto partial(const Y& y, const X& x);                     // d y / d x_I
//       template <class T, std::size_t K>
//       static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& u);  // Taylor
//   };
//
// `partial<I>` receives the operation's own result `y` and its operands. Both are written
// generically: called with numbers they compute numbers (the reverse sweep), called with static
// expressions they build expressions (the symbolic derivative nabla::d), so there is one
// definition of each derivative in the library. Infix operators also give `symbol` and
// `precedence` for printing.
//
// `series`, where a rule has one, is its Taylor-coefficient recurrence: it maps the normalised
// coefficients u_0 ... u_K of its operands to those of its result in O(K^2), from the ODE the
// function satisfies (sin: y' = cos(u) u', cos' = -y u'), written with the kernels of series.hpp
// and with y_0 from the rule's own value(). nabla::taylor calls it; a unary rule without one gets
// its series from its partial, evaluated on a series of order K-1 and integrated.
//
// Conventions at points where the classical derivative does not exist are part of the rules and
// are documented in docs/conventions.md; the helpers below carry most of them.

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../config.hpp"
#include "../literal.hpp"

namespace nabla::rules {

inline constexpr literal<0> zero{};
inline constexpr literal<1> one{};
inline constexpr literal<2> two{};
inline constexpr literal<3> three{};
inline constexpr literal<-1> minus_one{};

// A rule applied to operands of any mode, for the rules that no function of the function list
// names (partial_of.hpp): each mode defines apply_rule(rule_tag<Rule>, operands...) for its own
// numbers and expressions, which argument-dependent lookup finds through the tag.
template <class Rule>
struct rule_tag {};

// A compile-time constant passed as a function argument: a plain number of x's type when x is a
// number (std::hypot(x, 1.0)), the exact constant itself when x is an expression.
template <class X, CompileTimeConstant C>
constexpr auto like(const X&, C c) {
    if constexpr (Number<X>)
        return as<X>(c);
    else
        return c;
}

// A quiet NaN of a number type; on lanes, in every lane (numeric_limits knows no SIMD types).
template <class T>
NABLA_HOST_DEVICE constexpr T nan_of() {
    if constexpr (Lanes<T>)
        return T(std::numeric_limits<typename T::value_type>::quiet_NaN());
    else
        return std::numeric_limits<T>::quiet_NaN();
}

// The rules' one branch on lanes: select(condition, a, b) lane by lane is xsimd's, found by
// argument-dependent lookup; this one serves plain conditions.
template <class T>
NABLA_HOST_DEVICE constexpr T select(bool condition, const T& a, const T& b) {
    return condition ? a : b;
}

// Whether x is NaN, lane by lane on lanes: xsimd's != on AVX-512 is the ordered comparison, for
// which NaN != NaN is false, so x != x is no NaN test there.
template <class T>
NABLA_HOST_DEVICE constexpr auto is_nan(const T& x) {
    if constexpr (Lanes<T>)
        return isnan(x);
    else
        return x != x;
}

// Lane by lane: f applied to each lane's plain numbers, for rules whose SIMD functions differ
// from the standard library's at the edges (native_on_lanes below).
template <class F, class T, class... Ts>
T per_lane(F f, const T& first, const Ts&... rest) {
    using V = typename T::value_type;
    constexpr std::size_t W = T::size;
    std::array<V, W> out{};
    std::array<std::array<V, W>, 1 + sizeof...(Ts)> in{};
    std::size_t k = 0;
    first.store_unaligned(in[k++].data());
    (rest.store_unaligned(in[k++].data()), ...);
    for (std::size_t lane = 0; lane < W; ++lane) {
        const auto r = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return f(in[0][lane], in[1 + I][lane]...);
        }
        (std::index_sequence_for<Ts...>{});
        if constexpr (CompileTimeConstant<std::remove_cvref_t<decltype(r)>>)
            out[lane] = as<V>(r);
        else
            out[lane] = static_cast<V>(r);
    }
    return T::load_unaligned(out.data());
}

// exp and exp2 on lanes where nabla has kernels of its own (batches of doubles: simd/exp.hpp,
// which specialises this); other lanes run them lane by lane on the C library's.
template <class T>
struct lanes_exponential {};
template <class T>
concept OwnExponential = requires(const T& x) {
    lanes_exponential<T>::exp(x);
    lanes_exponential<T>::exp2(x);
};

// per_lane for a batch that rarely needs it (an element beyond lanes_limit), out of the loop's
// way: inlined, its calls make clang++ keep a fused loop's values in memory, 1.6x slower.
template <class F, class T, class... Ts>
[[gnu::noinline, gnu::cold]] T per_lane_rarely(F f, T first, Ts... rest) {
    return per_lane(f, first, rest...);
}

// Whether a rule's value and its partials may use xsimd's functions on lanes. Where xsimd 8.1
// differs from the C library at the edges (pow(0, 0) is 0 there, atan2(0, 0) NaN, erf(1e300) NaN,
// log of a subnormal off by up to 33, hypot overflows, tgamma of 1e10 does not return), the
// rule's file sets these to false and the rule runs lane by lane on the C library's functions, so
// that every element follows the same conventions wherever it falls in a batch.
template <class Rule>
inline constexpr bool native_value_on_lanes = true;
template <class Rule>
inline constexpr bool native_partials_on_lanes = true;
// Both false for a rule: its values and partials run lane by lane.
#define NABLA_LANE_BY_LANE(rule)                                                                   \
    template <>                                                                                    \
    inline constexpr bool native_value_on_lanes<rule> = false;                                     \
    template <>                                                                                    \
    inline constexpr bool native_partials_on_lanes<rule> = false;

// Whether an indexed function's index is a real order (the cylindrical Bessel functions' v),
// held as a floating-point number, rather than an integer (polygamma's order, hermite's degree).
// Either way it is a constant, never differentiated.
template <class Rule>
inline constexpr bool real_order = requires {
    requires Rule::real_order;
};
// The index arguments the modes take for it (an integer; any number for a real order), and the
// index as the rule computes with it (an int; a T for a real order).
template <class Rule, class I>
inline constexpr bool index_argument = std::is_integral_v<I> ||
                                       (real_order<Rule> && std::is_arithmetic_v<I>);
template <class Rule, class T, class I>
constexpr auto index_cast(const I& n) {
    if constexpr (real_order<Rule>)
        return static_cast<T>(n);
    else
        return static_cast<int>(n);
}

// Whether a rule's partials cost about what reading them back from memory costs (arithmetic;
// exp's partial is its value): arrays on the tape (array/active.hpp) then recompute them in the
// sweep from the values they keep, rather than store an array of them.
template <class Rule>
inline constexpr bool cheap_partials = false;

// Beyond this magnitude, and at infinities and NaN, a rule's SIMD function converts its
// argument to an integer out of range (xsimd 8.1's exponentials and trigonometric reductions
// without AVX-512: undefined behaviour, which UBSan reports) or leaves the C library's results
// (exp's subnormal results); a batch holding such an element runs lane by lane instead. One
// comparison a batch. 0: no such limit.
template <class Rule>
inline constexpr double lanes_limit = 0.0;

template <class T>
NABLA_ALWAYS_INLINE bool beyond(const T& x, double limit) {
    // One comparison: NaN fails it too.
    if constexpr (Lanes<T>)
        return !all(abs(x) <= T(limit));
    else
        return false;
}

template <class... X>
inline constexpr bool any_lanes = (Lanes<X> || ...);

template <class Rule, class... X>
NABLA_ALWAYS_INLINE constexpr auto value_on(const X&... x) {
    const auto by_lane = [](const auto&... v) { return Rule::value(v...); };
    if constexpr (any_lanes<X...> && !native_value_on_lanes<Rule>) {
        return per_lane(by_lane, x...);
    } else if constexpr (any_lanes<X...> && lanes_limit<Rule> > 0.0) {
        if ((beyond(x, lanes_limit<Rule>) || ...)) [[unlikely]]
            return per_lane_rarely(by_lane, x...);
        return Rule::value(x...);
    } else {
        return Rule::value(x...);
    }
}

template <class Rule, std::size_t I, class Y, class... X>
NABLA_ALWAYS_INLINE constexpr auto partial_on(const Y& y, const X&... x) {
    const auto by_lane = [](const auto& w, const auto&... v) {
        return Rule::template partial<I>(w, v...);
    };
    if constexpr (Lanes<Y> && !native_partials_on_lanes<Rule>) {
        return per_lane(by_lane, y, x...);
    } else if constexpr (Lanes<Y> && lanes_limit<Rule> > 0.0 && !cheap_partials<Rule> &&
                         Lanes<decltype(Rule::template partial<I>(y, x...))>) {
        // (Cheap partials are arithmetic on the value, which was computed within the limit.)
        if ((beyond(x, lanes_limit<Rule>) || ...)) [[unlikely]]
            return per_lane_rarely(by_lane, y, x...);
        return Rule::template partial<I>(y, x...);
    } else {
        return Rule::template partial<I>(y, x...);
    }
}

// sign(x): -1, 0 or +1; sign(0) = 0 (so abs'(0) = 0), NaN for NaN.
template <Number T>
NABLA_HOST_DEVICE constexpr T sign(const T& x) {
    if constexpr (Lanes<T>) {
        return select(x > T(0), T(1), select(x < T(0), T(-1), select(x == T(0), T(0), x)));
    } else {
        if (x > T(0))
            return T(1);
        if (x < T(0))
            return T(-1);
        if (x == T(0))
            return T(0);
        return x;
    }
}

// a * b, except that a == 0 gives exactly 0 even when b is infinite or NaN. Used where a factor
// that vanishes identically meets a factor that blows up at the same point (pow(0, y)).
template <Number A, Number B>
NABLA_HOST_DEVICE constexpr std::common_type_t<A, B> mul_strong_zero(const A& a, const B& b) {
    using T = std::common_type_t<A, B>;
    if constexpr (Lanes<T>)
        return select(T(a) == T(0), T(0), T(a) * T(b));
    else
        return a == A(0) ? T(0) : T(a) * T(b);
}

// a / b, except that a == 0 gives exactly 0 even when b == 0 (atan2 and hypot at the origin).
template <Number A, Number B>
NABLA_HOST_DEVICE constexpr std::common_type_t<A, B> div_strong_zero(const A& a, const B& b) {
    using T = std::common_type_t<A, B>;
    if constexpr (Lanes<T>)
        return select(T(a) == T(0), T(0), T(a) / T(b));
    else
        return a == A(0) ? T(0) : T(a) / T(b);
}

// The share of min(a, b)'s derivative that goes to a: 1 if a < b, 1/2 at a tie, 0 if a > b;
// NaN if either is NaN.
template <Number A, Number B>
NABLA_HOST_DEVICE constexpr std::common_type_t<A, B> min_weight(const A& a, const B& b) {
    using T = std::common_type_t<A, B>;
    if constexpr (Lanes<T>) {
        return select(a < b, T(1), select(b < a, T(0), select(a == b, T(0.5), nan_of<T>())));
    } else {
        if (a < b)
            return T(1);
        if (b < a)
            return T(0);
        if (a == b)
            return T(0.5);
        return std::numeric_limits<T>::quiet_NaN();
    }
}

// The share of fmin(a, b)'s derivative that goes to a, where a NaN operand counts as missing:
// like min_weight, but 1 if only b is NaN and 0 if only a is NaN.
template <Number A, Number B>
NABLA_HOST_DEVICE constexpr std::common_type_t<A, B> fmin_weight(const A& a, const B& b) {
    using T = std::common_type_t<A, B>;
    if constexpr (Lanes<T>) {
        const auto a_nan = is_nan(a);
        const auto b_nan = is_nan(b);
        return select(a_nan && b_nan, nan_of<T>(),
                      select(b_nan, T(1), select(a_nan, T(0), min_weight(a, b))));
    } else {
        const bool a_nan = a != a;
        const bool b_nan = b != b;
        if (a_nan && b_nan)
            return std::numeric_limits<T>::quiet_NaN();
        if (b_nan)
            return T(1);
        if (a_nan)
            return T(0);
        return min_weight(a, b);
    }
}

// The share of fmax(a, b)'s derivative that goes to a (NaN counts as missing): fmax(a, b) is
// -fmin(-a, -b), and negation keeps NaN a NaN.
template <Number A, Number B>
NABLA_HOST_DEVICE constexpr std::common_type_t<A, B> fmax_weight(const A& a, const B& b) {
    return fmin_weight(-a, -b);
}

namespace detail {

// The index n of f(n, x) as an int: an array expression evaluates its constants as floating-point
// lanes.
template <class N>
constexpr int index_of(const N& n) {
    return static_cast<int>(n);
}

// The constant index N of an indexed function called inside a rule: an int next to numbers, the
// exact literal next to expressions (as order_zero).
template <int N, class X>
constexpr auto constant_index(const X&) {
    if constexpr (Number<X>)
        return N;
    else
        return literal<N>{};
}

}  // namespace detail

}  // namespace nabla::rules
