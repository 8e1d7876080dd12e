#pragma once
// The Jacobian and the Hessian of a function of whole arrays on the tape, as xt::xtensor<double, 2>
// (array.hpp includes this where xtensor is installed):
//   xt::xtensor<double, 2> J = nabla::jacobian(nabla::mode::arrays, f, xs);  // dF_i/dx_j
//   xt::xtensor<double, 2> H = nabla::hessian(nabla::mode::arrays, g, xs);   // d2g/dx_i dx_j
// The Jacobian: one recording; row i is the pullback of e_i, one sweep each. The Hessian: forward
// over reverse, eight columns per recording on arrays of dual numbers.

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

namespace detail {

// Columns first .. first + W - 1 of the Hessian of f at x, into h: the tangents of the adjoints
// after one sweep of a recording whose inputs carry W unit directions; whether one is NaN.
template <class D, std::size_t W, class F, class Arg>
bool array_hessian_columns(const F& f, const Arg& x, std::size_t first, matrix<double>& h) {
    lent_tape<D> lent;
    tape<D>& t = lent.get();
    auto recording = t.record();
    const basic_var_array<D> in = dual_argument<D>(&t, x, 0, [first](std::size_t i, D& d) {
        if (i >= first && i < first + W)
            d.tangent[i - first] = 1.0;
    });
    const active<D> y = as_active<D>(f(in));
    t.gradient(y);
    const std::size_t n = in.size();
    const std::span<const D> a = t.adjoints_from(in[0], n);
    bool nan = false;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t c = 0; c < W && first + c < n; ++c) {
            h(i, first + c) = a[i].tangent[c];
            nan = nan || is_nan(a[i].tangent[c]);
        }
    return nan;
}

}  // namespace detail

// The Hessian of the scalar f with respect to its one array argument, an n x n matrix.
template <class F, class Arg>
auto hessian(mode::arrays_t, const F& f, const Arg& x) {
    static_assert(detail::ArrayArgument<Arg> && !detail::TwoDimensional<Arg>,
                  "nabla::hessian(nabla::mode::arrays, f, x): x is a one-dimensional array of "
                  "double (std::vector<double>, std::array, std::span<const double>, "
                  "xt::xtensor<double, 1>).");
    constexpr std::size_t W = forward_chunk;
    using D = dual<double, W>;
    const auto n = static_cast<std::size_t>(x.size());
    matrix<double> h = detail::zero_matrix<double>(n, n);
    for (std::size_t first = 0; first < n; first += W)
        if (detail::array_hessian_columns<D, W>(f, x, first, h)) [[unlikely]]
            for (std::size_t c = first; c < std::min(n, first + W); ++c)
                detail::array_hessian_columns<detail::strong_direction_t<D>, 1>(f, x, c, h);
    return h;
}

}  // namespace nabla
