// Forward-mode gradients of ordinary generic functions with few inputs, side by side with a
// hand-written gradient and with the forward-mode peers in Debian: Ceres' Jet and Eigen's
// fixed-size AutoDiffScalar: the seed function and the extended Rosenbrock function at n = 16 and
// n = 64, each as a ratio to the hand-written gradient.
//
//   build-gcc/bench/forward_gradient

#include <nabla/nabla.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "bench_util.hpp"
#include <ceres/jet.h>
#include <unsupported/Eigen/AutoDiff>

namespace {

// Written once, generically: nabla and both peers evaluate these same functions.
const auto seed = [](auto x1, auto x2) {
    using std::log, std::sin;
    return log(x1) + x1 * x2 - sin(x2);
};

const auto rosenbrock = [](const auto& x) {
    using T = std::decay_t<decltype(x[0])>;
    T sum(0.0);
    for (std::size_t i = 0; i + 1 < x.size(); ++i) {
        const T a = x[i + 1] - x[i] * x[i];
        const T b = 1.0 - x[i];
        sum += 100.0 * a * a + b * b;
    }
    return sum;
};

// Value and gradient, as every forward-mode contender computes both.
[[gnu::noinline]] std::array<double, 3> seed_by_hand(double x1, double x2) {
    return {std::log(x1) + x1 * x2 - std::sin(x2), 1.0 / x1 + x2, x1 - std::cos(x2)};
}

[[gnu::noinline]] std::array<double, 3> seed_by_nabla(double x1, double x2) {
    const auto [value, gradient] = nabla::value_and_grad(seed, x1, x2);
    return {value, gradient[0], gradient[1]};
}

[[gnu::noinline]] std::array<double, 3> seed_by_jet(double x1, double x2) {
    using J = ceres::Jet<double, 2>;
    const J y = seed(J(x1, 0), J(x2, 1));
    return {y.a, y.v[0], y.v[1]};
}

[[gnu::noinline]] std::array<double, 3> seed_by_eigen(double x1, double x2) {
    using A = Eigen::AutoDiffScalar<Eigen::Matrix<double, 2, 1>>;
    const A y = seed(A(x1, 2, 0), A(x2, 2, 1));
    return {y.value(), y.derivatives()[0], y.derivatives()[1]};
}

template <std::size_t N>
[[gnu::noinline]] std::array<double, N> rosenbrock_by_hand(const std::array<double, N>& x) {
    std::array<double, N> g{};
    for (std::size_t i = 0; i + 1 < N; ++i) {
        const double a = x[i + 1] - x[i] * x[i];
        g[i] += -400.0 * x[i] * a - 2.0 * (1.0 - x[i]);
        g[i + 1] += 200.0 * a;
    }
    return g;
}

// nabla::grad chooses the mode: dual numbers for a std::array of up to 16 numbers, the tape for
// longer ones. The forward row forces dual numbers (in chunks of 8 directions past 16).
template <std::size_t N>
[[gnu::noinline]] std::array<double, N> rosenbrock_by_nabla(const std::array<double, N>& x) {
    return nabla::grad(rosenbrock, x);
}

template <std::size_t N>
[[gnu::noinline]] std::array<double, N>
rosenbrock_by_nabla_forward(const std::array<double, N>& x) {
    return nabla::grad(nabla::mode::forward, rosenbrock, x);
}

template <std::size_t N>
[[gnu::noinline]] std::array<double, N> rosenbrock_by_jet(const std::array<double, N>& x) {
    using J = ceres::Jet<double, N>;
    std::array<J, N> active;
    for (std::size_t i = 0; i < N; ++i)
        active[i] = J(x[i], static_cast<int>(i));
    const J y = rosenbrock(active);
    std::array<double, N> g;
    for (std::size_t i = 0; i < N; ++i)
        g[i] = y.v[i];
    return g;
}

template <std::size_t N>
[[gnu::noinline]] std::array<double, N> rosenbrock_by_eigen(const std::array<double, N>& x) {
    using A = Eigen::AutoDiffScalar<Eigen::Matrix<double, N, 1>>;
    std::array<A, N> active;
    for (std::size_t i = 0; i < N; ++i)
        active[i] = A(x[i], N, static_cast<int>(i));
    const A y = rosenbrock(active);
    std::array<double, N> g;
    for (std::size_t i = 0; i < N; ++i)
        g[i] = y.derivatives()[i];
    return g;
}

template <class Gradient>
void keep_gradient(const Gradient& g) {
    for (double v : g)
        nabla_bench::keep(v);
}

template <class A, class B>
bool agree(const A& a, const B& b) {
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::abs(a[i] - b[i]) > 1e-12 * (1.0 + std::abs(a[i])))
            return false;
    return true;
}

