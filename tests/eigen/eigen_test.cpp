// nabla/eigen.hpp: nabla's numbers inside Eigen's decompositions (determinant, LU solve,
// Cholesky) in every mode, against the closed forms of their derivatives, and Eigen matrices as
// the inputs and results of nabla's transformations.

#include <nabla/eigen.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <type_traits>

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <Eigen/LU>

namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

// A well-conditioned matrix of size n with unequal entries.
Eigen::MatrixXd sample(Eigen::Index n, double shift) {
    Eigen::MatrixXd a(n, n);
    for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index j = 0; j < n; ++j)
            a(i, j) = std::sin(1.3 * double(i) + 0.7 * double(j) + shift) + (i == j ? 3.0 : 0.0);
    return a;
}

// det(X) for X given as a container of its entries (column-major, n x n), through Eigen's LU
// with partial pivoting (which compares the entries' magnitudes to choose pivots).
const auto lu_determinant = [](const auto& entries) {
    using T = std::remove_cvref_t<decltype(entries[0])>;
    const auto n = static_cast<Eigen::Index>(std::llround(std::sqrt(double(entries.size()))));
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> x(n, n);
    for (Eigen::Index k = 0; k < n * n; ++k)
        x.data()[k] = entries[static_cast<std::size_t>(k)];
    return x.partialPivLu().determinant();
};

// 1^T A(p)^{-1} b with A(p) = A0 + diag(p), by Eigen's LU solve.
const Eigen::MatrixXd a0 = sample(5, 0.2);
const Eigen::VectorXd b0 = Eigen::VectorXd::LinSpaced(5, 1.0, 2.0);
const auto solve_sum = [](const auto& p) {
    using T = std::remove_cvref_t<decltype(p[0])>;
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> a = a0.cast<T>();
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        a(i, i) += p[static_cast<std::size_t>(i)];
    const Eigen::Matrix<T, Eigen::Dynamic, 1> x = a.partialPivLu().solve(b0.cast<T>());
    return x.sum();
};

// log det(S + diag(p)) by Eigen's Cholesky factor, S symmetric positive definite.
const Eigen::MatrixXd s0 = [] {
    const Eigen::MatrixXd a = sample(4, 0.9);
    return Eigen::MatrixXd(a.transpose() * a);
}();
const auto log_det = [](const auto& p) {
    using T = std::remove_cvref_t<decltype(p[0])>;
    using std::log;
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> a = s0.cast<T>();
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        a(i, i) += p[static_cast<std::size_t>(i)];
    const Eigen::LLT<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>> cholesky(a);
    T sum = 0.0;
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        sum += log(cholesky.matrixL()(i, i));
    return 2.0 * sum;
};

}  // namespace

TEST_CASE("the gradient of a determinant through Eigen's LU is its cofactor matrix, in forward "
          "and reverse mode",
          "[eigen]") {
    const Eigen::MatrixXd a = sample(5, 0.4);
    // d det(A) / d A = det(A) A^{-T}.
    const Eigen::MatrixXd expected = a.determinant() * a.inverse().transpose();
    const std::vector<double> entries(a.data(), a.data() + a.size());
    const auto forward = nabla::grad(nabla::mode::forward, lu_determinant, entries);
    const auto reverse = nabla::grad(nabla::mode::reverse, lu_determinant, entries);
    for (Eigen::Index k = 0; k < a.size(); ++k) {
        const auto i = static_cast<std::size_t>(k);
        CHECK_THAT(forward[i], WithinRel(expected.data()[k], 1e-12));
        CHECK_THAT(reverse[i], WithinRel(expected.data()[k], 1e-12));
    }
}

TEST_CASE("an Eigen matrix in, its gradient, Jacobian and Hessian out as Eigen matrices",
          "[eigen]") {
    const Eigen::Matrix3d a = sample(3, 1.1);
    const auto determinant = [](const auto& x) { return x.determinant(); };
    // Forward mode on a fixed-size matrix of dual numbers: the gradient is a Matrix3d.
    const auto g = nabla::grad(determinant, a);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(g)>, Eigen::Matrix3d>);
    const Eigen::Matrix3d cofactors = a.determinant() * a.inverse().transpose();
    CHECK(g.isApprox(cofactors, 1e-13));
    // Reverse mode on a dynamic vector: the gradient is a VectorXd.
    const Eigen::VectorXd p = Eigen::VectorXd::LinSpaced(5, 0.1, 0.5);
    const auto gp = nabla::grad(nabla::mode::reverse, solve_sum, p);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(gp)>, Eigen::VectorXd>);
    CHECK(gp.size() == 5);
    // The Jacobian of X -> X X (entries in storage order) and the Hessian of det.
    const auto square = [](const auto& x) {
        using M = std::remove_cvref_t<decltype(x)>;
        return M(x * x);
    };
    const auto j = nabla::jacobian(square, a);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(j)>, Eigen::MatrixXd>);
    REQUIRE(j.rows() == 9);
    REQUIRE(j.cols() == 9);
    // d(X X)_{ik} / d X_{ab} = delta_ia X_bk + X_ia delta_kb; column-major index i + 3 k.
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k)
            for (int c = 0; c < 3; ++c)
                for (int d = 0; d < 3; ++d) {
                    const double expected = (i == c ? a(d, k) : 0.0) + (k == d ? a(i, c) : 0.0);
                    CHECK_THAT(j(i + 3 * k, c + 3 * d), WithinAbs(expected, 1e-14));
                }
    // d^2 det / dA_ij dA_kl = det(A) (B_ji B_lk - B_li B_jk), B = A^{-1}; entry (i, j) of A is
    // element i + 3 j. The function scales by a plain number, which Eigen mixes with the
    // Hessian's nested dual numbers.
    const auto h = nabla::hessian([](const auto& x) { return 2.0 * x.determinant(); }, a);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(h)>, Eigen::MatrixXd>);
    REQUIRE(h.rows() == 9);
    const Eigen::Matrix3d inverse = a.inverse();
    for (int i = 0; i < 3; ++i)
        for (int jj = 0; jj < 3; ++jj)
            for (int k = 0; k < 3; ++k)
                for (int l = 0; l < 3; ++l) {
                    const double expected =
                        2.0 * a.determinant() *
                        (inverse(jj, i) * inverse(l, k) - inverse(l, i) * inverse(jj, k));
                    CHECK_THAT(h(i + 3 * jj, k + 3 * l), WithinAbs(expected, 1e-13));
                }
}

