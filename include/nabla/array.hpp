#pragma once
// nabla's array layer: element-wise expressions over whole arrays, views and reductions, with
// their values and gradients in fused SIMD loops planned at compile time (docs/arrays.md).
//
//   auto [x, y] = nabla::array_variables<2>();
//   auto f = sum(exp(sin(x) * y) + log1p(x * x));
//   double v = f(xs, ys);                                 // std::vector<double>, spans, xtensor
//   auto [value, gx, gy] = nabla::value_and_grad(f, xs, ys);

#include "array/evaluate.hpp"
#include "array/expression.hpp"
#include "array/plan.hpp"
#include "array/reductions.hpp"
#include "nabla.hpp"