template <std::size_t N>
int race_rosenbrock(long calls) {
    std::vector<std::array<double, N>> points(64);
    for (std::size_t p = 0; p < points.size(); ++p)
        for (std::size_t i = 0; i < N; ++i)
            points[p][i] = 0.5 + 0.01 * double((p * 7 + i) % 13);
    for (const auto& x : points) {
        const auto h = rosenbrock_by_hand(x);
        if (!agree(h, rosenbrock_by_nabla(x)) || !agree(h, rosenbrock_by_nabla_forward(x)) ||
            !agree(h, rosenbrock_by_jet(x)) || !agree(h, rosenbrock_by_eigen(x))) {
            std::printf("Rosenbrock gradients differ (n = %zu)\n", N);
            return 1;
        }
    }
    std::vector<nabla_bench::contender> c{
        {"hand-written gradient"},
        {N > 16 ? "nabla::grad (default: tape)" : "nabla::grad (default: dual)"},
        {"nabla::grad(mode::forward)"},
        {"ceres::Jet"},
        {"Eigen::AutoDiffScalar"}};
    const auto at = [&](long i) -> const std::array<double, N>& { return points[i & 63]; };
    nabla_bench::race(
        c, calls, 9, [&](long i) { keep_gradient(rosenbrock_by_hand(at(i))); },
        [&](long i) { keep_gradient(rosenbrock_by_nabla(at(i))); },
        [&](long i) { keep_gradient(rosenbrock_by_nabla_forward(at(i))); },
        [&](long i) { keep_gradient(rosenbrock_by_jet(at(i))); },
        [&](long i) { keep_gradient(rosenbrock_by_eigen(at(i))); });
    char title[96];
    std::snprintf(title, sizeof title, "extended Rosenbrock, n = %zu, gradient", N);
    nabla_bench::report(title, c);
    return 0;
}

}  // namespace

int main() {
    constexpr long calls = 1 << 20;
    std::vector<double> a(calls), b(calls);
    for (long i = 0; i < calls; ++i) {
        a[i] = 1.0 + 0.5 * std::sin(0.001 * i) * std::sin(0.001 * i);
        b[i] = 2.0 + std::cos(0.0007 * i);
    }
    for (long i = 0; i < calls; i += 997) {
        const auto h = seed_by_hand(a[i], b[i]);
        if (!agree(h, seed_by_nabla(a[i], b[i])) || !agree(h, seed_by_jet(a[i], b[i])) ||
            !agree(h, seed_by_eigen(a[i], b[i]))) {
            std::printf("seed gradients differ at %ld\n", i);
            return 1;
        }
    }
    std::vector<nabla_bench::contender> seed_race{{"hand-written gradient"},
                                                  {"nabla::grad (dual)"},
                                                  {"ceres::Jet"},
                                                  {"Eigen::AutoDiffScalar"}};
    nabla_bench::race(
        seed_race, calls, 15, [&](long i) { keep_gradient(seed_by_hand(a[i], b[i])); },
        [&](long i) { keep_gradient(seed_by_nabla(a[i], b[i])); },
        [&](long i) { keep_gradient(seed_by_jet(a[i], b[i])); },
        [&](long i) { keep_gradient(seed_by_eigen(a[i], b[i])); });
    nabla_bench::report("seed function, value and gradient", seed_race);
    if (race_rosenbrock<16>(1 << 17) != 0)
        return 1;
    if (race_rosenbrock<64>(1 << 14) != 0)
        return 1;
    return 0;
}
