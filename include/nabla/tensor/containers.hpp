#pragma once
// xtensor containers as inputs of nabla's transformations: grad, value_and_grad, hessian and
// jacobian accept xt::xtensor<T, N> and xt::xarray<T> (any shape, elements in storage order), and
// give the function a container of the same kind holding dual numbers, so that it can use
// xtensor's expressions (xt::sum(x * x)(), sin(x), views). Containers are made with their
// elements value-initialised, as std::vector's are, so nothing nabla returns is unwritten memory.

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include <cstddef>

#include "../values.hpp"

namespace nabla::detail {

template <class T, std::size_t N, xt::layout_type L>
struct container_traits<xt::xtensor<T, N, L>> {
    static constexpr bool supported = true;
    static constexpr std::size_t static_size = 0;
    template <class D>
    static xt::xtensor<D, N, L> make_like(const xt::xtensor<T, N, L>& x) {
        return xt::xtensor<D, N, L>(x.shape(), D{});
    }
};

template <class T, xt::layout_type L>
struct container_traits<xt::xarray<T, L>> {
    static constexpr bool supported = true;
    static constexpr std::size_t static_size = 0;
    template <class D>
    static xt::xarray<D, L> make_like(const xt::xarray<T, L>& x) {
        return xt::xarray<D, L>(x.shape(), D{});
    }
};

}  // namespace nabla::detail