TEST_CASE("an LU solve through Eigen differentiates to its adjoint in every mode", "[eigen]") {
    const Eigen::VectorXd p = Eigen::VectorXd::LinSpaced(5, 0.1, 0.5);
    Eigen::MatrixXd a = a0;
    a.diagonal() += p;
    // d/dp_i 1^T A^{-1} b = -(A^{-T} 1)_i (A^{-1} b)_i.
    const Eigen::VectorXd x = a.partialPivLu().solve(b0);
    const Eigen::VectorXd y = a.transpose().partialPivLu().solve(Eigen::VectorXd::Ones(5));
    const std::vector<double> pv(p.data(), p.data() + p.size());
    const auto forward = nabla::grad(nabla::mode::forward, solve_sum, pv);
    const auto reverse = nabla::grad(nabla::mode::reverse, solve_sum, pv);
    for (std::size_t i = 0; i < 5; ++i) {
        const double expected = -y(Eigen::Index(i)) * x(Eigen::Index(i));
        CHECK_THAT(forward[i], WithinRel(expected, 1e-12));
        CHECK_THAT(reverse[i], WithinRel(expected, 1e-12));
    }
    // Second order: the Hessian forward over forward and forward over reverse agree.
    const auto hf = nabla::hessian(nabla::mode::forward, solve_sum, pv);
    const auto hr = nabla::hessian(nabla::mode::reverse, solve_sum, pv);
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t k = 0; k < 5; ++k)
            CHECK_THAT(hf(i, k), WithinRel(hr(i, k), 1e-11) || WithinAbs(hr(i, k), 1e-13));
}

TEST_CASE("a Cholesky log-determinant differentiates to the diagonal of the inverse", "[eigen]") {
    const std::vector<double> p{0.3, 0.1, 0.7, 0.2};
    Eigen::MatrixXd a = s0;
    for (Eigen::Index i = 0; i < 4; ++i)
        a(i, i) += p[static_cast<std::size_t>(i)];
    const Eigen::MatrixXd inverse = a.inverse();
    const auto forward = nabla::grad(nabla::mode::forward, log_det, p);
    const auto reverse = nabla::grad(nabla::mode::reverse, log_det, p);
    CHECK_THAT(log_det(p), WithinRel(std::log(a.determinant()), 1e-13));
    for (std::size_t i = 0; i < 4; ++i) {
        const double expected = inverse(Eigen::Index(i), Eigen::Index(i));
        CHECK_THAT(forward[i], WithinRel(expected, 1e-12));
        CHECK_THAT(reverse[i], WithinRel(expected, 1e-12));
    }
}

TEST_CASE("Taylor series through an Eigen determinant give the derivatives of det(A + t B)",
          "[eigen]") {
    const Eigen::Matrix3d a = sample(3, 0.5),
                          b = sample(3, 2.0) - 2.0 * Eigen::Matrix3d::Identity();
    // p(t) = det(A + t B) is a cubic: p(0) = det A, p'(0) = det A tr(A^{-1} B), p''' = 6 det B.
    const auto along = [&](auto t) {
        using T = decltype(t);
        const Eigen::Matrix<T, 3, 3> m = a.cast<T>() + t * b.cast<T>();
        return m.partialPivLu().determinant();
    };
    const auto d = nabla::derivatives<4>(along, 0.0);
    CHECK_THAT(d[0], WithinRel(a.determinant(), 1e-14));
    CHECK_THAT(d[1], WithinRel(a.determinant() * (a.inverse() * b).trace(), 1e-12));
    CHECK_THAT(d[3], WithinRel(6.0 * b.determinant(), 1e-11));
    CHECK_THAT(d[4], WithinAbs(0.0, 1e-11));
}
