#pragma once
// nabla with xtensor: hessian and jacobian (results as xt::xtensor<R, 2>, H(i, j), J(i, j)), and
// xt::xtensor / xt::xarray inputs for grad, value_and_grad, hessian and jacobian. Separate from
// nabla.hpp so that code that does not need them does not pay for xtensor's headers:
// #include <nabla/tensor.hpp> (it includes nabla.hpp).

#include "api/hessian.hpp"
#include "api/jacobian.hpp"
#include "nabla.hpp"
#include "tensor/containers.hpp"
#include "tensor/matrix.hpp"
