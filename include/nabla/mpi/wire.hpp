#pragma once
// nabla/mpi/wire.hpp: how elements travel: the MPI datatype of a plain number, the plain numbers a
// forward number or an active variable travels as, counts, and the checks of sizes and ranks.

#include <climits>
#include <cstddef>
#include <ranges>
#include <string>
#include <type_traits>

// clang-format off
#include "../config.hpp"  // first: it checks the language standard
// clang-format on

#include "../forward/dual.hpp"
#include "../forward/taylor.hpp"
#include "../reverse/active.hpp"
#include "../values.hpp"
#include "communicator.hpp"

namespace nabla::mpi {

namespace detail {

template <class>
inline constexpr bool always_false = false;

// The MPI datatype of a plain number.
template <class S>
MPI_Datatype datatype() {
    if constexpr (std::is_same_v<S, double>)
        return MPI_DOUBLE;
    else if constexpr (std::is_same_v<S, float>)
        return MPI_FLOAT;
    else if constexpr (std::is_same_v<S, long double>)
        return MPI_LONG_DOUBLE;
    else if constexpr (std::is_same_v<S, int>)
        return MPI_INT;
    else if constexpr (std::is_same_v<S, long>)
        return MPI_LONG;
    else if constexpr (std::is_same_v<S, long long>)
        return MPI_LONG_LONG;
    else if constexpr (std::is_same_v<S, unsigned>)
        return MPI_UNSIGNED;
    else if constexpr (std::is_same_v<S, unsigned long>)
        return MPI_UNSIGNED_LONG;
    else if constexpr (std::is_same_v<S, unsigned long long>)
        return MPI_UNSIGNED_LONG_LONG;
    else if constexpr (std::is_same_v<S, short>)
        return MPI_SHORT;
    else if constexpr (std::is_same_v<S, unsigned short>)
        return MPI_UNSIGNED_SHORT;
    else if constexpr (std::is_same_v<S, signed char>)
        return MPI_SIGNED_CHAR;
    else if constexpr (std::is_same_v<S, unsigned char>)
        return MPI_UNSIGNED_CHAR;
    else if constexpr (std::is_same_v<S, char>)
        return MPI_CHAR;
    else if constexpr (std::is_same_v<S, bool>)
        return MPI_CXX_BOOL;
    else
        static_assert(always_false<S>, "nabla::mpi: no MPI datatype for this number type");
}

// A number that travels as `count` plain numbers of type `scalar`: a plain number, or a forward
// number (dual with a fixed number of directions, taylor) of such numbers.
template <class E>
struct flat {
    static constexpr bool value = false;
};
template <class E>
requires std::is_arithmetic_v<E>
struct flat<E> {
    static constexpr bool value = true;
    using scalar = E;
    static constexpr std::size_t count = 1;
};
template <class T, std::size_t N, bool Strong>
requires(N != nabla::dynamic && flat<T>::value) struct flat<nabla::dual<T, N, Strong>> {
    static constexpr bool value = sizeof(nabla::dual<T, N, Strong>) == (N + 1) * sizeof(T);
    using scalar = typename flat<T>::scalar;
    static constexpr std::size_t count = (N + 1) * flat<T>::count;
};
template <class T, std::size_t K>
requires flat<T>::value struct flat<nabla::taylor<T, K>> {
    static constexpr bool value = sizeof(nabla::taylor<T, K>) == (K + 1) * sizeof(T);
    using scalar = typename flat<T>::scalar;
    static constexpr std::size_t count = (K + 1) * flat<T>::count;
};

template <class E>
concept Flat = flat<E>::value;

// An active variable of plain or forward numbers (a tape of dual numbers: forward over reverse).
template <class E>
concept Active = nabla::detail::is_active_v<E> && Flat<typename E::value_type>;

template <class E>
concept Element = Flat<E> || Active<E>;

template <class R>
using element_t = std::remove_cvref_t<std::ranges::range_value_t<R>>;

// The plain number an element travels as, and how many of them.
template <class E>
struct wire;
template <Flat E>
struct wire<E> {
    using scalar = typename flat<E>::scalar;
    static constexpr std::size_t count = flat<E>::count;
};
template <Active E>
struct wire<E> {
    using scalar = typename flat<typename E::value_type>::scalar;
    static constexpr std::size_t count = flat<typename E::value_type>::count;
};

// The MPI datatype of the plain numbers a value of type T (plain or forward) travels as.
template <class T>
MPI_Datatype wire_datatype() {
    return datatype<typename flat<T>::scalar>();
}

// An MPI count for n elements of E.
template <class E>
int count_of(std::size_t n, const char* what) {
    constexpr std::size_t per = wire<E>::count;
    if (n > static_cast<std::size_t>(INT_MAX) / per)
        fail(std::string(what) + ": " + std::to_string(n) +
             " elements are more than one MPI message can count");
    return static_cast<int>(n * per);
}

inline void expect_size(const char* what, const char* buffer, std::size_t size, std::size_t want) {
    if (size != want)
        fail(std::string(what) + ": " + buffer + " holds " + std::to_string(size) +
             " elements where " + std::to_string(want) + " are needed");
}

// A root must be a rank of the communicator; a peer of a send or receive may also be
// MPI_PROC_NULL, and a source MPI_ANY_SOURCE.
enum class peer { root, destination, source };
inline void check_rank(const char* what, const char* role, int rank, int size, peer kind) {
    if (rank >= 0 && rank < size)
        return;
    if (kind != peer::root && rank == MPI_PROC_NULL)
        return;
    if (kind == peer::source && rank == MPI_ANY_SOURCE)
        return;
    fail(std::string(what) + ": " + role + " " + std::to_string(rank) +
         " is not a rank of a communicator of " + std::to_string(size));
}

}  // namespace detail

}  // namespace nabla::mpi
