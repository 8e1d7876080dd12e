#pragma once
// exp and exp2 on batches of doubles, nabla's own: within 1 unit in the last place of the C
// library's everywhere, subnormal results and those just below the overflow included, NaN and
// infinities as the C library gives them, and no division and no branch. xsimd 8.1's exp gives 0
// below -708.39 and infinity above 709.43, where the C library's results are subnormal or finite,
// and converts arguments out of an integer's range (undefined behaviour without AVX-512).
//
// exp(x) = 2^k exp(r), k = round(x / ln 2), r = x - k ln 2 in two parts (Cody and Waite), |r| <=
// ln(2)/2; exp(r) by a polynomial of degree 11 fitted for relative error (1.2e-17 with its
// coefficients rounded to doubles); 2^k applied in two halves, each a normal number, so that one
// rounding gives the subnormal results. AVX-512's scalef applies 2^k in one instruction.

#include <xsimd/xsimd.hpp>

#include <cstdint>

#include "../rules/rule.hpp"

namespace nabla::simd {

namespace detail {

// a b + c and c - a b, each rounded once. xsimd 8.1 has no AVX-512 kernels for these: its generic
// a * b + c is fused by g++ but not by clang++.
template <class T>
NABLA_ALWAYS_INLINE T fma(const T& a, const T& b, const T& c) {
#if defined(__AVX512F__)
    if constexpr (sizeof(T) == 64)
        return T(_mm512_fmadd_pd(a, b, c));
    else
#endif
        return xsimd::fma(a, b, c);
}
template <class T>
NABLA_ALWAYS_INLINE T fnma(const T& a, const T& b, const T& c) {
#if defined(__AVX512F__)
    if constexpr (sizeof(T) == 64)
        return T(_mm512_fnmadd_pd(a, b, c));
    else
#endif
        return xsimd::fnma(a, b, c);
}

// exp(r) for |r| <= ln(2)/2.
template <class T>
NABLA_ALWAYS_INLINE T exp_reduced(const T& r) {
    T p(0x1.adeb4ac14afbep-26);
    p = detail::fma(p, r, T(0x1.28b0437e9745ep-22));
    p = detail::fma(p, r, T(0x1.71dee06dbcf9dp-19));
    p = detail::fma(p, r, T(0x1.a0199698cfb78p-16));
    p = detail::fma(p, r, T(0x1.a01a0149ad5adp-13));
    p = detail::fma(p, r, T(0x1.6c16c185a83adp-10));
    p = detail::fma(p, r, T(0x1.1111111121d26p-7));
    p = detail::fma(p, r, T(0x1.5555555550006p-5));
    p = detail::fma(p, r, T(0x1.5555555555512p-3));
    p = detail::fma(p, r, T(0x1.000000000000cp-1));
    p = detail::fma(p, r, T(1.0));
    return detail::fma(p, r, T(1.0));
}

// 1.5 * 2^52: added to a double of magnitude under 2^51, it rounds it to an integer and leaves
// that integer in the low bits of the sum's representation.
inline constexpr double shifter = 0x1.8p52;

// p * 2^k, where shifted = k + shifter holds the integer k, |k| <= 1100.
template <class T>
NABLA_ALWAYS_INLINE T scale_by_power_of_two(const T& p, const T& shifted) {
#if defined(__AVX512F__)
    if constexpr (sizeof(T) == 64) {
        return T(_mm512_scalef_pd(p, shifted - T(shifter)));
    } else
#endif
    {
        using U = xsimd::batch<std::uint64_t, typename T::arch_type>;
        // The low 12 bits of the representation are k's; the shift left by 52 keeps only those.
        const U bits = xsimd::bitwise_cast<U>(shifted);
        const U half = bits >> 1;  // floor(k / 2) in the low bits
        const T low = xsimd::bitwise_cast<T>((half + U(1023)) << 52);
        const T high = xsimd::bitwise_cast<T>(((bits - half) + U(1023)) << 52);
        return (p * low) * high;
    }
}

// Keeps x within [lowest, highest], NaN as it is: min and max return their second operand where
// either is NaN (x86's minpd and maxpd, which xsimd's min and max are).
template <class T>
NABLA_ALWAYS_INLINE T clamp_keeping_nan(const T& x, double lowest, double highest) {
    return xsimd::max(T(lowest), xsimd::min(T(highest), x));
}

}  // namespace detail

template <class A>
NABLA_ALWAYS_INLINE xsimd::batch<double, A> exp(const xsimd::batch<double, A>& x) {
    using T = xsimd::batch<double, A>;
    // Beyond these exp is 0 or infinity, and k stays small.
    const T a = detail::clamp_keeping_nan(x, -746.0, 710.0);
    const T shifted = detail::fma(a, T(0x1.71547652b82fep0), T(detail::shifter));
    const T k = shifted - T(detail::shifter);
    T r = detail::fnma(k, T(0x1.62e42fefa3800p-1), a);  // ln 2's high part: k times it is exact
    r = detail::fnma(k, T(0x1.ef35793c76730p-45), r);
    return detail::scale_by_power_of_two(detail::exp_reduced(r), shifted);
}

template <class A>
NABLA_ALWAYS_INLINE xsimd::batch<double, A> exp2(const xsimd::batch<double, A>& x) {
    using T = xsimd::batch<double, A>;
    const T a = detail::clamp_keeping_nan(x, -1076.0, 1025.0);
    const T shifted = a + T(detail::shifter);
    const T k = shifted - T(detail::shifter);
    const T r = (a - k) * T(0x1.62e42fefa39efp-1);  // a - k is exact
    return detail::scale_by_power_of_two(detail::exp_reduced(r), shifted);
}

}  // namespace nabla::simd

namespace nabla::rules {

template <class A>
struct lanes_exponential<xsimd::batch<double, A>> {
    NABLA_ALWAYS_INLINE static xsimd::batch<double, A> exp(const xsimd::batch<double, A>& x) {
        return simd::exp(x);
    }
    NABLA_ALWAYS_INLINE static xsimd::batch<double, A> exp2(const xsimd::batch<double, A>& x) {
        return simd::exp2(x);
    }
};

}  // namespace nabla::rules
