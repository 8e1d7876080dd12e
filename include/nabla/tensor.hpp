#pragma once
// nabla with xtensor: hessian and jacobian (results as xt::xtensor<R, 2>, H(i, j), J(i, j)), and
// xt::xtensor / xt::xarray inputs for grad, value_and_grad, hessian and jacobian. nabla.hpp
// includes the same parts where xtensor is installed, unless NABLA_NO_XTENSOR is defined.

#if defined(NABLA_NO_XTENSOR)
#error "nabla/tensor.hpp uses xtensor, and NABLA_NO_XTENSOR is defined"
#endif

// clang-format off
#include "config.hpp"  // first: it checks the language standard
// clang-format on

#include "api/hessian.hpp"
#include "api/jacobian.hpp"
#include "nabla.hpp"
#include "tensor/containers.hpp"
#include "tensor/matrix.hpp"
