#pragma once
// Eigen and nabla: nabla's numbers as Eigen scalars, and Eigen matrices as nabla's inputs.
//
//   #include <nabla/eigen.hpp>   // includes nabla.hpp and <Eigen/Core>
//
// - Eigen::NumTraits for nabla::dual, nabla::taylor, nabla::active and nabla::series_variable,
//   and Eigen::ScalarBinaryOpTraits for each of them with its value type, so that an
//   Eigen::Matrix of nabla's numbers works with Eigen's decompositions (determinant, LU,
//   Cholesky, QR) and mixes with plain numbers (2.0 * A).
// - Eigen::Matrix (fixed or dynamic size, vectors included) as the input of grad,
//   value_and_grad, jacobian, hessian, vjp and hvp: the function receives an Eigen::Matrix of the
//   same shape holding nabla's numbers, gradients come back as the input's type, and Jacobians and
//   Hessians as Eigen::Matrix<R, Dynamic, Dynamic> (entries in the same order as xtensor's
//   results: row i of a Jacobian is output i in storage order, column-major for Eigen).

// clang-format off
#include "config.hpp"  // first: it checks the language standard
// clang-format on

#include <cstddef>
#include <type_traits>

#include "nabla.hpp"
#include <Eigen/Core>

namespace nabla::detail {

// Plain-number traits of nabla's numbers for Eigen: those of the value type underneath, with the
// operations' costs scaled for the tangents a number carries.
template <class Number, class Value, int Work>
struct eigen_number_traits : Eigen::NumTraits<Value> {
    using Real = Number;
    using NonInteger = Number;
    using Nested = Number;
    using Literal = Number;
    enum {
        IsComplex = 0,
        IsInteger = 0,
        IsSigned = 1,
        RequireInitialization = 1,
        ReadCost = Work,
        AddCost = Work,
        MulCost = 3 * Work,
    };
    static inline Real epsilon() { return Real(Eigen::NumTraits<Value>::epsilon()); }
    static inline Real dummy_precision() {
        return Real(Eigen::NumTraits<Value>::dummy_precision());
    }
    static inline Real highest() { return Real(Eigen::NumTraits<Value>::highest()); }
    static inline Real lowest() { return Real(Eigen::NumTraits<Value>::lowest()); }
    static inline int digits10() { return Eigen::NumTraits<Value>::digits10(); }
};

template <class M>
inline constexpr bool is_eigen_matrix_v = false;
template <class T, int R, int C, int O, int MR, int MC>
inline constexpr bool is_eigen_matrix_v<Eigen::Matrix<T, R, C, O, MR, MC>> = true;

// Eigen matrices as containers: elements in storage order (data()), results of the input's
// kind.
template <class T, int Rows, int Cols, int Options, int MaxRows, int MaxCols>
struct container_traits<Eigen::Matrix<T, Rows, Cols, Options, MaxRows, MaxCols>> {
    using input = Eigen::Matrix<T, Rows, Cols, Options, MaxRows, MaxCols>;
    static constexpr bool supported = true;
    static constexpr std::size_t static_size =
        Rows != Eigen::Dynamic && Cols != Eigen::Dynamic ? std::size_t(Rows * Cols) : 0;
    template <class D>
    static auto make_like(const input& x) {
        // Eigen's options for the new scalar (a row vector stays row-major).
        using made = Eigen::Matrix<D, Rows, Cols, Options, MaxRows, MaxCols>;
        made m(x.rows(), x.cols());
        for (Eigen::Index k = 0; k < m.size(); ++k)
            m.data()[k] = D{};
        return m;
    }
    // Jacobians and Hessians of a function of an Eigen matrix are Eigen matrices.
    template <class M>
    static auto matrix_result(const M& m) {
        using R = typename M::value_type;
        Eigen::Matrix<R, Eigen::Dynamic, Eigen::Dynamic> e(m.shape()[0], m.shape()[1]);
        for (std::size_t i = 0; i < m.shape()[0]; ++i)
            for (std::size_t j = 0; j < m.shape()[1]; ++j)
                e(Eigen::Index(i), Eigen::Index(j)) = m(i, j);
        return e;
    }
};

// Which plain numbers mix with a nabla number in Eigen's expressions.
template <class Number, class Plain>
inline constexpr bool mixes_with = std::is_arithmetic_v<Plain> &&
                                   (std::is_same_v<Plain, typename Number::value_type> ||
                                    std::is_same_v<Plain, primal_type_t<Number>>);
template <class T>
inline constexpr bool is_eigen_scalar_v = false;
template <class T, std::size_t N, bool S>
inline constexpr bool is_eigen_scalar_v<dual<T, N, S>> = true;
template <class T, std::size_t K>
inline constexpr bool is_eigen_scalar_v<taylor<T, K>> = true;
template <class T>
inline constexpr bool is_eigen_scalar_v<active<T>> = true;
template <class T>
inline constexpr bool is_eigen_scalar_v<series_variable<T>> = true;
template <class Number, class Plain>
concept MixesInEigen = is_eigen_scalar_v<Number> && mixes_with<Number, Plain>;
}  // namespace nabla::detail

namespace Eigen {

template <class T, std::size_t N, bool S>
struct NumTraits<nabla::dual<T, N, S>>
    : nabla::detail::eigen_number_traits<nabla::dual<T, N, S>,
                                         nabla::detail::primal_type_t<T>,
                                         int(N == nabla::dynamic ? 8 : N + 1)> {};

template <class T, std::size_t K>
struct NumTraits<nabla::taylor<T, K>>
    : nabla::detail::eigen_number_traits<nabla::taylor<T, K>,
                                         nabla::detail::primal_type_t<T>,
                                         int((K + 1) * (K + 2) / 2)> {};

template <class T>
struct NumTraits<nabla::active<T>>
    : nabla::detail::eigen_number_traits<nabla::active<T>, nabla::detail::primal_type_t<T>, 4> {};

template <class T>
struct NumTraits<nabla::series_variable<T>>
    : nabla::detail::eigen_number_traits<nabla::series_variable<T>, T, 8> {};

// A nabla number and a plain number (2.0 * A) give the nabla number: its value type, and the
// plain number under nested dual numbers (a Hessian's dual<dual<double, 8>, 8>).
template <class Number, class Plain, class Op>
requires nabla::detail::MixesInEigen<Number, Plain>
struct ScalarBinaryOpTraits<Number, Plain, Op> {
    using ReturnType = Number;
};
template <class Plain, class Number, class Op>
requires nabla::detail::MixesInEigen<Number, Plain>
struct ScalarBinaryOpTraits<Plain, Number, Op> {
    using ReturnType = Number;
};

}  // namespace Eigen
