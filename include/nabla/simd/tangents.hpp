#pragma once
// The tangent updates of dual numbers as xsimd batches: out = p * x and out = pa * a + pb * b over
// std::array<T, N>, a batch at a time with a scalar tail (for at least two batches' worth). The
// batch width is xsimd's default architecture for the compile flags (2 doubles with the x86-64
// baseline, 8 with -march=native on an AVX-512 machine). Define NABLA_NO_SIMD to use plain loops
// (the benchmark's "SIMD off").

#include <array>
#include <cstddef>
#include <type_traits>

#include "../config.hpp"

#if !defined(NABLA_NO_SIMD) && __has_include(<xsimd/xsimd.hpp>)
#include <xsimd/xsimd.hpp>
#define NABLA_SIMD_TANGENTS 1
#else
#define NABLA_SIMD_TANGENTS 0
#endif

namespace nabla::simd {

template <class T>
inline constexpr bool vectorisable = std::is_same_v<T, double> || std::is_same_v<T, float>;

#if NABLA_SIMD_TANGENTS
// Whether N tangents of type T go in batches: at least two whole batches. Fewer go in plain
// loops, which the compiler keeps as scalars: with one batch of two (the seed function's two
// directions) every factor must first be broadcast into a batch, and three directions, one
// batch and a scalar tail, lose to plain loops.
template <class T, std::size_t N>
consteval bool batches_pay() {
    if constexpr (vectorisable<T>)
        return N >= 2 * xsimd::batch<T>::size;
    else
        return false;
}
template <class T, std::size_t N>
inline constexpr bool in_batches = batches_pay<T, N>();
#endif

template <class T, std::size_t N>
NABLA_ALWAYS_INLINE constexpr void
scale(std::array<T, N>& out, const T& p, const std::array<T, N>& x) {
    std::size_t i = 0;
#if NABLA_SIMD_TANGENTS
    if constexpr (in_batches<T, N>) {
        if (!std::is_constant_evaluated()) {
            using batch = xsimd::batch<T>;
            const batch factor(p);
            for (; i + batch::size <= N; i += batch::size)
                (factor * batch::load_unaligned(&x[i])).store_unaligned(&out[i]);
        }
    }
#endif
    for (; i < N; ++i)
        out[i] = p * x[i];
}

template <class T, std::size_t N>
NABLA_ALWAYS_INLINE constexpr void combine(std::array<T, N>& out,
                                           const T& pa,
                                           const std::array<T, N>& a,
                                           const T& pb,
                                           const std::array<T, N>& b) {
    std::size_t i = 0;
#if NABLA_SIMD_TANGENTS
    if constexpr (in_batches<T, N>) {
        if (!std::is_constant_evaluated()) {
            using batch = xsimd::batch<T>;
            const batch fa(pa), fb(pb);
            for (; i + batch::size <= N; i += batch::size)
                (fa * batch::load_unaligned(&a[i]) + fb * batch::load_unaligned(&b[i]))
                    .store_unaligned(&out[i]);
        }
    }
#endif
    for (; i < N; ++i)
        out[i] = pa * a[i] + pb * b[i];
}

}  // namespace nabla::simd
