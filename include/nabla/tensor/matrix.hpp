#pragma once
// The matrix type of nabla's results (Hessians, Jacobians): xt::xtensor<R, 2>, indexed H(i, j).
// The tensor layer is the only place that includes xtensor.

#include <xtensor/xtensor.hpp>

#include <cstddef>

namespace nabla {

template <class R>
using matrix = xt::xtensor<R, 2>;

namespace detail {

// A matrix of zeros: entries that a transformation does not write (a result that does not depend
// on some inputs) are exact zeros, never uninitialised memory.
template <class R>
matrix<R> zero_matrix(std::size_t rows, std::size_t columns) {
    return matrix<R>(typename matrix<R>::shape_type{rows, columns}, R(0));
}

}  // namespace detail
}  // namespace nabla
