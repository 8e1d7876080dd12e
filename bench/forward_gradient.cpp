// Forward-mode gradients of ordinary generic functions with few inputs, side by side with a
// hand-written gradient and with the forward-mode peers in Debian: Ceres' Jet and Eigen's
// fixed-size AutoDiffScalar: the seed function, the Hamiltonians of the Henon-Heiles system and of
// the double pendulum (4 inputs each), the Christoffel symbols of the Schwarzschild metric from its
// Jacobian, and the extended Rosenbrock function at n = 16 and n = 64, each as a ratio to the
// hand-written gradient (the Christoffel symbols: to their closed form).
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

// Hamiltonians of 4 phase-space coordinates (q1, q2, p1, p2).
const auto henon_heiles = [](const auto& z) {
    return 0.5 * (z[2] * z[2] + z[3] * z[3]) + 0.5 * (z[0] * z[0] + z[1] * z[1]) +
           z[0] * z[0] * z[1] - z[1] * z[1] * z[1] / 3.0;
};

// Unit masses, lengths and gravity; q1, q2 the angles from the vertical, p1, p2 their momenta.
const auto double_pendulum = [](const auto& z) {
    using std::cos, std::sin;
    const auto d = z[0] - z[1];
    const auto c = cos(d), s = sin(d);
    return (z[2] * z[2] + 2.0 * z[3] * z[3] - 2.0 * z[2] * z[3] * c) / (2.0 * (1.0 + s * s)) -
           2.0 * cos(z[0]) - cos(z[1]);
};

using phase = std::array<double, 4>;
using value_gradient = std::array<double, 5>;

[[gnu::noinline]] value_gradient henon_heiles_by_hand(const phase& z) {
    const double x = z[0], y = z[1];
    const double value =
        0.5 * (z[2] * z[2] + z[3] * z[3]) + 0.5 * (x * x + y * y) + x * x * y - y * y * y / 3.0;
    return {value, x + 2.0 * x * y, y + x * x - y * y, z[2], z[3]};
}

[[gnu::noinline]] value_gradient double_pendulum_by_hand(const phase& z) {
    const double d = z[0] - z[1];
    const double c = std::cos(d), s = std::sin(d);
    const double p1 = z[2], p2 = z[3];
    const double inverse = 1.0 / (1.0 + s * s);
    const double numerator = p1 * p1 + 2.0 * p2 * p2 - 2.0 * p1 * p2 * c;
    const double kinetic = 0.5 * numerator * inverse;
    const double s1 = std::sin(z[0]), c1 = std::cos(z[0]), s2 = std::sin(z[1]), c2 = std::cos(z[1]);
    const double dkinetic = (p1 * p2 * s - kinetic * 2.0 * s * c) * inverse;  // d/dq1 = -d/dq2
    return {kinetic - 2.0 * c1 - c2, dkinetic + 2.0 * s1, -dkinetic + s2, (p1 - p2 * c) * inverse,
            (2.0 * p2 - p1 * c) * inverse};
}

template <class F>
[[gnu::noinline]] value_gradient hamiltonian_by_nabla(const F& f, const phase& z) {
    const auto [value, gradient] = nabla::value_and_grad(f, z);
    return {value, gradient[0], gradient[1], gradient[2], gradient[3]};
}

template <class F>
[[gnu::noinline]] value_gradient hamiltonian_by_jet(const F& f, const phase& z) {
    using J = ceres::Jet<double, 4>;
    const std::array<J, 4> active{J(z[0], 0), J(z[1], 1), J(z[2], 2), J(z[3], 3)};
    const J y = f(active);
    return {y.a, y.v[0], y.v[1], y.v[2], y.v[3]};
}

template <class F>
[[gnu::noinline]] value_gradient hamiltonian_by_eigen(const F& f, const phase& z) {
    using A = Eigen::AutoDiffScalar<Eigen::Matrix<double, 4, 1>>;
    const std::array<A, 4> active{A(z[0], 4, 0), A(z[1], 4, 1), A(z[2], 4, 2), A(z[3], 4, 3)};
    const A y = f(active);
    return {y.value(), y.derivatives()[0], y.derivatives()[1], y.derivatives()[2],
            y.derivatives()[3]};
}

// The Christoffel symbols of the Schwarzschild metric (M = 1) at x = (t, r, theta, phi), index
// a * 16 + b * 4 + c for Gamma^a_bc: by nabla::jacobian of the metric, and in closed form.
const auto schwarzschild = [](const auto& x) {
    using std::sin;
    using T = std::remove_cvref_t<decltype(x[0])>;
    const T r = x[1];
    const T s = sin(x[2]);
    const T f = 1.0 - 2.0 / r;
    std::array<T, 16> g{};
    g[0] = -f;
    g[5] = 1.0 / f;
    g[10] = r * r;
    g[15] = r * r * s * s;
    return g;
};

using symbols = std::array<double, 64>;

