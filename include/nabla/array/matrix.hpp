#pragma once
// Matrices on the run-time tape: nabla::var_matrix, a row-major matrix of active doubles (its
// elements a var_array), and the operations that do not fuse: the matrix-vector and matrix
// products and a linear solve, each one tape entry whose pullback is the textbook adjoint.
//
//   nabla::var_matrix W = nabla::input_matrix(t, weights);       // xt::xtensor<double, 2>
//   nabla::var_array h = tanh(matvec(W, x) + b);
//   nabla::var loss = sum(h * h);
//
//   y = A x:       dx += A^T dy,         dA += dy x^T
//   C = A B:       dA += dC B^T,         dB += A^T dC
//   x = A^-1 b:    l = A^-T dx;  db += l,  dA -= l x^T   (the LU factors kept from the forward
//   pass)
//
// The kernels are nabla's own SIMD loops (the products stream the matrix once per pass, bound by
// memory at the sizes where they matter); the solve factors by Gaussian elimination with partial
// pivoting. A singular matrix gives infinities or NaN, as in LAPACK's dgesv without its check.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "active.hpp"
#include "evaluate.hpp"
#include "operands.hpp"  // the products, their operands that are expressions too

namespace nabla {

// A rows x cols matrix of active numbers, row-major: element (i, j) is elements()[i * cols + j].
// T is double (nabla::var_matrix) or a dual number over double, as for basic_var_array.
template <class T>
class basic_var_matrix {
public:
    basic_var_matrix() = default;
    // The matrix whose elements, row by row, are `elements` (a shape_error unless it has
    // rows * cols of them).
    basic_var_matrix(basic_var_array<T> elements, std::size_t rows, std::size_t cols)
        : elements_(std::move(elements)),
          rows_(rows),
          cols_(cols) {
        if (elements_.size() != rows * cols)
            throw shape_error("nabla: a " + std::to_string(rows) + " x " + std::to_string(cols) +
                              " matrix of " + std::to_string(elements_.size()) + " elements");
    }
    // A constant matrix from a two-dimensional array (xt::xtensor<double, 2>, row-major).
    template <class C>
    requires requires(const C& c) {
        c.shape()[1];
        c.dimension();
        { c.data() } -> std::convertible_to<const double*>;
    }
    explicit basic_var_matrix(const C& values)
        : basic_var_matrix(basic_var_array<T>(std::span<const double>(detail::first_element(values),
                                                                      values.size())),
                           shape_of(values, 0),
                           shape_of(values, 1)) {}

    std::size_t rows() const { return rows_; }
    std::size_t cols() const { return cols_; }
    const basic_var_array<T>& elements() const { return elements_; }
    T value(std::size_t i, std::size_t j) const { return elements_.value(i * cols_ + j); }
    active<T> operator()(std::size_t i, std::size_t j) const { return elements_[i * cols_ + j]; }
    // Row i, sharing the matrix's variables.
    basic_var_array<T> row(std::size_t i) const {
        return elements_.slice(i * cols_, (i + 1) * cols_);
    }

