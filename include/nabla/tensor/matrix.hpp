#pragma once
// The matrix type of nabla's results (Hessians, Jacobians): xt::xtensor<R, 2>, indexed H(i, j).
// The tensor layer is the only place that includes xtensor.

#include <xtensor/xfixed.hpp>
#include <xtensor/xtensor.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

#include "../values.hpp"

namespace nabla {

template <class R>
using matrix = xt::xtensor<R, 2>;

// The result of a transformation whose sizes are known at compile time (a std::array in and
// out) and small (up to fixed_matrix_limit entries, 8 KiB of doubles): a fixed-size xtensor, on
// the stack, indexed the same way. Larger results are xtensor matrices on the heap.
template <class R, std::size_t Rows, std::size_t Columns>
using fixed_matrix = xt::xtensor_fixed<R, xt::xshape<Rows, Columns>>;
inline constexpr std::size_t fixed_matrix_limit = 1024;

namespace detail {
template <std::size_t Rows, std::size_t Columns>
inline constexpr bool fixed_result = Rows > 0 && Columns > 0 && Rows* Columns <= fixed_matrix_limit;
}  // namespace detail

namespace detail {

template <class R, std::size_t Rows, std::size_t Columns>
fixed_matrix<R, Rows, Columns> zero_fixed_matrix() {
    fixed_matrix<R, Rows, Columns> m;
    m.fill(R(0));
    return m;
}

// A matrix of zeros: entries that a transformation does not write (a result that does not depend
// on some inputs) are exact zeros, never uninitialised memory.
template <class R>
matrix<R> zero_matrix(std::size_t rows, std::size_t columns) {
    return matrix<R>(typename matrix<R>::shape_type{rows, columns}, R(0));
}

// The matrix a transformation returns for an input container C: xtensor's, or what C's
// container_traits make of it (Eigen's matrices for Eigen inputs, nabla/eigen.hpp).
template <class C, class M>
auto matrix_for(M&& m) {
    using traits = container_traits<std::remove_cvref_t<C>>;
    if constexpr (requires { traits::matrix_result(m); })
        return traits::matrix_result(m);
    else
        return std::remove_cvref_t<M>(std::move(m));
}

}  // namespace detail
}  // namespace nabla
