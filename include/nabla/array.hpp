#pragma once
// nabla's array layer: element-wise expressions over whole arrays, views and reductions, with
// their values and gradients in fused SIMD loops planned at compile time (docs/arrays.md).
//
//   auto [x, y] = nabla::array_variables<2>();
//   auto f = sum(exp(sin(x) * y) + log1p(x * x));
//   double v = f(xs, ys);                                 // std::vector<double>, spans, xtensor
//   auto [value, gx, gy] = nabla::value_and_grad(f, xs, ys);
//
// And on the run-time tape, one entry per array operation (nabla::var_array, nabla::var_matrix
// with matvec, matmul and solve), for generic callables and code whose operations depend on
// values:
//
//   auto [value, gx] = nabla::value_and_grad(nabla::mode::arrays, f, xs);
//   xt::xtensor<double, 2> J = nabla::jacobian(nabla::mode::arrays, f, xs);   // with xtensor

// clang-format off
#include "config.hpp"  // first: it checks the language standard
// clang-format on

#include "api/arrays.hpp"
#include "array/active.hpp"
#include "array/evaluate.hpp"
#include "array/expression.hpp"
#include "array/forward.hpp"
#include "array/matrix.hpp"
#include "array/operands.hpp"
#include "array/plan.hpp"
#include "array/print.hpp"
#include "array/products.hpp"
#include "array/reductions.hpp"
#include "nabla.hpp"

#if !defined(NABLA_NO_XTENSOR) && __has_include(<xtensor/xtensor.hpp>)
#include "api/array_jacobian.hpp"
#endif
