#pragma once
// Trigonometric functions and their inverses.

#include <cmath>

#include "rule.hpp"

namespace nabla::rules {

struct sin_rule {
    static constexpr const char* name = "sin";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::sin;
        return sin(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::cos;
        return cos(x);
    }
};

struct cos_rule {
    static constexpr const char* name = "cos";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::cos;
        return cos(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::sin;
        return -sin(x);
    }
};

// tan' = 1 + tan^2, reusing the value.
struct tan_rule {
    static constexpr const char* name = "tan";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::tan;
        return tan(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X&) {
        return one + y * y;
    }
};

// asin' = 1/sqrt(1 - x^2); +inf at |x| = 1. (The factored form (1-x)(1+x) would be a little more
// accurate near |x| = 1, where the derivative is ill-conditioned anyway, but its own derivative
// (1-x) - (1+x) cancels near 0, costing the second derivative its accuracy there.)
struct asin_rule {
    static constexpr const char* name = "asin";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::asin;
        return asin(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::sqrt;
        return one / sqrt(one - x * x);
    }
};

struct acos_rule {
    static constexpr const char* name = "acos";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::acos;
        return acos(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::sqrt;
        return minus_one / sqrt(one - x * x);
    }
};

struct atan_rule {
    static constexpr const char* name = "atan";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::atan;
        return atan(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        return one / (one + x * x);
    }
};

// atan2(a, b): the angle of the point (b, a). d/da = b/r^2, d/db = -a/r^2 with r = hypot(a, b),
// computed as (b/r)/r so that r^2 cannot overflow or underflow. At the origin both partials are 0
// by convention (the strong-zero quotient), instead of 0/0.
struct atan2_rule {
    static constexpr const char* name = "atan2";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        using std::atan2;
        return atan2(a, b);
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y&, const A& a, const B& b) {
        using std::hypot;
        if constexpr (I == 0)
            return div_strong_zero(div_strong_zero(b, hypot(a, b)), hypot(a, b));
        else
            return div_strong_zero(div_strong_zero(-a, hypot(a, b)), hypot(a, b));
    }
};

}  // namespace nabla::rules
