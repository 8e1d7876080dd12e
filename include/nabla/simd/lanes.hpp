#pragma once
// xsimd batches as numbers of the rules: with this header every rule evaluates on
// xsimd::batch<double> and xsimd::batch<float>, a batch of elements at a time, so the array layer
// runs the same value and partial definitions as every other mode. Compile-time constants meet
// batches as they meet plain numbers (as<batch>(c) broadcasts the constant).

#include <xsimd/xsimd.hpp>

#include "../concepts.hpp"
#include "../literal.hpp"
#include "exp.hpp"

namespace nabla {

template <class T, class A>
inline constexpr bool is_lanes_v<xsimd::batch<T, A>> = std::is_floating_point_v<T>;

template <class T, class A>
inline constexpr bool is_number_v<xsimd::batch<T, A>> = std::is_floating_point_v<T>;

}  // namespace nabla
