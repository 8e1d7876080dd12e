#pragma once
// The matrix type of nabla's results (Hessians, Jacobians): xt::xtensor<R, 2>, indexed H(i, j).
// The tensor layer is the only place that includes xtensor.

#include <xtensor/xtensor.hpp>

#include <cstddef>

namespace nabla {

template <class R>
using matrix = xt::xtensor<R, 2>;

namespace detail {

template <class R>
matrix<R> zero_matrix(std::size_t rows, std::size_t columns) {
    return matrix<R>::from_shape({rows, columns});
}

}  // namespace detail
}  // namespace nabla