    template <class C>
    static std::size_t shape_of(const C& values, std::size_t axis) {
        if (values.dimension() != 2)
            throw shape_error("nabla: a matrix is made of a two-dimensional array; this one has " +
                              std::to_string(values.dimension()) + " dimensions");
        if constexpr (requires { values.strides(); }) {
            const bool rows_apart = values.shape()[0] > 1 && values.shape()[1] > 0 &&
                                    static_cast<std::size_t>(values.strides()[0]) !=
                                        static_cast<std::size_t>(values.shape()[1]);
            if ((values.size() > 1 && values.strides()[1] != 1 &&
                 !(values.shape()[1] == 1 && values.strides()[0] == 1)) ||
                rows_apart)
                throw shape_error("nabla: a matrix is made of a row-major contiguous array");
        }
        return static_cast<std::size_t>(values.shape()[axis]);
    }

private:
    basic_var_array<T> elements_;
    std::size_t rows_ = 0;
    std::size_t cols_ = 0;
};

using var_matrix = basic_var_matrix<double>;

// A rows x cols matrix of new independent variables with these values (row-major).
template <class C>
var_matrix input_matrix(tape<double>& t, const C& values) {
    const std::size_t rows = var_matrix::shape_of(values, 0);
    const std::size_t cols = var_matrix::shape_of(values, 1);
    return var_matrix(
        input_array(t, std::span<const double>(detail::first_element(values), rows * cols)), rows,
        cols);
}

namespace detail {

template <class T>
tape<T>* tape_of(const basic_var_array<T>& a, const basic_var_array<T>& b) {
    return tape_for<T>({{var_array_access::first(a), var_array_access::generation(a)},
                        {var_array_access::first(b), var_array_access::generation(b)}});
}

// The result of an operation of n values: constant without a tape, else n new variables and an
// entry with this pullback.
template <class T, class Pullback>
basic_var_array<T>
record_result(tape<T>* on, std::shared_ptr<T[]> values, std::size_t n, Pullback&& pullback) {
    if (on == nullptr || n == 0)
        return var_array_access::make<T>(std::move(values), n, 0, 0);
    const tape_index first = tape_access::add_variables(*on, n);
    tape_access::add_array_operation(*on, first, static_cast<tape_index>(n),
                                     [first, pullback = std::forward<Pullback>(pullback)](
                                         T* adjoints) { pullback(adjoints, first); });
    return var_array_access::make<T>(std::move(values), n, first, on->generation());
}

// x repeated as each of m rows (numpy's broadcasting of shape (n,) against (m, n)): one entry,
// whose pullback sums each column's adjoints into x's.
template <class T>
basic_var_array<T> rows_of(const basic_var_array<T>& x, std::size_t m) {
    const std::size_t n = x.size();
    const T* const v = var_array_access::data(x);
    std::shared_ptr<T[]> tiled = take_buffer<T>(m * n);
    for (std::size_t i = 0; i < m; ++i)
        std::copy(v, v + n, tiled.get() + i * n);
    tape<T>* const on =
        tape_for<T>({{var_array_access::first(x), var_array_access::generation(x)}});
    return record_result(on, std::move(tiled), m * n,
                         [m, n, xi = var_array_access::first(x)](T* adjoints, tape_index first) {
                             for (std::size_t i = 0; i < m; ++i)
                                 axpy_of<T>(T(1.0), adjoints + first + i * n, adjoints + xi, n);
                         });
}

template <class T>
void check_same_shape(const basic_var_matrix<T>& a, const basic_var_matrix<T>& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols())
        throw shape_error("nabla: element-wise operands of shapes (" + std::to_string(a.rows()) +
                          ", " + std::to_string(a.cols()) + ") and (" + std::to_string(b.rows()) +
                          ", " + std::to_string(b.cols()) + ")");
}

// A vector against a matrix's rows: it has cols() elements, or it is a shape_error.
template <class T>
basic_var_array<T> along_rows(const basic_var_matrix<T>& a, const basic_var_array<T>& x) {
    if (x.size() != a.cols())
        throw shape_error("nabla: a vector of " + std::to_string(x.size()) +
                          " elements against a matrix of shape (" + std::to_string(a.rows()) +
                          ", " + std::to_string(a.cols()) +
                          "): it broadcasts along the rows, so "
                          "it has one element per column");
    return rows_of(x, a.rows());
}

// A number, a variable or an expression of them broadcast against a matrix of T.
template <class S, class T>
concept MatrixScalarFor = std::is_arithmetic_v<S> || std::is_same_v<S, active<T>> ||
    (ActiveExpression<S>&& std::is_same_v<active_value_t<S>, T>);

}  // namespace detail

// Element-wise arithmetic on matrices, with a matrix of the same shape, a number, a variable, or
// a vector of cols() elements broadcast along the rows (numpy's rules for shapes (m, n) and (n,);
// the vector may be a container of doubles, a constant).
// A constant matrix in a generic function is made with the argument's own type, so that it
// follows it onto dual numbers: using M = std::remove_cvref_t<decltype(m)>; m + M(a).
#define NABLA_VAR_MATRIX_OPERATOR(op)                                                              \
    template <class T>                                                                             \
    basic_var_matrix<T> operator op(const basic_var_matrix<T>& a, const basic_var_matrix<T>& b) {  \
        detail::check_same_shape(a, b);                                                            \
        return {a.elements() op b.elements(), a.rows(), a.cols()};                                 \
    }                                                                                              \
    template <class T>                                                                             \
    basic_var_matrix<T> operator op(const basic_var_matrix<T>& a,                                  \
                                    const std::type_identity_t<basic_var_array<T>>& x) {           \
        return {a.elements() op detail::along_rows(a, x), a.rows(), a.cols()};                     \
    }                                                                                              \
    template <class T>                                                                             \
    basic_var_matrix<T> operator op(const std::type_identity_t<basic_var_array<T>>& x,             \
                                    const basic_var_matrix<T>& a) {                                \
        return {detail::along_rows(a, x) op a.elements(), a.rows(), a.cols()};                     \
    }                                                                                              \
    template <class T, detail::MatrixScalarFor<T> S>                                               \
    basic_var_matrix<T> operator op(const basic_var_matrix<T>& a, const S& b) {                    \
        return {a.elements() op b, a.rows(), a.cols()};                                            \
    }                                                                                              \
    template <class T, detail::MatrixScalarFor<T> S>                                               \
    basic_var_matrix<T> operator op(const S& b, const basic_var_matrix<T>& a) {                    \
        return {b op a.elements(), a.rows(), a.cols()};                                            \
    }
