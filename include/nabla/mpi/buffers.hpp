#pragma once
// nabla/mpi/buffers.hpp: the buffers the operations take: contiguous ranges of plain numbers,
// forward numbers or active variables.

#include <array>
#include <functional>
#include <ranges>
#include <span>
#include <type_traits>
#include <vector>

// clang-format off
#include "../config.hpp"  // first: it checks the language standard
// clang-format on

#include "wire.hpp"

namespace nabla::mpi {

// Buffers: contiguous ranges (std::vector, std::array, std::span) of plain numbers, forward
// numbers or active variables. Sizes are counted in elements.

template <class R>
concept buffer = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    detail::Element<detail::element_t<R>>;

template <class R>
concept output_buffer =
    buffer<R> && !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>;

namespace detail {

template <class R>
auto as_span(R&& r) {
    return std::span(std::ranges::data(r), std::ranges::size(r));
}
template <class R>
auto as_const_span(const R& r) {
    using E = element_t<R>;
    return std::span<const E>(std::ranges::data(r), std::ranges::size(r));
}

// The input of an operation on plain or forward numbers, as MPI may read it: where it overlaps
// the output (the same vector passed as both), a copy of it, kept in `copy`.
template <class E>
const E* apart(std::span<const E> in, std::span<E> out, std::vector<E>& copy) {
    const auto* in_begin = reinterpret_cast<const unsigned char*>(in.data());
    const auto* out_begin = reinterpret_cast<const unsigned char*>(out.data());
    const bool overlap = !in.empty() && !out.empty() &&
                         std::less<>{}(in_begin, out_begin + out.size_bytes()) &&
                         std::less<>{}(out_begin, in_begin + in.size_bytes());
    if (!overlap)
        return in.data();
    copy.assign(in.begin(), in.end());
    return copy.data();
}

template <class In, class Out>
void same_elements() {
    static_assert(std::is_same_v<element_t<In>, element_t<Out>>,
                  "nabla::mpi: the input and output buffers hold different element types");
}

}  // namespace detail

}  // namespace nabla::mpi
