#pragma once
// Trigonometric functions and their inverses.

#include <cmath>

#include "rule.hpp"

namespace nabla::rules {

struct sin_rule {
    static constexpr const char* name = "sin";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) { using std::sin; return sin(x); }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) { using std::cos; return cos(x); }
};

struct cos_rule {
    static constexpr const char* name = "cos";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) { using std::cos; return cos(x); }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) { using std::sin; return -sin(x); }
};

// tan' = 1 + tan^2, reusing the value.
struct tan_rule {
    static constexpr const char* name = "tan";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) { using std::tan; return tan(x); }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X&) { return one + y * y; }
};

// asin' = 1/sqrt((1-x)(1+x)): the factored form keeps accuracy near |x| = 1; +inf at |x| = 1.
struct asin_rule {
    static constexpr const char* name = "asin";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) { using std::asin; return asin(x); }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::sqrt;
        return one / sqrt((one - x) * (one + x));
    }
};

struct acos_rule {
    static constexpr const char* name = "acos";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) { using std::acos; return acos(x); }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) {
        using std::sqrt;
        return minus_one / sqrt((one - x) * (one + x));
    }
};

struct atan_rule {
    static constexpr const char* name = "atan";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) { using std::atan; return atan(x); }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y&, const X& x) { return one / (one + x * x); }
};

// atan2(a, b): the angle of the point (b, a). At the origin both partials are 0 by convention
// (the strong-zero quotient), instead of 0/0.
struct atan2_rule {
    static constexpr const char* name = "atan2";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) { using std::atan2; return atan2(a, b); }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y&, const A& a, const B& b) {
        if constexpr (I == 0) return div_strong_zero(b, a * a + b * b);
        else return div_strong_zero(-a, a * a + b * b);
    }
};

}  // namespace nabla::rules