// Gamma^a_bc = (dg_ac/dx^b + dg_ab/dx^c - dg_bc/dx^a) / (2 g_aa) for the diagonal metric g and
// its derivatives dg(a * 4 + b, c).
template <class Metric, class Derivatives>
NABLA_ALWAYS_INLINE symbols christoffel_from(const Metric& g, const Derivatives& dg) {
    symbols gamma;
    for (std::size_t a = 0; a < 4; ++a) {
        const double half_inverse = 0.5 / g[a * 5];
        for (std::size_t b = 0; b < 4; ++b)
            for (std::size_t c = 0; c < 4; ++c)
                gamma[a * 16 + b * 4 + c] =
                    half_inverse * (dg(a * 4 + c, b) + dg(a * 4 + b, c) - dg(b * 4 + c, a));
    }
    return gamma;
}

[[gnu::noinline]] symbols christoffel_by_nabla(const phase& x) {
    // g and dg_ab / dx^c (16 x 4, fixed size) from one evaluation on dual numbers.
    const auto [g, dg] = nabla::value_and_jacobian(schwarzschild, x);
    return christoffel_from(g, dg);
}

[[gnu::noinline]] symbols christoffel_by_jet(const phase& x) {
    using J = ceres::Jet<double, 4>;
    const std::array<J, 4> active{J(x[0], 0), J(x[1], 1), J(x[2], 2), J(x[3], 3)};
    const auto metric = schwarzschild(active);
    std::array<double, 16> g;
    nabla::fixed_matrix<double, 16, 4> dg;
    for (std::size_t i = 0; i < 16; ++i) {
        g[i] = metric[i].a;
        for (std::size_t k = 0; k < 4; ++k)
            dg(i, k) = metric[i].v[int(k)];
    }
    return christoffel_from(g, dg);
}

// The same sum over the metric's derivatives written by hand: what the Jacobian itself costs.
[[gnu::noinline]] symbols christoffel_by_hand_derivatives(const phase& x) {
    const double r = x[1], s = std::sin(x[2]), c = std::cos(x[2]);
    const double f = 1.0 - 2.0 / r, df = 2.0 / (r * r);
    const auto g = schwarzschild(x);
    nabla::fixed_matrix<double, 16, 4> dg;
    dg.fill(0.0);
    dg(0, 1) = -df;
    dg(5, 1) = -df / (f * f);
    dg(10, 1) = 2.0 * r;
    dg(15, 1) = 2.0 * r * s * s;
    dg(15, 2) = 2.0 * r * r * s * c;
    return christoffel_from(g, dg);
}