NABLA_VAR_MATRIX_OPERATOR(+)
NABLA_VAR_MATRIX_OPERATOR(-)
NABLA_VAR_MATRIX_OPERATOR(*)
NABLA_VAR_MATRIX_OPERATOR(/)
#undef NABLA_VAR_MATRIX_OPERATOR

template <class T>
basic_var_matrix<T> operator-(const basic_var_matrix<T>& a) {
    return {-a.elements(), a.rows(), a.cols()};
}
#define NABLA_VAR_MATRIX_UNARY(name, rule)                                                         \
    template <class T>                                                                             \
    basic_var_matrix<T> name(const basic_var_matrix<T>& a) {                                       \
        return {name(a.elements()), a.rows(), a.cols()};                                           \
    }
NABLA_UNARY_FUNCTIONS(NABLA_VAR_MATRIX_UNARY)
NABLA_VAR_MATRIX_UNARY(square, )
#undef NABLA_VAR_MATRIX_UNARY

// Reductions over every element.
#define NABLA_VAR_MATRIX_REDUCTION(name)                                                           \
    template <class T>                                                                             \
    active<T> name(const basic_var_matrix<T>& a) {                                                 \
        return name(a.elements());                                                                 \
    }
NABLA_VAR_MATRIX_REDUCTION(sum)
NABLA_VAR_MATRIX_REDUCTION(mean)
NABLA_VAR_MATRIX_REDUCTION(prod)
NABLA_VAR_MATRIX_REDUCTION(max)
NABLA_VAR_MATRIX_REDUCTION(min)
NABLA_VAR_MATRIX_REDUCTION(amax)
NABLA_VAR_MATRIX_REDUCTION(amin)
NABLA_VAR_MATRIX_REDUCTION(norm)
NABLA_VAR_MATRIX_REDUCTION(logsumexp)
#undef NABLA_VAR_MATRIX_REDUCTION

// y = A x.
// (The vector may be a container of doubles, a constant, as in solve.)
template <class T>
basic_var_array<T> matvec(const basic_var_matrix<T>& a,
                          const std::type_identity_t<basic_var_array<T>>& x) {
    if (a.cols() != x.size())
        throw shape_error("nabla::matvec: a " + std::to_string(a.rows()) + " x " +
                          std::to_string(a.cols()) + " matrix times a vector of " +
                          std::to_string(x.size()));
    using namespace detail;
    const std::size_t m = a.rows(), n = a.cols();
    const T* const av = var_array_access::data(a.elements());
    const T* const xv = var_array_access::data(x);
    std::shared_ptr<T[]> y = take_buffer<T>(m);
    if constexpr (std::is_same_v<T, double>)
        gemv_kernel(av, n, xv, m, n, y.get());
    else
        for (std::size_t i = 0; i < m; ++i)
            y[i] = dot_of<T>(av + i * n, xv, n);
    tape<T>* const on = tape_of(a.elements(), x);
    return record_result(
        on, std::move(y), m,
        [m, n, ai = var_array_access::first(a.elements()), xi = var_array_access::first(x),
         akeep = var_array_access::values(a.elements()), xkeep = var_array_access::values(x),
         aoff = static_cast<std::size_t>(av - var_array_access::values(a.elements()).get()),
         xoff = static_cast<std::size_t>(xv - var_array_access::values(x).get())](
            T* adjoints, tape_index first) {
            const T* const dy = adjoints + first;
            const T* const A = akeep.get() + aoff;
            for (std::size_t i = 0; i < m; ++i) {
                if (exactly_zero(dy[i]))
                    continue;
                if (xi != 0)
                    axpy_of<T>(dy[i], A + i * n, adjoints + xi, n);  // dx += A^T dy
                if (ai != 0)
                    axpy_of<T>(dy[i], xkeep.get() + xoff, adjoints + ai + i * n,
                               n);  // dA += dy x^T
            }
        });
}

