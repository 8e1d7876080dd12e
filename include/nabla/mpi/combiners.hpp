#pragma once
// nabla/mpi/combiners.hpp: the reductions (op) and how they combine forward numbers, active
// variables' values with their ranks (min, max) and the partial products of prod.

#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

// clang-format off
#include "../config.hpp"  // first: it checks the language standard
// clang-format on

#include "wire.hpp"

namespace nabla::mpi {

// The reductions. On forward numbers and active variables, min and max pick the number of one
// rank: the lowest rank among equal values, a NaN when one takes part (the lowest rank's), and the
// tangents or the adjoint go with it. On plain numbers they are MPI_MIN and MPI_MAX.
enum class op { sum, prod, min, max };

namespace detail {

// User-defined reductions on forward numbers: a + b, a * b (the product rule for the tangents),
// and the operand with the smaller or larger value. Not commutative, so that MPI combines ranks
// in their order and a tie keeps the lower rank's number.

// Whether b, of a higher rank, replaces a as the minimum (maximum): when it is smaller (larger),
// or a NaN where a is not, so that a NaN wins as it does in a sum.
template <op O, class T>
bool takes_over(const T& a, const T& b) {
    using std::isnan;
    if (isnan(a))
        return false;
    if (isnan(b))
        return true;
    return O == op::min ? b < a : a < b;
}

template <class E, op O>
void combine(void* in, void* inout, int* length, MPI_Datatype*) {
    const E* a = static_cast<const E*>(in);
    E* b = static_cast<E*>(inout);
    for (int i = 0; i < *length; ++i) {
        if constexpr (O == op::sum)
            b[i] = a[i] + b[i];
        else if constexpr (O == op::prod)
            b[i] = a[i] * b[i];
        else if (!takes_over<O>(nabla::primal(a[i]), nabla::primal(b[i])))
            b[i] = a[i];
    }
}

// The contiguous datatype of one forward number, made once (after MPI_Init).
template <Flat E>
MPI_Datatype element_datatype() {
    static const MPI_Datatype type = [] {
        MPI_Datatype t;
        check(MPI_Type_contiguous(static_cast<int>(flat<E>::count),
                                  datatype<typename flat<E>::scalar>(), &t),
              "MPI_Type_contiguous");
        check(MPI_Type_commit(&t), "MPI_Type_commit");
        return t;
    }();
    return type;
}

template <class E, op O>
MPI_Op user_op() {
    static const MPI_Op made = [] {
        MPI_Op o;
        check(MPI_Op_create(&combine<E, O>, 0, &o), "MPI_Op_create");
        return o;
    }();
    return made;
}

inline MPI_Op builtin_op(op o) {
    switch (o) {
    case op::sum:
        return MPI_SUM;
    case op::prod:
        return MPI_PROD;
    case op::min:
        return MPI_MIN;
    default:
        return MPI_MAX;
    }
}

// How a reduction of flat elements E goes: datatype, count and operation for n elements. Sums are
// element-wise for every forward number, so they go as plain numbers with MPI_SUM.
template <Flat E>
struct reduction {
    MPI_Datatype type;
    int count;
    MPI_Op operation;
};
template <Flat E>
reduction<E> reduction_of(std::size_t n, op o, const char* what) {
    if constexpr (std::is_arithmetic_v<E>) {
        return {datatype<E>(), count_of<E>(n, what), builtin_op(o)};
    } else {
        if (o == op::sum)
            return {datatype<typename flat<E>::scalar>(), count_of<E>(n, what), MPI_SUM};
        (void)count_of<E>(n, what);
        const int count = static_cast<int>(n);
        switch (o) {
        case op::prod:
            return {element_datatype<E>(), count, user_op<E, op::prod>()};
        case op::min:
            return {element_datatype<E>(), count, user_op<E, op::min>()};
        default:
            return {element_datatype<E>(), count, user_op<E, op::max>()};
        }
    }
}

template <class E>
void* raw(E* p) {
    return static_cast<void*>(p);
}
template <class E>
void* raw(const E* p) {
    return const_cast<void*>(static_cast<const void*>(p));
}

}  // namespace detail

namespace detail {

// A value with the rank it comes from (MPI_MINLOC's pairs), combined by takes_over's rule.
template <class T>
struct located {
    T value;
    int rank;
};
template <class T>
MPI_Datatype located_datatype() {
    if constexpr (std::is_same_v<T, double>)
        return MPI_DOUBLE_INT;
    else if constexpr (std::is_same_v<T, float>)
        return MPI_FLOAT_INT;
    else
        return MPI_LONG_DOUBLE_INT;
}
template <class T, op O>
void combine_located(void* in, void* inout, int* length, MPI_Datatype*) {
    const located<T>* a = static_cast<const located<T>*>(in);
    located<T>* b = static_cast<located<T>*>(inout);
    // Field by field: MPI's temporary buffers may end at the last pair's int, before the
    // struct's padding.
    for (int i = 0; i < *length; ++i)
        if (!takes_over<O>(a[i].value, b[i].value)) {
            b[i].value = a[i].value;
            b[i].rank = a[i].rank;
        }
}
template <class T, op O>
MPI_Op located_op() {
    static const MPI_Op made = [] {
        MPI_Op o;
        check(MPI_Op_create(&combine_located<T, O>, 0, &o), "MPI_Op_create");
        return o;
    }();
    return made;
}

// A product over the ranks, kept so that the partials, the products of the other ranks' factors,
// come out as a product on one rank would give them, whatever the factors: the product itself
// (as MPI multiplies, in rank order), the product of the finite non-zero factors as a mantissa
// and a binary exponent (so that it never overflows), and the numbers of zero, infinite and NaN
// factors (the infinities' signs go into the mantissa).
template <class T>
struct product {
    T all;
    T mantissa;
    T exponent;
    T zeros;
    T infinities;
    T nans;
};

template <class T>
product<T> factor(T x) {
    using std::frexp, std::isinf, std::isnan;
    if (x == T(0))
        return {x, T(1), T(0), T(1), T(0), T(0)};
    if (isnan(x))
        return {x, T(1), T(0), T(0), T(0), T(1)};
    if (isinf(x))
        return {x, x < T(0) ? T(-1) : T(1), T(0), T(0), T(1), T(0)};
    int e = 0;
    const T m = frexp(x, &e);
    return {x, m, T(e), T(0), T(0), T(0)};
}
template <class T>
void combine_products(void* in, void* inout, int* length, MPI_Datatype*) {
    using std::frexp;
    const product<T>* a = static_cast<const product<T>*>(in);
    product<T>* b = static_cast<product<T>*>(inout);
    for (int i = 0; i < *length; ++i) {
        int e = 0;
        const T m = frexp(a[i].mantissa * b[i].mantissa, &e);
        b[i] = {a[i].all * b[i].all,
                m,
                a[i].exponent + b[i].exponent + T(e),
                a[i].zeros + b[i].zeros,
                a[i].infinities + b[i].infinities,
                a[i].nans + b[i].nans};
    }
}
template <class T>
MPI_Datatype product_datatype() {
    static const MPI_Datatype type = [] {
        MPI_Datatype t;
        check(MPI_Type_contiguous(6, wire_datatype<T>(), &t), "MPI_Type_contiguous");
        check(MPI_Type_commit(&t), "MPI_Type_commit");
        return t;
    }();
    return type;
}
template <class T>
MPI_Op product_op() {
    static const MPI_Op made = [] {
        MPI_Op o;
        check(MPI_Op_create(&combine_products<T>, 0, &o), "MPI_Op_create");
        return o;
    }();
    return made;
}
template <class T>
std::vector<product<T>> factors(std::span<const active<T>> in) {
    std::vector<product<T>> p(in.size());
    for (std::size_t k = 0; k < in.size(); ++k)
        p[k] = factor(in[k].value);
    return p;
}
// d (product over the ranks) / d x: the product of the other ranks' factors, from the product
// `p` of all of them with x's own taken out.
template <class T>
T product_of_others(T x, const product<T>& p) {
    using std::ldexp, std::copysign;
    const product<T> own = factor(x);
    const T zeros = p.zeros - own.zeros;
    const T infinities = p.infinities - own.infinities;
    const T m = p.mantissa / own.mantissa;
    if (p.nans - own.nans > T(0) || (zeros > T(0) && infinities > T(0)))
        return std::numeric_limits<T>::quiet_NaN();
    if (zeros > T(0))
        return copysign(T(0), m);
    if (infinities > T(0))
        return copysign(std::numeric_limits<T>::infinity(), m);
    return ldexp(m, static_cast<int>(p.exponent - own.exponent));
}

}  // namespace detail

}  // namespace nabla::mpi