[[gnu::noinline]] symbols christoffel_by_hand(const phase& x) {
    const double r = x[1], s = std::sin(x[2]), c = std::cos(x[2]);
    const double f = 1.0 - 2.0 / r, inverse_r = 1.0 / r;
    symbols gamma{};
    const double trt = 1.0 / (r * r * f);
    gamma[0 * 16 + 0 * 4 + 1] = gamma[0 * 16 + 1 * 4 + 0] = trt;
    gamma[1 * 16 + 0 * 4 + 0] = f / (r * r);
    gamma[1 * 16 + 1 * 4 + 1] = -trt;
    gamma[1 * 16 + 2 * 4 + 2] = -r * f;
    gamma[1 * 16 + 3 * 4 + 3] = -r * f * s * s;
    gamma[2 * 16 + 1 * 4 + 2] = gamma[2 * 16 + 2 * 4 + 1] = inverse_r;
    gamma[2 * 16 + 3 * 4 + 3] = -s * c;
    gamma[3 * 16 + 1 * 4 + 3] = gamma[3 * 16 + 3 * 4 + 1] = inverse_r;
    gamma[3 * 16 + 2 * 4 + 3] = gamma[3 * 16 + 3 * 4 + 2] = c / s;
    return gamma;
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

template <class F, class Hand>
int race_hamiltonian(const char* title, const F& f, Hand hand, long calls) {
    std::vector<phase> points(256);
    for (std::size_t p = 0; p < points.size(); ++p)
        points[p] = {0.3 * std::sin(0.1 * double(p)), 0.2 * std::cos(0.13 * double(p)),
                     0.4 * std::cos(0.07 * double(p)), -0.3 * std::sin(0.05 * double(p))};
    for (const auto& z : points) {
        const auto h = hand(z);
        if (!agree(h, hamiltonian_by_nabla(f, z)) || !agree(h, hamiltonian_by_jet(f, z)) ||
            !agree(h, hamiltonian_by_eigen(f, z))) {
            std::printf("%s: gradients differ\n", title);
            return 1;
        }
    }
    std::vector<nabla_bench::contender> c{{"hand-written gradient"},
                                          {"nabla::value_and_grad (dual)"},
                                          {"ceres::Jet"},
                                          {"Eigen::AutoDiffScalar"}};
    const auto at = [&](long i) -> const phase& { return points[i & 255]; };
    nabla_bench::race(
        c, calls, 15, [&](long i) { keep_gradient(hand(at(i))); },
        [&](long i) { keep_gradient(hamiltonian_by_nabla(f, at(i))); },
        [&](long i) { keep_gradient(hamiltonian_by_jet(f, at(i))); },
        [&](long i) { keep_gradient(hamiltonian_by_eigen(f, at(i))); });
    nabla_bench::report(title, c);
    return 0;
}

int race_christoffel(long calls) {
    std::vector<phase> points(256);
    for (std::size_t p = 0; p < points.size(); ++p)
        points[p] = {0.0, 3.0 + 0.05 * double(p), 0.3 + 0.01 * double(p), 0.1};
    for (const auto& x : points)
        if (!agree(christoffel_by_hand(x), christoffel_by_nabla(x)) ||
            !agree(christoffel_by_hand(x), christoffel_by_hand_derivatives(x)) ||
            !agree(christoffel_by_hand(x), christoffel_by_jet(x))) {
            std::printf("Christoffel symbols differ\n");
            return 1;
        }
    std::vector<nabla_bench::contender> c{{"closed form"},
                                          {"nabla::value_and_jacobian, sum"},
                                          {"dg by hand, the same sum"},
                                          {"ceres::Jet, the same sum"}};
    const auto at = [&](long i) -> const phase& { return points[i & 255]; };
    nabla_bench::race(
        c, calls, 15, [&](long i) { keep_gradient(christoffel_by_hand(at(i))); },
        [&](long i) { keep_gradient(christoffel_by_nabla(at(i))); },
        [&](long i) { keep_gradient(christoffel_by_hand_derivatives(at(i))); },
        [&](long i) { keep_gradient(christoffel_by_jet(at(i))); });
    nabla_bench::report("Schwarzschild Christoffel symbols (64), from the metric", c);
    return 0;
}

// The Christoffel symbols' own derivatives (for the Riemann tensor): a forward Jacobian of the
// function that takes the metric's Jacobian, the inner one in forward mode (dual numbers of dual
// numbers) and in reverse mode (a tape of dual numbers, recorded at every call, its memory kept).
template <class Mode>
auto christoffel_in(Mode mode) {
    return [mode](const auto& x) {
        using T = std::remove_cvref_t<decltype(x[0])>;
        const auto [g, dg] = nabla::value_and_jacobian(mode, schwarzschild, x);
        std::array<T, 64> gamma{};
        for (std::size_t a = 0; a < 4; ++a)
            for (std::size_t b = 0; b < 4; ++b)
                for (std::size_t c = 0; c < 4; ++c)
                    gamma[a * 16 + b * 4 + c] =
                        0.5 / g[a * 5] * (dg(a * 4 + c, b) + dg(a * 4 + b, c) - dg(b * 4 + c, a));
        return gamma;
    };
}

int race_christoffel_derivatives(long calls) {
    std::vector<phase> points(256);
    for (std::size_t p = 0; p < points.size(); ++p)
        points[p] = {0.0, 3.0 + 0.05 * double(p), 0.3 + 0.01 * double(p), 0.1};
    const auto forward = christoffel_in(nabla::mode::forward);
    const auto reverse = christoffel_in(nabla::mode::reverse);
    for (const auto& x : points) {
        const auto a = nabla::jacobian(forward, x), b = nabla::jacobian(reverse, x);
        for (std::size_t i = 0; i < 64; ++i)
            for (std::size_t k = 0; k < 4; ++k)
                if (std::abs(a(i, k) - b(i, k)) > 1e-12 * (1.0 + std::abs(a(i, k)))) {
                    std::printf("the Christoffel symbols' derivatives differ\n");
                    return 1;
                }
    }
    std::vector<nabla_bench::contender> c{{"inner jacobian forward"}, {"inner jacobian reverse"}};
    const auto at = [&](long i) -> const phase& { return points[i & 255]; };
    nabla_bench::race(
        c, calls, 15, [&](long i) { nabla_bench::keep(nabla::jacobian(forward, at(i))(5, 1)); },
        [&](long i) { nabla_bench::keep(nabla::jacobian(reverse, at(i))(5, 1)); });
    nabla_bench::report("Derivatives of the Christoffel symbols (64 x 4), nested jacobians", c);
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
    if (race_hamiltonian("Henon-Heiles Hamiltonian (4 inputs), value and gradient", henon_heiles,
                         henon_heiles_by_hand, calls) != 0 ||
        race_hamiltonian("double pendulum Hamiltonian (4 inputs), value and gradient",
                         double_pendulum, double_pendulum_by_hand, calls / 4) != 0)
        return 1;
    if (race_christoffel_derivatives(calls / 64) != 0)
        return 1;
    if (race_christoffel(calls / 4) != 0)
        return 1;
    if (race_rosenbrock<16>(1 << 17) != 0)
        return 1;
    if (race_rosenbrock<64>(1 << 14) != 0)
        return 1;
    return 0;
}
