#pragma once
// nabla: include this one header for everything. Where xtensor is installed it brings in
// nabla/tensor.hpp too (hessian, jacobian, xtensor inputs); define NABLA_NO_XTENSOR before
// including it to leave xtensor's headers out, and hessian and jacobian then say so.
//
//   auto [x, y] = nabla::variables<2>();
//   auto f = log(x) + x * y - sin(y);
//   double v = f(2.0, 5.0);                         // 11.652...
//   auto fx = nabla::d(f, x);                       // 1/x + y, an expression
//   auto [value, gradient] = nabla::value_and_grad(f, 2.0, 5.0);

// clang-format off
#include "config.hpp"  // first: it checks the language standard
// clang-format on

#include "api/grad.hpp"
#include "api/reverse.hpp"
#include "concepts.hpp"
#include "core/build.hpp"
#include "core/derivative.hpp"
#include "core/evaluate.hpp"
#include "core/functions.hpp"
#include "core/graph.hpp"
#include "core/held.hpp"
#include "core/leaves.hpp"
#include "core/node.hpp"
#include "core/operators.hpp"
#include "core/print.hpp"
#include "forward/custom.hpp"
#include "forward/dual.hpp"
#include "forward/series_tape.hpp"
#include "forward/taylor.hpp"
#include "forward/taylor_ode.hpp"
#include "literal.hpp"
#include "reverse/active.hpp"
#include "reverse/checkpoint.hpp"
#include "reverse/custom.hpp"
#include "reverse/errors.hpp"
#include "reverse/expression.hpp"
#include "reverse/tape.hpp"
#include "rules.hpp"
#include "rules/functions.hpp"
#include "values.hpp"
#include "version.hpp"

#if !defined(NABLA_NO_XTENSOR) && __has_include(<xtensor/xtensor.hpp>)
// (nabla/tensor.hpp's parts.)
#include "api/hessian.hpp"
#include "api/jacobian.hpp"
#include "tensor/containers.hpp"
#include "tensor/matrix.hpp"
#else
namespace nabla {
// hessian and jacobian return xtensor matrices: without xtensor they are a clear error.
template <class... Args>
auto hessian(const Args&...) {
    static_assert(detail::always_false<Args...>,
                  "nabla::hessian returns an xt::xtensor matrix: install xtensor (Debian: "
                  "xtensor-dev) and do not define NABLA_NO_XTENSOR: nabla.hpp then includes "
                  "nabla/tensor.hpp");
}
template <class... Args>
auto jacobian(const Args&...) {
    static_assert(detail::always_false<Args...>,
                  "nabla::jacobian returns an xt::xtensor matrix: install xtensor (Debian: "
                  "xtensor-dev) and do not define NABLA_NO_XTENSOR: nabla.hpp then includes "
                  "nabla/tensor.hpp");
}
template <class... Args>
auto value_and_jacobian(const Args&...) {
    static_assert(detail::always_false<Args...>,
                  "nabla::value_and_jacobian returns an xt::xtensor matrix: install xtensor "
                  "(Debian: xtensor-dev) and do not define NABLA_NO_XTENSOR: nabla.hpp then "
                  "includes nabla/tensor.hpp");
}
}  // namespace nabla
#endif
