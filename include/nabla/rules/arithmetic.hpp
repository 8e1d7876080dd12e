#pragma once
// + - * / and unary minus, fused multiply-add, and the two strong-zero products the other rules
// use for their conventions.

#include <array>
#include <cmath>
#include <cstddef>

#include "rule.hpp"
#include "series.hpp"

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
    // y = a + b, coefficient by coefficient.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& a,
                                                 const std::array<T, K + 1>& b) {
        std::array<T, K + 1> y{};
        for (std::size_t k = 0; k <= K; ++k)
            y[k] = a[k] + b[k];
        return y;
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
    // y = a - b, coefficient by coefficient.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& a,
                                                 const std::array<T, K + 1>& b) {
        std::array<T, K + 1> y{};
        for (std::size_t k = 0; k <= K; ++k)
            y[k] = a[k] - b[k];
        return y;
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
    // y = a b: the Cauchy product (half of it for a square).
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& a,
                                                 const std::array<T, K + 1>& b) {
        return series::product(a, b);
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
    // y b = a: the division recurrence, one division.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& a,
                                                 const std::array<T, K + 1>& b) {
        return series::quotient(a, b);
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
    // y = -a, coefficient by coefficient.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& a) {
        std::array<T, K + 1> y{};
        for (std::size_t k = 0; k <= K; ++k)
            y[k] = -a[k];
        return y;
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
    // y = a b + c: the Cauchy product plus c, with the fused value.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& a,
                                                 const std::array<T, K + 1>& b,
                                                 const std::array<T, K + 1>& c) {
        std::array<T, K + 1> y = add_rule::series<T, K>(mul_rule::series<T, K>(a, b), c);
        y[0] = value(a[0], b[0], c[0]);
        return y;
    }
};

struct mul_strong_zero_rule {
    static constexpr const char* name = "mul_strong_zero";
    static constexpr std::size_t arity = 2;
    // Dual numbers multiply its partials by tangents as strong zeros too (forward/dual.hpp).
    static constexpr bool strong_zero = true;
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
    // An identically zero left factor gives exactly zero; otherwise the Cauchy product.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& a,
                                                 const std::array<T, K + 1>& b) {
        for (const T& x : a)
            if (x != T(0))
                return mul_rule::series<T, K>(a, b);
        return {};
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
    // An identically zero numerator gives exactly zero; otherwise the division recurrence.
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(const std::array<T, K + 1>& a,
                                                 const std::array<T, K + 1>& b) {
        for (const T& x : a)
            if (x != T(0))
                return div_rule::series<T, K>(a, b);
        return {};
    }
};

template <>
inline constexpr bool cheap_partials<add_rule> = true;
template <>
inline constexpr bool cheap_partials<sub_rule> = true;
template <>
inline constexpr bool cheap_partials<mul_rule> = true;
template <>
inline constexpr bool cheap_partials<div_rule> = true;
template <>
inline constexpr bool cheap_partials<neg_rule> = true;
template <>
inline constexpr bool cheap_partials<mul_strong_zero_rule> = true;
template <>
inline constexpr bool cheap_partials<div_strong_zero_rule> = true;

}  // namespace nabla::rules
