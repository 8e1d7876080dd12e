#pragma once
// Functions with kinks or jumps: abs, sign, min/max, floor/ceil/round/trunc, fmod, and the
// piecewise constant weights that carry min/max derivatives.
//
// Conventions (docs/conventions.md): abs'(0) = 0 (sign(0) = 0, the centre of the subgradient
// [-1, 1]); at a tie min and max give each operand half of the derivative; floor, ceil, round,
// trunc and sign have derivative 0 everywhere, including at their jumps.

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "rule.hpp"
#include "series_number.hpp"

namespace nabla::rules {

struct abs_rule {
    static constexpr const char* name = "abs";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::abs;
        return abs(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        return sign(x);
    }
};

// Value-only rules: piecewise constant, derivative 0.
template <class Derived>
struct piecewise_constant {
    template <std::size_t I, class Y, class... X>
    static constexpr auto partial(const Y&, const X&...) {
        return zero;
    }
    // Its Taylor series is its value: every coefficient past the first is 0.
    template <class T, std::size_t K, class... X>
    static constexpr std::array<T, K + 1> series(const X&... x) {
        std::array<T, K + 1> y{};
        y[0] = Derived::value(x[0]...);
        return y;
    }
};

struct sign_rule : piecewise_constant<sign_rule> {
    static constexpr const char* name = "sign";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        return sign(x);
    }
};

struct floor_rule : piecewise_constant<floor_rule> {
    static constexpr const char* name = "floor";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::floor;
        return floor(x);
    }
};

struct ceil_rule : piecewise_constant<ceil_rule> {
    static constexpr const char* name = "ceil";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::ceil;
        return ceil(x);
    }
};

// round: halfway cases away from zero, as std::round.
struct round_rule : piecewise_constant<round_rule> {
    static constexpr const char* name = "round";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::round;
        return round(x);
    }
};

struct trunc_rule : piecewise_constant<trunc_rule> {
    static constexpr const char* name = "trunc";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::trunc;
        return trunc(x);
    }
};

struct min_weight_rule : piecewise_constant<min_weight_rule> {
    static constexpr const char* name = "min_weight";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        return min_weight(a, b);
    }
};

struct fmin_weight_rule : piecewise_constant<fmin_weight_rule> {
    static constexpr const char* name = "fmin_weight";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        return fmin_weight(a, b);
    }
};

struct fmax_weight_rule : piecewise_constant<fmax_weight_rule> {
    static constexpr const char* name = "fmax_weight";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        return fmax_weight(a, b);
    }
};

// The series of min, max, fmin and fmax. Near the point they are linear, y = w_a a + w_b b, with
// the rule's partials at the values as constant weights (1 and 0 away from a tie, 1/2 each at a
// tie), so their series is the operands' series weighted by those partials.
template <class Derived>
struct piecewise_linear {
    // y' = w_a a' + w_b b'.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& a,
                                                 const std::array<T, K + 1>& b) {
        const T y = Derived::value(a[0], b[0]);
        const T wa = Derived::template partial<0>(y, a[0], b[0]);
        const T wb = Derived::template partial<1>(y, a[0], b[0]);
        std::array<T, K + 1> r{};
        r[0] = y;
        for (std::size_t k = 1; k <= K; ++k)
            r[k] = wa * a[k] + wb * b[k];
        return r;
    }
};

// min and max propagate NaN as IEEE arithmetic does (unlike std::min); fmin and fmax treat a NaN
// operand as missing, as the C functions do.
struct min_rule : piecewise_linear<min_rule> {
    static constexpr const char* name = "min";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        if constexpr (Lanes<A>) {
            return select(is_nan(a) || is_nan(b), a + b, select(b < a, b, a));
        } else {
            if (a != a || b != b)
                return a + b;
            return b < a ? b : a;
        }
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y&, const A& a, const B& b) {
        if constexpr (I == 0)
            return min_weight(a, b);
        else
            return min_weight(b, a);
    }
};

struct max_rule : piecewise_linear<max_rule> {
    static constexpr const char* name = "max";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        if constexpr (Lanes<A>) {
            return select(is_nan(a) || is_nan(b), a + b, select(a < b, b, a));
        } else {
            if (a != a || b != b)
                return a + b;
            return a < b ? b : a;
        }
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y&, const A& a, const B& b) {
        if constexpr (I == 0)
            return min_weight(b, a);
        else
            return min_weight(a, b);
    }
};

struct fmin_rule : piecewise_linear<fmin_rule> {
    static constexpr const char* name = "fmin";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        if constexpr (Lanes<A>) {
            // xsimd's fmin is its min with AVX-512, which does not skip a NaN operand.
            using std::min;
            return select(is_nan(a), b, select(is_nan(b), a, min(a, b)));
        } else {
            using std::fmin;
            return fmin(a, b);
        }
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y&, const A& a, const B& b) {
        if constexpr (I == 0)
            return fmin_weight(a, b);
        else
            return fmin_weight(b, a);
    }
};

struct fmax_rule : piecewise_linear<fmax_rule> {
    static constexpr const char* name = "fmax";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        if constexpr (Lanes<A>) {
            // xsimd's fmax is its max with AVX-512, which does not skip a NaN operand.
            using std::max;
            return select(is_nan(a), b, select(is_nan(b), a, max(a, b)));
        } else {
            using std::fmax;
            return fmax(a, b);
        }
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y&, const A& a, const B& b) {
        if constexpr (I == 0)
            return fmax_weight(a, b);
        else
            return fmax_weight(b, a);
    }
};

// Without SSE4.1 xsimd rounds through an integer conversion (rules/rule.hpp); beyond 2^52 every
// double is an integer already.
template <>
inline constexpr double lanes_limit<floor_rule> = 4503599627370496.0;
template <>
inline constexpr double lanes_limit<ceil_rule> = 4503599627370496.0;
template <>
inline constexpr double lanes_limit<round_rule> = 4503599627370496.0;
template <>
inline constexpr double lanes_limit<trunc_rule> = 4503599627370496.0;

// (fmod's plain-number function, which its rule calls.)
template <Number A, Number B>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>) auto fmod(const A& x, const B& y) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<B>>;
    return std::fmod(T(x), T(y));
}

// fmod(x, y) = x - n y with n = trunc(x / y): d/dx = 1, d/dy = -n, the quotient read back from
// the exact remainder r as round((x - r) / y) (trunc(x / y) rounds: fmod(1, 0.1) has n = 9, while
// 1 / 0.1 is 10). At a jump (r = 0) the derivative is that of the side r lies on.
struct fmod_rule {
    static constexpr const char* name = "fmod";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& x, const B& y) {
        return fmod(x, y);
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y& r, const A& x, const B& y) {
        using std::round;
        if constexpr (I == 0)
            return one;
        else
            return -round((x - r) / y);
    }
};

NABLA_LANE_BY_LANE(fmod_rule)

}  // namespace nabla::rules