// C = A B.
template <class T>
basic_var_matrix<T> matmul(const basic_var_matrix<T>& a, const basic_var_matrix<T>& b) {
    if (a.cols() != b.rows())
        throw shape_error("nabla::matmul: a " + std::to_string(a.rows()) + " x " +
                          std::to_string(a.cols()) + " matrix times a " + std::to_string(b.rows()) +
                          " x " + std::to_string(b.cols()) + " matrix");
    using namespace detail;
    const std::size_t m = a.rows(), k = a.cols(), n = b.cols();
    const T* const av = var_array_access::data(a.elements());
    const T* const bv = var_array_access::data(b.elements());
    std::shared_ptr<T[]> c = take_buffer<T>(m * n);
    if constexpr (std::is_same_v<T, double>) {
        gemm_kernel<false>(m, k, n, av, k, 1, bv, n, 1, c.get(), n);
    } else {
        std::fill(c.get(), c.get() + m * n, T(0.0));
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t p = 0; p < k; ++p)
                axpy_of<T>(av[i * k + p], bv + p * n, c.get() + i * n, n);
    }
    tape<T>* const on = tape_of(a.elements(), b.elements());
    basic_var_array<T> elements = record_result(
        on, std::move(c), m * n,
        [m, k, n, ai = var_array_access::first(a.elements()),
         bi = var_array_access::first(b.elements()), akeep = var_array_access::values(a.elements()),
         bkeep = var_array_access::values(b.elements()),
         aoff = static_cast<std::size_t>(av - var_array_access::values(a.elements()).get()),
         boff = static_cast<std::size_t>(bv - var_array_access::values(b.elements()).get())](
            T* adjoints, tape_index first) {
            const T* const dc = adjoints + first;
            const T* const A = akeep.get() + aoff;
            const T* const B = bkeep.get() + boff;
            if constexpr (std::is_same_v<T, double>) {
                if (ai != 0)  // dA += dC B^T
                    gemm_xyt<true>(m, k, n, dc, n, B, n, adjoints + ai, k);
                if (bi != 0)  // dB += A^T dC
                    gemm_kernel<true>(k, m, n, A, 1, k, dc, n, 1, adjoints + bi, n);
            } else {
                for (std::size_t i = 0; i < m; ++i)
                    for (std::size_t p = 0; p < k; ++p) {
                        if (ai != 0)
                            adjoints[ai + i * k + p] += dot_of<T>(dc + i * n, B + p * n, n);
                        if (bi != 0)
                            axpy_of<T>(A[i * k + p], dc + i * n, adjoints + bi + p * n, n);
                    }
            }
        });
    return {std::move(elements), m, n};
}

// x = A^-1 b for a square A.
template <class T>
basic_var_array<T> solve(const basic_var_matrix<T>& a,
                         const std::type_identity_t<basic_var_array<T>>& b) {
    if (a.rows() != a.cols() || a.rows() != b.size())
        throw shape_error("nabla::solve: a " + std::to_string(a.rows()) + " x " +
                          std::to_string(a.cols()) + " matrix and a vector of " +
                          std::to_string(b.size()) +
                          " (the matrix is square, of the vector's "
                          "length)");
    using namespace detail;
    const std::size_t n = b.size();
    auto factors =
        std::make_shared<const lu_factors<T>>(var_array_access::data(a.elements()), n, n);
    const std::vector<T> solution = factors->solve(var_array_access::data(b));
    std::shared_ptr<T[]> x = take_buffer<T>(n);
    std::copy(solution.begin(), solution.end(), x.get());
    std::shared_ptr<const T[]> kept = x;
    tape<T>* const on = tape_of(a.elements(), b);
    return record_result(on, std::move(x), n,
                         [n, factors, kept, ai = var_array_access::first(a.elements()),
                          bi = var_array_access::first(b)](T* adjoints, tape_index first) {
                             const std::vector<T> l = factors->solve_transposed(adjoints + first);
                             if (bi != 0)
                                 for (std::size_t i = 0; i < n; ++i)
                                     adjoints[bi + i] += l[i];
                             if (ai != 0)
                                 for (std::size_t i = 0; i < n; ++i)
                                     axpy_of<T>(-l[i], kept.get(), adjoints + ai + i * n,
                                                n);  // dA -= l x^T
                         });
}

}  // namespace nabla
