#pragma once
// nabla's functions that return xtensor containers: hessian and jacobian (H(i, j), J(i, j)).
// Separate from nabla.hpp so that code that does not need matrices does not pay for xtensor's
// headers: #include <nabla/tensor.hpp> (it includes nabla.hpp).

#include "api/hessian.hpp"
#include "api/jacobian.hpp"
#include "nabla.hpp"
#include "tensor/matrix.hpp"
