#pragma once
// The orthogonal polynomials of a constant integer degree n, differentiable in x: Hermite H_n
// (std::hermite), and the Gegenbauer C_n^(a) and associated Laguerre L_n^(a) of a constant real
// parameter a. Their derivatives are polynomials of the same family, so that derivatives of every
// order and Taylor series stay exact. Edge conventions are in docs/conventions.md.

#include <array>
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "rule.hpp"
#include "series.hpp"
#include "series_number.hpp"

namespace nabla::rules {

// The Hermite polynomials H_n(x) of physics (std::hermite), with H_n = 0 for n < 0 (which closes
// H_n' = 2n H_(n-1) at n = 0).
template <Number N, Number X>
requires(std::is_arithmetic_v<N>&& std::is_arithmetic_v<X>) auto hermite(const N& n, const X& x) {
    using T = detail::real_t<X>;
    const int index = detail::index_of(n);
    return index < 0 ? T(0) : static_cast<T>(std::hermite(static_cast<unsigned>(index), T(x)));
}
// The Gegenbauer (ultraspherical) polynomials C_n^(a)(x) and the associated Laguerre
// polynomials L_n^(a)(x) of a real parameter a, from their three-term recurrences in n (as
// libstdc++ computes std::assoc_laguerre), for every real x: C_n^(1/2) = P_n, the Legendre
// polynomial; L_n^(0) = L_n. Both are 0 for n < 0, which closes their derivatives
// C_n^(a)' = 2a C_(n-1)^(a+1) and L_n^(a)' = -L_(n-1)^(a+1) at n = 0.
namespace detail {
// C_n^(a)(x) (Laguerre = false) or L_n^(a)(x) by the recurrence, for a number x of type S or
// anything that computes with S (the series tape records it operation by operation).
template <bool Laguerre, class S, class X>
X parametric_polynomial(int n, S a, const X& x) {
    if (n < 0)
        return X(S(0));
    X previous = X(S(1));
    X current = Laguerre ? S(1) + a - x : S(2) * a * x;
    for (int k = 2; k <= n; ++k) {
        X next =
            Laguerre
                ? ((S(2 * k - 1) + a - x) * current - (S(k - 1) + a) * previous) / S(k)
                : (S(2) * x * (S(k) + a - S(1)) * current - (S(k) + S(2) * a - S(2)) * previous) /
                      S(k);
        previous = current;
        current = next;
    }
    return n == 0 ? previous : current;
}
}  // namespace detail
template <Number N, Number A, Number X>
requires(std::is_arithmetic_v<N>&& std::is_arithmetic_v<A>&&
             std::is_arithmetic_v<X>) auto gegenbauer(const N& n, const A& a, const X& x) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<X>>;
    return detail::parametric_polynomial<false>(detail::index_of(n), T(a), T(x));
}
template <Number N, Number A, Number X>
requires(std::is_arithmetic_v<N>&& std::is_arithmetic_v<A>&&
             std::is_arithmetic_v<X>) auto assoc_laguerre(const N& n, const A& a, const X& x) {
    using T = std::common_type_t<detail::real_t<A>, detail::real_t<X>>;
    return detail::parametric_polynomial<true>(detail::index_of(n), T(a), T(x));
}

// hermite(n, x) with a constant integer index n: H_n' = 2n H_(n-1).
struct hermite_rule {
    static constexpr const char* name = "hermite";
    static constexpr std::size_t arity = 2;
    template <class N, class X>
    static constexpr auto value(const N& n, const X& x) {
        return hermite(n, x);
    }
    template <std::size_t I, class Y, class N, class X>
    static constexpr auto partial(const Y&, const N& n, const X& x) {
        static_assert(I == 1, "nabla: the index n of hermite(n, x) is an integer constant and has "
                              "no derivative");
        return two * n * hermite(n - one, x);
    }
    template <class T, std::size_t K>
    static constexpr std::array<T, K + 1> series(int n, const std::array<T, K + 1>& u) {
        const T y = value(n, u[0]);
        if constexpr (K == 0) {
            return {y};
        } else {
            auto derivative = hermite_rule::series<T, K - 1>(n - 1, series::truncate<K - 1>(u));
            for (auto& c : derivative)
                c *= T(2 * n);
            return series::integrate(y, u, derivative);
        }
    }
};

// f(n, a, x) of a constant integer degree n and a constant real parameter a, differentiable in x:
// C_n^(a)' = 2a C_(n-1)^(a+1) and L_n^(a)' = -L_(n-1)^(a+1), polynomials of the same family,
// so that derivatives of every order and the Taylor series (by integrating the derivative's) stay
// exact.
template <bool Laguerre>
struct parametric_polynomial {
    static constexpr const char* name = Laguerre ? "assoc_laguerre" : "gegenbauer";
    static constexpr std::size_t arity = 3;
    template <class N, class A, class X>
    static constexpr auto value(const N& n, const A& a, const X& x) {
        if constexpr (Laguerre)
            return assoc_laguerre(n, a, x);
        else
            return gegenbauer(n, a, x);
    }
    template <std::size_t I, class Y, class N, class A, class X>
    static constexpr auto partial(const Y&, const N& n, const A& a, const X& x) {
        static_assert(I == 2, "nabla: the degree n and the parameter a of gegenbauer(n, a, x) and "
                              "assoc_laguerre(n, a, x) are constants and have no derivative");
        if constexpr (Laguerre)
            return -assoc_laguerre(n - one, a + one, x);
        else
            return two * a * gegenbauer(n - one, a + one, x);
    }
    template <class T, std::size_t K, class A>
    static constexpr std::array<T, K + 1> series(int n, const A& a, const std::array<T, K + 1>& u) {
        const T y = value(n, a, u[0]);
        if constexpr (K == 0) {
            return {y};
        } else {
            auto derivative = parametric_polynomial::series<T, K - 1>(n - 1, a + A(1),
                                                                      series::truncate<K - 1>(u));
            const T factor = Laguerre ? T(-1) : T(2 * a);
            for (auto& c : derivative)
                c *= factor;
            return series::integrate(y, u, derivative);
        }
    }
};
struct gegenbauer_rule : parametric_polynomial<false> {};
struct assoc_laguerre_rule : parametric_polynomial<true> {};

// Lane by lane on SIMD lanes: the standard library's or nabla's scalar functions.
NABLA_LANE_BY_LANE(hermite_rule)
NABLA_LANE_BY_LANE(gegenbauer_rule)
NABLA_LANE_BY_LANE(assoc_laguerre_rule)

}  // namespace nabla::rules
