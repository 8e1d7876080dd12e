// A translation unit for bench/compile_time.sh: a function that solves a linear system with
// Eigen's LU, evaluated on doubles and differentiated in the mode NABLA_COMPILE_MODE names
// (0: doubles only, 1: forward, 2: reverse, 3: Taylor series, 4: all three), so that the cost of
// compiling nabla's numbers through Eigen's decompositions is measured against doubles.

#include <nabla/eigen.hpp>

#include <cstdio>
#include <vector>

#include <Eigen/LU>

#ifndef NABLA_COMPILE_MODE
#define NABLA_COMPILE_MODE 4
#endif

namespace {

// 1^T (A + diag(p))^{-1} b for a fixed 6 x 6 A and b.
const auto solve_sum = [](const auto& p) {
    using T = std::remove_cvref_t<decltype(p[0])>;
    const Eigen::Index n = 6;
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> a(n, n);
    Eigen::Matrix<T, Eigen::Dynamic, 1> b(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        b(i) = T(1.0 + 0.1 * double(i));
        for (Eigen::Index j = 0; j < n; ++j)
            a(i, j) = T((i == j ? 4.0 : 0.0) + 1.0 / double(1 + i + j));
        a(i, i) += p[static_cast<std::size_t>(i)];
    }
    const Eigen::Matrix<T, Eigen::Dynamic, 1> x = a.partialPivLu().solve(b);
    return x.sum();
};

}  // namespace

int main() {
    const std::vector<double> p{0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
    double check = solve_sum(p);
#if NABLA_COMPILE_MODE == 1 || NABLA_COMPILE_MODE == 4
    check += nabla::grad(nabla::mode::forward, solve_sum, p)[0];
#endif
#if NABLA_COMPILE_MODE == 2 || NABLA_COMPILE_MODE == 4
    check += nabla::grad(nabla::mode::reverse, solve_sum, p)[0];
#endif
#if NABLA_COMPILE_MODE == 3 || NABLA_COMPILE_MODE == 4
    check += nabla::derivatives<4>(
        [&](auto t) {
            using T = decltype(t);
            std::vector<T> q(p.begin(), p.end());
            q[0] += t;
            return solve_sum(q);
        },
        0.0)[2];
#endif
    std::printf("%.17g\n", check);
    return 0;
}
