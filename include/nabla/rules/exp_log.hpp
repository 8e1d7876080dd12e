#pragma once
// Exponentials and logarithms.

#include <cmath>

#include "rule.hpp"

namespace nabla::rules {

struct exp_rule {
    static constexpr const char* name = "exp";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::exp;
        return exp(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X&) {
        return y;
    }
};

struct exp2_rule {
    static constexpr const char* name = "exp2";
    static constexpr std::size_t arity = 1;
    template <class X>
    static constexpr auto value(const X& x) {
        using std::exp2;
        return exp2(x);
    }
    template <std::size_t I, class Y, class X>
    static constexpr auto partial(const Y& y, const X&) {
        return ln2 * y;
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

}  // namespace nabla::rules
