#pragma once
// nabla/mpi/var_arrays.hpp: arrays on the tape (nabla::var_array and basic_var_array<T>, from
// <nabla/array.hpp>) through the same operations.

#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

// clang-format off
#include "../config.hpp"  // first: it checks the language standard
// clang-format on

#include "gather_scatter.hpp"
#include "nonblocking.hpp"
#include "reduce.hpp"

// Each operation records one tape entry, as for a buffer of variables, and returns the array it
// receives, whose elements are consecutive variables that array operations take as they are.
// (These are templates over the array type, so that this header needs <nabla/array.hpp> only
// where arrays are used.)
namespace nabla {
template <class T>
class basic_var_array;
namespace detail {
struct var_array_access;
}  // namespace detail
}  // namespace nabla

namespace nabla::mpi {

namespace detail {

template <class A>
inline constexpr bool is_var_array = false;
template <class T>
inline constexpr bool is_var_array<nabla::basic_var_array<T>> = true;

template <class T>
std::vector<active<T>> elements_of(const nabla::basic_var_array<T>& x) {
    std::vector<active<T>> e(x.size());
    for (std::size_t k = 0; k < e.size(); ++k)
        e[k] = x[k];
    return e;
}

// The array of the variables e, which an operation recorded one after another (or made constants,
// without a tape): their values are copied, the variables are the same.
template <class T, class Access = nabla::detail::var_array_access>
nabla::basic_var_array<T> array_of(const std::vector<active<T>>& e) {
    const std::size_t n = e.size();
    std::shared_ptr<T[]> values(new T[n > 0 ? n : 1]);
    bool consecutive = true;
    for (std::size_t k = 0; k < n; ++k) {
        values[k] = e[k].value;
        consecutive = consecutive && e[k].index() == e[0].index() + k &&
                      e[k].generation() == e[0].generation();
    }
    if (n == 0 || e[0].index() == 0)
        return Access::template make<T>(std::move(values), n, 0, 0);
    if (!consecutive)
        return nabla::basic_var_array<T>(std::span<const active<T>>(e.data(), n));
    return Access::template make<T>(std::move(values), n, e[0].index(), e[0].generation());
}

}  // namespace detail

template <class T>
nabla::basic_var_array<T>
bcast(const nabla::basic_var_array<T>& x, int root, const communicator& c) {
    std::vector<active<T>> e = detail::elements_of(x);
    bcast(e, root, c);
    return c.rank() == root ? x : detail::array_of(e);
}

template <class T>
nabla::basic_var_array<T>
allreduce(const nabla::basic_var_array<T>& x, op o, const communicator& c) {
    std::vector<active<T>> y(x.size());
    allreduce(detail::elements_of(x), y, o, c);
    return detail::array_of(y);
}

// On the root, the reduction; elsewhere an empty array.
template <class T>
nabla::basic_var_array<T>
reduce(const nabla::basic_var_array<T>& x, op o, int root, const communicator& c) {
    std::vector<active<T>> y(c.rank() == root ? x.size() : 0);
    reduce(detail::elements_of(x), y, o, root, c);
    return detail::array_of(y);
}

template <class T>
nabla::basic_var_array<T> allgather(const nabla::basic_var_array<T>& x, const communicator& c) {
    std::vector<active<T>> y(x.size() * static_cast<std::size_t>(c.size()));
    allgather(detail::elements_of(x), y, c);
    return detail::array_of(y);
}

template <class T>
nabla::basic_var_array<T> reduce_scatter(const nabla::basic_var_array<T>& x,
                                         const communicator& c) {
    std::vector<active<T>> y(x.size() / static_cast<std::size_t>(c.size()));
    reduce_scatter(detail::elements_of(x), y, c);
    return detail::array_of(y);
}

template <class T>
nabla::basic_var_array<T> alltoall(const nabla::basic_var_array<T>& x, const communicator& c) {
    std::vector<active<T>> y(x.size());
    alltoall(detail::elements_of(x), y, c);
    return detail::array_of(y);
}

template <class T>
void send(const nabla::basic_var_array<T>& x, int destination, int tag, const communicator& c) {
    send(detail::elements_of(x), destination, tag, c);
}

// n elements from `source` (constant zeros from MPI_PROC_NULL).
template <class T = double>
nabla::basic_var_array<T> recv_array(std::size_t n, int source, int tag, const communicator& c) {
    std::vector<active<T>> y(n);
    recv(y, source, tag, c);
    return detail::array_of(y);
}

// x to `destination`, and the n elements that come from `source` (constant zeros from
// MPI_PROC_NULL).
template <class T>
nabla::basic_var_array<T> sendrecv(const nabla::basic_var_array<T>& x,
                                   int destination,
                                   int send_tag,
                                   std::size_t n,
                                   int source,
                                   int receive_tag,
                                   const communicator& c) {
    std::vector<active<T>> y(n);
    sendrecv(detail::elements_of(x), destination, send_tag, y, source, receive_tag, c);
    return detail::array_of(y);
}

}  // namespace nabla::mpi
