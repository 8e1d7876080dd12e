#pragma once
// + - * / and unary minus, fused multiply-add, and the two strong-zero products the other rules
// use for their conventions.

#include <cmath>

#include "rule.hpp"

namespace nabla::rules {

struct add_rule {
    static constexpr const char* name = "add";
    static constexpr const char* symbol = " + ";
    static constexpr int precedence = 1;
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        return a + b;
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y&, const A&, const B&) {
        return one;
    }
};

struct sub_rule {
    static constexpr const char* name = "sub";
    static constexpr const char* symbol = " - ";
    static constexpr int precedence = 1;
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        return a - b;
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y&, const A&, const B&) {
        if constexpr (I == 0)
            return one;
        else
            return minus_one;
    }
};

struct mul_rule {
    static constexpr const char* name = "mul";
    static constexpr const char* symbol = "*";
    static constexpr int precedence = 2;
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        return a * b;
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y&, const A& a, const B& b) {
        if constexpr (I == 0)
            return b;
        else
            return a;
    }
};

struct div_rule {
    static constexpr const char* name = "div";
    static constexpr const char* symbol = "/";
    static constexpr int precedence = 2;
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        return a / b;
    }
    // d(a/b)/da = 1/b and d(a/b)/db = -a/b^2, written as -y * (1/b): both partials share the one
    // reciprocal, which runs in parallel with the quotient instead of after it, and for 1/b the
    // reciprocal is the quotient itself, so the sweep needs no second division.
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y& y, const A&, const B& b) {
        if constexpr (I == 0)
            return one / b;
        else
            return -(y * (one / b));
    }
};

struct neg_rule {
    static constexpr const char* name = "neg";
    static constexpr const char* symbol = "-";
    static constexpr int precedence = 3;
    static constexpr std::size_t arity = 1;
    template <class A>
    static constexpr auto value(const A& a) {
        return -a;
    }
    template <std::size_t I, class Y, class A>
    static constexpr auto partial(const Y&, const A&) {
        return minus_one;
    }
};

struct fma_rule {
    static constexpr const char* name = "fma";
    static constexpr std::size_t arity = 3;
    template <class A, class B, class C>
    static constexpr auto value(const A& a, const B& b, const C& c) {
        using std::fma;
        return fma(a, b, c);
    }
    template <std::size_t I, class Y, class A, class B, class C>
    static constexpr auto partial(const Y&, const A& a, const B& b, const C&) {
        if constexpr (I == 0)
            return b;
        else if constexpr (I == 1)
            return a;
        else
            return one;
    }
};

struct mul_strong_zero_rule {
    static constexpr const char* name = "mul_strong_zero";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        return mul_strong_zero(a, b);
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y&, const A& a, const B& b) {
        if constexpr (I == 0)
            return b;
        else
            return a;
    }
};

struct div_strong_zero_rule {
    static constexpr const char* name = "div_strong_zero";
    static constexpr std::size_t arity = 2;
    template <class A, class B>
    static constexpr auto value(const A& a, const B& b) {
        return div_strong_zero(a, b);
    }
    template <std::size_t I, class Y, class A, class B>
    static constexpr auto partial(const Y& y, const A&, const B& b) {
        if constexpr (I == 0)
            return one / b;
        else
            return -(y / b);
    }
};

}  // namespace nabla::rules
