#pragma once
// The Jacobian of a function of whole arrays on the tape, as an xt::xtensor<double, 2>
// (array.hpp includes this where xtensor is installed):
//   xt::xtensor<double, 2> J = nabla::jacobian(nabla::mode::arrays, f, xs);   // J(i, j) =
//   dF_i/dx_j
// One recording; row i is the pullback of e_i, one sweep each.

#include <cstddef>
#include <type_traits>
#include <vector>

#include "../tensor/matrix.hpp"
#include "arrays.hpp"
#include "grad.hpp"

namespace nabla {

template <class F, class Arg>
auto jacobian(mode::arrays_t, const F& f, const Arg& x) {
    static_assert(detail::ArrayArgument<Arg> && !detail::TwoDimensional<Arg>,
                  "nabla::jacobian(nabla::mode::arrays, F, x): x is a one-dimensional array of "
                  "double (std::vector<double>, std::array, std::span<const double>, "
                  "xt::xtensor<double, 1>).");
    auto [y, pullback] = vjp(mode::arrays, f, x);
    static_assert(!std::is_same_v<decltype(y), double>,
                  "nabla::jacobian(nabla::mode::arrays, F, x): F returns an array (a "
                  "var_array); for one number, use nabla::grad.");
    const std::size_t m = y.size(), n = static_cast<std::size_t>(x.size());
    matrix<double> j = detail::zero_matrix<double>(m, n);
    std::vector<double> unit(m, 0.0);
    for (std::size_t i = 0; i < m; ++i) {
        unit[i] = 1.0;
        const auto row = pullback(unit);
        unit[i] = 0.0;
        for (std::size_t k = 0; k < n; ++k)
            j(i, k) = detail::element(row, k);
    }
    return j;
}

}  // namespace nabla
